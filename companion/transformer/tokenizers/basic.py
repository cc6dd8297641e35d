"""BERT's BasicTokenizer (Devlin et al. 2018, ``tokenization.py``): the text normalisation and
splitting done before WordPiece.

In order: drop NUL, U+FFFD and control characters and turn every whitespace character into a
space (*cleaning*); put spaces around CJK ideographs, so that each Chinese character is a word of
its own (*CJK splitting*: BERT's vocabulary holds single characters, no Chinese words); split on
whitespace; then for each word lower-case it, strip accents (NFD decomposition, then drop the
combining marks, category ``Mn``) and split off every punctuation character (ASCII symbols count
as punctuation, like ``$`` and ``^``, as do all Unicode ``P*`` characters).

Example: ``BasicTokenizer().tokenize("Héllo, 世界!")`` -> ``["hello", ",", "世", "界", "!"]``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# The CJK Unified Ideographs blocks BERT treats as "Chinese characters" (not Hangul, not kana).
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is in one of the CJK ideograph blocks of :data:`CJK_RANGES`."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


def is_whitespace(ch: str) -> bool:
    """Space, tab, newline, carriage return, or any Unicode space separator (``Zs``)."""
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch: str) -> bool:
    """A ``C*`` character other than tab, newline and carriage return (those count as whitespace)."""
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch: str) -> bool:
    """ASCII non-alphanumeric symbols (``$``, ``^``, ``` ` ``` ... which Unicode files as ``S*``)
    or any Unicode punctuation (``P*``)."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def clean_text(text: str) -> str:
    """Drop NUL, U+FFFD and control characters; every whitespace character becomes a space."""
    out = []
    for ch in text:
        if ch == "\x00" or ch == "\ufffd" or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    return "".join(out)


def split_cjk(text: str) -> str:
    """Surround every CJK ideograph by spaces."""
    return "".join(f" {ch} " if is_cjk(ch) else ch for ch in text)


def strip_accents(text: str) -> str:
    """NFD-decompose and drop combining marks: ``"Héllo"`` -> ``"Hello"``."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def split_punctuation(word: str) -> list[str]:
    """``"don't!"`` -> ``["don", "'", "t", "!"]``: each punctuation character is its own piece."""
    pieces: list[list[str]] = []
    start_new = True
    for ch in word:
        if is_punctuation(ch):
            pieces.append([ch])
            start_new = True
        else:
            if start_new:
                pieces.append([])
                start_new = False
            pieces[-1].append(ch)
    return ["".join(p) for p in pieces]


class _CharMap(dict):
    """A ``str.translate`` table filled on demand: each code point's cleaning and CJK splitting is
    decided once (``""`` dropped, ``" "`` whitespace, ``" 中 "``, or the character itself), so a
    whole text is cleaned at C speed after the first sighting of each character."""

    def __init__(self, split_chinese: bool) -> None:
        super().__init__()
        self.split_chinese = split_chinese

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if cp == 0 or cp == 0xFFFD or is_control(ch):
            out = ""
        elif is_whitespace(ch):
            out = " "
        elif self.split_chinese and is_cjk(ch):
            out = f" {ch} "
        else:
            out = ch
        self[cp] = out
        return out


class BasicTokenizer:
    """Cleaning, CJK splitting, whitespace splitting, lower-casing, accent stripping, punctuation.

    Args:
        lowercase: lower-case (and then strip accents, as the uncased BERT models do).
        strip_accents: strip accents; by default the same as ``lowercase``.
        never_split: words left whole (e.g. ``"[MASK]"``) if they appear as whitespace-separated words.
        split_chinese: split CJK ideographs into single characters.
    """

    def __init__(self, lowercase: bool = True, strip_accents: bool | None = None,
                 never_split: Iterable[str] = (), split_chinese: bool = True) -> None:
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.never_split = set(never_split)
        self.split_chinese = split_chinese
        self._table = _CharMap(split_chinese)

    def split(self, text: str) -> list[str]:
        """Cleaning and CJK splitting (:func:`clean_text`, :func:`split_cjk` in one pass), then
        whitespace splitting: the raw words, not yet lower-cased."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return text.translate(self._table).split()

    def normalize_word(self, word: str) -> list[str]:
        """One raw word lower-cased, accent-stripped and split at punctuation."""
        if word in self.never_split:
            return [word]
        if self.lowercase:
            word = word.lower()
        if self.strip_accents:
            word = strip_accents(word)
        return " ".join(split_punctuation(word)).split()  # drops empty words accent stripping leaves

    def tokenize(self, text: str) -> list[str]:
        """The words and punctuation of ``text`` after BERT's normalisation."""
        return [p for word in self.split(text) for p in self.normalize_word(word)]
