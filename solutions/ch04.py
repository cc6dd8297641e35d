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
