"""Reference solutions for chapter 2."""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np


def nnlm_parameter_count(vocab_size: int, n: int, dim: int, hidden: int, direct: bool) -> int:
    """|V| d (C) + d_h (n-1) d + d_h (H, b_h) + |V| d_h + |V| (U, b) + |V| (n-1) d (W, if direct)."""
    total = vocab_size * dim + hidden * (n - 1) * dim + hidden + vocab_size * hidden + vocab_size
    return total + (vocab_size * (n - 1) * dim if direct else 0)


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


def softmax_gradient(y: np.ndarray, target: int) -> np.ndarray:
    """dL/dy = softmax(y) - onehot(target)."""
    z = np.exp(y - y.max())
    grad = z / z.sum()
    grad[target] -= 1.0
    return grad


def stable_log_softmax(y: np.ndarray) -> np.ndarray:
    """The fix: exponentiate y - top, not y."""
    top = y.max(axis=-1, keepdims=True)  # subtract the largest score so exp cannot overflow
    return y - top - np.log(np.exp(y - top).sum(axis=-1, keepdims=True))


def mixture_weights(log_probs: list[np.ndarray], steps: int = 50) -> np.ndarray:
    """EM for the weights of a k-model mixture (the worked answer of the "extend" exercise).

    E step: each model's share of every token's mixed probability; M step: the new weight of a
    model is its mean share. Each step never lowers the mean log-probability of the mixture.

    In the chapter (laptop run), with the tree NNLM, the LBL and the trigram::

        names = [tree_name, lbl_name]
        valid = [nn_logp[(n, "valid")] for n in names] + [kn_eval[(TRIGRAM, "valid")]]
        test = [nn_logp[(n, "test")] for n in names] + [kn_eval[(TRIGRAM, "test")]]
        w = mixture_weights(valid)
        ppl = np.exp(-np.log(np.exp(np.stack(test)).T @ w).mean())

    Compare ``ppl`` with the two-model mixture's test perplexity and with the bootstrap spread:
    the two neural models were trained on the same text with the same kind of tree, so expect a
    gain of a few perplexity points at most.
    """
    p = np.exp(np.stack([np.asarray(lp, dtype=float) for lp in log_probs]))  # [k, T]
    w = np.full(len(p), 1.0 / len(p))
    for _ in range(steps):
        share = w[:, None] * p
        w = (share / share.sum(0, keepdims=True)).mean(1)
    return w
