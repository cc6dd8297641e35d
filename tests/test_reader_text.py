"""The chapters' reader text holds no developer notes.

A chapter is read as a book. How its stored outputs were made -- which script trained a stored
model, which benchmark measured a number, which run is stored and which is still to come, the
checksums of files -- belongs on the back-matter page "Reproducing the book"
(``book/reproducing.md``, one heading per chapter), not in the chapter. This test fails, naming
the notebook, the cell and the phrase, when a chapter's reader text says

* a path of a file under ``tests/`` or ``benchmarks/`` (or a ``benchmarks`` module);
* ``sha256`` / ``SHA-256``;
* that a run "has not been run" (``not been run``, ``is not run yet``, ``not stored yet``, ...);
* that a GPU or other machine "was lent";
* "previous version of this chapter" (or an earlier/first version or draft of this chapter, page,
  notebook or section);
* ``TODO`` / ``FIXME`` / ``XXX`` (upper case: the lower-case words are not markers);
* re-create / recreate instructions (a script or command that makes a stored file again);
* a command that runs a script: ``python -m <module>`` or ``python <file>.py``, except the
  reader-facing commands of :data:`READER_COMMANDS`.

What is reader text. The Markdown cells, and what the code cells print: ``stdout`` streams and
the ``text/plain`` and ``text/markdown`` forms of displayed results (a table's HTML form says the
same as its plain form). Code cells' *sources*, comments included, are not checked: they are
code that the reader runs, where a path or a file name is part of the program. ``stderr``
streams are not checked either: they hold library warnings, which are not ours to word.

:data:`READER_COMMANDS` lets through the commands that a reader of the how-to text needs and
that reproduce nothing: fetching and listing the datasets (``python -m companion.data``), listing
and verifying the stored models (``python -m companion.zoo list`` / ``verify``, not ``train``),
and executing a notebook (``python -m companion.execute``). Every other ``python -m`` -- a
benchmark, a script that trains a stored model -- belongs on "Reproducing the book".

:data:`ALLOWED` lists ``(notebook, phrase)`` pairs that are meant, each with its reason;
:data:`PENDING` is a temporary list for chapters whose notes are still being moved. An entry of
:data:`ALLOWED` that no longer matches anything fails the test (the list stays exact); a stale
entry of :data:`PENDING` only warns, so that fixing a chapter never breaks this test.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

_I = re.IGNORECASE
PATTERNS: dict[str, re.Pattern[str]] = {
    # a file or folder under tests/ or benchmarks/ (not the word "benchmarks" in prose: it needs
    # the slash and a name after it), and the benchmarks package as a module
    "repository path": re.compile(r"(?<![\w.-])(?:tests|benchmarks)/[\w./-]*\w"),
    "benchmarks module": re.compile(r"(?<![\w.])benchmarks\.[a-z_]\w*"),
    "checksum": re.compile(r"\bsha-?256\b", _I),
    "not run": re.compile(
        r"\b(?:not\s+(?:yet\s+)?been\s+run|not\s+been\s+(?:trained|stored|measured)"
        r"|(?:is|are|was|were|has|have)\s+not\s+(?:yet\s+)?run\s+yet"
        r"|not\s+(?:yet\s+)?stored\s+yet|not\s+yet\s+(?:been\s+)?(?:run|stored|measured))\b",
        _I,
    ),
    "lent": re.compile(r"\b(?:was|were|been|is|be)\s+lent\b|\bno\s+(?:GPU|accelerator|device)\s+was\b", _I),
    "earlier version": re.compile(
        r"\b(?:previous|earlier|older|first|last|former)\s+(?:version|draft|edition)\s+of\s+this\s+"
        r"(?:chapter|page|notebook|section)\b"
        r"|\bthis\s+(?:chapter|page|notebook|section)'s\s+(?:previous|earlier|older|first|former)\s+(?:version|draft)\b",
        _I,
    ),
    "marker": re.compile(r"\b(?:TODO|FIXME|XXX)\b"),
    "re-create": re.compile(r"\bre-?creat(?:e|es|ed|ing)\b", _I),
    "command": re.compile(r"\bpython3?\s+(?:-m\s+[\w.]+(?:\s+[a-z][\w-]*)?|[\w./-]+\.py\b)"),
}

READER_COMMANDS = re.compile(
    r"python3?\s+-m\s+(?:companion\.data(?:\s+(?:fetch|list|verify))?"
    r"|companion\.zoo(?:\s+(?:list|verify))?"
    r"|companion\.execute(?:\s+notebooks)?)$"
)
"""The ``python -m`` commands a reader of the how-to text may be told (see the module docstring)."""

ALLOWED: dict[tuple[str, str], str] = {
    ("00_how_to_use", "SHA-256"): "chapter 0 tells the reader how each dataset is verified before use",
    ("00_how_to_use", "sha256"): "chapter 0's table of the datasets, with the hash each is verified against",
}
"""``(notebook stem, matched phrase) -> reason``: hits that are meant, for good."""

# --- TEMPORARY: chapters whose developer notes are still being moved to book/reproducing.md. ---
# Only chapters 07b, 07c, 08a, 08b, 09, 10a, 10b, 11 and 11b may appear here. Delete an entry as
# soon as its chapter is fixed; a stale entry prints a warning in the test summary.
PENDING: set[tuple[str, str]] = set()  # every chapter is clean
# --- END TEMPORARY ---


def reader_texts(path: Path) -> list[tuple[int, str, str]]:
    """``(cell index, kind, text)`` of every piece of reader text in a notebook.

    ``kind`` is ``"markdown"`` for a Markdown cell's source and ``"output"`` for what a code cell
    printed or displayed (``stdout``, ``text/plain``, ``text/markdown``).
    """
    out = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "markdown":
            out.append((i, "markdown", "".join(cell["source"])))
        elif cell["cell_type"] == "code":
            for o in cell.get("outputs", []):
                if o.get("output_type") == "stream":
                    if o.get("name") == "stdout":
                        out.append((i, "output", "".join(o["text"])))
                elif "data" in o:
                    for mime in ("text/plain", "text/markdown"):
                        if mime in o["data"]:
                            out.append((i, "output", "".join(o["data"][mime])))
    return out


def find_notes(text: str) -> list[tuple[str, str, str]]:
    """``(pattern name, matched phrase, context)`` for every developer note in ``text``."""
    found = []
    for name, pattern in PATTERNS.items():
        for m in pattern.finditer(text):
            phrase = " ".join(m.group(0).split())
            if name == "command" and READER_COMMANDS.match(phrase):
                continue
            a, b = max(0, m.start() - 60), min(len(text), m.end() + 60)
            found.append((name, phrase, " ".join(text[a:b].split())))
    return found


def notebook_hits(path: Path) -> list[tuple[int, str, str, str, str]]:
    """``(cell, kind, pattern name, phrase, context)`` of every hit in one notebook."""
    return [(i, kind, *hit) for i, kind, text in reader_texts(path) for hit in find_notes(text)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_developer_notes_in_reader_text(path: Path) -> None:
    bad = [
        f"  {path.name}, cell {i} ({kind}): {name} {phrase!r} in ...{context}..."
        for i, kind, name, phrase, context in notebook_hits(path)
        if (path.stem, phrase) not in ALLOWED and (path.stem, phrase) not in PENDING
    ]
    assert not bad, (
        "developer notes in reader text (move them to book/reproducing.md under the chapter's "
        "heading, and link that page from the prose if the reader needs it):\n" + "\n".join(bad)
    )


def _all_phrases() -> set[tuple[str, str]]:
    return {(p.stem, hit[3]) for p in NOTEBOOKS for hit in notebook_hits(p)}


def test_allowed_entries_are_used() -> None:
    stale = set(ALLOWED) - _all_phrases()
    assert not stale, f"ALLOWED entries that match nothing any more (delete them): {sorted(stale)}"


def test_pending_entries() -> None:
    pending_chapters = {"07b", "07c", "08a", "08b", "09", "10a", "10b", "11", "11b"}
    wrong = {e for e in PENDING if e[0].split("_")[0] not in pending_chapters}
    assert not wrong, f"PENDING is only for chapters still being fixed: {sorted(wrong)}"
    stale = PENDING - _all_phrases()
    if stale:
        warnings.warn(f"PENDING entries that match nothing any more (delete them): {sorted(stale)}", stacklevel=1)


@pytest.mark.parametrize(
    "text",
    [
        "The stored run (`benchmarks/gpu/ch02_gpu_scale.py`, once)",
        "`tests/test_contextual_awd.py` checks the rates",
        "The benchmark (`python -m benchmarks.bench_word2vec`) checks this",
        "`python -m benchmarks word2vec` measures it",
        "BOOK_SCALE=laptop python benchmarks/ch05_seeds.py out.json 1",
        "weights checked against their sha256",
        "the gpu preset is such a run; it has not been run yet",
        "It is written but has\nnot been run.",
        "its result is not stored yet.",
        "no GPU was lent for this page",
        "A previous version of this chapter trained it for longer",
        "A first version of this section gave every blank the same fillers",
        "TODO: rerun at gpu scale",
        "To recreate the stored file, run the script",
        "`python -m companion.contextual.small_elmo` trained it",
        "`python -m companion.zoo train bert-book --scale laptop` trained it",
    ],
)
def test_patterns_catch(text: str) -> None:
    assert find_notes(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Word-similarity benchmarks turn looks right into a number.",
        "a single optimizer loop cannot run two workers",
        "the model that is trained and stored is smaller",
        "`python -m companion.data fetch --all` fetches everything; `python -m companion.data list` shows",
        "`python -m companion.zoo list` shows the stored models",
        "Reference solutions are in `solutions/ch03.py`; try first.",
        "`ScalarMix` in `companion/contextual/elmo.py`",
        "write your guess in place of None, before you run the experiment",
        "the types occur only once, yet the types seen at most three times",
        "a todo list; a fix-me note",
        "the tests of the package, and `make test`",
        "its per-token scores are stored beside the weights",
        "Nobody told the algorithm about parts of speech, yet determiners come out together",
    ],
)
def test_patterns_spare_prose(text: str) -> None:
    assert not find_notes(text), find_notes(text)
