"""Co-occurrence counting: vectorised counts equal the loop-based definition."""

from __future__ import annotations

import random

import numpy as np
import pytest

from companion.static.cooccur import Cooccurrence, cooccurrence_matrix, cooccurrence_reference, probability_ratios

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread


def _random_corpus(seed: int = 0, n: int = 60, vocab: int = 9) -> list[list[str]]:
    rng = random.Random(seed)
    return [[f"w{rng.randrange(vocab)}" for _ in range(rng.randrange(1, 14))] for _ in range(n)]


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("weighting", [True, False])
@pytest.mark.parametrize("window", [1, 3, 15])
def test_matches_the_loop_definition(symmetric, weighting, window):
    sents = _random_corpus(window)
    c = cooccurrence_matrix(sents, window, symmetric=symmetric, distance_weighting=weighting, min_count=1)
    ids = [[c.vocab.stoi[w] for w in s] for s in sents]
    ref = cooccurrence_reference(ids, window, symmetric=symmetric, distance_weighting=weighting)
    dense = c.matrix.toarray()
    expected = np.zeros_like(dense)
    for (a, b), v in ref.items():
        expected[a, b] = v
    np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=1e-12)
    assert c.nnz == len(ref)
    if symmetric:
        np.testing.assert_allclose(dense, dense.T)


def test_distance_weighting_and_sentence_boundaries():
    c = cooccurrence_matrix([["a", "b", "c"], ["d", "a"]], window=5, min_count=1)
    assert c.get("a", "b") == 1.0 and c.get("a", "c") == 0.5 and c.get("c", "a") == 0.5
    assert c.get("d", "a") == 1.0
    assert c.get("c", "d") == 0.0  # no window crosses a sentence boundary
    assert c.get("a", "a") == 0.0


def test_rare_words_are_removed_before_the_windows():
    # "rare" is below min_count: dropped, so "a" and "b" become neighbours (as cooccur.c does)
    sents = [["a", "rare", "b"]] + [["a", "b", "x"]] * 4
    c = cooccurrence_matrix(sents, window=1, min_count=2)
    assert "rare" not in c.vocab.stoi
    assert c.get("a", "b") == 5.0


def test_entries_and_density():
    c = cooccurrence_matrix([["a", "b", "c", "a"]], window=2, min_count=1)
    i, j, x = c.entries()
    assert i.dtype == j.dtype and x.numel() == c.nnz
    assert abs(float(x.sum()) - float(c.matrix.sum())) < 1e-12
    assert 0 < c.density() <= 1
    assert isinstance(c, Cooccurrence)


def test_probability_ratios_separate_related_words():
    # "ice" goes with "solid", "steam" with "gas", both with "water", neither with "fashion"
    sents = [["ice", "solid", "water"]] * 20 + [["steam", "gas", "water"]] * 20 + [["fashion", "dress"]] * 20
    sents += [["ice", "gas"]] * 1 + [["steam", "solid"]] * 1
    c = cooccurrence_matrix(sents, window=2, min_count=1)
    rows = {r["k"]: r for r in probability_ratios(c, "ice", "steam", ["solid", "gas", "water", "fashion"])}
    assert rows["solid"]["ratio"] > 5 > 1 / 5 > rows["gas"]["ratio"]
    assert 0.5 < rows["water"]["ratio"] < 2
    assert np.isnan(rows["fashion"]["ratio"])
    with pytest.raises(KeyError, match="vocabulary"):
        probability_ratios(c, "ice", "lava", ["gas"])


def test_bad_inputs_rejected():
    with pytest.raises(ValueError, match="window"):
        cooccurrence_matrix([["a", "b"]], window=0, min_count=1)
    with pytest.raises(TypeError, match="list of"):
        cooccurrence_matrix("a b c", window=2, min_count=1)  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        cooccurrence_matrix([["a", "b"]], window=1, min_count=1).get("a", "zzz")
