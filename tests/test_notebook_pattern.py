"""Every chapter notebook follows the book's pattern (book/contributing.md, issue 10), checked
on the stored notebooks (nothing is executed):

* code cells: at most 88 characters a line, formatted as `ruff format --line-length 88` would
  leave them, at most 15 lines unless tagged ``hide-input``; no ``display(Markdown(...))``
  (numbers enter prose through myst-nb's ``glue``);
* stored outputs never show a hint (the word "Hint", or any registered hint tier or
  explanation), a passed check, a line of a reference solution, or (where practical) a value a
  reference solution returns on the hidden cases;
* a chapter (one or more notebooks with the same number) uses at least 6 exercises of at least
  3 kinds, and every exercise registered for it appears in it; a cell that shows or checks an
  exercise is tagged ``exercise`` (``make student`` clears those cells' outputs).

Notebooks being revised are listed in PENDING (fnmatch patterns): their test is an expected
failure, and a strict one, so a notebook that becomes compliant must be taken off the list.
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import math
import re
import shutil
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
MAX_LINE = 88
MAX_CELL_LINES = 15
MIN_EXERCISES, MIN_KINDS = 6, 3
HIDE_TAGS = {"hide-input", "hide-cell", "remove-input", "remove-cell"}

PENDING = {
}


def _pending(name: str) -> str | None:
    return next((why for pat, why in PENDING.items() if fnmatch.fnmatch(name, pat)), None)


def _params():
    out = []
    for path in NOTEBOOKS:
        why = _pending(path.name)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(path, id=path.name, marks=marks))
    return out


def _chapter(path: Path) -> str:
    return "ch" + re.match(r"^(\d\d)", path.name).group(1)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _output_text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append("".join(out["text"]) if isinstance(out["text"], list) else out["text"])
        for mime in ("text/plain", "text/markdown", "text/html", "text/latex"):
            data = out.get("data", {}).get(mime)
            if data:
                parts.append("".join(data) if isinstance(data, list) else data)
        if "traceback" in out:
            parts.append("\n".join(out["traceback"]))
    return "\n".join(parts)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", textwrap.dedent(text)).strip()


# --------------------------------------------------------------------------- what must not show


@cache
def _secrets(chapter: str) -> tuple[tuple[str, str], ...]:
    """(what, text) pairs that must not appear in a chapter's stored outputs: every hint tier
    and explanation of every exercise, and the distinctive lines of the chapter's solutions."""
    from companion.exercises import all_exercises

    found = []
    for ex in all_exercises().values():
        for k, tier in enumerate(ex.hints, start=1):
            text = _squash(tier)
            found.append((f"hint {k} of {ex.id}", text[:60]))
    try:
        import importlib

        module = importlib.import_module(f"solutions.{chapter}")
    except ModuleNotFoundError:
        return tuple(found)
    stubs = {ln.strip() for ex in all_exercises().values() if ex.chapter == chapter and ex.stub
             for ln in _safe_source(ex.stub).splitlines()}
    for name, fn in vars(module).items():
        if not inspect.isfunction(fn) or fn.__module__ != module.__name__:
            continue
        body = _safe_source(fn)
        for ln in body.splitlines()[1:]:
            line = ln.strip()
            if len(line) >= 30 and not line.startswith(("#", '"', "'", "def ", "return ")) \
                    and line not in stubs:
                found.append((f"a line of solutions/{chapter}.py:{name}", line))
    return tuple(found)


def _safe_source(fn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _scalars(value, depth: int = 0):
    if isinstance(value, bool):
        return
    if isinstance(value, float) and math.isfinite(value):
        if len(repr(value)) >= 8:
            yield repr(value)
    elif isinstance(value, int):
        if abs(value) >= 10_000:
            yield repr(value)
    elif isinstance(value, (list, tuple)) and depth < 2 and len(value) <= 10:
        for v in value:
            yield from _scalars(v, depth + 1)


@cache
def _answers(chapter: str) -> tuple[tuple[str, str], ...]:
    """Reprs of values the chapter's reference solutions return on the hidden cases (long
    floats and large integers only: short ones occur everywhere by chance)."""
    import solutions
    from companion.exercises import all_exercises

    found = []
    for ex in all_exercises().values():
        if ex.chapter != chapter or not ex.has_cases:
            continue
        try:
            fn = solutions.get(ex.id)
        except LookupError:
            continue
        for i, case in enumerate(ex.build_cases(), start=1):
            try:
                got = fn(*case.args, **case.kwargs)
            except Exception:  # noqa: BLE001 - test_exercises.py reports broken solutions
                continue
            # a value the task itself states (fnv1a_32("") is the offset basis) is no secret
            found += [(f"the answer of {ex.id} on check {i}", r) for r in _scalars(got)
                      if r not in ex.prompt]
    return tuple(found)


# --------------------------------------------------------------------------- the checks


def _ruff_problems(path: Path) -> list[str]:
    """Code cells that `ruff format --line-length 88` would change (ruff formats a copy; only
    the code is compared, not how the notebook's JSON is laid out)."""
    import tempfile

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        return ["ruff is not installed (it is in the test extra): cannot check the formatting"]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        proc = subprocess.run([ruff, "format", "--isolated", f"--line-length={MAX_LINE}", str(copy)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return [f"ruff could not format the code: {proc.stderr.strip()[:300]}"]
        after = _load(copy)["cells"]
    before = _load(path)["cells"]
    cells = [i for i, (a, b) in enumerate(zip(before, after))
             if a["cell_type"] == "code" and _source(a).rstrip() != _source(b).rstrip()]
    if not cells:
        return []
    return [f"code not formatted as `ruff format --line-length {MAX_LINE}` would: cells "
            f"{', '.join(map(str, cells))} (run `ruff format --line-length {MAX_LINE} {path.name}`)"]


def _cell_problems(nb: dict) -> list[str]:
    problems = []
    code_number = 0
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        code_number += 1
        src, where = _source(cell), f"cell {index}"
        for n, line in enumerate(src.splitlines(), start=1):
            if len(line) > MAX_LINE:
                problems.append(f"{where} line {n} has {len(line)} > {MAX_LINE} characters")
        if "display(Markdown(" in src.replace(" ", "").replace("\n", ""):
            problems.append(f"{where} uses display(Markdown(...)): glue the numbers into the prose")
        lines = [ln for ln in src.splitlines() if ln.strip()]
        if len(lines) > MAX_CELL_LINES and not (_tags(cell) & HIDE_TAGS):
            problems.append(f"{where} has {len(lines)} > {MAX_CELL_LINES} lines and is not tagged hide-input")
    return problems


def _leak_problems(nb: dict, chapter: str) -> list[str]:
    problems = []
    secrets, answers = _secrets(chapter), _answers(chapter)
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        text = _output_text(cell)
        if not text:
            continue
        flat = _squash(text)
        if re.search(r"\bHint\b", text):
            problems.append(f"cell {index}'s stored output shows a hint (the word 'Hint')")
        if re.search(r"✓ ch\d\d\.", text):
            problems.append(f"cell {index}'s stored output shows a passed check (an answer)")
        for what, secret in secrets:
            if secret and secret in flat:
                problems.append(f"cell {index}'s stored output shows {what}: {secret[:50]!r}")
        # a check report may show the expected value of one hidden case; elsewhere it is an answer
        body = "\n".join(ln for ln in text.splitlines() if "First failure" not in ln)
        src = _source(cell)
        for what, value in answers:
            if re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", body) and value not in src:
                problems.append(f"cell {index}'s stored output shows {what} ({value})")
    return problems


def _exercise_problems(path: Path) -> list[str]:
    from companion.exercises import all_exercises

    chapter = _chapter(path)
    siblings = [p for p in NOTEBOOKS if _chapter(p) == chapter]
    problems_tags: list[str] = []
    used = set()
    for p in siblings:
        for cell in _load(p)["cells"]:
            if cell["cell_type"] == "code":
                used |= set(re.findall(rf"""["']({chapter}\.[a-z_][a-z0-9_]*)["']""", _source(cell)))
    for index, cell in enumerate(_load(path)["cells"]):  # the student edition finds them by tag
        if cell["cell_type"] == "code" and re.search(r"""\b(show|check)\(\s*["']ch\d\d\.""", _source(cell)) \
                and "exercise" not in _tags(cell):
            problems_tags.append(f"cell {index} works on an exercise but is not tagged 'exercise'")
    registered = {i: ex for i, ex in all_exercises().items() if ex.chapter == chapter}
    problems = problems_tags + [f"{i} is used in the notebook but not registered"
                                for i in sorted(used - set(registered))]
    problems += [f"{i} is registered but no notebook of {chapter} uses it" for i in sorted(set(registered) - used)]
    kinds = {registered[i].kind for i in used if i in registered}
    n = len(used & set(registered))
    if n < MIN_EXERCISES or len(kinds) < MIN_KINDS:
        problems.append(f"{chapter} has {n} exercises of {len(kinds)} kinds ({', '.join(sorted(kinds))}); "
                        f"the pattern asks for at least {MIN_EXERCISES} of {MIN_KINDS} kinds")
    return problems


def notebook_problems(path: Path) -> list[str]:
    """Everything in ``path`` that breaks the pattern, in plain words (empty if nothing)."""
    nb = _load(path)
    chapter = _chapter(path)
    return (_cell_problems(nb) + _ruff_problems(path) + _leak_problems(nb, chapter)
            + _exercise_problems(path))


@pytest.mark.parametrize("path", _params())
def test_notebook_follows_the_pattern(path):
    problems = notebook_problems(path)
    assert not problems, f"{path.name} breaks the chapter pattern:\n  " + "\n  ".join(problems)


def test_pending_entries_name_existing_notebooks():
    names = [p.name for p in NOTEBOOKS]
    for pattern in PENDING:
        assert any(fnmatch.fnmatch(n, pattern) for n in names), f"PENDING entry {pattern!r} matches no notebook"


# --------------------------------------------------------------------------- the checker itself


def _nb(*cells):
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _code(src, outputs=(), tags=()):
    return {"cell_type": "code", "source": src, "metadata": {"tags": list(tags)},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": t} for t in outputs],
            "execution_count": None}


def test_checker_catches_long_lines_long_cells_and_markdown_displays():
    long_cell = "\n".join(f"x{i} = {i}" for i in range(16))
    problems = _cell_problems(_nb(
        _code("x = '" + "a" * 90 + "'"),
        _code(long_cell),
        _code(long_cell, tags=["hide-input"]),
        _code('display(Markdown(f"{x}"))'),
    ))
    assert any("cell 0 line 1 has 96" in p for p in problems)
    assert any("cell 1 has 16 > 15 lines" in p for p in problems)
    assert not any(p.startswith("cell 2") for p in problems)
    assert any("cell 3 uses display(Markdown" in p for p in problems)


def test_checker_catches_hints_answers_and_solution_lines(tmp_path):
    from companion.exercises import get

    tier = get("ch00.type_token_ratio").hints[0]
    problems = _leak_problems(_nb(
        _code("check(...)", outputs=["✗ failed.\n  Stuck? hint('ch00.x', 1) gives a nudge."]),
        _code("hint('ch00.type_token_ratio', 1)", outputs=[f"Hint 1 of 2:\n{tier}"]),
        _code("check('ch00.type_token_ratio', f)", outputs=["✓ ch00.type_token_ratio: all 6 checks passed."]),
        _code("print(5 / 6)", outputs=["0.8333333333333334"]),
    ), "ch00")
    assert not any(p.startswith("cell 0") for p in problems)
    assert any(p.startswith("cell 1") and "the word 'Hint'" in p for p in problems)
    assert any(p.startswith("cell 1") and "hint 1 of ch00.type_token_ratio" in p for p in problems)
    assert any(p.startswith("cell 2") and "passed check" in p for p in problems)
    assert any(p.startswith("cell 3") and "the answer of ch00.type_token_ratio" in p for p in problems)


def test_ruff_check_reports_unformatted_cells(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y=[1,2 ,3]")]
    path = tmp_path / "99_x.ipynb"
    nbformat.write(nb, path)
    problems = _ruff_problems(path)
    assert len(problems) == 1 and "cells 1 (run" in problems[0]
    nb.cells[1].source = "y = [1, 2, 3]"
    nbformat.write(nb, path)
    assert _ruff_problems(path) == []


def test_checker_wants_exercise_cells_tagged(tmp_path):
    path = tmp_path / "00_x.ipynb"
    path.write_text(json.dumps(_nb(_code('show("ch00.coverage")'),
                                   _code('check("ch00.coverage", f)', tags=["exercise"]))))
    problems = _exercise_problems(path)
    assert "cell 0 works on an exercise but is not tagged 'exercise'" in problems
    assert not any(p.startswith("cell 1") for p in problems)
