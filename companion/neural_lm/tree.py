"""Binary trees over the vocabulary, for the hierarchical softmax.

A word is a leaf; predicting it means walking from the root to its leaf, making one binary
decision per internal node on the way (the tree of Morin & Bengio 2005, scored as in Mnih &
Hinton 2009 and word2vec: see :mod:`.hsoftmax`).
A :class:`BinaryTree` stores, for every word, the internal nodes on its root-to-leaf path and
the branch taken at each, as padded tensors so that a whole batch of paths can be gathered at
once (no Python loop per token).

Conventions used by every model in this package:

* Internal nodes are numbered ``0 .. V-2`` (``n_internal = V - 1``); ``tree.root`` is the id of
  the root (``V - 2`` for the Huffman tree, as in word2vec's C code; ``0`` for the others).
* ``codes[w, j]`` is the branch taken at node ``paths[w, j]``: ``1`` is the "positive" child,
  scored ``sigma(+u_n . h)``, and ``0`` the other, scored ``sigma(-u_n . h)``. So
  ``P(w | h) = prod_j sigma((2 * codes[w, j] - 1) * u_{paths[w, j]} . h)``.
  word2vec's C code writes the *same bits* for the Huffman tree but scores bit ``d`` with
  ``sigma((1 - 2d) u . h)``; the two are the same model with ``u -> -u``.
* Rows are padded with ``0`` beyond ``lengths[w]``; ``mask`` is ``True`` on real positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

__all__ = ["BinaryTree", "huffman_tree", "balanced_tree", "clustered_tree"]


@dataclass
class BinaryTree:
    """Root-to-leaf paths of a full binary tree whose leaves are the ``V`` words.

    Attributes:
        paths: ``[V, max_depth]`` internal-node ids from the root, padded with 0.
        codes: ``[V, max_depth]`` branch taken at each node (1 = positive child), padded 0.
        mask: ``[V, max_depth]`` True on real path positions.
        lengths: ``[V]`` path lengths (the number of decisions for each word).
        n_internal: number of internal nodes, ``V - 1``.
    """

    paths: torch.Tensor
    codes: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    n_internal: int

    @property
    def n_leaves(self) -> int:
        """The vocabulary size ``V``."""
        return int(self.paths.shape[0])

    @property
    def max_depth(self) -> int:
        """The longest path (number of decisions)."""
        return int(self.paths.shape[1])

    @property
    def root(self) -> int:
        """Id of the root node (the first node of every path)."""
        return int(self.paths[0, 0])

    @property
    def device(self) -> torch.device:
        return self.paths.device

    def to(self, device: str | torch.device) -> "BinaryTree":
        """A copy of the tree with every tensor on ``device``."""
        return BinaryTree(
            paths=self.paths.to(device),
            codes=self.codes.to(device),
            mask=self.mask.to(device),
            lengths=self.lengths.to(device),
            n_internal=self.n_internal,
        )

    def code_string(self, word: int) -> str:
        """The word's code as a string of 0/1 (root first), e.g. ``'0110'``."""
        if not 0 <= int(word) < self.n_leaves:
            raise IndexError(f"word id {word} is outside the tree's 0..{self.n_leaves - 1}")
        n = int(self.lengths[word])
        return "".join(str(int(c)) for c in self.codes[word, :n].tolist())

    def expected_length(self, counts: Sequence[float]) -> float:
        """Average number of decisions per token when words occur with these counts."""
        c = torch.as_tensor(np.asarray(counts, dtype=np.float64))
        if c.shape != (self.n_leaves,):
            raise ValueError(f"counts must have one entry per leaf ({self.n_leaves}), got shape {tuple(c.shape)}")
        if float(c.sum()) <= 0:
            raise ValueError("counts must sum to a positive number")
        return float((c * self.lengths.double().cpu()).sum() / c.sum())


def _from_children(child0: np.ndarray, child1: np.ndarray, root: int, n_leaves: int) -> BinaryTree:
    """Build a :class:`BinaryTree` from child arrays.

    Node numbering here: leaves are ``0..V-1`` (the word ids), internal node ``i`` is ``V + i``.
    ``child0[i]``/``child1[i]`` are the children of internal node ``i`` reached with code 0/1.
    """
    V = n_leaves
    n_int = V - 1
    depth = np.zeros(2 * V - 1, dtype=np.int64)
    parent = np.full(2 * V - 1, -1, dtype=np.int64)
    bit = np.zeros(2 * V - 1, dtype=np.int64)
    for i in range(n_int):
        for c, b in ((child0[i], 0), (child1[i], 1)):
            if parent[c] != -1:
                raise ValueError(f"node {c} has two parents; the child arrays do not form a tree")
            parent[c], bit[c] = V + i, b
    # Top-down so that each node's depth is known before its children's: breadth-first order.
    order = [V + root]
    for node in order:
        if node >= V:
            i = node - V
            for c in (child0[i], child1[i]):
                depth[c] = depth[node] + 1
                order.append(c)
    if len(order) != 2 * V - 1:
        raise ValueError("the child arrays do not connect every node to the root")
    max_depth = int(depth[:V].max())
    paths = np.zeros((2 * V - 1, max(max_depth, 1)), dtype=np.int64)
    codes = np.zeros_like(paths)
    for node in order[1:]:  # a child's path = its parent's path + (parent, bit)
        p = parent[node]
        d = depth[p]
        paths[node, :d] = paths[p, :d]
        codes[node, :d] = codes[p, :d]
        paths[node, d] = p - V
        codes[node, d] = bit[node]
    lengths = depth[:V]
    mask = np.arange(paths.shape[1])[None, :] < lengths[:, None]
    return BinaryTree(
        paths=torch.from_numpy(paths[:V].copy()),
        codes=torch.from_numpy(codes[:V].astype(np.float32)),
        mask=torch.from_numpy(mask),
        lengths=torch.from_numpy(lengths.copy()),
        n_internal=n_int,
    )


def _check_n(n: int, what: str) -> None:
    if n < 2:
        raise ValueError(f"a tree needs at least 2 leaves (words), got {n} {what}")


def huffman_tree(counts: Sequence[int]) -> BinaryTree:
    """word2vec's Huffman tree: frequent words get short codes.

    Follows ``CreateBinaryTree`` of word2vec.c: words are sorted by decreasing count (ties keep
    id order), then the two lightest nodes are merged ``V - 1`` times with two queues (the
    sorted leaves and the internal nodes, which are created in increasing weight). Tie-break as
    in word2vec: on equal weights the internal node is taken first, and among leaves the one
    later in the sorted order. The second node of each merge gets code 1; internal nodes are
    numbered in creation order, so the root is ``V - 2`` and, for counts already sorted in
    decreasing order, ``paths``/``codes`` equal word2vec's ``point``/``code`` arrays.

    Args:
        counts: one non-negative count per word id (``len(counts) >= 2``).

    Raises:
        ValueError: fewer than 2 words, negative or non-finite counts.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1:
        raise ValueError(f"counts must be a 1-D sequence of word counts, got shape {c.shape}")
    _check_n(len(c), "counts")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be finite and non-negative")
    V = len(c)
    order = np.argsort(-c, kind="stable")  # sorted position -> word id
    weight = np.empty(2 * V - 1)
    weight[:V] = c[order]
    weight[V:] = np.inf
    # Nodes in "sorted space": 0..V-1 sorted leaves, V+i internal node i.
    child0 = np.empty(V - 1, dtype=np.int64)
    child1 = np.empty(V - 1, dtype=np.int64)
    pos1, pos2 = V - 1, V
    for a in range(V - 1):
        picks = []
        for _ in range(2):
            if pos1 >= 0 and weight[pos1] < weight[pos2]:
                picks.append(pos1)
                pos1 -= 1
            else:
                picks.append(pos2)
                pos2 += 1
        weight[V + a] = weight[picks[0]] + weight[picks[1]]
        child0[a], child1[a] = picks
    # Translate sorted leaf positions back to word ids.
    to_word = np.concatenate([order, np.arange(V, 2 * V - 1)])
    return _from_children(to_word[child0], to_word[child1], root=V - 2, n_leaves=V)


def balanced_tree(n_leaves: int) -> BinaryTree:
    """A complete binary tree in heap order: depth ``ceil(log2 V)`` for every word (or one less).

    Nodes are numbered as in a binary heap (node ``k`` has children ``2k+1`` (code 0) and
    ``2k+2`` (code 1)); nodes ``0..V-2`` are internal and word ``w`` is node ``V-1+w``.
    It ignores frequencies: the reference point for the Huffman tree.
    """
    if not isinstance(n_leaves, (int, np.integer)) or isinstance(n_leaves, bool):
        raise TypeError(f"n_leaves must be an int, got {type(n_leaves).__name__}")
    V = int(n_leaves)
    _check_n(V, "leaves")

    def node(k: int) -> int:  # heap node -> _from_children numbering
        return V + k if k < V - 1 else k - (V - 1)

    child0 = np.array([node(2 * k + 1) for k in range(V - 1)], dtype=np.int64)
    child1 = np.array([node(2 * k + 2) for k in range(V - 1)], dtype=np.int64)
    return _from_children(child0, child1, root=0, n_leaves=V)


def clustered_tree(
    vectors: torch.Tensor | np.ndarray,
    *,
    n_iter: int = 10,
) -> BinaryTree:
    """A tree that puts similar words under the same subtree (in the spirit of Mnih & Hinton 2008).

    Recursive top-down 2-means on the word vectors (e.g. embeddings learned by a first model):
    each set of words is split in two by k-means with k=2, started from the two ends of the
    set's principal direction; a degenerate split falls back to cutting the projection at its
    median. Internal nodes are numbered in pre-order (root = 0).

    Args:
        vectors: ``[V, d]`` one vector per word id.
        n_iter: Lloyd iterations per split (the start is deterministic, so no seed is needed).

    Raises:
        ValueError: fewer than 2 words, non-2-D input or non-finite values.
    """
    X = vectors.detach().cpu().double().numpy() if isinstance(vectors, torch.Tensor) else np.asarray(vectors, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"vectors must be a [V, d] matrix, got shape {X.shape}")
    _check_n(X.shape[0], "vectors")
    if not np.all(np.isfinite(X)):
        raise ValueError("vectors contain NaN or inf")
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    V = X.shape[0]
    child0 = np.empty(V - 1, dtype=np.int64)
    child1 = np.empty(V - 1, dtype=np.int64)
    next_id = [0]

    def split(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Y = X[ids] - X[ids].mean(0)
        # principal direction via SVD; deterministic sign
        _, _, vt = np.linalg.svd(Y, full_matrices=False)
        d = vt[0] * (1.0 if vt[0][np.argmax(np.abs(vt[0]))] >= 0 else -1.0)
        proj = Y @ d
        left = proj <= np.median(proj)
        for _ in range(n_iter):
            if left.all() or not left.any():
                break
            c0, c1 = Y[left].mean(0), Y[~left].mean(0)
            new = ((Y - c0) ** 2).sum(1) <= ((Y - c1) ** 2).sum(1)
            if (new == left).all():
                break
            left = new
        if left.all() or not left.any():  # identical vectors: cut the sorted order in half
            rank = np.argsort(proj, kind="stable")
            left = np.zeros(len(ids), dtype=bool)
            left[rank[: len(ids) // 2]] = True
        return ids[left], ids[~left]

    def build(ids: np.ndarray) -> int:
        """Return the node number (``_from_children`` numbering) of the subtree over ``ids``."""
        if len(ids) == 1:
            return int(ids[0])
        me = next_id[0]
        next_id[0] += 1
        a, b = split(ids)
        child0[me] = build(a)
        child1[me] = build(b)
        return V + me

    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * V + 100))
    try:
        build(np.arange(V))
    finally:
        sys.setrecursionlimit(old)
    return _from_children(child0, child1, root=0, n_leaves=V)
