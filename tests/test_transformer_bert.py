"""Chapter 7: BERT -- masking rates, padding, segments, pooling, pre-training and fine-tuning heads."""

from __future__ import annotations

import math

import pytest
import torch

from companion.train import TrainConfig, fit
from companion.transformer import (
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    BertForTokens,
    mask_tokens,
    mean_pool,
    pad_batch,
    pair_inputs,
)

pytestmark = pytest.mark.usefixtures("one_thread")
C = BertConfig()


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    pairs = [pair_inputs(C, torch.randint(5, 100, (n,), generator=g).tolist(), torch.randint(5, 100, (m,), generator=g).tolist())
             for n, m in ((4, 3), (9, 6), (2, 2))]
    return pad_batch(C, pairs)


def test_pair_inputs_and_padding():
    ids, segs = pair_inputs(C, [10, 11], [12])
    assert ids == [C.cls_id, 10, 11, C.sep_id, 12, C.sep_id] and segs == [0, 0, 0, 0, 1, 1]
    b = _batch()
    assert b["ids"].shape == (3, 18) and b["attention_mask"].sum(1).tolist() == [10, 18, 7]
    assert (b["ids"][b["attention_mask"] == 0] == C.pad_id).all()
    with pytest.raises(ValueError, match="max_len"):
        pad_batch(C, [pair_inputs(C, [7] * 70)])


def test_mask_tokens_rates_over_many_samples():
    """15% chosen; of those 80% [MASK], 10% random, 10% kept -- each within 4 standard errors."""
    g = torch.Generator().manual_seed(0)
    n, T = 2000, 64
    ids = torch.randint(5, 100, (n, T), generator=g)
    ids[:, 0], ids[:, 40] = C.cls_id, C.sep_id
    am = torch.ones_like(ids)
    am[:, 50:] = 0
    ids[:, 50:] = C.pad_id
    ids[:, 45:50] = torch.randint(5, 100, (n, 5), generator=g)
    am[::2, 45:50] = 0  # padding made of ordinary ids: the attention mask alone must protect them
    inputs, labels = mask_tokens(ids, C, attention_mask=am, generator=g)
    chosen = labels != -100
    eligible = (am == 1) & ~torch.isin(ids, torch.tensor(C.special_ids))
    assert not chosen[~eligible].any(), "a special token or a padding position was chosen"
    assert torch.equal(inputs[~chosen], ids[~chosen]) and torch.equal(labels[chosen], ids[chosen])

    def within(frac, p, count):
        return abs(frac - p) < 4 * math.sqrt(p * (1 - p) / count)

    N = int(eligible.sum())
    k = int(chosen.sum())
    assert within(k / N, 0.15, N)
    masked = (inputs == C.mask_id) & chosen
    kept = (inputs == ids) & chosen
    rand = chosen & ~masked & ~kept
    assert within(masked.sum().item() / k, 0.8, k)
    # a random replacement equals the original 1/95 of the time, which then counts as kept
    assert within(kept.sum().item() / k, 0.1 + 0.1 / 95, k)
    assert within(rand.sum().item() / k, 0.1 * 94 / 95, k)
    assert not torch.isin(inputs[rand], torch.tensor(C.special_ids)).any()
    # seeded: the same generator state gives the same corruption
    a = mask_tokens(ids[:4], C, generator=torch.Generator().manual_seed(1))
    b = mask_tokens(ids[:4], C, generator=torch.Generator().manual_seed(1))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="p must"):
        mask_tokens(ids, C, p=0)


def test_padding_does_not_change_real_tokens():
    enc = BertEncoder(C).eval()
    b = _batch()
    full = enc(b["ids"], b["segments"], b["attention_mask"])
    for i in range(3):
        n = int(b["attention_mask"][i].sum())
        alone = enc(b["ids"][i:i + 1, :n], b["segments"][i:i + 1, :n])
        torch.testing.assert_close(full[i, :n], alone[0], atol=1e-5, rtol=1e-5)


def test_bidirectional_and_segments_matter():
    enc = BertEncoder(C).eval()
    b = _batch()
    x = b["ids"].clone()
    x[:, 8] = 50 if x[0, 8] != 50 else 51
    a, c = enc(b["ids"]), enc(x)
    assert not torch.allclose(a[:, 1], c[:, 1])  # an earlier position sees a later change
    assert not torch.allclose(enc(b["ids"], b["segments"]), enc(b["ids"]))


def test_mean_pool_ignores_padding():
    h = torch.randn(2, 4, 3)
    m = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
    torch.testing.assert_close(mean_pool(h, m)[0], h[0, :2].mean(0))
    torch.testing.assert_close(mean_pool(h, m)[1], h[1].mean(0))


def test_pretraining_loss_and_heads():
    model = BertForPreTraining(C)
    assert model.mlm.decoder.weight is model.encoder.embeddings.tok.weight
    b = _batch()
    inputs, labels = mask_tokens(b["ids"], C, attention_mask=b["attention_mask"], p=0.5,
                                 generator=torch.Generator().manual_seed(0))
    mlm_logits, nsp_logits = model(inputs, b["segments"], b["attention_mask"])
    assert mlm_logits.shape == (3, 18, 100) and nsp_logits.shape == (3, 2)
    batch = {**b, "ids": inputs, "labels": labels}
    mlm_only = model.loss(batch)
    ref = torch.nn.functional.cross_entropy(mlm_logits.reshape(-1, 100), labels.reshape(-1), ignore_index=-100)
    torch.testing.assert_close(mlm_only, ref)
    nsp = torch.tensor([1, 0, 1])
    torch.testing.assert_close(model.loss({**batch, "nsp_labels": nsp}),
                               ref + torch.nn.functional.cross_entropy(nsp_logits, nsp))


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_sequence_and_token_heads(pooling):
    pre = BertForPreTraining(C)
    b = _batch()
    clf = BertForSequence(pre.encoder, 3, pooling=pooling, pooler=pre.pooler)
    assert clf({**b}).shape == (3, 3)
    assert clf.loss({**b, "labels": torch.tensor([0, 2, 1])}).ndim == 0
    reg = BertForSequence(pre.encoder, 1, pooling=pooling)
    assert reg.loss({**b, "labels": torch.tensor([0.5, 1.0, 0.0])}).ndim == 0
    tok = BertForTokens(pre.encoder, 5)
    labels = torch.full_like(b["ids"], -100)
    labels[:, 1:3] = 2
    assert tok(b).shape == (3, 18, 5) and tok.loss({**b, "labels": labels}).ndim == 0
    with pytest.raises(ValueError, match="pooling"):
        BertForSequence(pre.encoder, 2, pooling="max")


def test_bert_learns_to_fill_masks_with_fit():
    """Rows 'a a a ...': a masked token is the token its (unmasked) neighbours show."""
    c = BertConfig(vocab_size=40, max_len=16)
    seqs = torch.arange(5, 40)[:, None].expand(35, 12).contiguous()
    model = BertForPreTraining(c)

    def batches(epoch):
        g = torch.Generator().manual_seed(epoch)
        ids, labels = mask_tokens(seqs, c, p=0.3, generator=g)
        return [{"ids": ids, "labels": labels}]

    hist = fit(model, batches, config=TrainConfig(epochs=60, lr=1e-2, optimizer="adamw", progress=False, device="cpu"))
    assert hist.step_loss[0] > 3.0 and sum(hist.step_loss[-5:]) / 5 < 0.25 * hist.step_loss[0]


def test_config_errors():
    with pytest.raises(ValueError, match="mask_id"):
        BertConfig(mask_id=100)
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(d_model=30)
    with pytest.raises(ValueError, match="max_len"):
        BertEncoder(C)(torch.zeros(1, 65, dtype=torch.long))


@pytest.mark.gpu
def test_bert_cuda_equals_cpu():
    enc = BertEncoder(C).eval()
    b = _batch()
    cpu = enc(b["ids"], b["segments"], b["attention_mask"])
    enc.cuda()
    gpu = enc(b["ids"].cuda(), b["segments"].cuda(), b["attention_mask"].cuda())
    torch.testing.assert_close(gpu.cpu(), cpu, atol=1e-4, rtol=1e-4)
    # masking with a CPU generator gives the same corruption on either device
    a = mask_tokens(b["ids"], C, generator=torch.Generator().manual_seed(0))
    g = mask_tokens(b["ids"].cuda(), C, generator=torch.Generator().manual_seed(0))
    assert all(torch.equal(x, y.cpu()) for x, y in zip(a, g))
