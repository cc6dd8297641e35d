"""The vector space model of information retrieval (Salton, Wong & Yang 1975).

A document and a query are vectors of term weights over the same vocabulary; documents are
ranked by the cosine of their vector with the query's. The weights are where the craft lies:

* ``binary``: 1 if the term occurs (coordinate matching);
* ``tf``: the term's count in the document;
* ``tfidf``: ``tf(t, d) * idf(t)``, with Salton's ``idf(t) = ln(N / df(t))`` (a term in every
  document weighs nothing);
* ``logtfidf``: ``(1 + ln tf(t, d)) * idf(t)`` (Salton & Buckley 1988's dampened tf).

``idf="smooth"`` or ``"plain"`` switch to scikit-learn's conventions (``ln((1+N)/(1+df)) + 1``
and ``ln(N/df) + 1``), for parity with ``TfidfVectorizer``. Rows are scaled to unit length, so
a dot product is the cosine.

Example:
    >>> docs = [["cat", "sat"], ["dog", "sat"], ["cat", "cat", "ran"]]
    >>> index = VectorSpaceIndex.fit(docs, VSMConfig(scheme="tfidf"))
    >>> [i for i, _ in index.rank(["cat"], top=2)]
    [0, 2]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .representations import bag_of_words, build_vocab

SCHEMES = ("binary", "tf", "tfidf", "logtfidf")
IDF_KINDS = ("salton", "smooth", "plain")


@dataclass(frozen=True)
class VSMConfig:
    """How a :class:`VectorSpaceIndex` weighs terms.

    Attributes:
        scheme: one of :data:`SCHEMES`.
        idf: ``"salton"`` (``ln N/df``), ``"smooth"`` (``ln((1+N)/(1+df)) + 1``, scikit-learn's
            default) or ``"plain"`` (``ln(N/df) + 1``, scikit-learn with ``smooth_idf=False``).
        min_df: keep terms that occur in at least this many documents.
        stop_words: terms left out of the vocabulary.
    """

    scheme: str = "tfidf"
    idf: str = "salton"
    min_df: int = 1
    stop_words: tuple[str, ...] = ()

    def __post_init__(self):
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if self.idf not in IDF_KINDS:
            raise ValueError(f"idf must be one of {IDF_KINDS}, got {self.idf!r}")
        if isinstance(self.min_df, bool) or not isinstance(self.min_df, int) or self.min_df < 1:
            raise ValueError(f"min_df must be an int >= 1, got {self.min_df!r}")


def idf_weights(counts: sp.spmatrix, kind: str = "salton") -> np.ndarray:
    """The inverse document frequency of every column of a documents x terms count matrix.

    ``salton``: ``ln(N / df)``; ``smooth``: ``ln((1 + N) / (1 + df)) + 1``; ``plain``:
    ``ln(N / df) + 1``. A term that occurs in no document gets 0 (``salton``, ``plain``).
    """
    if kind not in IDF_KINDS:
        raise ValueError(f"kind must be one of {IDF_KINDS}, got {kind!r}")
    m = sp.csr_matrix(counts)
    m.eliminate_zeros()
    n = m.shape[0]
    df = np.bincount(m.indices, minlength=m.shape[1]).astype(float)
    if kind == "smooth":
        return np.log((1.0 + n) / (1.0 + df)) + 1.0
    with np.errstate(divide="ignore"):
        base = np.where(df > 0, np.log(n / np.maximum(df, 1.0)), 0.0)
    return base + (1.0 if kind == "plain" else 0.0) * (df > 0)


def weigh(counts: sp.spmatrix, idf: np.ndarray, scheme: str) -> sp.csr_matrix:
    """Term weights by ``scheme`` (see the module's docstring), rows scaled to unit length."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    m = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    m.eliminate_zeros()
    if scheme == "binary":
        m.data[:] = 1.0
    elif scheme == "tfidf":
        m.data *= idf[m.indices]
    elif scheme == "logtfidf":
        m.data = (1.0 + np.log(m.data)) * idf[m.indices]
    size = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    size[size == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / size) @ m)


@dataclass
class VectorSpaceIndex:
    """Documents as unit-length weighted term vectors (see :meth:`fit`).

    Attributes:
        config: the weighting.
        terms: the vocabulary (the columns).
        idf: the IDF of each term (from the indexed documents).
        matrix: ``[n_docs, n_terms]`` unit-length rows.
    """

    config: VSMConfig
    terms: list[str]
    idf: np.ndarray
    matrix: sp.csr_matrix

    @classmethod
    def fit(cls, documents: Sequence[Sequence[str]], config: VSMConfig | None = None) -> VectorSpaceIndex:
        """Index tokenised documents (lists of str)."""
        config = config or VSMConfig()
        if isinstance(documents, (str, bytes)) or len(documents) == 0:
            raise ValueError("documents must be a non-empty list of token lists")
        stop = set(config.stop_words)
        terms = [t for t in build_vocab([sorted(set(d)) for d in documents], min_count=config.min_df)
                 if t not in stop]
        if not terms:
            raise ValueError(f"no term occurs in >= {config.min_df} documents outside the stop words")
        counts = bag_of_words(documents, terms)
        idf = idf_weights(counts, config.idf)
        return cls(config, terms, idf, weigh(counts, idf, config.scheme))

    def vectors(self, documents: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """Weighted, unit-length vectors of new documents or queries (this index's IDF)."""
        return weigh(bag_of_words(documents, self.terms), self.idf, self.config.scheme)

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """The cosine of every query with every document: ``[n_queries, n_docs]``."""
        if isinstance(queries, (str, bytes)):
            raise TypeError("queries must be a list of token lists, e.g. [['tax', 'bill']]")
        return np.asarray((self.vectors(queries) @ self.matrix.T).todense())

    def rank(self, query: Sequence[str], top: int = 5) -> list[tuple[int, float]]:
        """The ``top`` documents for one query as ``(document index, cosine)``, best first."""
        if isinstance(query, str):
            raise TypeError("give the query as a list of tokens, e.g. 'tax bill'.split()")
        sc = self.scores([list(query)])[0]
        best = np.argsort(-sc, kind="stable")[:top]
        return [(int(i), float(sc[i])) for i in best]


def average_precisions(scores: np.ndarray, relevant: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
    """Average precision of each query's ranking (ties broken by document order).

    Args:
        scores: ``[n_queries, n_docs]``.
        relevant: ``[n_queries, n_docs]`` bool; every query needs one relevant document.
        exclude: ``[n_queries, n_docs]`` bool: documents left out of the ranking.
    """
    scores = np.asarray(scores, dtype=float)
    rel = np.asarray(relevant, dtype=bool)
    if scores.shape != rel.shape:
        raise ValueError(f"scores {scores.shape} and relevant {rel.shape} must have the same shape")
    if not rel.any(axis=1).all():
        raise ValueError("every query needs at least one relevant document")
    if exclude is not None:
        scores = np.where(exclude, -np.inf, scores)
    order = np.argsort(-scores, axis=1, kind="stable")
    hits = np.take_along_axis(rel, order, axis=1)
    cum = np.cumsum(hits, axis=1)
    ranks = np.arange(1, scores.shape[1] + 1)
    return (hits * cum / ranks).sum(axis=1) / hits.sum(axis=1)


def bootstrap_mean(values: np.ndarray, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """The mean of ``values`` and its percentile bootstrap interval ``(mean, low, high)``
    (resampling the items; for a paired comparison pass the per-item differences)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size < 2 or not np.isfinite(v).all():
        raise ValueError(f"need at least 2 finite values, got {v.size}")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return float(v.mean()), float(lo), float(hi)


__all__ = ["IDF_KINDS", "SCHEMES", "VSMConfig", "VectorSpaceIndex", "average_precisions",
           "bootstrap_mean", "idf_weights", "weigh"]
