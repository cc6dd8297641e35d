"""The neighbours/analogy explorer of chapter 3: query parsing, the callback, the widget's state."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from companion.word2vec.widget import Query, explore, explorer_widget, parse_query

# Hand-made vectors: a "gender" axis (dim 0) and a "royalty" axis (dim 1), plus noise words.
WORDS = ["man", "woman", "king", "queen", "apple", "pear", "well-known"]
VECS = torch.tensor([
    [1.0, 0.0, 0.1],    # man
    [-1.0, 0.0, 0.1],   # woman
    [1.0, 1.0, 0.1],    # king
    [-1.0, 1.0, 0.1],   # queen
    [0.0, 0.1, 1.0],    # apple
    [0.05, 0.1, 0.9],   # pear
    [0.0, -1.0, 0.0],   # well-known
])
INDEX = {w: i for i, w in enumerate(WORDS)}


def test_parse_query_signs_hyphens_and_errors():
    assert parse_query("Whale") == Query(("whale",), ())
    assert parse_query("king - man + woman") == Query(("king", "woman"), ("man",))
    assert parse_query("king -man+woman") == Query(("king", "woman"), ("man",))
    assert parse_query("well-known") == Query(("well-known",), ())  # a hyphen inside a word is the word's
    assert parse_query("a + b").kind == "sum" and parse_query("a").kind == "neighbours"
    assert parse_query("b - a + c").kind == "analogy"
    assert parse_query("king+woman -man").expression == "king - man + woman"
    for bad, msg in [("", "type a word"), ("   ", "type a word"), ("- man", "no positive"),
                     ("a - - b", "two signs"), ("a +", "ends with a sign"), ("a + -", "two signs")]:
        with pytest.raises(ValueError, match=msg):
            parse_query(bad)
    with pytest.raises(TypeError):
        parse_query(["king"])


def test_neighbours_are_cosine_ranked_and_exclude_the_query():
    res = explore(VECS, INDEX, "apple", k=2)
    assert res.error is None and res.method == "cosine"
    assert res.words[0] == "pear" and "apple" not in res.words
    cos = float(torch.nn.functional.cosine_similarity(VECS[4], VECS[5], dim=0))
    assert res.results[0][1] == pytest.approx(cos, abs=1e-6)
    assert [s for _, s in res.results] == sorted((s for _, s in res.results), reverse=True)


@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
def test_analogy_finds_queen_and_never_returns_an_input(method):
    res = explore(VECS, INDEX, "king - man + woman", k=3, method=method)
    assert res.error is None and res.method == method
    assert res.words[0] == "queen"
    assert not {"king", "man", "woman"} & set(res.words)


def test_3cosadd_scores_equal_the_sum_of_cosines():
    res = explore(VECS, INDEX, "king - man + woman", k=len(WORDS))
    unit = VECS / VECS.norm(dim=1, keepdim=True)
    for w, s in res.results:
        r = INDEX[w]
        expected = float(unit[r] @ unit[INDEX["king"]] - unit[r] @ unit[INDEX["man"]] + unit[r] @ unit[INDEX["woman"]])
        assert s == pytest.approx(expected, abs=1e-6)
    assert len(res.results) == len(WORDS) - 3  # everything but the inputs


def test_reader_errors_are_messages_not_exceptions_and_bad_arguments_raise():
    res = explore(VECS, INDEX, "king - dog + cat")
    assert res.results == [] and "dog" in res.error and "cat" in res.error
    assert "positive" in explore(VECS, INDEX, "- king").error
    assert explore(np.asarray(VECS), INDEX, "man", k=1).words == ["king"]  # NumPy works too
    assert explore(VECS, INDEX, "man", restrict_vocab=2).words == ["woman"]  # answers from the first rows only
    with pytest.raises(ValueError, match="k must be"):
        explore(VECS, INDEX, "man", k=0)
    with pytest.raises(ValueError, match="method"):
        explore(VECS, INDEX, "man", method="cos")
    with pytest.raises(ValueError, match="restrict_vocab"):
        explore(VECS, INDEX, "man", restrict_vocab=0)
    with pytest.raises(TypeError, match="index"):
        explore(VECS, ["man"], "man")


def test_widget_state_follows_the_controls():
    other = VECS.clone()
    other[[2, 3]] = other[[3, 2]]  # swap king's and queen's vectors: "queen" is no longer the answer
    w = explorer_widget({"a": (VECS, INDEX), "b": (other, INDEX)}, k=2)
    assert w.calls == 1 and w.last.words[0] == "queen" and "<table>" in w.output.value
    assert "king - man + woman" in w.output.value
    w.query.value = "apple"
    assert w.calls == 2 and len(w.last.words) == 2 and w.last.words[0] == "pear"
    w.k.value = 1
    assert w.last.words == ["pear"]
    w.method.value = "3cosmul"
    w.query.value = "king - man + woman"
    assert w.last.method == "3cosmul" and w.last.words == ["queen"]
    w.space.value = "b"
    assert w.calls == 6 and w.last.words != ["queen"]
    w.query.value = "unicorn"
    assert "Cannot answer" in w.output.value and "unicorn" in w.output.value
    with pytest.raises(ValueError, match="not among"):
        explorer_widget({"a": (VECS, INDEX)}, space="z")
    with pytest.raises(ValueError, match="non-empty"):
        explorer_widget({})


def test_an_unknown_word_then_a_change_of_k_or_vectors_still_answers():
    """Issue 10: after 'whale' (not in the vocabulary), changing k or the vector set seemed to
    do nothing. Every change must re-render the output, and a change that makes the query
    answerable must answer it."""
    small = {w: i for i, w in enumerate(WORDS[:4])}  # no "apple"
    w = explorer_widget({"all": (VECS, INDEX), "small": (VECS[:4], small)}, space="small", k=2)
    w.query.value = "apple"
    first = w.output.value
    assert "Cannot answer" in first and "apple" in first and "These vector sets know it: all" in first
    w.k.value = 3  # still unanswerable here, but the page must show that k changed
    assert w.calls == 3 and w.output.value != first and "k = 3" in w.output.value
    w.space.value = "all"  # this set knows the word: the answer appears without re-running the cell
    assert w.last.error is None and w.last.words[0] == "pear" and "<table>" in w.output.value
    w.query.value = "whale"
    assert "No vector set here knows it" in w.output.value
    w.query.value = "apple"
    assert w.last.words[0] == "pear"


def test_a_failing_callback_is_shown_not_lost():
    bad = torch.full((7, 3), float("nan"))  # vectors that cannot be evaluated
    w = explorer_widget({"ok": (VECS, INDEX), "broken": (bad, INDEX)}, k=2)
    w.space.value = "broken"
    assert "Cannot answer" in w.output.value and "NaN" in w.output.value
    w.space.value = "ok"
    assert w.last.words[0] == "queen"
