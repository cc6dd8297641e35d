"""Chapter 2's bookkeeping helpers (companion.neural_lm.report) and its diagrams."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from companion.neural_lm.diagram import nnlm_diagram, tree_path_diagram  # noqa: E402
from companion.neural_lm.report import (  # noqa: E402
    bootstrap_reduction,
    genre_table,
    sentence_index,
    toy_corpus,
    token_genres,
)
from companion.neural_lm.tree import huffman_tree  # noqa: E402


def test_sentence_index_counts_one_eos_per_sentence():
    assert sentence_index([["a", "b"], ["c"]]).tolist() == [0, 0, 0, 1, 1]


def test_bootstrap_of_a_uniform_gain_is_exact():
    rng = np.random.default_rng(0)
    old = np.log(rng.uniform(0.01, 0.5, 300))
    sent = np.repeat(np.arange(60), 5)
    r = bootstrap_reduction(old + math.log(2), old, sent, n_boot=200)
    # every token twice as likely: perplexity halves in every resample
    assert r["reduction"] == pytest.approx(0.5) and r["lo"] == pytest.approx(0.5)
    assert r["hi"] == pytest.approx(0.5) and r["sd"] == pytest.approx(0, abs=1e-12)


def test_bootstrap_spread_covers_zero_for_noise_and_keeps_sentences_together():
    rng = np.random.default_rng(1)
    old = np.log(rng.uniform(0.01, 0.5, 2000))
    sent = np.repeat(np.arange(200), 10)
    noise = bootstrap_reduction(old + rng.normal(0, 0.5, 2000), old, sent, n_boot=500)
    assert noise["lo"] < 0 < noise["hi"]
    # all the gain in one sentence: resampling whole sentences makes the interval wide
    one = old.copy()
    one[:10] += 5.0
    lumpy = bootstrap_reduction(one, old, sent, n_boot=500)
    assert lumpy["lo"] < 0.5 * lumpy["reduction"] < lumpy["hi"]


def test_bootstrap_is_deterministic_and_checks_shapes():
    old = np.log(np.full(20, 0.1))
    sent = np.repeat(np.arange(4), 5)
    new = old + np.linspace(-1, 1, 20)
    assert bootstrap_reduction(new, old, sent, seed=3) == bootstrap_reduction(new, old, sent, seed=3)
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        bootstrap_reduction(new[:-1], old, sent)


def test_toy_corpus_holds_out_its_pairs():
    toy = toy_corpus()
    pairs = {tuple(s[1:]) for s in toy.train}
    assert all(p not in pairs for p in toy.held_out)
    assert {tuple(s[1:]) for s in toy.valid + toy.test} == set(toy.held_out)


class _Split:
    train = [["a", "b"], ["c"]]
    valid = [["d"]]
    test = [["e", "f"]]

    def sizes(self):
        return {"train": 3, "valid": 1, "test": 2}


def test_token_genres_and_genre_table():
    genre_of_word = ["news", "news", "fiction", "learned", "fiction", "fiction"]
    assert token_genres(_Split(), "train", genre_of_word).tolist() == ["news"] * 3 + ["fiction"] * 2
    assert token_genres(_Split(), "test", genre_of_word).tolist() == ["fiction"] * 3
    logp = {"valid": np.log([0.5, 0.25]), "test": np.log([0.1, 0.1, 0.1])}
    table = genre_table(_Split(), genre_of_word, logp)
    assert table.loc[("test", "fiction"), "trigram PPL"] == pytest.approx(10.0)
    assert table.loc[("train", "news"), "tokens"] == 3


def test_diagrams_draw():
    fig = nnlm_diagram(direct=True)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "direct" in texts and "softmax" in texts
    assert "direct" not in " ".join(t.get_text() for t in nnlm_diagram(direct=False).axes[0].texts)
    counts, words = [50, 20, 12, 9, 5, 4], ["the", "of", "cat", "sat", "mat", "zebra"]
    fig = tree_path_diagram(counts, words, target=3)
    assert huffman_tree(counts).code_string(3) in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="target"):
        tree_path_diagram(counts, words, target=6)
    with pytest.raises(ValueError, match="one count per word"):
        tree_path_diagram(counts[:-1], words, target=0)
