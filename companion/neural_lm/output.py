"""The full softmax output layer, and the numerically stable primitives it and the tree share.

Both output layers of this package (:class:`FullSoftmax` here and
:class:`~companion.neural_lm.hsoftmax.HierarchicalSoftmax`) have the same interface, so a model
swaps one for the other with a config switch:

* ``log_prob(h, targets) -> [N]``: ``log P(target | h)`` for each row;
* ``loss(h, targets) -> scalar``: the mean negative log-likelihood;
* ``log_probs_all(h) -> [N, V]``: the whole normalised distribution (log).

``h`` is the feature vector the model computes from the context (``[N, in_features]``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["log_sigmoid", "log_softmax", "nll_from_logits", "FullSoftmax", "check_targets"]


def log_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``log sigma(x) = -log(1 + e^{-x})``, written so that it never overflows.

    For large negative ``x``, ``e^{-x}`` overflows; rewriting as
    ``min(x, 0) - log1p(e^{-|x|})`` keeps every exponent <= 0. (Equal to ``F.logsigmoid``;
    the tests prove it.)
    """
    return torch.minimum(x, torch.zeros_like(x)) - torch.log1p(torch.exp(-x.abs()))


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """``y_i - log sum_j exp(y_j)`` over the last axis, stabilised by subtracting the maximum."""
    m = logits.max(dim=-1, keepdim=True).values.detach()
    return logits - m - torch.log(torch.exp(logits - m).sum(dim=-1, keepdim=True))


def nll_from_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-row negative log-likelihood ``-log softmax(logits)[target]`` (equal to
    ``F.cross_entropy(..., reduction='none')``; the tests prove it)."""
    return -log_softmax(logits).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def check_targets(targets: torch.Tensor, vocab_size: int, n_rows: int | None = None) -> None:
    """Raise a clear error unless ``targets`` is a 1-D integer tensor of ids in ``[0, vocab_size)``."""
    if not isinstance(targets, torch.Tensor):
        raise TypeError(f"targets must be a torch.LongTensor of word ids, got {type(targets).__name__}")
    if targets.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"targets must hold integer word ids (torch.long), got dtype {targets.dtype}")
    if targets.dim() != 1:
        raise ValueError(f"targets must be 1-D [N], got shape {tuple(targets.shape)}")
    if n_rows is not None and targets.shape[0] != n_rows:
        raise ValueError(f"got {targets.shape[0]} targets for {n_rows} contexts; they must match")
    if targets.numel() and (int(targets.min()) < 0 or int(targets.max()) >= vocab_size):
        raise ValueError(
            f"target ids must lie in [0, {vocab_size}); got min {int(targets.min())}, "
            f"max {int(targets.max())}. Encode with the model's vocabulary."
        )


class FullSoftmax(nn.Module):
    """``P(w | h) = softmax(b + W h)_w`` over the whole vocabulary: cost O(|V|) per token.

    Args:
        in_features: size of ``h``.
        vocab_size: ``|V|``.
        weight: share this ``[V, in_features]`` parameter instead of creating one (the
            log-bilinear model ties the output to the word representations).
        fused: compute the training loss with ``F.cross_entropy`` (one fused kernel; equal to
            our explicit :func:`nll_from_logits`, which ``fused=False`` uses).
    """

    def __init__(self, in_features: int, vocab_size: int, *, weight: nn.Parameter | None = None, fused: bool = True):
        super().__init__()
        if in_features < 1 or vocab_size < 2:
            raise ValueError(f"need in_features >= 1 and vocab_size >= 2, got {in_features}, {vocab_size}")
        self.in_features, self.vocab_size, self.fused = in_features, vocab_size, fused
        if weight is None:
            weight = nn.Parameter(torch.empty(vocab_size, in_features))
            nn.init.normal_(weight, std=in_features**-0.5)
        elif tuple(weight.shape) != (vocab_size, in_features):
            raise ValueError(f"shared weight must be [{vocab_size}, {in_features}], got {tuple(weight.shape)}")
        self.weight = weight
        self.bias = nn.Parameter(torch.zeros(vocab_size))

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """Unnormalised scores ``b + W h``: ``[N, V]``."""
        return F.linear(h, self.weight, self.bias)

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """``log P(w | h)`` for every word: ``[N, V]``."""
        return log_softmax(self.logits(h))

    def forward(self, h: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """``log_prob(h, targets)`` if targets are given, else ``log_probs_all(h)``."""
        return self.log_probs_all(h) if targets is None else self.log_prob(h, targets)

    def log_prob(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``log P(target | h)``: ``[N]``."""
        check_targets(targets, self.vocab_size, h.shape[0])
        if self.fused:  # one kernel, about twice as fast on CPU; equal to ours (tests/test_neural_lm_output.py)
            return -F.cross_entropy(self.logits(h), targets, reduction="none")
        return -nll_from_logits(self.logits(h), targets)

    def loss(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the targets."""
        check_targets(targets, self.vocab_size, h.shape[0])
        if self.fused:
            return F.cross_entropy(self.logits(h), targets)
        return nll_from_logits(self.logits(h), targets).mean()
