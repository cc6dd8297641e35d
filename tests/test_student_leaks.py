"""The student edition gives no answer away: for every registered exercise, neither its
explanation (shown only after a right answer) nor a line of its reference solution appears in
the student notebooks' prose, code or stored outputs."""

from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

import pytest

import solutions
from companion.exercises import all_ids, get
from companion.student import build

MIN_LINE = 40        # shorter solution lines are idioms any chapter may contain
EXPLANATION_HEAD = 70


def _norm(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def student_text(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("student") / "edition"
    build(out)
    texts = {}
    for path in sorted((out / "notebooks").glob("*.ipynb")):
        parts = []
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            parts.append("".join(cell["source"]))
            for output in cell.get("outputs", []):
                parts.append("".join(output.get("text", "")))
                parts += ["".join(v) for k, v in output.get("data", {}).items() if k.startswith("text/")]
        texts[path.name] = _norm(" ".join(parts))
    return texts


def _solution_lines(exercise_id: str) -> list[str]:
    ex = get(exercise_id)
    if ex.kind == "extend":  # open tasks build on the chapter's own code
        return []
    try:
        source = inspect.getsource(solutions.get(exercise_id))
    except (LookupError, OSError, TypeError):
        return []
    shown = _norm(inspect.getsource(ex.stub)) if ex.stub is not None else ""  # a debug stub is shown
    body = source.split('"""')[-1] if source.count('"""') >= 2 else source
    lines = []
    for line in body.splitlines():
        line = _norm(line)
        if len(line) < MIN_LINE or line.startswith(("#", "def ", "import ", "from ")) or line in shown:
            continue
        lines.append(line)
    return lines


@pytest.mark.parametrize("exercise_id", all_ids())
def test_no_answer_in_the_student_edition(exercise_id, student_text):
    ex = get(exercise_id)
    leaks = []
    if ex.explanation:
        head = _norm(textwrap.dedent(ex.explanation))[:EXPLANATION_HEAD]
        leaks += [(name, "explanation", head) for name, text in student_text.items()
                  if len(head) > 30 and head in text]
    for line in _solution_lines(exercise_id):
        leaks += [(name, "solution line", line) for name, text in student_text.items() if line in text]
    assert not leaks, f"{exercise_id}'s answer shows in the student edition: {leaks}"
