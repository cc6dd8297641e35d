"""Markdown of a chapter as plain Markdown: MyST roles resolved from the notebook itself.

The book's prose uses MyST roles that only Jupyter Book understands: ``{glue:text}`name:.2f```
(a value the notebook stored), ``{cite:p}`key``` (a citation), ``{doc}``/``{ref}`` links and
``{math}``. Outside the book (slides, a plain Markdown viewer) they would show as raw text.
:func:`glue_values` reads the values a notebook glued from its stored outputs, and
:func:`resolve` rewrites the roles: a glued value formatted as the role asks, a citation as
``[key]``, a link as its text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

GLUE_MIME = "application/papermill.record/text/plain"
_ROLE = re.compile(r"\{(?P<role>[a-z:]+)\}`(?P<body>[^`]*)`")
_LINK_TEXT = re.compile(r"^(?P<text>.*?)\s*<[^>]*>$", re.S)


def glue_values(nb: Mapping) -> dict[str, object]:
    """``{name: value}`` of every ``glue`` record stored in the notebook's outputs (the value is
    the stored text read back as a Python literal when it is one, else the text)."""
    if not isinstance(nb, Mapping) or "cells" not in nb:
        raise TypeError(f"nb must be a notebook (a dict with 'cells'), got {type(nb).__name__}")
    values: dict[str, object] = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None or GLUE_MIME not in data:
                continue
            text = data[GLUE_MIME]
            text = "".join(text) if isinstance(text, list) else text
            try:
                values[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                values[name] = text.strip("'\"")
    return values


def _glue(body: str, values: Mapping[str, object]) -> str:
    name, _, spec = body.partition(":")
    if name not in values:
        return f"[{name}]"
    value = values[name]
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def resolve(text: str, values: Mapping[str, object] | None = None) -> str:
    """``text`` with every MyST role replaced by what the book would show (see the module)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    values = values or {}

    def one(m: re.Match) -> str:
        role, body = m.group("role"), m.group("body")
        if role.startswith("glue"):
            return _glue(body, values)
        if role.startswith("cite"):
            return "[" + ", ".join(k.strip() for k in body.split(",")) + "]"
        if role == "math":
            return f"${body}$"
        link = _LINK_TEXT.match(body)
        return link.group("text") if link else body

    return _ROLE.sub(one, text)
