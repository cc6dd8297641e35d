"""The structural probe (Hewitt & Manning 2019): is there a linear map under which squared
distances between word vectors are distances in the parse tree?

``d_B(h_i, h_j)^2 = (B (h_i - h_j))^T (B (h_i - h_j))`` is trained to match ``d_T(i, j)``, the
number of edges between words ``i`` and ``j`` in the sentence's dependency tree. Two scores:

* **UUAS** -- the minimum spanning tree of the predicted distances, compared with the gold tree
  as undirected edges (punctuation left out, as in the paper);
* **DSpr.** -- the Spearman correlation between each word's predicted and gold distances to the
  other words, averaged per sentence length, then over lengths 5-50.

Our gold trees: the Penn Treebank sample is constituency-parsed, so dependencies come from
Collins's (1999) head rules (:data:`HEAD_RULES`, as in Stanford's ``CollinsHeadFinder``): the
head of a phrase is found by scanning its children for categories in priority order. These
heads are *function-word* heads in places (the modal heads the VP, the preposition the PP),
unlike the Stanford dependencies the paper used, so our numbers are not the paper's.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..data.treebank import Tree

# label -> (direction, categories by priority); "left" scans children left to right per category
HEAD_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": ("left", ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS", "DT", "FW",
                      "RBR", "RBS", "SBAR", "RB")),
    "ADVP": ("right", ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN")),
    "CONJP": ("right", ("CC", "RB", "IN")),
    "FRAG": ("right", ()),
    "INTJ": ("left", ()),
    "LST": ("right", ("LS", ":")),
    "NAC": ("left", ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ", "JJS",
                     "JJR", "ADJP", "FW")),
    "PP": ("right", ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": ("left", ()),
    "PRT": ("right", ("RP",)),
    "QP": ("left", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "RRC": ("right", ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": ("left", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": ("left", ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG")),
    "SBARQ": ("left", ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": ("right", ()),
    "VP": ("left", ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),
    "WHADJP": ("left", ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": ("right", ("CC", "WRB")),
    "WHNP": ("left", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": ("right", ("IN", "TO", "FW")),
    "X": ("right", ()),
}
PUNCT_TAGS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$"})


def _base(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``; ``-NONE-``, ``-LRB-`` stay as they are."""
    if label.startswith("-"):
        return label
    return label.split("-")[0].split("=")[0]


def _np_head(labels: list[str]) -> int:
    """Collins's special rule for noun phrases."""
    if labels[-1] == "POS":
        return len(labels) - 1
    for i in range(len(labels) - 1, -1, -1):
        if labels[i] in ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR"):
            return i
    for i, lab in enumerate(labels):
        if lab == "NP":
            return i
    for group in (("$", "ADJP", "PRN"), ("CD",), ("JJ", "JJS", "RB", "QP")):
        for i in range(len(labels) - 1, -1, -1):
            if labels[i] in group:
                return i
    return len(labels) - 1


def head_child(label: str, child_labels: Sequence[str]) -> int:
    """Index of the head among ``child_labels`` of a phrase labelled ``label`` (Collins's rules)."""
    labels = [_base(c) for c in child_labels]
    if not labels:
        raise ValueError(f"a {label} phrase with no children has no head")
    base = _base(label)
    if base in ("NP", "NX", "NML"):
        return _np_head(labels)
    direction, priority = HEAD_RULES.get(base, ("left", ()))
    order = list(range(len(labels))) if direction == "left" else list(range(len(labels) - 1, -1, -1))
    for cat in priority:
        for i in order:
            if labels[i] == cat:
                return i
    return order[0]


def dependencies(tree: Tree) -> list[int]:
    """Each kept token's head (index into the tokens of ``tree.tagged()``, ``-1`` for the root),
    by percolating lexical heads up the constituency tree. Trace (``-NONE-``) leaves and phrases
    that cover only traces are dropped first."""
    heads: dict[int, int] = {}
    counter = [0]

    def walk(t: Tree) -> int | None:  # returns the lexical head's token index (None: only traces)
        if t.word is not None:
            if t.label == "-NONE-":
                return None
            counter[0] += 1
            return counter[0] - 1
        kids = [(c, walk(c)) for c in t.children]
        kids = [(c, h) for c, h in kids if h is not None]
        if not kids:
            return None
        k = head_child(t.label or "ROOT", [c.label for c, _ in kids])
        for j, (_, h) in enumerate(kids):
            if j != k:
                heads[h] = kids[k][1]
        return kids[k][1]

    root = walk(tree)
    if root is None:
        raise ValueError("the tree has no word that is not a trace")
    heads[root] = -1
    return [heads[i] for i in range(counter[0])]


def tree_distances(heads: Sequence[int]) -> np.ndarray:
    """``[n, n]`` path lengths (edges) between words of the tree given by ``heads`` (-1 = root)."""
    n = len(heads)
    adj: dict[int, list[int]] = defaultdict(list)
    roots = [i for i, h in enumerate(heads) if h == -1]
    if len(roots) != 1:
        raise ValueError(f"a tree needs exactly one root (head -1), got {len(roots)}")
    for i, h in enumerate(heads):
        if h != -1:
            if not 0 <= h < n or h == i:
                raise ValueError(f"word {i} has head {h}, not another word of the sentence (0..{n - 1})")
            adj[i].append(h)
            adj[h].append(i)
    out = np.full((n, n), -1, dtype=np.int64)
    for s in range(n):
        out[s, s] = 0
        q = deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if out[s, v] < 0:
                    out[s, v] = out[s, u] + 1
                    q.append(v)
    if (out < 0).any():
        raise ValueError("heads do not form a connected tree (a cycle?)")
    return out


def tree_depths(heads: Sequence[int]) -> np.ndarray:
    """Each word's depth in the dependency tree (the root is 0)."""
    return tree_distances(heads)[list(heads).index(-1)]


def min_spanning_tree(dist: np.ndarray) -> list[tuple[int, int]]:
    """Prim's algorithm on a dense symmetric distance matrix: the ``n - 1`` edges ``(i, j)``,
    ``i < j``, of a minimum spanning tree (ties broken by the lowest index)."""
    d = np.asarray(dist, dtype=np.float64)
    n = len(d)
    if d.shape != (n, n):
        raise ValueError(f"dist must be square, got shape {d.shape}")
    if n < 2:
        return []
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best, parent = d[0].copy(), np.zeros(n, dtype=np.int64)
    edges = []
    for _ in range(n - 1):
        cand = np.where(in_tree, np.inf, best)
        j = int(np.argmin(cand))
        edges.append((min(j, int(parent[j])), max(j, int(parent[j]))))
        in_tree[j] = True
        closer = d[j] < best
        best = np.where(closer, d[j], best)
        parent = np.where(closer, j, parent)
    return edges


def uuas(pred_dist: np.ndarray, heads: Sequence[int], keep: Sequence[bool] | None = None) -> tuple[int, int]:
    """``(correct, total)`` undirected attachments: gold edges between kept words, and how many of
    them are in the minimum spanning tree of ``pred_dist`` over the kept words."""
    n = len(heads)
    if np.shape(pred_dist) != (n, n):
        raise ValueError(f"pred_dist must be [n, n] for the {n} words of heads, got shape {np.shape(pred_dist)}")
    if keep is not None and len(keep) != n:
        raise ValueError(f"keep must hold one flag per word ({n}), got {len(keep)}")
    if any(not -1 <= h < n for h in heads):
        raise ValueError(f"heads must be word indices in [0, {n}) or -1 (the root), got {list(heads)}")
    keep_idx = [i for i in range(n) if keep is None or keep[i]]
    gold = {(min(i, h), max(i, h)) for i, h in enumerate(heads)
            if h != -1 and i in set(keep_idx) and h in set(keep_idx)}
    sub = np.asarray(pred_dist)[np.ix_(keep_idx, keep_idx)]
    pred = {(keep_idx[a], keep_idx[b]) for a, b in min_spanning_tree(sub)}
    return len(pred & gold), len(gold)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def distance_spearman(preds: Sequence[np.ndarray], golds: Sequence[np.ndarray], lengths: tuple[int, int] = (5, 50)) -> float:
    """Hewitt & Manning's DSpr.: per word, Spearman of predicted vs gold distances to all words;
    averaged within each sentence length, then over the lengths in ``lengths`` (inclusive)."""
    by_len: dict[int, list[float]] = defaultdict(list)
    for p, g in zip(preds, golds):
        n = len(g)
        if lengths[0] <= n <= lengths[1]:
            by_len[n] += [_spearman(p[i], g[i]) for i in range(n)]
    means = [np.nanmean(v) for v in by_len.values() if not np.all(np.isnan(v))]
    if not means:
        raise ValueError(f"no sentence of length {lengths[0]}..{lengths[1]} to score")
    return float(np.mean(means))


# ------------------------------------------------------------------------------------- the probe


class StructuralProbe(nn.Module):
    """``B`` of shape ``[rank, d]``; :meth:`forward` returns squared distances ``[B, T, T]``."""

    def __init__(self, d: int, rank: int = 64, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.B = nn.Parameter(torch.empty(rank, d).uniform_(-0.05, 0.05, generator=g))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        t = h @ self.B.T
        # ||t_i - t_j||^2 = |t_i|^2 + |t_j|^2 - 2 t_i . t_j: one matmul instead of a [B, T, T, rank]
        # tensor of differences (what :meth:`forward_plain` builds; a test checks they agree)
        sq = (t * t).sum(-1)
        return (sq[:, :, None] + sq[:, None, :] - 2 * t @ t.transpose(1, 2)).clamp_min(0)

    def forward_plain(self, h: torch.Tensor) -> torch.Tensor:
        """The definition, word pair by word pair: ``sum_k (B (h_i - h_j))_k^2``."""
        t = h @ self.B.T
        diff = t[:, :, None, :] - t[:, None, :, :]
        return (diff ** 2).sum(-1)


def _pad(xs: Sequence[np.ndarray], ds: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    T, d = max(len(x) for x in xs), xs[0].shape[1]
    h = torch.zeros(len(xs), T, d)
    dist = torch.zeros(len(xs), T, T)
    mask = torch.zeros(len(xs), T, T)
    for i, (x, g) in enumerate(zip(xs, ds)):
        n = len(x)
        h[i, :n] = torch.as_tensor(x, dtype=torch.float32)
        dist[i, :n, :n] = torch.as_tensor(g, dtype=torch.float32)
        mask[i, :n, :n] = 1.0
    return h, dist, mask


@dataclass
class StructuralConfig:
    rank: int = 64
    epochs: int = 20
    lr: float = 1e-3
    batch_size: int = 20
    seed: int = 0
    device: str = "cpu"


def fit_structural(train_x: Sequence[np.ndarray], train_d: Sequence[np.ndarray],
                   config: StructuralConfig | None = None) -> StructuralProbe:
    """Train ``B`` on sentences (word vectors ``[n, d]``, gold distances ``[n, n]``) with the
    paper's loss: ``sum_ij |d_B^2 - d_T| / n^2`` per sentence, averaged over the batch."""
    config = config or StructuralConfig()
    if len(train_x) != len(train_d) or not train_x:
        raise ValueError(f"need as many distance matrices as sentences (>0): {len(train_x)} vs {len(train_d)}")
    for x, g in zip(train_x, train_d):
        if g.shape != (len(x), len(x)):
            raise ValueError(f"a sentence of {len(x)} words has a distance matrix of shape {g.shape}")
    device = torch.device(config.device)
    mean = np.concatenate(train_x).mean(0)
    probe = StructuralProbe(train_x[0].shape[1], config.rank, config.seed).to(device)
    probe.mean = torch.as_tensor(mean, dtype=torch.float32)  # centre, stored with the probe
    opt = torch.optim.Adam(probe.parameters(), lr=config.lr)
    gen = torch.Generator().manual_seed(config.seed)
    for _ in range(config.epochs):
        for idx in torch.randperm(len(train_x), generator=gen).split(config.batch_size):
            h, dist, mask = _pad([train_x[i] - mean for i in idx], [train_d[i] for i in idx])
            h, dist, mask = h.to(device), dist.to(device), mask.to(device)
            n2 = mask.sum((1, 2))
            loss = ((probe(h) - dist).abs() * mask).sum((1, 2)).div(n2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return probe


@torch.no_grad()
def predict_distances(probe: StructuralProbe, xs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Predicted squared distances ``[n, n]`` per sentence."""
    dev = probe.B.device
    return [probe(torch.as_tensor(x - probe.mean.numpy(), dtype=torch.float32, device=dev)[None])[0].cpu().numpy()
            for x in xs]


def evaluate_structural(preds: Sequence[np.ndarray], heads: Sequence[Sequence[int]],
                        keeps: Sequence[Sequence[bool]] | None = None) -> dict[str, float]:
    """``{"uuas": ..., "dspr": ...}`` over sentences (UUAS pooled over all gold edges)."""
    right = total = 0
    for i, (p, h) in enumerate(zip(preds, heads)):
        r, t = uuas(p, h, None if keeps is None else keeps[i])
        right, total = right + r, total + t
    golds = [tree_distances(h) for h in heads]
    return {"uuas": right / max(total, 1), "dspr": distance_spearman(preds, golds)}


def linear_baseline(lengths: Sequence[int]) -> list[np.ndarray]:
    """Distances ``|i - j|``: the chain each word attached to its neighbour (the paper's baseline)."""
    return [np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(np.float64) for n in lengths]
