"""Pruning: removing weights, or whole attention heads, that the model can do without.

* **Magnitude pruning** (unstructured): zero the weights of smallest absolute value, per
  layer (:func:`magnitude_masks` with ``scope="layer"``) or over all layers at once
  (``scope="global"``). The masks equal ``torch.nn.utils.prune``'s ``l1_unstructured`` and
  ``global_unstructured`` (tested); :func:`apply_masks` multiplies them in.
* **Head pruning** (structured): Michel, Levy & Neubig (2019), "Are sixteen heads really better
  than one?". Each head ``h`` of each layer gets a gate ``xi_h`` multiplying its output before
  the attention's output projection (:class:`HeadGates`, a forward pre-hook on ``attn.proj``).
  A head's importance is ``I_h = E_x |dL/dxi_h|`` at ``xi = 1`` -- the first-order estimate of
  how much the loss changes when the head is removed (:func:`head_importance`); heads are
  pruned least important first (:func:`head_pruning_curve`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch
from torch import nn

from ..transformer.attention import MultiHeadAttention

SCOPES = ("layer", "global")


def prunable_weights(model: nn.Module) -> dict[str, nn.Parameter]:
    """The weight matrices of every ``nn.Linear`` of ``model`` (by module name): what magnitude
    pruning acts on. Embeddings (and output layers tied to them), biases and layer norms are
    left alone, as in most papers."""
    # an output layer tied to an embedding is the embedding: leave it alone
    seen = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    out = {name: m.weight for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    if not out:
        raise ValueError(f"{type(model).__name__} has no nn.Linear layer to prune")
    # a weight shared by two Linear modules is pruned once, under its first name
    unique = {}
    for name, w in out.items():
        if id(w) not in seen:
            seen.add(id(w))
            unique[name] = w
    return unique


def _n_prune(amount: float, n: int) -> int:
    if not 0.0 <= amount <= 1.0:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount}")
    return round(amount * n)  # torch.nn.utils.prune's rounding


def magnitude_masks(weights: dict[str, torch.Tensor] | nn.Module, amount: float,
                    scope: str = "layer") -> dict[str, torch.Tensor]:
    """0/1 masks (same shapes as the weights) that remove the fraction ``amount`` of smallest
    ``|w|``: in each matrix (``scope="layer"``) or across all of them (``"global"``, so layers
    with many small weights lose more). Ties at the threshold are broken by position, as
    :func:`torch.topk` breaks them."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    ws = prunable_weights(weights) if isinstance(weights, nn.Module) else dict(weights)
    masks = {}
    if scope == "layer":
        for name, w in ws.items():
            k = _n_prune(amount, w.numel())
            m = torch.ones(w.numel(), device=w.device)
            if k:
                m[torch.topk(w.detach().abs().reshape(-1), k, largest=False).indices] = 0
            masks[name] = m.view_as(w)
        return masks
    flat = torch.cat([w.detach().abs().reshape(-1) for w in ws.values()])
    k = _n_prune(amount, flat.numel())
    m = torch.ones_like(flat)
    if k:
        m[torch.topk(flat, k, largest=False).indices] = 0
    i = 0
    for name, w in ws.items():
        masks[name] = m[i:i + w.numel()].view_as(w)
        i += w.numel()
    return masks


@torch.no_grad()
def apply_masks(model: nn.Module, masks: dict[str, torch.Tensor]) -> nn.Module:
    """Multiply each masked Linear weight of ``model`` by its mask, in place; returns ``model``."""
    ws = prunable_weights(model)
    unknown = set(masks) - set(ws)
    if unknown:
        raise KeyError(f"no prunable weight named {sorted(unknown)[:3]} in {type(model).__name__}; "
                       f"names look like {list(ws)[:3]}")
    for name, m in masks.items():
        ws[name].mul_(m.to(ws[name].device, ws[name].dtype))
    return model


def sparsity(model: nn.Module) -> float:
    """The share of exactly-zero entries among the prunable weights."""
    ws = prunable_weights(model).values()
    return sum(int((w == 0).sum()) for w in ws) / sum(w.numel() for w in ws)


# ------------------------------------------------------------------------------ heads


def attention_layers(model: nn.Module) -> list[MultiHeadAttention]:
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    if not layers:
        raise ValueError(f"{type(model).__name__} has no MultiHeadAttention layer: no heads to prune")
    return layers


class HeadGates:
    """A gate per head, ``gates[layer, head]``, multiplied into each head's output (before the
    attention's output projection) by a forward pre-hook. Use as a context manager::

        with HeadGates(model) as g:
            g.gates[0, 3] = 0        # head 3 of layer 0 removed
            loss = model.loss(batch)

    ``requires_grad=True`` makes the gates leaves of the graph, so ``loss.backward()`` leaves
    ``dL/dxi`` in ``g.gates.grad`` (Michel et al.'s importance). Setting a gate to 0 equals
    zeroing that head's columns of the output projection (tested).
    """

    def __init__(self, model: nn.Module, requires_grad: bool = False):
        self.layers = attention_layers(model)
        n_heads = {a.n_head for a in self.layers}
        if len(n_heads) != 1:
            raise ValueError(f"layers have different numbers of heads {sorted(n_heads)}; gates need one shape")
        w = self.layers[0].proj.weight
        self.gates = torch.ones(len(self.layers), n_heads.pop(), device=w.device, dtype=w.dtype,
                                requires_grad=requires_grad)
        self._handles: list = []

    def _hook(self, i: int, attn: MultiHeadAttention):
        def pre(_module, args):
            y = args[0]
            g = self.gates[i].to(y.dtype).repeat_interleave(attn.head_dim)  # one gate per channel
            return (y * g,)
        return pre

    def __enter__(self) -> HeadGates:  # noqa: PYI034 (a final class in all but name)
        self._handles = [a.proj.register_forward_pre_hook(self._hook(i, a)) for i, a in enumerate(self.layers)]
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []


def head_importance(model: nn.Module, batches: Iterable, loss_fn: Callable[[nn.Module, object], torch.Tensor],
                    normalize: bool = True) -> torch.Tensor:
    """Michel et al.'s importance ``I_h = sum over batches |dL/dxi_h|`` at ``xi = 1``: ``[layers,
    heads]``. ``normalize`` divides each layer's scores by their L2 norm (the paper's
    layer-wise normalisation, which made global pruning work better). Dropout is off."""
    was = model.training
    model.eval()
    total = None
    try:
        with HeadGates(model, requires_grad=True) as g:
            for batch in batches:
                g.gates.grad = None
                loss_fn(model, batch).backward()
                total = g.gates.grad.abs() if total is None else total + g.gates.grad.abs()
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was)
    if total is None:
        raise ValueError("no batch to compute head importance on")
    if normalize:
        total = total / total.norm(dim=1, keepdim=True).clamp(min=1e-20)
    return total.detach()


def pruning_order(importance: torch.Tensor) -> list[tuple[int, int]]:
    """Heads as ``(layer, head)``, least important first (ties: lower layer, then head, first)."""
    flat = importance.detach().cpu().reshape(-1).numpy()
    order = np.argsort(flat, kind="stable")
    H = importance.shape[1]
    return [(int(i // H), int(i % H)) for i in order]


@torch.no_grad()
def head_pruning_curve(model: nn.Module, importance: torch.Tensor, score: Callable[[nn.Module], float],
                       fractions: Sequence[float]) -> list[dict]:
    """``score(model)`` with the least important ``fraction`` of heads gated off, for each
    fraction: ``[{"fraction", "heads_pruned", "score"}]``. ``model`` is unchanged afterwards."""
    order = pruning_order(importance)
    n = len(order)
    out = []
    with HeadGates(model) as g:
        for f in fractions:
            k = _n_prune(f, n)
            g.gates.fill_(1.0)
            for layer, head in order[:k]:
                g.gates[layer, head] = 0.0
            out.append({"fraction": k / n, "heads_pruned": k, "score": float(score(model))})
    return out


__all__ = ["HeadGates", "apply_masks", "attention_layers", "head_importance", "head_pruning_curve",
           "magnitude_masks", "prunable_weights", "pruning_order", "sparsity"]
