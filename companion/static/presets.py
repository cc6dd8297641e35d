"""Sizes of chapter 4's runs per ``BOOK_SCALE`` (see :mod:`companion.scale`).

The laptop budget is about five minutes for the whole chapter on 2 CPU cores; the numbers below
come from ``benchmarks/bench_static.py`` on such a machine (one thread per model, shared and
noisy): on the 3.0M-token chapter corpus one fastText epoch took about 60 s on one thread,
one GloVe epoch (8.4M non-zero entries, d = 100) 10-50 s depending on the machine's load.
"""

from __future__ import annotations

from dataclasses import replace

from ..scale import pick
from .fasttext import FastTextConfig
from .glove import GloVeConfig

__all__ = ["corpus_tokens", "glove_preset", "fasttext_preset"]


def corpus_tokens(scale: str | None = None) -> int | None:
    """How much of the chapter corpus to use: ``max_tokens`` for :func:`~.corpus.chapter_corpus`."""
    return pick(ci=200_000, laptop=None, gpu=None, scale=scale)


def glove_preset(scale: str | None = None, **overrides) -> GloVeConfig:
    """GloVe for the chapter: window 10, x_max 10 (the text8 demo's value for a small corpus),
    the C code's AdaGrad; epochs and size per scale. ``overrides`` replace fields."""
    cfg = GloVeConfig(
        dim=pick(ci=50, laptop=100, gpu=100, scale=scale),
        window=10,
        x_max=10.0,
        epochs=pick(ci=3, laptop=15, gpu=50, scale=scale),
        batch_size=pick(ci=8192, laptop=16384, gpu=65536, scale=scale),
        workers=pick(ci=1, laptop=2, gpu=1, scale=scale),
    )
    cfg = replace(cfg, **overrides)  # an unknown field raises TypeError
    cfg.validate()
    return cfg


def fasttext_preset(scale: str | None = None, **overrides) -> FastTextConfig:
    """fastText's skip-gram defaults (d 100, window 5, n-grams 3-6, t 1e-4, lr 0.05); epochs,
    buckets and size per scale. ``overrides`` replace fields."""
    cfg = FastTextConfig(
        dim=pick(ci=50, laptop=100, gpu=100, scale=scale),
        bucket=pick(ci=200_000, laptop=2_000_000, gpu=2_000_000, scale=scale),
        epochs=pick(ci=1, laptop=3, gpu=10, scale=scale),
        workers=pick(ci=1, laptop=2, gpu=1, scale=scale),
        batch_size=pick(ci=1024, laptop=1024, gpu=8192, scale=scale),
    )
    cfg = replace(cfg, **overrides)  # an unknown field raises TypeError
    cfg.validate()
    return cfg
