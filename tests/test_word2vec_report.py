"""Chapter 3's claim-check helpers: per-question correctness and the paired bootstrap."""

import numpy as np
import pytest

from companion.word2vec.report import bootstrap_diff, correctness, verdict


def test_correctness_pools_variants_and_skips_unanswered():
    answers = {"a": ["x", "y", None, "z"], "b": ["x", "q", None, "z"]}
    gold = ["x", "y", "w", "v"]
    got = correctness(answers, gold, ["a", "b"])
    assert got.tolist() == [1.0, 0.5, 0.0]  # question 3 is unanswered by both: skipped
    assert correctness(answers, gold, ["a"], keep=[True, False, True, True]).tolist() == [1.0, 0.0]


def test_bootstrap_interval_covers_the_mean_and_separates_a_real_gap():
    rng = np.random.default_rng(0)
    a = (rng.random(2000) < 0.30).astype(float)
    b = (rng.random(2000) < 0.20).astype(float)
    d, lo, hi = bootstrap_diff(a, b, n_boot=500)
    assert lo < d < hi and lo > 0  # a 10-point gap on 2,000 questions is significant
    assert verdict(lo, hi) == "significant"
    same = (rng.random(300) < 0.03).astype(float)
    _, lo0, hi0 = bootstrap_diff(same, same[::-1].copy(), n_boot=500)
    assert lo0 <= 0 <= hi0 and verdict(lo0, hi0) == "not significant at this scale"


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="equal, non-empty"):
        bootstrap_diff(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="at least one variant"):
        correctness({}, ["x"], [])
