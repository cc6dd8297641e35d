"""Chapter 8b's helpers: sizes, the worked examples, text-to-text labels, the claim verdicts."""

import numpy as np
import pytest

from companion.evaluate.glue import GlueTask
from companion.pretraining import chapter8b as c8
from companion.pretraining.t5 import from_text, to_text


def test_sizes_per_scale():
    for scale in ("ci", "laptop", "gpu"):
        s = c8.sizes(scale)
        assert s.size.row_len > 8 and s.budget_steps >= 1 and s.seeds
    assert c8.sizes("laptop").size == c8.sizes("laptop").size.__class__(64, 2, 4, 256, 48)  # chapter 8a's


def test_worked_examples_are_deterministic_and_invertible():
    words = "The cat sat on the mat . It was warm there ! Then a dog came in .".split()  # noqa: SIM905
    a, b = c8.noising_frame(words, seed=0), c8.noising_frame(words, seed=0)
    assert a.equals(b) and list(a.index) == ["original", *c8.NOISINGS]
    noised = c8.noised_words(words, seed=0)
    assert sorted(noised["sentence permutation"]) == list(range(len(words)))
    assert sorted(noised["document rotation"]) == list(range(len(words)))
    assert noised["token deletion"] == [p for p in noised["token deletion"] if p >= 0]
    frame = c8.span_corruption_words(words, seed=1)
    assert frame.loc["rebuilt", "text"] == " ".join(words)
    assert "<X0>" in frame.loc["input", "text"] and frame.loc["target", "text"].endswith("</s>")


class _Ex:
    def __init__(self, text, label, text_b=None):
        self.text, self.label, self.text_b = text, label, text_b


def test_text_to_text_labels_round_trip():
    rte = GlueTask("rte", [], [], [], ("entailment", "not_entailment"), None)
    src, tgt = to_text(rte, _Ex("A man sleeps.", 1, "Nobody sleeps."))
    assert src == "rte premise: A man sleeps. hypothesis: Nobody sleeps." and tgt == "not_entailment"
    assert from_text(rte, " not_entailment") == 1.0 and from_text(rte, "maybe") is None
    stsb = GlueTask("stsb", [], [], [], None, None)
    assert to_text(stsb, _Ex("a", 3.87, "b"))[1] == "3.8"
    assert from_text(stsb, "3.8") == pytest.approx(3.8) and from_text(stsb, "7") is None


def test_loss_claims_verdicts():
    rng = np.random.default_rng(0)
    n = np.full(200, 10)
    base = rng.gamma(20, 1.0, 200)
    res = [{"a": {"nll": base - 2.0, "n": n, "loss": (base - 2.0).sum() / n.sum()},
            "b": {"nll": base, "n": n, "loss": base.sum() / n.sum()},
            "c": {"nll": base + rng.normal(0, 1, 200), "n": n, "loss": 0.0}}]
    res[0]["c"]["loss"] = res[0]["c"]["nll"].sum() / n.sum()
    claims = c8.loss_claims(res, {"a-b": ("a", "b"), "c-b": ("c", "b"), "b-a": ("b", "a")}, n_boot=300)
    assert claims.loc["a-b", "verdict"] == "a lower" and claims.loc["b-a", "verdict"] == "b lower"
    assert claims.loc["c-b", "verdict"] == "not significant"
    assert claims.loc["a-b", "difference"] == pytest.approx(-0.2)
