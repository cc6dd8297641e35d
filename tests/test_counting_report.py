"""Chapter 1's bookkeeping helpers: the bootstrap intervals agree with their point estimates,
glue gets plain numbers, and the diagrams draw."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from scipy.stats import spearmanr

from companion.counting import NGramCounts, unseen_ngram_share
from companion.counting.brown_clusters import BrownConfig, brown_clusters
from companion.counting.figures import interpolation_diagram, merge_tree
from companion.counting.report import (
    bootstrap_mean,
    class_table,
    prefix_table,
    unseen_share_interval,
)
from companion.counting.vectors import bootstrap_rho_difference, pair_cosines

TRAIN = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["a", "dog", "ran", "far"]] * 3
TEST = [["the", "cat", "ran"], ["a", "dog", "sat"], ["the", "bird", "sat", "far"]]


def test_unseen_share_interval_matches_the_share():
    counts = NGramCounts(TRAIN, 3)
    for n in (2, 3):
        share, lo, hi = unseen_share_interval(counts, TEST, n, n_boot=200)
        assert share == pytest.approx(unseen_ngram_share(counts, TEST, orders=(n,))[n])
        assert lo <= share <= hi


def test_bootstrap_mean():
    lo, hi = bootstrap_mean(np.r_[np.zeros(50), np.ones(50)], n_boot=500)
    assert lo < 0.5 < hi and hi - lo < 0.3
    assert bootstrap_mean(np.full(10, 2.0)) == (2.0, 2.0)


def test_rho_difference_agrees_with_scipy():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    index = {w: i for i, w in enumerate(words)}
    a, b = rng.normal(size=(30, 5)), rng.normal(size=(30, 5))
    pairs = [(words[i], words[j], float(rng.uniform(0, 10))) for i, j in rng.integers(0, 30, (40, 2)) if i != j]
    pairs.append(("w0", "not-a-word", 5.0))  # not covered: left out of both
    ca, gold, used = pair_cosines(a, index, pairs)
    assert len(used) == len(pairs) - 1
    cb, _, _ = pair_cosines(b, index, pairs)
    out = bootstrap_rho_difference({"a": a, "b": b}, index, pairs, "a", "b", n_boot=300)
    assert out["diff"] == pytest.approx(spearmanr(gold, ca)[0] - spearmanr(gold, cb)[0])
    assert out["low"] <= out["diff"] <= out["high"]
    same = bootstrap_rho_difference({"a": a, "b": a}, index, pairs, "a", "b", n_boot=50)
    assert same == {"diff": 0.0, "low": 0.0, "high": 0.0}


def test_diagrams_and_cluster_tables_draw():
    counts = NGramCounts(TRAIN * 2, 2)
    res = brown_clusters(counts, BrownConfig(n_clusters=4, n_words=None))
    freq = counts.table(1).counts.astype(float)
    assert interpolation_diagram() is not None
    fig = merge_tree(res, freq, prefix="", max_leaves=3)
    assert fig.axes and fig.axes[0].texts
    with pytest.raises(ValueError, match="prefix"):
        merge_tree(res, freq, prefix="0000000")
    assert len(class_table(res, freq, range(res.n_clusters))) == res.n_clusters
    table = prefix_table(res, freq, "cat", lengths=(1,))
    assert table["prefix length"].iloc[-1] == len(res.path("cat"))
