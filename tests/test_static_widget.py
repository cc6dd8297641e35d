"""Chapter 4's any-word explorer: the callback (fastText builds vectors for unseen words, word-level
models say they have none), reader errors as messages, and the widget's state."""

from __future__ import annotations

import pytest
import torch

from companion.static import char_ngrams, train_fasttext
from companion.static.widget import lookup_any_word, subword_explorer

WORDS = ["cat", "cats", "dog", "dogs", "car", "cars"]
VECS = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, 0.0], [-0.9, -0.1]])
INDEX = {w: i for i, w in enumerate(WORDS)}


@pytest.fixture(scope="module")
def ft():
    sents = [["the", "cat", "sat", "on", "the", "mat"], ["the", "cats", "sat", "on", "the", "mats"],
             ["a", "dog", "ran", "in", "the", "park"], ["the", "dogs", "ran", "in", "a", "park"]] * 20
    return train_fasttext(sents, dim=8, min_count=1, bucket=2000, epochs=1, sample=0, seed=0)


def test_word_level_model_has_no_vector_for_an_unseen_word_and_fasttext_does(ft):
    res = lookup_any_word({"fastText": ft, "word-level": (VECS, INDEX)}, "  Catz ", k=3)
    assert res.error is None and res.word == "catz"
    assert res.ngrams == char_ngrams("catz")
    by = res.by_model()
    assert not by["word-level"].in_vocabulary and by["word-level"].neighbours == []
    assert "no vector" in by["word-level"].note
    f = by["fastText"]
    assert not f.in_vocabulary and len(f.neighbours) == 3 and "n-gram" in f.note
    assert f.neighbours == ft.nearest("catz", 3)  # the callback is fastText's own OOV look-up
    assert all(w in ft.vocab.stoi for w in f.words)


def test_known_words_get_cosine_neighbours_without_themselves(ft):
    res = lookup_any_word({"word-level": (VECS, INDEX), "fastText": ft}, "cat", k=2)
    wl = res.by_model()["word-level"]
    assert wl.in_vocabulary and wl.words == ["cats", "dogs"]
    cos = float(torch.nn.functional.cosine_similarity(VECS[0], VECS[1], dim=0))
    assert wl.neighbours[0][1] == pytest.approx(cos, abs=1e-6)
    f = res.by_model()["fastText"]
    assert f.in_vocabulary and "cat" not in f.words and len(f.words) == 2
    assert [a.model for a in res.answers] == ["word-level", "fastText"]  # the order of the models


def test_reader_errors_are_messages_and_bad_arguments_raise(ft):
    assert "type a word" in lookup_any_word({"m": (VECS, INDEX)}, "   ").error
    assert "one word" in lookup_any_word({"m": (VECS, INDEX)}, "two words").error
    with pytest.raises(ValueError, match="k must be"):
        lookup_any_word({"m": (VECS, INDEX)}, "cat", k=0)
    with pytest.raises(ValueError, match="non-empty"):
        lookup_any_word({}, "cat")
    with pytest.raises(TypeError, match="FastTextResult or a pair"):
        lookup_any_word({"m": VECS}, "cat")
    with pytest.raises(TypeError, match="string"):
        lookup_any_word({"m": (VECS, INDEX)}, 3)


def test_widget_state_follows_the_controls(ft):
    ex = subword_explorer({"fastText": ft, "word-level": (VECS, INDEX)}, word="dogz", k=2)
    assert ex.calls == 1 and ex.last.word == "dogz" and "dogz" in ex.output.value
    ex.word.value = "cats"
    assert ex.calls == 2 and ex.last.by_model()["word-level"].words == ["cat", "dogs"]
    ex.k.value = 4
    assert len(ex.last.by_model()["word-level"].neighbours) == 4
    ex.word.value = ""
    assert "Cannot answer" in ex.output.value
    with pytest.raises(ValueError, match="k must be"):
        subword_explorer({"m": (VECS, INDEX)}, k=0)
