"""Sphinx extension: keep the built book free of scripts it does not use.

Jupyter Book always loads sphinx-thebe, although this book has no launch buttons (thebe is
off in _config.yml). With Sphinx 7.4 its inline configuration is written twice per page, which
throws "Identifier 'THEBE_JS_URL' has already been declared", and that configuration names a
remote script (unpkg.com). This extension removes sphinx-thebe's script and style sheet from
every page after all other extensions have added theirs.
"""

from __future__ import annotations

from typing import Any

THEBE_FILES = {"sphinx-thebe.js", "sphinx-thebe.css"}


def _is_thebe(asset: Any) -> bool:
    filename = str(getattr(asset, "filename", "") or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return filename.split("?")[0].rsplit("/", 1)[-1] in THEBE_FILES or "THEBE_JS_URL" in body


def drop_thebe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Remove sphinx-thebe's assets from this page's context (a new list, not in place)."""
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe(a)]


def setup(app: Any) -> dict[str, Any]:
    """Register the handler late (priority 900), after every extension added its files."""
    app.connect("html-page-context", drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
