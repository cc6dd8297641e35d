"""The autograder (companion.grade) on synthetic submissions of a tiny generated notebook.

The notebook imports companion.exercises and checks four real chapter-0 exercises whose checks
take milliseconds (implement, debug, derive, concept). Six students: all correct (the reference
solutions of solutions/ch00.py, pasted in as a student would), all stubs, one wrong, cells that
raise (check() given a result instead of the function; a cell that tries the network), one cell
that loops forever, and cells deleted. One grading run, three kernels at once
(~35 s on a shared, loaded 2-core machine); the argument tests need no kernel.
"""

from __future__ import annotations

import csv
import inspect
import json
import subprocess
import sys
import textwrap

import nbformat
import pytest

import solutions.ch00 as ref
from companion.exercises import all_exercises, check
from companion.grade import (
    CHAPTER_NOTEBOOKS,
    Assignments,
    GradingError,
    find_submissions,
    grade_class,
)
from companion.grade import __main__ as cli
from companion.grade.kernel import BLOCKED

IDS = ["ch00.type_token_ratio", "ch00.coverage", "ch00.zipf_exponent", "ch00.ttr_sample_size"]
TIMEOUT_S = 20.0  # per notebook; the looping student spends it, the others' cells need < 1 s
#: (the loop sleeps rather than spins, to leave the CPU to the other kernels: the time limit
#: stops either kind the same way, by shutting the kernel down)


def _right_choice() -> str:
    """The concept question's right letter, found through check() (works with a hashed key too)."""
    ex = all_exercises()["ch00.ttr_sample_size"]
    return next(k for k in ex.choices if check(ex.id, k, verbose=False))


def _stub(eid: str) -> str:
    return textwrap.dedent(inspect.getsource(all_exercises()[eid].stub))


def _solution(name: str) -> str:
    return textwrap.dedent(inspect.getsource(getattr(ref, name)))


def _cells(variant: str) -> list[str]:
    """Code cells of one synthetic submission."""
    ttr = _stub(IDS[0]) if variant == "stubs" else _solution("type_token_ratio")
    cov = _stub(IDS[1]) if variant in ("stubs", "wrong") else _solution("coverage")
    zipf = _stub(IDS[2]) if variant == "stubs" else _solution("zipf_exponent")
    answer = "None" if variant == "stubs" else repr(_right_choice())
    cells = [
        "import math\nfrom collections.abc import Sequence\n\nfrom companion.exercises import check, show",
        f"{ttr}\ncheck({IDS[0]!r}, type_token_ratio" + ("([])" if variant == "raises" else "") + ")",
        ("import time\nwhile True:\n    time.sleep(0.05)\n" if variant == "loops" else "") + f"{cov}\ncheck({IDS[1]!r}, coverage)",
        ("import socket\nsocket.create_connection(('example.org', 80), timeout=5)\n" if variant == "raises" else "")
        + f"{zipf}\ncheck({IDS[2]!r}, zipf_exponent)",
        f"my_answer = {answer}\ncheck({IDS[3]!r}, my_answer)",
    ]
    if variant == "deleted":
        del cells[4], cells[2]
    return cells


def _notebook(variant: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter 0, graded")]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in _cells(variant)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


EXPECTED = {
    "correct": dict.fromkeys(IDS, "pass"),
    "stubs": dict.fromkeys(IDS, "fail"),
    "wrong": {**dict.fromkeys(IDS, "pass"), "ch00.coverage": "fail"},
    "raises": {IDS[0]: "error", IDS[1]: "pass", IDS[2]: "error", IDS[3]: "pass"},
    "loops": {IDS[0]: "pass", IDS[1]: "error", IDS[2]: "missing", IDS[3]: "missing"},
    "deleted": {IDS[0]: "pass", IDS[1]: "missing", IDS[2]: "pass", IDS[3]: "missing"},
}


def _grade_the_class(root):
    """Grade the six students once: (output folder, gradebook rows by student)."""
    assignment = root / "ch00_tiny.ipynb"
    nbformat.write(_notebook("correct"), str(assignment))
    subs = root / "submissions"
    subs.mkdir()
    for variant in EXPECTED:
        if variant in ("correct", "deleted"):  # nbgrader's layout: a folder per student
            path = subs / variant / "week0" / "ch00_tiny.ipynb"
            path.parent.mkdir(parents=True)
        else:  # otter's layout: a notebook per student
            path = subs / f"{variant}.ipynb"
        nbformat.write(_notebook(variant), str(path))
    (subs / "correct" / ".ipynb_checkpoints").mkdir()
    (subs / "correct" / ".ipynb_checkpoints" / "old-checkpoint.ipynb").write_text("{}")
    out = root / "graded"
    grade_class(subs, out=out, timeout_s=TIMEOUT_S, jobs=3, assignment=[assignment])
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return out, rows


@pytest.mark.slow
def test_grading_a_synthetic_class(tmp_path):
    """One test (not a module fixture), so that pytest-xdist never runs the kernels twice."""
    out, rows = _grade_the_class(tmp_path)
    # each exercise is graded on its own: a crash, a timeout, a deleted cell cost only theirs
    for student, expected in EXPECTED.items():
        row = rows[student]
        assert {eid: row[eid] for eid in IDS} == expected, student
        for status, column in [("pass", "passed"), ("fail", "failed"), ("error", "error"), ("missing", "missing")]:
            assert int(row[column]) == sum(v == status for v in expected.values()), (student, column)
        assert int(row["possible"]) == len(IDS)
        assert float(row["percent"]) == pytest.approx(100 * int(row["passed"]) / len(IDS), abs=0.05)
    # the gradebook's columns follow the assignment
    header = (out / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == ["student", *IDS, "passed", "failed", "error", "missing", "possible", "percent", "notes"]
    # the feedback carries the checker's messages
    assert sorted(p.stem for p in (out / "feedback").glob("*.md")) == sorted(EXPECTED)
    wrong = (out / "feedback" / "wrong.md").read_text(encoding="utf-8")
    assert "3 of 4 exercises passed" in wrong
    assert "### `ch00.coverage`: fail" in wrong and "check 1" in wrong and "Re-run it" in wrong
    stubs = (out / "feedback" / "stubs.md").read_text(encoding="utf-8")
    assert "NotImplementedError" in stubs and "no answer yet" in stubs
    raises = (out / "feedback" / "raises.md").read_text(encoding="utf-8")
    assert "check() raised TypeError: check() needs your function itself" in raises  # called it
    assert BLOCKED in raises  # the cell tried the network: that cell's exercise only
    loops = (out / "feedback" / "loops.md").read_text(encoding="utf-8")
    assert "time limit" in loops.lower() and "not reached" in loops
    assert "time limit" in rows["loops"]["notes"]
    deleted = (out / "feedback" / "deleted.md").read_text(encoding="utf-8")
    assert "no cell of the notebook names it" in deleted
    # the executed copies and results.json
    assert (out / "executed" / "wrong" / "wrong.ipynb").is_file()
    assert (out / "executed" / "correct" / "week0" / "ch00_tiny.ipynb").is_file()
    results = {r["student"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    loops = results["loops"]["notebooks"][0]
    assert loops["outcome"] == "time limit" and loops["seconds"] < TIMEOUT_S + 5


# --------------------------------------------------------------------------- arguments


def test_layout_finds_students_and_skips_checkpoints(tmp_path):
    (tmp_path / "alice.ipynb").write_text("{}")
    (tmp_path / "bob" / "hw1").mkdir(parents=True)
    (tmp_path / "bob" / "hw1" / "a.ipynb").write_text("{}")
    (tmp_path / "bob" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "bob" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    found = [(s, p.relative_to(tmp_path).as_posix()) for s, p in find_submissions(tmp_path)]
    assert found == [("alice", "alice.ipynb"), ("bob", "bob/hw1/a.ipynb")]


@pytest.mark.parametrize("make, expect", [
    (lambda p: p / "nope", "SUBMISSIONS_DIR: there is no folder"),
    (lambda p: (p / "f.ipynb").write_text("{}") and p / "f.ipynb", "is a file, not a folder"),
    (lambda p: p, "no notebooks (*.ipynb) found"),
])
def test_bad_submissions_folder_is_named(tmp_path, make, expect):
    with pytest.raises(GradingError, match=expect.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        grade_class(make(tmp_path), out=tmp_path / "out")


@pytest.mark.parametrize("argv, expect", [
    (["--timeout-s", "0"], "--timeout-s: got '0'; expected a positive number of seconds"),
    (["--timeout-s", "soon"], "--timeout-s: got 'soon'; expected a positive number of seconds"),
    (["--jobs", "0"], "--jobs: got '0'; expected a whole number"),
    ([], "SUBMISSIONS_DIR: there is no folder"),
])
def test_cli_errors_name_the_argument(tmp_path, capsys, argv, expect):
    with pytest.raises(SystemExit) as exc:
        cli.main([str(tmp_path / "missing"), *argv])
    assert exc.value.code == 2
    assert expect in capsys.readouterr().err


def test_bad_assignment_is_named(tmp_path):
    (tmp_path / "alice.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    with pytest.raises(GradingError, match="--assignment: there is no notebook"):
        grade_class(tmp_path, out=tmp_path / "out", assignment=[tmp_path / "nope.ipynb"])


def test_network_guard_allows_loopback_only():
    code = textwrap.dedent(f"""
        import socket
        from companion.grade.kernel import block_network
        block_network()
        server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
        socket.create_connection(server.getsockname(), timeout=2).close()   # loopback: allowed
        for target in [("10.255.255.1", 80), ("example.org", 80)]:
            try:
                socket.create_connection(target, timeout=2)
            except OSError as err:
                assert {BLOCKED!r} in str(err), err
            else:
                raise SystemExit(f"connected to {{target}}")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_chapter_notebook_defines_the_expected_exercises(tmp_path):
    """By default the expected exercises are the registered ones the chapter notebook checks; a
    submission renamed by the student is matched to the chapter by the exercise ids it names."""
    assignments = Assignments()
    chapter = CHAPTER_NOTEBOOKS / "00_how_to_use.ipynb"
    gradable_ch00 = {i for i, ex in all_exercises().items()
                     if ex.chapter == "ch00" and (ex.kind != "extend" or ex.has_cases)}
    assert set(assignments.expected[chapter]) == gradable_ch00
    assert assignments.match(chapter, None) == (chapter, assignments.expected[chapter])
    renamed = _notebook("stubs")
    assert assignments.match(tmp_path / "alice.ipynb", renamed)[0] == chapter
