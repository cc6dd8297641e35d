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


class _CharTok:
    """Characters as ids 10.. (a stand-in for the BPE: ``encode_ordinary`` and ``decode``)."""

    def encode_ordinary(self, text):
        return [10 + ord(ch) % 40 for ch in text]

    def decode(self, ids):
        return "".join(chr(i - 10 + 97) for i in ids)


def test_rank_scoring_is_the_teacher_forced_likelihood_of_each_label():
    import torch

    from companion.pretraining.seq2seq import (
        Seq2Seq,
        Seq2SeqConfig,
        pad_rows,
        shift_right,
    )
    from companion.pretraining.t5 import (
        candidate_texts,
        rank_predictions,
        score_candidates,
    )

    model = Seq2Seq(Seq2SeqConfig(vocab_size=60, d_model=16, n_head=2, max_len=32), seed=0).eval()
    tok, sources, cands = _CharTok(), ["a cat", "the dog ran", "xy"], ("no", "yes", "maybe")
    s = score_candidates(model, tok, sources, cands, batch_size=2)  # padding within a batch
    assert s.shape == (3, 3)
    for i, src in enumerate(sources):
        for k, c in enumerate(cands):
            y = torch.tensor([[*tok.encode_ordinary(" " + c), 2]])
            with torch.no_grad():
                logits = model(torch.tensor([tok.encode_ordinary(src)]), shift_right(y, 1, 0))
            ll = torch.log_softmax(logits, -1).gather(-1, y[..., None]).sum()
            assert s[i, k] == pytest.approx(float(ll), abs=1e-4)
    rte = GlueTask("rte", [], [], [], ("entailment", "not_entailment"), None)
    assert set(rank_predictions(model, tok, rte, sources)) <= {0, 1}
    stsb = GlueTask("stsb", [], [], [], None, None)
    assert candidate_texts(stsb)[:3] == ("0.0", "0.2", "0.4") and len(candidate_texts(stsb)) == 26
    scores = rank_predictions(model, tok, stsb, sources)
    assert ((scores >= 0) & (scores <= 5)).all() and scores.std() > 0  # never a constant
    assert pad_rows([[1]], 2, 0)[0].tolist() == [[1, 0]]


def test_noising_widget_callback_error_then_recovery():
    from companion.pretraining.noising_widget import (
        CORRUPTIONS,
        corrupt_words,
        noising_html,
        noising_widget,
    )

    words = "The cat sat on the mat . It was warm there ! Then a dog came in .".split()  # noqa: SIM905
    for c in CORRUPTIONS:
        inp, tgt = corrupt_words(words, c, seed=2)
        assert corrupt_words(words, c, seed=2) == (inp, tgt)  # seeded
        if c in c8.NOISINGS:
            assert tgt == words
    inp, tgt = corrupt_words(words, "MASS", seed=1, rate=0.5)
    assert inp.count("[MASK]") == len(tgt) == 9 and len(inp) == len(words)
    inp, tgt = corrupt_words(words, "T5 span corruption", seed=1)
    assert tgt[-1] == "</s>" and inp[-1] != "</s>" and "<X0>" in inp
    assert "Cannot corrupt" in noising_html("too short", "MASS")
    assert "between 0 and 1" in noising_html(" ".join(words), "MASS", rate=1.5)
    assert "must be one of" in noising_html(" ".join(words), "shuffle")
    w = noising_widget("two words")
    assert "Cannot corrupt" in w.output.value
    w.text.value = " ".join(words)  # change a control: the widget answers again
    assert "decoder writes" in w.output.value and w.calls == 2
    w.corruption.value = "T5 span corruption"
    assert "&lt;X0&gt;" in w.output.value and w.calls == 3
