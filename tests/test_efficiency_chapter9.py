"""Chapter 9's notebook helpers: the bootstrap spreads, the sizes, a tiny end-to-end pass."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from companion.efficiency import chapter9 as c9
from companion.transformer import BertConfig, BertEncoder, BertForSequence


def test_paired_ratio_and_diff():
    gold = np.array([0, 1] * 50)
    a = gold.copy()
    b = gold.copy()
    b[:20] = 1 - b[:20]  # b is right on 80 of 100
    r = c9.paired_ratio(a, b, gold, n_boot=300)
    assert r["ratio"] == pytest.approx(1 / 0.8) and r["low"] <= r["ratio"] <= r["high"]
    d = c9.paired_diff(a, b, gold, n_boot=300)
    assert d["diff"] == pytest.approx(20.0) and d["low"] > 0 and d["high"] <= 30
    same = c9.paired_diff(a, a, gold, n_boot=50)
    assert same["low"] == same["high"] == 0.0


def test_sizes_per_scale():
    ci, lap, gpu = (c9.sizes(s) for s in ("ci", "laptop", "gpu"))
    assert ci.n_layer % 2 == 0 and lap.n_layer % 2 == 0 and gpu.n_layer % 2 == 0  # students: half
    assert lap.d_model > ci.d_model and gpu.d_model > lap.d_model


def test_curves_on_a_tiny_classifier():
    cfg = BertConfig(vocab_size=40, n_layer=2, d_model=16, n_head=2, max_len=12)
    net = BertForSequence(BertEncoder(cfg, seed=0), 2, seed=0).eval()
    g = torch.Generator().manual_seed(0)
    ex = [(torch.randint(5, 40, (6,), generator=g).tolist(), None) for _ in range(24)]
    y = [i % 2 for i in range(24)]
    data = c9.Encoded(ex, y, ex, np.array(y))
    acc = c9.accuracy(net, cfg, data)
    mags = c9.magnitude_curve(net, data, [0.0, 0.5])
    assert mags["accuracy"].iloc[0] == acc and mags["bytes"].iloc[1] < mags["bytes"].iloc[0]
    heads, imp = c9.head_curve(net, data, [0.0, 0.5], n_importance=8)
    assert imp.shape == (2, 2) and list(heads["heads_pruned"]) == [0, 2]
    quant = c9.quantization_rows(net, data)
    assert list(quant.index) == ["fp32", "int8 (ours)", "int8 (torch)", "bf16"]
    assert quant["bytes"]["int8 (ours)"] < quant["bytes"]["fp32"]


def test_distilbert_recipe_on_a_tiny_pretrained_bert():
    from companion.efficiency.distill import every_other_layer
    from companion.transformer.bert import BertForPreTraining

    cfg = BertConfig(vocab_size=40, n_layer=2, d_model=16, n_head=2, max_len=12, pad_id=0, unk_id=1, cls_id=2,
                     sep_id=3, mask_id=4)
    teacher = BertForPreTraining(cfg, seed=0)
    before = {k: v.clone() for k, v in teacher.state_dict().items()}
    g = torch.Generator().manual_seed(0)
    start = torch.randint(0, 35, (40, 1), generator=g)  # cyclic runs: a masked token is predictable
    rows = torch.cat([torch.full((40, 1), 2), 5 + (start + torch.arange(10)) % 35, torch.full((40, 1), 3)], 1)
    ds = c9.DistilSizes(steps=12, batch_size=8, lr=1e-2, corpus_chars=0, ft_epochs=1, ft_lr=1e-3, ft_train=16,
                        heldout_rows=8)
    copy_ = every_other_layer(teacher)
    student, hist = c9.distil_pretrained(teacher, rows, ds)
    assert len(hist) == 12 and list(hist.columns) == ["soft", "mlm", "cos", "total"]
    assert student.config.n_layer == 1 and not student.training
    assert all(torch.equal(before[k], v) for k, v in teacher.state_dict().items())  # the teacher is frozen
    # one small step of the same recipe lowers the triple loss on the batch it saw
    from companion.efficiency.distill import distilbert_loss
    from companion.transformer.pretrain import mlm_batches

    b = mlm_batches(rows, cfg, ds.batch_size, seed=0)(0)[0]
    one, _ = c9.distil_pretrained(teacher, rows, dataclasses.replace(ds, steps=1, lr=1e-3))
    with torch.no_grad():
        assert distilbert_loss(one, teacher, b)["total"] < distilbert_loss(copy_, teacher, b)["total"]
    assert not torch.equal(student.encoder.blocks[0].mlp.fc.weight, copy_.encoder.blocks[0].mlp.fc.weight)
    assert np.isfinite(c9.mlm_loss(student, rows[:16]))
    ex = [(r[1:6].tolist(), None) for r in rows[:24]]
    data = c9.Encoded(ex, [i % 2 for i in range(24)], ex, np.array([i % 2 for i in range(24)]))
    nets = c9.finetune_encoders({"t": teacher.encoder, "s": student.encoder}, data, c9.sizes("ci"), ds)
    assert set(nets) == {"t", "s"} and nets["s"].encoder.config.n_layer == 1
    assert all(torch.equal(before[k], v) for k, v in teacher.state_dict().items())  # fine-tuned a copy


def test_boot_scores_equal_glue_main_scores_on_each_resample():
    from companion.evaluate.glue import main_score, task_metrics

    rng = np.random.default_rng(0)
    gold, pred = rng.integers(0, 2, 60), rng.integers(0, 2, (2, 60))
    idx = rng.integers(0, 60, (5, 60))
    for task in ("mrpc", "sst2_glue", "sick_e"):
        got = c9.boot_scores(task, gold, pred, idx)
        for b in range(5):
            want = np.mean([main_score(task, task_metrics(task, gold[idx[b]], p[idx[b]])) for p in pred])
            assert got[b] == pytest.approx(want)
    assert c9.boot_scores("mrpc", gold, np.zeros(60, int), idx[:1])[0] == pytest.approx(
        50 * (gold[idx[0]] == 0).mean())  # no true positive: F1 = 0
    with pytest.raises(ValueError, match="regression"):
        c9.boot_scores("stsb", gold, pred, idx)


def test_kept_table_and_glue_scores():
    gold = np.array([0, 1, 1, 0] * 25)
    wrong = gold.copy()
    wrong[:20] = 1 - wrong[:20]
    data = c9.Encoded([], [1, 1, 0], [], gold)
    res = {"sst2_glue": c9.task_result(data, {"teacher": gold, "student": wrong}),
           "mrpc": c9.task_result(data, {"teacher": wrong, "student": wrong})}
    t = c9.kept_table(res, n_boot=200)
    assert t.loc[("SST-2", "teacher"), "% kept"] == 100 and t.loc[("SST-2", "student"), "% kept"] == pytest.approx(80)
    assert t.loc[("MRPC", "student"), "low"] == t.loc[("MRPC", "student"), "high"] == pytest.approx(100)
    assert t.loc[("SST-2", "majority class"), "score"] == 50  # always 1, the training majority
    assert t.loc[("average", "student"), "% kept"] == pytest.approx(
        100 * t.xs("student", level="model")["score"].iloc[:2].mean() / t.xs("teacher", level="model")["score"]
        .iloc[:2].mean())
    assert (t["low"] <= t["% kept"] + 1e-9).all() and (t["% kept"] <= t["high"] + 1e-9).all()
    s = c9.glue_scores(res, "student")
    assert set(s) == {"SST-2 acc", "MRPC F1", "MRPC acc"} and s["SST-2 acc"] == 80.0


def test_distil_glue_on_a_tiny_pair_task():
    from companion.data.tasks import Example
    from companion.evaluate.glue import GlueSpec, GlueTask
    from companion.transformer import chapter7b as c7

    words = ["a", "b", "c", "d", "e", "f", "g", "h"]
    rng = np.random.default_rng(0)
    ex = [Example(" ".join(rng.choice(words, 4)), int(i % 3), " ".join(rng.choice(words, 3))) for i in range(30)]
    spec = GlueSpec("sick_e", "ci", 0, {}, {}, {}, "")
    task = GlueTask("sick_e", ex[:20], ex[20:25], ex[20:], ("e", "n", "c"), spec)
    tok = c7.train_tokenizer([e.text for e in ex], 270)
    sp = tok.special_tokens
    cfg = BertConfig(vocab_size=len(tok), n_layer=1, d_model=16, n_head=2, max_len=16, pad_id=sp["[PAD]"],
                     unk_id=sp["[UNK]"], cls_id=sp["[CLS]"], sep_id=sp["[SEP]"], mask_id=sp["[MASK]"])
    ds = dataclasses.replace(c9.distil_sizes("ci"), glue_train=12, glue_test=8)
    res = c9.distil_glue({"t": BertEncoder(cfg, seed=0), "s": BertEncoder(cfg, seed=1)}, tok, {"sick_e": task},
                         c9.sizes("ci"), ds, seeds=(0, 1))
    r = res["sick_e"]
    assert r["preds"]["t"].shape == (2, 8) and r["preds"]["t"].max() <= 2 and len(r["gold"]) == 8
    assert r["majority"] == 0  # labels 0, 1, 2, 0, ... over the first 12
    assert set(c9.kept_table(res, teacher="t", n_boot=50).index.get_level_values("model")) == {
        "t", "s", "majority class"}
