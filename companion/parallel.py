"""Independent training runs on several CPU cores: one process per core, one thread each.

Small models (a BiLSTM tagger, a classifier on a few hundred examples) gain little from a
second torch thread, but two runs side by side on a 2-core laptop take half the time. A run
must not depend on which process runs it or in what order: each job seeds itself, and
everything it reads comes in ``shared`` (sent once to each process), so ``workers=1`` (in this
process, in order) and ``workers=2`` give the same numbers when this process, like the workers,
runs torch and its BLAS libraries on one thread.

Processes are *spawned*, not forked: a child forked from a process that already runs threads
(a Jupyter kernel, OpenMP) can deadlock (seen in :mod:`companion.transformer.pretrain`). A
spawned process imports the calling script again, so a script (not a notebook) that calls
:func:`map_jobs` must do so under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

J = TypeVar("J")
R = TypeVar("R")

_SHARED: Any = None
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _init_worker(shared: Any) -> None:
    """Runs once in each worker: one thread for torch and for numpy's BLAS, and the shared data."""
    global _SHARED
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    _SHARED = shared


def _run(fn: Callable[[Any, Any], Any], job: Any) -> Any:
    return fn(_SHARED, job)


def map_jobs(fn: Callable[[Any, J], R], jobs: Sequence[J], *, shared: Any = None,
             workers: int = 1) -> list[R]:
    """``[fn(shared, job) for job in jobs]``, in ``jobs``'s order.

    ``fn`` must be a module-level function (the workers import it by name) and ``jobs`` and
    ``shared`` must pickle. With ``workers`` > 1 the jobs run in that many spawned processes,
    taken in the order given (put the longest first); ``workers=1`` runs them here, in order.

    Raises:
        ValueError: if ``workers`` is not a positive int.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int (the number of processes), got {workers!r}")
    if workers == 1 or len(jobs) < 2:
        return [fn(shared, job) for job in jobs]
    # the workers read these when their BLAS and OpenMP libraries load, before any code of ours
    # runs there (a library loaded later escapes threadpoolctl: seen, twice as slow)
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    try:
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=mp.get_context("spawn"),
                                 initializer=_init_worker, initargs=(shared,)) as pool:
            return [f.result() for f in [pool.submit(_run, fn, job) for job in jobs]]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


__all__ = ["map_jobs"]
