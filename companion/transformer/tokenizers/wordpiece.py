"""WordPiece as BERT uses it (Devlin et al. 2018; Wu et al. 2016), able to read BERT's ``vocab.txt``.

After :class:`~.basic.BasicTokenizer` has produced words, each word is cut **greedily, longest
match first**: take the longest prefix that is in the vocabulary, then the longest ``##``-prefixed
continuation of the rest, and so on (``unaffable`` -> ``un ##aff ##able``). If some remainder has
no match, or the word is longer than ``max_chars`` characters, the *whole word* becomes ``[UNK]``.

Special tokens written in the text (``[MASK]``, ``[SEP]``, ...) are matched literally and
case-sensitively before any normalisation, as HF's ``BertTokenizer`` does.

:meth:`WordPiece.train` learns a vocabulary the way HF ``tokenizers``' ``WordPieceTrainer`` does:
BPE merges over words written ``w ##o ##r ##d`` (no likelihood criterion, unlike Schuster &
Nakajima's original WordPiece), keeping every symbol made.

Example: ``WordPiece.bert_base_uncased().encode("Hello world")`` -> ``[101, 7592, 2088, 102]``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ...checks import check_int, id_list
from .basic import BasicTokenizer
from .bpe import learn_merges

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_CLEANUPS = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
             (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def read_vocab(path: str | os.PathLike) -> dict[str, int]:
    """A ``vocab.txt``: one token per line, the id is the line number (from 0). A blank line, a
    token with whitespace inside or a repeated token raises ``ValueError`` naming the line."""
    vocab: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            token = line.rstrip("\n").rstrip("\r")
            if not token or any(c.isspace() for c in token):
                raise ValueError(f"{path}, line {lineno}: expected one token with no whitespace, got {token!r}")
            if token in vocab:
                raise ValueError(f"{path}, line {lineno}: token {token!r} repeats line {vocab[token] + 1}")
            vocab[token] = lineno - 1
    return vocab


def wordpiece_split(word: str, vocab: Mapping[str, int], *, unk: str = "[UNK]", prefix: str = "##",
                    max_chars: int = 100) -> list[str]:
    """Greedy longest-match-first pieces of one word (``[unk]`` if it cannot be covered)."""
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:  # no prefix of the rest is in the vocabulary
            return [unk]
        pieces.append(piece)
        start = end
    return pieces


class WordPiece:
    """BERT's tokenizer: :class:`~.basic.BasicTokenizer`, then greedy longest-match WordPiece.

    Args:
        vocab: token -> id (a ``vocab.txt`` read by :func:`read_vocab`) or tokens in id order.
        lowercase: lower-case and strip accents (the ``uncased`` models).
        specials: the special tokens; each must be in ``vocab``.
        max_chars: longer words become ``[UNK]`` (BERT: 100).
    """

    def __init__(self, vocab: Mapping[str, int] | Sequence[str], *, lowercase: bool = True,
                 specials: Sequence[str] = BERT_SPECIALS, unk: str = "[UNK]", max_chars: int = 100) -> None:
        if not isinstance(vocab, Mapping):
            vocab = {t: i for i, t in enumerate(vocab)}
        self.vocab = dict(vocab)
        missing = [s for s in (*specials, unk) if s not in self.vocab]
        if missing:
            raise ValueError(f"special token(s) {missing} are not in the vocabulary")
        self.inverse = {i: t for t, i in self.vocab.items()}
        self.unk, self.specials, self.max_chars = unk, tuple(specials), max_chars
        self.basic = BasicTokenizer(lowercase=lowercase)
        self._special_re = re.compile("(" + "|".join(map(re.escape, sorted(specials, key=len, reverse=True))) + ")")
        self._cache: dict[str, list[str]] = {}  # raw word -> pieces
        self._id_cache: dict[str, list[int]] = {}  # raw word -> ids

    @classmethod
    def from_file(cls, vocab_txt: str | os.PathLike, **kwargs) -> WordPiece:
        """Read a BERT ``vocab.txt``."""
        return cls(read_vocab(vocab_txt), **kwargs)

    @classmethod
    def bert_base_uncased(cls) -> WordPiece:
        """bert-base-uncased's tokenizer from the real ``vocab.txt`` (30,522 tokens)."""
        from ._files import bert_vocab

        return cls.from_file(bert_vocab())

    @classmethod
    def train(cls, text: str | Iterable[str], vocab_size: int, *, lowercase: bool = True,
              specials: Sequence[str] = BERT_SPECIALS, min_frequency: int = 2) -> WordPiece:
        """Learn a vocabulary of ``vocab_size`` tokens (specials, characters, ``##`` characters,
        merged pieces) by BPE merges over ``w ##o ##r ##d`` words (HF's WordPieceTrainer rule)."""
        check_int(vocab_size, "vocab_size", len(specials) + 1)  # the specials and at least one piece
        basic = BasicTokenizer(lowercase=lowercase)
        counts: Counter[str] = Counter()
        for line in [text] if isinstance(text, str) else text:
            counts.update(basic.tokenize(line))
        table = Counter({(w[0], *("##" + c for c in w[1:])): n for w, n in counts.items()})
        chars = {c for w in counts for c in w}

        def join(a: str, b: str) -> str:
            return a + b.removeprefix("##")

        learned = learn_merges(table, vocab_size=vocab_size - len(specials), min_frequency=min_frequency,
                               join=join, alphabet=chars)
        return cls([*specials, *learned.symbols], lowercase=lowercase, specials=specials)

    def __len__(self) -> int:
        return len(self.vocab)

    def split_word(self, word: str) -> list[str]:
        """The pieces of one raw word: BasicTokenizer's per-word steps, then WordPiece (cached)."""
        got = self._cache.get(word)
        if got is None:
            got = [p for w in self.basic.normalize_word(word)
                   for p in wordpiece_split(w, self.vocab, unk=self.unk, max_chars=self.max_chars)]
            if len(self._cache) > 500_000:
                self._cache.clear()
            self._cache[word] = got
        return got

    def _word_ids(self, word: str) -> list[int]:
        got = self._id_cache.get(word)
        if got is None:
            got = self.convert_tokens_to_ids(self.split_word(word))
            if len(self._id_cache) > 500_000:
                self._id_cache.clear()
            self._id_cache[word] = got
        return got

    def _parts(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._special_re.split(text)  # odd positions: special tokens as written

    def tokenize(self, text: str) -> list[str]:
        """Special tokens as written, everything else through BasicTokenizer and WordPiece."""
        out: list[str] = []
        for i, part in enumerate(self._parts(text)):
            if i % 2:
                out.append(part)
            else:
                for word in self.basic.split(part):
                    out.extend(self.split_word(word))
        return out

    def ids(self, text: str) -> list[int]:
        """The ids of ``text`` without ``[CLS]``/``[SEP]`` (the fast path of :meth:`encode`)."""
        out: list[int] = []
        for i, part in enumerate(self._parts(text)):
            if i % 2:
                out.append(self.vocab[part])
            else:
                for word in self.basic.split(part):
                    out.extend(self._word_ids(word))
        return out

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        unk = self.vocab[self.unk]
        return [self.vocab.get(t, unk) for t in tokens]

    def encode(self, text: str, text_b: str | None = None, *, add_special_tokens: bool = True) -> list[int]:
        """Ids of ``text`` (``[CLS] text [SEP]``) or of a pair (``[CLS] a [SEP] b [SEP]``)."""
        return self.encode_pair(text, text_b, add_special_tokens=add_special_tokens)[0]

    def encode_pair(self, text: str, text_b: str | None = None, *,
                    add_special_tokens: bool = True) -> tuple[list[int], list[int]]:
        """``(input_ids, token_type_ids)``: segment 0 for ``[CLS] a [SEP]``, 1 for ``b [SEP]``."""
        a = self.ids(text)
        b = None if text_b is None else self.ids(text_b)
        if add_special_tokens:
            cls_, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
            a = [cls_, *a, sep]
            b = None if b is None else [*b, sep]
        ids = a + (b or [])
        return ids, [0] * len(a) + [1] * len(b or [])

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False, clean_up: bool = True) -> str:
        """Join the pieces: ``##`` continuations glue to the previous piece, others get a space.
        ``clean_up`` drops that space before ``.`` ``?`` ``!`` ``,`` — applied token by token, as
        HF tokenizers' WordPiece decoder does (so ``can ' t`` stays as it is)."""
        try:
            tokens = [self.inverse[i] for i in id_list(ids)]
        except KeyError as err:
            raise ValueError(f"id {err.args[0]} is not in the vocabulary (0..{len(self.vocab) - 1})") from None
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in self.specials]
        out = []
        for i, tok in enumerate(tokens):
            if i and tok.startswith("##"):
                out.append(tok[2:])
                continue
            piece = " " + tok if i else tok
            if clean_up:
                for old, new in _CLEANUPS:
                    piece = piece.replace(old, new)
            out.append(piece)
        return "".join(out)
