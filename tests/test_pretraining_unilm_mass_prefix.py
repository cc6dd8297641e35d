"""MASS spans, UniLM's three masks (as matrices and as what the network can see), and T5's
three architectures on one prefix-LM task."""

import math

import pytest
import torch

from companion.pretraining.harness import ModelSize, heldout_loss, pretrain, toy_vocab
from companion.pretraining.mass import MASS, mass_pair
from companion.pretraining.prefix_lm import (
    ARCHITECTURES,
    DecoderOnlyLM,
    EncDecPrefix,
    PrefixLM,
)
from companion.pretraining.unilm import MODES, UniLM, hidden, unilm_mask, with_padding

V = toy_vocab(48)
SIZE = ModelSize(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=23)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_mass_masks_one_span_and_decodes_it():
    ids = list(range(10, 30))
    for s in range(20):
        src, frag = mass_pair(ids, V.mask, _gen(s), ratio=0.5)
        assert len(src) == 20 and len(frag) == 10
        u = src.index(V.mask)
        assert src[u:u + 10] == [V.mask] * 10 and frag == ids[u:u + 10]
        assert src[:u] + frag + src[u + 10:] == ids
    assert mass_pair(ids, V.mask, _gen(), ratio=1.0)[0] == [V.mask] * 20  # k = m: the decoder is an LM
    b = MASS(V).make_batch(torch.randint(8, 48, (3, 20), generator=_gen()), _gen())
    assert b["src"].shape == (3, 20) and b["tgt_out"].shape == (3, 10)


def test_unilm_masks_by_hand():
    t, f = True, False
    assert unilm_mask("left-to-right", 3).tolist() == [[t, f, f], [t, t, f], [t, t, t]]
    assert unilm_mask("right-to-left", 3).tolist() == [[t, t, t], [f, t, t], [f, f, t]]
    assert unilm_mask("bidirectional", 2).tolist() == [[t, t], [t, t]]
    # source of 2 ([CLS] a), target of 2: the source never sees the target
    assert unilm_mask("seq2seq", 4, 2).tolist() == [[t, t, f, f], [t, t, f, f], [t, t, t, f], [t, t, t, t]]
    with pytest.raises(ValueError, match="mode"):
        unilm_mask("sideways", 3)
    padded = with_padding(unilm_mask("right-to-left", 3), torch.tensor([True, True, False]))
    assert padded.tolist() == [[t, t, f], [f, t, f], [t, t, f]]  # no empty row, no pad key


def test_unilm_batch_modes_and_what_each_position_can_see():
    obj = UniLM(V)
    rows = torch.randint(8, 48, (60, SIZE.row_len), generator=_gen())
    b = obj.make_batch(rows, _gen(1))
    counts = torch.bincount(b["modes"], minlength=4).float() / 60
    assert all(abs(c - s) < 0.2 for c, s in zip(counts.tolist(), (1 / 3, 1 / 6, 1 / 6, 1 / 3)))
    model = obj.build_model(SIZE, V.size).eval()
    for i in range(60):
        mode = MODES[int(b["modes"][i])]
        ids, seg, mask = b["ids"][i:i + 1], b["segments"][i:i + 1], b["mask"][i:i + 1]
        base = hidden(model, ids, seg, mask)
        j = 12  # change one token; see which positions' outputs move
        changed = ids.clone()
        changed[0, j] = 8 if changed[0, j] != 8 else 9
        moved = (hidden(model, changed, seg, mask) - base).abs().amax(-1)[0] > 1e-6
        real = ids[0] != V.pad
        if mode == "bidirectional":
            assert moved[real].all()
        elif mode == "left-to-right":
            assert not moved[:j].any() and moved[j:][real[j:]].all()
        elif mode == "right-to-left":
            assert moved[:j + 1].all() and not moved[j + 1:][real[j + 1:]].any()
        else:  # seq2seq: a target token (segment 1) is invisible to the source and to earlier targets
            src_len = int((seg[0] == 0).sum())
            if j >= src_len:
                assert not moved[:j].any() and moved[j:].all()
            else:
                assert moved.all()
    loss = obj.loss(model.train(), b)
    assert math.isfinite(loss.item())
    with pytest.raises(ValueError, match="shares"):
        UniLM(V, shares=(1.0, 0.0, 0.0))


def test_prefix_lm_and_decoder_only_masks():
    rows = torch.randint(8, 48, (2, 16), generator=_gen())
    pl, do = PrefixLM(V), DecoderOnlyLM(V)
    b = pl.make_batch(rows, _gen(5))
    p = int(b["prefix"]) - 1
    assert (b["targets"][:, :p] == -100).all() and torch.equal(b["targets"][:, p:], rows[:, p:])
    assert torch.equal(b["ids"][:, 1:], rows[:, :-1])
    model = pl.build_model(SIZE, V.size).eval()
    base = model.masked_hidden(b["ids"], pl.mask(b))
    changed = b["ids"].clone()
    changed[:, p] = 8 if int(changed[0, p]) != 8 else 9  # the last input token
    moved = (model.masked_hidden(changed, pl.mask(b)) - base).abs().amax(-1) > 1e-6
    assert moved[:, :p].all()  # prefix LM: earlier input positions see later input tokens
    moved_causal = (model.masked_hidden(changed, do.mask(b)) - model.masked_hidden(b["ids"], do.mask(b))).abs()
    assert (moved_causal.amax(-1)[:, :p] < 1e-6).all()  # decoder-only: they do not
    # the three architectures draw the same split and predict the same tokens
    e = EncDecPrefix(V).make_batch(rows, _gen(5))
    assert e["src"].shape[1] == p and torch.equal(e["tgt_out"], rows[:, p:])


def test_three_architectures_train_and_compare_at_equal_flops():
    rows = torch.randint(8, 48, (64, SIZE.row_len), generator=_gen())
    losses, params = {}, {}
    for name, cls in ARCHITECTURES.items():
        obj = cls(V)
        res = pretrain(obj, rows, SIZE, V.size, flops_budget=4e7, batch_size=16, lr=3e-3)
        assert res.steps >= 2 and res.flops <= 4e7
        losses[name] = heldout_loss(obj, res.model, rows[:32], batch_size=16)
        params[name] = sum(p.numel() for p in res.model.parameters())
    assert all(math.isfinite(v) for v in losses.values())
    assert params["encoder-decoder"] > 1.5 * params["prefix LM"]  # twice the blocks, ~ the same FLOPs


def _unilm_s2s(max_len=40):
    from companion.pretraining.unilm import UniLMSeq2Seq

    torch.manual_seed(0)
    model = UniLM(V, max_len=max_len).build_model(SIZE, V.size).eval()
    return model, UniLMSeq2Seq(model, V)


def test_unilm_seq2seq_one_pass_equals_decoding_with_the_seq2seq_mask():
    """The pseudo-mask layout's logit for target t equals UniLM's own decoding step:
    ``[CLS] x [SEP] y_<t [MASK]`` under the seq2seq mask (chapter 7's prefix-LM mask)."""
    model, s2s = _unilm_s2s()
    x, y = [10, 11, 12, 13], [20, 21, 22, V.sep]
    tgt_in = torch.tensor([[V.cls, *y[:-1]]])
    with torch.no_grad():
        logits = s2s(torch.tensor([x]), tgt_in)
        for t in range(len(y)):
            seq = torch.tensor([[V.cls, *x, V.sep, *y[:t], V.mask]])
            seg = torch.tensor([[0] * (len(x) + 2) + [1] * (t + 1)])
            mask = unilm_mask("seq2seq", seq.shape[1], len(x) + 2)[None]
            step = model.mlm(hidden(model, seq, seg, mask)[:, -1])
            assert torch.allclose(logits[0, t], step[0], atol=1e-5)


def test_unilm_seq2seq_padding_generation_and_errors():
    from companion.pretraining.seq2seq import pad_rows, shift_right

    _, s2s = _unilm_s2s()
    srcs, tgts = [[10, 11, 12], [14, 15, 16, 17, 18]], [[20, V.sep], [21, 22, 23, V.sep]]
    src, src_mask = pad_rows(srcs, 5, V.pad)
    tgt, tgt_mask = pad_rows(tgts, 4, V.pad)
    tgt_in = shift_right(tgt.masked_fill(tgt_mask == 0, -100), V.cls, V.pad)
    with torch.no_grad():
        both = s2s(src, tgt_in, src_mask)
        for i in range(2):
            alone = s2s(torch.tensor([srcs[i]]), tgt_in[i:i + 1, :len(tgts[i])])
            assert torch.allclose(both[i, :len(tgts[i])], alone[0], atol=1e-5)
    out = s2s.generate(src, 5, src_mask)
    assert out.shape[0] == 2 and out.shape[1] <= 5
    first = s2s(src, torch.full((2, 1), V.cls), src_mask)[:, 0].argmax(-1)
    assert out[:, 0].tolist() == first.tolist()  # greedy
    loss = s2s.loss({"src": src, "src_mask": src_mask, "tgt_in": tgt_in,
                     "tgt_out": tgt.masked_fill(tgt_mask == 0, -100)})
    assert math.isfinite(float(loss.detach()))
    with pytest.raises(ValueError, match="positions"):
        s2s(torch.zeros(1, 30, dtype=torch.long) + 10, torch.full((1, 12), V.cls))
    with pytest.raises(ValueError, match="shorter"):
        UniLM(V, max_len=5).build_model(SIZE, V.size)
