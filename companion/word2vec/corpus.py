"""The word2vec vocabulary and the encoded token stream.

word2vec (the C code and gensim alike) does not map rare words to ``<unk>``: a word seen fewer
than ``min_count`` times is *dropped* from the stream, so the windows reach over it. The
vocabulary is sorted by decreasing count (ties keep first-occurrence order), which puts the
frequent words first: the Huffman tree, the noise table and the analogy benchmark's
``restrict_vocab`` all rely on that order.

The stream is kept as one flat tensor of word ids plus one sentence id per token; windows never
cross a sentence boundary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import torch

__all__ = ["Word2VecVocab", "EncodedCorpus", "build_vocab", "encode_corpus"]


@dataclass
class Word2VecVocab:
    """Words sorted by decreasing count.

    Attributes:
        itos: id -> word.
        counts: ``[V]`` int64 corpus counts, non-increasing.
        stoi: word -> id (built from ``itos``).
    """

    itos: list[str]
    counts: torch.Tensor
    stoi: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.itos) != int(self.counts.numel()):
            raise ValueError(f"itos has {len(self.itos)} words but counts has {self.counts.numel()} entries")
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("itos contains a word twice")

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: object) -> bool:
        return word in self.stoi

    @property
    def total(self) -> int:
        """Number of in-vocabulary tokens in the corpus."""
        return int(self.counts.sum())

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Ids of the in-vocabulary tokens (out-of-vocabulary tokens are dropped, as in word2vec)."""
        return [self.stoi[t] for t in tokens if t in self.stoi]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Words of the ids."""
        return [self.itos[int(i)] for i in ids]


def _check_sentences(sentences: object) -> None:
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise TypeError(
            "sentences must be a list of sentences, each a list of string tokens "
            f"(e.g. [['the', 'cat'], ['a', 'dog']]); got {type(sentences).__name__}"
        )
    for i, s in enumerate(sentences[:1000]):  # a cheap spot check; the encoder checks tokens
        if isinstance(s, str) or not isinstance(s, Sequence):
            raise TypeError(
                f"sentence {i} is a {type(s).__name__}, not a list of tokens; "
                "tokenize first (companion.data.tokenize) and pass a list of lists"
            )


def build_vocab(sentences: Sequence[Sequence[str]], *, min_count: int = 5, max_size: int | None = None) -> Word2VecVocab:
    """Count the tokens and keep the words seen at least ``min_count`` times.

    Args:
        sentences: list of token lists.
        min_count: drop words rarer than this (word2vec's ``-min-count``, default 5).
        max_size: keep at most this many of the most frequent words (``None``: all).

    Raises:
        TypeError: if ``sentences`` is not a list of token lists.
        ValueError: for a bad ``min_count``/``max_size`` or when fewer than 2 words survive.
    """
    _check_sentences(sentences)
    if not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be a positive int, got {min_count!r}")
    if max_size is not None and (not isinstance(max_size, int) or max_size < 2):
        raise ValueError(f"max_size must be an int >= 2 or None, got {max_size!r}")
    counter: Counter[str] = Counter()
    for s in sentences:
        counter.update(s)
    # Counter keeps first-occurrence order; a stable sort by count keeps it among ties.
    items = sorted(((w, c) for w, c in counter.items() if c >= min_count), key=lambda wc: -wc[1])
    if max_size is not None:
        items = items[:max_size]
    if len(items) < 2:
        raise ValueError(
            f"only {len(items)} word(s) occur at least min_count={min_count} times in "
            f"{sum(len(s) for s in sentences)} tokens; lower min_count or give more text"
        )
    bad = [w for w, _ in items[:50] if not isinstance(w, str)]
    if bad:
        raise TypeError(f"tokens must be strings, got {type(bad[0]).__name__} ({bad[0]!r})")
    return Word2VecVocab([w for w, _ in items], torch.tensor([c for _, c in items], dtype=torch.int64))


@dataclass
class EncodedCorpus:
    """The corpus as tensors: what the pair generator reads.

    Attributes:
        ids: ``[N]`` int64 word ids of the in-vocabulary tokens, in corpus order.
        sentence: ``[N]`` int64 sentence number of each token (windows stay inside a sentence).
        vocab: the :class:`Word2VecVocab` the ids refer to.
        raw_words: tokens of the sentences before the rare words were dropped (0: unknown,
            taken to be ``len(ids)``).
    """

    ids: torch.Tensor
    sentence: torch.Tensor
    vocab: Word2VecVocab
    raw_words: int = 0

    def __len__(self) -> int:
        return int(self.ids.numel())

    @property
    def corpus_words(self) -> int:
        """All words of the corpus, before ``min_count`` (and subsampling): what gensim and the
        C code count in their words per second, and so the unit of ``History.items``."""
        return max(int(self.raw_words), len(self))


def encode_corpus(
    sentences: Sequence[Sequence[str]],
    vocab: Word2VecVocab | None = None,
    *,
    min_count: int = 5,
    max_size: int | None = None,
) -> EncodedCorpus:
    """Encode ``sentences`` with ``vocab`` (built with :func:`build_vocab` if ``None``).

    Out-of-vocabulary tokens are removed (not replaced), as word2vec does.

    Raises:
        TypeError / ValueError: see :func:`build_vocab`; ValueError if nothing is left.
    """
    _check_sentences(sentences)
    if vocab is None:
        vocab = build_vocab(sentences, min_count=min_count, max_size=max_size)
    elif not isinstance(vocab, Word2VecVocab):
        raise TypeError(f"vocab must be a Word2VecVocab (see build_vocab), got {type(vocab).__name__}")
    stoi = vocab.stoi
    ids: list[int] = []
    lengths: list[int] = []
    raw = 0
    for s in sentences:
        enc = [stoi[t] for t in s if t in stoi]
        ids.extend(enc)
        lengths.append(len(enc))
        raw += len(s)
    if not ids:
        raise ValueError("no token of the sentences is in the vocabulary; nothing to train on")
    ids_t = torch.tensor(ids, dtype=torch.int64)
    sent = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths, dtype=torch.int64))
    return EncodedCorpus(ids_t, sent, vocab, raw_words=raw)
