"""Chapter 3's claim-check plumbing: per-question correctness of analogy answers, and a
bootstrap over questions for the difference between two groups of variants."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def correctness(
    answers: Mapping[str, Sequence[str | None]],
    gold: Sequence[str],
    names: Sequence[str],
    keep: Sequence[bool] | None = None,
) -> np.ndarray:
    """Mean over the variants ``names`` of "answered right", one entry per question that every
    variant answered (``None`` = not answerable) and that ``keep`` selects."""
    if not names:
        raise ValueError("correctness() needs at least one variant name")
    keep = [True] * len(gold) if keep is None else list(keep)
    rows = []
    for i, g in enumerate(gold):
        preds = [answers[n][i] for n in names]
        if keep[i] and all(p is not None for p in preds):
            rows.append(np.mean([p == g for p in preds]))
    return np.asarray(rows, dtype=float)


def bootstrap_diff(
    a: np.ndarray, b: np.ndarray, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``a - b`` (paired, one entry per question) and its 95% percentile interval from
    ``n_boot`` resamples of the questions."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(
            f"bootstrap_diff needs two equal, non-empty 1-D arrays, got {a.shape}, {b.shape}"
        )
    diff = a - b
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(n_boot, diff.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(lo), float(hi)


def verdict(lo: float, hi: float) -> str:
    """'significant' when the interval excludes zero, else 'not significant at this scale'."""
    return "significant" if lo > 0 or hi < 0 else "not significant at this scale"
