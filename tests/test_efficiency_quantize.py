"""Chapter 9: our int8 dynamic quantization against the hand formula and torch's quantize_dynamic."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from companion.efficiency.quantize import (
    QuantizedLinear,
    dequantize,
    error_bound,
    int8_matmul,
    latency,
    linear_weight_bytes,
    quantize_linears,
    quantize_per_channel,
    quantize_rows,
    relative_error,
    state_dict_bytes,
    to_bf16,
    torch_dynamic_int8,
)
from companion.transformer import (
    GPT,
    BertConfig,
    BertEncoder,
    BertForSequence,
    GPTConfig,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def test_quantize_a_vector_by_hand():
    w = torch.tensor([[0.5, -1.0, 0.25, 2.55]])
    q, s = quantize_per_channel(w)
    assert s.item() == pytest.approx(2.55 / 127.5)  # = 0.02
    assert q.tolist() == [[25, -50, 12, 127]]  # 12.5 rounds to even; 127.5 -> 128 clamps to 127
    assert q.dtype == torch.int8
    assert torch.allclose(dequantize(q, s), torch.tensor([[0.5, -1.0, 0.24, 2.54]]))
    zero_q, zero_s = quantize_per_channel(torch.zeros(2, 3))
    assert torch.equal(zero_q, torch.zeros(2, 3, dtype=torch.int8)) and bool((zero_s > 0).all())
    with pytest.raises(ValueError, match="2-D float"):
        quantize_per_channel(torch.ones(3))


def test_rounding_error_is_at_most_half_a_step():
    w = torch.randn(64, 100, generator=torch.Generator().manual_seed(0))
    q, s = quantize_per_channel(w)
    err = (dequantize(q, s) - w).abs()
    # half a step everywhere except the clamped maximum of a row, which is off by at most one step
    assert bool((err <= s[:, None] / 2 + 1e-7).sum(1).ge(99).all())
    assert bool((err <= s[:, None] + 1e-7).all())
    x = torch.randn(5, 100)
    qx, sx = quantize_rows(x)
    assert bool(((qx.float() * sx[:, None] - x).abs() <= sx[:, None] / 2 + 1e-7).all())


def test_weights_equal_torch_per_channel_quantize_dynamic():
    torch.manual_seed(0)
    lin = nn.Linear(48, 20)
    ours = QuantizedLinear(lin)
    peer = torch_dynamic_int8(nn.Sequential(lin))[0]
    w = peer.weight()
    assert torch.equal(ours.weight_int8, w.int_repr())
    assert torch.allclose(ours.weight_scale, w.q_per_channel_scales().float())
    assert torch.equal(w.q_per_channel_zero_points(), torch.zeros(20, dtype=torch.long))


def test_outputs_within_the_error_bound_and_close_to_torch():
    torch.manual_seed(1)
    lin = nn.Linear(64, 32)
    x = torch.randn(2, 7, 64)
    with torch.no_grad():
        ref = lin(x)
        ours = QuantizedLinear(lin)(x)
        peer = torch_dynamic_int8(nn.Sequential(lin))(x)
        bound = error_bound(x, lin).view(2, 7, 32)
    assert ours.shape == ref.shape
    assert bool(((ours - ref).abs() <= bound * 1.0001 + 1e-6).all())
    # the bound is not vacuous: the realised error is a fraction of it, and small
    assert float((ours - ref).abs().max()) < float(bound.max())
    assert relative_error(ours, ref) < 0.01
    assert relative_error(peer, ref) < 0.02
    # ours (per-row activation scales) is no worse than torch's per-tensor activation scale
    assert relative_error(ours, ref) <= relative_error(peer, ref) * 1.2


def test_int8_matmul_exact():
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-128, 128, (33, 40), generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, (17, 40), generator=g, dtype=torch.int8)
    assert torch.equal(int8_matmul(a, b), (a.long() @ b.long().t()).int())


def test_quantize_linears_on_models():
    gpt = GPT(GPTConfig(vocab_size=50, block_size=12, d_model=32, n_head=4), seed=0).eval()
    q = quantize_linears(gpt)
    assert not any(isinstance(m, nn.Linear) for m in q.modules())
    assert any(isinstance(m, nn.Linear) for m in gpt.modules())  # the original is untouched
    x = torch.randint(0, 47, (2, 12))
    with torch.no_grad():
        assert relative_error(q(x), gpt(x)) < 0.02
    skipped = quantize_linears(gpt, skip=("lm_head",))
    assert isinstance(skipped.lm_head, nn.Linear)
    # ~4x smaller Linear weights (int8 + one float scale per row)
    ratio = linear_weight_bytes(gpt) / linear_weight_bytes(q)
    assert 3.5 < ratio < 4.0
    assert state_dict_bytes(q) < state_dict_bytes(gpt)
    with pytest.raises(ValueError, match="no nn.Linear"):
        quantize_linears(nn.Sequential(nn.ReLU()))


def test_classifier_predictions_survive_int8_and_bf16():
    cfg = BertConfig(vocab_size=60, n_layer=2, d_model=32, n_head=4, max_len=16)
    net = BertForSequence(BertEncoder(cfg, seed=0), 3, seed=0).eval()
    with torch.no_grad():
        net.head.weight.mul_(50)
    batch = {"ids": torch.randint(5, 60, (64, 12), generator=torch.Generator().manual_seed(0))}
    with torch.no_grad():
        ref = net(batch).argmax(-1)
        agree_int8 = (quantize_linears(net)(batch).argmax(-1) == ref).float().mean()
        bf = to_bf16(net)
        out = bf(batch)
        agree_bf16 = (out.argmax(-1) == ref).float().mean()
    assert out.dtype == torch.bfloat16 and next(net.parameters()).dtype == torch.float32
    assert agree_int8 >= 0.9 and agree_bf16 >= 0.9


def test_latency_returns_each_function():
    t = latency({"a": lambda: sum(range(100)), "b": lambda: sum(range(1000))}, repeats=2, inner=2)
    assert set(t) == {"a", "b"} and all(v > 0 for v in t.values())
    seen = []
    latency({"g": lambda: seen.append(torch.is_grad_enabled())}, repeats=1, inner=1, grad=True)
    latency({"n": lambda: seen.append(torch.is_grad_enabled())}, repeats=1, inner=1)
    assert seen == [True, True, False, False]
    with pytest.raises(ValueError, match="nothing to time"):
        latency({})


def test_weights_equal_torch_on_ties():
    # a weight at exactly -127.5 steps: PyTorch multiplies by the float32 reciprocal of the
    # scale and rounds to -127; dividing would land on the tie and round to -128 (seed 1
    # has two such weights). Ours must give PyTorch's integers on every seed.
    for seed in range(6):
        torch.manual_seed(seed)
        lin = nn.Linear(64, 32)
        peer = torch_dynamic_int8(nn.Sequential(lin))[0].weight()
        assert torch.equal(QuantizedLinear(lin).weight_int8, peer.int_repr()), seed


def test_fused_kernel_with_our_weights_equals_quantize_dynamic_within_bound():
    for seed in (0, 1):
        torch.manual_seed(seed)
        lin = nn.Linear(64, 32)
        x = torch.randn(3, 5, 64) * 2 + 0.5
        with torch.no_grad():
            ref = lin(x)
            fused = QuantizedLinear(lin, kernel="fbgemm")
            ours = fused(x)
            peer = torch_dynamic_int8(nn.Sequential(lin))(x)
            bound = error_bound(x, lin, activations="per_tensor_7bit").view(3, 5, 32)
        assert torch.equal(ours, peer)  # our integers and scales, PyTorch's kernel: the same numbers
        assert bool(((ours - ref).abs() <= bound * 1.0001 + 1e-6).all())
        assert float((ours - ref).abs().max()) < 0.5 * float(bound.max())
        # the per-row bound of the readable kernel is tighter than the per-tensor one
        assert float(error_bound(x, lin).mean()) < float(bound.mean())
    q = quantize_linears(nn.Sequential(lin), kernel="fbgemm")
    assert torch.equal(q(x), QuantizedLinear(lin, "fbgemm")(x)) and "fbgemm" in repr(q)
    with pytest.raises(ValueError, match="kernel must be one of"):
        QuantizedLinear(lin, kernel="cuda")
    with pytest.raises(ValueError, match="activations must be"):
        error_bound(x, lin, activations="per_column")
