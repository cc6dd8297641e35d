"""Tuning smoothing on held-out text: add-k's k, Jelinek-Mercer's weights.

Both use only the validation split, never the test split. Everything that does not depend on
the parameter (the count look-ups) is computed once, so a full tuning run takes well under a
second on Brown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar

from .addk import AddK
from .interpolation import JelinekMercer
from .lm import take
from .ngram import EncodedText, NGramCounts


@dataclass
class TuneResult:
    """A tuned model and how the tuning went."""

    model: object
    valid_perplexity: float
    params: dict
    history: list[float] = field(default_factory=list)  # validation perplexity per step/iteration


def tune_add_k(counts: NGramCounts, valid: Sequence[Sequence[str]] | EncodedText,
               bounds: tuple[float, float] = (1e-5, 10.0), order: int | None = None) -> TuneResult:
    """Choose add-k's k that minimises validation perplexity (bounded search over log k).

    Args:
        counts: training counts.
        valid: validation sentences (or text encoded with ``counts``).
        bounds: the search interval for k (both > 0).
        order: use orders 1..order of ``counts``.
    """
    lo, hi = bounds
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"bounds must satisfy 0 < low < high < inf, got {bounds!r}")
    base = AddK(counts, k=1.0, order=order)
    text = base.encode(valid)
    c_gram, c_ctx = base.counts_at(text)
    v = base.vocab.n_predictable
    history: list[float] = []

    def ppl(log_k: float) -> float:
        k = math.exp(log_k)
        value = float(np.exp(-np.mean(np.log((c_gram + k) / (c_ctx + k * v)))))
        history.append(value)
        return value

    res = minimize_scalar(ppl, bounds=(math.log(lo), math.log(hi)), method="bounded", options={"xatol": 1e-4})
    k = float(math.exp(res.x))
    model = AddK(counts, k=k, order=order)
    return TuneResult(model, float(res.fun), {"k": k}, history)


def _levels(model: JelinekMercer, text: EncodedText) -> tuple[np.ndarray, np.ndarray]:
    """Per predicted token and level 0..n: the ML estimate (level 0: uniform) and whether the level
    is active (its context was seen in training)."""
    h = model.counts.lookup(text)
    at = text.predicted
    n = model.order
    q = np.zeros((len(at), n + 1))
    active = np.zeros((len(at), n + 1), dtype=bool)
    q[:, 0] = 1.0 / model.vocab.n_predictable
    active[:, 0] = True
    ml1, _ = model.ml_level(1)
    q[:, 1] = ml1[text.ids[at]]
    active[:, 1] = True
    for k in range(2, n + 1):
        ml, seen = model.ml_level(k)
        active[:, k] = take(seen.astype(np.float64), h[k - 2][at - 1], 0.0) > 0
        q[:, k] = take(ml, h[k - 1][at], 0.0)
    return q, active


def tune_jelinek_mercer(counts: NGramCounts, valid: Sequence[Sequence[str]] | EncodedText, *,
                        order: int | None = None, iterations: int = 200, tol: float = 1e-7,
                        init: Sequence[float] | None = None) -> TuneResult:
    """Fit Jelinek-Mercer's weights on validation text by EM (deleted interpolation).

    The model is a chain of choices: at order n, use the ML estimate with probability λ_n or go
    down one order; at order 1, use the unigram estimate with probability λ_1 or the uniform
    distribution. EM's E-step gives each validation token's posterior over the level that
    produced it; the M-step sets λ_k = (tokens produced at level k) / (tokens that reached level
    k). Orders whose context is unseen are skipped, as in the model. The validation likelihood
    never decreases.

    Returns:
        A :class:`TuneResult` whose ``history`` is the validation perplexity per iteration.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    model = JelinekMercer(counts, init, order=order)
    text = model.encode(valid)
    q, active = _levels(model, text)
    n = model.order
    lam = model.lambdas.copy()
    history: list[float] = []
    last = -math.inf
    for _ in range(iterations):
        # weight of each level: λ_k times (1 - λ_j) of every active level above it
        lam_full = np.concatenate([[1.0], lam])
        w = np.zeros_like(q)
        remaining = np.ones(len(q))
        for k in range(n, -1, -1):
            lk = np.where(active[:, k], lam_full[k], 0.0)
            w[:, k] = remaining * lk
            remaining = remaining * (1.0 - lk)
        joint = w * q
        p = joint.sum(axis=1)
        ll = float(np.log(p).sum())
        history.append(math.exp(-ll / len(p)))
        r = joint / p[:, None]
        reached = np.cumsum(r, axis=1)  # tokens produced at level <= k
        for k in range(1, n + 1):
            m = active[:, k]
            denom = reached[m, k].sum()
            lam[k - 1] = r[m, k].sum() / denom if denom > 0 else lam[k - 1]
        lam[0] = min(lam[0], 1.0 - 1e-12)  # keep some uniform mass for unseen words
        if ll - last < tol * abs(ll):
            break
        last = ll
    model = model.with_lambdas(lam)
    return TuneResult(model, model.perplexity(text), {"lambdas": lam.tolist()}, history)
