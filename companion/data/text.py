"""The book's one word tokenizer and a small rule-based sentence splitter.

Both are deliberately simple (regular expressions, no trained model) so that a reader can
predict their output. Corpora that come tokenized (Brown) keep their own tokens.
"""

from __future__ import annotations

import re

# Typographic apostrophes and dashes become their ASCII forms before matching.
_NORMALISE = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"})
# A word: letters/digits, with inner apostrophes or hyphens ("don't", "well-known", "1,000" is
# split at the comma on purpose: numbers are rare tokens either way).
_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")
_WORD_OR_PUNCT = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*|[^\w\s]")


def tokenize(text: str, *, lower: bool = True, keep_punct: bool = False) -> list[str]:
    """Split text into word tokens: the book's one tokenizer.

    Words are runs of letters and digits, keeping inner apostrophes and hyphens
    (``"don't"``, ``"well-known"``); punctuation is dropped unless ``keep_punct``, in which
    case each punctuation character is its own token. Curly apostrophes count as ``'``.

    Args:
        text: the text.
        lower: lower-case the tokens (the default).
        keep_punct: keep punctuation characters as tokens.

    Example:
        >>> tokenize("Call me Ishmael. Some years ago\u2014never mind how long")
        ['call', 'me', 'ishmael', 'some', 'years', 'ago', 'never', 'mind', 'how', 'long']
        >>> tokenize("It\u2019s well-known!", keep_punct=True)
        ["it's", 'well-known', '!']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}; "
                        f"join a list of strings first, or call it on each one")
    text = text.translate(_NORMALISE)
    if lower:
        text = text.lower()
    return (_WORD_OR_PUNCT if keep_punct else _WORD).findall(text)


# Abbreviations after which a full stop does not end a sentence (lower-cased, without the dot).
_ABBREV = frozenset(
    "mr mrs ms dr st jr sr gen col lt capt sen rep gov hon messrs prof rev vs etc no nos vol "
    "jan feb mar apr jun jul aug sep sept oct nov dec co corp inc ltd u.s u.s.a d.c i.e e.g".split()
)
_BOUNDARY = re.compile(r"([.!?]['\"\u201d\u2019)]*)\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences with a few rules (no trained model).

    A sentence ends at ``.``, ``!`` or ``?`` (optionally followed by closing quotes or a
    bracket) when whitespace and an upper-case letter or digit follow, unless the word before
    the full stop is a known abbreviation (``Mr.``, ``U.S.``, ``Jan.``) or a single initial.

    Example:
        >>> split_sentences("Mr. Smith went to Washington. He spoke! Did he?")
        ['Mr. Smith went to Washington.', 'He spoke!', 'Did he?']
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects a str, got {type(text).__name__}")
    sents: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end(1)
        if m.group(1).startswith("."):
            words = text[start:m.start(1)].split()
            last = words[-1].lower().lstrip("\"'(\u201c") if words else ""
            if last in _ABBREV or (len(last) == 1 and last.isalpha()):
                continue
        piece = text[start:end].strip()
        if piece:
            sents.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sents.append(tail)
    return sents
