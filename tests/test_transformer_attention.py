"""Chapter 7: attention and masks -- ours equals torch's SDPA for every mask, values and gradients."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from companion.transformer import (
    AdditiveAttention,
    Block,
    MultiHeadAttention,
    SinusoidalPositions,
    bidirectional_mask,
    causal_mask,
    dot_product_attention,
    draw_mask,
    padding_mask,
    prefix_lm_mask,
    scaled_dot_product_attention,
)

pytestmark = pytest.mark.usefixtures("one_thread")
B, H, T, D = 3, 2, 7, 8


def _qkv(seed: int = 0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, T, D, generator=g, dtype=dtype, requires_grad=True) for _ in range(3)]


def _masks() -> dict[str, torch.Tensor | None]:
    am = torch.ones(B, T, dtype=torch.long)
    am[1, 5:] = 0
    am[2, 2:] = 0
    pad = padding_mask(am)[:, None]  # [B, 1, T, T]: one mask for all heads
    return {
        "none": None,
        "causal": causal_mask(T),
        "bidirectional": bidirectional_mask(T),
        "padding": pad,
        "prefix_lm": prefix_lm_mask(T, 3),
        "prefix_lm_per_row": prefix_lm_mask(T, torch.tensor([0, 2, 7]))[:, None],
        "causal_and_padding": causal_mask(T) & pad,
    }


@pytest.mark.parametrize("kind", list(_masks()))
def test_ours_equals_sdpa_values_and_gradients(kind):
    mask = _masks()[kind]
    q, k, v = _qkv()
    ours, weights = scaled_dot_product_attention(q, k, v, mask)
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    ref = F.scaled_dot_product_attention(q2, k2, v2, attn_mask=mask)
    torch.testing.assert_close(ours, ref, atol=1e-12, rtol=1e-10)
    g = torch.randn_like(ours)
    (ours * g).sum().backward()
    (ref * g).sum().backward()
    for name, a, b in (("dq", q, q2), ("dk", k, k2), ("dv", v, v2)):
        torch.testing.assert_close(a.grad, b.grad, atol=1e-12, rtol=1e-10, msg=f"{name} differs for {kind}")
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1], dtype=weights.dtype))
    if mask is not None:
        assert (weights[~mask.expand_as(weights)] == 0).all(), "a masked key got attention"


def test_fp32_equals_sdpa_within_float_tolerance():
    q, k, v = _qkv(1, torch.float32)
    mask = causal_mask(T)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, mask)[0],
                               F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-6, rtol=1e-5)


def test_dot_product_is_sdpa_with_scale_one():
    q, k, v = _qkv(2)
    ours, _ = dot_product_attention(q, k, v, causal_mask(T))
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(T), scale=1.0))


def test_scaling_keeps_scores_at_unit_variance():
    g = torch.Generator().manual_seed(0)
    for d in (16, 256):
        q, k = torch.randn(2, 4000, d, generator=g)
        assert abs((q * k).sum(-1).var().item() / d - 1) < 0.1  # the dot product has variance d
        assert abs(((q * k).sum(-1) / math.sqrt(d)).var().item() - 1) < 0.1


def test_masks_as_matrices():
    assert causal_mask(3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert bidirectional_mask(2).all()
    assert torch.equal(prefix_lm_mask(5, 0), causal_mask(5))
    assert torch.equal(prefix_lm_mask(5, 5), bidirectional_mask(5))
    assert prefix_lm_mask(4, 2).tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    pm = padding_mask(torch.tensor([[1, 1, 0]]))
    assert pm.shape == (1, 3, 3) and pm[0].tolist() == [[1, 1, 0]] * 3


def test_mask_errors_are_clear():
    with pytest.raises(ValueError, match="no real token"):
        padding_mask(torch.tensor([[1, 1], [0, 0]]))
    with pytest.raises(ValueError, match="batch, length"):
        padding_mask(torch.ones(3))
    with pytest.raises(ValueError, match="prefix_len"):
        prefix_lm_mask(4, 5)
    with pytest.raises(ValueError, match="positive int"):
        causal_mask(0)
    with pytest.raises(TypeError, match="boolean"):
        q, k, v = _qkv()
        scaled_dot_product_attention(q, k, v, causal_mask(T).float())


def test_draw_mask():
    fig = draw_mask(prefix_lm_mask(6, 2), title="prefix LM", labels=list("abcdef"))
    assert fig.axes[0].get_title() == "prefix LM"
    with pytest.raises(ValueError, match="one"):
        draw_mask(torch.ones(2, 3, 3, dtype=torch.bool))


def test_additive_attention_weights_and_mask():
    torch.manual_seed(0)
    att = AdditiveAttention(d_query=5, d_key=6, d_hidden=4)
    q, k, v = torch.randn(2, 3, 5), torch.randn(2, 4, 6), torch.randn(2, 4, 7)
    mask = torch.tensor([True, True, False, True]).expand(3, 4)
    out, w = att(q, k, v, mask)
    assert out.shape == (2, 3, 7) and w.shape == (2, 3, 4)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3))
    assert (w[..., 2] == 0).all()
    # the score is v^T tanh(W q + U k), written out for one pair
    s = att.v(torch.tanh(att.W(q[0, 1]) + att.U(k[0, 3])))
    scores = att.v(torch.tanh(att.W(q[0, 1])[None] + att.U(k[0]))).squeeze(-1)
    scores[2] = -math.inf
    torch.testing.assert_close(w[0, 1], scores.softmax(-1))
    assert torch.isclose(scores[3], s.squeeze())


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_sdpa_and_explicit_paths_agree(causal):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    am = torch.tensor([[1] * 5, [1, 1, 1, 0, 0]])
    mask = None if causal else padding_mask(am)
    fast = mha(x, mask, causal=causal)
    mha.use_sdpa = False
    slow = mha(x, mask, causal=causal)
    torch.testing.assert_close(fast, slow)
    assert mha.last_weights.shape == (2, 4, 5, 5)
    # causal=True (SDPA's built-in) equals passing the causal matrix
    if causal:
        mha.use_sdpa = True
        torch.testing.assert_close(mha(x, causal_mask(5)), fast)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)



def test_bf16_autocast_attends_in_fp32_on_cpu_and_returns_bf16():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 6, 16, requires_grad=True)
    ref = mha(x, causal=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = mha(x, causal=True)
    assert low.dtype == torch.bfloat16  # the output projection still runs in bf16
    torch.testing.assert_close(low.float(), ref, atol=3e-2, rtol=3e-2)
    low.float().sum().backward()
    assert x.grad is not None and x.grad.dtype == torch.float32

def test_sinusoidal_positions_formula():
    pe = SinusoidalPositions(50, 8)
    p = torch.arange(50)
    torch.testing.assert_close(pe(p)[:, 0], torch.sin(p.float()))
    torch.testing.assert_close(pe(p)[:, 1], torch.cos(p.float()))
    torch.testing.assert_close(pe(p)[:, 6], torch.sin(p / 10000 ** (6 / 8)))
    with pytest.raises(ValueError, match="even"):
        SinusoidalPositions(10, 7)


def test_post_ln_normalises_the_output_and_pre_ln_keeps_an_identity_path():
    torch.manual_seed(0)
    x = 3 * torch.randn(2, 5, 16) + 1
    post = Block(16, 4, 32, pre_ln=False)
    y = post(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 5), atol=1e-5, rtol=0)
    pre = Block(16, 4, 32, pre_ln=True)
    for lin in (pre.attn.proj, pre.mlp.proj):  # sub-layers that output zero: the block is the identity
        torch.nn.init.zeros_(lin.weight)
        torch.nn.init.zeros_(lin.bias)
    torch.testing.assert_close(pre(x), x)
    with pytest.raises(ValueError, match="activation"):
        Block(16, 4, 32, pre_ln=True, activation="swish")


@pytest.mark.gpu
def test_attention_cuda_equals_cpu():
    q, k, v = (t.detach().float() for t in _qkv())
    mask = _masks()["causal_and_padding"]
    cpu = scaled_dot_product_attention(q, k, v, mask)[0]
    gpu = F.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda(), attn_mask=mask.cuda())
    torch.testing.assert_close(gpu.cpu(), cpu, atol=1e-5, rtol=1e-4)


def test_attention_weights_of_a_model():
    from companion.transformer import (
        GPT,
        BertConfig,
        BertEncoder,
        GPTConfig,
        attention_weights,
    )

    gpt = GPT(GPTConfig())
    x = torch.randint(0, 97, (2, 6))
    before = gpt(x)
    maps = attention_weights(gpt, x)
    assert len(maps) == 2 and maps[0].shape == (2, 4, 6, 6)
    assert (maps[1].triu(1) == 0).all()  # causal: nothing above the diagonal
    torch.testing.assert_close(gpt(x), before)  # and the model is back on SDPA, unchanged
    assert all(m.use_sdpa for m in gpt.modules() if hasattr(m, "use_sdpa"))
    enc = BertEncoder(BertConfig())
    am = torch.tensor([[1] * 6, [1, 1, 1, 0, 0, 0]])
    w = attention_weights(enc, x, attention_mask=am)[0]
    assert (w[1, :, :, 3:] == 0).all() and (w[0] > 0).all()  # padding gets none, BERT sees all
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        attention_weights(torch.nn.Linear(2, 2), torch.zeros(2))
