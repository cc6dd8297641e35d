"""companion.evaluate.rare: the rare-word slice, frequency bands, coverage."""

from __future__ import annotations

from collections import Counter

import pytest

from companion.evaluate.rare import coverage, fold_counts, frequency_bands, item_words, rare_slice

PAIRS = [("cat", "dog", 7.0), ("cat", "ocelot", 6.0), ("Tiger", "lynx", 8.0), ("car", "zyzzyva", 1.0)]
COUNTS = Counter({"cat": 500, "dog": 300, "ocelot": 3, "tiger": 40, "Tiger": 5, "lynx": 12, "car": 900})


def test_item_words():
    assert item_words(("a", "b", 1.0)) == ("a", "b")
    assert item_words(("capital", "athens", "greece", "oslo", "norway")) == ("athens", "greece", "oslo", "norway")
    with pytest.raises(ValueError, match="pair"):
        item_words(("a", "b", "c", "d"), kind="pairs")
    with pytest.raises(ValueError, match="question"):
        item_words(("a", "b"))


def test_fold_counts_merges_case_variants():
    assert fold_counts(COUNTS)["tiger"] == 45
    assert fold_counts(COUNTS, case_insensitive=False)["Tiger"] == 5
    with pytest.raises(ValueError, match="whole numbers"):
        fold_counts({"a": 1.5})
    with pytest.raises(TypeError, match="mapping"):
        fold_counts([("a", 1)])  # type: ignore[arg-type]


def test_rare_slice_any_and_all():
    s = rare_slice(PAIRS, COUNTS, max_count=15)
    assert [p[1] for p in s.items] == ["ocelot", "lynx", "zyzzyva"]
    assert s.n_total == 4 and s.share == 0.75 and s.n_unseen == 1
    assert s.rare_words == {"ocelot": 3, "lynx": 12, "zyzzyva": 0}
    strict = rare_slice(PAIRS, COUNTS, max_count=50, mode="all")
    assert [p[1] for p in strict.items] == ["lynx"]  # tiger (45) and lynx (12) are both <= 50
    assert rare_slice(PAIRS, COUNTS, max_count=0).items == [("car", "zyzzyva", 1.0)]


def test_rare_slice_on_questions():
    qs = [("s", "a", "b", "c", "d"), ("s", "a", "b", "c", "e")]
    s = rare_slice(qs, {"a": 10, "b": 10, "c": 10, "d": 10}, max_count=5)
    assert s.items == [qs[1]] and s.n_unseen == 1


def test_rare_slice_bad_inputs():
    with pytest.raises(ValueError, match="non-empty"):
        rare_slice([], COUNTS)
    with pytest.raises(ValueError, match="max_count"):
        rare_slice(PAIRS, COUNTS, max_count=-1)
    with pytest.raises(ValueError, match="mode"):
        rare_slice(PAIRS, COUNTS, mode="some")


def test_frequency_bands_by_the_rarest_word():
    bands = frequency_bands(PAIRS, COUNTS, edges=(0, 10, 100, float("inf")))
    assert list(bands) == ["0-10", "11-100", "101+"]
    assert [p[1] for p in bands["0-10"]] == ["ocelot", "zyzzyva"]
    assert [p[1] for p in bands["11-100"]] == ["lynx"]
    assert [p[1] for p in bands["101+"]] == ["dog"]
    with pytest.raises(ValueError, match="increasing"):
        frequency_bands(PAIRS, COUNTS, edges=(10, 5))


def test_coverage_of_pairs_and_words():
    index = {"cat": 0, "dog": 1, "TIGER": 2, "lynx": 3}
    assert coverage(PAIRS, index) == 0.5
    assert coverage(PAIRS, index, case_insensitive=False) == 0.25
    assert coverage(["cat", "ocelot"], index) == 0.5
    with pytest.raises(ValueError, match="non-empty"):
        coverage([], index)


def test_words_of_benchmarks():
    from companion.evaluate.rare import words_of

    qs = [("s", "athens", "greece", "cat", "dog")]
    assert words_of(PAIRS, qs) == ["cat", "dog", "ocelot", "Tiger", "lynx", "car", "zyzzyva", "athens", "greece"]
