"""TextRank keyword extraction (Mihalcea & Tarau 2004): PageRank on a word co-occurrence graph.

1. Candidate words: the text's tokens that pass a filter (Mihalcea & Tarau kept nouns and
   adjectives; here, words of letters that are not stop words).
2. The graph: one vertex per candidate; an undirected edge between two candidates that occur
   within ``window`` candidates of each other.
3. PageRank (Brin & Page 1998) by power iteration:
   ``S(v) = (1 - d) / N + d * sum_{u in N(v)} S(u) / deg(u)`` (the ``1/N`` normalisation, so
   the scores sum to 1 as in ``networkx.pagerank``), until the scores change by less than
   ``tol`` (L1).
4. The top-ranked words are the keywords; adjacent keywords in the text merge into phrases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TextRankConfig:
    """``window``: co-occurrence window in tokens (2 = adjacent); ``damping`` d; power
    iteration's ``tol`` and ``max_iter``; ``stop_words`` left out of the graph."""

    window: int = 2
    damping: float = 0.85
    tol: float = 1e-10
    max_iter: int = 200
    stop_words: tuple[str, ...] = ()

    def __post_init__(self):
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 2:
            raise ValueError(f"window must be an int >= 2, got {self.window!r}")
        if not 0.0 < self.damping < 1.0:
            raise ValueError(f"damping must lie in (0, 1), got {self.damping}")


def cooccurrence_graph(tokens: Sequence[str], window: int = 2,
                       keep=lambda w: True) -> tuple[list[str], np.ndarray]:
    """The vertices (candidates, in order of first occurrence) and the symmetric 0/1 adjacency
    matrix: an edge joins two different candidates that occur within ``window`` positions of
    each other in the sequence of candidates (the filtered text, as in Mihalcea & Tarau's
    example, where *compatibility* links to *systems* across the *of* between them)."""
    if isinstance(tokens, str):
        raise TypeError("tokens must be a list of words, not a string")
    seq = [t for t in tokens if keep(t)]
    words: list[str] = []
    index: dict[str, int] = {}
    for t in seq:
        if t not in index:
            index[t] = len(words)
            words.append(t)
    adj = np.zeros((len(words), len(words)))
    for i, a in enumerate(seq):
        for b in seq[i + 1:i + window]:
            if b != a:
                adj[index[a], index[b]] = adj[index[b], index[a]] = 1.0
    return words, adj


def pagerank(adjacency: np.ndarray, damping: float = 0.85, tol: float = 1e-10,
             max_iter: int = 200) -> tuple[np.ndarray, int]:
    """PageRank of a (weighted) graph by power iteration: ``(scores summing to 1, iterations)``.

    A vertex without edges spreads its score evenly over all vertices (as ``networkx`` does).

    Raises:
        ValueError: a non-square or negative matrix, or no convergence within ``max_iter``.
    """
    a = np.asarray(adjacency, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
        raise ValueError(f"adjacency must be a non-empty square matrix, got shape {a.shape}")
    if (a < 0).any():
        raise ValueError("adjacency weights must be >= 0")
    n = a.shape[0]
    out_w = a.sum(axis=1)
    dangling = out_w == 0
    trans = np.divide(a, out_w[:, None], out=np.zeros_like(a), where=~dangling[:, None])
    s = np.full(n, 1.0 / n)
    for it in range(1, max_iter + 1):
        new = (1 - damping) / n + damping * (s @ trans + s[dangling].sum() / n)
        if np.abs(new - s).sum() < tol:
            return new, it
        s = new
    raise ValueError(f"PageRank did not converge to tol={tol} in {max_iter} iterations")


def keywords(tokens: Sequence[str], top: int = 10, config: TextRankConfig | None = None) -> list[tuple[str, float]]:
    """The ``top`` words by TextRank score, ``(word, score)`` best first (ties: first seen)."""
    config = config or TextRankConfig()
    stop = set(config.stop_words)
    words, adj = cooccurrence_graph(tokens, config.window, lambda w: w.isalpha() and w not in stop)
    if not words:
        raise ValueError("no candidate words: every token is a stop word or not alphabetic")
    scores, _ = pagerank(adj, config.damping, config.tol, config.max_iter)
    order = np.argsort(-np.round(scores, 12), kind="stable")[:top]  # ties: first seen, on any CPU
    return [(words[i], float(scores[i])) for i in order]


def keyphrases(tokens: Sequence[str], keyword_set: set[str]) -> list[str]:
    """Runs of adjacent keywords in the text, joined into phrases (each phrase once, in order)."""
    out, run = [], []
    for t in list(tokens) + [None]:
        if t is not None and t in keyword_set:
            run.append(t)
            continue
        if len(run) > 1:
            phrase = " ".join(run)
            if phrase not in out:
                out.append(phrase)
        run = []
    return out


__all__ = ["TextRankConfig", "cooccurrence_graph", "keyphrases", "keywords", "pagerank"]
