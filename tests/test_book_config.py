"""The book's configuration, table of contents and bibliography, checked without building.

Fast checks that catch what would otherwise surface only as a failed or silently wrong build:
chapters that would sort out of order, pages that would load scripts from the internet,
citations of keys missing from references.bib.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _bib_keys() -> list[str]:
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    return re.findall(r"^@\w+\s*\{\s*([^,\s]+)\s*,", text, flags=re.M)


def _cited_keys(text: str) -> set[str]:
    keys: set[str] = set()
    text = re.sub(r"``.*?``", "", text, flags=re.S)  # a role shown as code is not a citation
    for m in re.finditer(r"\{cite(?::\w+)?\}`([^`]+)`", text):
        keys.update(k.strip() for k in m.group(1).split(","))
    return keys


def test_built_from_stored_outputs_with_local_scripts() -> None:
    cfg = _config()
    assert cfg["execute"]["execute_notebooks"] == "off"
    sphinx = cfg["sphinx"]["config"]
    assert "book/_offline" in sphinx["html_static_path"]
    assert not re.match(r"(https?:)?//", sphinx["mathjax_path"]), sphinx["mathjax_path"]
    for path, attrs in sphinx["nb_ipywidgets_js"].items():
        assert not re.match(r"(https?:)?//", path), path
        for value in attrs.values():
            assert "//" not in str(value), f"{path}: {value}"
    assert cfg["launch_buttons"]["thebe"] is False
    assert not (ROOT / "_static").exists(), (
        "a top-level _static/ folder makes Jupyter Book add every .js in it to every page")


def test_chapters_are_globbed_and_sort_in_chapter_order() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    globs = [c["glob"] for part in toc["parts"] for c in part["chapters"] if "glob" in c]
    assert globs == ["notebooks/[0-9][0-9]*_*"]
    names = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert names, "no chapter notebooks"
    # NN_topic, or NNa_topic / NNb_topic for a chapter split into two notebooks (CONTRACTS §5)
    bad = [n for n in names if not re.fullmatch(r"\d\d[a-z]?_[a-z0-9_]+\.ipynb", n)]
    assert not bad, f"chapter notebooks must be named NN_topic.ipynb or NNa_topic.ipynb: {bad}"
    keys = [n.split("_", 1)[0] for n in names]
    assert len(set(keys)) == len(keys), names
    for key in keys:  # a split chapter starts at "a"; a whole chapter NN may have one supplement NNb
        if len(key) == 3:
            if key[:2] in keys:
                assert key[2] == "b", f"chapter {key[:2]} is whole; its one supplement is {key[:2]}b: {names}"
                continue
            assert key[2] == "a" or f"{key[:2]}{chr(ord(key[2]) - 1)}" in keys, names


def test_every_toc_file_exists() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]
                             if "file" in c]
    for f in files:
        assert any((ROOT / f"{f}{ext}").is_file() for ext in (".md", ".ipynb")), f


def test_bibliography_has_unique_keys_and_the_foundations() -> None:
    keys = _bib_keys()
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    assert not dupes, f"duplicate keys in references.bib: {dupes}"
    for key in ("bengio2003neural", "mikolov2013efficient", "mikolov2013distributed",
                "pennington2014glove", "bojanowski2017enriching", "kneser1995improved",
                "chen1998empirical", "harris1954distributional", "firth1957synopsis",
                "deerwester1990indexing", "kiros2015skip", "logeswaran2018efficient",
                "mccann2017learned", "peters2018deep", "howard2018universal",
                "radford2018improving", "devlin2019bert", "vaswani2017attention",
                "brown2020language", "liu2021pretrain", "qiu2020pretrained", "wang2020static"):
        assert key in keys, key


def test_every_citation_resolves() -> None:
    keys = set(_bib_keys())
    missing: dict[str, set[str]] = {}
    for page in (ROOT / "book").glob("*.md"):
        cited = _cited_keys(page.read_text(encoding="utf-8")) - keys
        if cited:
            missing[page.name] = cited
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        cited = _cited_keys(text) - keys
        if cited:
            missing[nb.name] = cited
    assert not missing, f"cited but not in book/references.bib: {missing}"
