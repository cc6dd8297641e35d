"""Write the book as a student gets it in a course: ``make student`` (``_build/student/``).

Usage::

    python -m companion.student                        # every chapter into _build/student/
    python -m companion.student --out DIR notebooks/00_how_to_use.ipynb

The student edition is a copy of what a reader needs to run the chapters — the ``companion``
package, the book's pages and figures, ``pyproject.toml`` — with the notebooks changed so:

* every cell tagged ``exercise`` (the cells where the reader works: ``show``, the starter
  stub with its ``check``, a prediction, an answer to a concept question) keeps its source —
  the stub — but loses its stored outputs and execution count;
* there is no ``solutions/`` package (nor ``tests/``, which import it, nor ``benchmarks/``);
* the exercise registry holds no answer key: in the copy of ``companion/exercises/chNN.py``
  every concept answer (and every ``derive`` answer given as a number) is sealed — a salted
  hash of the letter, an obfuscated number — and every explanation is left out
  (:mod:`companion.exercises.sealed`; ``check`` still says right or wrong, hints still ship).

A notebook that imports ``solutions`` cannot be given to students: building stops with an
error naming the cell. The tag convention is described in ``book/contributing.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXERCISE_TAG = "exercise"
#: what the student edition holds besides the notebooks (the rest of the repository is left out)
COPIED = ("companion", "book", "pyproject.toml", "environment.yml", "README.md", "_config.yml",
          "_toc.yml", "Makefile")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "_offline", "*.egg-info")
_CHAPTER_MODULE = re.compile(r"^ch\d\d[a-z]?\.py$")
_IMPORTS_SOLUTIONS = re.compile(r"^\s*(import\s+solutions\b|from\s+solutions\b)", re.M)


class StudentEditionError(ValueError):
    """A notebook cannot be handed to students as it is (the message names the cell)."""


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def student_notebook(nb: dict, name: str = "notebook") -> dict:
    """A copy of the notebook ``nb`` (parsed JSON) as the student gets it.

    Raises:
        StudentEditionError: if a cell imports the ``solutions`` package.
    """
    nb = json.loads(json.dumps(nb))  # a deep copy
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        if _IMPORTS_SOLUTIONS.search(_source(cell)):
            raise StudentEditionError(
                f"{name}: cell {index} imports solutions; the student edition has no solutions "
                "package. Keep reference solutions out of the chapter notebooks.")
        if EXERCISE_TAG in cell.get("metadata", {}).get("tags", []):
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def seal_exercises(package: Path) -> list[Path]:
    """Rewrite the chapter modules of the copied ``companion/exercises`` in ``package``:
    answers sealed, explanations emptied (:func:`companion.exercises.sealed.seal_source`, with the
    answers read from this repository's registry). Returns the modules rewritten."""
    from .exercises import all_exercises
    from .exercises.sealed import seal_source

    registry = all_exercises()
    written = []
    for path in sorted(Path(package).glob("ch*.py")):
        if not _CHAPTER_MODULE.match(path.name):
            continue
        source = path.read_text(encoding="utf-8")
        sealed = seal_source(source, registry, f"companion/exercises/{path.name}")
        if sealed != source:
            path.write_text(sealed, encoding="utf-8")
            written.append(path)
    return written


def build(out: Path, notebooks: list[Path] | None = None, root: Path = ROOT) -> list[Path]:
    """Write the student edition into ``out`` (replaced if it exists); return the notebooks written."""
    notebooks = sorted((root / "notebooks").glob("[0-9][0-9]*_*.ipynb")) if notebooks is None else notebooks
    if not notebooks:
        raise FileNotFoundError(f"no chapter notebooks under {root / 'notebooks'}")
    converted = {}
    for path in notebooks:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        converted[Path(path).name] = student_notebook(nb, Path(path).name)  # fail before writing
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for item in COPIED:
        src = root / item
        if src.is_dir():
            shutil.copytree(src, out / item, ignore=_IGNORE)
        elif src.is_file():
            shutil.copy2(src, out / item)
    if (out / "companion" / "exercises").is_dir():
        seal_exercises(out / "companion" / "exercises")
    (out / "notebooks").mkdir()
    written = []
    for name, nb in converted.items():
        target = out / "notebooks" / name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    (out / "STUDENT.md").write_text(
        "# Student edition\n\nThe chapters with their exercise cells left for you to fill in. "
        "Run them from this folder (`pip install -e .` once, then `jupyter lab`). "
        "`check(...)` tells you whether an answer is right; `hint(id, 1)`, `hint(id, 2)` help "
        "when you are stuck. There are no reference solutions or explanations of the answers "
        "here: ask your teacher.\n",
        encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.student", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to include (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student", help="default: %(default)s")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook(s): {', '.join(missing)}")
    try:
        written = build(args.out, args.notebooks or None)
    except StudentEditionError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"student edition: {len(written)} notebook(s) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
