"""Chapter 9: magnitude pruning (parity with torch.nn.utils.prune) and head pruning (Michel et al.)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.utils.prune as tprune
from torch import nn

from companion.efficiency.prune import (
    HeadGates,
    apply_masks,
    head_importance,
    head_pruning_curve,
    magnitude_masks,
    prunable_weights,
    pruning_order,
    sparsity,
)
from companion.transformer import GPT, GPTConfig


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(7, 11), nn.ReLU(), nn.Linear(11, 5), nn.ReLU(), nn.Linear(5, 3))


@pytest.mark.parametrize("amount", [0.0, 0.3, 0.5, 0.91])
def test_layer_masks_equal_torch_l1_unstructured(amount):
    ours = magnitude_masks(_mlp(), amount, scope="layer")
    peer = _mlp()
    for name, m in peer.named_modules():
        if isinstance(m, nn.Linear):
            tprune.l1_unstructured(m, "weight", amount)
            assert torch.equal(ours[name], m.weight_mask), name


@pytest.mark.parametrize("amount", [0.2, 0.6])
def test_global_masks_equal_torch_global_unstructured(amount):
    ours = magnitude_masks(_mlp(), amount, scope="global")
    peer = _mlp()
    params = [(m, "weight") for m in peer.modules() if isinstance(m, nn.Linear)]
    tprune.global_unstructured(params, pruning_method=tprune.L1Unstructured, amount=amount)
    for name, m in peer.named_modules():
        if isinstance(m, nn.Linear):
            assert torch.equal(ours[name], m.weight_mask), name
    # global pruning does not remove the same share of every layer
    shares = [1 - float(m.mean()) for m in ours.values()]
    assert max(shares) - min(shares) > 0.01


def test_apply_masks_and_sparsity():
    model = _mlp()
    masks = magnitude_masks(model, 0.5, scope="global")
    kept = {n: w.detach().clone() for n, w in prunable_weights(model).items()}
    apply_masks(model, masks)
    assert sparsity(model) == pytest.approx(0.5, abs=1 / 200)
    for n, w in prunable_weights(model).items():
        assert torch.equal(w, kept[n] * masks[n])
        # what survives is never smaller in magnitude than what was removed
        assert kept[n][masks[n] == 1].abs().min() >= kept[n][masks[n] == 0].abs().max() or n != "0"
    with pytest.raises(KeyError, match="no prunable weight"):
        apply_masks(model, {"nope": torch.ones(1)})
    with pytest.raises(ValueError, match="fraction"):
        magnitude_masks(model, 1.5)
    with pytest.raises(ValueError, match="scope"):
        magnitude_masks(model, 0.5, scope="row")


def test_tied_weight_is_pruned_once():
    gpt = GPT(GPTConfig(vocab_size=20, block_size=8, d_model=8, n_head=2))
    names = list(prunable_weights(gpt))
    assert "lm_head" not in names  # tied to the embedding: not a Linear of its own to prune
    assert len(names) == 2 * 4  # qkv, proj, fc, proj per block


def _gpt():
    return GPT(GPTConfig(vocab_size=30, block_size=10, n_layer=2, d_model=16, n_head=4), seed=0).eval()


def test_gate_zero_equals_zeroing_the_heads_projection_columns():
    gpt = _gpt()
    x = torch.randint(0, 27, (2, 9))
    with HeadGates(gpt) as g:
        assert torch.allclose(gpt(x), _gpt()(x), atol=1e-6)  # gates of 1 change nothing
        g.gates[1, 2] = 0.0
        gated = gpt(x)
    ref = _gpt()
    with torch.no_grad():
        ref.blocks[1].attn.proj.weight[:, 8:12] = 0.0  # head 2 of 4, head_dim 4
    assert torch.allclose(gated, ref(x), atol=1e-6)
    assert torch.allclose(gpt(x), _gpt()(x), atol=1e-6)  # hooks removed on exit


def test_head_importance_is_the_gate_gradient():
    gpt = _gpt().double()  # finite differences need float64
    with torch.no_grad():
        for b in gpt.blocks:
            b.attn.proj.weight.mul_(20)  # heads that matter
    batches = [torch.randint(0, 27, (3, 10), generator=torch.Generator().manual_seed(i)) for i in range(2)]

    def loss_fn(m, b):
        return m.loss(b)

    imp = head_importance(gpt, batches, loss_fn, normalize=False)
    assert imp.shape == (2, 4)
    # finite differences of the loss in one gate, batch by batch
    eps, layer, head = 1e-5, 1, 3
    fd = 0.0
    for b in batches:
        vals = []
        for sign in (1, -1):
            with torch.no_grad(), HeadGates(gpt) as g:
                g.gates[layer, head] = 1 + sign * eps
                vals.append(float(gpt.loss(b)))
        fd += abs((vals[0] - vals[1]) / (2 * eps))
    assert imp[layer, head].item() == pytest.approx(fd, rel=1e-4)
    normed = head_importance(gpt, batches, loss_fn)
    assert torch.allclose(normed.norm(dim=1), torch.ones(2, dtype=normed.dtype))
    assert all(p.grad is None for p in gpt.parameters())
    with pytest.raises(ValueError, match="no batch"):
        head_importance(gpt, [], loss_fn)


def test_pruning_order_and_curve():
    imp = torch.tensor([[0.5, 0.1], [0.3, 0.9]])
    assert pruning_order(imp) == [(0, 1), (1, 0), (0, 0), (1, 1)]
    gpt = GPT(GPTConfig(vocab_size=30, block_size=10, n_layer=2, d_model=16, n_head=2), seed=0).eval()
    x = torch.randint(0, 27, (2, 10))
    before = float(gpt.loss(x))
    curve = head_pruning_curve(gpt, imp, lambda m: float(m.loss(x)), [0.0, 0.5, 1.0])
    assert [c["heads_pruned"] for c in curve] == [0, 2, 4]
    assert curve[0]["score"] == pytest.approx(before)
    assert curve[2]["score"] != pytest.approx(before)
    assert float(gpt.loss(x)) == pytest.approx(before)  # unchanged afterwards
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        HeadGates(nn.Linear(2, 2))
