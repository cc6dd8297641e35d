"""Answers kept out of plain sight, for the student edition (``make student``).

In the book (the instructor's copy) an exercise holds its answer in clear: ``answer="c"`` and an
``explanation``. The student edition's copy of ``companion/exercises`` is rewritten by
:func:`seal_source`: every ``answer=`` of a ``concept`` question or of a ``derive`` exercise
answered by a number becomes a :class:`Sealed` value, and every ``explanation=`` becomes ``""``.
``check`` works the same on both copies.

* A choice letter is stored as ``sha256(salt:id:letter)``; ``check`` hashes the reader's letter
  the same way and compares.
* A number (checked within a tolerance, so a hash of it would not do) is stored XOR-ed with a
  key stream derived from the salt and the id: ``check`` recovers it to compare.

Limits, honestly: this keeps answers out of *plain sight*, it is not security. A student can
hash the four letters of a question, or run :meth:`Sealed.value` (the code is in the package),
in a minute. What it prevents is reading the answer key by opening ``chNN.py``, or by a
``grep`` over the package, and being shown the explanation that gives the answer away.
"""

from __future__ import annotations

import ast
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the kinds whose ``answer=`` is sealed (``derive`` only where it is answered by a number)
SEALED_KINDS = ("concept", "derive")


def _digest(salt: str, exercise_id: str, text: str) -> str:
    return hashlib.sha256(f"{salt}:{exercise_id}:{text}".encode()).hexdigest()


def _key_stream(salt: str, exercise_id: str, n: int) -> bytes:
    out = b""
    block = 0
    while len(out) < n:
        out += hashlib.sha256(f"{salt}:{exercise_id}:{block}".encode()).digest()
        block += 1
    return out[:n]


@dataclass(frozen=True)
class Sealed:
    """A sealed answer: ``kind`` is ``"choice"`` (``data`` is a salted SHA-256 of the letter)
    or ``"number"`` (``data`` is the number's ``repr`` XOR-ed with a key stream, in hex)."""

    exercise_id: str
    kind: str
    salt: str
    data: str

    def matches(self, letter: str) -> bool:
        """Whether ``letter`` (already normalised, e.g. ``"b"``) is the sealed choice."""
        if self.kind != "choice":
            raise TypeError(f"{self.exercise_id}: the sealed answer is a number, not a choice")
        return secrets.compare_digest(_digest(self.salt, self.exercise_id, letter.lower()), self.data)

    def value(self) -> int | float:
        """The sealed number."""
        if self.kind != "number":
            raise TypeError(f"{self.exercise_id}: the sealed answer is a choice, not a number")
        raw = bytes.fromhex(self.data)
        text = bytes(a ^ b for a, b in zip(raw, _key_stream(self.salt, self.exercise_id, len(raw))))
        return ast.literal_eval(text.decode())

    def __repr__(self) -> str:  # what a reader sees who prints ex.answer
        return f"<sealed {self.kind}>"


def seal(exercise_id: str, answer: Any, salt: str | None = None) -> Sealed:
    """``answer`` (a choice letter or a number) as a :class:`Sealed` value."""
    salt = secrets.token_hex(8) if salt is None else salt
    if isinstance(answer, str):
        return Sealed(exercise_id, "choice", salt, _digest(salt, exercise_id, answer.strip().lower()))
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise TypeError(f"{exercise_id}: only a choice letter or a number can be sealed, got {answer!r}")
    text = repr(answer).encode()
    if ast.literal_eval(text.decode()) != answer:
        raise ValueError(f"{exercise_id}: {answer!r} does not survive its repr")
    data = bytes(a ^ b for a, b in zip(text, _key_stream(salt, exercise_id, len(text)))).hex()
    return Sealed(exercise_id, "number", salt, data)


def _offsets(source: str) -> Callable[[int, int], int]:
    """(line, utf-8 column) of an AST node to an index into ``source``."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def index(lineno: int, col: int) -> int:
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode()[:col].decode())
    return index


def seal_source(source: str, exercises: dict[str, Any], filename: str = "<chapter module>") -> str:
    """The chapter module ``source`` with every ``Exercise(...)``'s explanation emptied and its
    answer sealed (``concept``, and ``derive`` answered by a number). ``exercises`` maps ids to
    the registered exercises, whose answers are read from there.

    Raises:
        ValueError: for an ``Exercise(...)`` whose ``id=`` is not a plain string, or that is not
            registered, so nothing is left unsealed by accident.
    """
    tree = ast.parse(source, filename)
    index = _offsets(source)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Exercise"):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        id_node = keywords.get("id")
        if not (isinstance(id_node, ast.Constant) and isinstance(id_node.value, str)):
            raise ValueError(f"{filename}:{node.lineno}: Exercise(id=...) must be a plain string to be sealed")
        ex = exercises.get(id_node.value)
        if ex is None:
            raise ValueError(f"{filename}:{node.lineno}: {id_node.value} is not registered")

        def span(value: ast.AST) -> tuple[int, int]:
            return index(value.lineno, value.col_offset), index(value.end_lineno, value.end_col_offset)

        if "explanation" in keywords:
            edits.append((*span(keywords["explanation"]), '""'))
        if "answer" in keywords and ex.kind in SEALED_KINDS:
            s = seal(ex.id, ex.answer)
            edits.append((*span(keywords["answer"]),
                          f"_Sealed({s.exercise_id!r}, {s.kind!r}, {s.salt!r}, {s.data!r})"))
    if not edits:
        return source
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    # the import goes before the first statement that is neither the docstring nor a __future__ import
    body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))]
    first = index(body[0].lineno, 0) if body else len(source)
    assert all(start >= first for start, _, _ in edits)
    return source[:first] + "from companion.exercises.sealed import Sealed as _Sealed\n" + source[first:]


__all__ = ["SEALED_KINDS", "Sealed", "seal", "seal_source"]
