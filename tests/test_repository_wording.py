"""The repository speaks of the book and the code, not of how the work on it was organised.

A benchmark docstring gives a measurement (date, machine, load, command, numbers); who ran it and
in which sitting of the work belong to git's history, not to the text a reader sees. This test
fails when a tracked text file says ``session(s)``, ``agent(s)``, ``the lead`` or ``this wave``.

Scope: every file ``git ls-files`` lists, read as UTF-8 text (a file that is not text -- weights,
images -- is skipped), except third-party data kept verbatim: corpus vocabularies and BPE tables
(``vocab.json``, ``tgt_vocab.json``, ``encoder.json``, ``*.bpe``: words of the corpora) and the
bibliography (``book/references.bib``: papers' titles), and this file. Notebooks are checked too, on their cells'
*sources* only (Markdown and code, what the book's authors write); their stored outputs print
corpus text and library messages, which are not ours to word. :data:`ALLOWED` lists the hits that
are meant (none at present; add one with its reason).

The patterns leave the legitimate neighbours alone: ``cc:Agent`` in an SVG's licence metadata
(an RDF term), ``requests.Session(`` and other code identifiers (a match right after ``.`` or
``:`` or before ``(`` does not count). An agent in the reinforcement-learning sense, should a
chapter need one, goes into :data:`ALLOWED`. "helper" is not checked: in this code it names
helper functions, and no pattern could tell the two senses apart.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PATTERNS = {
    "session": re.compile(r"(?<![.:\w])sessions?\b(?!\s*\()", re.IGNORECASE),
    "agent": re.compile(r"(?<![.:/\w])agents?\b(?!\s*\()", re.IGNORECASE),
    "the lead": re.compile(r"\bthe lead\b(?!\s+(?:author|singer|actor)s?\b)", re.IGNORECASE),
    "this wave": re.compile(r"\bthis wave\b", re.IGNORECASE),
}

SKIP_NAMES = {"vocab.json", "tgt_vocab.json", "encoder.json"}
SKIP_SUFFIXES = {".bpe", ".safetensors", ".png", ".jpg", ".jpeg", ".gif", ".pdf", ".woff", ".woff2"}
SKIP_PATHS = {"book/references.bib", "tests/test_repository_wording.py"}  # this file names the words

ALLOWED: set[tuple[str, str]] = set()
"""``(path, the matched line stripped)`` pairs that are meant (e.g. an RL agent in a chapter)."""


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [p for p in out.decode("utf-8").split("\0") if p]


def checked_text(path: str) -> str | None:
    """The text to check, or ``None`` for a file out of scope."""
    p = Path(path)
    if p.name in SKIP_NAMES or p.suffix in SKIP_SUFFIXES or path in SKIP_PATHS:
        return None
    try:
        raw = (REPO / p).read_bytes()
    except (FileNotFoundError, IsADirectoryError):  # deleted in the working tree, or a submodule
        return None
    if b"\0" in raw[:8192]:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if p.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        return "\n".join("".join(c.get("source", "")) for c in cells)
    return text


def hits(path: str, text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        for name, pattern in PATTERNS.items():
            if pattern.search(line) and (path, line.strip()) not in ALLOWED:
                out.append(f"{path}: {name!r}: {line.strip()[:160]}")
    return out


def test_the_patterns():
    def found(line):
        return [n for n, p in PATTERNS.items() if p.search(line)]

    assert found("Measured in session 5 (2 cores shared by several agents)") == ["session", "agent"]
    assert found("Then on the quiet machine (the lead, load 0.6)") == ["the lead"]
    assert found("rows other sessions stored") == ["session"]
    assert found("work done in this wave") == ["this wave"]
    assert found("     <cc:Agent>") == []
    assert found("s = requests.Session()") == []
    assert found("sess = ort.InferenceSession(path)") == []
    assert found("the lead author of the paper") == []


def test_no_tracked_file_speaks_of_sessions_agents_or_leads():
    found = []
    for path in tracked_files():
        text = checked_text(path)
        if text is not None:
            found += hits(path, text)
    assert not found, ("say what was measured (date, machine, load, command, numbers), not how the work "
                       "was organised; git keeps the history:\n" + "\n".join(found))
