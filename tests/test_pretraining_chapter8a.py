"""Chapter 8a's bookkeeping: scale presets, the table and claims logic, strips and the widget."""

import numpy as np
import pytest
import torch

from companion.pretraining import chapter8a as c8
from companion.pretraining.harness import PretrainResult, build_corpus
from companion.pretraining.mlm import WholeWordMLM
from companion.pretraining.sentence_tasks import SentenceTask

TEXTS = [
    "The Prime Minister of Canada met the President in New York on Monday. They talked about trade.",
    "A small model reads a short text. It predicts the hidden words from both sides of them.",
] * 20


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(TEXTS, TEXTS[:4], vocab_size=300, row_len=40, n_sentinels=2)


def test_sizes_are_consistent():
    for scale in ("ci", "laptop", "gpu"):  # the gpu preset is written, not run
        s = c8.sizes(scale)
        assert s.size.row_len > 8 and s.steps > 0 and s.seeds[0] == 0
        assert s.vocab_size > 256 + 6 + 16  # bytes, specials and sentinels fit


def test_strips_and_widget_callback(corpus):
    objs = {"wwm": WholeWordMLM(corpus.vocab)}
    tokens, strips = c8.mask_strips(corpus, objs, "The Prime Minister met the President.", seed=1)
    chosen, inputs = strips["wwm"]
    assert len(tokens) == len(chosen) == len(inputs)
    html = c8.mask_html(corpus, objs, "The Prime Minister met the President in New York.", "wwm", seed=3)
    assert "tokens to predict" in html
    assert "Cannot mask" in c8.mask_html(corpus, objs, "   ", "wwm")
    assert "Cannot mask" in c8.mask_html(corpus, objs, "The Prime Minister met", "nope")
    assert "shorten it" in c8.mask_html(corpus, objs, "word " * 60, "wwm")
    with pytest.raises(ValueError, match="strip"):
        c8.mask_strips(corpus, {"nsp": SentenceTask(corpus.vocab, "nsp")}, "The Prime Minister met the President.")


def test_widget_answers_again_after_an_error(corpus):
    objs = {"wwm": WholeWordMLM(corpus.vocab)}
    w = c8.mask_widget(corpus, objs, "")
    assert "Cannot mask" in w.output.value
    w.text.value = "The Prime Minister met the President in New York."
    assert "tokens to predict" in w.output.value and w.calls == 2
    w.seed.value = 5
    assert w.calls == 3


def _run(glue_acc: float, heldout_mlm: float, n: int = 200) -> c8.Run:
    """A fake run whose SST-2 predictions are right on the first glue_acc share of the examples."""
    res = PretrainResult("x", torch.nn.Linear(1, 1), [1.0] * 20, 100, 1e6, 1.0, 100.0, 0.01, 5)
    gold = np.arange(n) % 2
    pred = gold.copy()
    pred[int(glue_acc * n):] = 1 - pred[int(glue_acc * n):]
    return c8.Run(res, 0, 1.0, heldout_mlm, {"t": pred}, 0.0)


class _Task:
    def __init__(self, n=200):
        from companion.data.tasks import Example

        self.test = [Example("x", int(i % 2)) for i in range(n)]


def test_claim_verdicts_need_both_the_interval_and_the_seeds(monkeypatch):
    import companion.transformer.chapter7b as c7

    monkeypatch.setattr(c7, "main_score", lambda t, m: m["acc"])
    monkeypatch.setattr(c7, "task_metrics", lambda t, g, p: {"acc": 100 * float((g == p).mean())})
    tasks = {"t": _Task()}
    runs = {"a": [_run(0.9, 5.0), _run(0.91, 5.0), _run(0.89, 5.0)],
            "b": [_run(0.6, 5.2), _run(0.62, 5.2), _run(0.58, 5.2)],
            "c": [_run(0.9, 5.0), _run(0.5, 5.0), _run(0.7, 5.0)]}
    table = c8.claim_table(runs, tasks, n_boot=100, claims={"a-b": ("a", "b"), "b-a": ("b", "a"),
                                                           "c-b": ("c", "b"), "one seed": ("a", "b")})
    assert table.loc["a-b", "verdict"] == "holds" and table.loc["b-a", "verdict"] == "reversed"
    assert table.loc["c-b", "verdict"] == "inside the noise"  # mean +10 points, but the seeds spread 40
    assert abs(table.loc["a-b", "MLM loss gain"] - 0.2) < 1e-9
    assert table.loc["a-b", "MLM verdict"] == "lower loss"  # the seeds agree exactly: any gain clears 2 SE
    single = c8.claim_table({"a": runs["a"][:1], "b": runs["b"][:1]}, tasks, n_boot=50, claims={"x": ("a", "b")})
    assert single.loc["x", "verdict"] == "inside the noise"  # one seed: no spread, no claim
