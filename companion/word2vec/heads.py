"""word2vec's three output layers, each with an autograd loss and a hand-written SGD update.

All three score a hidden vector ``h`` (skip-gram: the input word's vector ``v_{w_I}``; CBOW:
the mean of the context vectors) against *output* vectors ``u``:

* :class:`FullSoftmax`: ``p(w_O | h) = exp(u_{w_O}.h) / sum_w exp(u_w.h)`` -- O(|V|) per example;
* :class:`HierarchicalSoftmax`: ``p(w_O | h) = prod_j sigma((2 c_j - 1) u_{n_j}.h)`` over the
  internal nodes ``n_j`` and branches ``c_j`` of ``w_O``'s path in a Huffman tree (chapter 2's
  :func:`~companion.neural_lm.tree.huffman_tree`) -- O(log |V|); the ``u`` are node vectors;
* :class:`NegativeSampling`: maximise ``log sigma(u_{w_O}.h) + sum_k log sigma(-u_{n_k}.h)``
  for ``k`` noise words ``n_k ~ P_n`` (:mod:`.noise`) -- O(k); not a normalised probability.

``loss(h, targets)`` returns the per-example negative log-likelihood (NEG: negative objective)
through autograd. ``sgd_update(h, targets, lr)`` does what the C code does for a batch at once:
it computes the error ``e = lr * (-dloss/dh)`` (the C code's ``neu1e``), adds
``lr * (-dloss/du)`` to the output vectors in place, and returns ``e`` for the model to add to
the input vectors. Both updates use the parameters from before the step. The tests check
``sgd_update`` against autograd.

HS and NEG reduce to the same step: a binary logistic regression of ``h`` against a few rows
of the output matrix with labels in {0, 1} (:func:`logistic_rows_update`).

Differences from the C code: the sigmoid is exact (the C code reads a table and clips the
score at +-6); updates of a batch are applied together rather than one pair at a time.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..neural_lm.tree import BinaryTree
from .noise import NoiseSampler

__all__ = ["logistic_rows_update", "gather_rows", "FullSoftmax", "HierarchicalSoftmax", "NegativeSampling", "OUTPUTS"]

OUTPUTS = ("full", "hs", "neg")


def gather_rows(weight: torch.Tensor, ids: torch.Tensor, sparse: bool = False) -> torch.Tensor:
    """``weight[ids]`` for any shape of ``ids``; with ``sparse=True`` autograd gives ``weight`` a
    sparse gradient (only the gathered rows), as ``nn.Embedding(sparse=True)`` does."""
    if sparse:
        return F.embedding(ids, weight, sparse=True)
    return weight.index_select(0, ids.reshape(-1)).view(*ids.shape, weight.shape[1])


def _check_h_targets(h: torch.Tensor, targets: torch.Tensor, dim: int, vocab_size: int) -> None:
    if h.dim() != 2 or h.shape[1] != dim:
        raise ValueError(f"h must be [B, {dim}], got shape {tuple(h.shape)}")
    if targets.dtype not in (torch.int64, torch.int32) or targets.dim() != 1:
        raise ValueError(f"targets must be a 1-D tensor of word ids, got {targets.dtype} {tuple(targets.shape)}")
    if targets.shape[0] != h.shape[0]:
        raise ValueError(f"{targets.shape[0]} targets for {h.shape[0]} hidden vectors; they must match")


def logistic_rows_update(
    weight: torch.Tensor,
    h: torch.Tensor,
    rows: torch.Tensor,
    labels: torch.Tensor,
    lr: float,
    weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One SGD step of ``sum_j w_j log sigma(+-u_{rows_j}.h)`` for a batch, in place on ``weight``.

    For each example ``b`` and slot ``j``: score ``s = u_{rows[b,j]} . h_b``, gradient
    coefficient ``g = lr * w_{bj} * (labels[b,j] - sigma(s))``; then
    ``e_b = sum_j g u_{rows[b,j]}`` and ``u_{rows[b,j]} += g h_b`` (both from the old ``u``).

    Args:
        weight: ``[R, d]`` output vectors (updated in place).
        h: ``[B, d]`` hidden vectors.
        rows: ``[B, J]`` row ids; labels ``[B, J]`` in {0, 1}; weights ``[B, J]`` (0 masks a slot).

    Returns:
        ``(e, loss_sum)``: ``[B, d]`` error for the input side and the summed negative
        log-likelihood (a 0-d tensor, before the update).
    """
    u = gather_rows(weight, rows)  # [B, J, d]
    s = torch.einsum("bd,bjd->bj", h, u)
    g = labels - torch.sigmoid(s)
    ll = F.logsigmoid((2 * labels - 1) * s)
    if weights is not None:
        g = g * weights
        ll = ll * weights
    g = g * lr
    e = torch.einsum("bj,bjd->bd", g, u)
    weight.index_add_(0, rows.reshape(-1), (g.unsqueeze(2) * h.unsqueeze(1)).reshape(-1, h.shape[1]))
    return e, -ll.sum()


class FullSoftmax(nn.Module):
    """The plain softmax over the vocabulary (no bias, as in word2vec): the O(|V|) baseline.

    Args:
        vocab_size, dim: ``|V|`` and the vector size.
    """

    kind = "full"

    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        if vocab_size < 2 or dim < 1:
            raise ValueError(f"need vocab_size >= 2 and dim >= 1, got {vocab_size}, {dim}")
        self.vocab_size, self.dim = vocab_size, dim
        self.weight = nn.Parameter(torch.zeros(vocab_size, dim))  # output vectors u_w

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """``log p(w | h)`` for every word: ``[B, V]``."""
        return F.log_softmax(h @ self.weight.t(), dim=-1)

    def loss(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``-log p(target | h)`` per example: ``[B]``."""
        _check_h_targets(h, targets, self.dim, self.vocab_size)
        return F.cross_entropy(h @ self.weight.t(), targets, reduction="none")

    @torch.no_grad()
    def sgd_update(self, h: torch.Tensor, targets: torch.Tensor, lr: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Dense step: ``g = lr (onehot - softmax)``; ``e = g U``; ``U += g^T h``."""
        logits = h @ self.weight.t()
        logp = F.log_softmax(logits, dim=-1)
        loss = -logp.gather(1, targets.unsqueeze(1)).sum()
        g = -logp.exp()
        g[torch.arange(h.shape[0], device=h.device), targets] += 1.0
        g *= lr
        e = g @ self.weight
        self.weight.add_(g.t() @ h)
        return e, loss


class HierarchicalSoftmax(nn.Module):
    """Hierarchical softmax over a binary tree (word2vec uses the Huffman tree).

    Node vectors start at zero as in the C code (every branch probability starts at 1/2).

    Args:
        dim: vector size.
        tree: a :class:`~companion.neural_lm.tree.BinaryTree` (its tensors become buffers).
    """

    kind = "hs"
    sparse_grad = False  # set by the model for training through autograd

    def __init__(self, dim: int, tree: BinaryTree):
        super().__init__()
        if not isinstance(tree, BinaryTree):
            raise TypeError(f"tree must be a companion.neural_lm.tree.BinaryTree, got {type(tree).__name__}")
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.vocab_size, self.dim = tree.n_leaves, dim
        self.weight = nn.Parameter(torch.zeros(tree.n_internal, dim))  # node vectors u_n
        self.register_buffer("paths", tree.paths.clone())
        self.register_buffer("codes", tree.codes.clone().float())
        self.register_buffer("mask", tree.mask.clone())

    def _path(self, h: torch.Tensor, targets: torch.Tensor):
        _check_h_targets(h, targets, self.dim, self.vocab_size)
        return self.paths[targets], self.codes[targets], self.mask[targets].to(h.dtype)

    def loss(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``-log p(target | h)`` per example: ``[B]``."""
        nodes, codes, mask = self._path(h, targets)
        s = torch.einsum("bd,bjd->bj", h, gather_rows(self.weight, nodes, self.sparse_grad))
        return -(F.logsigmoid((2 * codes - 1) * s) * mask).sum(1)

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """``log p(w | h)`` for every word: ``[B, V]`` (O(|V|) per row: for checks, not training)."""
        s = h @ self.weight.t()  # [B, n_internal]
        z = s[:, self.paths] * (2 * self.codes - 1)  # [B, V, depth]
        return (F.logsigmoid(z) * self.mask).sum(-1)

    @torch.no_grad()
    def sgd_update(self, h: torch.Tensor, targets: torch.Tensor, lr: float) -> tuple[torch.Tensor, torch.Tensor]:
        """One step along every target's path (label = branch code, masked beyond the path)."""
        nodes, codes, mask = self._path(h, targets)
        return logistic_rows_update(self.weight, h, nodes, codes, lr, mask)


class NegativeSampling(nn.Module):
    """Negative sampling with ``negative`` noise words per example from ``counts^power``.

    A noise word equal to the target is skipped (weight 0), as in the C code. Output vectors
    start at zero as in the C code.

    Args:
        vocab_size, dim: ``|V|`` and the vector size.
        counts: ``[V]`` word counts for the noise distribution.
        negative: noise words per example (``k``).
        power: exponent of the noise distribution.
        seed: seed of the noise sampler.
    """

    kind = "neg"
    sparse_grad = False

    def __init__(self, vocab_size: int, dim: int, counts: torch.Tensor, *, negative: int = 5, power: float = 0.75, seed: int = 0):
        super().__init__()
        if vocab_size < 2 or dim < 1:
            raise ValueError(f"need vocab_size >= 2 and dim >= 1, got {vocab_size}, {dim}")
        if not isinstance(negative, int) or negative < 1:
            raise ValueError(f"negative must be a positive int (5-20 in the paper), got {negative!r}")
        counts = torch.as_tensor(counts)
        if counts.shape != (vocab_size,):
            raise ValueError(f"counts must have one entry per word ({vocab_size}), got shape {tuple(counts.shape)}")
        self.vocab_size, self.dim, self.negative = vocab_size, dim, negative
        self.weight = nn.Parameter(torch.zeros(vocab_size, dim))  # output vectors u_w
        self.sampler = NoiseSampler(counts, power=power, seed=seed)

    def _apply(self, fn, recurse=True):  # keep the noise table next to the weights
        out = super()._apply(fn, recurse)
        self.sampler.to(self.weight.device)
        return out

    def draw(self, targets: torch.Tensor) -> torch.Tensor:
        """``[B, 1 + k]`` rows: the target, then ``k`` noise words."""
        neg = self.sampler.sample(targets.shape[0], self.negative)
        return torch.cat([targets.unsqueeze(1).to(neg.dtype), neg], dim=1)

    def _labels(self, rows: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        labels = torch.zeros(rows.shape, dtype=dtype, device=rows.device)
        labels[:, 0] = 1
        weights = torch.ones_like(labels)
        weights[:, 1:] = (rows[:, 1:] != rows[:, :1]).to(dtype)  # skip noise == target
        return labels, weights

    def loss(self, h: torch.Tensor, targets: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """``-[log sigma(u_O.h) + sum_k log sigma(-u_k.h)]`` per example: ``[B]``.

        Args:
            rows: ``[B, 1 + k]`` from :meth:`draw` (drawn here if ``None``).
        """
        _check_h_targets(h, targets, self.dim, self.vocab_size)
        rows = self.draw(targets) if rows is None else rows
        labels, weights = self._labels(rows, h.dtype)
        s = torch.einsum("bd,bjd->bj", h, gather_rows(self.weight, rows, self.sparse_grad))
        return -(F.logsigmoid((2 * labels - 1) * s) * weights).sum(1)

    @torch.no_grad()
    def sgd_update(self, h: torch.Tensor, targets: torch.Tensor, lr: float, rows: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """One step on the target and ``k`` fresh noise words (or the given ``rows``)."""
        _check_h_targets(h, targets, self.dim, self.vocab_size)
        rows = self.draw(targets) if rows is None else rows
        labels, weights = self._labels(rows, h.dtype)
        return logistic_rows_update(self.weight, h, rows, labels, lr, weights)
