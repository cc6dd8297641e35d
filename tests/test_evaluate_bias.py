"""companion.evaluate.bias: WEAT on constructed vectors with known answers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from companion.evaluate.bias import WEAT_TESTS, association, axis_projection, weat


def _constructed(bias: float, seed: int = 0, n: int = 6):
    """Targets X lean towards attribute direction A, Y towards B, by `bias` (plus noise)."""
    g = torch.Generator().manual_seed(seed)
    d = 20
    a_dir, b_dir = torch.zeros(d), torch.zeros(d)
    a_dir[0], b_dir[1] = 1.0, 1.0
    words, rows = [], []

    def add(name, base):
        words.append(name)
        rows.append(base + 0.3 * torch.randn(d, generator=g))

    for k in range(n):
        add(f"a{k}", 2 * a_dir)
        add(f"b{k}", 2 * b_dir)
        add(f"x{k}", bias * a_dir + (1 - bias) * b_dir + torch.eye(d)[2 + k])
        add(f"y{k}", bias * b_dir + (1 - bias) * a_dir + torch.eye(d)[2 + k])
    index = {w: i for i, w in enumerate(words)}
    sets = [[f"{p}{k}" for k in range(n)] for p in "xyab"]
    return torch.stack(rows), index, sets


def _reference_weat(vecs, index, X, Y, A, B):
    """Direct transcription of Caliskan et al.'s formulas, with numpy."""
    v64 = vecs.double()
    u = {w: v64[index[w]].numpy() / np.linalg.norm(v64[index[w]].numpy()) for w in X + Y + A + B}

    def s(w):
        return np.mean([u[w] @ u[a] for a in A]) - np.mean([u[w] @ u[b] for b in B])

    sx, sy = [s(x) for x in X], [s(y) for y in Y]
    stat = sum(sx) - sum(sy)
    d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
    all_s = dict(zip(X + Y, sx + sy))
    higher = 0
    parts = list(itertools.combinations(X + Y, len(X)))
    for xi in parts:
        yi = [w for w in X + Y if w not in xi]
        higher += (sum(all_s[w] for w in xi) - sum(all_s[w] for w in yi)) > stat + 1e-12
    return stat, d, higher / len(parts)


def test_matches_the_formulas_exactly():
    vecs, index, (X, Y, A, B) = _constructed(0.8)
    r = weat(vecs, index, X, Y, A, B)
    stat, d, p = _reference_weat(vecs, index, X, Y, A, B)
    assert r.exact and r.n_partitions == math.comb(12, 6)
    assert r.statistic == pytest.approx(stat, rel=1e-9)
    assert r.effect_size == pytest.approx(d, rel=1e-9)
    assert r.p_value == pytest.approx(p)
    assert r.sizes == (6, 6, 6, 6) and r.missing == []


def test_strong_bias_is_large_and_significant_and_flips_sign():
    vecs, index, (X, Y, A, B) = _constructed(0.9)
    r = weat(vecs, index, X, Y, A, B)
    assert r.effect_size > 1.5 and r.p_value < 0.01
    flipped = weat(vecs, index, X, Y, B, A)
    assert flipped.effect_size == pytest.approx(-r.effect_size)
    assert flipped.p_value > 0.99


def test_no_bias_gives_a_small_effect():
    vecs, index, (X, Y, A, B) = _constructed(0.5)  # targets halfway between the attributes
    r = weat(vecs, index, X, Y, A, B)
    assert abs(r.effect_size) < 0.8 and r.p_value > 0.05


def test_sampled_p_value_is_seeded_and_close_to_exact():
    vecs, index, (X, Y, A, B) = _constructed(0.6, n=6)
    exact = weat(vecs, index, X, Y, A, B)
    s1 = weat(vecs, index, X, Y, A, B, n_permutations=500, seed=1)
    s2 = weat(vecs, index, X, Y, A, B, n_permutations=500, seed=1)
    assert not s1.exact and s1.n_partitions == 500
    assert s1.p_value == s2.p_value
    assert abs(s1.p_value - exact.p_value) < 0.06


def test_missing_words_are_dropped_and_reported():
    vecs, index, (X, Y, A, B) = _constructed(0.8)
    r = weat(vecs, index, X + ["nope"], Y, A, B + ["nada"])
    assert sorted(r.missing) == ["nada", "nope"] and r.sizes == (6, 6, 6, 6)
    with pytest.raises(ValueError, match="none of the words of Y"):
        weat(vecs, index, X, ["zz"], A, B)
    with pytest.raises(ValueError, match="disjoint"):
        weat(vecs, index, X, X[:2] + Y, A, B)
    with pytest.raises(ValueError, match="non-empty"):
        weat(vecs, index, X, Y, A, [])


def test_association_and_axis_projection():
    vecs, index, (X, Y, A, B) = _constructed(0.9)
    s = association(vecs, index, X + ["missing"], A, B)
    assert set(s) == set(X) and all(v > 0 for v in s.values())
    proj = axis_projection(vecs, index, X + Y, A, B)
    assert all(proj[x] > 0 for x in X) and all(proj[y] < 0 for y in Y)
    with pytest.raises(ValueError, match="undefined"):
        axis_projection(vecs, index, X, A, A)


def test_included_word_lists_are_well_formed():
    assert len(WEAT_TESTS) == 4
    for X, Y, A, B in WEAT_TESTS.values():
        assert len(X) == len(Y) and len(A) == len(B) and not set(X) & set(Y)
        assert all(w == w.lower() for w in X + Y + A + B)
