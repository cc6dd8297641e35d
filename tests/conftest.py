"""Shared pytest set-up: headless matplotlib, the `gpu` skip, and the repo root on sys.path
(so that the top-level `solutions` package imports however pytest is started)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot: tests never open windows

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Tests must not depend on a reader's settings.
os.environ.pop("BOOK_DEVICE", None)


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs CUDA; run on a machine with an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def one_thread():
    """torch on one intra-op thread for a whole test module, then the old setting back. Use it
    with ``pytestmark = pytest.mark.usefixtures("one_thread")``. The word2vec, GloVe and fastText
    tests run many tiny tensor operations: a second thread does not help them, and on a busy
    shared CPU an OpenMP thread that waits for a descheduled sibling made them 40-50x slower
    (measured)."""
    from companion.word2vec._loop import intra_op_threads  # here: conftest stays light to import

    with intra_op_threads(1):
        yield


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every figure a test opened, so memory stays flat and pyplot never warns."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
