"""The course in a box (companion.course): slides chosen by rule, MyST roles resolved, the
instructor booklet, and the decks opened offline in a real browser."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path

import pytest

from companion.course import booklet, myst, slides
from companion.exercises import all_ids, get

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = ROOT / "book" / "_offline"
CHROMIUM = Path(os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium"))
EXTERNAL = re.compile(r"""(?:src|href)=["'](?:https?:)?//""")


def md(text, **meta):
    return {"cell_type": "markdown", "metadata": meta, "source": text}


def code(text, outputs=(), tags=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": text, "outputs": list(outputs),
            "execution_count": 1}


FIGURE = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
          "metadata": {}}


def glue_output(name, text):
    return {"output_type": "display_data", "data": {myst.GLUE_MIME: text},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}}}


def test_slide_type_rules():
    assert slides.slide_type(md("# Title\n\nhook")) == "slide"
    assert slides.slide_type(md("## 2. The model")) == "slide"
    assert slides.slide_type(md("### A detail")) == "subslide"
    assert slides.slide_type(md("The loss is\n$$L = -\\log p$$")) == "subslide"
    assert slides.slide_type(md("Plain prose.")) == "notes"
    assert slides.slide_type(md("**Exercise 3.1 (concept).** Why?")) == "skip"
    assert slides.slide_type(code("plot()", [FIGURE])) == "subslide"
    assert slides.slide_type(code("x = 1")) == "skip"
    assert slides.slide_type(code("show('ch00.a')", [FIGURE], tags=["exercise"])) == "skip"
    assert slides.slide_type(code("glue_all(x=1)", tags=["remove-cell"])) == "skip"
    assert slides.slide_type(md("# Title", slideshow={"slide_type": "fragment"})) == "fragment"
    with pytest.raises(TypeError, match="cell must be a notebook cell"):
        slides.slide_type("## heading")


def test_myst_roles_resolve_from_the_notebooks_values():
    nb = {"cells": [code("glue", [glue_output("acc", "0.8125"), glue_output("name", "'layer 2'")])]}
    values = myst.glue_values(nb)
    assert values == {"acc": 0.8125, "name": "layer 2"}
    text = ("Accuracy {glue:text}`acc:.1%` by {glue:text}`name` {cite:p}`olsson2022context, chan2022data`; "
            "see {doc}`the notation <../book/notation>` and {glue:text}`missing`.")
    assert myst.resolve(text, values) == ("Accuracy 81.2% by layer 2 [olsson2022context, chan2022data]; "
                                          "see the notation and [missing].")
    with pytest.raises(TypeError, match="text must be a string"):
        myst.resolve(None)
    with pytest.raises(TypeError, match="nb must be a notebook"):
        myst.glue_values([])


def test_lecture_notebook_keeps_ideas_and_drops_exercises():
    nb = {"metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5, "cells": [
        md("# 9. A chapter\n\nIt reached {glue:text}`acc:.0%`."),
        code("glue_all(acc=0.5)", [glue_output("acc", "0.5")], tags=["remove-cell"]),
        md("Some prose for the notes."),
        md("**Exercise 9.1 (predict).** Guess."),
        code("show('ch09.x')", tags=["exercise"]),
        code("fig = draw()", [FIGURE, {"output_type": "stream", "name": "stdout", "text": "log"}]),
    ]}
    out = slides.lecture_notebook(nb)
    kinds = [c["metadata"]["slideshow"]["slide_type"] for c in out["cells"]]
    assert kinds == ["slide", "notes", "subslide"]
    assert "It reached 50%." in out["cells"][0]["source"]
    assert "remove-input" in out["cells"][2]["metadata"]["tags"]
    assert all(o["output_type"] != "stream" for o in out["cells"][2]["outputs"])
    assert "widgets" not in out["metadata"]
    assert len(nb["cells"]) == 6  # the chapter itself is not changed


def test_slides_reference_nothing_off_the_machine(tmp_path):
    nb = {"metadata": {}, "nbformat": 4, "nbformat_minor": 5,
          "cells": [md("# 1. Title\n\n$$x^2$$"), code("fig", [FIGURE])]}
    path = tmp_path / "99_tiny.ipynb"
    path.write_text(json.dumps(nb))
    deck = slides.build_slides(path, tmp_path / "slides")
    text = deck.read_text()
    assert deck.name == "99_tiny.slides.html" and "<section" in text
    assert not EXTERNAL.search(text), EXTERNAL.search(text)
    assert "../_assets/reveal.js/dist/reveal.js" in text and "../_assets/mathjax/tex-mml-chtml.js" in text
    with pytest.raises(FileNotFoundError, match="notebook must be an existing .ipynb"):
        slides.build_slides(tmp_path / "nothing.ipynb", tmp_path)


def test_instructor_booklet_holds_every_answer(tmp_path):
    ipynb, page = booklet.build_booklet(tmp_path)
    text = ipynb.read_text()
    for exercise_id in all_ids():
        assert f"`{exercise_id}`" in text, exercise_id
    concept = next(i for i in all_ids() if get(i).kind == "concept" and get(i).choices)
    assert f"**Answer:** {get(concept).answer}" in booklet.exercise_markdown(concept)
    implement = next(i for i in all_ids() if get(i).kind == "implement")
    assert "Reference solution" in booklet.exercise_markdown(implement)
    assert not EXTERNAL.search(page.read_text())


@pytest.mark.browser
def test_slides_open_offline_in_chromium(tmp_path):
    """A real chapter's deck in Chromium: reveal.js starts, MathJax typesets, every request stays
    on this machine."""
    if not CHROMIUM.is_file() or not (OFFLINE / "reveal.js").is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {CHROMIUM} or {OFFLINE / 'reveal.js'} is missing (make browser assets)")
        pytest.skip("needs Chromium (make browser) and the offline assets (make assets)")
    playwright = pytest.importorskip("playwright.sync_api")
    from companion.course import copy_assets

    copy_assets(tmp_path)
    deck = slides.build_slides(ROOT / "notebooks" / "02_neural_lm.ipynb", tmp_path / "slides")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with playwright.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            requests, errors = [], []
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/slides/{deck.name}")
            page.wait_for_function("window.bookReveal && window.bookReveal.isReady()", timeout=60_000)
            page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=60_000)
            page.evaluate("MathJax.startup.promise")
            n_slides = page.evaluate("window.bookReveal.getTotalSlides()")
            n_math = page.evaluate("document.querySelectorAll('mjx-container').length")
            page.evaluate("window.bookReveal.next()")  # a slide change re-typesets without error
            page.wait_for_timeout(500)
            browser.close()
    finally:
        server.shutdown()
    assert n_slides >= 8 and n_math > 0, (n_slides, n_math)
    assert not errors, errors
    assert all(u.startswith(base) or u.startswith("data:") for u in requests), \
        [u for u in requests if not u.startswith(base)]
