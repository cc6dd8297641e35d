"""Byte-pair encoding as Sennrich, Haddow & Birch (2016) learn it for subword NMT.

Start from characters; repeatedly merge the most frequent adjacent pair of symbols in the corpus
into a new symbol; the list of merges *is* the model. Words are whitespace-separated and the end of
a word is marked by appending ``</w>`` to its last character (as the authors' ``subword-nmt`` code
and HF ``tokenizers``' ``end_of_word_suffix`` do), so ``low`` starts as ``l o w</w>`` and the
suffix ``-est</w>`` can never be confused with ``est`` inside a word.

Training (:func:`learn_merges`) is the **incremental pair-count algorithm**: pair counts are
computed once; a merge then revisits only the words that contain the merged pair (an index from
pair to words) and updates the counts of the pairs in those words, and the next best pair comes
from a heap with lazy deletion (an entry is checked against the live count when it is popped).
``incremental=False`` recounts every pair of every word after each merge (the textbook loop of the
paper's Figure 1): same merges, much slower.

**Tie-breaking** (deterministic, documented because ties are common among rare pairs): among pairs
of equal count the winner is the pair with the smaller ``(id(left), id(right))``, where symbols
are numbered like HF ``tokenizers`` numbers them: the characters in code-point order, then the
initial symbols that carry a marker (``w</w>``, ``##o``) in string order, then merged symbols in
the order they were learned. HF uses the same rule but numbers the marked symbols in hash-map
order, which changes from run to run; see ``tests/test_tokenizers_bpe.py`` for the measured
agreement.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from ...checks import check_int, id_list

END_OF_WORD = "</w>"
UNK = "<unk>"

Pair = tuple[str, str]


# --- learning -----------------------------------------------------------------------------------

@dataclass
class LearnedMerges:
    """What :func:`learn_merges` returns.

    Attributes:
        merges: the learned pairs, in order (rank 0 first).
        symbols: every symbol, numbered: initial symbols first, then each new merged symbol.
        counts: the count of each merge when it was chosen (non-increasing).
        words: the final segmentation of every training word, ``{word symbols: segmentation}``.
    """

    merges: list[Pair]
    symbols: list[str]
    counts: list[int]
    words: dict[tuple[str, ...], tuple[str, ...]] = field(repr=False)


def _concat(a: str, b: str) -> str:
    return a + b


def _initial_ids(word_counts: Mapping[tuple[str, ...], int],
                 alphabet: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    """Number the initial symbols like HF tokenizers: single characters by code point, then the
    rest (characters carrying a marker) in string order."""
    initial = {s for w in word_counts for s in w} | set(alphabet)
    symbols = sorted(s for s in initial if len(s) == 1) + sorted(s for s in initial if len(s) != 1)
    return symbols, {s: i for i, s in enumerate(symbols)}


def _check_word_counts(word_counts: Mapping[tuple[str, ...], int]) -> None:
    for w, c in word_counts.items():
        if not isinstance(w, tuple) or not w or not all(isinstance(s, str) and s for s in w):
            raise ValueError(f"word_counts keys must be non-empty tuples of non-empty symbol strings, "
                             f"got {w!r}")
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise ValueError(f"the count of {w!r} must be a positive int, got {c!r}")


def _merge_word(word: Sequence[int], a: int, b: int, new: int) -> list[int]:
    """Replace every non-overlapping ``a b`` (left to right) by ``new``."""
    out, i, n = [], 0, len(word)
    while i < n:
        if i < n - 1 and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def learn_merges(word_counts: Mapping[tuple[str, ...], int], *, vocab_size: int | None = None,
                 num_merges: int | None = None, min_frequency: int = 2,
                 join: Callable[[str, str], str] = _concat, alphabet: Iterable[str] = (),
                 incremental: bool = True) -> LearnedMerges:
    """Learn BPE merges from a table ``{initial symbols of a word: count}``.

    Args:
        word_counts: e.g. ``{("l", "o", "w</w>"): 5, ("l", "o", "w", "e", "r</w>"): 2}``.
        vocab_size: stop when this many distinct symbols exist (the initial ones included; a
            merge whose result already exists adds none). HF's ``vocab_size`` means the same.
        num_merges: or stop after this many merges (give one of the two, or both).
        min_frequency: stop when the best pair occurs fewer times.
        join: how two symbols form the merged one (WordPiece's ``##`` prefix needs more than
            concatenation).
        alphabet: symbols to put in the initial vocabulary even if no word starts with them (HF
            keeps every bare character, also one seen only as ``a</w>``).
        incremental: the incremental algorithm (default) or a full recount after every merge.
    """
    _check_word_counts(word_counts)
    if vocab_size is None and num_merges is None:
        raise ValueError("give vocab_size= or num_merges= (when to stop merging)")
    for name, v in (("vocab_size", vocab_size), ("num_merges", num_merges), ("min_frequency", min_frequency)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"{name} must be a non-negative int, got {v!r}")
    symbols, ids = _initial_ids(word_counts, alphabet)
    keys = list(word_counts)
    words = [[ids[s] for s in w] for w in keys]
    freqs = [word_counts[w] for w in keys]
    step = _incremental if incremental else _naive
    merges, counts = step(words, freqs, symbols, ids, vocab_size, num_merges, max(min_frequency, 1), join)
    final = {k: tuple(symbols[i] for i in w) for k, w in zip(keys, words)}
    return LearnedMerges(merges, symbols, counts, final)


def _done(symbols: list[str], merges: list, vocab_size: int | None, num_merges: int | None) -> bool:
    return (vocab_size is not None and len(symbols) >= vocab_size) or (
        num_merges is not None and len(merges) >= num_merges)


def _new_symbol(a: int, b: int, symbols: list[str], ids: dict[str, int], join) -> int:
    s = join(symbols[a], symbols[b])
    if s not in ids:
        ids[s] = len(symbols)
        symbols.append(s)
    return ids[s]


def _incremental(words, freqs, symbols, ids, vocab_size, num_merges, min_frequency, join):
    pair_counts: dict[tuple[int, int], int] = {}  # a plain dict: faster than a Counter here
    where: dict[tuple[int, int], set[int]] = {}  # pair -> indices of words that (may) contain it
    for wi, (w, f) in enumerate(zip(words, freqs)):
        for p in pairwise(w):
            pair_counts[p] = pair_counts.get(p, 0) + f
            where.setdefault(p, set()).add(wi)
    heap = [(-c, a, b) for (a, b), c in pair_counts.items()]
    heapq.heapify(heap)
    merges, counts = [], []
    while heap and not _done(symbols, merges, vocab_size, num_merges):
        neg, a, b = heapq.heappop(heap)
        live = pair_counts.get((a, b), 0)
        if live != -neg:  # stale entry: the pair was touched since it was pushed
            if live > 0:
                heapq.heappush(heap, (-live, a, b))
            continue
        if live < min_frequency:
            break
        new = _new_symbol(a, b, symbols, ids, join)
        merges.append((symbols[a], symbols[b]))
        counts.append(live)
        grown: set[tuple[int, int]] = set()  # pairs with the new symbol: the only ones that grow
        for wi in where.pop((a, b), ()):
            w = words[wi]
            merged = _merge_word(w, a, b, new)
            if len(merged) == len(w):
                continue  # the index is a superset: the word lost the pair to an earlier merge
            f = freqs[wi]
            for p in pairwise(w):
                pair_counts[p] -= f
            for p in pairwise(merged):
                pair_counts[p] = pair_counts.get(p, 0) + f
                if p[0] == new or p[1] == new:
                    grown.add(p)
                    where.setdefault(p, set()).add(wi)
            words[wi] = merged
        for p in grown:  # a pair that shrank keeps its old heap entry and is fixed when popped
            heapq.heappush(heap, (-pair_counts[p], *p))
    return merges, counts


def _naive(words, freqs, symbols, ids, vocab_size, num_merges, min_frequency, join):
    merges, counts = [], []
    while not _done(symbols, merges, vocab_size, num_merges):
        pair_counts: Counter[tuple[int, int]] = Counter()
        for w, f in zip(words, freqs):  # recount everything, every time
            for p in pairwise(w):
                pair_counts[p] += f
        if not pair_counts:
            break
        (a, b), c = min(pair_counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if c < min_frequency:
            break
        new = _new_symbol(a, b, symbols, ids, join)
        merges.append((symbols[a], symbols[b]))
        counts.append(c)
        for i, w in enumerate(words):
            words[i] = _merge_word(w, a, b, new)
    return merges, counts


# --- applying merges ----------------------------------------------------------------------------

def apply_merges(symbols: Sequence[str], ranks: Mapping[Pair, int]) -> list[str]:
    """Segment one word: repeatedly merge the adjacent pair of lowest rank (all its occurrences,
    left to right) until no pair has a rank. Equal to applying the merges in training order."""
    word = list(symbols)
    while len(word) > 1:
        best = min(pairwise(word), key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        a, b = best
        out, i = [], 0
        while i < len(word):
            if i < len(word) - 1 and word[i] == a and word[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(word[i])
                i += 1
        word = out
    return word


@dataclass(frozen=True)
class MergeStep:
    """One step of :func:`merge_steps`: the merge applied (``None`` for the start), its rank, and
    the segmentation after it."""

    pair: Pair | None
    rank: int | None
    pieces: tuple[str, ...]


def merge_steps(symbols: Sequence[str], ranks: Mapping[Pair, int]) -> list[MergeStep]:
    """The sequence of segmentations :func:`apply_merges` goes through (the widget steps through it)."""
    word = list(symbols)
    steps = [MergeStep(None, None, tuple(word))]
    while len(word) > 1:
        best = min(pairwise(word), key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        word = _merge_strs(word, best)
        steps.append(MergeStep(best, ranks[best], tuple(word)))
    return steps


def _merge_strs(word: list[str], pair: Pair) -> list[str]:
    a, b = pair
    out, i = [], 0
    while i < len(word):
        if i < len(word) - 1 and word[i] == a and word[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


# --- the Sennrich BPE tokenizer -----------------------------------------------------------------

def word_counts(text: str | Iterable[str], end_of_word: str = END_OF_WORD) -> Counter[tuple[str, ...]]:
    """The word-frequency table of whitespace-separated text, each word as its initial symbols
    (characters, the last one marked): ``"low low"`` -> ``{("l", "o", "w</w>"): 2}``."""
    lines = [text] if isinstance(text, str) else text
    counts: Counter[str] = Counter()
    for line in lines:
        if not isinstance(line, str):
            raise TypeError(f"text must be a str or an iterable of str, found {type(line).__name__}")
        counts.update(line.split())
    return Counter({(*w[:-1], w[-1] + end_of_word): c for w, c in counts.items()})


class BPE:
    """A Sennrich BPE tokenizer: the merges, and a vocabulary that numbers every symbol.

    ``tokenize`` splits on whitespace and segments each word; ``decode`` joins the pieces and
    turns each ``</w>`` into a space, so ``decode(encode(x)) == " ".join(x.split())`` whenever
    every symbol of ``x`` was seen in training; an unseen one becomes ``<unk>``. (A character seen
    only inside words has no ``c</w>`` symbol, so at the end of a word it is unknown too, as in
    subword-nmt and HF.)

    Example: ``BPE.train("low lower lowest " * 5, num_merges=10).tokenize("lowest")``.
    """

    def __init__(self, merges: Sequence[Pair], vocab: Mapping[str, int] | Sequence[str],
                 end_of_word: str = END_OF_WORD, unk: str = UNK) -> None:
        self.merges = [tuple(m) for m in merges]
        if not isinstance(vocab, Mapping):
            vocab = {s: i for i, s in enumerate(vocab)}
        self.vocab = dict(vocab)
        if unk not in self.vocab:
            raise ValueError(f"the vocabulary must contain the unknown token {unk!r}")
        for i, (a, b) in enumerate(self.merges):
            if a + b not in self.vocab:
                raise ValueError(f"merge {i} ({a!r}, {b!r}) makes {a + b!r}, which is not in the vocabulary")
        self.ranks = {m: i for i, m in enumerate(self.merges)}
        self.inverse = {i: s for s, i in self.vocab.items()}
        self.end_of_word, self.unk = end_of_word, unk
        self._cache: dict[str, list[str]] = {}
        self.merge_counts: list[int] | None = None  # how often each merge occurred (if trained here)

    @classmethod
    def train(cls, text: str | Iterable[str], *, vocab_size: int | None = None, num_merges: int | None = None,
              min_frequency: int = 2, incremental: bool = True, end_of_word: str = END_OF_WORD) -> BPE:
        """Learn merges on whitespace-separated ``text`` (see :func:`learn_merges`). The vocabulary
        is ``<unk>`` (id 0), the initial symbols, then the merged symbols in the order learned;
        ``vocab_size`` counts all of them (as HF's trainer does with ``special_tokens=["<unk>"]``)."""
        if vocab_size is not None:
            check_int(vocab_size, "vocab_size", 2)  # <unk> and at least one symbol
        table = word_counts(text, end_of_word)
        chars = {c for w in table for s in w for c in s.removesuffix(end_of_word)}
        vocab_size = None if vocab_size is None else vocab_size - 1  # <unk> takes one entry
        learned = learn_merges(table, vocab_size=vocab_size, num_merges=num_merges, alphabet=chars,
                               min_frequency=min_frequency, incremental=incremental)
        bpe = cls(learned.merges, [UNK, *learned.symbols], end_of_word=end_of_word)
        bpe.merge_counts = learned.counts
        return bpe

    def __len__(self) -> int:
        return len(self.vocab)

    def word_symbols(self, word: str) -> list[str]:
        """The initial symbols of a word: its characters, the last one marked."""
        if not word or any(c.isspace() for c in word):
            raise ValueError(f"a word must be non-empty and contain no whitespace, got {word!r}")
        return [*word[:-1], word[-1] + self.end_of_word]

    def segment(self, word: str) -> list[str]:
        """The pieces of one word, e.g. ``["low", "est</w>"]`` (cached)."""
        got = self._cache.get(word)
        if got is None:
            got = self._cache[word] = apply_merges(self.word_symbols(word), self.ranks)
        return got

    def steps(self, word: str) -> list[MergeStep]:
        """The segmentations of ``word`` merge by merge (for the merge-stepper widget)."""
        return merge_steps(self.word_symbols(word), self.ranks)

    def tokenize(self, text: str) -> list[str]:
        """Whitespace-split ``text`` and segment every word."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return [p for w in text.split() for p in self.segment(w)]

    def encode(self, text: str) -> list[int]:
        """Token ids; a piece outside the vocabulary (an unseen character) becomes ``<unk>``."""
        unk = self.vocab[self.unk]
        return [self.vocab.get(p, unk) for p in self.tokenize(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """Join the pieces; every end-of-word marker becomes a space (the last one is dropped)."""
        try:
            pieces = [self.inverse[i] for i in id_list(ids)]
        except KeyError as err:
            raise ValueError(f"id {err.args[0]} is not in the vocabulary (0..{len(self.vocab) - 1})") from None
        return "".join(pieces).replace(self.end_of_word, " ").rstrip(" ")
