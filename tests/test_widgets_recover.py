"""Issue 10: a widget that showed an error must answer again after the next change of a control,
without re-running its cell (chapter 3's explorer did not seem to). One test per chapter widget;
chapter 3's own cases are in test_word2vec_widget.py."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.filterwarnings("ignore:Kneser-Ney discounts")  # toy corpora

TRAIN = [["the", "cat", "sat", "on", "the", "mat", "."], ["the", "dog", "sat", "on", "the", "log", "."],
         ["a", "cat", "saw", "a", "dog", "."]] * 3


def _fail_once(monkeypatch, module, name):
    """Make ``module.name`` raise a ValueError on its next call only."""
    real = getattr(module, name)
    state = {"failed": False}

    def flaky(*args, **kwargs):
        if not state["failed"]:
            state["failed"] = True
            raise ValueError("a planted failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, flaky)


def test_chapter1_generation_widget_recovers(monkeypatch):
    from companion.counting import ModelZoo, NGramCounts, generation_widget
    from companion.counting import widget as mod

    w = generation_widget(ModelZoo(NGramCounts(TRAIN, 3)), prompt="the", n=2, seed=0, n_samples=2)
    _fail_once(monkeypatch, mod, "generate_for")
    w.seed.value = 1
    assert "Cannot generate" in w.output.value and "planted" in w.output.value
    w.order.value = 3  # the next change answers again
    assert w.output.value.startswith("<ol>") and w.calls == 3


def test_chapter2_next_word_widget_recovers(monkeypatch):
    from companion.counting import ModifiedKneserNey, NGramCounts
    from companion.data import Vocab
    from companion.neural_lm import NNLM, NNLMConfig
    from companion.neural_lm.widget import NextWordComparison, next_word_widget

    vocab = Vocab(TRAIN, specials=("</s>",))
    model = NNLM(NNLMConfig(vocab_size=len(vocab), n=3, m=4, h=5, direct=True), seed=0)
    comparison = NextWordComparison(model, vocab, ModifiedKneserNey(NGramCounts(TRAIN, 3, vocab=vocab)))
    w = next_word_widget(comparison, prompt="the", k=3)
    _fail_once(monkeypatch, comparison, "table")
    w.k.value = 4
    assert "Cannot predict" in w.output.value and "planted" in w.output.value
    w.k.value = 5
    assert "<table" in w.output.value and w.output.value.count("<tr>") == 6


def test_chapter4_subword_explorer_recovers():
    from companion.static.widget import subword_explorer

    words = ["cat", "cats", "dog", "dogs"]
    vecs = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    ex = subword_explorer({"word-level": (vecs, {w: i for i, w in enumerate(words)})}, word="cat", k=2)
    ex.word.value = "two words"
    assert "Cannot answer" in ex.output.value
    ex.word.value = "dog"
    assert ex.last.error is None and ex.last.by_model()["word-level"].words[0] == "dogs"
    ex.word.value = "whale"  # unknown to a word-level model: said in the table, not an error
    ex.k.value = 3
    assert "not in the vocabulary" in ex.output.value and ex.calls == 5
