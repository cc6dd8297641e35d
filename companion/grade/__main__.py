"""``python -m companion.grade SUBMISSIONS_DIR``: see :mod:`companion.grade`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..scale import SCALES
from . import (
    DEFAULT_TIMEOUT_S,
    ROOT,
    GradingError,
    NotebookResult,
    grade_class,
    validate_timeout,
)


def _timeout(text: str) -> float:
    try:
        return validate_timeout(text)
    except GradingError as err:
        raise argparse.ArgumentTypeError(str(err).split(": ", 1)[1]) from None


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a whole number of notebooks run at once, 1 or more")
    return value


def main(argv: list[str] | None = None) -> int:
    """Grade a folder of submissions; print one line per notebook and where the gradebook is."""
    parser = argparse.ArgumentParser(
        prog="python -m companion.grade",
        description="Run every student's notebook (a fresh kernel each, a time limit, no network), "
                    "collect every check() result, and write a gradebook (CSV) and per-student feedback.",
        epilog="Layout: SUBMISSIONS_DIR/alice.ipynb (one notebook per student) or "
               "SUBMISSIONS_DIR/alice/**/*.ipynb (one folder per student). See the README, 'Grading a class'.")
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR",
                        help="one notebook or one folder per student")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "grades",
                        help="where gradebook.csv, feedback/ and executed/ go (default: %(default)s)")
    parser.add_argument("--timeout-s", type=_timeout, default=DEFAULT_TIMEOUT_S,
                        help="seconds for one whole notebook (default: %(default)g)")
    parser.add_argument("--jobs", type=_jobs, default=1, help="notebooks run at once (default: %(default)s)")
    parser.add_argument("--assignment", type=Path, action="append",
                        help="the notebook handed out (repeat for several); default: the chapter "
                             "notebook of notebooks/ with the submission's file name")
    parser.add_argument("--scale", choices=SCALES, help="BOOK_SCALE for the kernels (default: $BOOK_SCALE, else ci)")
    args = parser.parse_args(argv)

    def progress(r: NotebookResult) -> None:
        counts = {s: sum(e.status == s for e in r.exercises.values()) for s in ("pass", "fail", "error", "missing")}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no exercises"
        print(f"  {r.student}: {r.notebook} -- {r.outcome}, {r.seconds:g} s: {summary}", flush=True)

    try:
        grades = grade_class(args.submissions, out=args.out, timeout_s=args.timeout_s, jobs=args.jobs,
                             assignment=args.assignment, scale=args.scale, progress=progress)
    except GradingError as err:
        parser.error(str(err))
    print(f"graded {len(grades)} student(s): {args.out / 'gradebook.csv'}, feedback in {args.out / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
