"""Lecture slides from a chapter notebook: reveal.js through nbconvert, offline.

A chapter is written to be read, so its slides are chosen from it by rule (:func:`slide_type`),
not written twice:

* a heading cell (``#``, ``##``) starts a slide; a ``###`` heading a sub-slide (reveal.js shows
  sub-slides below their slide);
* a Markdown cell with displayed maths (``$$``), and a code cell that draws a figure, is a
  sub-slide of its own: the equations and figures carry a lecture;
* the rest of the prose becomes the speaker notes of the slide before it (press ``s``);
* exercises, hidden bookkeeping (``remove-cell``, ``hide-cell``) and code without a figure are
  left out; the code of a figure cell is not shown, its figure is.

A cell's own ``slideshow.slide_type`` metadata, where an author set one, wins over the rule.
The Markdown's MyST roles are resolved from the notebook's stored values
(:mod:`companion.course.myst`), so the slides show the numbers the chapter shows. The pages load
reveal.js, require.js and MathJax from a local copy (``book/_offline``, ``make assets``).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .myst import glue_values, resolve

TEMPLATES = Path(__file__).resolve().parent / "templates"
SKIP_TAGS = {"exercise", "remove-cell", "hide-cell", "remove-input", "thebe-init"}
FIGURE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")
_HEADING = re.compile(r"^(#{1,3})\s", re.M)
_EXERCISE = re.compile(r"^\*\*Exercise\b", re.M)


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def slide_type(cell: dict) -> str:
    """The reveal.js role of one cell: ``slide``, ``subslide``, ``notes`` or ``skip``."""
    if not isinstance(cell, dict) or "cell_type" not in cell:
        raise TypeError(f"cell must be a notebook cell (a dict with 'cell_type'), got {type(cell).__name__}")
    own = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
    if own:
        return own
    tags = set(cell.get("metadata", {}).get("tags", []))
    if tags & SKIP_TAGS and not (cell["cell_type"] == "code" and _has_figure(cell) and "exercise" not in tags):
        return "skip"
    src = _source(cell).lstrip()
    if cell["cell_type"] == "markdown":
        if _EXERCISE.search(src):
            return "skip"
        heading = _HEADING.match(src)
        if heading:
            return "subslide" if len(heading.group(1)) == 3 else "slide"
        return "subslide" if "$$" in src else "notes"
    if cell["cell_type"] == "code" and _has_figure(cell):
        return "subslide"
    return "skip"


def _has_figure(cell: dict) -> bool:
    return any(m in out.get("data", {}) for out in cell.get("outputs", []) for m in FIGURE_MIMES)


def lecture_notebook(nb: dict) -> dict:
    """A copy of the chapter with every cell's slide type set, MyST roles resolved, the
    figure cells' code hidden and the skipped cells removed."""
    if not isinstance(nb, dict) or "cells" not in nb:
        raise TypeError(f"nb must be a notebook (a dict with 'cells'), got {type(nb).__name__}")
    values = glue_values(nb)
    out = copy.deepcopy(nb)
    out.get("metadata", {}).pop("widgets", None)  # no widget state: its loader comes from a CDN
    cells = []
    for cell in out["cells"]:
        kind = slide_type(cell)
        if kind == "skip":
            continue
        meta = cell.setdefault("metadata", {})
        meta["slideshow"] = {"slide_type": kind}
        if cell["cell_type"] == "markdown":
            cell["source"] = resolve(_source(cell), values)
        else:
            meta["tags"] = sorted(set(meta.get("tags", [])) | {"remove-input"})
            cell["outputs"] = [o for o in cell.get("outputs", []) if o.get("output_type") != "stream"]
        cells.append(cell)
    if cells and cells[0]["metadata"]["slideshow"]["slide_type"] == "notes":
        cells[0]["metadata"]["slideshow"]["slide_type"] = "slide"
    out["cells"] = cells
    return out


def build_slides(notebook: str | Path, out_dir: str | Path, assets: str = "../_assets") -> Path:
    """Write ``<out_dir>/<chapter>.slides.html`` for one chapter; ``assets`` is the folder
    (relative to ``out_dir``) that holds ``reveal.js/``, ``requirejs/`` and ``mathjax/``."""
    from nbconvert import SlidesExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    from traitlets.config import Config

    notebook, out_dir = Path(notebook), Path(out_dir)
    if not notebook.is_file() or notebook.suffix != ".ipynb":
        raise FileNotFoundError(f"notebook must be an existing .ipynb file, got {notebook}")
    nb = lecture_notebook(json.loads(notebook.read_text(encoding="utf-8")))
    import nbformat

    node = nbformat.reads(json.dumps(nb), as_version=4)  # joins the sources' line lists
    cfg = Config()
    cfg.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    cfg.TagRemovePreprocessor.enabled = True
    exporter = SlidesExporter(config=cfg, extra_template_basedirs=[str(TEMPLATES)], extra_template_paths=[str(TEMPLATES)],
                             template_name="reveal_offline")
    exporter.register_preprocessor(TagRemovePreprocessor(config=cfg), enabled=True)
    exporter.reveal_url_prefix = f"{assets}/reveal.js"
    exporter.reveal_scroll = True
    exporter.reveal_theme = "white"  # its fonts ship with reveal.js; "simple" loads Google Fonts
    exporter.reveal_number = "c/t"
    exporter.require_js_url = f"{assets}/requirejs/require.js"
    exporter.mathjax_url = f"{assets}/mathjax/tex-mml-chtml.js"
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(node, resources={"metadata": {"name": notebook.stem}})
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{notebook.stem}.slides.html"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(target)  # never a half-written deck
    return target
