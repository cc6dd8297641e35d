"""Measuring social bias in word vectors: the Word Embedding Association Test (WEAT).

Caliskan, Bryson & Narayanan (2017) carried the Implicit Association Test over to vectors. Take
two sets of *target* words ``X``, ``Y`` (e.g. career words, family words) and two sets of
*attribute* words ``A``, ``B`` (male names, female names). A word's association with the
attributes is

    s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)

and the test statistic and effect size are

    S(X, Y, A, B) = sum_{x in X} s(x, A, B) - sum_{y in Y} s(y, A, B)
    d = (mean_{x in X} s(x, A, B) - mean_{y in Y} s(y, A, B)) / std_{w in X u Y} s(w, A, B)

``d`` is a standardised difference (Cohen's d): 0 means no differential association; its size is
bounded by about 2. The one-sided p-value is the share of equal-size re-partitions
``(X_i, Y_i)`` of ``X u Y`` with ``S(X_i, Y_i, A, B) > S(X, Y, A, B)``: exact when there are few
partitions, sampled otherwise. We use the sample standard deviation (``ddof=1``); the paper does
not say which, and implementations differ (it changes ``d`` by the factor ``sqrt((n-1)/n)``).

The word lists of four of the paper's tests are included (:data:`WEAT_TESTS`), lower-cased.
Words missing from the vectors' vocabulary are dropped and reported.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch  # noqa: F401  (the doctest uses it)

from ._vectors import IndexLike, VectorsLike, as_matrix, build_lookup, unit_rows

__all__ = ["WeatResult", "WEAT_TESTS", "association", "weat", "axis_projection"]

_FLOWERS = ("aster clover hyacinth marigold poppy azalea crocus iris orchid rose bluebell daffodil lilac pansy "
            "tulip buttercup daisy lily peony violet carnation gladiola magnolia petunia zinnia").split()
_INSECTS = ("ant caterpillar flea locust spider bedbug centipede fly maggot tarantula bee cockroach gnat mosquito "
            "termite beetle cricket hornet moth wasp blackfly dragonfly horsefly roach weevil").split()
_PLEASANT = ("caress freedom health love peace cheer friend heaven loyal pleasure diamond gentle honest lucky "
             "rainbow diploma gift honor miracle sunrise family happy laughter paradise vacation").split()
_UNPLEASANT = ("abuse crash filth murder sickness accident death grief poison stink assault disaster hatred "
               "pollute tragedy divorce jail poverty ugly cancer kill rotten vomit agony prison").split()

#: Word lists of four tests of Caliskan et al. (2017), Table 1 (lower-cased): name -> (X, Y, A, B).
WEAT_TESTS: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "flowers-insects / pleasant-unpleasant": (_FLOWERS, _INSECTS, _PLEASANT, _UNPLEASANT),
    "career-family / male-female names": (
        "executive management professional corporation salary office business career".split(),
        "home parents children family cousins marriage wedding relatives".split(),
        "john paul mike kevin steve greg jeff bill".split(),
        "amy joan lisa sarah diana kate ann donna".split(),
    ),
    "math-arts / male-female terms": (
        "math algebra geometry calculus equations computation numbers addition".split(),
        "poetry art dance literature novel symphony drama sculpture".split(),
        "male man boy brother he him his son".split(),
        "female woman girl sister she her hers daughter".split(),
    ),
    "science-arts / male-female terms": (
        "science technology physics chemistry einstein nasa experiment astronomy".split(),
        "poetry art shakespeare dance literature novel symphony drama".split(),
        "brother father uncle grandfather son he his him".split(),
        "sister mother aunt grandmother daughter she hers her".split(),
    ),
}


@dataclass
class WeatResult:
    """Outcome of :func:`weat`.

    Attributes:
        effect_size: Cohen's d as defined above (positive: X goes with A, Y with B).
        statistic: ``S(X, Y, A, B)``.
        p_value: one-sided permutation p-value (share of partitions with a larger statistic).
        exact: whether every partition was enumerated.
        n_partitions: partitions used for the p-value.
        sizes: how many words of X, Y, A, B were found.
        missing: the words that were not in the vocabulary.
        associations: ``s(w, A, B)`` of every word of X then Y that was found.
    """

    effect_size: float
    statistic: float
    p_value: float
    exact: bool
    n_partitions: int
    sizes: tuple[int, int, int, int]
    missing: list[str] = field(repr=False)
    associations: dict[str, float] = field(repr=False)


def _rows(lookup, words: Sequence[str], name: str, missing: list[str]) -> list[int]:
    if isinstance(words, str) or not isinstance(words, Sequence) or len(words) == 0:
        raise ValueError(f"{name} must be a non-empty list of words, got {words!r}")
    out = []
    for w in words:
        r = lookup.get(str(w))
        if r is None:
            missing.append(str(w))
        else:
            out.append(r)
    if not out:
        raise ValueError(f"none of the words of {name} ({list(words)[:5]}...) is in the vocabulary")
    return out


def association(
    vectors: VectorsLike, index: IndexLike, words: Sequence[str], A: Sequence[str], B: Sequence[str],
    *, case_insensitive: bool = True,
) -> dict[str, float]:
    """``s(w, A, B)`` for each word of ``words`` found in the vocabulary (missing words are skipped)."""
    mat = as_matrix(vectors)
    lookup = build_lookup(index, mat.shape[0], case_insensitive=case_insensitive)
    missing: list[str] = []
    ra, rb = _rows(lookup, A, "A", missing), _rows(lookup, B, "B", missing)
    unit = unit_rows(mat.double())
    found = [(w, lookup.get(str(w))) for w in words]
    found = [(w, r) for w, r in found if r is not None]
    if not found:
        return {}
    W = unit[[r for _, r in found]]
    s = (W @ unit[ra].T).mean(1) - (W @ unit[rb].T).mean(1)
    return {str(w): float(v) for (w, _), v in zip(found, s.tolist())}


def weat(
    vectors: VectorsLike,
    index: IndexLike,
    X: Sequence[str],
    Y: Sequence[str],
    A: Sequence[str],
    B: Sequence[str],
    *,
    n_permutations: int = 10_000,
    seed: int = 0,
    case_insensitive: bool = True,
) -> WeatResult:
    """The Word Embedding Association Test of target sets ``X``, ``Y`` against attributes ``A``, ``B``.

    Args:
        vectors: ``[V, d]``; index: a ``Vocab`` or dict word -> row.
        X, Y, A, B: word lists (missing words are dropped and listed in ``missing``).
        n_permutations: if ``X u Y`` has at most this many equal-size partitions they are all
            enumerated (exact p-value); otherwise this many are drawn at random (seeded).
        seed: seeds the sampled partitions.

    Raises:
        ValueError: if a set has no word in the vocabulary, or X and Y share a word.

    Example:
        >>> v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 1.0]])
        >>> r = weat(v, {"a": 0, "b": 1, "x": 2, "y": 3}, ["x"], ["y"], ["a"], ["b"])
        >>> round(r.statistic, 4), r.exact, r.p_value
        (1.7911, True, 0.0)
    """
    if not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive int, got {n_permutations!r}")
    mat = as_matrix(vectors)
    lookup = build_lookup(index, mat.shape[0], case_insensitive=case_insensitive)
    missing: list[str] = []
    rx, ry = _rows(lookup, X, "X", missing), _rows(lookup, Y, "Y", missing)
    ra, rb = _rows(lookup, A, "A", missing), _rows(lookup, B, "B", missing)
    if set(rx) & set(ry):
        raise ValueError("X and Y share a word; the target sets must be disjoint")
    unit = unit_rows(mat.double())
    T = unit[rx + ry]
    s = ((T @ unit[ra].T).mean(1) - (T @ unit[rb].T).mean(1)).cpu().numpy()
    nx = len(rx)
    sx, sy = s[:nx], s[nx:]
    statistic = float(sx.sum() - sy.sum())
    sd = float(np.std(s, ddof=1)) if s.size > 1 else 0.0
    effect = float((sx.mean() - sy.mean()) / sd) if sd > 0 else float("nan")
    # permutation test: S_i = sum over X_i minus sum over the rest = 2 sum(X_i) - total
    n = s.size
    total = float(s.sum())
    n_parts = math.comb(n, nx)
    if n_parts <= n_permutations:
        sums = np.fromiter((s[list(c)].sum() for c in itertools.combinations(range(n), nx)), dtype=np.float64, count=n_parts)
        exact = True
    else:
        rng = np.random.default_rng(seed)
        idx = np.argsort(rng.random((n_permutations, n)), axis=1)[:, :nx]
        sums = s[idx].sum(1)
        exact = False
    stats = 2 * sums - total
    p = float((stats > statistic + 1e-12).mean())
    found_words = [w for w in list(X) + list(Y) if lookup.get(str(w)) is not None]
    return WeatResult(effect, statistic, p, exact, int(stats.size), (len(rx), len(ry), len(ra), len(rb)), missing,
                      {str(w): float(v) for w, v in zip(found_words, s.tolist())})


def axis_projection(
    vectors: VectorsLike,
    index: IndexLike,
    words: Sequence[str],
    positive: Sequence[str] = ("he", "him", "his", "man"),
    negative: Sequence[str] = ("she", "her", "hers", "woman"),
    *,
    case_insensitive: bool = True,
) -> dict[str, float]:
    """Cosine of each word with the axis ``mean(positive) - mean(negative)`` (unit vectors first),
    e.g. a he-she axis (Bolukbasi et al. 2016): > 0 leans to ``positive``. Missing words are skipped."""
    mat = as_matrix(vectors)
    lookup = build_lookup(index, mat.shape[0], case_insensitive=case_insensitive)
    missing: list[str] = []
    unit = unit_rows(mat.double())
    axis = unit[_rows(lookup, positive, "positive", missing)].mean(0) - unit[_rows(lookup, negative, "negative", missing)].mean(0)
    norm = float(axis.norm())
    if norm == 0:
        raise ValueError("the two poles have the same mean vector; the axis is undefined")
    axis = axis / norm
    out: dict[str, float] = {}
    for w in words:
        r = lookup.get(str(w))
        if r is not None:
            out[str(w)] = float(unit[r] @ axis)
    return out
