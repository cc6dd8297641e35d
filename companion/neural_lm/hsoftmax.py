"""Hierarchical softmax, written out: the dot-product form of Mnih & Hinton (2009) and word2vec.

Each internal node ``v`` of a binary tree over the vocabulary holds a vector ``u_v`` (and a
bias ``beta_v``). Walking to word ``w`` takes the branch ``code`` at each node on its path, with

    P(branch 1 at v | h) = sigma(u_v . h + beta_v),   P(branch 0 at v | h) = sigma(-(u_v . h + beta_v)),

so that ``P(w | h) = prod_{(v, code) on path(w)} sigma((2 code - 1)(u_v . h + beta_v))``, where
``h`` is the feature vector the network computes once per context. The two branch
probabilities at every node sum to one, hence the leaves' probabilities sum to one without any
sum over the vocabulary: the loss for one token costs O(depth) = O(log |V|) dot products
instead of O(|V|).

Attribution. The tree-structured output layer is Morin & Bengio (2005)'s idea, but their model
is not this one: there every node ``v`` has a learned embedding ``N_v`` that is fed, with the
context's word vectors, *into the hidden layer*, and one output vector shared by all nodes
reads the hidden layer: in the paper's letters (its ``beta`` is that shared vector, not our node
bias) ``P(b = 1 | v, context) = sigm(alpha_v + beta' . tanh(c + W x + U N_v))``. The hidden
layer is therefore recomputed for every node on the path. Scoring every node against one
feature vector of the context by a dot product, as here, is the form of Mnih & Hinton's
hierarchical log-bilinear model (2009) and of word2vec (Mikolov et al. 2013).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .output import check_targets, log_sigmoid
from .tree import BinaryTree

__all__ = ["HierarchicalSoftmax"]


class HierarchicalSoftmax(nn.Module):
    """The tree-structured output layer; same interface as :class:`~.output.FullSoftmax`.

    Args:
        in_features: size of the feature vector ``h``.
        tree: a :class:`~.tree.BinaryTree` over the vocabulary (its tensors become buffers, so
            ``.to(device)`` moves them with the model).
        bias: give every node a bias ``beta_v``.
        fused: use ``F.logsigmoid`` in the training loss (equal to our :func:`~.output.log_sigmoid`,
            which ``fused=False`` uses).
        sparse: sparse gradients for the node vectors: a step then touches only the nodes on the
            batch's paths (as word2vec's SGD does), which needs an optimizer that accepts sparse
            gradients (``torch.optim.SGD`` without momentum, ``SparseAdam``, ``Adagrad``).
    """

    def __init__(self, in_features: int, tree: BinaryTree, *, bias: bool = True, fused: bool = True, sparse: bool = False):
        super().__init__()
        if not isinstance(tree, BinaryTree):
            raise TypeError(f"tree must be a BinaryTree (see companion.neural_lm.tree), got {type(tree).__name__}")
        if in_features < 1:
            raise ValueError(f"in_features must be >= 1, got {in_features}")
        self.in_features, self.vocab_size, self.fused, self.sparse = in_features, tree.n_leaves, fused, sparse
        self.n_internal = tree.n_internal
        # Small random node vectors; word2vec starts them at zero, which also works but makes
        # the first steps of a deep model send no gradient to h.
        self.node_vectors = nn.Parameter(torch.randn(tree.n_internal, in_features) * in_features**-0.5)
        self.node_bias = nn.Parameter(torch.zeros(tree.n_internal)) if bias else None
        self.register_buffer("paths", tree.paths.clone())
        self.register_buffer("signs", tree.codes.clone() * 2 - 1)  # code 1 -> +1, code 0 -> -1
        self.register_buffer("mask", tree.mask.clone())

    @property
    def tree(self) -> BinaryTree:
        """The tree, rebuilt from the buffers (on the layer's device)."""
        return BinaryTree(self.paths, (self.signs + 1) / 2, self.mask, self.mask.sum(1), self.n_internal)

    def _node_scores(self, h: torch.Tensor, nodes: torch.Tensor) -> torch.Tensor:
        """``u_v . h + beta_v`` for the nodes ``[N, D]`` of each row: ``[N, D]`` (gathered, O(N D d))."""
        # bmm of the gathered [N, D, d] node vectors with h: ~2x faster on CPU than einsum here
        s = torch.bmm(F.embedding(nodes, self.node_vectors, sparse=self.sparse), h.unsqueeze(2)).squeeze(2)
        if self.node_bias is not None:
            s = s + F.embedding(nodes, self.node_bias.unsqueeze(1)).squeeze(2)  # dense: only |V| - 1 numbers
        return s

    def _path_log_prob(self, h: torch.Tensor, targets: torch.Tensor, fused: bool) -> torch.Tensor:
        nodes, signs, mask = self.paths[targets], self.signs[targets], self.mask[targets]
        z = signs * self._node_scores(h, nodes)
        ls = F.logsigmoid(z) if fused else log_sigmoid(z)
        return (ls * mask).sum(dim=1)  # padded positions contribute log 1 = 0

    def forward(self, h: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """``log_prob(h, targets)`` if targets are given, else ``log_probs_all(h)``."""
        return self.log_probs_all(h) if targets is None else self.log_prob(h, targets)

    def log_prob(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``log P(target | h)`` summed over the target's path: ``[N]``, O(log |V|) per row."""
        self._check(h)
        check_targets(targets, self.vocab_size, h.shape[0])
        return self._path_log_prob(h, targets, fused=False)

    def loss(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the targets (the training objective)."""
        self._check(h)
        check_targets(targets, self.vocab_size, h.shape[0])
        return -self._path_log_prob(h, targets, fused=self.fused).mean()

    def log_probs_all(self, h: torch.Tensor) -> torch.Tensor:
        """The exact normalised ``log P(w | h)`` for every word: ``[N, V]``.

        Scores every internal node once (``[N, V-1]``), then sums each word's path: O(|V|) per
        row, for evaluation and sampling, not for training.
        """
        self._check(h)
        # rows in chunks so that the [rows, V, depth] intermediate stays under ~64 MB
        rows = max(1, (1 << 24) // max(1, self.paths.numel()))
        out = []
        for chunk in h.split(rows):
            scores = F.linear(chunk, self.node_vectors, self.node_bias)  # [n, V-1]
            z = scores[:, self.paths] * self.signs  # [n, V, D]
            out.append((log_sigmoid(z) * self.mask).sum(dim=-1))
        return torch.cat(out) if out else h.new_zeros(0, self.vocab_size)

    def _check(self, h: torch.Tensor) -> None:
        if h.dim() != 2 or h.shape[1] != self.in_features:
            raise ValueError(f"h must be [N, {self.in_features}], got shape {tuple(h.shape)}")
