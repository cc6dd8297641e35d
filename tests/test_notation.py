"""One symbol for one thing across the book, as book/notation.md reserves them: the chapters'
Markdown must not write a reserved quantity with another chapter's symbol."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTATION = (ROOT / "book" / "notation.md").read_text(encoding="utf-8")
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))

# (what, the symbol notation.md reserves, a pattern of the other spellings found in earlier drafts)
RESERVED = [
    ("the width of a hidden layer", "$d_h$",
     re.compile(r"hidden (?:layer|units?)[^.$]{0,25}\$(?:H|M|n_h)\$|\$(?:H|M)\$ (?:tanh |hidden )?units")),
    ("the width of a head's queries and keys (the attention scale)", "$d_k$",
     re.compile(r"\\sqrt\{d_h\}|\\sqrt\{d_\{head\}\}")),
    ("GloVe's and word2vec's context (output) vector", "$u_w$",
     re.compile(r"\\tilde\{?w\}?_|\\tilde\{w\}|\\tilde w\b")),
    ("the embedding matrix", "$C$", re.compile(r"embedding matrix \$E\b")),
]


def test_the_reserved_symbols_are_in_the_notation_table():
    for what, symbol, _ in RESERVED:
        rows = [line for line in NOTATION.splitlines() if line.startswith("| ")]
        assert any(symbol[:-1] in row.split("|")[1] for row in rows), f"{symbol} ({what}) is not in book/notation.md"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapters_use_the_reserved_symbols(path):
    problems = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        for what, symbol, other in RESERVED:
            for m in other.finditer(text):
                problems.append(f"cell {i}: {m.group(0)!r} for {what}; the book writes {symbol}")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)
