"""The hand-written training loop shared by word2vec's ``sgd`` engine, GloVe and fastText:
epochs of batches, optional Hogwild worker threads (as the C codes' threads: shared
parameters, no locks), and torch's intra-op thread count pinned during training; and the
checks of the config fields the three share.

Why pin the intra-op threads (default 1): the steps are many small gathers and scatters. A
second OpenMP thread cannot speed them up, and on a busy machine every parallel region waits
for a time slice: a tiny fastText run took 35 s with torch's 2 threads and 0.9 s with 1
(measured here). Parallelism comes from ``workers`` instead, each taking whole batches.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

import torch

from ..train import History, to_device

__all__ = [
    "intra_op_threads", "train_epochs", "check_threads", "check_positive_ints", "check_max_vocab",
    "check_update_cap", "check_run_fields",
]

StepFn = Callable[[Any], tuple[float, int, int]]  # batch -> (mean loss, examples, items)


def check_threads(workers: int, threads: int | None) -> None:
    """Validate ``workers`` and ``threads`` config fields."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ValueError(f"threads must be a positive int or None (leave torch's setting), got {threads!r}")


def check_positive_ints(config: Any, names: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the first of the fields ``names`` that is not a positive int."""
    for name in names:
        v = getattr(config, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")


def check_max_vocab(max_vocab: int | None) -> None:
    """Validate a ``max_vocab`` config field (``None``: no limit)."""
    if max_vocab is not None and (not isinstance(max_vocab, int) or max_vocab < 2):
        raise ValueError(f"max_vocab must be an int >= 2 or None, got {max_vocab!r}")


def check_update_cap(cap: float | None, name: str = "update_cap") -> None:
    """Validate a per-row update cap (:func:`~.heads.row_scale`; ``None``: no cap)."""
    if cap is not None and not (isinstance(cap, (int, float)) and cap > 0):
        raise ValueError(f"{name} must be a positive number or None, got {cap!r}")


def check_run_fields(config: Any, hand_engine: str) -> None:
    """Validate ``workers``, ``threads`` and ``seed``; ``engine="autograd"`` (one
    :func:`companion.train.fit` loop) takes one worker, the hand-written ``hand_engine`` any."""
    check_threads(config.workers, config.threads)
    if config.engine == "autograd" and config.workers != 1:
        raise ValueError(f"workers > 1 needs engine={hand_engine!r} (fit trains in one thread)")
    if not isinstance(config.seed, int) or config.seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {config.seed!r}")


@contextmanager
def intra_op_threads(n: int | None) -> Iterator[None]:
    """Temporarily set ``torch.set_num_threads(n)`` (``None``: leave it as it is)."""
    old = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n is not None:
            torch.set_num_threads(old)


def train_epochs(
    epoch_batches: Callable[[int], Iterable[Any]],
    step: StepFn,
    *,
    epochs: int,
    device: torch.device,
    workers: int = 1,
    threads: int | None = 1,
    progress_total: int | None = None,
    unit: str = "item",
) -> History:
    """Run ``step`` on every batch of every epoch; return a :class:`companion.train.History`.

    ``epoch_loss`` is the example-weighted mean loss of each epoch; ``items`` sums the third
    value ``step`` returns (corpus words, matrix entries). With ``workers > 1`` that many threads
    take batches from one iterator and step without locks (runs are then not deterministic).
    """
    check_threads(workers, threads)
    hist = History()
    bar = None
    if progress_total:
        from tqdm.auto import tqdm

        bar = tqdm(total=progress_total, unit=unit, unit_scale=True, leave=False)
    lock = threading.Lock()
    errors: list[BaseException] = []
    # the batches are built on the CPU: moving them is a no-op there, but walking the batch
    # costs ~0.2 ms a step (profiled), a few % of a compiled step
    move = (lambda b: b) if device.type == "cpu" else (lambda b: to_device(b, device))

    def work(batches: Iterator[Any], totals: list[float]) -> None:
        try:
            while not errors:
                with lock:
                    batch = next(batches, None)
                if batch is None:
                    return
                loss, n, items = step(move(batch))
                if not math.isfinite(loss):
                    raise ValueError(f"the loss became {loss} at step {hist.steps}; lower the learning rate or the batch size")
                with lock:
                    hist.step_loss.append(loss)
                    hist.steps += 1
                    hist.items += items
                    totals[0] += loss * n
                    totals[1] += n
                    if bar is not None:
                        bar.update(items)
        except BaseException as err:  # re-raised in the calling thread
            errors.append(err)

    start = time.perf_counter()
    with intra_op_threads(threads):
        for epoch in range(epochs):
            batches, totals = iter(epoch_batches(epoch)), [0.0, 0]
            if workers == 1:
                work(batches, totals)
            else:
                pool = [threading.Thread(target=work, args=(batches, totals), daemon=True) for _ in range(workers)]
                for t in pool:
                    t.start()
                for t in pool:
                    t.join()
            if errors:
                raise errors[0]
            if totals[1] == 0:
                raise ValueError(f"epoch {epoch} produced no training examples; is the corpus too small for the window?")
            hist.epoch_loss.append(totals[0] / totals[1])
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    hist.seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return hist
