"""Tests of companion.evaluate.glue: metrics against scikit-learn and scipy, the fixed subsamples
(deterministic, disjoint, fingerprinted, carved dev), predictions checked, the report."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import accuracy_score, f1_score

from companion.data.tasks import Example, TaskData
from companion.evaluate.glue import (
    GLUE_SIZES,
    accuracy,
    evaluate_glue,
    f1_binary,
    load_glue,
    majority_baseline,
    pearson,
    task_metrics,
)
from companion.evaluate.senteval import toy_task


def test_metrics_match_sklearn_and_scipy():
    rng = np.random.default_rng(0)
    for _ in range(25):
        g, p = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
        assert accuracy(g, p) == pytest.approx(accuracy_score(g, p))
        assert f1_binary(g, p) == pytest.approx(f1_score(g, p, zero_division=0))
        x, y = np.round(rng.uniform(0, 5, 60), 1), rng.normal(size=60)
        assert pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y).statistic)
    m = task_metrics("stsb", [1.0, 2, 3, 3, 5], [1.1, 1.9, 3.5, 2.5, 4])
    assert m["spearman"] == pytest.approx(100 * scipy.stats.spearmanr([1, 2, 3, 3, 5], [1.1, 1.9, 3.5, 2.5, 4]).statistic)
    assert set(task_metrics("mrpc", [0, 1], [1, 1])) == {"F1", "acc"}
    assert set(task_metrics("rte", [0, 1], [1, 1])) == {"acc"}
    with pytest.raises(ValueError, match="equally long"):
        accuracy([0, 1], [0])
    with pytest.raises(ValueError, match="no examples"):
        accuracy([], [])


def big_task(name="mrpc", dev=True, n=3000):
    t = toy_task(name, kind="pair", sizes={"train": n, "dev": 800, "test": 1500} if dev else
                 {"train": n, "test": 1500}, seed=1)
    return t


def test_subsamples_are_fixed_disjoint_and_fingerprinted():
    task = big_task()
    a, b = load_glue(task, "laptop"), load_glue(task, "laptop")
    assert a.spec == b.spec and a.spec.sizes == GLUE_SIZES["laptop"]
    assert len(set(a.spec.indices["train"])) == 2000
    ci = load_glue(task, "ci")
    assert ci.spec.sizes == GLUE_SIZES["ci"] and ci.spec.fingerprint != a.spec.fingerprint
    assert load_glue(task, "gpu").spec.sizes == {"train": 3000, "dev": 800, "test": 1500}
    other = load_glue(task, "laptop", seed=1)
    assert other.spec.indices["train"] != a.spec.indices["train"]
    changed = big_task()
    changed.splits["test"][a.spec.indices["test"][0]] = Example("edited", 0, "text")
    assert load_glue(changed, "laptop").spec.fingerprint != a.spec.fingerprint


def test_dev_carved_from_train_when_missing():
    g = load_glue(big_task(dev=False), "gpu")
    assert g.spec.sources["dev"] == "train" and g.spec.sizes["dev"] == 500
    assert not set(g.spec.indices["dev"]) & set(g.spec.indices["train"])
    assert g.spec.sizes["train"] == 2500


def test_evaluate_and_report():
    tasks = {"mrpc": load_glue(big_task("mrpc"), "ci"),
             "stsb": load_glue(toy_task("stsb", kind="pair", regression=True, seed=2), "ci")}
    gold = {t: {(e.text, e.text_b): e.label for e in g.test} for t, g in tasks.items()}
    perfect = evaluate_glue(lambda t, exs: [gold[t][(e.text, e.text_b)] for e in exs], tasks, name="oracle")
    assert perfect.scores() == {"MRPC F1": 100.0, "MRPC acc": 100.0, "STS-B pearson": 100.0,
                                "STS-B spearman": 100.0, "avg": 100.0}
    assert list(perfect.frame().index) == ["MRPC", "STS-B"]
    base = evaluate_glue(majority_baseline(tasks), {"mrpc": tasks["mrpc"]})
    majority = int(np.mean([e.label for e in tasks["mrpc"].train]) > 0.5)
    test_labels = np.array([e.label for e in tasks["mrpc"].test])
    assert base.metrics["mrpc"]["acc"] == pytest.approx(100 * np.mean(test_labels == majority))
    with pytest.raises(ValueError, match="regression"):
        evaluate_glue(majority_baseline(tasks), tasks)


@pytest.mark.parametrize("pred, match", [
    (lambda t, exs: [0] * (len(exs) - 1), "one class index"),
    (lambda t, exs: [2] * len(exs), "class indices 0..1"),
    (lambda t, exs: [0.5] * len(exs), "argmax"),
    (lambda t, exs: [float("nan")] * len(exs), "NaN"),
    (lambda t, exs: ["yes"] * len(exs), "numbers"),
])
def test_bad_predictions(pred, match):
    tasks = [load_glue(big_task(), "ci")]
    with pytest.raises((ValueError, TypeError), match=match):
        evaluate_glue(pred, tasks)


def test_bad_tasks():
    with pytest.raises(ValueError, match="not a GLUE-lite task"):
        load_glue("cola", "ci")
    with pytest.raises(ValueError, match="scale"):
        load_glue(big_task(), "huge")
    with pytest.raises(ValueError, match="'train' and 'test'"):
        load_glue(TaskData("x", {"all": [Example("a", 0)]}, ("a", "b"), "single", "accuracy"), "ci")
    with pytest.raises(ValueError, match="split must be"):
        load_glue(big_task(), "ci").split("validation")


@pytest.mark.slow
def test_real_tasks_use_the_recorded_examples():
    """Every chapter fine-tunes and tests on the same examples: the subsamples of the real tasks
    still hash to the fingerprints recorded in rows/glue_lite_specs.json (a changed loader or
    file would silently change the GLUE-lite numbers otherwise)."""
    from companion.evaluate.glue import GLUE_TASKS, stored_specs

    stored = stored_specs()
    for scale in ("ci", "laptop"):
        for task in GLUE_TASKS:
            spec = load_glue(task, scale).spec
            assert spec.fingerprint == stored[scale][task]["fingerprint"], (scale, task)
            assert spec.sizes == stored[scale][task]["sizes"]
