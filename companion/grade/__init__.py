"""Grade a class: run every student's notebook and collect what ``check()`` said.

Usage::

    python -m companion.grade SUBMISSIONS_DIR [--out DIR] [--timeout-s N] [--jobs N]
                              [--assignment NOTEBOOK] [--scale ci]

**Layout of SUBMISSIONS_DIR** (the two conventions teachers know):

* one notebook per student, named after the student, as otter-grader collects them::

      submissions/alice.ipynb
      submissions/bob.ipynb

* one folder per student, holding one or more notebooks at any depth, as nbgrader's
  ``submitted/{student_id}/{assignment_id}/{notebook_id}.ipynb`` lays them out::

      submitted/alice/week01/00_how_to_use.ipynb
      submitted/bob/00_how_to_use.ipynb

Hidden files and folders (``.ipynb_checkpoints``) are skipped.

**Which exercises are expected.** A notebook is graded against an *assignment*: the notebook
that was handed out. Its code cells that call ``check("chNN.name", ...)`` on a registered
exercise define the exercises (an open ``extend`` task without automatic checks is left to
the teacher). The assignment is the ``--assignment`` notebook if one is given (with several,
the one of the same file name); otherwise the chapter notebook of ``notebooks/`` with the same
file name as the submission; otherwise the chapter notebook sharing the most exercise ids
with it.

**How a notebook runs.** Each in a fresh kernel of this Python (:mod:`companion.grade.kernel`),
in an empty scratch folder, top to bottom with errors allowed (a cell that raises costs the
exercises of that cell and of the cells that depend on it, nothing else), under one time
limit for the whole notebook: when it runs out, the running cell is stopped and the rest of the
notebook is not run. ``$BOOK_SCALE`` is ``ci`` unless set. No network (see
:mod:`companion.grade.kernel` for what that guard covers and what it does not).

**What each exercise gets** (the gradebook's cells):

* ``pass`` -- the last ``check()`` of it passed;
* ``fail`` -- the last ``check()`` of it ran and failed (the checker's messages go to the feedback);
* ``error`` -- a cell naming the exercise raised (``check`` itself, or the code before it), or
  was stopped by the time limit;
* ``missing`` -- no ``check()`` of it ran: its cells were deleted, never reached (after a time
  limit or a dead kernel), or hold no ``check`` call.

**What is written** under ``--out``: ``gradebook.csv`` (one row per student: the status of
every exercise, then ``passed``, ``failed``, ``error``, ``missing``, ``possible``, ``percent``
and ``notes``), ``feedback/STUDENT.md`` (per exercise the status and the checker's messages),
``executed/STUDENT/...ipynb`` (the notebooks as they ran, for a second look) and
``results.json`` (all of it, for scripts).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHAPTER_NOTEBOOKS = ROOT / "notebooks"
DEFAULT_TIMEOUT_S = 600.0
#: seconds a kernel may take to start (it imports the exercises, and torch, before the clock starts)
STARTUP_TIMEOUT_S = 300
STATUSES = ("pass", "fail", "error", "missing")
MAX_MESSAGES = 5  # failure messages per exercise in the feedback
_RANK = {"pass": 3, "fail": 2, "error": 1, "missing": 0}
_QUOTED_ID = re.compile(r"""["'](ch\d\d\.[a-z_][a-z0-9_]*)["']""")
_CHECK_CALL = re.compile(r"""\bcheck\(\s*["'](ch\d\d\.[a-z_][a-z0-9_]*)["']""")
_VERDICT_LINE = re.compile(r"^([✓✗]) (ch\d\d\.[a-z_][a-z0-9_]*): ?(.*)$")
#: environment for the kernels: proxies at a closed local port, and every offline switch known
OFFLINE_ENV = {
    **{k: "http://127.0.0.1:9" for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                         "ALL_PROXY", "all_proxy")},
    "no_proxy": "", "NO_PROXY": "",
    "PIP_NO_INDEX": "1", "npm_config_offline": "true",
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
}
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class GradingError(ValueError):
    """Bad input to the grader (the message names the argument, what it got and what it expects)."""


# --------------------------------------------------------------------------- results


@dataclass
class ExerciseResult:
    """One exercise of one submission: ``status`` is one of :data:`STATUSES`."""

    id: str
    status: str
    messages: list[str] = field(default_factory=list)
    cell: int | None = None  # index of the cell that decided it


@dataclass
class NotebookResult:
    """One submitted notebook, run and graded."""

    student: str
    notebook: str  # path relative to the submissions folder
    assignment: str | None  # the notebook it was graded against
    exercises: dict[str, ExerciseResult]
    outcome: str  # "ran to the end", "time limit", "kernel died", "unreadable"
    note: str = ""
    seconds: float = 0.0


@dataclass
class StudentGrade:
    """Every notebook of one student, and the merged status per exercise."""

    student: str
    notebooks: list[NotebookResult]
    exercises: dict[str, ExerciseResult]

    def count(self, status: str) -> int:
        """How many exercises have ``status``."""
        return sum(r.status == status for r in self.exercises.values())

    @property
    def possible(self) -> int:
        return len(self.exercises)

    @property
    def percent(self) -> float:
        return 100.0 * self.count("pass") / self.possible if self.possible else 0.0


# --------------------------------------------------------------------------- notebooks


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _code_cells(nb: dict) -> Iterable[tuple[int, dict]]:
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            yield index, cell


def _gradable() -> dict[str, Any]:
    """Registered exercises that ``check`` can grade (open tasks without checks are left out)."""
    from companion.exercises import all_exercises

    return {i: ex for i, ex in all_exercises().items() if not (ex.kind == "extend" and not ex.has_cases)}


def checked_ids(nb: dict, gradable: dict[str, Any] | None = None) -> list[str]:
    """The gradable exercise ids a notebook passes to ``check(...)``, in the order they first appear."""
    gradable = _gradable() if gradable is None else gradable
    out: list[str] = []
    for _, cell in _code_cells(nb):
        for eid in _CHECK_CALL.findall(_source(cell)):
            if eid in gradable and eid not in out:
                out.append(eid)
    return out


def _read_notebook(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError("not a Jupyter notebook (no list of cells)")  # noqa: TRY004 - bad content, not a bad type
    return nb


def find_submissions(folder: Path) -> list[tuple[str, Path]]:
    """``(student, notebook)`` pairs under ``folder`` (see the module docstring for the layout).

    Raises:
        GradingError: if ``folder`` is not a folder or holds no notebook.
    """
    folder = Path(folder)
    if not folder.exists():
        raise GradingError(f"SUBMISSIONS_DIR: there is no folder {folder}; expected a folder holding "
                           "one notebook per student (alice.ipynb) or one folder per student (alice/*.ipynb)")
    if not folder.is_dir():
        raise GradingError(f"SUBMISSIONS_DIR: {folder} is a file, not a folder; expected a folder holding "
                           "one notebook per student (alice.ipynb) or one folder per student (alice/*.ipynb)")
    found: list[tuple[str, Path]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            found.append((entry.stem, entry))
        elif entry.is_dir():
            for path in sorted(entry.rglob("*.ipynb")):
                if not any(part.startswith(".") for part in path.relative_to(entry).parts):
                    found.append((entry.name, path))
    if not found:
        raise GradingError(f"SUBMISSIONS_DIR: no notebooks (*.ipynb) found in {folder}; expected "
                           "alice.ipynb, bob.ipynb, ... or alice/..., bob/... folders holding notebooks")
    return found


class Assignments:
    """The notebooks submissions are graded against, and the exercises each expects."""

    def __init__(self, notebooks: list[Path] | None = None, gradable: dict[str, Any] | None = None):
        self.gradable = _gradable() if gradable is None else gradable
        self.explicit = notebooks is not None
        paths = notebooks if notebooks is not None else sorted(CHAPTER_NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
        self.expected: dict[Path, list[str]] = {}
        for path in paths:
            try:
                nb = _read_notebook(Path(path))
            except (OSError, ValueError) as err:
                if self.explicit:
                    raise GradingError(f"--assignment: cannot read {path} ({err}); expected a Jupyter notebook") from err
                continue
            ids = checked_ids(nb, self.gradable)
            if self.explicit and not ids:
                raise GradingError(f"--assignment: {path} calls check() on no registered exercise; expected "
                                   "the notebook handed out, with its check(\"chNN.name\", ...) cells")
            self.expected[Path(path)] = ids

    def match(self, submission: Path, nb: dict | None) -> tuple[Path | None, list[str]]:
        """The assignment a submission is graded against, and its expected ids (in order)."""
        for path, ids in self.expected.items():
            if path.name == submission.name:
                return path, ids
        if self.explicit and len(self.expected) == 1:
            return next(iter(self.expected.items()))
        named = set()
        if nb is not None:
            for _, cell in _code_cells(nb):
                named.update(_QUOTED_ID.findall(_source(cell)))
        best = max(self.expected.items(), key=lambda kv: len(named & set(kv[1])), default=None)
        if best is not None and named & set(best[1]):
            return best
        return None, [i for i in (checked_ids(nb, self.gradable) if nb else [])]


# --------------------------------------------------------------------------- running


def _kernel_manager_class() -> type:
    """ipykernel under :mod:`companion.grade.kernel`, with this interpreter."""
    from ..execute import _kernel_manager_class as current_env_manager

    return current_env_manager("companion.grade.kernel", "Python 3 (grading)")


def kernel_env(log_path: Path, jobs: int = 1, scale: str | None = None) -> dict[str, str]:
    """The environment a grading kernel gets: this one, offline, with the check log and the scale."""
    # imported here, not at the top: `python -m companion.grade.kernel` imports this package first
    from .kernel import LOG_ENV_VAR

    env = dict(os.environ)
    env.update(OFFLINE_ENV)
    env[LOG_ENV_VAR] = str(log_path)
    env["BOOK_SCALE"] = scale or os.environ.get("BOOK_SCALE") or "ci"
    threads = str(max(1, (os.cpu_count() or 1) // max(1, jobs)))
    for var in _THREAD_VARS:
        env.setdefault(var, threads)
    return env


@dataclass
class _Run:
    nb: Any  # the executed nbformat notebook
    ran: set[int]  # indices of the code cells that ran to their end (or raised)
    stopped_at: int | None  # the cell a time limit or a dead kernel stopped
    outcome: str
    note: str
    seconds: float


def run_notebook(path: Path, *, timeout_s: float, workdir: Path, env: dict[str, str],
                 kernel_log: Path | None = None) -> _Run:
    """Run a notebook top to bottom in a fresh grading kernel, errors allowed, under one time limit.

    The time limit covers the cells, not the kernel's start. The kernel's own stdout and stderr
    (its warnings, a crash's traceback) go to ``kernel_log`` (discarded if ``None``), not to
    the grader's terminal.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=max(1, math.ceil(timeout_s)), kernel_name="python3",
                            kernel_manager_class=_kernel_manager_class(), allow_errors=True,
                            record_timing=False, resources={"metadata": {"path": str(workdir)}},
                            startup_timeout=STARTUP_TIMEOUT_S)
    run = _Run(nb, set(), None, "ran to the end", "", 0.0)
    with open(kernel_log or os.devnull, "wb") as log, client.setup_kernel(env=env, stdout=log, stderr=log):
        start = time.monotonic()
        _run_cells(client, run, start + timeout_s, timeout_s)
        run.seconds = time.monotonic() - start
    return run


def _run_cells(client: Any, run: _Run, deadline: float, timeout_s: float) -> None:
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    for index, cell in enumerate(run.nb.cells):
        if cell.cell_type != "code":
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.stopped_at, run.outcome = index, "time limit"
            run.note = f"the time limit ({timeout_s:g} s) ran out before cell {index}; it and the cells after it did not run"
            return
        client.timeout = max(1, math.ceil(remaining))
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:
            run.stopped_at, run.outcome = index, "time limit"
            run.note = f"the time limit ({timeout_s:g} s) ran out in cell {index}; the cells after it did not run"
            return
        except DeadKernelError:
            run.stopped_at, run.outcome = index, "kernel died"
            run.note = (f"the kernel died in cell {index} (out of memory, or the code exited); "
                        "the cells after it did not run")
            return
        run.ran.add(index)


def _read_log(log_path: Path) -> list[dict]:
    if not log_path.is_file():
        return []
    records = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            records.append(rec)
    return records


def _cell_error(cell: Any) -> str | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename', 'Error')}: {out.get('evalue', '')}".rstrip(": ")
    return None


def _printed_verdicts(cell: Any) -> dict[str, tuple[bool, str]]:
    """``check``'s "✓ id: ..." / "✗ id: ..." lines in a cell's printed output (a fallback)."""
    found: dict[str, tuple[bool, str]] = {}
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            for line in ("".join(text) if isinstance(text, list) else text).splitlines():
                m = _VERDICT_LINE.match(line.strip())
                if m:
                    found[m.group(2)] = (m.group(1) == "✓", m.group(3))
    return found


def assess(expected: list[str], run: _Run, log: list[dict]) -> dict[str, ExerciseResult]:
    """The status of every expected exercise, from the check log and the executed cells."""
    last: dict[str, dict] = {}
    for rec in log:
        last[rec["id"]] = rec
    cells_of: dict[str, list[int]] = {}
    printed: dict[str, tuple[int, bool, str]] = {}
    for index, cell in enumerate(run.nb.cells):
        if cell.cell_type != "code":
            continue
        for eid in set(_QUOTED_ID.findall(cell.source)):
            cells_of.setdefault(eid, []).append(index)
        for eid, (ok, msg) in _printed_verdicts(cell).items():
            printed[eid] = (index, ok, msg)
    results: dict[str, ExerciseResult] = {}
    for eid in expected:
        cells = cells_of.get(eid, [])
        rec = last.get(eid)
        if rec is not None and "raised" not in rec:
            status = "pass" if rec.get("passed") else "fail"
            msgs = [str(m) for m in rec.get("failures", [])]
            if len(msgs) > MAX_MESSAGES:
                msgs = msgs[:MAX_MESSAGES] + [f"({len(msgs) - MAX_MESSAGES} more failing checks not shown)"]
            if status == "pass" and not msgs:
                msgs = [f"all {rec.get('n_cases', 0)} checks passed"]
            results[eid] = ExerciseResult(eid, status, msgs, cells[-1] if cells else None)
            continue
        if rec is None and eid in printed:  # check ran but was not recorded (e.g. the module was reloaded)
            index, ok, msg = printed[eid]
            results[eid] = ExerciseResult(eid, "pass" if ok else "fail", [msg], index)
            continue
        errored = [(i, _cell_error(run.nb.cells[i])) for i in cells if i in run.ran]
        errored = [(i, e) for i, e in errored if e]
        if rec is not None:  # check() itself raised
            where = errored[-1][0] if errored else (cells[-1] if cells else None)
            results[eid] = ExerciseResult(eid, "error", [f"check() raised {rec['raised']}"], where)
        elif errored:
            i, err = errored[-1]
            results[eid] = ExerciseResult(eid, "error", [f"cell {i} raised {err}"], i)
        elif run.stopped_at is not None and run.stopped_at in cells:
            results[eid] = ExerciseResult(eid, "error", [run.note], run.stopped_at)
        elif cells and any(i not in run.ran for i in cells):
            results[eid] = ExerciseResult(eid, "missing", [f"not reached: {run.note}"], None)
        elif cells:
            results[eid] = ExerciseResult(eid, "missing", ["its cells ran but never called check() on it"], cells[-1])
        else:
            results[eid] = ExerciseResult(eid, "missing", ["no cell of the notebook names it (deleted?)"], None)
    return results


def grade_notebook(student: str, path: Path, submissions: Path, assignments: Assignments, *,
                   timeout_s: float = DEFAULT_TIMEOUT_S, executed_dir: Path | None = None,
                   jobs: int = 1, scale: str | None = None) -> NotebookResult:
    """Run one submitted notebook and grade its exercises; never raises for the notebook's faults."""
    rel = path.relative_to(submissions).as_posix()
    try:
        nb_json = _read_notebook(path)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        assignment, expected = assignments.match(path, None)
        missing = {e: ExerciseResult(e, "missing", [f"the notebook could not be read ({err})"]) for e in expected}
        return NotebookResult(student, rel, assignment.name if assignment else None, missing,
                              "unreadable", f"{rel} could not be read: {err}")
    assignment, expected = assignments.match(path, nb_json)
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        log_path = Path(tmp) / "checks.jsonl"
        try:
            run = run_notebook(path, timeout_s=timeout_s, workdir=workdir, env=kernel_env(log_path, jobs, scale),
                               kernel_log=Path(tmp) / "kernel.log")
        except Exception as err:  # noqa: BLE001 - a notebook nbformat rejects, a kernel that never started
            missing = {e: ExerciseResult(e, "missing", [f"the notebook could not be run ({err})"]) for e in expected}
            return NotebookResult(student, rel, assignment.name if assignment else None, missing,
                                  "unreadable", f"{rel} could not be run: {type(err).__name__}: {err}")
        results = assess(expected, run, _read_log(log_path))
    if executed_dir is not None:
        import nbformat

        target = executed_dir / student / (path.name if path.parent == submissions else rel.split("/", 1)[-1])
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(run.nb, str(target))
    note = run.note if run.outcome != "ran to the end" else ""
    if assignment is None:
        note = "; ".join(n for n in (note, "no assignment notebook matched: graded on the checks it calls") if n)
    return NotebookResult(student, rel, assignment.name if assignment else None, results,
                          run.outcome, note, round(run.seconds, 2))


def merge(student: str, notebooks: list[NotebookResult]) -> StudentGrade:
    """One student's grade: per exercise the best status over their notebooks."""
    merged: dict[str, ExerciseResult] = {}
    for nbr in notebooks:
        for eid, res in nbr.exercises.items():
            if eid not in merged or _RANK[res.status] > _RANK[merged[eid].status]:
                merged[eid] = res
    return StudentGrade(student, notebooks, merged)


def grade_class(submissions: Path, *, out: Path, timeout_s: float = DEFAULT_TIMEOUT_S, jobs: int = 1,
                assignment: list[Path] | None = None, scale: str | None = None,
                progress: Callable[[NotebookResult], None] | None = None) -> list[StudentGrade]:
    """Grade every notebook under ``submissions``; write the gradebook, feedback and executed copies.

    Raises:
        GradingError: for a bad argument (the message names it).
    """
    validate_timeout(timeout_s)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise GradingError(f"--jobs: got {jobs!r}; expected a whole number of notebooks run at once, 1 or more")
    submissions = Path(submissions)
    found = find_submissions(submissions)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise GradingError(f"--out: {out} is a file; expected a folder to write the gradebook into")
    if assignment:
        for path in assignment:
            if not Path(path).is_file():
                raise GradingError(f"--assignment: there is no notebook {path}; expected the .ipynb handed out")
    assignments = Assignments(list(assignment) if assignment else None)
    out.mkdir(parents=True, exist_ok=True)
    executed = out / "executed"

    def one(item: tuple[str, Path]) -> NotebookResult:
        result = grade_notebook(item[0], item[1], submissions, assignments, timeout_s=timeout_s,
                                executed_dir=executed, jobs=jobs, scale=scale)
        if progress is not None:
            progress(result)
        return result

    if jobs == 1:
        results = [one(item) for item in found]
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, found))
    by_student: dict[str, list[NotebookResult]] = {}
    for res in results:
        by_student.setdefault(res.student, []).append(res)
    grades = [merge(s, nbs) for s, nbs in by_student.items()]
    columns = _columns(assignments, grades)
    write_gradebook(out / "gradebook.csv", grades, columns)
    (out / "feedback").mkdir(exist_ok=True)
    for g in grades:
        (out / "feedback" / f"{g.student}.md").write_text(feedback_markdown(g, columns, timeout_s), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(
        [{"student": g.student, "notebooks": [asdict(n) for n in g.notebooks]} for g in grades],
        indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return grades


def validate_timeout(timeout_s: Any) -> float:
    """``timeout_s`` as a float, or a :class:`GradingError` naming ``--timeout-s``."""
    try:
        value = float(timeout_s)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(timeout_s, bool) or not math.isfinite(value) or value <= 0:
        raise GradingError(f"--timeout-s: got {timeout_s!r}; expected a positive number of seconds per "
                           f"notebook, e.g. {DEFAULT_TIMEOUT_S:g}")
    return value


# --------------------------------------------------------------------------- writing


def _columns(assignments: Assignments, grades: list[StudentGrade]) -> list[str]:
    """Exercise ids in the order of the assignments, then any others a student was graded on."""
    seen = {eid for g in grades for eid in g.exercises}
    cols = [eid for ids in assignments.expected.values() for eid in ids if eid in seen]
    cols = list(dict.fromkeys(cols))
    return cols + sorted(seen - set(cols))


def write_gradebook(path: Path, grades: list[StudentGrade], columns: list[str]) -> None:
    """``gradebook.csv``: a row per student, a column per exercise, then the totals and notes."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *columns, "passed", "failed", "error", "missing", "possible",
                         "percent", "notes"])
        for g in sorted(grades, key=lambda g: g.student):
            cells = [g.exercises[c].status if c in g.exercises else "" for c in columns]
            notes = "; ".join(f"{n.notebook}: {n.note}" for n in g.notebooks if n.note)
            writer.writerow([g.student, *cells, g.count("pass"), g.count("fail"), g.count("error"),
                             g.count("missing"), g.possible, f"{g.percent:.1f}", notes])


_MARK = {"pass": "✓ pass", "fail": "✗ fail", "error": "✗ error", "missing": "– missing"}


def feedback_markdown(grade: StudentGrade, columns: list[str], timeout_s: float) -> str:
    """A student's feedback: the score, what happened to each notebook, and per exercise the
    status with what the checker said."""
    lines = [f"# Feedback: {grade.student}", "",
             (f"**{grade.count('pass')} of {grade.possible} exercises passed** ({grade.percent:.1f} %). "
              f"Each notebook ran in a fresh kernel, top to bottom, with {timeout_s:g} s for the whole "
              "notebook and no network; the last `check()` of each exercise counts. Cells are counted "
              "from 0, text cells included."), ""]
    for nbr in grade.notebooks:
        against = f", graded against {nbr.assignment}" if nbr.assignment else ""
        lines.append(f"## {nbr.notebook}")
        lines.append("")
        lines.append(f"{nbr.outcome.capitalize()} in {nbr.seconds:g} s{against}." + (f" Note: {nbr.note}." if nbr.note else ""))
        lines.append("")
        lines += ["| exercise | result |", "|---|---|"]
        order = [c for c in columns if c in nbr.exercises] + [e for e in nbr.exercises if e not in columns]
        for eid in order:
            lines.append(f"| `{eid}` | {_MARK[nbr.exercises[eid].status]} |")
        lines.append("")
        for eid in order:
            res = nbr.exercises[eid]
            if res.status == "pass" and not any("predicted" in m for m in res.messages):
                continue
            where = f" (cell {res.cell})" if res.cell is not None else ""
            lines.append(f"### `{eid}`: {res.status}{where}")
            lines.append("")
            lines.append("```text")
            lines += [m for msg in res.messages for m in msg.splitlines()] or ["(no message)"]
            lines.append("```")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


__all__ = [
    "STATUSES",
    "Assignments",
    "ExerciseResult",
    "GradingError",
    "NotebookResult",
    "StudentGrade",
    "assess",
    "checked_ids",
    "feedback_markdown",
    "find_submissions",
    "grade_class",
    "grade_notebook",
    "kernel_env",
    "merge",
    "run_notebook",
    "validate_timeout",
    "write_gradebook",
]
