"""The notebooks' claim checks go through :func:`companion.evaluate.claims.claim_check`, never
assert a paper's failure, and each has its row in the claims ledger (read from the stored
notebooks and ``companion/evaluate/rows/claims.json``; nothing is executed).

What these tests can see, and what they cannot:

* ``test_no_assert_tests_a_verdict``: in a converted notebook, no ``assert`` line tests a
  verdict-like quantity (it names a verdict, a win or a loss, "better", "beats", "holds",
  "reproduce", "fails"), and a comment announcing a claim check sits in a cell that calls
  ``claim_check``. It cannot read intent: a failure asserted through neutral names
  (``assert gain < 0.5``) passes unseen, and an assert of validity that happens to use one of
  the words fails (check it through ``claim_check(valid=...)`` instead, or rename it). The
  helper itself refuses ``expect=`` anything but a positive verdict, which is the stronger guard.
* ``test_every_claim_check_has_its_row``: every ``claim_check("key", chapter="NN", ...)`` call
  (the key a string literal, or an f-string whose ``{...}`` parts stand for one word) has a
  laptop row in the ledger for its chapter, and every laptop row of a converted notebook's
  chapter is named by a call (a renamed key leaves no stale row). It reads the source, not the
  run: a call in a branch that laptop never takes fails it, which is intended.

Notebooks whose claim checks are not yet written through the helper are listed in ``PENDING``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from companion.evaluate.tables import RunningTable

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
CONVERTED = {
    "01b_count_vectors.ipynb",
    "01c_topics_and_retrieval.ipynb",
    "05_sentence_embeddings.ipynb",
    "07c_what_pretraining_buys.ipynb",
    "10b_prompting.ipynb",
    "10c_in_context_learning.ipynb",
    "12a_knowledge.ipynb",
    "12b_multimodal.ipynb",
}
PENDING = {p.name for p in NOTEBOOKS} - CONVERTED  # claim checks not yet through the helper
VERDICT_WORDS = re.compile(
    r"verdict|better|reproduc|(?<![a-z])(beats?|holds?|wins?|losses|fails?)(?![a-z])", re.IGNORECASE
)
CALL = re.compile(r"claim_check\(\s*(f?)\"([^\"]+)\"\s*,\s*chapter=\"([^\"]+)\"")


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "code"]


def _converted() -> list[Path]:
    return [p for p in NOTEBOOKS if p.name in CONVERTED]


def verdict_asserts(source: str) -> list[str]:
    """The lines of a cell that assert a verdict-like quantity, or announce a claim check the
    cell does not make through the helper."""
    bad = [line.strip() for line in source.splitlines()
           if re.match(r"\s*assert\b", line) and VERDICT_WORDS.search(line)]
    if re.search(r"#.*claim check", source, re.IGNORECASE) and "claim_check(" not in source:
        bad.append("a '# claim check' comment without a claim_check call")
    return bad


def claim_calls(source: str) -> list[tuple[str, str]]:
    """``(chapter, key pattern)`` of every claim_check call; a call whose key is not a literal
    gives ``(chapter, "")``."""
    calls = []
    for m in CALL.finditer(source):
        f, key, chapter = m.groups()
        calls.append((chapter, re.sub(r"\{[^}]*\}", r"\\w+", key) if f else re.escape(key)))
    n_literal = len(calls)
    calls += [("?", "")] * (source.count("claim_check(") - source.count("def claim_check(") - n_literal)
    return calls


def test_the_lists_name_every_notebook():
    assert CONVERTED <= {p.name for p in NOTEBOOKS}, CONVERTED - {p.name for p in NOTEBOOKS}


def test_the_checker_sees_what_it_should():
    assert verdict_asserts('assert (t["verdict"] == "A better").sum() == 0, t')
    assert verdict_asserts("if SCALE != 'ci':\n    assert beats_all < len(vs)")
    assert verdict_asserts("# Claim check: RTE does not help\nassert d.max() < 0.5")
    assert not verdict_asserts('# Claim check\nclaim_check("x", chapter="05")')
    assert not verdict_asserts("assert oov['expanded'] < oov['plain'], oov")
    assert claim_calls('claim_check(\n    f"max_vs_{o}",\n    chapter="05",') == [("05", r"max_vs_\w+")]
    assert claim_calls("claim_check(key, chapter='05')") == [("?", "")]


@pytest.mark.parametrize("path", _converted(), ids=lambda p: p.name)
def test_no_assert_tests_a_verdict(path):
    bad = {i: b for i, src in enumerate(_code_cells(path)) if (b := verdict_asserts(src))}
    assert not bad, f"{path.name}: code cells (by index) that assert a verdict: {bad}"


@pytest.mark.parametrize("path", _converted(), ids=lambda p: p.name)
def test_every_claim_check_has_its_row(path):
    calls = [c for src in _code_cells(path) for c in claim_calls(src)]
    assert calls, f"{path.name} is listed as converted but calls claim_check nowhere"
    assert all(key for _, key in calls), f"{path.name}: a claim_check key that is not a literal"
    chapter = path.name.split("_", 1)[0]
    assert {c for c, _ in calls} == {chapter}, f"{path.name}: calls name chapters {calls}"
    rows = [r.model.split(".", 1)[1] for r in RunningTable("claims").rows("laptop")
            if r.chapter == chapter]
    missing = [k for _, k in calls if not any(re.fullmatch(k, r) for r in rows)]
    stale = [r for r in rows if not any(re.fullmatch(k, r) for _, k in calls)]
    assert not missing, f"{path.name}: claim checks with no laptop row (re-execute it): {missing}"
    assert not stale, f"{path.name}: ledger rows no call writes any more (remove them): {stale}"
