"""Rare words: which benchmark items a corpus barely saw, and how many a model can answer.

Similarity and analogy scores average over items whose words are mostly frequent. Models that
share information between words (fastText's subwords) differ from those that do not (skip-gram,
GloVe) mainly on the *rare* words, so the book also reports a rare-word slice: the items that
contain at least one word seen at most ``max_count`` times in the training corpus (unseen words
included). Coverage -- the share of items a model has vectors for -- goes next to every score,
because a model that skips the hard items looks better than it is.

Words are matched case-insensitively by default, like :func:`~companion.evaluate.word_similarity`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._vectors import IndexLike, row_words

__all__ = ["RareSlice", "item_words", "words_of", "rare_slice", "frequency_bands", "coverage", "fold_counts"]

KINDS = ("auto", "pairs", "questions")


def item_words(item: Sequence[Any], kind: str = "auto") -> tuple[str, ...]:
    """The words of one benchmark item: ``(w1, w2, score)`` -> 2 words, ``(section, a, b, c, d)`` -> 4.

    Raises:
        ValueError: for an item of another length, or a ``kind`` that does not match.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    n = len(item)
    if kind == "pairs" or (kind == "auto" and n == 3):
        if n != 3:
            raise ValueError(f"a similarity pair is (word1, word2, score); got {item!r}")
        return (str(item[0]), str(item[1]))
    if n != 5:
        raise ValueError(f"an analogy question is (section, a, b, c, d); got {item!r}")
    return tuple(str(w) for w in item[1:])


def words_of(*item_lists: Sequence[Sequence[Any]], kind: str = "auto") -> list[str]:
    """Every distinct word of some benchmarks' items, in first-seen order (e.g. to build
    out-of-vocabulary vectors for all of them: ``fasttext_result.with_oov(words_of(ws, sl))``)."""
    seen: dict[str, None] = {}
    for items in item_lists:
        for item in items:
            for w in item_words(item, kind):
                seen.setdefault(w, None)
    return list(seen)


def fold_counts(counts: Mapping[str, int], case_insensitive: bool = True) -> dict[str, int]:
    """``counts`` with case variants merged (summed) under their lower-cased form."""
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping word -> corpus count (e.g. a Counter), got {type(counts).__name__}")
    if not case_insensitive:
        return dict(counts)
    out: dict[str, int] = {}
    for w, c in counts.items():
        if isinstance(c, bool) or not isinstance(c, (int, float)) or c < 0 or c != int(c):
            raise ValueError(f"count of {w!r} is {c!r}; counts must be whole numbers >= 0")
        k = str(w).lower()
        out[k] = out.get(k, 0) + int(c)
    return out


@dataclass
class RareSlice:
    """The items of a benchmark that contain a rare word.

    Attributes:
        items: the selected items, in benchmark order (pass them to ``word_similarity``/``analogy``).
        n_total: items in the benchmark.
        max_count: a word is rare if its corpus count is ``<= max_count`` (0 = unseen).
        mode: ``"any"`` (at least one rare word) or ``"all"`` (every word rare).
        n_unseen: selected items with at least one word that never occurs in the corpus.
        rare_words: the distinct rare words involved, with their counts.
    """

    items: list = field(repr=False)
    n_total: int
    max_count: int
    mode: str
    n_unseen: int
    rare_words: dict[str, int] = field(repr=False)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def share(self) -> float:
        """Selected items / all items."""
        return self.n_items / self.n_total if self.n_total else float("nan")


def rare_slice(
    items: Sequence[Sequence[Any]],
    counts: Mapping[str, int],
    max_count: int = 50,
    *,
    mode: str = "any",
    kind: str = "auto",
    case_insensitive: bool = True,
) -> RareSlice:
    """Select the benchmark items that contain rare words.

    Args:
        items: similarity pairs ``(w1, w2, score)`` or analogy questions ``(section, a, b, c, d)``.
        counts: corpus counts, e.g. ``collections.Counter`` of the training tokens.
        max_count: a word seen at most this many times is rare (unseen words count 0).
        mode: ``"any"``: keep an item if any of its words is rare; ``"all"``: if all are.
        kind: ``"pairs"``, ``"questions"`` or ``"auto"`` (by tuple length).
        case_insensitive: merge case variants in ``counts`` and look words up lower-cased.

    Example:
        >>> s = rare_slice([("cat", "dog", 7.0), ("cat", "ocelot", 6.0)], {"cat": 90, "dog": 80, "ocelot": 2}, 10)
        >>> [it[1] for it in s.items], s.n_unseen
        (['ocelot'], 0)
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or len(items) == 0:
        raise ValueError("items must be a non-empty list of similarity pairs or analogy questions")
    if not isinstance(max_count, int) or isinstance(max_count, bool) or max_count < 0:
        raise ValueError(f"max_count must be an int >= 0 (0 selects only unseen words), got {max_count!r}")
    if mode not in ("any", "all"):
        raise ValueError(f"mode must be 'any' or 'all', got {mode!r}")
    folded = fold_counts(counts, case_insensitive)
    key = (lambda w: w.lower()) if case_insensitive else (lambda w: w)
    chosen: list = []
    rare_words: dict[str, int] = {}
    n_unseen = 0
    for item in items:
        words = item_words(item, kind)
        c = [folded.get(key(w), 0) for w in words]
        rare = [x <= max_count for x in c]
        if (any(rare) if mode == "any" else all(rare)):
            chosen.append(item)
            n_unseen += any(x == 0 for x in c)
            for w, x, r in zip(words, c, rare):
                if r:
                    rare_words[key(w)] = x
    return RareSlice(chosen, len(items), max_count, mode, n_unseen, rare_words)


def frequency_bands(
    items: Sequence[Sequence[Any]],
    counts: Mapping[str, int],
    edges: Sequence[float] = (0, 10, 100, 1000, math.inf),
    *,
    kind: str = "auto",
    case_insensitive: bool = True,
) -> dict[str, list]:
    """Split items by the corpus count of their *rarest* word: ``{"0-10": [...], "11-100": [...], ...}``.

    Band ``k`` holds items whose rarest word has ``edges[k] < count <= edges[k+1]`` (the first
    band also takes count ``edges[0]``). Items whose rarest word lies outside all bands are dropped.
    """
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must be at least two increasing numbers, got {list(edges)!r}")
    folded = fold_counts(counts, case_insensitive)
    key = (lambda w: w.lower()) if case_insensitive else (lambda w: w)

    def label(a: float, b: float, first: bool) -> str:
        lo = int(a) if first else int(a) + 1
        return f"{lo}+" if math.isinf(b) else f"{lo}-{int(b)}"

    names = [label(a, b, k == 0) for k, (a, b) in enumerate(zip(edges, edges[1:]))]
    out: dict[str, list] = {n: [] for n in names}
    for item in items:
        m = min(folded.get(key(w), 0) for w in item_words(item, kind))
        for k, (a, b) in enumerate(zip(edges, edges[1:])):
            if (a < m <= b) or (k == 0 and m == a):
                out[names[k]].append(item)
                break
    return out


def coverage(
    items: Sequence[Any],
    index: IndexLike,
    *,
    kind: str = "auto",
    case_insensitive: bool = True,
) -> float:
    """Share of items (pairs, questions, or plain words) all of whose words are in ``index``.

    ``index`` is a ``Vocab``, a dict word -> row, or anything ``companion.evaluate`` accepts.
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or len(items) == 0:
        raise ValueError("items must be a non-empty list of words, pairs or questions")
    stoi = index if isinstance(index, Mapping) else getattr(index, "stoi", None)
    if stoi is None:
        words = row_words(index, len(getattr(index, "itos", getattr(index, "index_to_key", []))))
        stoi = {w: k for k, w in enumerate(words) if w is not None}
    fold = (lambda w: w.upper()) if case_insensitive else (lambda w: w)
    known = {fold(str(w)) for w in stoi}
    hit = 0
    for item in items:
        words = (item,) if isinstance(item, str) else item_words(item, kind)
        hit += all(fold(w) in known for w in words)
    return hit / len(items)
