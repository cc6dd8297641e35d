"""Chapter 7: the fused output layer + cross-entropy equals the plain computation."""

from __future__ import annotations

import pytest
import torch

from companion.transformer import GPT, GPTConfig
from companion.transformer.loss import linear_cross_entropy, reference_cross_entropy

pytestmark = pytest.mark.usefixtures("one_thread")


def _inputs(N=37, d=16, V=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(N, d, generator=g, requires_grad=True)
    w = torch.randn(V, d, generator=g).mul(0.3).requires_grad_()
    t = torch.randint(0, V, (N,), generator=g)
    t[[0, 5, 6]] = -100  # ignored positions
    return h, w, t


def _value_and_grads(fn, h, w, t):
    h.grad = w.grad = None
    loss = fn(h, w, t)
    (2.5 * loss).backward()  # an upstream gradient other than 1
    return loss.detach(), h.grad.clone(), w.grad.clone()


@pytest.mark.parametrize("chunk", [None, 1, 8, 100])
def test_equals_cross_entropy_value_and_gradients(chunk):
    h, w, t = _inputs()
    ref = _value_and_grads(reference_cross_entropy, h, w, t)
    ours = _value_and_grads(lambda *a: linear_cross_entropy(*a, chunk=chunk), h, w, t)
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)


def test_no_grad_batched_shapes_and_bf16_autocast():
    h, w, t = _inputs()
    with torch.no_grad():
        torch.testing.assert_close(linear_cross_entropy(h, w, t), reference_cross_entropy(h, w, t))
    h3, t3 = h.detach().view(1, 37, 16), t.view(1, 37)  # [B, T, d] and [B, T]
    torch.testing.assert_close(linear_cross_entropy(h3, w, t3), reference_cross_entropy(h3, w, t3))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = _value_and_grads(reference_cross_entropy, h, w, t)
        ours = _value_and_grads(linear_cross_entropy, h, w, t)
    assert ours[1].dtype == h.dtype and ours[2].dtype == w.dtype  # fp32 master gradients
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a, b, atol=2e-2, rtol=2e-2)  # bf16 products on both sides
    all_ignored = torch.full_like(t, -100)
    assert linear_cross_entropy(h, w, all_ignored).isnan()  # as F.cross_entropy


def test_errors_say_what_is_wrong():
    h, w, t = _inputs()
    with pytest.raises(ValueError, match="targets"):
        linear_cross_entropy(h, w, t[:-1])
    with pytest.raises(ValueError, match="weight must be"):
        linear_cross_entropy(h, w.t(), t)
    with pytest.raises(TypeError, match="integer"):
        linear_cross_entropy(h, w, t.float())


def test_gpt_loss_uses_it_and_equals_forward_with_tied_gradients():
    torch.manual_seed(0)
    batch = torch.randint(0, 97, (2, 12))
    a, b = GPT(GPTConfig(), seed=0), GPT(GPTConfig(), seed=0)
    la = a.loss(batch)
    lb = b(batch[:, :-1], batch[:, 1:])[1]
    la.backward()
    lb.backward()
    torch.testing.assert_close(la, lb)
    for (name, pa), pb in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(pa.grad, pb.grad, atol=1e-6, rtol=1e-5, msg=name)


def test_flop_counter_counts_the_same_products():
    """Chapter 9 counts a step's FLOPs with FlopCounterMode: the fused loss must show all three
    products of the output layer, as the plain path does."""
    from torch.utils.flop_counter import FlopCounterMode

    batch = torch.randint(0, 97, (2, 12), generator=torch.Generator().manual_seed(0))
    counts = []
    for loss_of in (lambda m: m.loss(batch), lambda m: m(batch[:, :-1], batch[:, 1:])[1]):
        with FlopCounterMode(display=False) as counter:
            loss_of(GPT(GPTConfig(), seed=0)).backward()
        counts.append(counter.get_total_flops())
    assert counts[0] == counts[1] > 0


def test_float64_stays_float64():
    """Finite-difference checks (chapter 9's head importance) run the model in float64."""
    h, w, t = (x.detach().double() if x.is_floating_point() else x for x in _inputs())
    h.requires_grad_()
    w.requires_grad_()
    loss = linear_cross_entropy(h, w, t, chunk=8)
    assert loss.dtype == torch.float64
    ref = _value_and_grads(reference_cross_entropy, h, w, t)
    ours = _value_and_grads(lambda *a: linear_cross_entropy(*a, chunk=8), h, w, t)
    for a, b in zip(ours, ref):
        assert a.dtype == torch.float64
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-10)
