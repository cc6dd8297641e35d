"""A course in a box: ``make course`` (``python -m companion.course``) writes ``_build/course/``.

What a teacher gets, all of it readable without a network:

* ``index.html`` -- the list of what is there, one line per lecture;
* ``syllabus.html`` -- the book's syllabus page (``book/syllabus.md``): a 14-week semester and a
  7-week short course, per week the lecture, the lab, the readings and the objectives;
* ``slides/NN_topic.slides.html`` -- reveal.js slides for every chapter, chosen from the
  notebook by rule (:mod:`companion.course.slides`; press ``s`` for the speaker notes, which hold
  the chapter's prose);
* ``student/`` -- the student edition (:mod:`companion.student`): the notebooks with the exercise
  cells as stubs, the package with its answer key sealed;
* ``instructor/instructor.html`` (and ``.ipynb``) -- every exercise with its answer, explanation,
  hints and reference solution (:mod:`companion.course.booklet`);
* ``_assets/`` -- local copies of reveal.js, require.js and MathJax (from ``book/_offline``).

Grading a class is a separate step: ``make grade`` (:mod:`companion.grade`).
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ("reveal.js", "requirejs", "mathjax")


def _chapters(root: Path) -> list[Path]:
    found = sorted((root / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no chapter notebooks under {root / 'notebooks'}")
    return found


def _title(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


def copy_assets(out: Path, root: Path = ROOT) -> Path:
    """Copy reveal.js, require.js and MathJax from ``book/_offline`` (fetched and verified by
    ``make assets``) into ``out/_assets``."""
    from ..book_assets import DEFAULT_DEST, ensure_assets

    source = root / "book" / "_offline"
    if source == DEFAULT_DEST:
        ensure_assets(source, quiet=True)  # fetches and verifies them when they are missing
    missing = [a for a in ASSETS if not (source / a).is_dir()]
    if missing:
        raise FileNotFoundError(f"{source} lacks {', '.join(missing)}: run `make assets` first")
    target = out / "_assets"
    for name in ASSETS:
        shutil.copytree(source / name, target / name, dirs_exist_ok=True)
    return target


def _page(title: str, body_md: str, out: Path) -> Path:
    """A Markdown text as an offline HTML page (through the booklet's template)."""
    import nbformat
    from nbconvert import HTMLExporter

    from .slides import TEMPLATES

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(body_md)])
    exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATES)], extra_template_paths=[str(TEMPLATES)],
                            template_name="lab_offline")
    exporter.mathjax_url = "_assets/mathjax/tex-mml-chtml.js"
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    out.write_text(body, encoding="utf-8")
    return out


def build(out: str | Path, root: Path = ROOT, chapters: list[Path] | None = None, *,
          student: bool = True, progress: bool = True) -> dict[str, list[Path]]:
    """Write the course into ``out`` (replaced if it exists); return what was written, by kind."""
    from .booklet import build_booklet
    from .slides import build_slides

    chapters = _chapters(root) if chapters is None else [Path(c) for c in chapters]
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written: dict[str, list[Path]] = {"slides": [], "pages": [], "instructor": [], "student": []}
    copy_assets(out, root)
    for path in chapters:
        if progress:
            print(f"slides: {path.name}", flush=True)
        written["slides"].append(build_slides(path, out / "slides"))
    written["instructor"] += list(build_booklet(out / "instructor"))
    syllabus = root / "book" / "syllabus.md"
    if syllabus.is_file():
        written["pages"].append(_page("Syllabus", syllabus.read_text(encoding="utf-8"), out / "syllabus.html"))
    if student:
        from ..student import build as build_student

        written["student"] = build_student(out / "student", chapters, root)
    lines = ["# The course", "",
             "Everything here works without a network. Open a lecture's slides and press `s` for the "
             "speaker notes (the chapter's prose), `f` for full screen, `Esc` for the overview.", "",
             "- [Syllabus](syllabus.html): the semester and the short course, week by week",
             "- [Instructor edition](instructor/instructor.html): every exercise with its answer "
             "(do not share)",
             "- Student edition: the folder `student/` (give it to the class as it is)", "",
             "## Lectures", ""]
    for path, deck in zip(chapters, written["slides"]):
        lines.append(f"- [{html.escape(_title(path))}](slides/{deck.name})")
    written["pages"].append(_page("Course", "\n".join(lines) + "\n", out / "index.html"))
    return written
