"""Jelinek-Mercer interpolation: mix the maximum-likelihood estimates of every order.

``P(w | c) = λ_n C(c w) / C(c) + (1 - λ_n) P(w | c')`` down to
``P(w) = λ_1 C(w) / N + (1 - λ_1) / |V'|``, one weight per order. A context never seen in
training skips its order (weight 0 there, as in NLTK's ``InterpolatedLanguageModel``). The
weights are tuned on held-out text by EM (:func:`companion.counting.tune.tune_jelinek_mercer`):
Jelinek & Mercer (1980)'s *deleted interpolation* tuned them on held-out data the same way.

The peer test checks it against NLTK's ``InterpolatedLanguageModel`` (its recursion, its
counter, its unseen-context rule) with a smoothing class that returns these weights; NLTK has no
Jelinek-Mercer class of its own, and its interpolated classes end in the unigram relative
frequency, not in a uniform distribution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .lm import InterpolatedLM
from .ngram import NGramCounts


def _check_lambdas(lambdas: Sequence[float] | None, order: int) -> np.ndarray:
    if lambdas is None:
        # untuned defaults; tune_jelinek_mercer replaces them
        return np.array([0.99] + [0.6] * (order - 1))
    lam = np.asarray(lambdas, dtype=np.float64).ravel()
    if lam.shape != (order,):
        raise ValueError(f"give one weight per order, lambdas[0] for unigrams ... lambdas[{order - 1}] for "
                         f"{order}-grams: expected {order} numbers, got {lam.size}")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0) or np.any(lam > 1):
        raise ValueError(f"every lambda must be in [0, 1], got {lam.tolist()}")
    if lam[0] >= 1:
        raise ValueError("lambdas[0] must be < 1: the unigram level must keep some weight on the uniform "
                         "distribution, or unseen words get probability 0")
    return lam


class JelinekMercer(InterpolatedLM):
    """Interpolated (Jelinek-Mercer) n-gram model with one weight per order.

    Args:
        counts: n-gram counts.
        lambdas: weights of the ML estimate of orders 1..n (each in [0, 1], ``lambdas[0] < 1``);
            default: 0.99 for unigrams, 0.6 above (untuned).
        order: use orders 1..order of ``counts`` only.
    """

    name = "interpolated"

    def __init__(self, counts: NGramCounts, lambdas: Sequence[float] | None = None, order: int | None = None) -> None:
        super().__init__(counts, order)
        self.lambdas = _check_lambdas(lambdas, self.order)
        self._setup()

    def ml_level(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(C(c w) / C(c) per row of table k, whether each row of table k-1 is a seen context)``."""
        counts = self.counts.tables[k - 1].counts.astype(np.float64)
        denom = self._context_sums(k, counts)
        ctx = np.zeros(len(counts), dtype=np.int64) if k == 1 else self.counts.tables[k - 1].context
        return counts / denom[ctx], denom > 0

    def _level(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        ml, seen = self.ml_level(k)
        lam = self.lambdas[k - 1]
        return lam * ml, np.where(seen, 1.0 - lam, 1.0)

    def with_lambdas(self, lambdas: Sequence[float]) -> "JelinekMercer":
        """The same counts with other weights."""
        return JelinekMercer(self.counts, lambdas)

    def __repr__(self) -> str:
        lam = ", ".join(f"{x:.3f}" for x in self.lambdas)
        return f"JelinekMercer(order={self.order}, lambdas=[{lam}], |V|={len(self.vocab):,})"
