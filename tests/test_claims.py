"""The claims ledger (companion.evaluate.claims): the one rule on every branch, the helper's
validation of a measurement, the stored rows, and the ledger page's Markdown."""

from __future__ import annotations

import json
import math

import pytest

from companion.evaluate import claims
from companion.evaluate.claims import VERDICTS, claim_check, decide, for_chapter
from companion.evaluate.tables import RunningTable

BASE = {"chapter": "05", "paper": "arora2017simple", "claim": "SIF beats the plain average.",
        "unit": "Spearman's rho x 100", "method": "paired bootstrap, 1000 resamples"}


@pytest.fixture
def table(tmp_path):
    return RunningTable("claims", directory=tmp_path)


def check(table, key="sif", **kw):
    args = {**BASE, "effect": 5.0, "interval": (2.0, 8.0), "scale": "laptop", "table": table,
            "glue_verdict": False, **kw}
    return claim_check(key, **args)


# ---- the rule
@pytest.mark.parametrize("effect, low, high, direction, null, paper_effect, valid, verdict", [
    (5.0, 2.0, 8.0, 1, 0.0, None, True, "holds"),
    (5.0, 2.0, 8.0, 1, 0.0, 8.0, True, "holds"),            # 5 >= half of 8
    (3.0, 2.0, 8.0, 1, 0.0, 8.0, True, "holds (weak)"),     # 3 < half of 8
    (1.0, -1.0, 3.0, 1, 0.0, None, True, "not significant"),
    (1.0, 0.0, 3.0, 1, 0.0, None, True, "not significant"),  # touching null is not beyond it
    (-4.0, -6.0, -2.0, 1, 0.0, None, True, "reversed"),
    (-4.0, -6.0, -2.0, -1, 0.0, None, True, "holds"),         # the claim predicts a decrease
    (-4.0, -6.0, -2.0, -1, 0.0, -10.0, True, "holds (weak)"),
    (4.0, 2.0, 6.0, -1, 0.0, None, True, "reversed"),
    (1.8, 1.5, 2.1, 1, 1.0, None, True, "holds"),             # a ratio against 1
    (0.8, 0.7, 0.9, 1, 1.0, None, True, "reversed"),
    (5.0, 2.0, 8.0, 1, 0.0, -3.0, True, "holds"),             # a paper effect on the other side
    (None, None, None, 1, 0.0, None, False, "not testable here"),
    (5.0, 2.0, 8.0, 1, 0.0, None, False, "not testable here"),
])
def test_the_rule_on_every_branch(effect, low, high, direction, null, paper_effect, valid, verdict):
    got = decide(effect, low, high, direction=direction, null=null, paper_effect=paper_effect,
                 valid=valid)
    assert got == verdict and got in VERDICTS


def test_every_verdict_is_reachable():
    seen = {decide(5, 2, 8), decide(3, 2, 8, paper_effect=8), decide(1, -1, 3), decide(-4, -6, -2),
            decide(None, None, None, valid=False)}
    assert seen == set(VERDICTS)


@pytest.mark.parametrize("args, kw, match", [
    ((5.0, 6.0, 8.0), {}, "does not contain the effect"),
    ((5.0, 8.0, 2.0), {}, "low > high"),
    ((math.nan, 2.0, 8.0), {}, "not valid"),
    ((5.0, 2.0, math.inf), {}, "not valid"),
    ((5.0, 2.0, 8.0), {"direction": 0}, "direction"),
    ((5.0, 2.0, 8.0), {"direction": True}, "direction"),
])
def test_the_rule_refuses_an_invalid_measurement(args, kw, match):
    with pytest.raises(ValueError, match=match):
        decide(*args, **kw)


def test_the_rule_refuses_non_numbers():
    for bad in (None, "5", True):
        with pytest.raises(TypeError, match="effect must be a number"):
            decide(bad, 2.0, 8.0)


def test_pooled_mean_of_independent_differences():
    mean, (lo, hi) = claims.pooled([1.0, 3.0], [3.0, 4.0])
    assert mean == 2.0 and (lo, hi) == (-0.5, 4.5)
    with pytest.raises(ValueError):
        claims.pooled([], [])
    with pytest.raises(ValueError):
        claims.pooled([1.0], [-1.0])
    with pytest.raises(ValueError, match="not valid"):
        claims.pooled([1.0, math.nan], [1.0, 1.0])


def test_slug_makes_keys_of_labels():
    assert claims.slug("TREC: GloVe+CoVe - GloVe") == "trec_glove_cove_glove"
    assert claims.KEY_RE.match(claims.slug("NER, 800 sentences: ELMo mix - GloVe"))
    with pytest.raises(ValueError):
        claims.slug(" - ")


# ---- the helper
def test_claim_check_returns_prints_and_stores(table, capsys):
    assert check(table, headline=True, paper_number=10.2, paper_unit="points of Pearson's r") == "holds"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "05.sif" in out and "holds" in out and "headline" in out
    row = claims.frame(table=RunningTable("claims", directory=table.path.parent)).iloc[0]
    assert (row["key"], row["verdict"], row["headline"], row["low"]) == ("sif", "holds", True, 2.0)
    assert row["paper number"] == "10.2 points of Pearson's r"


@pytest.mark.parametrize("kw, error, match", [
    ({"paper": "nobody2099"}, ValueError, "references.bib"),
    ({"effect": math.nan}, ValueError, "not valid"),
    ({"interval": (6.0, 8.0)}, ValueError, "does not contain"),
    ({"interval": (2.0,)}, ValueError, r"\(low, high\)"),
    ({"interval": None}, TypeError, "interval low"),
    ({"effect": None}, TypeError, "effect"),
    ({"claim": " "}, ValueError, "claim"),
    ({"method": ""}, ValueError, "method"),
    ({"headline": "yes"}, TypeError, "headline"),
    ({"valid": False}, ValueError, "why="),
    ({"expect": "reversed"}, ValueError, "never asserts that a paper fails"),
    ({"expect": "not significant"}, ValueError, "never asserts"),
    ({"expect": "hold"}, ValueError, "expect"),
    ({"scale": "huge"}, ValueError, "scale"),
    ({"paper_number": 7.42}, ValueError, "paper_unit"),
    ({"chapter": "five"}, ValueError, "chapter"),
])
def test_bad_inputs_are_refused_and_nothing_is_written(table, kw, error, match):
    with pytest.raises(error, match=match):
        check(table, **kw)
    assert not table.path.exists()


def test_a_bad_key_is_refused(table):
    for key in ("", "Has Space", "05.sif", 5):
        with pytest.raises(ValueError, match="key"):
            check(table, key=key)


def test_expect_asserts_only_the_positive_verdict_the_text_relies_on(table):
    assert check(table, expect="holds") == "holds"
    assert check(table, expect=("holds", "holds (weak)"), effect=3.0, paper_effect=8.0) == "holds (weak)"
    with pytest.raises(AssertionError, match="relies on"):
        check(table, expect="holds", interval=(-1.0, 8.0))
    # the row is stored before the assertion fails: the ledger shows what was measured
    assert RunningTable("claims", directory=table.path.parent).rows()[0].meta["verdict"] == "not significant"


def test_not_testable_keeps_a_measurement_if_there_is_one(table):
    v = check(table, valid=False, why="both models sit at the unigram plateau")
    assert v == "not testable here"
    assert check(table, key="none", valid=False, why="gpu only", effect=None, interval=None) == v
    with pytest.raises(ValueError, match="does not contain"):
        check(table, key="bad", valid=False, why="x", interval=(6.0, 8.0))


# ---- storage
def test_ci_rows_are_not_written(table):
    check(table, scale="ci")
    assert not table.path.exists() and len(table) == 1


def test_file_output_is_deterministic_and_atomic(tmp_path):
    def run(directory):
        t = RunningTable("claims", directory=directory)
        check(t, key="b", chapter="06a", effect=1.23456789, interval=(0.5, 2.0))
        check(t, key="a", effect=5.0)
        check(t, key="b", chapter="06a", effect=1.23456789, interval=(0.5, 2.0))  # replaced
        return t.path

    p1, p2 = run(tmp_path / "one"), run(tmp_path / "two")
    assert p1.read_bytes() == p2.read_bytes()
    data = json.loads(p1.read_text())
    assert [r["model"] for r in data["rows"]] == ["05.a", "06a.b"]
    assert data["rows"][1]["scores"]["effect"] == 1.235  # four significant digits
    assert sorted(p.name for p in p1.parent.iterdir()) == ["claims.json"]  # no temporary left


def test_for_chapter_and_the_page(table):
    check(table, key="a")
    check(table, key="b", chapter="06a", paper="howard2018universal", interval=(-1.0, 8.0))
    check(table, key="c", chapter="06b", paper="peters2018deep", valid=False, why="a | pipe")
    assert list(for_chapter("06", table=table).index) == ["b", "c"]
    assert list(for_chapter("06b", table=table).index) == ["c"]
    assert list(for_chapter("05", table=table)["verdict"]) == ["holds"]
    page = claims.ledger_markdown(table=table, titles={"05": "5. Sentences"})
    assert "## 5. Sentences" in page and "## Chapter 06a" in page
    assert "{cite:t}`howard2018universal`" in page and r"a \| pipe" in page
    assert "**not significant** 1" in page


def test_every_stored_row_is_well_formed():
    rows = RunningTable("claims").rows()
    for r in rows:
        assert r.meta["verdict"] in VERDICTS, r.model
        assert r.meta["paper"] in claims.bib_keys(), r.model
        s = r.scores
        if r.meta["verdict"] != "not testable here":
            again = decide(s["effect"], s["low"], s["high"], direction=r.meta["direction"],
                           null=r.meta["null"], paper_effect=s.get("paper effect"))
            assert again == r.meta["verdict"], r.model


def test_the_ledger_page_titles_its_chapters_from_the_notebooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "claims_ledger", claims.BIB.parents[0] / "_ext" / "claims_ledger.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    titles = ext.chapter_titles()
    assert titles["05"].startswith("5. Sentence embeddings") and "06a" in titles
