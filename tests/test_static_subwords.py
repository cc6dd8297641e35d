"""fastText's subwords: n-gram extraction and FNV-1a hashing, exactly as the C++ code."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.static.subwords import (
    SubwordTable,
    bucket_collisions,
    build_subword_table,
    char_ngrams,
    fnv1a_32,
    fnv1a_32_many,
    ngram_buckets,
    subwords,
)


def test_the_seeds_example_where_trigrams():
    assert char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert subwords("where", 3, 3) == ["<where>", "<wh", "whe", "her", "ere", "re>"]


def test_default_range_3_to_6_in_fasttexts_order():
    # by start position, then by length; "<where>" (7 characters) is longer than maxn
    assert char_ngrams("where") == [
        "<wh", "<whe", "<wher", "<where", "whe", "wher", "where", "where>",
        "her", "here", "here>", "ere", "ere>", "re>",
    ]
    assert char_ngrams("on", 3, 6) == ["<on", "<on>", "on>"]  # a short word's whole form is an n-gram


def test_ngrams_count_characters_not_bytes():
    # "é" is two UTF-8 bytes but one character
    assert char_ngrams("né", 3, 4) == ["<né", "<né>", "né>"]
    assert char_ngrams("東京", 2, 2) == ["<東", "東京", "京>"]


def test_lone_boundary_markers_are_skipped_for_minn_1():
    assert char_ngrams("ab", 1, 1) == ["a", "b"]
    assert "<" not in char_ngrams("ab", 1, 2) and ">" not in char_ngrams("ab", 1, 2)


def test_maxn_zero_means_no_ngrams():
    assert char_ngrams("where", 0, 0) == []


@pytest.mark.parametrize("bad", [dict(minn=4, maxn=3), dict(minn=-1, maxn=3), dict(minn=3, maxn=2.5)])
def test_bad_ranges_rejected(bad):
    with pytest.raises(ValueError, match="minn|maxn"):
        char_ngrams("where", **bad)


def test_bad_words_rejected():
    with pytest.raises(TypeError, match="str"):
        char_ngrams(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        char_ngrams("")


def test_fnv1a_standard_vectors_on_ascii():
    # published FNV-1a 32-bit test vectors
    assert fnv1a_32("") == 0x811C9DC5
    assert fnv1a_32("a") == 0xE40C292C
    assert fnv1a_32("foobar") == 0xBF9CF968


def _textbook_fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) % 2**32
    return h


def _signed_char_fnv1a(data: bytes) -> int:
    # uint32_t(int8_t(c)): a byte >= 128 is the negative number b - 256, taken modulo 2^32
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ ((b - 256 if b >= 128 else b) % 2**32)) * 0x01000193) % 2**32
    return h


def test_fnv1a_signed_char_quirk_on_non_ascii():
    for w in ["naïve", "東京", "😀", "<über>"]:
        data = w.encode("utf-8")
        assert fnv1a_32(w) == _signed_char_fnv1a(data)
        assert fnv1a_32(w) != _textbook_fnv1a(data)  # the quirk matters for non-ASCII bytes
        assert fnv1a_32(data) == fnv1a_32(w)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=20))
def test_vectorised_hash_equals_scalar(strings):
    got = fnv1a_32_many(strings).tolist()
    assert got == [_signed_char_fnv1a(s.encode("utf-8")) for s in strings]


def test_ngram_buckets_are_hash_mod_bucket():
    grams = char_ngrams("where")
    assert ngram_buckets(grams, 1000).tolist() == [fnv1a_32(g) % 1000 for g in grams]
    with pytest.raises(ValueError, match="bucket"):
        ngram_buckets(grams, 0)


def test_subword_table_layout():
    words = ["where", "a", "</s>", "naïve"]
    t = build_subword_table(words, bucket=97)
    assert isinstance(t, SubwordTable) and t.n_rows == 4 + 97
    for i, w in enumerate(words):
        rows = t.rows_of(i).tolist()
        assert rows[0] == i  # the word's own row comes first
        expected = [] if w == "</s>" else [4 + fnv1a_32(g) % 97 for g in char_ngrams(w)]
        assert rows[1:] == expected
    assert int(t.ids.min()) >= 0 and int(t.ids.max()) < t.n_rows
    with pytest.raises(IndexError):
        t.rows_of(4)


def test_gather_matches_a_loop():
    words = ["cat", "cats", "dog", "x", "catalogue"]
    t = build_subword_table(words, bucket=50, minn=2, maxn=4)
    query = torch.tensor([4, 0, 0, 3])
    rows, owner = t.gather(query)
    expected = [(r, k) for k, w in enumerate(query.tolist()) for r in t.rows_of(w).tolist()]
    assert list(zip(rows.tolist(), owner.tolist())) == expected


def test_without_word_rows_and_bad_vocab():
    t = build_subword_table(["abc"], bucket=10, with_word=False)
    assert t.rows_of(0).tolist() == [1 + fnv1a_32(g) % 10 for g in char_ngrams("abc")]
    with pytest.raises(ValueError, match="non-empty"):
        build_subword_table([], bucket=10)
    with pytest.raises(ValueError, match="non-empty strings"):
        build_subword_table(["ok", ""], bucket=10)
    with pytest.raises(ValueError, match="bucket"):
        build_subword_table(["ok"], bucket=-3)


def test_bucket_collisions():
    words = [f"w{k}x{k * 7}" for k in range(300)]
    few = bucket_collisions(words, 50)
    many = bucket_collisions(words, 10_000_000)
    assert few["ngrams"] == many["ngrams"] == len({g for w in words for g in char_ngrams(w)})
    assert few["buckets_used"] <= 50 and few["shared"] > 0.9
    assert many["shared"] < 0.01 and many["buckets_used"] > 0.99 * many["ngrams"]
    assert abs(bucket_collisions(words, 2000)["shared"] - bucket_collisions(words, 2000)["expected_shared"]) < 0.1
    with pytest.raises(ValueError, match="no n-grams"):
        bucket_collisions([], 10)
