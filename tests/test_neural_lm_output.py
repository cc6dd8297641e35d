"""Output layers: full softmax and hierarchical softmax (sums, gradients, torch equivalence)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from companion.neural_lm import (
    FullSoftmax,
    HierarchicalSoftmax,
    balanced_tree,
    clustered_tree,
    huffman_tree,
    log_sigmoid,
    log_softmax,
    nll_from_logits,
)


def test_log_sigmoid_equals_torch_and_is_stable():
    x = torch.cat([torch.linspace(-50, 50, 1001, dtype=torch.float64), torch.tensor([-1e4, 1e4, 0.0], dtype=torch.float64)])
    assert torch.allclose(log_sigmoid(x), F.logsigmoid(x), rtol=1e-12, atol=1e-12)
    assert torch.isfinite(log_sigmoid(torch.tensor([-1e4, 1e4]))).all()
    x32 = torch.randn(100, requires_grad=True)
    (g_ours,) = torch.autograd.grad(log_sigmoid(x32).sum(), x32)
    (g_torch,) = torch.autograd.grad(F.logsigmoid(x32).sum(), x32)
    assert torch.allclose(g_ours, g_torch, atol=1e-6)


def test_log_softmax_and_nll_equal_torch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(7, 13, generator=g, dtype=torch.float64) * 30
    targets = torch.randint(0, 13, (7,), generator=g)
    assert torch.allclose(log_softmax(logits), F.log_softmax(logits, -1), atol=1e-12)
    assert torch.allclose(nll_from_logits(logits, targets), F.cross_entropy(logits, targets, reduction="none"), atol=1e-12)
    big = torch.tensor([[1000.0, 0.0, -1000.0]])
    assert torch.isfinite(log_softmax(big)).all()


def test_full_softmax_fused_and_explicit_losses_agree_with_gradients():
    torch.manual_seed(0)
    layer = FullSoftmax(6, 20)
    h = torch.randn(9, 6)
    t = torch.randint(0, 20, (9,))
    layer.fused = True
    l1 = layer.loss(h, t)
    g1 = torch.autograd.grad(l1, list(layer.parameters()))
    layer.fused = False
    l2 = layer.loss(h, t)
    g2 = torch.autograd.grad(l2, list(layer.parameters()))
    assert torch.allclose(l1, l2, atol=1e-6)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g1, g2))
    assert torch.allclose(layer.log_probs_all(h).exp().sum(1), torch.ones(9), atol=1e-5)
    assert torch.allclose(layer.log_prob(h, t), layer.log_probs_all(h).gather(1, t[:, None]).squeeze(1), atol=1e-6)
    layer.fused = True  # the fused per-token path (used for evaluation) equals the explicit one
    assert torch.allclose(layer.log_prob(h, t), layer.log_probs_all(h).gather(1, t[:, None]).squeeze(1), atol=1e-6)


TREES = {
    "huffman": lambda V: huffman_tree([int(1000 / (i + 1)) for i in range(V)]),
    "balanced": balanced_tree,
    "clustered": lambda V: clustered_tree(torch.randn(V, 3, generator=torch.Generator().manual_seed(1))),
}


@pytest.mark.parametrize("kind", sorted(TREES))
@pytest.mark.parametrize("V", [2, 3, 7, 50])
def test_tree_leaf_probabilities_sum_to_one(kind, V):
    torch.manual_seed(0)
    layer = HierarchicalSoftmax(5, TREES[kind](V)).double()
    with torch.no_grad():
        layer.node_vectors.mul_(3)  # sharp, far-from-uniform distributions
        layer.node_bias.normal_()
    h = torch.randn(4, 5, dtype=torch.float64)
    lp = layer.log_probs_all(h)
    assert lp.shape == (4, V)
    assert torch.allclose(lp.exp().sum(1), torch.ones(4, dtype=torch.float64), atol=1e-12)
    # the O(log V) path computation agrees with the full table for every word
    for w in range(V):
        t = torch.full((4,), w)
        assert torch.allclose(layer.log_prob(h, t), lp[:, w], atol=1e-12)


def explicit_tree_nll(node_vectors, node_bias, h, tree, targets):
    """The full formulation, one word at a time: P(w|h) = prod over its path of sigma(+-(u.h + c))."""
    total = 0.0
    for i, w in enumerate(targets.tolist()):
        p = torch.ones((), dtype=h.dtype)
        for j in range(int(tree.lengths[w])):
            node, code = int(tree.paths[w, j]), float(tree.codes[w, j])
            s = node_vectors[node] @ h[i] + node_bias[node]
            p = p * (torch.sigmoid(s) if code == 1.0 else torch.sigmoid(-s))
        total = total - torch.log(p)
    return total / len(targets)


@pytest.mark.parametrize("fused", [True, False])
def test_hsoftmax_gradients_match_explicit_product_formulation(fused):
    torch.manual_seed(0)
    tree = huffman_tree([9, 5, 4, 2, 1, 1])
    layer = HierarchicalSoftmax(4, tree, fused=fused).double()
    with torch.no_grad():
        layer.node_bias.normal_()
    h = torch.randn(8, 4, dtype=torch.float64, requires_grad=True)
    targets = torch.tensor([0, 1, 2, 3, 4, 5, 5, 0])
    ours = layer.loss(h, targets)
    g_ours = torch.autograd.grad(ours, [layer.node_vectors, layer.node_bias, h])
    ref = explicit_tree_nll(layer.node_vectors, layer.node_bias, h, tree, targets)
    g_ref = torch.autograd.grad(ref, [layer.node_vectors, layer.node_bias, h])
    assert torch.allclose(ours, ref, atol=1e-12)
    for a, b in zip(g_ours, g_ref):
        assert torch.allclose(a, b, atol=1e-12)


def test_hsoftmax_gradcheck_finite_differences():
    torch.manual_seed(0)
    layer = HierarchicalSoftmax(3, balanced_tree(5)).double()
    targets = torch.tensor([0, 4, 2])
    h = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    u = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    c = torch.randn(4, dtype=torch.float64, requires_grad=True)

    def loss(h, u, c):
        return torch.func.functional_call(layer, {"node_vectors": u, "node_bias": c}, (h, targets)).sum()

    assert torch.autograd.gradcheck(loss, (h, u, c))


def test_hsoftmax_hand_computed_probability():
    # balanced_tree(3) in heap order: root 0 -> (code 0: node 1, code 1: word 0);
    # node 1 -> (code 0: word 1, code 1: word 2). So codes are w0 "1", w1 "00", w2 "01".
    tree = balanced_tree(3)
    assert [tree.code_string(w) for w in range(3)] == ["1", "00", "01"]
    layer = HierarchicalSoftmax(1, tree, bias=False).double()
    with torch.no_grad():
        layer.node_vectors.copy_(torch.tensor([[1.0], [2.0]], dtype=torch.float64))
    p = layer.log_probs_all(torch.tensor([[0.5]], dtype=torch.float64)).exp()[0]
    sig = lambda x: 1 / (1 + math.exp(-x))
    # node scores: root 1 * 0.5 = 0.5, node 1: 2 * 0.5 = 1.0
    expected = [sig(0.5), sig(-0.5) * sig(-1.0), sig(-0.5) * sig(1.0)]
    assert p.tolist() == pytest.approx(expected, abs=1e-12)
    assert p.tolist() == pytest.approx([0.622459, 0.101536, 0.276004], abs=1e-6)


def test_output_layers_reject_bad_inputs():
    full = FullSoftmax(4, 10)
    hs = HierarchicalSoftmax(4, balanced_tree(10))
    h = torch.randn(3, 4)
    for layer in (full, hs):
        with pytest.raises(ValueError, match=r"\[0, 10\)"):
            layer.log_prob(h, torch.tensor([0, 1, 10]))
        with pytest.raises(ValueError, match="must match"):
            layer.loss(h, torch.tensor([0, 1]))
        with pytest.raises(TypeError, match="integer"):
            layer.loss(h, torch.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"\[N, 4\]"):
        hs.log_probs_all(torch.randn(3, 5))
    with pytest.raises(TypeError, match="BinaryTree"):
        HierarchicalSoftmax(4, [1, 2, 3])
    with pytest.raises(ValueError, match="shared weight"):
        FullSoftmax(4, 10, weight=torch.nn.Parameter(torch.zeros(3, 3)))
