"""Brown clustering (Brown, deSouza, Mercer, Della Pietra & Lai 1992): word classes that keep as
much of the bigram statistics as possible, and bit strings that place every word in a tree.

The class-based bigram model ``p(w | v) = p(c(w) | c(v)) p(w | c(w))`` has a training
log-likelihood of ``N * (I(C_left; C_right) - H(W))``: only the *average mutual information*
(AMI) of adjacent classes depends on the clustering,

    AMI = sum_{c, d} p(c, d) log p(c, d) / (p_l(c) p_r(d)),

with ``p(c, d)`` the share of bigram tokens whose left word is in ``c`` and right word in
``d``, and ``p_l``, ``p_r`` its marginals. Merging two classes can only lose AMI; the
agglomerative algorithm merges, again and again, the pair that loses the least.

We run the standard *windowed* variant (Brown et al. section 3; Liang 2005's ``wcluster``):
the ``C`` most frequent words start as ``C`` clusters; each further word (by frequency) enters as
a cluster of its own and the least-loss pair among the ``C + 1`` is merged. The losses of all
pairs are kept in a ``(C+1) x (C+1)`` table and *updated* after each addition and merge in
``O(C^2)`` (only terms that touch the changed clusters move), so a word costs ``O(C^2)``, not
``O(C^3)``. Words beyond the frequent slice (``n_words``) are then put, one at a time, into the
existing cluster that loses the least AMI (no new clusters). Finally the ``C`` clusters are
merged down to one; that last phase's merge tree gives each cluster a bit string
(``0`` = first child, ``1`` = second), and every word takes its cluster's string, as in Liang's
output. Marginals are taken over the whole corpus, so adding a word never changes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from .ngram import NGramCounts

_TINY = 1e-300


@dataclass
class BrownConfig:
    """Sizes of one run.

    Attributes:
        n_clusters: C, the number of classes (the window of active clusters).
        n_words: the frequent slice clustered by the merge algorithm (``None``: every word);
            the rest are assigned to the existing classes.
    """

    n_clusters: int = 100
    n_words: int | None = 1000


@dataclass
class BrownClusters:
    """The result of :func:`brown_clusters`.

    Attributes:
        words: the clustered words, most frequent first (the order they entered).
        cluster: class index (0..C-1) of every vocabulary id (-1: never clustered, e.g. unseen).
        paths: bit string of every class (``paths[k]``): a prefix code, root = ``""``.
        merges: every merge in order: ``(phase, node_a, node_b, loss)``; nodes ``0..len(words)-1``
            are the words (in ``words`` order), node ``len(words) + i`` is the result of merge i.
            Phase 1: the windowed merges; 2: the final merges of the C classes (the tree).
        class_node: the tree node of each class at the start of phase 2.
        ami: AMI (nats) after each word of the frequent slice entered and was merged.
        itos: the vocabulary (id -> word).
    """

    words: list[str]
    cluster: np.ndarray
    paths: list[str]
    merges: list[tuple[int, int, int, float]]
    class_node: list[int]
    ami: list[float]
    itos: list[str]
    _stoi: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._stoi = {w: i for i, w in enumerate(self.itos)}

    @property
    def n_clusters(self) -> int:
        return len(self.paths)

    def path(self, word: str) -> str:
        """The bit string of ``word``'s class."""
        i = self._stoi.get(word)
        if i is None or self.cluster[i] < 0:
            raise KeyError(f"{word!r} was not clustered; words come from the counts' vocabulary")
        return self.paths[int(self.cluster[i])]

    def members(self, k: int, counts: np.ndarray | None = None, top: int | None = None) -> list[str]:
        """The words of class ``k`` (most frequent first when ``counts`` per id is given)."""
        ids = np.flatnonzero(self.cluster == k)
        if counts is not None:
            ids = ids[np.argsort(-counts[ids], kind="stable")]
        return [self.itos[i] for i in ids[:top]]

    def prefix_groups(self, length: int) -> dict[str, list[int]]:
        """Classes grouped by the first ``length`` bits of their paths (word features)."""
        groups: dict[str, list[int]] = {}
        for k, p in enumerate(self.paths):
            groups.setdefault(p[:length], []).append(k)
        return groups


# ---------------------------------------------------------------------------- the statistics
def bigram_matrix(counts: NGramCounts | Sequence[Sequence[str]]) -> tuple[sp.csr_matrix, NGramCounts]:
    """Word bigram counts ``B[v, w]`` (``<s>`` as a left word, ``</s>`` as a right word)."""
    if not isinstance(counts, NGramCounts):
        counts = NGramCounts(counts, 2)
    if counts.order < 2:
        raise ValueError("Brown clustering needs bigram counts: pass NGramCounts of order >= 2")
    t = counts.table(2)
    v = len(counts.vocab)
    b = sp.csr_matrix((t.counts.astype(np.float64), (t.context, t.word)), shape=(v, v))
    return b, counts


def _log(a: np.ndarray | float) -> np.ndarray:
    """``log`` that maps 0 to a large negative number (``<s>`` is never a right word, ``</s>``
    never a left one; their zero marginals only ever multiply zero counts)."""
    return np.log(np.maximum(a, _TINY))


def _f(p: np.ndarray, a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """``p log(p / (a b))``, 0 where ``p = 0``."""
    return xlogy(p, p) - p * (_log(a) + _log(b))


class _State:
    """Active clusters in ``S`` slots: joint probabilities, marginals, the AMI terms and the
    loss table ``L[i, j]`` (AMI lost by merging slots i and j)."""

    def __init__(self, b: sp.csr_matrix, n_slots: int) -> None:
        self.b, self.bt = b, sp.csr_matrix(b.T)
        self.n = b.sum()
        self.left = np.asarray(b.sum(axis=1)).ravel() / self.n
        self.right = np.asarray(b.sum(axis=0)).ravel() / self.n
        s = n_slots
        self.P = np.zeros((s, s))
        self.pl = np.ones(s)
        self.pr = np.ones(s)
        self.q = np.zeros((s, s))
        self.L = np.zeros((s, s))
        self.LPL = np.zeros((s, s))
        self.LPR = np.zeros((s, s))
        self.active = np.zeros(s, dtype=bool)
        self.node = np.full(s, -1, dtype=np.int64)
        self.slot_of = np.full(b.shape[0], -1, dtype=np.int64)

    # -- terms
    def _refresh_q(self, i: int) -> None:
        self.q[i, :] = _f(self.P[i, :], self.pl[i], self.pr)
        self.q[:, i] = _f(self.P[:, i], self.pl, self.pr[i])

    def _refresh_marginals(self, i: int) -> None:
        """Logs of pairwise marginal sums ``log(p(i) + p(j))`` (cached: the losses need them)."""
        self.LPL[i, :] = self.LPL[:, i] = _log(self.pl[i] + self.pl)
        self.LPR[i, :] = self.LPR[:, i] = _log(self.pr[i] + self.pr)

    def ami(self) -> float:
        return float(self.q.sum())

    def _g(self, k: int) -> np.ndarray:
        """For every pair (i, j): the AMI terms touching cluster k, before minus after merging i, j."""
        u = self.q[:, k] + self.q[k, :]
        x = self.P[:, k][:, None] + self.P[:, k][None, :]  # (i+j) -> k
        y = self.P[k, :][:, None] + self.P[k, :][None, :]  # k -> (i+j)
        after = (xlogy(x, x) - x * (self.LPL + _log(self.pr[k]))
                 + xlogy(y, y) - y * (self.LPR + _log(self.pl[k])))
        return u[:, None] + u[None, :] - after

    def row_loss(self, i: int) -> np.ndarray:
        """``L[i, j]`` for every slot j, from scratch.

        Only the clusters k that touch i (``P[i, k] > 0`` or ``P[k, i] > 0``) need new log
        terms: for the others, merging j with i only rescales j's marginal, a closed form. So a
        rare word costs O(S * its neighbour clusters) + O(S^2) sums, not O(S^2) logs."""
        P, q = self.P, self.q
        pl, pr = self.pl, self.pr
        s_all = q.sum(axis=1) + q.sum(axis=0) - np.diag(q)
        before = s_all[i] + s_all - q[i, :] - q[:, i]
        lsl, lsr = _log(pl[i] + pl), _log(pr[i] + pr)  # log marginals of the merged i+j
        dl, dr = _log(pl) - lsl, _log(pr) - lsr
        # (i+j) -> k for k != i, j: closed form where P[i, k] = 0, logs where P[i, k] > 0
        sq = q.sum(axis=1) - q[:, i]
        sp_ = P.sum(axis=1) - P[:, i]
        a_r = sq + dl * sp_
        nz = np.flatnonzero(P[i, :] > 0)
        nz = nz[nz != i]
        if len(nz):
            x = P[i, nz][None, :] + P[:, nz]
            corr = xlogy(x, x) - x * (lsl[:, None] + _log(pr[nz])[None, :]) - q[:, nz] - dl[:, None] * P[:, nz]
            a_r += corr.sum(axis=1)
        a_r -= _f(P[i, :] + np.diag(P), np.exp(lsl), pr)  # drop k = j
        # k -> (i+j), the same way over columns
        sq = q.sum(axis=0) - q[i, :]
        sp_ = P.sum(axis=0) - P[i, :]
        a_c = sq + dr * sp_
        nz = np.flatnonzero(P[:, i] > 0)
        nz = nz[nz != i]
        if len(nz):
            y = P[nz, i][None, :] + P[nz, :].T
            corr = xlogy(y, y) - y * (_log(pl[nz])[None, :] + lsr[:, None]) - q[nz, :].T - dr[:, None] * P[nz, :].T
            a_c += corr.sum(axis=1)
        a_c -= _f(P[:, i] + np.diag(P), pl, np.exp(lsr))
        self_term = _f(P[i, i] + P[i, :] + P[:, i] + np.diag(P), np.exp(lsl), np.exp(lsr))
        loss = before - a_r - a_c - self_term
        loss[i] = np.inf
        return loss

    # -- changes
    def add_word(self, w: int, slot: int, node: int) -> None:
        self.slot_of[w] = slot
        self.active[slot] = True
        self.node[slot] = node
        for src, dst_row in ((self.b, True), (self.bt, False)):
            lo, hi = src.indptr[w], src.indptr[w + 1]
            cols, vals = src.indices[lo:hi], src.data[lo:hi]
            slots = self.slot_of[cols]
            hit = slots >= 0
            agg = np.bincount(slots[hit], weights=vals[hit], minlength=len(self.pl)) / self.n
            if dst_row:
                self.P[slot, :] = agg
            else:
                self.P[:, slot] = agg
        self.pl[slot], self.pr[slot] = self.left[w], self.right[w]
        self._refresh_q(slot)
        self._refresh_marginals(slot)

    def merge(self, a: int, b: int, node: int) -> None:
        self.P[a, :] += self.P[b, :]
        self.P[:, a] += self.P[:, b]
        self.P[b, :] = 0.0
        self.P[:, b] = 0.0
        self.pl[a] += self.pl[b]
        self.pr[a] += self.pr[b]
        self.pl[b] = self.pr[b] = 1.0
        self.q[b, :] = 0.0
        self.q[:, b] = 0.0
        self._refresh_q(a)
        self._refresh_marginals(a)
        self._refresh_marginals(b)
        self.active[b] = False
        self.node[a], self.node[b] = node, -1
        self.slot_of[self.slot_of == b] = a

    def set_row(self, i: int) -> None:
        row = self.row_loss(i)
        self.L[i, :] = row
        self.L[:, i] = row

    def full_losses(self) -> None:
        for i in np.flatnonzero(self.active):
            self.set_row(int(i))

    def best_pair(self) -> tuple[int, int, float]:
        mask = self.active[:, None] & self.active[None, :]
        np.fill_diagonal(mask, False)
        lm = np.where(mask, self.L, np.inf)
        flat = int(np.argmin(lm))
        i, j = divmod(flat, lm.shape[1])
        return min(i, j), max(i, j), float(lm[i, j])


def _frequency_order(b: sp.csr_matrix) -> np.ndarray:
    """Word ids by how often they occur (as left or right word), most frequent first."""
    occ = np.maximum(np.asarray(b.sum(axis=1)).ravel(), np.asarray(b.sum(axis=0)).ravel())
    ids = np.flatnonzero(occ > 0)
    return ids[np.argsort(-occ[ids], kind="stable")]


def brown_clusters(counts: NGramCounts | Sequence[Sequence[str]], config: BrownConfig | None = None,
                   *, check_every: int = 0) -> BrownClusters:
    """Cluster the words of ``counts`` (bigram statistics) into ``config.n_clusters`` classes.

    Args:
        counts: :class:`NGramCounts` of order >= 2, or sentences.
        config: sizes (see :class:`BrownConfig`).
        check_every: test aid: every this many steps, check the updated loss table against one
            computed from scratch (0: never).
    """
    cfg = config or BrownConfig()
    b, counts = bigram_matrix(counts)
    order = _frequency_order(b)
    c = cfg.n_clusters
    if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c < len(order):
        raise ValueError(f"n_clusters must be an int in 1..{len(order) - 1} (the corpus has {len(order)} "
                         f"word types), got {c!r}")
    m = len(order) if cfg.n_words is None else cfg.n_words
    if isinstance(m, bool) or not isinstance(m, int) or m < c:
        raise ValueError(f"n_words must be an int >= n_clusters ({c}) or None, got {cfg.n_words!r}")
    m = min(m, len(order))
    st = _State(b, c + 1)
    merges: list[tuple[int, int, int, float]] = []
    next_node = m

    def do_merge(phase: int) -> float:
        nonlocal next_node
        a, bb, loss = st.best_pair()
        merges.append((phase, int(st.node[a]), int(st.node[bb]), loss))
        ga, gb = st._g(a), st._g(bb)
        st.merge(a, bb, next_node)
        next_node += 1
        st.L += st._g(a) - ga - gb
        st.set_row(a)
        return loss

    for slot in range(c):
        st.add_word(int(order[slot]), slot, slot)
    st.full_losses()
    ami = [st.ami()]
    free = c
    for t in range(c, m):
        st.add_word(int(order[t]), free, t)
        st.L += st._g(free)
        st.set_row(free)
        do_merge(1)
        free = int(np.flatnonzero(~st.active)[0])
        ami.append(st.ami())
        if check_every and (t - c) % check_every == 0:
            _check_losses(st)
    for t in range(m, len(order)):  # the rest: into the best existing cluster
        st.add_word(int(order[t]), free, -1)
        st.active[free] = True
        loss = st.row_loss(free)
        best = int(np.argmin(np.where(st.active, loss, np.inf)))
        st.merge(best, free, int(st.node[best]))
    if m < len(order):
        st.full_losses()
    slots = np.flatnonzero(st.active)
    class_of_slot = {int(s): k for k, s in enumerate(slots)}
    cluster = np.full(b.shape[0], -1, dtype=np.int64)
    hit = st.slot_of >= 0
    cluster[hit] = [class_of_slot[s] for s in st.slot_of[hit]]
    class_node = [int(st.node[s]) for s in slots]
    while st.active.sum() > 1:
        do_merge(2)
    paths = _paths(merges, class_node, m)
    words = [counts.vocab.itos[i] for i in order[:m]]
    return BrownClusters(words, cluster, paths, merges, class_node, ami, list(counts.vocab.itos))


def _check_losses(st: _State) -> None:
    fresh = np.array([st.row_loss(int(i)) for i in range(len(st.pl))])
    mask = st.active[:, None] & st.active[None, :]
    np.fill_diagonal(mask, False)
    if not np.allclose(st.L[mask], fresh[mask], rtol=1e-7, atol=1e-12):
        raise AssertionError("the incrementally updated loss table drifted from the exact one")


def _paths(merges: list[tuple[int, int, int, float]], class_node: list[int], n_words: int) -> list[str]:
    """Bit strings of the classes from the phase-2 merges (first child 0, second 1).

    Merge i made node ``n_words + i``; the last merge made the root."""
    if len(class_node) == 1:
        return [""]
    children = {n_words + i: (a, b) for i, (_, a, b, _) in enumerate(merges)}
    root = n_words + len(merges) - 1
    path, stack, targets = {root: ""}, [root], set(class_node)
    while stack:
        n = stack.pop()
        if n in targets:
            continue
        a, b = children[n]
        path[a], path[b] = path[n] + "0", path[n] + "1"
        stack += [a, b]
    return [path[n] for n in class_node]


def average_mutual_information(bigrams: np.ndarray | sp.spmatrix, cluster: np.ndarray) -> float:
    """AMI (nats) of a clustering, from word bigram counts ``[V, V]`` and a class per word id
    (words with class -1 are left out; marginals still over every bigram). For tests and
    exercises: a direct, unhurried computation."""
    b = sp.csr_matrix(bigrams, dtype=np.float64)
    n = b.sum()
    cluster = np.asarray(cluster)
    k = int(cluster.max()) + 1
    keep = np.flatnonzero(cluster >= 0)
    onehot = sp.csr_matrix((np.ones(len(keep)), (keep, cluster[keep])), shape=(b.shape[0], k))
    joint = (onehot.T @ b @ onehot).toarray() / n
    pl = (onehot.T @ np.asarray(b.sum(axis=1)).ravel()) / n
    pr = (onehot.T @ np.asarray(b.sum(axis=0)).ravel()) / n
    return float(_f(joint, pl[:, None], pr[None, :]).sum())
