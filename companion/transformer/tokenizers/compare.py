"""The chapter's tokenizer comparison: how BPE, byte-level BPE and WordPiece split the same words,
and how many tokens each spends per word (English) or per character (Chinese)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from .basic import is_cjk
from .bpe import BPE
from .byte_bpe import ByteLevelBPE
from .wordpiece import WordPiece

Tokenizer = BPE | ByteLevelBPE | WordPiece | Callable[[str], list[str]]


def pieces(tokenizer: Tokenizer, text: str) -> list[str]:
    """The readable pieces of ``text``: BPE's with ``</w>``, WordPiece's with ``##``, byte-level
    BPE's decoded (a leading space shown as ``␣``). A plain callable is called."""
    if isinstance(tokenizer, BPE):
        return tokenizer.tokenize(text)
    if isinstance(tokenizer, ByteLevelBPE):
        return [tokenizer.show(t) for p in tokenizer.pieces(text) for t in tokenizer.bpe(p)]
    if isinstance(tokenizer, WordPiece):
        return tokenizer.tokenize(text)
    if callable(tokenizer):
        return list(tokenizer(text))
    raise TypeError(f"expected a BPE, ByteLevelBPE, WordPiece or a callable, got {type(tokenizer).__name__}")


def _count(tokenizer: Tokenizer, text: str) -> tuple[int, int]:
    """(number of tokens, how many of them are unknown)."""
    if isinstance(tokenizer, BPE):
        ids = tokenizer.encode(text)
        return len(ids), ids.count(tokenizer.vocab[tokenizer.unk])
    if isinstance(tokenizer, ByteLevelBPE):
        return len(tokenizer.encode_ordinary(text)), 0  # bytes: nothing is unknown
    if isinstance(tokenizer, WordPiece):
        ids = tokenizer.ids(text)
        return len(ids), ids.count(tokenizer.vocab[tokenizer.unk])
    return len(pieces(tokenizer, text)), 0


def _check(tokenizers: Mapping[str, Tokenizer]) -> None:
    if not isinstance(tokenizers, Mapping) or not tokenizers:
        raise ValueError("tokenizers must be a non-empty mapping {name: tokenizer}")


def compare_splits(words: Sequence[str], tokenizers: Mapping[str, Tokenizer], *,
                   leading_space: bool = True) -> pd.DataFrame:
    """One row per word, one column per tokenizer, each cell the pieces joined by spaces.

    ``leading_space`` gives each word to byte-level BPE as ``" word"``, the form it takes inside a
    sentence (GPT-2 learned ``Ġword`` tokens, not ``word``)."""
    _check(tokenizers)
    if isinstance(words, str) or not words:
        raise ValueError("words must be a non-empty list of strings")
    rows = {}
    for w in words:
        row = {}
        for name, tok in tokenizers.items():
            text = " " + w if leading_space and isinstance(tok, ByteLevelBPE) else w
            row[name] = " ".join(pieces(tok, text))
        rows[w] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "word"
    return out


def tokens_per_word(texts: Mapping[str, str], tokenizers: Mapping[str, Tokenizer]) -> pd.DataFrame:
    """Tokens spent on each text by each tokenizer.

    Columns: ``tokens``; ``words`` (whitespace-separated); ``chars`` (non-space characters);
    ``tokens_per_word`` (NaN for a text written without spaces between words -- mostly CJK
    ideographs, as Chinese is -- where whitespace "words" are whole clauses and the ratio means
    nothing: compare ``tokens_per_char`` there); ``tokens_per_char``; ``unk_share`` (the share of
    tokens that are ``<unk>``/``[UNK]``, 0 for byte-level BPE, which has no unknowns).
    """
    _check(tokenizers)
    if not isinstance(texts, Mapping) or not texts:
        raise ValueError("texts must be a non-empty mapping {name: text}")
    rows = []
    for tname, text in texts.items():
        words = len(text.split())
        chars = sum(1 for c in text if not c.isspace())
        if not words:
            raise ValueError(f"text {tname!r} is empty")
        unspaced = sum(1 for c in text if is_cjk(c)) > chars / 2
        for name, tok in tokenizers.items():
            n, unk = _count(tok, text)
            rows.append({"text": tname, "tokenizer": name, "tokens": n, "words": words, "chars": chars,
                         "tokens_per_word": math.nan if unspaced else n / words,
                         "tokens_per_char": n / chars,
                         "unk_share": unk / n if n else 0.0})
    return pd.DataFrame(rows)
