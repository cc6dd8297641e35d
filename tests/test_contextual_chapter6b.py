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
