"""n-gram counting: the vectorised counts equal plain-Python counts; conventions; bad input."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.counting import LMVocabulary, NGramCounts, unseen_ngram_share
from companion.counting.ngram import encode_sentences, unique_inverse

WORDS = ["a", "b", "c", "d", "e"]
corpora = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=8), min_size=1, max_size=12)


def reference_counts(sents, order):
    """Every k-gram ending at a predicted token, context truncated at the sentence's single <s>."""
    out = [Counter() for _ in range(order)]
    for s in sents:
        toks = ["<s>"] + list(s) + ["</s>"]
        for i in range(1, len(toks)):
            for k in range(1, min(order, i + 1) + 1):
                out[k - 1][tuple(toks[i - k + 1: i + 1])] += 1
    return out


@settings(max_examples=40, deadline=None)
@given(corpora, st.integers(1, 4))
def test_counts_equal_a_plain_python_count(sents, order):
    c = NGramCounts(sents, order)
    ref = reference_counts(sents, order)
    for k in range(1, order + 1):
        # every n-gram seen, with its count; and nothing else (unigram table also lists unseen symbols)
        for gram, n in ref[k - 1].items():
            assert c.count(list(gram)) == n, gram
        table = c.table(k)
        assert int(table.counts.sum()) == sum(ref[k - 1].values())
        if k > 1:
            assert len(table) == len(ref[k - 1])
            assert np.all(np.diff(table.keys) > 0)  # sorted, distinct


@settings(max_examples=30, deadline=None)
@given(corpora, corpora)
def test_lookup_finds_every_test_ngram(train, test):
    c = NGramCounts(train, 3)
    text = c.encode(test)
    h = c.lookup(text)
    ref = reference_counts(train, 3)
    toks = [t for s in test for t in ["<s>"] + s + ["</s>"]]
    pos = [p for s in test for p in range(len(s) + 2)]
    for i, p in enumerate(pos):
        for k in (2, 3):
            if p < k - 1:
                assert h[k - 1][i] == -1
                continue
            gram = tuple(toks[i - k + 1: i + 1])
            assert (h[k - 1][i] >= 0) == (gram in ref[k - 1]), gram


def test_conventions_one_bos_eos_predicted():
    c = NGramCounts([["the", "cat"], ["the"]], order=3)
    assert c.n_tokens == 2 + 1 + 2  # words plus one </s> each
    assert c.n_sentences == 2
    assert c.count(["<s>", "the"]) == 2
    assert c.count(["<s>", "<s>", "the"]) == 0  # one <s> only, never padded twice
    assert c.count(["<s>", "the", "cat"]) == 1
    assert c.count(["the", "</s>"]) == 1
    assert c.count(["<s>"]) == 0  # <s> is never predicted
    assert c.vocab.itos[:3] == ["<s>", "</s>", "<unk>"]
    assert c.vocab.itos[3:] == ["cat", "the"]  # code-point order
    assert len(c.vocab) == 5 and c.vocab.n_predictable == 4


def test_unknown_symbol_in_training_is_a_word():
    c = NGramCounts([["<unk>", "a"], ["a", "<unk>"]], order=2)
    assert c.count(["<unk>"]) == 2
    assert c.vocab.itos == ["<s>", "</s>", "<unk>", "a"]
    # a test word never seen reads as <unk>
    assert c.encode([["zzz"]]).ids.tolist() == [0, 2, 1]
    assert c.encode([["zzz"]]).n_oov == 1


def test_given_vocab_order_and_unknown_training_words():
    c = NGramCounts([["b", "a"]], order=2, vocab=["b", "a", "z"])
    assert c.vocab.itos == ["<s>", "</s>", "<unk>", "b", "a", "z"]
    assert c.count(["z"]) == 0
    with pytest.raises(ValueError, match="not in the given vocabulary"):
        NGramCounts([["b", "q"]], order=2, vocab=["b"])


def test_truncate_shares_tables():
    c = NGramCounts([["a", "b", "c"]], order=4)
    t = c.truncate(2)
    assert t.order == 2 and t.tables[1] is c.tables[1]
    with pytest.raises(ValueError, match="count again"):
        t.truncate(3)


def test_memory_and_distinct():
    c = NGramCounts([["a", "b", "a", "b"]], order=2)
    assert c.n_distinct() == {1: 5, 2: 4}  # <s> a, a b, b a, b </s>
    assert c.memory_bytes()[2] == 4 * 16
    assert "NGramCounts(order=2" in repr(c)


def test_unique_inverse_matches_numpy():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 50, 1000)
    u, inv, cnt = unique_inverse(keys)
    u2, inv2, cnt2 = np.unique(keys, return_inverse=True, return_counts=True)
    assert np.array_equal(u, u2) and np.array_equal(inv, inv2) and np.array_equal(cnt, cnt2)
    assert [len(x) for x in unique_inverse(np.zeros(0, np.int64))] == [0, 0, 0]


def test_unseen_share_by_hand():
    train = [["a", "b", "c"]]
    test = [["a", "b", "d"]]  # d is unknown
    share = unseen_ngram_share(train, test, orders=(1, 2, 3))
    # predicted: a b d </s> -> unigram unseen: d (as <unk>, never seen) -> 1/4
    assert share[1] == pytest.approx(1 / 4)
    # bigrams: <s> a (seen), a b (seen), b <unk>, <unk> </s> -> 2/4
    assert share[2] == pytest.approx(2 / 4)
    # trigrams (from the 2nd word on): <s> a b (seen), a b <unk>, b <unk> </s> -> 2/3
    assert share[3] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="stop at order"):
        unseen_ngram_share(NGramCounts(train, 2), test, orders=(3,))


@pytest.mark.parametrize("bad, err, match", [
    ([], ValueError, "empty"),
    ("the cat sat", TypeError, "one string"),
    (["the cat", "sat"], TypeError, "is a string"),
    ([["a", 3]], TypeError, "str tokens"),
    ([["a", "<s>"]], ValueError, "without <s>"),
    ([["</s>"]], ValueError, "without <s>"),
    (5, TypeError, "list of sentences"),
])
def test_bad_corpus(bad, err, match):
    with pytest.raises(err, match=match):
        NGramCounts(bad, 2)


@pytest.mark.parametrize("order", [0, -1, 1.5, True, "3"])
def test_bad_order(order):
    with pytest.raises(ValueError, match="order must be an int >= 1"):
        NGramCounts([["a"]], order)


def test_vocabulary_checks():
    with pytest.raises(ValueError, match="unk must be"):
        LMVocabulary(["a"], unk="<s>")
    with pytest.raises(TypeError, match="must be str"):
        LMVocabulary(["a", 1])
    v = LMVocabulary(["b", "a", "b", "<unk>"])
    assert v.itos == ["<s>", "</s>", "<unk>", "b", "a"]
    assert v.decode([3, 4]) == ["b", "a"]
    with pytest.raises(IndexError):
        v.decode([9])
    assert v.id("nope") == 2


def test_encoded_text_of_other_vocab_is_rejected():
    a = NGramCounts([["a"]], 2)
    b = NGramCounts([["b"]], 2)
    with pytest.raises(ValueError, match="another vocabulary"):
        b.encode(a.encode([["a"]]))


def test_encode_layout():
    v = LMVocabulary(["x", "y"])
    t = encode_sentences([["x"], [], ["y", "x"]], v)
    assert t.ids.tolist() == [0, 3, 1, 0, 1, 0, 4, 3, 1]
    assert t.pos.tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3]
    assert t.n_tokens == 6 and t.predicted.tolist() == [1, 2, 4, 6, 7, 8]


@pytest.mark.parametrize("name", ["ngram", "mle", "addk", "ppmi", "representations"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"companion.counting.{name}")
    assert doctest.testmod(module).failed == 0
