"""``python -m companion.course [--out DIR] [--no-student] [chapter.ipynb ...]``: see :mod:`companion.course`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import ROOT, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.course",
                                     description="Write slides, syllabus, student and instructor editions.")
    parser.add_argument("chapters", nargs="*", type=Path, help="chapters to include (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "course", help="default: %(default)s")
    parser.add_argument("--no-student", action="store_true", help="leave out the student edition")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.chapters if not p.is_file()]
    if missing:
        parser.error(f"no such notebook(s): {', '.join(missing)}")
    written = build(args.out, chapters=args.chapters or None, student=not args.no_student)
    print(f"wrote {len(written['slides'])} slide decks, {len(written['student'])} student notebooks, "
          f"the instructor edition and the syllabus under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
