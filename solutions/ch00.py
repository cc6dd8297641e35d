"""Reference solutions for chapter 0 (try the exercises first!)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def type_token_ratio(tokens: Sequence[str]) -> float:
    """Distinct tokens divided by tokens; 0.0 for no tokens."""
    if len(tokens) == 0:
        return 0.0
    return len(set(tokens)) / len(tokens)


def coverage(counts: dict[str, int], k: int) -> float:
    """The fix: sort the counts in *decreasing* order before taking the first k."""
    top = sorted(counts.values(), reverse=True)[:k]
    return sum(top) / sum(counts.values())


def zipf_exponent(r1: float, f1: float, r2: float, f2: float) -> float:
    """log f = log C - s log r at both points; subtracting cancels log C:
    s = -(log f2 - log f1) / (log r2 - log r1), minus the log-log slope."""
    return -(math.log(f2) - math.log(f1)) / (math.log(r2) - math.log(r1))


def heaps_curve(tokens: Sequence[str], every: int) -> list[tuple[int, int]]:
    """(n, types in the first n tokens) every `every` tokens, and at the end."""
    seen: set[str] = set()
    curve = []
    for n, tok in enumerate(tokens, start=1):
        seen.add(tok)
        if n % every == 0 or n == len(tokens):
            curve.append((n, len(seen)))
    return curve


def heaps_exponent(curve: Sequence[tuple[int, int]], min_n: int = 1000) -> float:
    """The worked answer to the rest of the extend task: fit log V = log K + beta log n on the
    points with n >= min_n (the first few hundred tokens are noisy).

    On Brown (measured when this was written, points every 1,000 tokens): beta = 0.60 for the
    word forms as printed, 0.59 lower-cased; within genres a, b, j and n (points every 500
    tokens) 0.70 to 0.76. Part of that difference is the range: the log-log curve bends, and a
    genre's curve is ten times shorter than Brown's, so compare fits over the same range of n::

        from companion.data import load_brown
        brown = load_brown()
        for genre in "abjn":
            print(genre, heaps_exponent(heaps_curve(brown.words(genre=genre), 500)))
    """
    n, v = np.array([p for p in curve if p[0] >= min_n], dtype=float).T
    beta, _ = np.polyfit(np.log(n), np.log(v), 1)
    return float(beta)
