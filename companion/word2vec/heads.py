"""word2vec's three output layers, each with an autograd loss and a hand-written SGD update.

All three score a hidden vector ``h`` (skip-gram: a context word's input vector; CBOW: the mean
of the context vectors) against *output* vectors ``u``:

* :class:`FullSoftmax`: ``p(w_O | h) = exp(u_{w_O}.h) / sum_w exp(u_w.h)`` -- O(|V|) per example;
* :class:`HierarchicalSoftmax`: ``p(w_O | h) = prod_j sigma((2 c_j - 1) u_{n_j}.h)`` over the
  internal nodes ``n_j`` and branches ``c_j`` of ``w_O``'s path in a Huffman tree (chapter 2's
  :func:`~companion.neural_lm.tree.huffman_tree`) -- O(log |V|); the ``u`` are node vectors;
* :class:`NegativeSampling`: maximise ``log sigma(u_{w_O}.h) + sum_k log sigma(-u_{n_k}.h)``
  for ``k`` noise words ``n_k ~ P_n`` (:mod:`.noise`) -- O(k); not a normalised probability.

**Block layout.** The layers work on the blocks of :class:`~.pairs.Word2VecBatch`: ``Q`` hidden
vectors ``X [nb, Q, d]`` per block, ``g`` centres (targets) per block, and an attachment matrix
``A [nb, Q, g]`` (1 where hidden vector ``q`` predicts centre ``i``). Skip-gram passes the
block's tokens with the window mask; CBOW passes one hidden vector per centre with ``A``
diagonal. HS and NEG turn each centre into ``J`` output rows with labels in {0, 1} (NEG: the
target and ``k`` noise words; HS: the path's nodes and branches); one batched matrix product
``X U^T`` then scores every hidden vector of a block against every row of the block, and ``A``
keeps the real pairs.

Consequence for negative sampling: the ``k`` noise words are drawn once per *centre* and shared
by the pairs of its window (as in Ji et al. 2016's parallel word2vec), where the C code draws
them per pair. Every pair still meets ``k`` fresh draws from ``P_n``, so the objective is the
same in expectation; the benchmark compares the result with gensim.

``loss(X, A, targets)`` returns the per-pair loss ``[nb, Q, g]`` through autograd.
``sgd_update(X, A, targets, lr)`` does the C code's step for all pairs at once: it adds
``lr * (-dloss/du)`` to the output vectors in place and returns ``E = lr * (-dloss/dX)``, the
error for the input side (the C code's ``neu1e``), both from the parameters before the step.
The tests check ``sgd_update`` against autograd. Other differences from the C code: the sigmoid
is exact (the C code reads a table and clips the score at +-6), and a batch's updates are
applied together rather than one pair after the other.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..neural_lm.tree import BinaryTree
from .noise import NoiseSampler

__all__ = [
    "gather_rows", "logistic_block_loss", "logistic_block_update", "row_scale",
    "FullSoftmax", "HierarchicalSoftmax", "NegativeSampling", "OUTPUTS",
]

OUTPUTS = ("full", "hs", "neg")


def gather_rows(weight: torch.Tensor, ids: torch.Tensor, sparse: bool = False) -> torch.Tensor:
    """``weight[ids]`` for any shape of ``ids``; with ``sparse=True`` autograd gives ``weight`` a
    sparse gradient (only the gathered rows), as ``nn.Embedding(sparse=True)`` does."""
    if sparse:
        return F.embedding(ids, weight, sparse=True)
    return weight.index_select(0, ids.reshape(-1)).view(*ids.shape, weight.shape[1])


def _check_block(X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor, dim: int) -> None:
    if X.dim() != 3 or X.shape[2] != dim:
        raise ValueError(f"X must be [blocks, Q, {dim}], got shape {tuple(X.shape)}")
    if targets.dim() != 2 or targets.shape[0] != X.shape[0]:
        raise ValueError(f"targets must be [blocks, g] with {X.shape[0]} blocks, got shape {tuple(targets.shape)}")
    if A.shape != (X.shape[0], X.shape[1], targets.shape[1]):
        raise ValueError(f"A must be [blocks, Q, g] = {(X.shape[0], X.shape[1], targets.shape[1])}, got {tuple(A.shape)}")


def _scores(weight: torch.Tensor, X: torch.Tensor, rows: torch.Tensor, sparse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """``U [nb, g J, d]`` (the rows' vectors) and the scores ``S [nb, Q, g, J] = X U^T``."""
    nb, g, J = rows.shape
    U = gather_rows(weight, rows.reshape(nb, g * J), sparse)
    return U, torch.bmm(X, U.transpose(1, 2)).view(nb, X.shape[1], g, J)


def logistic_block_loss(
    weight: torch.Tensor, X: torch.Tensor, A: torch.Tensor, rows: torch.Tensor, labels: torch.Tensor,
    slot_weights: torch.Tensor, sparse: bool = False,
) -> torch.Tensor:
    """Per-pair ``-sum_j w_j log sigma((2 y_j - 1) u_{rows_j} . x)``: ``[nb, Q, g]`` (autograd).

    Args:
        weight: ``[R, d]`` output vectors; X ``[nb, Q, d]``; A ``[nb, Q, g]``;
            rows/labels/slot_weights ``[nb, g, J]`` (labels in {0, 1}, weight 0 masks a slot).
    """
    _, S = _scores(weight, X, rows, sparse)
    ll = F.logsigmoid((2 * labels - 1).unsqueeze(1) * S) * slot_weights.unsqueeze(1)
    return -ll.sum(3) * A


@torch.no_grad()
def row_scale(ids: torch.Tensor, uses: torch.Tensor, n_rows: int, cap: float | None) -> torch.Tensor | None:
    """``min(1, cap / n_r)`` for the row of every entry of ``ids``, where ``n_r`` is how many
    pairs update row ``r`` in this batch (``uses`` per entry, summed by row). ``None`` if no cap.

    Why: a batch's updates are computed from the same parameters and summed. Sequential SGD
    (the C code) would see a frequent word's vector move after each of its pairs and its later
    gradients shrink; a batch adds them all at full size, and with hundreds of pairs of "the"
    in one batch the sum overshoots (measured: training diverged without subsampling). Capping a
    row's step at ``cap`` pairs' worth leaves every rarer row's update exactly SGD's.
    """
    if cap is None:
        return None
    n = torch.zeros(n_rows, device=uses.device, dtype=uses.dtype).index_add_(0, ids.reshape(-1), uses.reshape(-1))
    return (cap / n.clamp(min=cap))[ids]


def logistic_block_update(
    weight: torch.Tensor, X: torch.Tensor, A: torch.Tensor, rows: torch.Tensor, labels: torch.Tensor,
    slot_weights: torch.Tensor, lr: float, cap: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One SGD step of :func:`logistic_block_loss` summed over the pairs, in place on ``weight``.

    With ``G = lr * A * w * (y - sigma(S))`` (``[nb, Q, g J]``): ``E = G U`` is the error for the
    hidden vectors and ``U += G^T X``. With ``cap``, a row updated by more than ``cap`` pairs
    moves ``cap / n_r`` of that (see :func:`row_scale`). Returns ``(E [nb, Q, d], summed loss)``.
    """
    nb, g, J = rows.shape
    Q = X.shape[1]
    U, S = _scores(weight, X, rows, False)
    coef = A.unsqueeze(3) * slot_weights.unsqueeze(1)  # [nb, Q, g, J]
    P = torch.sigmoid(S)
    y = labels.unsqueeze(1)
    # -log sigma(+-S) from P: log P where y = 1, log(1 - P) where y = 0 (one pass, no logsigmoid)
    loss = -(torch.where(y > 0, P, 1 - P).clamp_(min=1e-30).log_().mul_(coef)).sum()
    G = P.neg_().add_(y).mul_(coef).mul_(lr).view(nb, Q, g * J)  # lr * A * w * (y - sigma(S))
    E = torch.bmm(G, U)
    scale = row_scale(rows, A.sum(1).unsqueeze(2) * slot_weights, weight.shape[0], cap)
    if scale is not None:  # scaling G's columns scales the rows of dU = G^T X, at a fraction of the cost
        G = G * scale.view(nb, 1, g * J)
    dU = torch.bmm(G.transpose(1, 2), X)
    weight.index_add_(0, rows.reshape(-1), dU.reshape(-1, X.shape[2]))
    return E, loss


class FullSoftmax(nn.Module):
    """The plain softmax over the vocabulary (no bias, as in word2vec): the O(|V|) baseline.

    Args:
        vocab_size, dim: ``|V|`` and the vector size.
    """

    kind = "full"
    sparse_grad = False  # the whole matrix gets a gradient anyway

    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        if vocab_size < 2 or dim < 1:
            raise ValueError(f"need vocab_size >= 2 and dim >= 1, got {vocab_size}, {dim}")
        self.vocab_size, self.dim = vocab_size, dim
        self.weight = nn.Parameter(torch.zeros(vocab_size, dim))  # output vectors u_w, zero as in C

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """``log p(w | h)`` for every word, for ``h [..., d]``: ``[..., V]``."""
        return F.log_softmax(h @ self.weight.t(), dim=-1)

    def _picked(self, logp: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        nb, Q, _ = logp.shape
        return logp.gather(2, targets.unsqueeze(1).expand(nb, Q, targets.shape[1]))

    def loss(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``-log p(target | x)`` per pair: ``[nb, Q, g]`` (0 where ``A`` is 0)."""
        _check_block(X, A, targets, self.dim)
        return -self._picked(self.log_probs_all(X), targets) * A

    @torch.no_grad()
    def sgd_update(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor, lr: float, cap: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Dense step (``cap`` is ignored: every row is updated by every pair here): ``G = lr (sum_i A_i onehot(t_i) - (sum_i A_i) softmax)``; ``E = G U``; ``U += G^T X``."""
        _check_block(X, A, targets, self.dim)
        logp = self.log_probs_all(X)  # [nb, Q, V]
        loss = -(self._picked(logp, targets) * A).sum()
        G = logp.exp_().mul_(-A.sum(2, keepdim=True))
        G.scatter_add_(2, targets.unsqueeze(1).expand_as(A), A)
        G.mul_(lr)
        E = G @ self.weight
        self.weight.add_(G.reshape(-1, self.vocab_size).t() @ X.reshape(-1, self.dim))
        return E, loss


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
        self.register_buffer("lengths", tree.mask.sum(1))

    def slots(self, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Rows (path nodes), labels (branches) and slot weights (1 on the path), ``[..., J]``;
        ``J`` is the longest path among these targets (not the tree's depth) to save work."""
        J = int(self.lengths[targets].max()) if targets.numel() else 1
        return self.paths[targets][..., :J], self.codes[targets][..., :J], self.mask[targets][..., :J].float()

    def loss(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``-log p(target | x)`` per pair: ``[nb, Q, g]``."""
        _check_block(X, A, targets, self.dim)
        return logistic_block_loss(self.weight, X, A, *self.slots(targets), sparse=self.sparse_grad)

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """``log p(w | h)`` for every word, ``h [B, d]`` -> ``[B, V]`` (O(|V|) per row: for checks)."""
        s = h @ self.weight.t()  # [B, n_internal]
        z = s[:, self.paths] * (2 * self.codes - 1)  # [B, V, depth]
        return (F.logsigmoid(z) * self.mask).sum(-1)

    @torch.no_grad()
    def sgd_update(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor, lr: float, cap: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """One step along every target's path (label = branch code, masked beyond the path)."""
        _check_block(X, A, targets, self.dim)
        return logistic_block_update(self.weight, X, A, *self.slots(targets), lr, cap)


class NegativeSampling(nn.Module):
    """Negative sampling with ``negative`` noise words per centre from ``counts^power``.

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
        if not isinstance(negative, int) or isinstance(negative, bool) or negative < 1:
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

    def slots(self, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Rows ``[..., 1 + k]`` (the target, then ``k`` noise words), labels (1, 0, ..., 0) and
        slot weights (0 for a noise word equal to the target)."""
        neg = self.sampler.sample(*targets.shape, self.negative)
        rows = torch.cat([targets.unsqueeze(-1).to(neg.dtype), neg], dim=-1)
        labels = torch.zeros(rows.shape, device=rows.device)
        labels[..., 0] = 1
        weights = torch.ones_like(labels)
        weights[..., 1:] = (neg != targets.unsqueeze(-1)).float()
        return rows, labels, weights

    def loss(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor, slots=None) -> torch.Tensor:
        """``-[log sigma(u_O.x) + sum_k log sigma(-u_k.x)]`` per pair: ``[nb, Q, g]``.

        Args:
            slots: ``(rows, labels, weights)`` from :meth:`slots` (drawn here if ``None``).
        """
        _check_block(X, A, targets, self.dim)
        return logistic_block_loss(self.weight, X, A, *(slots or self.slots(targets)), sparse=self.sparse_grad)

    @torch.no_grad()
    def sgd_update(self, X: torch.Tensor, A: torch.Tensor, targets: torch.Tensor, lr: float, slots=None,
                   cap: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """One step on the targets and ``k`` fresh noise words per centre (or the given ``slots``)."""
        _check_block(X, A, targets, self.dim)
        return logistic_block_update(self.weight, X, A, *(slots or self.slots(targets)), lr, cap)
