"""Reference solutions for chapter 5 (sentence embeddings)."""

from __future__ import annotations

import random

import numpy as np


def sif_embed(X: np.ndarray, weights: np.ndarray, sentences: list[list[int]]) -> np.ndarray:
    """Weighted means, then the projection on the first right singular vector removed."""
    V = np.stack([np.mean([weights[w] * X[w] for w in s], axis=0) for s in sentences])
    u = np.linalg.svd(V, full_matrices=False)[2][0]  # the sign of u cancels in the projection
    return V - np.outer(V @ u, u)


def dbow_gradient(d: np.ndarray, u_words: np.ndarray, u_noise: np.ndarray) -> np.ndarray:
    """sum_i (sigma(u_i.d) - 1) u_i + sum_ij sigma(u_ij.d) u_ij."""
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    pos = (sig(u_words @ d) - 1.0) @ u_words
    neg = np.einsum("mk,mkd->d", sig(u_noise @ d), u_noise)
    return pos + neg


def swap_bigrams(tokens: list[str], px: float, rng: random.Random) -> list[str]:
    """The fix: step two positions at a time, so the bigrams do not overlap."""
    out = list(tokens)
    for i in range(0, len(out) - 1, 2):
        if rng.random() < px:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def qt_loss(F_: np.ndarray, G: np.ndarray) -> float:
    """Row-wise log-softmax with the diagonal masked, targets uniform over i - 1 and i + 1."""
    S = F_ @ G.T
    B = S.shape[0]
    masked = np.where(np.eye(B, dtype=bool), -np.inf, S)
    m = masked.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(masked - m).sum(axis=1))
    losses = []
    for i in range(B):
        ctx = [j for j in (i - 1, i + 1) if 0 <= j < B]
        losses.append(np.mean([lse[i] - S[i, j] for j in ctx]))
    return float(np.mean(losses))


def sif_gain(cos_avg: np.ndarray, cos_sif: np.ndarray, gold: np.ndarray) -> float:
    """Spearman(cos_sif, gold) - Spearman(cos_avg, gold).

    Step 2 is what the chapter's claim check 1 computes: its rows "skip-gram (ours)" hold the
    gain and its bootstrap interval for our own vectors on STS-B and SICK-R. Step 3: build
    ``SIF(vecs, words, probs, a=a)`` and ``SIF(..., remove=False)`` and repeat; compare the
    three gains (weights only, removal only = ``AveragedVectors`` followed by
    ``remove_component``, both).
    """
    from scipy.stats import spearmanr

    return float(spearmanr(cos_sif, gold)[0] - spearmanr(cos_avg, gold)[0])
