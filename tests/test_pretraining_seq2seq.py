"""The encoder--decoder Transformer: equal to torch.nn.Transformer with mapped weights, causal,
padding-invariant, and incremental decoding equal to teacher forcing."""

import pytest
import torch
from torch import nn

from companion.pretraining.seq2seq import (
    EncoderView,
    Seq2Seq,
    Seq2SeqConfig,
    shift_right,
)


def _copy_linear(dst: nn.Module, weight: torch.Tensor, bias: torch.Tensor) -> None:
    dst.weight.copy_(weight)
    dst.bias.copy_(bias)


@torch.no_grad()
def _reference(model: Seq2Seq) -> nn.Transformer:
    """torch.nn.Transformer carrying ``model``'s weights."""
    c = model.config
    ref = nn.Transformer(c.d_model, c.n_head, c.n_enc_layer, c.n_dec_layer, c.d_ff, dropout=0.0,
                         activation="gelu", batch_first=True, norm_first=c.pre_ln)
    for ours, theirs in zip(model.encoder_blocks, ref.encoder.layers):
        theirs.self_attn.in_proj_weight.copy_(ours.attn.qkv.weight)
        theirs.self_attn.in_proj_bias.copy_(ours.attn.qkv.bias)
        _copy_linear(theirs.self_attn.out_proj, ours.attn.proj.weight, ours.attn.proj.bias)
        _copy_linear(theirs.linear1, ours.mlp.fc.weight, ours.mlp.fc.bias)
        _copy_linear(theirs.linear2, ours.mlp.proj.weight, ours.mlp.proj.bias)
        for a, b in ((ours.ln_1, theirs.norm1), (ours.ln_2, theirs.norm2)):
            _copy_linear(b, a.weight, a.bias)
    for ours, theirs in zip(model.decoder_blocks, ref.decoder.layers):
        theirs.self_attn.in_proj_weight.copy_(ours.attn.qkv.weight)
        theirs.self_attn.in_proj_bias.copy_(ours.attn.qkv.bias)
        _copy_linear(theirs.self_attn.out_proj, ours.attn.proj.weight, ours.attn.proj.bias)
        theirs.multihead_attn.in_proj_weight.copy_(torch.cat([ours.cross.q.weight, ours.cross.kv.weight]))
        theirs.multihead_attn.in_proj_bias.copy_(torch.cat([ours.cross.q.bias, ours.cross.kv.bias]))
        _copy_linear(theirs.multihead_attn.out_proj, ours.cross.proj.weight, ours.cross.proj.bias)
        _copy_linear(theirs.linear1, ours.mlp.fc.weight, ours.mlp.fc.bias)
        _copy_linear(theirs.linear2, ours.mlp.proj.weight, ours.mlp.proj.bias)
        for a, b in ((ours.ln_1, theirs.norm1), (ours.ln_2, theirs.norm2), (ours.ln_3, theirs.norm3)):
            _copy_linear(b, a.weight, a.bias)
    if c.pre_ln:
        _copy_linear(ref.encoder.norm, model.ln_enc.weight, model.ln_enc.bias)
        _copy_linear(ref.decoder.norm, model.ln_dec.weight, model.ln_dec.bias)
    else:  # post-LN: each layer already ends in a norm; nn.Transformer's extra final norms go
        ref.encoder.norm, ref.decoder.norm = None, None
    return ref


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("pre_ln", [True, False])
def test_equals_torch_transformer(pre_ln):
    c = Seq2SeqConfig(vocab_size=30, d_model=16, n_head=4, n_enc_layer=2, n_dec_layer=3, pre_ln=pre_ln)
    model = Seq2Seq(c, seed=1).eval()
    ref = _reference(model).train()  # train mode (dropout 0) avoids the nested-tensor fast path
    g = torch.Generator().manual_seed(0)
    src = torch.randint(3, 30, (3, 7), generator=g)
    src_mask = torch.ones(3, 7, dtype=torch.long)
    src_mask[1, 5:] = 0
    src_mask[2, 3:] = 0
    tgt = torch.randint(3, 30, (3, 5), generator=g)
    with torch.no_grad():
        ours = model.run_decoder(model.embed(tgt), model.run_encoder(model.embed(src), src_mask), src_mask)
        pad = src_mask == 0
        causal = torch.ones(5, 5, dtype=torch.bool).triu(1)  # torch's convention: True = blocked
        theirs = ref(model.embed(src), model.embed(tgt), tgt_mask=causal, src_key_padding_mask=pad,
                     memory_key_padding_mask=pad)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-4)


def test_decoder_is_causal_and_source_padding_is_invisible():
    c = Seq2SeqConfig(vocab_size=40)
    model = Seq2Seq(c, seed=0).eval()
    src = torch.randint(3, 40, (1, 6))
    tgt = torch.randint(3, 40, (1, 8))
    base = model(src, tgt)
    changed = tgt.clone()
    changed[0, 5] = (changed[0, 5] + 1) % 40
    after = model(src, changed)
    torch.testing.assert_close(base[:, :5], after[:, :5])  # earlier positions cannot see position 5
    assert not torch.allclose(base[:, 5:], after[:, 5:])
    padded = torch.cat([src, torch.zeros(1, 4, dtype=torch.long)], 1)
    mask = torch.cat([torch.ones(1, 6), torch.zeros(1, 4)], 1).long()
    torch.testing.assert_close(model(padded, tgt, mask), base, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("pre_ln", [True, False])
def test_incremental_decoding_equals_teacher_forcing(pre_ln):
    c = Seq2SeqConfig(vocab_size=25, pre_ln=pre_ln, eos_id=2)
    model = Seq2Seq(c, seed=3).eval()
    src = torch.randint(3, 25, (2, 9))
    src_mask = torch.ones(2, 9, dtype=torch.long)
    src_mask[0, 6:] = 0
    cached, logits_c = model.generate(src, 7, src_mask, return_logits=True)
    plain, logits_p = model.generate(src, 7, src_mask, use_cache=False, return_logits=True)
    torch.testing.assert_close(logits_c, logits_p, atol=1e-5, rtol=1e-4)
    assert torch.equal(cached, plain)
    # teacher forcing on the generated sequence gives the same step logits
    tf = model(src, torch.cat([torch.full((2, 1), c.bos_id), cached[:, :-1]], 1), src_mask)
    n = cached.shape[1]
    for b in range(2):  # up to and including this row's eos (later ids are padding)
        stop = next((i + 1 for i, t in enumerate(cached[b].tolist()) if t == c.eos_id), n)
        torch.testing.assert_close(tf[b, :stop], logits_c[b, :stop], atol=1e-5, rtol=1e-4)


def test_learns_to_copy_and_encoder_view():
    torch.manual_seed(0)
    c = Seq2SeqConfig(vocab_size=12, max_len=8, d_model=32, n_head=4, n_enc_layer=1, n_dec_layer=1)
    model = Seq2Seq(c, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(120):
        src = torch.randint(3, 12, (32, 5))
        tgt = torch.cat([src, torch.full((32, 1), c.eos_id)], 1)
        loss = model.loss({"src": src, "tgt_in": shift_right(tgt, c.bos_id), "tgt_out": tgt})
        opt.zero_grad()
        loss.backward()
        opt.step()
    src = torch.randint(3, 12, (16, 5), generator=torch.Generator().manual_seed(9))
    out = model.generate(src, 6)
    assert (out[:, :5] == src).float().mean() > 0.9
    h = EncoderView(model)(src, attention_mask=torch.ones_like(src))
    assert h.shape == (16, 5, 32)


def test_errors():
    with pytest.raises(ValueError, match="divisible"):
        Seq2SeqConfig(d_model=30, n_head=4)
    with pytest.raises(ValueError, match="pad_id"):
        Seq2SeqConfig(vocab_size=10, pad_id=10)
    model = Seq2Seq(Seq2SeqConfig(max_len=8))
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(1, 9, dtype=torch.long), torch.zeros(1, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="exceed max_len"):
        model.generate(torch.zeros(1, 3, dtype=torch.long), 9)


def test_shift_right():
    tgt = torch.tensor([[5, 6, 7, -100]])
    assert shift_right(tgt, 1, 0).tolist() == [[1, 5, 6, 7]]
    assert shift_right(torch.tensor([[5, -100, -100]]), 1, 0).tolist() == [[1, 5, 0]]
