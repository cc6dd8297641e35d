"""Sphinx extension: the ``claims-ledger`` directive, the book's claims ledger built at build time.

The directive reads the stored rows of the running table ``claims``
(``companion/evaluate/rows/claims.json``, written by :func:`companion.evaluate.claims.claim_check`
when a chapter runs at laptop scale) and inserts one table per chapter, headed by the chapter's
title (the first ``# `` heading of its notebook). Nothing is executed: like the chapters, the page
shows what the stored run measured, and it builds offline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]


def chapter_titles(root: Path = ROOT) -> dict[str, str]:
    """Chapter code (``"05"``, ``"06b"``) -> the title of its notebook."""
    titles = {}
    for path in sorted((root / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        for cell in cells:
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            head = re.search(r"^# (.+)$", src, flags=re.MULTILINE)
            if cell.get("cell_type") == "markdown" and head:
                titles[path.name.split("_", 1)[0]] = head.group(1).strip()
                break
    return titles


class ClaimsLedger(SphinxDirective):
    """``:::{claims-ledger}`` -- the ledger's tables, grouped by chapter (no arguments)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from companion.evaluate.claims import TABLE, ledger_markdown
        from companion.evaluate.tables import ROWS_DIR

        self.env.note_dependency(str(ROWS_DIR / f"{TABLE}.json"))
        text = ledger_markdown("laptop", titles=chapter_titles())
        container = nodes.container(classes=["claims-ledger"])
        self.state.nested_parse(StringList(text.splitlines(), source="claims.json"),
                                self.content_offset, container, match_titles=True)
        return container.children


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("claims-ledger", ClaimsLedger)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
