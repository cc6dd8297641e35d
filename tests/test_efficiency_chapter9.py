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
