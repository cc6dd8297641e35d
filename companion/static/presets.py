"""Sizes of chapter 4's runs per ``BOOK_SCALE`` (see :mod:`companion.scale`).

The laptop budget is about five minutes for the whole chapter on 2 CPU cores. Measured on such a
machine (shared with other jobs, one thread per model, the 3.0M-token chapter corpus):

* fastText, d = 100: 16-27 s per epoch (the C++ code 38 s, gensim 20 s in the same run); after
  5 epochs WordSim-353 0.424 / 0.472 / 0.466 for seeds 1 / 2 / 3 (mean 0.454; measured for
  ``benchmarks/bench_static.py``, whose docstring has the details), analogies 49-51 % (an earlier
  three-seed run).
* GloVe, d = 100, window 10 (8.4M non-zero entries): 15-21 s per epoch. The C code's learning
  rate 0.05 needs many epochs on a corpus this small (WordSim-353 0.32 after 10 epochs, 0.35
  after 20); 0.1 reached 0.365 after 5 epochs and 0.386 after 15, so the presets use 0.1.
  d = 50 was clearly worse (0.29 after 15 epochs at lr 0.05).
* Both run with one worker: deterministic, and on a busy 2-core machine two Hogwild workers
  were slower, not faster (GloVe 54 s vs 41 s for 2 epochs). Pass ``workers=2`` on an idle
  machine with cores to spare.
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
    the C code's AdaGrad with learning rate 0.1 (see above); epochs and size per scale.
    ``overrides`` replace fields."""
    cfg = GloVeConfig(
        dim=pick(ci=50, laptop=100, gpu=100, scale=scale),
        window=10,
        x_max=10.0,
        lr=0.1,
        epochs=pick(ci=3, laptop=5, gpu=30, scale=scale),
        batch_size=16384,  # 65536 entries diverged at lr 0.1 (a frequent word's steps add up)
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
        epochs=pick(ci=1, laptop=5, gpu=10, scale=scale),
        batch_size=1024,  # 4096 centres diverged without FastTextConfig.update_cap
    )
    cfg = replace(cfg, **overrides)  # an unknown field raises TypeError
    cfg.validate()
    return cfg
