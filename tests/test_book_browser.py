"""The built book, opened in a real browser with no network beyond this machine.

Needs ``_build/html`` (``make book``) and Debian's ``/usr/bin/chromium`` (``make browser``;
``$BOOK_CHROMIUM`` overrides the path),
driven by Playwright for Python (never ``playwright install``). Without them the tests skip
with the reason -- except under ``CI=true``, where a missing prerequisite is a failure.

What is checked: every request the pages make goes to 127.0.0.1; the first chapter loads,
MathJax typesets its maths, a figure is shown, stored widgets render; chapter 11's map of
pre-trained models (inline SVG drawn by its own script) shows one point per model, answers a
hover and a change of axis, with no JavaScript or console error; the front page shows
its figure; the references page lists every entry of ``book/references.bib``; no page of the
built site references a script, style sheet, font or image on another machine. A screenshot
of each page goes to ``_build/screenshots/`` (kept by CI as an artifact).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
# Debian's chromium; BOOK_CHROMIUM points elsewhere where there is no apt-get.
CHROMIUM = Path(os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
]
LOCAL_SCHEMES = {"data", "blob", "about"}
TIMEOUT_MS = 30_000


def _missing(reason: str) -> None:
    """Skip, or fail under CI=true, because a prerequisite is missing."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and a prerequisite of the browser test is missing: {reason}")
    pytest.skip(reason)


def _first_chapter() -> Path:
    """The built page of the first chapter (notebooks sort by their NN_ or NNa_ prefix)."""
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    if not notebooks:
        pytest.fail("no notebooks/NN_*.ipynb: the book has no chapter to open")
    page = HTML / "notebooks" / f"{notebooks[0].stem}.html"
    if not page.is_file():
        pytest.fail(f"{page} is missing: the book was built without {notebooks[0].name}; "
                    "rebuild it with `make book`")
    return page


def _bib_keys() -> list[str]:
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    return re.findall(r"^@\w+\s*\{\s*([^,\s]+)\s*,", text, flags=re.M)


@pytest.fixture(scope="module")
def site() -> str:
    """Serve _build/html on 127.0.0.1 (a free port) for the module; yield the base URL."""
    if not (HTML / "index.html").is_file():
        _missing(f"{HTML / 'index.html'} not found; build the book first with `make book`")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep pytest output clean
            pass

    handler = functools.partial(Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser_context():
    """A headless Chromium context with a fresh profile; records every request URL."""
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} not found; install it with `make browser` "
                 "(apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed; `pip install -e '.[test]'`")
    profile = tempfile.mkdtemp(prefix="book-chromium-")
    pw = sync_playwright().start()
    try:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        context.requests = []  # type: ignore[attr-defined]
        context.on("request", lambda req: context.requests.append(req.url))  # type: ignore[attr-defined]
        yield context
        context.close()
    finally:
        pw.stop()
        shutil.rmtree(profile, ignore_errors=True)


# Resolves when the page has settled: MathJax has typeset, fonts and images are loaded. The tests
# wait for this rather than Playwright's "networkidle", which once never came in CI (a clean
# run, every request local and answered) and failed two tests with a bare timeout.
SETTLE_JS = """
() => {
    window.__bookSettled = "waiting for MathJax";
    const mathjax = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
    mathjax.then(() => { window.__bookSettled = "waiting for fonts"; return document.fonts.ready; })
        .then(() => { window.__bookSettled = "waiting for images";
            return Promise.all(Array.from(document.images).filter(img => !img.complete)
                .map(img => new Promise(done => { img.addEventListener("load", done);
                                                  img.addEventListener("error", done); }))); })
        .then(() => { window.__bookSettled = "yes"; },
              err => { window.__bookSettled = "failed: " + err; });
}
"""


def _track_requests(page) -> set[str]:
    """The URLs of the page's requests still in flight (for a failure message)."""
    inflight: set[str] = set()
    page.on("request", lambda req: inflight.add(req.url))
    page.on("requestfinished", lambda req: inflight.discard(req.url))
    page.on("requestfailed", lambda req: inflight.discard(req.url))
    return inflight


def _goto_settled(page, url: str) -> None:
    """Load ``url`` in ``page`` and wait until it has settled; fail saying what it waited on."""
    inflight = _track_requests(page)
    response = page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
    assert response is not None and response.ok, f"{url} answered {response and response.status}"
    page.evaluate(SETTLE_JS)
    try:
        page.wait_for_function("() => window.__bookSettled === 'yes'", timeout=TIMEOUT_MS)
    except Exception as exc:  # Playwright's TimeoutError, or a page that navigated away
        state = page.evaluate("() => window.__bookSettled")
        raise AssertionError(f"{url} did not settle in {TIMEOUT_MS / 1000:.0f} s ({state}); "
                             f"requests in flight: {sorted(inflight) or 'none'}") from exc


def _open(context, url: str):
    """Open ``url`` in a new page and wait until it has settled; return (page, errors)."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _goto_settled(page, url)
    return page, errors


def _screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _assert_all_local(requests: list[str]) -> None:
    remote = [u for u in requests
              if urlparse(u).scheme not in LOCAL_SCHEMES and urlparse(u).hostname != "127.0.0.1"]
    assert not remote, f"the pages reached beyond this machine: {remote}"


SHOWN_IMAGES_JS = """
(selector) => Array.from(document.querySelectorAll(selector))
    .filter(img => img.complete && img.naturalWidth > 0).length
"""


def test_first_chapter_renders_offline(site: str, browser_context) -> None:
    page_path = _first_chapter()
    url = site + page_path.relative_to(HTML).as_posix()
    page, errors = _open(browser_context, url)

    # MathJax typeset the maths: each math block became an mjx-container, none failed.
    # (A chapter without maths is allowed; the front page test below always has some.)
    n_math = page.locator("div.math, span.math").count()
    if n_math:
        page.wait_for_selector("mjx-container", timeout=TIMEOUT_MS)
        n_typeset = page.locator("mjx-container").count()
        assert n_typeset >= n_math, f"only {n_typeset} of {n_math} formulas were typeset"
        assert page.locator("mjx-merror").count() == 0, "MathJax reported a TeX error"

    # A figure from the stored outputs is shown (decoded, non-zero size).
    shown = page.evaluate(SHOWN_IMAGES_JS, ".cell_output img, figure img")
    assert shown > 0, "no figure of the first chapter was displayed"

    # Stored widget state renders into widgets (from the local widget manager).
    if page.locator('script[type="application/vnd.jupyter.widget-state+json"]').count():
        page.wait_for_selector(".jupyter-widgets", timeout=TIMEOUT_MS)

    _screenshot(page, page_path.stem)
    page.close()
    assert not errors, f"JavaScript errors on {url}: {errors}"
    _assert_all_local(browser_context.requests)


MAP_PAGE = "notebooks/11_probing.html"
MAP_POINTS = "#ptm-map svg circle[data-k]"


def test_map_renders_offline(site: str, browser_context) -> None:
    from companion.probing.taxonomy import MODELS

    page_path = HTML / MAP_PAGE
    if not page_path.is_file():
        pytest.fail(f"{page_path} is missing: the book was built without 11_probing; rebuild it with `make book`")
    page = browser_context.new_page()
    errors: list[str] = []
    console: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    failed: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.text} ({msg.location.get('url')})")
            if msg.type == "error" else None)
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    _goto_settled(page, site + MAP_PAGE)
    page.wait_for_selector(MAP_POINTS, timeout=TIMEOUT_MS)
    points = page.locator(MAP_POINTS)
    assert points.count() == len(MODELS), f"the map shows {points.count()} points for {len(MODELS)} models"
    assert page.locator("#ptm-map .ctl select").count() == 3, "the map lost its axis selectors"
    page.locator("#ptm-map").scroll_into_view_if_needed()
    points.first.hover()  # the tooltip names the model
    tip = page.locator("#ptm-map .tip").inner_text()
    assert MODELS[0].name in tip, f"hovering the first point shows {tip!r}"
    page.locator("#ptm-map .ctl select").first.select_option("extension")  # redraw on another axis
    assert page.locator(MAP_POINTS).count() == len(MODELS), "the map lost points after a change of axis"
    assert "knowledge-enriched" in (page.locator("#ptm-map svg").text_content() or "")
    _screenshot(page, "11_probing_map")
    page.close()
    assert not errors, f"JavaScript errors on {MAP_PAGE}: {errors}"
    assert not failed, f"requests of {MAP_PAGE} that failed: {failed}"
    # not errors of the page: the theme's notice about an unset colour mode, and the browser's
    # own request for /favicon.ico (the book has none)
    console = [m for m in console if not m.startswith("Got invalid theme mode") and not m.endswith("/favicon.ico)")]
    assert not console, f"console errors on {MAP_PAGE}: {console}"
    _assert_all_local(browser_context.requests)


def test_front_page_and_references(site: str, browser_context) -> None:
    page, errors = _open(browser_context, site + "book/intro.html")
    assert page.locator("span.math, div.math").count() > 0, "the front page lost its maths"
    page.wait_for_selector("mjx-container", timeout=TIMEOUT_MS)
    assert page.locator("mjx-merror").count() == 0, "MathJax reported a TeX error"
    assert page.evaluate(SHOWN_IMAGES_JS, "figure img") > 0, "the timeline figure is not shown"
    _screenshot(page, "intro")
    page.close()
    assert not errors, f"JavaScript errors on the front page: {errors}"

    page, errors = _open(browser_context, site + "book/references.html")
    entries = page.locator('[role="doc-biblioentry"]').count()
    keys = _bib_keys()
    assert keys, "book/references.bib has no entries"
    assert entries >= len(keys), (
        f"the references page lists {entries} entries, references.bib has {len(keys)}")
    _screenshot(page, "references")
    page.close()
    assert not errors, f"JavaScript errors on the references page: {errors}"
    _assert_all_local(browser_context.requests)


class _ResourceLinks(HTMLParser):
    """Collect the URLs a page would load by itself (not the links a reader may click)."""

    LOADS = {"script": "src", "img": "src", "iframe": "src", "source": "src",
             "video": "src", "audio": "src", "embed": "src", "object": "data"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "link" and a.get("href") and (a.get("rel") or "") not in {
                "index", "search", "next", "prev", "canonical", "author", "license"}:
            self.urls.append(a["href"] or "")
        elif tag in self.LOADS and a.get(self.LOADS[tag]):
            self.urls.append(a[self.LOADS[tag]] or "")
        for key in ("data-jupyter-widgets-cdn",):
            if a.get(key):
                self.urls.append(a[key] or "")


def _is_remote(url: str) -> bool:
    return url.startswith("//") or urlparse(url).scheme in {"http", "https", "ws", "wss", "ftp"}


def test_no_page_loads_remote_resources() -> None:
    if not (HTML / "index.html").is_file():
        _missing(f"{HTML / 'index.html'} not found; build the book first with `make book`")
    offenders: dict[str, list[str]] = {}
    pages = sorted(HTML.rglob("*.html"))
    for path in pages:
        parser = _ResourceLinks()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        remote = [u for u in parser.urls if _is_remote(u)]
        if remote:
            offenders[str(path.relative_to(HTML))] = remote
    css_remote = [str(p.relative_to(HTML)) for p in (HTML / "_static").rglob("*.css")
                  if re.search(r"""(url\(\s*['"]?|@import\s+['"])(https?:)?//""",
                               p.read_text(encoding="utf-8", errors="replace"))]
    assert len(pages) > 3, f"only {len(pages)} HTML pages in {HTML}"
    assert not offenders, f"pages that load remote resources: {offenders}"
    assert not css_remote, f"style sheets that load remote resources: {css_remote}"
