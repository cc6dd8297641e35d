"""Vocab: ordering, filtering, encode/decode, errors (with hypothesis for the properties)."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.data import UnknownTokenError, Vocab

words = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
corpora = st.lists(words, min_size=1, max_size=60)
specials_st = st.lists(st.sampled_from(["<s>", "</s>", "<pad>", "<mask>"]), unique=True, max_size=3)


@settings(max_examples=60, deadline=None)
@given(corpora, specials_st)
def test_round_trip_on_known_words(tokens, specials):
    v = Vocab(tokens, specials=specials)
    assert v.decode(v.encode(tokens)) == tokens
    assert v.itos[: 1 + len(specials)] == ["<unk>", *specials]  # specials first, unk id 0
    assert v.unk_id == 0 and len(v) == len(set(tokens)) + 1 + len(specials)
    assert all(v.stoi[w] == i for i, w in enumerate(v.itos))


@settings(max_examples=60, deadline=None)
@given(corpora, st.integers(1, 4), st.one_of(st.none(), st.integers(1, 8)))
def test_frequency_order_with_deterministic_ties(tokens, min_count, max_size):
    v = Vocab(tokens, min_count=min_count, max_size=max_size)
    counts = Counter(tokens)
    regular = v.itos[1:]
    # most frequent first; equal counts in code-point order
    assert [(-counts[w], w) for w in regular] == sorted((-counts[w], w) for w in regular)
    assert all(counts[w] >= min_count for w in regular)
    if max_size is not None:
        assert len(v) <= max_size
    # nothing more frequent was dropped in favour of a kept word
    dropped = [w for w in counts if w not in v and counts[w] >= min_count]
    if dropped and regular:
        assert max(counts[w] for w in dropped) <= counts[regular[-1]]
    # the same counts in another order give the same ids
    assert Vocab(list(reversed(tokens)), min_count=min_count, max_size=max_size).itos == v.itos


def test_example_and_unknown_words():
    v = Vocab("the cat the dog the end cat".split(), specials=("</s>",))
    assert v.itos == ["<unk>", "</s>", "the", "cat", "dog", "end"]
    assert v.encode(["the", "cow", "</s>"]) == [2, 0, 1]
    assert v["cow"] == 0 and "cat" in v and "cow" not in v
    assert v.decode(torch.tensor([2, 3])) == ["the", "cat"]


def test_input_forms_agree():
    sents = [["a", "b"], ["b", "c", "b"]]
    flat = [w for s in sents for w in s]
    assert Vocab(sents).itos == Vocab(flat).itos == Vocab(Counter(flat)).itos == Vocab(iter(flat)).itos


def test_no_unk_raises_on_unknown_word():
    v = Vocab(["a", "b"], unk=None)
    assert v.unk_id is None and v.encode(["b", "a"]) == [1, 0]
    with pytest.raises(UnknownTokenError, match="'zebra' is not in the vocabulary") as e:
        v.encode(["a", "zebra"])
    assert isinstance(e.value, KeyError)


def test_empty_corpus_is_a_clear_error():
    for empty in ([], [[], []], Counter()):
        with pytest.raises(ValueError, match="empty corpus"):
            Vocab(empty)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"min_count": 0}, ValueError, "min_count"),
    ({"max_size": 1, "specials": ("<s>",)}, ValueError, "max_size"),
    ({"specials": "<s>"}, TypeError, "not the string"),
    ({"specials": ("<unk>",)}, ValueError, "distinct"),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Vocab(["a", "b"], **kwargs)


def test_bad_inputs():
    with pytest.raises(TypeError, match="single string"):
        Vocab("a b c")
    with pytest.raises(TypeError, match="all tokens"):
        Vocab(["a", ["b"]])
    v = Vocab(["a"])
    with pytest.raises(TypeError, match="not the string"):
        v.encode("a")
    with pytest.raises(IndexError, match="not a valid id"):
        v.decode([5])


def test_counts_id_counts_and_round_trip_through_dict():
    tokens = "a a a b b c d <unk>".split()
    v = Vocab(tokens, min_count=2, specials=("</s>",))
    assert v.counts == Counter(tokens)
    assert v.itos == ["<unk>", "</s>", "a", "b"]
    assert v.id_counts() == [3, 0, 3, 2]  # unk: the literal <unk> + dropped c and d
    assert Vocab.from_dict(v.to_dict()).itos == v.itos
