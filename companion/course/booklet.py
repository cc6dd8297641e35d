"""The instructor edition: every exercise of the book with its answer, as one booklet.

For each chapter, each registered exercise (:mod:`companion.exercises`) with its kind, its
prompt, the answer (a concept question's letter with the options, a derived number), the
explanation, the hint tiers, and the reference solution's source from ``solutions/``. It is
written as a notebook of Markdown cells (so it reads in JupyterLab) and as an HTML page.
Students never receive it: the student edition holds no answer key (``companion.student``).
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections import defaultdict
from pathlib import Path

from ..exercises import all_ids, get
from ..exercises.core import _MISSING


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _solution_source(exercise_id: str) -> str | None:
    try:
        import solutions
    except ImportError:  # the student edition has no solutions package
        return None
    try:
        return inspect.getsource(solutions.get(exercise_id))
    except (LookupError, OSError, TypeError):
        return None


def _hints(hint) -> list[str]:
    if not hint:
        return []
    return [hint] if isinstance(hint, str) else list(hint)


def exercise_markdown(exercise_id: str) -> str:
    """One exercise, with its answer, as Markdown."""
    ex = get(exercise_id)
    parts = [f"### `{ex.id}`: {ex.title} ({ex.kind})", "", textwrap.dedent(ex.prompt).strip(), ""]
    if ex.choices:
        parts += [f"- ({k}) {v}" for k, v in ex.choices.items()] + [""]
    if ex.answer is not _MISSING:
        parts += [f"**Answer:** {ex.answer}", ""]
    if ex.explanation:
        parts += ["**Why:** " + " ".join(textwrap.dedent(ex.explanation).split()), ""]
    for i, h in enumerate(_hints(ex.hint), 1):
        parts += [f"*Hint {i}:* {h}", ""]
    source = _solution_source(exercise_id)
    if source:
        parts += ["**Reference solution** (`solutions/" + ex.id.split(".")[0] + ".py`):", "",
                  "```python", source.rstrip(), "```", ""]
    return "\n".join(parts)


def booklet_notebook() -> dict:
    """The booklet as a notebook: a title, then per chapter a heading and its exercises."""
    by_chapter: dict[str, list[str]] = defaultdict(list)
    for exercise_id in all_ids():
        by_chapter[exercise_id.split(".")[0]].append(exercise_id)
    cells = [_md("# Instructor edition: the exercises and their answers\n\n"
                 "Every auto-checked exercise of the book, chapter by chapter, with the answer, "
                 "the explanation, the hint tiers a student can ask for, and the reference "
                 "solution. Keep this booklet away from students: their edition seals the answers.")]
    for chapter in sorted(by_chapter):
        cells.append(_md(f"## Chapter {chapter[2:].lstrip('0') or '0'} (`{chapter}`)"))
        cells += [_md(exercise_markdown(i)) for i in by_chapter[chapter]]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def build_booklet(out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``instructor.ipynb`` and ``instructor.html`` into ``out_dir``."""
    import nbformat
    from nbconvert import HTMLExporter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.reads(json.dumps(booklet_notebook()), as_version=4)
    ipynb = out_dir / "instructor.ipynb"
    ipynb.write_text(nbformat.writes(nb), encoding="utf-8")
    from .slides import TEMPLATES

    exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATES)], extra_template_paths=[str(TEMPLATES)],
                            template_name="lab_offline")
    exporter.mathjax_url = "../_assets/mathjax/tex-mml-chtml.js"
    body, _ = exporter.from_notebook_node(nb)
    html = out_dir / "instructor.html"
    html.write_text(body, encoding="utf-8")
    return ipynb, html
