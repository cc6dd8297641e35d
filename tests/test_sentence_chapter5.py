"""Chapter 5's notebook helpers: the nearest-sentence widget (its callback, an error and the
recovery) and the claim-check plumbing (paired differences, the cosine bootstrap)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.evaluate.senteval import (
    ProbeConfig,
    RandomBowEncoder,
    senteval,
    toy_task,
)
from companion.sentence.report import (
    cosine_bootstrap,
    load_stored_seeds,
    pair_cosines,
    paired_table,
    seed_spread,
    task_loss_table,
    verdict,
    verdict_counts,
    versus_table,
)
from companion.sentence.widget import SentenceIndex, sentence_explorer

POOL = ["the cat sat on the mat", "a dog sat on a log", "stocks fell sharply today",
        "the market fell again", "what is the capital of france ?"]


def _bow(sentences):
    vocab = sorted({w for s in POOL for w in s.split()})
    out = np.zeros((len(sentences), len(vocab)), np.float32)
    for i, s in enumerate(sentences):
        for w in s.split():
            if w in vocab:
                out[i, vocab.index(w)] += 1
    return out


def test_search_finds_the_sentence_that_shares_words():
    index = SentenceIndex({"bow": _bow, "random": RandomBowEncoder(16)}, POOL + [POOL[0]])
    assert len(index.pool) == len(POOL)  # the duplicate is dropped
    res = index.search("the stock market fell", k=2)
    assert res.error is None and [a.encoder for a in res.answers] == ["bow", "random"]
    assert res.by_encoder()["bow"].sentences[0] == "the market fell again"
    sims = [s for _, s in res.answers[0].neighbours]
    assert sims == sorted(sims, reverse=True) and len(sims) == 2


def test_search_errors_are_messages_and_bad_arguments_raise():
    index = SentenceIndex({"bow": _bow}, POOL)
    assert index.search("   ").error.startswith("type a sentence")
    with pytest.raises(ValueError, match="k must be"):
        index.search("a cat", k=0)
    with pytest.raises(TypeError, match="query must be a string"):
        index.search(3)
    with pytest.raises(ValueError, match="non-empty dict"):
        SentenceIndex({}, POOL)
    with pytest.raises(TypeError, match="not a function"):
        SentenceIndex({"x": 3}, POOL)
    with pytest.raises(ValueError, match="at least two"):
        SentenceIndex({"bow": _bow}, ["one", " "])


def test_widget_shows_an_error_then_answers_again():
    pytest.importorskip("ipywidgets")
    index = SentenceIndex({"bow": _bow}, POOL)
    w = sentence_explorer(index, query="a cat on a mat", k=2)
    assert "Nearest to" in w.output.value and w.calls == 1
    w.query.value = ""
    assert "Cannot answer" in w.output.value
    w.query.value = "the market"
    assert w.last.error is None and "market fell again" in w.output.value
    w.k.value = 3  # another control answers too
    assert w.output.value.count("<br>") == 3 and w.calls == 4


def test_widget_recovers_from_a_failing_encoder():
    pytest.importorskip("ipywidgets")
    state = {"fail": False}

    def flaky(sentences):
        if state["fail"]:
            raise ValueError("a planted failure")
        return _bow(sentences)

    w = sentence_explorer(SentenceIndex({"bow": flaky}, POOL), k=2)
    state["fail"] = True
    w.k.value = 3
    assert "Cannot answer" in w.output.value and "planted" in w.output.value
    state["fail"] = False
    w.k.value = 2
    assert w.last.error is None and w.calls == 3


def test_paired_table_uses_the_paired_runs():
    cfg = ProbeConfig(max_train=150, max_dev=60, max_test=80, max_all=150, inner_folds=2, outer_folds=3,
                      seeds=(0, 1, 2), c_grid=(0.1, 1.0))
    tasks = [toy_task("toy_cls", sizes={"all": 150}), toy_task("toy_pair", kind="pair")]
    a = senteval(RandomBowEncoder(32, seed=0), tasks, name="A", config=cfg)
    b = senteval(RandomBowEncoder(4, seed=1), tasks, name="B", config=cfg)
    t = paired_table(a, b)
    assert list(t.index) == ["toy_cls", "toy_pair"]
    runs = np.asarray(a.results["toy_cls"].runs) - np.asarray(b.results["toy_cls"].runs)
    assert t.loc["toy_cls", "sd of paired diff"] == round(float(runs.std(ddof=1)), 2)
    assert t.loc["toy_cls", "A - B"] == round(a.results["toy_cls"].mean - b.results["toy_cls"].mean, 2)
    self_t = paired_table(a, a)
    assert (self_t["A - B"] == 0).all() and (self_t["verdict"] == "within noise").all()
    with pytest.raises(ValueError, match="missing"):
        paired_table(a, b, ["nope"])
    with pytest.raises(TypeError):
        paired_table(a, "b")


def test_versus_table_puts_each_paired_verdict_beside_the_scores():
    cfg = ProbeConfig(max_train=120, max_dev=40, max_test=60, max_all=120, inner_folds=2, outer_folds=3,
                      seeds=(0, 1), c_grid=(1.0,))
    tasks = [toy_task("toy_cls", sizes={"all": 120})]
    a = senteval(RandomBowEncoder(32, seed=0), tasks, name="A", config=cfg)
    b = senteval(RandomBowEncoder(2, seed=1), tasks, name="B", config=cfg)
    t = versus_table(a, {"b": b, "a again": a})
    assert list(t.columns) == ["A", "b", "vs b", "a again", "vs a again"]
    assert t.loc["toy_cls", "vs b"] == paired_table(a, b).loc["toy_cls", "verdict"]
    assert t.loc["toy_cls", "vs a again"] == "within noise"
    with pytest.raises(ValueError, match="at least one"):
        versus_table(a, {})


def test_task_loss_table_and_seed_spread():
    t = task_loss_table({"both": {"x": [5.0, 3.0, 1.0], "y": [2.0]}, "x only": {"x": [4.0, 2.0]}}, last=2)
    assert t.loc["both", "x"] == 2.0 and t.loc["both", "y"] == 2.0 and t.loc["x only", "x"] == 3.0
    assert np.isnan(t.loc["x only", "y"])
    with pytest.raises(ValueError, match="no task losses"):
        task_loss_table({"empty": {}})
    assert seed_spread([1.0, -0.5, 2.0]) == {"mean": 2.5 / 3, "min": -0.5, "max": 2.0, "n": 3}
    with pytest.raises(ValueError, match="one finite difference per seed"):
        seed_spread([])


def test_verdict():
    assert verdict(5.0, 1.0) == "A better" and verdict(-5.0, 1.0) == "B better"
    assert verdict(1.5, 1.0) == "within noise" and verdict(1.0, float("nan")) == "within noise"


def test_cosine_bootstrap_and_pair_cosines():
    task = toy_task("toy_r", kind="pair", regression=True, sizes={"train": 10, "dev": 10, "test": 120})
    pairs = task.splits["test"]
    gold = [p.label for p in pairs]
    cos_good = pair_cosines(RandomBowEncoder(64), pairs)
    assert cos_good.shape == (120,) and np.all(np.abs(cos_good) <= 1 + 1e-9)
    cos_bad = np.random.default_rng(0).random(120)
    res = cosine_bootstrap(cos_good, cos_bad, gold, n_boot=200, seed=0)
    assert res["A"] > 50 and res["lo"] > 0 and res["lo"] <= res["A - B"] <= res["hi"]
    same = cosine_bootstrap(cos_good, cos_good, gold, n_boot=50)
    assert same["A - B"] == 0 and same["lo"] == same["hi"] == 0
    with pytest.raises(ValueError, match="equal 1-D"):
        cosine_bootstrap(cos_good, cos_good[:5], gold)
    with pytest.raises(ValueError, match="pair"):
        pair_cosines(RandomBowEncoder(8), [toy_task("s").splits["test"][0]])


def test_gensen_diagram_draws_one_panel():
    import matplotlib

    matplotlib.use("Agg")
    from companion.sentence.diagram import GENSEN, draw_family

    fig = draw_family([GENSEN])
    assert len(fig.axes) == 1 and fig.axes[0].get_title().startswith("GenSen-lite")
    with pytest.raises(ValueError, match="at least one panel"):
        draw_family([])


def test_verdict_counts_and_the_stored_seeds(tmp_path):
    import json

    import pandas as pd

    t = pd.DataFrame({"A": [1, 2, 3], "verdict": ["A better", "within noise", "A better"]}, index=["x", "y", "z"])
    assert verdict_counts(t) == {"A better": 2, "B better": 0, "within noise": 1}
    vs = {"x": {"A": 1.0, "vs b": "B better", "vs c": "A better"}, "y": {"A": 2.0, "vs b": "B better", "vs c": "x"}}
    assert verdict_counts(vs) == {"A better": 1, "B better": 2, "within noise": 0}
    with pytest.raises(ValueError, match="verdict"):
        verdict_counts(pd.DataFrame({"A": [1.0]}))
    with pytest.raises(FileNotFoundError, match="ch05_seeds.py"):
        load_stored_seeds(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text(json.dumps({"seeds": {}}))
    with pytest.raises(ValueError, match="infersent"):
        load_stored_seeds(tmp_path / "bad.json")
    stored = load_stored_seeds()  # the committed file: every seed holds the chapter's comparisons
    assert stored["meta"]["scale"] == "laptop" and stored["seeds"]
    for r in stored["seeds"].values():
        assert {"dbow vs mean skip-gram", "dm_mean vs mean skip-gram", "QT vs ST", "GenSen vs single"} <= set(r)
        assert sum(verdict_counts(r["QT vs ST"]).values()) == 6
