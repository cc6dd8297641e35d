"""Maximum likelihood: relative frequencies, no smoothing.

``P(w | c) = C(c w) / C(c)``. A seen context gives probability 0 to every word it was never
followed by, so one unseen n-gram in a test sentence makes its probability 0 and the perplexity
infinite: the problem smoothing solves. For a context never seen in training the ratio is
0/0; this model then uses the longest shorter context that was seen (down to the unigram
relative frequency), so that every next-word distribution still sums to 1.
"""

from __future__ import annotations

import numpy as np

from .lm import InterpolatedLM
from .ngram import NGramCounts


class MLE(InterpolatedLM):
    """Maximum-likelihood n-gram model (unseen contexts fall back to shorter ones).

    Example:
        >>> lm = MLE.fit([["a", "b"], ["a", "a"]], order=2)
        >>> lm.prob("b", ["a"]), lm.prob("a", ["<s>"])
        (0.3333333333333333, 1.0)
    """

    name = "MLE"

    def __init__(self, counts: NGramCounts, order: int | None = None) -> None:
        super().__init__(counts, order)
        self._setup()

    def _level(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        counts = self.counts.tables[k - 1].counts.astype(np.float64)
        denom = self._context_sums(k, counts)
        ctx = np.zeros(len(counts), dtype=np.int64) if k == 1 else self.counts.tables[k - 1].context
        num = counts / denom[ctx]
        gamma = np.where(denom > 0, 0.0, 1.0)
        return num, gamma
