"""Reference solutions for chapter 1."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np


def bigram_prob(sentences: list[list[str]], prev: str, word: str) -> float:
    """Maximum-likelihood P(word | prev) over sentences padded with <s> and </s>."""
    pairs: Counter = Counter()
    starts: Counter = Counter()
    for s in sentences:
        toks = ["<s>"] + list(s) + ["</s>"]
        for a, b in zip(toks, toks[1:]):
            pairs[(a, b)] += 1
            starts[a] += 1
    return pairs[(prev, word)] / starts[prev] if starts[prev] else 0.0


def add_k(ngram_count: int, context_count: int, vocab_size: int, k: float) -> float:
    """(C(c w) + k) / (C(c) + k |V|)."""
    return (ngram_count + k) / (context_count + k * vocab_size)


def perplexity(probs: list[float]) -> float:
    """exp of the mean negative log-probability; inf if a probability is 0."""
    if any(p == 0 for p in probs):
        return math.inf
    return math.exp(-sum(math.log(p) for p in probs) / len(probs))


def continuation_count(bigrams: list[tuple[str, str]], word: str) -> int:
    """Distinct left neighbours of ``word``."""
    return len({v for v, w in bigrams if w == word})


def kn_discounts(n1: int, n2: int, n3: int, n4: int) -> tuple[float, float, float]:
    """Chen & Goodman's D1, D2, D3+."""
    y = n1 / (n1 + 2 * n2)
    return 1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3


def ppmi_matrix(counts: np.ndarray) -> np.ndarray:
    """max(PMI, 0) of a dense count matrix; 0 where the count is 0."""
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    expected = np.outer(c.sum(axis=1), c.sum(axis=0)) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log((c / total) / expected)
    return np.maximum(np.nan_to_num(pmi, nan=0.0, neginf=0.0), 0.0)
