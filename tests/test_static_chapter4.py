"""Chapter 4's bookkeeping helpers (companion.static.chapter4): the spreads of its claim checks,
the small tables, and the subword diagram."""

from __future__ import annotations

import numpy as np
import pytest

from companion.evaluate import spearman
from companion.static import fnv1a_32
from companion.static.chapter4 import (
    Words,
    accuracy_diff,
    bootstrap,
    covered,
    draw_subwords,
    group_mean_diff,
    pair_cosine,
    similarity_diff,
    spearman_ci,
    verdict,
)


def _space(seed: int, words: list[str], dim: int = 8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(len(words), dim)), {w: i for i, w in enumerate(words)}


WORDS = [f"w{i}" for i in range(30)]
PAIRS = [(WORDS[i], WORDS[(i * 7 + 3) % 30], float((i * 13) % 10)) for i in range(30)]


def test_bootstrap_is_seeded_and_brackets_the_point():
    x = np.random.default_rng(0).normal(size=200)
    a = bootstrap(lambda i: float(x[i].mean()), len(x), n_boot=300, seed=1)
    b = bootstrap(lambda i: float(x[i].mean()), len(x), n_boot=300, seed=1)
    assert a == b
    point, lo, hi = a
    assert lo < point < hi
    assert hi - lo == pytest.approx(2 * 1.96 / np.sqrt(200), rel=0.3)  # the standard error
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap(lambda i: 0.0, 1)


def test_similarity_diff_of_a_space_with_itself_is_exactly_zero():
    space = _space(0, WORDS)
    assert similarity_diff(space, space, PAIRS, n_boot=50) == (0.0, 0.0, 0.0)


def test_similarity_diff_point_is_the_difference_of_the_two_rhos():
    a, b = _space(0, WORDS), _space(1, WORDS)
    gold = [p[2] for p in PAIRS]

    def rho(space):
        return spearman(gold, [pair_cosine(space, p[0], p[1]) for p in PAIRS])

    d, lo, hi = similarity_diff(a, b, PAIRS, n_boot=200)
    assert d == pytest.approx(rho(a) - rho(b), abs=1e-9)
    assert lo <= d <= hi


def test_a_missing_word_is_a_null_vector_in_the_paired_comparison():
    vecs, index = _space(0, WORDS)
    partial = (vecs[:20], {w: i for w, i in index.items() if i < 20})
    d, _, _ = similarity_diff((vecs, index), partial, PAIRS, n_boot=20)
    assert np.isfinite(d)
    assert np.isnan(pair_cosine(partial, "w25", "w1"))
    assert covered(PAIRS, partial[1]) == [p for p in PAIRS if p[0] in partial[1] and p[1] in partial[1]]


def test_accuracy_and_group_differences():
    right_a = np.array([True] * 80 + [False] * 20)
    right_b = np.array([True] * 20 + [False] * 80)
    d, lo, hi = accuracy_diff(right_a, right_b, n_boot=300)
    assert d == pytest.approx(0.6) and lo > 0.4 and hi < 0.8
    d, lo, hi = group_mean_diff([1.0, 1.2, 0.8], [0.0, 0.1, -0.1], n_boot=300)
    assert d == pytest.approx(1.0) and 0 < lo <= d <= hi


def test_spearman_ci_of_a_monotone_relation():
    x = np.arange(50.0)
    rho, lo, hi = spearman_ci(x, x**3, n_boot=100)
    assert hi == pytest.approx(1.0)
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0)


def test_verdict_reads_the_interval_and_glues_without_quotes():
    assert verdict(0.01, 0.2) == "larger than the spread"
    assert verdict(-0.3, -0.1) == "larger than the spread"
    assert verdict(-0.1, 0.2) == "not significant at this scale"
    assert repr(Words("plain text")) == "plain text"


def test_subword_diagram_shows_the_rows_the_model_uses():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    fig = draw_subwords("where", 7, 100, bucket=1000)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "<where>" in texts and "<wh" in texts and "re>" in texts
    assert "row 7  (the word's own row)" in texts
    assert f"row {100 + fnv1a_32('her') % 1000:,}  (bucket {fnv1a_32('her') % 1000:,})" in texts
