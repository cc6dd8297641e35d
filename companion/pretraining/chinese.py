"""Chinese text for whole-word masking: a word segmenter of our own and character rows that carry
its word boundaries.

Chinese is written without spaces, and Chinese BERT reads **characters**. Whole-word masking for
Chinese (Cui et al. 2019, BERT-wwm) therefore needs a segmenter first: it decides which characters
form a word, and the masking then hides all characters of a chosen word together (the masking
itself is :class:`~.mlm.ChineseWholeWordMLM`). Cui et al. used LTP; we write the segmenter the
popular ``jieba`` package uses, **maximum-probability segmentation** over a dictionary:

1. every dictionary word that starts at character ``k`` is an edge ``k -> k + len(word)`` (a DAG
   of all segmentations; a character that starts no word is a word of its own);
2. a segmentation's probability is the product of its words' unigram probabilities
   ``count(w) / total``; the best one is a shortest path (sums of ``-log p``) found by a dynamic
   program from the end of the sentence to its start.

The dictionary is counted from the gold segmentation of People's Daily (January 1998, PKU's
standard), so held-out People's Daily paragraphs measure the segmenter (boundary F1), and a
peer test checks that, given jieba's own dictionary, our segmentation equals ``jieba.cut(text,
HMM=False)`` (jieba's extra hidden-Markov step for unknown words is not built).

Rows for pre-training hold character ids; the first character of every word carries
:data:`WORD_FLAG` (``id + WORD_FLAG``), so segmentation travels with the rows through the
harness (:func:`pack_segmented`, :func:`split_flags`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch

from .harness import SPECIAL_NAMES, Vocab

WORD_FLAG = 1 << 32  # added to a row's id where a word begins (ids themselves stay far below)


# ------------------------------------------------------------------------------ the dictionary


@dataclass
class WordDict:
    """Word counts for segmentation. ``prefixes`` holds every prefix of every word, so that the
    DAG stops extending a fragment as soon as no word can start with it."""

    freq: dict[str, int]
    total: int = field(init=False)
    prefixes: set[str] = field(init=False, repr=False)

    def __post_init__(self):
        bad = [w for w, c in self.freq.items() if not isinstance(w, str) or not w or c < 0]
        if bad:
            raise ValueError(f"a WordDict needs non-empty words with counts >= 0; bad entries: {bad[:3]}")
        self.total = sum(self.freq.values())
        if self.total <= 0:
            raise ValueError("a WordDict needs at least one word with a positive count")
        self.prefixes = {w[:i] for w in self.freq for i in range(1, len(w) + 1)}

    @classmethod
    def from_corpus(cls, paragraphs: Iterable[Sequence[str]]) -> WordDict:
        """Counts of the words of already segmented text (People's Daily's gold words)."""
        return cls(dict(Counter(w for p in paragraphs for w in p)))

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> WordDict:
        """jieba's dictionary format: ``word count [tag]`` per line."""
        freq = {}
        for n, line in enumerate(lines, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2 or not parts[1].isdigit():
                raise ValueError(f"dictionary line {n}: expected 'word count [tag]', got {line!r}")
            freq[parts[0]] = int(parts[1])
        return cls(freq)

    def __len__(self) -> int:
        return len(self.freq)


# ------------------------------------------------------------------------------ segmentation


def build_dag(text: str, wd: WordDict) -> list[list[int]]:
    """For every start ``k``, the end indices ``i`` (inclusive) of the dictionary words
    ``text[k:i+1]``; ``[k]`` when none starts there."""
    n = len(text)
    dag = []
    for k in range(n):
        ends, i = [], k
        frag = text[k]
        while frag in wd.prefixes:
            if wd.freq.get(frag):
                ends.append(i)
            i += 1
            if i >= n:
                break
            frag = text[k:i + 1]
        dag.append(ends or [k])
    return dag


def best_route(text: str, dag: list[list[int]], wd: WordDict) -> list[int]:
    """The dynamic program: ``route[k]`` = the end of the first word of the most probable
    segmentation of ``text[k:]``. A word outside the dictionary counts as seen once. Ties go to
    the longer word (as in jieba)."""
    n = len(text)
    log_total = math.log(wd.total)
    score = [0.0] * (n + 1)
    route = [0] * n
    for k in range(n - 1, -1, -1):
        score[k], route[k] = max((math.log(wd.freq.get(text[k:x + 1]) or 1) - log_total + score[x + 1], x)
                                 for x in dag[k])
    return route


def segment(text: str, wd: WordDict) -> list[str]:
    """The most probable segmentation of ``text`` (whitespace separates and is dropped)."""
    if not isinstance(text, str):
        raise TypeError(f"segment takes a str, got {type(text).__name__}")
    words = []
    for chunk in text.split():
        route = best_route(chunk, build_dag(chunk, wd), wd)
        k = 0
        while k < len(chunk):
            words.append(chunk[k:route[k] + 1])
            k = route[k] + 1
    return words


def forward_max_match(text: str, wd: WordDict, max_len: int = 6) -> list[str]:
    """The older baseline: greedily take the longest dictionary word (up to ``max_len``
    characters) at each position, left to right."""
    words = []
    for chunk in text.split():
        k = 0
        while k < len(chunk):
            for n in range(min(max_len, len(chunk) - k), 0, -1):
                if n == 1 or wd.freq.get(chunk[k:k + n]):
                    words.append(chunk[k:k + n])
                    k += n
                    break
    return words


def _spans(words: Sequence[str]) -> set[tuple[int, int]]:
    out, k = set(), 0
    for w in words:
        out.add((k, k + len(w)))
        k += len(w)
    return out


def segmentation_f1(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> dict[str, float]:
    """Word precision, recall and F1 (a word counts when both its ends match the gold), summed
    over paragraphs. The two sides must spell the same characters."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted paragraphs but {len(gold)} gold ones")
    tp = n_pred = n_gold = 0
    for p, g in zip(predicted, gold):
        if "".join(p) != "".join(g):
            raise ValueError(f"a predicted paragraph spells other characters than its gold one: {''.join(p)[:20]!r}")
        sp, sg = _spans(p), _spans(g)
        tp, n_pred, n_gold = tp + len(sp & sg), n_pred + len(sp), n_gold + len(sg)
    prec, rec = tp / max(n_pred, 1), tp / max(n_gold, 1)
    return {"precision": prec, "recall": rec, "f1": 2 * prec * rec / max(prec + rec, 1e-12)}


HAN_RUN = re.compile("[\u4e00-\u9fd5]+")  # the CJK block jieba's default pattern covers


# ------------------------------------------------------------------------------ character rows


@dataclass
class CharTokenizer:
    """One id per character (Chinese BERT's tokenisation); :data:`SPECIAL_NAMES` first, then the
    characters seen at least ``min_count`` times; every other character is ``[UNK]``."""

    chars: list[str]

    def __post_init__(self):
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.vocab = Vocab(len(self.chars), pad=1, unk=2, cls=3, sep=4, mask=5, eos=0)

    @classmethod
    def train(cls, texts: Iterable[str], min_count: int = 2) -> CharTokenizer:
        counts = Counter(c for t in texts for c in t if not c.isspace())
        keep = sorted((c for c, n in counts.items() if n >= min_count), key=lambda c: (-counts[c], c))
        return cls([*SPECIAL_NAMES, *keep])

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        return [self.index.get(c, self.vocab.unk) for c in text if not c.isspace()]

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.chars[i] for i in ids)


def pack_segmented(paragraphs: Sequence[Sequence[str]], tok: CharTokenizer, row_len: int) -> torch.Tensor:
    """Segmented paragraphs (word lists) -> ``[N, row_len]`` rows of character ids, joined by
    ``eos``, with :data:`WORD_FLAG` added at every word's first character (the tail that does
    not fill a row is dropped)."""
    if row_len < 2:
        raise ValueError(f"row_len must be at least 2, got {row_len}")
    stream: list[int] = []
    for para in paragraphs:
        for w in para:
            ids = tok.encode(w)
            if ids:
                stream.append(ids[0] + WORD_FLAG)
                stream.extend(ids[1:])
        stream.append(tok.vocab.eos)
    n = len(stream) // row_len
    if n < 1:
        raise ValueError(f"{len(stream)} characters do not fill one row of {row_len}; use more text")
    return torch.tensor(stream[: n * row_len], dtype=torch.long).view(n, row_len)


def split_flags(rows: torch.Tensor, vocab_size: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` -> ``(ids, starts)``: the character ids and where a word begins."""
    if not isinstance(rows, torch.Tensor) or rows.dtype != torch.long:
        raise ValueError("rows must be a long tensor of character ids (see pack_segmented)")
    starts = rows >= WORD_FLAG
    ids = rows - WORD_FLAG * starts
    if (ids < 0).any() or (vocab_size is not None and (ids >= vocab_size).any()):
        raise ValueError(f"rows hold ids outside the vocabulary of {vocab_size} (pack them with pack_segmented)")
    return ids, starts


def show_masks(ids: torch.Tensor, starts: torch.Tensor, chosen: torch.Tensor, tok: CharTokenizer,
               text: str | None = None) -> str:
    """A framed row (``[CLS] ... [SEP]``) as text: words separated by ``|``, chosen characters in
    ``[ ]``. ``text``: the row's original characters (then an ``[UNK]`` shows as what it was)."""
    chars = [None, *(c for c in text if not c.isspace()), None] if text is not None else None
    out = []
    for k, (i, s, c) in enumerate(zip(ids.tolist(), starts.tolist(), chosen.tolist())):
        if chars is not None and k < len(chars) and chars[k] is not None:
            ch = chars[k]
        elif i in tok.vocab.specials:
            continue
        else:
            ch = tok.chars[i]
        out.append(("|" if s and out else "") + (f"[{ch}]" if c else ch))
    return "".join(out)


__all__ = [
    "HAN_RUN",
    "WORD_FLAG",
    "CharTokenizer",
    "WordDict",
    "best_route",
    "build_dag",
    "forward_max_match",
    "pack_segmented",
    "segment",
    "segmentation_f1",
    "show_masks",
    "split_flags",
]
