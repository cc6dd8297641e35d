"""Reference solutions for chapter 2."""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np


def nnlm_parameter_count(vocab_size: int, n: int, m: int, h: int, direct: bool) -> int:
    """|V| m (C) + h (n-1) m + h (H, d) + |V| h + |V| (U, b) + |V| (n-1) m (W, if direct)."""
    total = vocab_size * m + h * (n - 1) * m + h + vocab_size * h + vocab_size
    return total + (vocab_size * (n - 1) * m if direct else 0)


def nnlm_logits(x, H, d, U, b, W=None) -> np.ndarray:
    """y = b + W x + U tanh(d + H x), one row per example."""
    y = b + np.tanh(x @ H.T + d) @ U.T
    return y + x @ W.T if W is not None else y


def path_probability(scores: Sequence[float], codes: Sequence[int]) -> float:
    """Product over the path of sigma(+s) (branch 1) or sigma(-s) (branch 0)."""
    p = 1.0
    for s, c in zip(scores, codes):
        z = s if c == 1 else -s
        p *= 1.0 / (1.0 + math.exp(-z))
    return p


def huffman_average_length(counts: Sequence[int]) -> float:
    """Sum of the merged weights of Huffman's algorithm, divided by the number of tokens."""
    heap = [float(c) for c in counts]
    heapq.heapify(heap)
    cost = 0.0
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        cost += a + b
        heapq.heappush(heap, a + b)
    return cost / sum(counts)


def mixture_perplexity(p_a: Sequence[float], p_b: Sequence[float], weight: float) -> float:
    """exp of the mean negative log of the mixed probabilities."""
    mixed = [weight * a + (1 - weight) * b for a, b in zip(p_a, p_b)]
    return math.exp(-sum(math.log(p) for p in mixed) / len(mixed))
