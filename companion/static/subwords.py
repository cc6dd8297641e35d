"""fastText's subwords: character n-grams with boundary markers, hashed into buckets.

Bojanowski et al. (2017) represent a word by the bag of its character n-grams. The word is
wrapped in ``<`` and ``>`` so that prefixes and suffixes differ from inner n-grams (``<wh`` is a
beginning, ``her`` is not), every n-gram of 3 to 6 characters is taken, and the word itself is
kept as one more entry. For "where" and n = 3 the n-grams are ``<wh, whe, her, ere, re>``, plus
the whole word ``<where>``.

There are millions of distinct n-grams, so fastText does not give each one its own row: it hashes
the n-gram's UTF-8 bytes with 32-bit FNV-1a and takes the hash modulo a bucket count (2,000,000
by default). Different n-grams that land in the same bucket share a vector -- the memory/quality
trade-off of the hashing trick.

**Exactly as fastText's C++ code** (``src/dictionary.cc``):

* "characters" are UTF-8 characters: an n-gram never starts on, or cuts through, a continuation
  byte (``0b10xxxxxx``);
* a one-character n-gram that is a lone ``<`` or ``>`` is skipped (matters only for minn = 1);
* the hash XORs each byte *as a signed char* (``uint32_t(int8_t(c))``): bytes >= 0x80 are
  sign-extended to ``0xFFFFFFxx`` before the XOR. This differs from textbook FNV-1a for
  non-ASCII text; fastText keeps it so that released models stay valid, and so do we;
* the bucket is ``hash % bucket`` and the n-gram's row is ``nwords + bucket`` (the word's own
  row is its id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import torch

__all__ = [
    "BOW", "EOW", "FNV_OFFSET", "FNV_PRIME", "fnv1a_32", "fnv1a_32_many", "char_ngrams", "subwords",
    "ngram_buckets", "bucket_collisions", "SubwordTable", "build_subword_table",
]

BOW, EOW = "<", ">"
FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


def _to_bytes(s: str | bytes) -> bytes:
    if isinstance(s, str):
        return s.encode("utf-8")
    if isinstance(s, (bytes, bytearray)):
        return bytes(s)
    raise TypeError(f"expected a str (or its UTF-8 bytes), got {type(s).__name__}")


def fnv1a_32(s: str | bytes) -> int:
    """fastText's 32-bit FNV-1a hash of ``s``'s UTF-8 bytes (each byte as a *signed* char).

    Example:
        >>> fnv1a_32("")            # the offset basis
        2166136261
        >>> fnv1a_32("a")           # textbook FNV-1a agrees on ASCII
        3826002220
    """
    h = FNV_OFFSET
    for b in _to_bytes(s):
        # int8_t(b) then uint32_t: bytes >= 0x80 become 0xFFFFFF80..0xFFFFFFFF
        h ^= b if b < 0x80 else (b | 0xFFFFFF00)
        h = (h * FNV_PRIME) & 0xFFFFFFFF
    return h


def fnv1a_32_many(strings: Sequence[str | bytes]) -> np.ndarray:
    """:func:`fnv1a_32` of many strings at once: ``uint32`` array, vectorised over the strings
    (one numpy pass per byte position, so the cost grows with the longest string, not the count)."""
    data = [_to_bytes(s) for s in strings]
    n = len(data)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    lengths = np.fromiter((len(b) for b in data), dtype=np.int64, count=n)
    width = int(lengths.max())
    buf = np.zeros((n, max(width, 1)), dtype=np.uint8)
    flat = np.frombuffer(b"".join(data), dtype=np.uint8)
    rows = np.repeat(np.arange(n), lengths)
    cols = np.arange(flat.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    buf[rows, cols] = flat
    signed = buf.view(np.int8).astype(np.int64) & 0xFFFFFFFF  # sign-extend, keep 32 bits
    h = np.full(n, FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(FNV_PRIME)
    mask = np.uint64(0xFFFFFFFF)
    for k in range(width):
        live = lengths > k
        step = ((h ^ signed[:, k].astype(np.uint64)) * prime) & mask
        h = np.where(live, step, h)
    return h.astype(np.uint32)


def _check_n(minn: int, maxn: int) -> None:
    for name, v in (("minn", minn), ("maxn", maxn)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} must be an int >= 0, got {v!r}")
    if maxn and minn > maxn:
        raise ValueError(f"minn ({minn}) must be <= maxn ({maxn}); fastText uses 3 and 6")


def char_ngrams(word: str, minn: int = 3, maxn: int = 6, *, bow: str = BOW, eow: str = EOW) -> list[str]:
    """The character n-grams of ``bow + word + eow`` with ``minn <= n <= maxn``, in fastText's order.

    fastText's order: by start position, then by length. ``maxn = 0`` means no n-grams.

    Example:
        >>> char_ngrams("where", 3, 3)
        ['<wh', 'whe', 'her', 'ere', 're>']
        >>> char_ngrams("on", 3, 4)
        ['<on', '<on>', 'on>']
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    if not word:
        raise ValueError("word must not be empty")
    _check_n(minn, maxn)
    if maxn == 0:
        return []
    # Python strings are sequences of code points = UTF-8 characters, so slicing by code point
    # reproduces the C++ walk that skips continuation bytes.
    w = bow + word + eow
    out: list[str] = []
    for i in range(len(w)):
        for n in range(1, maxn + 1):
            j = i + n
            if j > len(w):
                break
            if n >= minn and not (n == 1 and (i == 0 or j == len(w))):
                out.append(w[i:j])
    return out


def subwords(word: str, minn: int = 3, maxn: int = 6) -> list[str]:
    """The paper's ``S(w)``: the whole word ``<word>`` first, then its character n-grams.

    The whole word is listed in the paper's notation; in the model it is the word's own row
    (its vocabulary id), not a hashed n-gram, and an out-of-vocabulary word has no such row.

    Example:
        >>> subwords("where", 3, 3)
        ['<where>', '<wh', 'whe', 'her', 'ere', 're>']
    """
    return [BOW + word + EOW] + char_ngrams(word, minn, maxn)


def ngram_buckets(ngrams: Sequence[str], bucket: int) -> np.ndarray:
    """``fnv1a_32(g) % bucket`` for each n-gram: int64 bucket numbers in ``[0, bucket)``."""
    if not isinstance(bucket, int) or isinstance(bucket, bool) or bucket < 1:
        raise ValueError(f"bucket must be a positive int (fastText: 2,000,000), got {bucket!r}")
    return (fnv1a_32_many(ngrams).astype(np.int64) % bucket).astype(np.int64)


def bucket_collisions(words: Iterable[str], bucket: int, minn: int = 3, maxn: int = 6) -> dict[str, float]:
    """The hashing trick's trade-off for a vocabulary: how many distinct n-grams share a bucket.

    Returns:
        ``{"ngrams": distinct n-grams, "buckets_used": distinct buckets they fill,
        "shared": share of the n-grams that sit in a bucket with another n-gram,
        "expected_shared": the same share for uniformly random buckets,
        "megabytes": size of the bucket rows in float32 per 100 dimensions}``.
    """
    grams = sorted({g for w in words for g in char_ngrams(w, minn, maxn)})
    if not grams:
        raise ValueError("no n-grams: give a non-empty list of words")
    b = ngram_buckets(grams, bucket)
    _, counts = np.unique(b, return_counts=True)
    n = len(grams)
    shared = float(counts[counts > 1].sum()) / n
    expected = 1.0 - (1.0 - 1.0 / bucket) ** (n - 1)  # P(another n-gram lands in mine)
    return {"ngrams": n, "buckets_used": int(counts.size), "shared": shared,
            "expected_shared": expected, "megabytes": bucket * 100 * 4 / 1e6}


@dataclass
class SubwordTable:
    """Every vocabulary word's rows of the input matrix, as a ragged (CSR) table.

    Word ``w``'s rows are ``ids[ptr[w]:ptr[w+1]]``: its own row ``w`` first (if ``with_word``),
    then ``nwords + bucket(g)`` for each of its n-grams ``g`` (duplicates kept, as fastText).

    Attributes:
        ptr: ``[V + 1]`` int64 offsets.
        ids: ``[sum of lengths]`` int64 row ids in ``[0, nwords + bucket)``.
        nwords, bucket, minn, maxn: the sizes and n-gram range used.
    """

    ptr: torch.Tensor
    ids: torch.Tensor
    nwords: int
    bucket: int
    minn: int
    maxn: int

    @property
    def n_rows(self) -> int:
        """Rows of the input matrix: words plus buckets."""
        return self.nwords + self.bucket

    def lengths(self) -> torch.Tensor:
        """``[V]`` number of rows per word."""
        return self.ptr[1:] - self.ptr[:-1]

    def rows_of(self, word_id: int) -> torch.Tensor:
        """The rows of one vocabulary word."""
        if not 0 <= int(word_id) < self.nwords:
            raise IndexError(f"word id {word_id} is outside 0..{self.nwords - 1}")
        return self.ids[self.ptr[word_id]:self.ptr[word_id + 1]]

    def gather(self, words: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Flattened rows of several words: ``(rows, owner)``, ``owner[k]`` = position in ``words``.

        Vectorised: no Python loop over the words.
        """
        words = words.to(self.ptr.device)
        start = self.ptr[words]
        length = self.ptr[words + 1] - start
        owner = torch.repeat_interleave(torch.arange(words.numel(), device=words.device), length)
        # position within each word's segment: global arange minus the segment's first slot
        first = torch.cumsum(length, 0) - length
        within = torch.arange(int(length.sum()), device=words.device) - first[owner]
        return self.ids[start[owner] + within], owner

    def to(self, device: str | torch.device) -> "SubwordTable":
        """The table with its tensors on ``device``."""
        return SubwordTable(self.ptr.to(device), self.ids.to(device), self.nwords, self.bucket, self.minn, self.maxn)


def build_subword_table(
    words: Sequence[str],
    *,
    bucket: int = 2_000_000,
    minn: int = 3,
    maxn: int = 6,
    with_word: bool = True,
    skip: Iterable[str] = ("</s>",),
) -> SubwordTable:
    """The :class:`SubwordTable` of a vocabulary (row ``i`` of the vocabulary is word ``words[i]``).

    Args:
        words: the vocabulary, id order.
        bucket: number of hash buckets.
        minn, maxn: n-gram lengths (``maxn = 0``: no n-grams, i.e. plain skip-gram).
        with_word: include the word's own row (fastText does; an OOV word has none).
        skip: words that get no n-grams (fastText: the end-of-sentence token ``</s>``).
    """
    if isinstance(words, str) or not isinstance(words, Sequence) or len(words) == 0:
        raise ValueError("words must be a non-empty list of strings (the vocabulary in id order)")
    _check_n(minn, maxn)
    if not isinstance(bucket, int) or isinstance(bucket, bool) or bucket < 1:
        raise ValueError(f"bucket must be a positive int (fastText: 2,000,000), got {bucket!r}")
    skip = set(skip)
    nwords = len(words)
    all_ngrams: list[str] = []
    counts = np.zeros(nwords, dtype=np.int64)
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w:
            raise ValueError(f"vocabulary entry {i} is {w!r}; words must be non-empty strings")
        if w in skip or maxn == 0:
            continue
        g = char_ngrams(w, minn, maxn)
        all_ngrams.extend(g)
        counts[i] = len(g)
    buckets = nwords + ngram_buckets(all_ngrams, bucket) if all_ngrams else np.zeros(0, dtype=np.int64)
    lengths = counts + (1 if with_word else 0)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    ids = np.empty(int(ptr[-1]), dtype=np.int64)
    ng_ptr = np.concatenate([[0], np.cumsum(counts)])
    if with_word:
        ids[ptr[:-1]] = np.arange(nwords)
    # scatter each word's bucket rows after its own row, vectorised
    owner = np.repeat(np.arange(nwords), counts)
    within = np.arange(buckets.size) - ng_ptr[owner]
    ids[ptr[owner] + (1 if with_word else 0) + within] = buckets
    return SubwordTable(torch.from_numpy(ptr.astype(np.int64)), torch.from_numpy(ids), nwords, bucket, minn, maxn)
