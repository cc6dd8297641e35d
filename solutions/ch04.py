"""Reference solutions for chapter 4 (GloVe, fastText, evaluation)."""

from __future__ import annotations

import math

import numpy as np


def glove_weight(x: float, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """``min(1, (x / x_max) ** alpha)``."""
    return min(1.0, (x / x_max) ** alpha)


def cooccurrence_counts(tokens: list[str], window: int) -> dict[tuple[str, str], float]:
    """Look left up to ``window`` words; add 1/d in both directions."""
    out: dict[tuple[str, str], float] = {}
    for i, w in enumerate(tokens):
        for d in range(1, min(window, i) + 1):
            c = tokens[i - d]
            out[(w, c)] = out.get((w, c), 0.0) + 1.0 / d
            out[(c, w)] = out.get((c, w), 0.0) + 1.0 / d
    return out


def glove_entry_loss(w, c, b: float, bc: float, x: float, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """``f(x) (w . c + b + bc - log x)^2``."""
    diff = float(np.dot(np.asarray(w, dtype=float), np.asarray(c, dtype=float))) + b + bc - math.log(x)
    return glove_weight(x, x_max, alpha) * diff * diff


def char_ngrams(word: str, minn: int = 3, maxn: int = 6) -> list[str]:
    """By start position, then by length."""
    w = "<" + word + ">"
    return [w[i:i + n] for i in range(len(w)) for n in range(minn, maxn + 1) if i + n <= len(w)]


def fnv1a_32(text: str) -> int:
    """FNV-1a over the UTF-8 bytes, each byte sign-extended as fastText's ``int8_t`` cast does."""
    h = 2166136261
    for c in text.encode("utf-8"):
        h ^= c if c < 128 else c | 0xFFFFFF00
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def weat_association(w, A, B) -> float:
    """Mean cosine with A minus mean cosine with B."""
    w = np.asarray(w, dtype=float)

    def cos(u) -> float:
        u = np.asarray(u, dtype=float)
        return float(u @ w / (np.linalg.norm(u) * np.linalg.norm(w)))

    return float(np.mean([cos(a) for a in A]) - np.mean([cos(b) for b in B]))


def shared_bucket_share(n_ngrams: int, buckets: int) -> float:
    """One given n-gram is alone when each of the other ``n_ngrams - 1`` misses its bucket, each
    with probability ``1 - 1/buckets``: the share is ``1 - (1 - 1/B)^(N - 1)``."""
    return 1.0 - math.exp((n_ngrams - 1) * math.log1p(-1.0 / buckets))


def weat_flowers_insects(spaces: dict):
    """The flowers/insects WEAT test on each named ``(vectors, index)``: effect size, one-sided
    permutation p-value and the number of words found per set (X, Y, A, B).

    Use it as ``weat_flowers_insects({"GloVe": (glove.vectors(), glove.index), ...})``; for
    fastText's OOV vectors pass ``ft.with_oov(all the test's words)``. The words a vocabulary
    lacks show in ``found``: a test run on the words that remain is a different test, and with
    a handful of words per set one word can move the effect size a lot.

    Measured once (seed 0, 10,000 permutations) on the GloVe 6B 50d reference vectors: effect
    size 1.08, p = 0.0002, with 24 of the 25 flowers and every insect and attribute word found
    (Caliskan et al. report 1.50 on the 840B-token 300d vectors). Run it on the chapter's own
    vectors to see how many of the words three million tokens lack.
    """
    import pandas as pd

    from companion.evaluate.bias import WEAT_TESTS, weat

    X, Y, A, B = WEAT_TESTS["flowers-insects / pleasant-unpleasant"]
    rows = {}
    for name, (vectors, index) in spaces.items():
        r = weat(vectors, index, X, Y, A, B, n_permutations=10_000, seed=0)
        rows[name] = {"effect size": r.effect_size, "p-value": r.p_value, "found": r.sizes}
    return pd.DataFrame(rows).T


def spearman_rho(x, y) -> float:
    """Average ranks (ties share their mean position), then Pearson on the ranks."""

    def ranks(values) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        order = np.argsort(values, kind="stable")
        r = np.empty(len(values))
        r[order] = np.arange(len(values), dtype=float)
        for v in np.unique(values):
            tied = values == v
            r[tied] = r[tied].mean()
        return r

    u, v = ranks(x), ranks(y)
    u, v = u - u.mean(), v - v.mean()
    return float(u @ v / math.sqrt(float(u @ u) * float(v @ v)))


def analogy_3cosadd(vectors, words, a, b, c):
    """The fix: normalise every row first, so the offset is built from unit vectors."""
    v = np.asarray(vectors, dtype=float)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    idx = {w: i for i, w in enumerate(words)}
    target = v[idx[b]] - v[idx[a]] + v[idx[c]]
    scores = v @ target / np.linalg.norm(target)
    for w in (a, b, c):
        scores[idx[w]] = -np.inf
    return words[int(np.argmax(scores))]
