"""Chapter 6b's bookkeeping: sizes per scale, the per-sentence span statistics behind the
bootstrap (equal to the tagging harness's F1), the claim intervals, the pseudo-word probe."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from companion.contextual import chapter6b as c6
from companion.evaluate.tagging import span_scores, token_accuracy


def test_sizes_exist_for_every_scale():
    for scale in ("ci", "laptop", "gpu"):
        S = c6.sizes(scale)
        assert S.tag_few < S.tag_train and S.cells > S.d and S.seeds


def test_sentence_stats_reproduce_the_harness():
    gold = [["B-PER", "I-PER", "O"], ["B-LOC", "O"], ["O", "B-ORG"]]
    pred = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["O", "O"]]
    st = c6._sentence_stats(gold, pred, spans=True)
    assert c6._score(st, True) == pytest.approx(100 * span_scores(gold, pred).f1)
    acc = c6._sentence_stats(gold, pred, spans=False)
    assert c6._score(acc, False) == pytest.approx(100 * token_accuracy(gold, pred))


def _runs(gap):
    rng = np.random.default_rng(0)
    rows = []
    for variant, p in (("GloVe", 0.6), ("TagLM (top layer)", 0.6 + gap)):
        for seed in (0, 1):
            correct = rng.binomial(4, p, size=300)
            stats = np.stack([correct, np.full(300, 4), np.full(300, 4)], 1).astype(float)
            rows.append({"task": "NER", "variant": variant, "labelled": 10, "seed": seed,
                         "F1": c6._score(stats, True), "stats": stats, "weights": None})
    return pd.DataFrame(rows)


def test_tagging_diff_sees_a_real_gap_and_not_a_null_one():
    d, lo, hi = c6.tagging_diff(_runs(0.2), "NER", 10, "TagLM (top layer)", "GloVe", n_boot=200)
    assert lo > 0 and 15 < d < 25
    d0, lo0, hi0 = c6.tagging_diff(_runs(0.0), "NER", 10, "TagLM (top layer)", "GloVe", n_boot=200)
    assert lo0 < 0 < hi0 or abs(d0) < 3
    assert c6.claim_row("x", d, lo, hi)["verdict"] == "larger than the spread"
    with pytest.raises(ValueError, match="no runs"):
        c6.tagging_diff(_runs(0.0), "NER", 99, "TagLM (top layer)", "GloVe")
    summary = c6.tagging_summary(_runs(0.2))
    assert summary.loc[("NER", 10, "GloVe"), "seeds"] == 2
    S = c6.sizes("ci")
    import dataclasses

    rows = c6.tagging_scores(_runs(0.2), dataclasses.replace(S, tag_train=10))
    assert rows["GloVe"]["NER F1 (10 sent.)"] == summary.loc[("NER", 10, "GloVe"), "F1"]
    assert rows["ELMo (scalar mix)"] == {}


def test_pseudoword_probe_reads_the_context():
    """A fake 2-layer encoder: layer 0 the token's spelling only, layer 1 the next word's too."""
    rng = np.random.default_rng(0)
    pool = []
    for _ in range(60):
        pool.append(["we", "drank", "water", "today"])
        pool.append(["we", "spent", "money", "today"])
    rng.shuffle(pool)

    def vec(w):
        return np.random.default_rng(sum(map(ord, w))).standard_normal(4)

    def extract(sents):
        out = []
        for s in sents:
            l0 = np.stack([vec(w) for w in s])
            prev = np.stack([vec(s[j - 1]) if j else np.zeros(4) for j in range(len(s))])
            out.append(np.stack([l0, l0 + prev]))
        return out

    S = c6.sizes("ci")
    table = c6.pseudoword_probe(extract, pool, S, pairs=[("money", "water")])
    assert table.loc["money/water", "layer 0"] <= 60  # spelling alone: chance
    assert table.loc["money/water", "layer 1"] == 100  # 'drank' vs 'spent' before it
    with pytest.raises(ValueError, match="too few sentences"):
        c6.pseudoword_probe(extract, pool, S, pairs=[("money", "whale")])


def _fake_layers(sents):
    """A stand-in biLM (module level, so that spawned workers can unpickle it): 3 layers of 6."""
    return [np.stack([np.stack([np.random.default_rng([len(w), k]).standard_normal(6) for w in s])
                      for k in range(3)]) for s in sents]


def _tiny_tagging(_name):
    from companion.data.tasks import TaggedSentence

    rng = np.random.default_rng(0)
    words = ["Paris", "is", "big", "John", "runs", "in", "London", "the", "dog", "barks"]

    def sent():
        toks = [words[i] for i in rng.integers(0, len(words), 5)]
        return TaggedSentence(tuple(toks), tuple("B-X" if t[0].isupper() else "O" for t in toks))

    return {"train": [sent() for _ in range(12)], "dev": [sent() for _ in range(4)],
            "test": [sent() for _ in range(6)]}


def test_tagging_runs_give_the_same_numbers_in_two_processes(monkeypatch):
    """The taggers are spread over processes; their scores must not depend on it."""
    import dataclasses

    import torch

    from companion.contextual.taglm import LMFeatureCache
    from companion.data import tasks

    monkeypatch.setattr(tasks, "load_tagging", _tiny_tagging)
    words = ["paris", "is", "big", "john", "runs", "in", "london", "the", "dog", "barks"]
    glove = np.random.default_rng(1).standard_normal((len(words), 8)).astype(np.float32)
    S = dataclasses.replace(c6.sizes("ci"), tag_train=12, tag_few=4, tag_dev=4, tag_test=6,
                            tag_epochs=1, seeds=(0,))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each worker runs
    try:
        one = c6.tagging_runs(glove, words, LMFeatureCache(_fake_layers), S, workers=1)
        two = c6.tagging_runs(glove, words, LMFeatureCache(_fake_layers), S, workers=2)
    finally:
        torch.set_num_threads(threads)
    assert len(one) == 2 * (3 + 2)  # two tasks; three variants with more labels, two with few
    assert one.F1.nunique() > 1  # the runs differ: equal tables are not equal by accident
    cols = ["task", "variant", "labelled", "seed", "F1"]
    pd.testing.assert_frame_equal(one[cols], two[cols])
    assert np.array_equal(np.stack(one.stats.tolist()), np.stack(two.stats.tolist()))
