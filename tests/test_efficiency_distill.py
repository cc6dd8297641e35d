"""Chapter 9: distillation losses against hand computation; students copied from teachers."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from companion.efficiency.distill import (
    DistillConfig,
    classifier_loss,
    cosine_hidden_loss,
    distilbert_loss,
    distill_classifier,
    every_other_layer,
    hard_soft_loss,
    hidden_states,
    kd_loss,
    layer_map,
    soft_targets,
    tinybert_loss,
)
from companion.train import TrainConfig
from companion.transformer import (
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    attention_weights,
)


def test_soft_targets_by_hand():
    p = soft_targets(torch.tensor([2.0, 0.0]), temperature=2.0)
    e = math.exp(1.0)
    assert torch.allclose(p, torch.tensor([e / (e + 1), 1 / (e + 1)]))
    assert torch.allclose(soft_targets(torch.tensor([5.0, 1.0, -3.0]), 1e6), torch.full((3,), 1 / 3), atol=1e-5)
    with pytest.raises(ValueError, match="temperature"):
        soft_targets(torch.zeros(3), 0.0)


def test_kd_loss_by_hand():
    s, t, T = torch.tensor([[1.0, 0.0, -1.0]]), torch.tensor([[0.0, 2.0, 0.0]]), 2.0
    pt = [math.exp(x / T) for x in (0.0, 2.0, 0.0)]
    pt = [x / sum(pt) for x in pt]
    ps = [math.exp(x / T) for x in (1.0, 0.0, -1.0)]
    ps = [x / sum(ps) for x in ps]
    kl = sum(a * math.log(a / b) for a, b in zip(pt, ps))
    assert kd_loss(s, t, T).item() == pytest.approx(T * T * kl, rel=1e-5)
    # equal logits: no loss; the teacher gets no gradient
    assert kd_loss(t, t, 3.0).item() == pytest.approx(0.0, abs=1e-7)
    tt = t.clone().requires_grad_(True)
    ss = s.clone().requires_grad_(True)
    kd_loss(ss, tt, T).backward()
    assert tt.grad is None and ss.grad is not None
    # the gradient is (p_s - p_t) * T (the T^2 factor times 1/T from the softened logits)
    assert torch.allclose(ss.grad[0], T * (torch.tensor(ps) - torch.tensor(pt)), atol=1e-6)
    with pytest.raises(ValueError, match="same shape"):
        kd_loss(s, torch.zeros(1, 4))


def test_hard_soft_loss_mixes():
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    y = torch.tensor([0, 2, 1, 1])
    got = hard_soft_loss(s, t, y, 3.0, 0.25)
    assert got.item() == pytest.approx(0.25 * kd_loss(s, t, 3.0).item() + 0.75 * F.cross_entropy(s, y).item(),
                                       rel=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        hard_soft_loss(s, t, y, alpha=1.5)


def test_cosine_hidden_loss_by_hand():
    hs = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]])
    ht = torch.tensor([[[2.0, 0.0], [1.0, 0.0], [-1.0, 0.0]]])
    # cosines 1, 0 and -1/sqrt(2); the third token is padding when a mask is given
    c3 = -1 / math.sqrt(2)
    assert cosine_hidden_loss(hs, ht).item() == pytest.approx((0 + 1 + 1 - c3) / 3, rel=1e-6)
    assert cosine_hidden_loss(hs, ht, torch.tensor([[1, 1, 0]])).item() == pytest.approx(0.5, rel=1e-6)
    with pytest.raises(ValueError, match="as wide"):
        cosine_hidden_loss(hs, torch.zeros(1, 3, 4))


def _teacher(n_layer=4):
    return BertForPreTraining(BertConfig(vocab_size=40, n_layer=n_layer, d_model=16, n_head=2, max_len=12), seed=0)


def test_every_other_layer_copies_blocks():
    teacher = _teacher(4)
    student = every_other_layer(teacher)
    assert student.config.n_layer == 2 and teacher.config.n_layer == 4
    for s_blk, t_idx in zip(student.encoder.blocks, (0, 2)):
        for (n, p), q in zip(s_blk.named_parameters(), teacher.encoder.blocks[t_idx].parameters()):
            assert torch.equal(p, q) and p.data_ptr() != q.data_ptr(), n
    assert torch.equal(student.encoder.embeddings.tok.weight, teacher.encoder.embeddings.tok.weight)
    assert student.mlm.decoder.weight is student.encoder.embeddings.tok.weight  # still tied
    enc = every_other_layer(teacher.encoder, layers=[1, 3])
    assert isinstance(enc, BertEncoder) and enc.config.n_layer == 2
    with pytest.raises(ValueError, match="distinct indices"):
        every_other_layer(teacher, layers=[0, 7])
    with pytest.raises(TypeError):
        every_other_layer(torch.nn.Linear(2, 2))


def _mlm_batch(cfg, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, cfg.vocab_size, (3, 10), generator=g)
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    labels[0, 5] = ids[0, 5]
    inputs = ids.clone()
    inputs[labels != -100] = cfg.mask_id
    am = torch.ones_like(ids)
    am[2, 8:] = 0
    return {"ids": inputs, "labels": labels, "attention_mask": am}


def test_distilbert_loss_components_by_hand():
    teacher = _teacher(4)
    with torch.no_grad():  # larger weights than the init's, so the soft loss is far from 0
        teacher.encoder.embeddings.tok.weight.mul_(30)
    student = every_other_layer(teacher)
    with torch.no_grad():
        for p in student.parameters():
            p.add_(0.2 * torch.randn_like(p))
    b = _mlm_batch(teacher.config)
    out = distilbert_loss(student, teacher, b, temperature=2.0, weights=(5.0, 2.0, 1.0))
    chosen = b["labels"] != -100
    h_s = student.encoder(b["ids"], None, b["attention_mask"])
    h_t = teacher.encoder(b["ids"], None, b["attention_mask"])
    s_log, t_log = student.mlm(h_s)[chosen], teacher.mlm(h_t)[chosen]
    # soft cross-entropy minus the teacher's entropy, times T^2, averaged over masked positions
    pt = (t_log / 2).softmax(-1)
    soft = (4 * (pt * (pt.log() - (s_log / 2).log_softmax(-1))).sum(-1)).mean()
    assert out["soft"].item() == pytest.approx(soft.item(), rel=1e-5)
    assert out["mlm"].item() == pytest.approx(F.cross_entropy(s_log, b["labels"][chosen]).item(), rel=1e-6)
    m = b["attention_mask"].bool()
    cos = F.cosine_similarity(h_s[m], h_t[m], dim=-1)
    assert out["cos"].item() == pytest.approx((1 - cos).mean().item(), rel=1e-5)
    assert out["total"].item() == pytest.approx(5 * soft.item() + 2 * out["mlm"].item() + out["cos"].item(), rel=1e-5)
    out["total"].backward()
    assert all(p.grad is None for p in teacher.parameters())
    nothing = dict(b, labels=torch.full_like(b["labels"], -100))
    with pytest.raises(ValueError, match="no position"):
        distilbert_loss(student, teacher, nothing)


def test_hidden_states_match_the_encoder_and_attention_weights():
    enc = _teacher(2).encoder.eval()
    b = _mlm_batch(enc.config)
    hs, maps = hidden_states(enc, b["ids"], None, b["attention_mask"], attentions=True)
    assert len(hs) == 3 and len(maps) == 2
    assert torch.allclose(hs[-1], enc(b["ids"], None, b["attention_mask"]), atol=1e-5)
    ref = attention_weights(enc, b["ids"], None, b["attention_mask"])
    for a, r in zip(maps, ref):
        assert torch.allclose(a, r, atol=1e-6)


def test_tinybert_loss_by_hand():
    teacher = _teacher(4).encoder
    student = every_other_layer(teacher)
    with torch.no_grad():  # make the student differ from its copy
        for p in student.parameters():
            p.add_(0.01 * torch.randn_like(p))
    b = _mlm_batch(teacher.config)
    assert layer_map(2, 4) == [0, 2, 4]
    out = tinybert_loss(student, teacher, b)
    hs, As = hidden_states(student, b["ids"], None, b["attention_mask"], True)
    ht, At = hidden_states(teacher, b["ids"], None, b["attention_mask"], True)
    hid = sum(((hs[m] - ht[g]) ** 2).mean() for m, g in enumerate((0, 2, 4)))
    att = ((As[0] - At[1]) ** 2).mean() + ((As[1] - At[3]) ** 2).mean()
    assert out["hidden"].item() == pytest.approx(hid.item(), rel=1e-5)
    assert out["attention"].item() == pytest.approx(att.item(), rel=1e-5)
    # a projection is needed for a narrower student; identity student of itself: zero loss
    assert tinybert_loss(teacher, teacher, b)["total"].item() == pytest.approx(0.0, abs=1e-10)
    with pytest.raises(ValueError, match="divide evenly"):
        layer_map(3, 4)


def test_distill_classifier_trains_towards_the_teacher():
    cfg = BertConfig(vocab_size=30, n_layer=2, d_model=8, n_head=2, max_len=10)
    teacher = BertForSequence(BertEncoder(cfg, seed=0), 2, seed=0).eval()
    with torch.no_grad():
        teacher.head.weight.mul_(100)  # confident, input-dependent logits
    student = BertForSequence(every_other_layer(teacher.encoder, [0]), 2, seed=1)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 30, (32, 8), generator=g)
    with torch.no_grad():
        y = teacher({"ids": ids}).argmax(-1)
    batches = [{"ids": ids[i:i + 16], "labels": y[i:i + 16]} for i in range(0, 32, 16)]
    cfg_d = DistillConfig(temperature=2.0, alpha=1.0)
    before = sum(classifier_loss(student, teacher, b, cfg_d).item() for b in batches)
    hist = distill_classifier(student, teacher, lambda e: batches, cfg_d,
                              TrainConfig(epochs=10, lr=1e-2, progress=False, device="cpu"))
    after = sum(classifier_loss(student, teacher, b, cfg_d).item() for b in batches)
    assert after < 0.5 * before and len(hist.step_loss) == 20
    assert all(p.requires_grad for p in teacher.parameters())  # unfrozen again
    # with TinyBERT's term: the sum of the two losses
    both = classifier_loss(student, teacher, batches[0], DistillConfig(2.0, 0.3, tinybert=True))
    by_hand = hard_soft_loss(student(batches[0]), teacher(batches[0]), batches[0]["labels"], 2.0, 0.3) + \
        tinybert_loss(student.encoder, teacher.encoder, batches[0])["total"]
    assert both.item() == pytest.approx(by_hand.item(), rel=1e-5)
    with pytest.raises(ValueError, match="real-valued"):
        classifier_loss(student, teacher, {"ids": ids[:2], "labels": torch.tensor([0.5, 0.1])}, cfg_d)
    with pytest.raises(ValueError, match="alpha"):
        DistillConfig(alpha=2.0)
