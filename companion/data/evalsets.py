"""Word-vector evaluation sets, as gensim 4.4.0 ships them (read from the cache, never by
importing gensim): WordSim-353, SimLex-999 and the Google analogy questions.

Words are returned as in the files: WordSim-353 and SimLex-999 are lower-case; the analogy
file has capitalised names (``Athens Greece``) -- lower-case them together with your
vocabulary if your vocabulary is lower-cased.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._io import read_text


def _file(name: str, filename: str, root: str | os.PathLike | None) -> Path:
    if root is None:
        from .fetching import ensure

        root = ensure(name)
    path = Path(root) / filename
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call the loader without root= to use the "
                                f"fetched copy")
    return path


def parse_pairs(text: str, source: str = "<text>") -> list[tuple[str, str, float]]:
    """Parse ``word1 <TAB> word2 <TAB> score`` lines; ``#`` lines are comments.

    Raises:
        ValueError: naming the line that is not two words and a number, or if there is no pair.
    """
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        try:
            w1, w2, score = parts[0].strip(), parts[1].strip(), float(parts[2])
        except (IndexError, ValueError):
            raise ValueError(f"{source} line {lineno}: expected 'word1<TAB>word2<TAB>score', "
                             f"got {line!r}") from None
        out.append((w1, w2, score))
    if not out:
        raise ValueError(f"{source} holds no word pairs")
    return out


def load_wordsim353(root: str | os.PathLike | None = None) -> list[tuple[str, str, float]]:
    """WordSim-353 (Finkelstein et al. 2002): 353 ``(word1, word2, relatedness 0-10)`` triples."""
    path = _file("wordsim353", "wordsim353.tsv", root)
    return parse_pairs(read_text(path), str(path))


def load_simlex999(root: str | os.PathLike | None = None) -> list[tuple[str, str, float]]:
    """SimLex-999 (Hill et al. 2015): 999 ``(word1, word2, similarity 0-10)`` triples."""
    path = _file("simlex999", "simlex999.txt", root)
    return parse_pairs(read_text(path), str(path))


def parse_analogies(text: str, source: str = "<text>") -> list[tuple[str, str, str, str, str]]:
    """Parse the word2vec analogy format: ``: section`` lines, then ``a b c d`` lines.

    Raises:
        ValueError: for a question before any section, or a line that is not four words.
    """
    out = []
    section = None
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(":"):
            section = line[1:].strip()
            if not section:
                raise ValueError(f"{source} line {lineno}: empty section name")
            continue
        words = line.split()
        if section is None or len(words) != 4:
            raise ValueError(f"{source} line {lineno}: expected four words after a ': section' "
                             f"line, got {line!r}")
        out.append((section, *words))
    if not out:
        raise ValueError(f"{source} holds no analogy questions")
    return out


def load_google_analogies(root: str | os.PathLike | None = None) -> list[tuple[str, str, str, str, str]]:
    """The Google analogy questions (Mikolov et al. 2013): ``(section, a, b, c, d)`` tuples,
    read "a is to b as c is to d"; 19,544 questions in 14 sections."""
    path = _file("google_analogies", "questions-words.txt", root)
    return parse_analogies(read_text(path), str(path))
