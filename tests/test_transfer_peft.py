"""Chapter 10's parameter-efficient methods: what trains, what starts as identity, what merges."""

import pytest
import torch

from companion.transfer import peft
from companion.transformer.bert import BertConfig, BertEncoder, BertForSequence
from companion.transformer.gpt import GPT, GPTConfig


def _encoder():
    return BertEncoder(BertConfig(vocab_size=50, max_len=16, d_model=16, n_head=2, n_layer=2), seed=0).eval()


def _batch(seed=0, B=3, T=7):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 50, (B, T), generator=g)
    ids[:, 0] = 2
    mask = torch.ones(B, T, dtype=torch.long)
    mask[0, -2:] = 0
    return {"ids": ids, "attention_mask": mask, "labels": torch.tensor([0, 1, 1])}


def _step(model, batch, lr=0.1):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    model.train()
    model.loss(batch).backward()
    opt.step()


def _snapshot(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_bitfit_trains_only_biases():
    enc = peft.apply_method(_encoder(), "bitfit")
    names = {n for n, p in enc.named_parameters() if p.requires_grad}
    assert names and all(n.endswith("bias") for n in names)
    assert "blocks.0.attn.qkv.bias" in names and "blocks.0.attn.qkv.weight" not in names
    before = _snapshot(enc)
    clf = BertForSequence(enc, 2, pooling="mean")
    _step(clf, _batch())
    after = _snapshot(enc)
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.endswith("bias") for k in changed)


def test_adapters_start_as_identity_and_train_alone():
    base = _encoder()
    b = _batch()
    enc = peft.apply_method(base, "adapters", bottleneck=4)
    with torch.no_grad():
        torch.testing.assert_close(enc(b["ids"], attention_mask=b["attention_mask"]),
                                   base(b["ids"], attention_mask=b["attention_mask"]), rtol=0, atol=0)
    trainable = {n for n, p in enc.named_parameters() if p.requires_grad}
    assert any(".adapter." in n for n in trainable)
    assert all(".adapter." in n or ".ln_" in n for n in trainable)
    before = _snapshot(enc)
    clf = BertForSequence(enc, 2, pooling="mean")
    _step(clf, b)
    _step(clf, b)
    after = _snapshot(enc)
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert any("adapter.up" in k for k in changed)
    assert not any("qkv" in k or "mlp.sublayer" in k or k.startswith("embeddings") for k in changed)


def test_adapters_start_depends_on_the_seed_alone():
    def downs(seed):
        enc = peft.apply_method(_encoder(), "adapters", bottleneck=4, seed=seed)
        return [p.detach().clone() for n, p in enc.named_parameters() if n.endswith("adapter.down.weight")]

    first = downs(0)
    torch.rand(1000)  # other work in between must not change the start
    assert all(torch.equal(a, b) for a, b in zip(first, downs(0), strict=True))
    assert not torch.equal(first[0], downs(1)[0])
    assert len({float(w.sum()) for w in first}) == len(first)  # each adapter its own draw


def test_lora_merged_equals_unmerged_and_starts_at_base():
    base = _encoder()
    b = _batch(1)
    enc = peft.apply_method(base, "lora", r=2, alpha=4.0)
    with torch.no_grad():
        out0 = enc(b["ids"], attention_mask=b["attention_mask"])
        torch.testing.assert_close(out0, base(b["ids"], attention_mask=b["attention_mask"]), rtol=0, atol=0)
        for m in enc.modules():  # a trained-looking update: random B
            if isinstance(m, peft.LoRALinear):
                for B in m.B:
                    B.normal_(0, 0.5)
        unmerged = enc(b["ids"], attention_mask=b["attention_mask"])
    assert not torch.allclose(unmerged, out0)
    merged = peft.merge_lora(enc)
    assert not any(isinstance(m, peft.LoRALinear) for m in merged.modules())
    with torch.no_grad():
        torch.testing.assert_close(merged(b["ids"], attention_mask=b["attention_mask"]), unmerged,
                                   rtol=1e-5, atol=1e-5)


def test_lora_adapts_only_q_and_v_rows():
    lin = torch.nn.Linear(4, 12)
    lora = peft.LoRALinear(lin, r=2, parts=[(0, 4), (8, 12)])
    with torch.no_grad():
        for B in lora.B:
            B.fill_(1.0)
    d = lora.delta()
    assert d[4:8].abs().sum() == 0 and d[:4].abs().sum() > 0 and d[8:].abs().sum() > 0
    x = torch.randn(5, 4)
    torch.testing.assert_close(lora(x), x @ (lin.weight + d).t() + lin.bias)
    with pytest.raises(ValueError, match="rank"):
        peft.LoRALinear(torch.nn.Linear(4, 4), r=0)
    with pytest.raises(ValueError, match="outside"):
        peft.LoRALinear(torch.nn.Linear(4, 4), parts=[(2, 9)])


@pytest.mark.parametrize("hidden", [None, 8])
def test_prefix_trains_only_the_prefix(hidden):
    base = _encoder()
    b = _batch(2)
    enc = peft.apply_method(base, "prefix", n_prefix=3, hidden=hidden)
    trainable = {n for n, p in enc.named_parameters() if p.requires_grad}
    assert trainable and all(n.startswith("prefix.") for n in trainable)
    with torch.no_grad():
        assert not torch.allclose(enc(b["ids"], attention_mask=b["attention_mask"]),
                                  base(b["ids"], attention_mask=b["attention_mask"]))
    before = _snapshot(enc.encoder)
    clf = BertForSequence(enc, 2, pooling="mean")
    _step(clf, b)
    after = _snapshot(enc.encoder)
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_prefix_keeps_a_gpt_causal():
    gpt = GPT(GPTConfig(vocab_size=30, block_size=8, d_model=16, n_head=2), seed=0)
    wrapped = peft.add_prefix(gpt, n_prefix=2)
    x = torch.randint(0, 27, (1, 6))
    y = x.clone()
    y[0, -1] = (y[0, -1] + 1) % 27
    with torch.no_grad():
        a, c = wrapped(x), wrapped(y)
    torch.testing.assert_close(a[:, :-1], c[:, :-1])  # earlier positions never see the change


@pytest.mark.parametrize("method", ["prompt", "ptuning"])
def test_prompt_tuning_keeps_the_model_frozen(method):
    base = _encoder()
    b = _batch(3)
    enc = peft.apply_method(base, method, n_prompt=4, init_ids=[7, 8])
    trainable = {n for n, p in enc.named_parameters() if p.requires_grad}
    assert trainable and all(n == "prompt" or n.startswith("prompt_encoder.") for n in trainable)
    out = enc(b["ids"], attention_mask=b["attention_mask"])
    assert out.shape == (3, 7, 16)  # the prompt positions are dropped again
    before_enc = _snapshot(enc.encoder)
    before_prompt = enc.prompts().detach().clone()
    clf = BertForSequence(enc, 2, pooling="mean")
    _step(clf, b)
    assert all(torch.equal(v, enc.encoder.state_dict()[k]) for k, v in before_enc.items())
    assert not torch.allclose(before_prompt, enc.prompts())
    if method == "prompt":  # initialised from the given words' embeddings
        torch.testing.assert_close(before_prompt[:2], base.embeddings.tok.weight[[7, 8]])


def test_param_report_and_errors():
    base = _encoder()
    total = peft.count(base)
    full = peft.param_report(peft.apply_method(base, "full"), total)
    assert full["trainable"] == total and full["share %"] == pytest.approx(100)
    assert full["storage MB"] == pytest.approx(total * 4 / 1e6)
    lora = peft.param_report(peft.apply_method(base, "lora", r=2), total)
    # 2 layers x (q and v) x (A: 2 x 16 + B: 16 x 2)
    assert lora["trainable"] == 2 * 2 * (2 * 16 + 16 * 2)
    ad = peft.apply_method(base, "adapters", bottleneck=4)
    n_ad = 2 * 2 * (16 * 4 + 4 + 4 * 16 + 16) + 2 * 2 * 2 * 16  # adapters + layer norms
    assert peft.count(ad, trainable=True) == n_ad
    assert all(p.requires_grad is False for p in base.parameters()) is False  # the original is untouched
    with pytest.raises(ValueError, match="unknown"):
        peft.apply_method(base, "dora")
    with pytest.raises(ValueError, match="no Transformer Block"):
        peft.add_adapters(torch.nn.Linear(3, 3))


def test_stored_params_keep_only_what_inference_needs():
    base = _encoder()
    pt = peft.apply_method(base, "ptuning", n_prompt=4)
    assert peft.count(pt, trainable=True) > 4 * 16
    assert peft.stored_params(pt) == 4 * 16
    pre = peft.apply_method(base, "prefix", n_prefix=3, hidden=8)
    assert peft.stored_params(pre) == 2 * 2 * 3 * 16  # layers x (k, v) x prefix x d
    lora = peft.apply_method(base, "lora", r=2)
    assert peft.stored_params(lora) == peft.count(lora, trainable=True)
