"""Chapter 2's next-word widget: the callback (plain function) and the ipywidgets wiring."""

from __future__ import annotations

import numpy as np
import pytest

from companion.counting import ModifiedKneserNey, NGramCounts
from companion.data import Vocab
from companion.neural_lm import NNLM, NNLMConfig
from companion.neural_lm.widget import NextWordComparison, next_word_widget

pytestmark = pytest.mark.filterwarnings("ignore:Kneser-Ney discounts")  # a toy corpus

TRAIN = [["the", "cat", "sat", "on", "the", "mat", "."], ["the", "dog", "sat", "on", "the", "log", "."],
         ["a", "cat", "saw", "a", "dog", "."]] * 3


@pytest.fixture(scope="module")
def parts():
    vocab = Vocab(TRAIN, specials=("</s>",))
    model = NNLM(NNLMConfig(vocab_size=len(vocab), n=3, m=4, h=5, direct=True), seed=0)
    kn = ModifiedKneserNey(NGramCounts(TRAIN, 3, vocab=vocab))
    return vocab, model, kn


def test_distributions_are_aligned_and_normalised(parts):
    vocab, model, kn = parts
    cmp = NextWordComparison(model, vocab, kn, weight=0.25)
    d = cmp.distributions("The cat")
    assert set(d) == {"NNLM", "n-gram", "mixture"}
    for p in d.values():
        assert p.shape == (len(vocab),) and np.isclose(p.sum(), 1.0) and (p >= 0).all()
    # the n-gram column is the chapter-1 model's own probability, word by word
    for w in ("sat", "saw", "</s>", "<unk>"):
        assert np.isclose(d["n-gram"][vocab.stoi[w]], kn.prob(w, ["<s>", "the", "cat"]))
    assert np.allclose(d["mixture"], 0.25 * d["NNLM"] + 0.75 * d["n-gram"])
    # the NNLM reads the last n-1 tokens, </s>-padded at the start; unknown words are <unk>
    assert np.allclose(cmp.neural("zebra"), model.next_word_distribution(vocab.encode(["</s>", "<unk>"])).numpy())
    assert np.allclose(cmp.neural([]), model.next_word_distribution(vocab.encode(["</s>", "</s>"])).numpy())


def test_table_ranks_and_sampling_is_seeded(parts):
    vocab, model, kn = parts
    cmp = NextWordComparison(model, vocab, kn)
    tab = cmp.table("the", k=3)
    assert list(tab.columns) == ["NNLM", "n-gram", "mixture"] and len(tab) == 3
    probs = [float(s.split()[-1]) for s in tab["n-gram"]]
    assert probs == sorted(probs, reverse=True)
    assert tab["n-gram"].iloc[0].split()[0] == kn.top_next(["<s>", "the"], 1)[0][0]
    only = NextWordComparison(model, vocab).table("a dog", k=2)
    assert list(only.columns) == ["NNLM"]
    a = cmp.continue_text("the cat", 5, seed=3)
    assert a.startswith("the cat ") and len(a.split()) == 7 and a == cmp.continue_text("the cat", 5, seed=3)


def test_bad_inputs_are_explained(parts):
    vocab, model, kn = parts
    with pytest.raises(TypeError, match="NNLM"):
        NextWordComparison("model", vocab)
    with pytest.raises(ValueError, match="weight"):
        NextWordComparison(model, vocab, kn, weight=1.5)
    other = Vocab([["x", "y"]], specials=("</s>",))
    with pytest.raises(ValueError, match="predicts"):
        NextWordComparison(model, other)
    small_kn = ModifiedKneserNey(NGramCounts([["the", "cat", "sat"], ["a", "cat"]] * 3, 2))
    with pytest.raises(ValueError, match="does not know"):
        NextWordComparison(model, vocab, small_kn)
    with pytest.raises(ValueError, match="k must"):
        NextWordComparison(model, vocab, kn).table("the", k=0)


def test_widget_updates_and_shows_errors(parts):
    vocab, model, kn = parts
    w = next_word_widget(NextWordComparison(model, vocab, kn), prompt="the", k=3)
    assert w.calls == 1 and "<table" in w.output.value and "NNLM continues" in w.output.value
    w.prompt.value = "a cat"
    w.k.value = 5
    w.seed.value = 2
    assert w.calls == 4 and w.output.value.count("<tr>") == 6  # header + 5 ranks
    w.comparison.weight = 0.5
    w.prompt.value = "the </s> cat"  # tokenised into punctuation, never an error
    assert "<table" in w.output.value
    with pytest.raises(TypeError, match="NextWordComparison"):
        next_word_widget(model)
