"""A notebook that pins torch to one thread must cap numpy's BLAS and scikit-learn too.

With torch on one thread but OpenBLAS on its default (one thread per core), the idle BLAS
threads spin: chapter 5 took 10 min 17 s on a quiet 2-core machine that way and 4 min 07 s with
``threadpoolctl.threadpool_limits(1)`` (chapter 6b: 6 min 07 s and 3 min 36 s). The cap reaches
the libraries loaded when it runs (numpy's OpenBLAS); scipy's own OpenBLAS and scikit-learn's
OpenMP, loaded later, keep their default (a known gap, said in the README).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
ONE_TORCH_THREAD = re.compile(r"^torch\.set_num_threads\(1\)", re.MULTILINE)
BLAS_CAP = re.compile(r"^threadpool_limits\(1\)", re.MULTILINE)


def code_of(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def missing_cap(code: str) -> bool:
    """True when the code pins torch to one thread without capping the BLAS threads."""
    return bool(ONE_TORCH_THREAD.search(code)) and not BLAS_CAP.search(code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_torch_thread_comes_with_a_blas_cap(path):
    assert not missing_cap(code_of(path)), (
        f"{path.name} calls torch.set_num_threads(1) but not threadpool_limits(1): add "
        "`from threadpoolctl import threadpool_limits` and `threadpool_limits(1)` to its setup cell"
    )


def test_checker_sees_a_missing_cap():
    assert missing_cap("import torch\ntorch.set_num_threads(1)\n")
    assert not missing_cap("torch.set_num_threads(1)\nthreadpool_limits(1)  # why\n")
    assert not missing_cap("torch.set_num_threads(2)\n")
