"""Latent semantic analysis as Deerwester, Dumais, Furnas, Landauer & Harshman (1990) did it:
retrieval in a low-rank space of a weighted term-document matrix.

1. ``X``: a term x document matrix of counts, weighted (here TF-IDF, rows of documents scaled
   to unit length);
2. its truncated SVD ``X ~ U_k S_k V_k^T``: a term is a row of ``U_k S_k``, a document a row
   of ``V_k S_k``;
3. a query is a pseudo-document: its weighted term vector ``x_q`` is *folded in* as
   ``q = x_q^T U_k S_k^{-1}`` (the formula that maps a column of ``X`` to its row of ``V_k``), and
   documents are ranked by the cosine of ``q S_k`` and each ``d S_k``.

A document can then match a query with which it shares no term, when its terms keep the same
company as the query's (synonymy), which plain term matching cannot do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .representations import bag_of_words, build_vocab
from .svd import truncated_svd


def _idf(counts: sp.csr_matrix) -> np.ndarray:
    n_docs = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return np.log((1.0 + n_docs) / (1.0 + df)) + 1.0


def _weigh(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """TF-IDF with unit-length rows (scikit-learn's ``TfidfVectorizer`` defaults)."""
    m = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    m.data *= idf[m.indices]
    size = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    size[size == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / size) @ m)


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n == 0, 1.0, n)


@dataclass
class LSA:
    """A fitted LSA space (see :func:`fit_lsa`).

    Attributes:
        terms: the term of each row of ``U``.
        idf: the IDF weight of each term.
        u, s, vt: the truncated SVD of the weighted term x document matrix.
        tfidf: the weighted documents x terms matrix (for term matching).
    """

    terms: list[str]
    idf: np.ndarray
    u: np.ndarray
    s: np.ndarray
    vt: np.ndarray
    tfidf: sp.csr_matrix

    @property
    def k(self) -> int:
        return len(self.s)

    def weigh(self, documents: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """TF-IDF rows of new documents (or queries), with this space's terms and IDF."""
        return _weigh(bag_of_words(documents, self.terms), self.idf)

    def fold_in(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """``q = x_q^T U_k S_k^{-1}`` for each query (a row of ``V_k`` if the query were a document)."""
        return np.asarray(self.weigh(queries) @ self.u) / self.s

    def doc_vectors(self) -> np.ndarray:
        """Documents as rows of ``V_k S_k``."""
        return self.vt.T * self.s

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Cosine of each query (folded in, times ``S_k``) with each document: ``[n_queries, n_docs]``."""
        return _unit(self.fold_in(queries) * self.s) @ _unit(self.doc_vectors()).T

    def term_scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Plain term matching: cosine of the TF-IDF vectors, ``[n_queries, n_docs]``."""
        return np.asarray((self.weigh(queries) @ self.tfidf.T).todense())

    def rank(self, query: Sequence[str], top: int = 5, *, method: str = "lsa") -> list[tuple[int, float]]:
        """The ``top`` documents for one query: ``(document index, cosine)``, best first."""
        if method not in ("lsa", "terms"):
            raise ValueError(f"method must be 'lsa' or 'terms', got {method!r}")
        if isinstance(query, str):
            raise TypeError("give the query as a list of tokens, e.g. 'tax bill'.split()")
        sc = (self.scores if method == "lsa" else self.term_scores)([list(query)])[0]
        best = np.argsort(-sc, kind="stable")[:top]
        return [(int(i), float(sc[i])) for i in best]


def fit_lsa(documents: Sequence[Sequence[str]], k: int = 100, *, min_df: int = 2,
            stop_words: Sequence[str] = (), seed: int = 0) -> LSA:
    """Fit LSA on tokenised documents.

    Args:
        documents: the documents, lists of tokens.
        k: the number of latent dimensions kept.
        min_df: keep terms that occur in at least this many documents.
        stop_words: terms to leave out.
        seed: the randomized SVD's seed.
    """
    docs = [list(d) for d in documents]
    if len(docs) < 3:
        raise ValueError(f"LSA needs at least 3 documents, got {len(docs)}")
    if isinstance(min_df, bool) or not isinstance(min_df, int) or min_df < 1:
        raise ValueError(f"min_df must be an int >= 1, got {min_df!r}")
    stop = set(stop_words)
    df_vocab = build_vocab([sorted(set(d) - stop) for d in docs], min_count=min_df)
    if len(df_vocab) <= k:
        raise ValueError(f"only {len(df_vocab)} terms occur in >= {min_df} documents; choose k < that")
    counts = bag_of_words(docs, df_vocab)
    idf = _idf(counts)
    weighted = _weigh(counts, idf)
    u, s, vt = truncated_svd(sp.csr_matrix(weighted.T), k, seed=seed)  # terms x documents
    return LSA(df_vocab, idf, u, s, vt, weighted)


def average_precision(scores: np.ndarray, relevant: np.ndarray) -> float:
    """Average precision of one ranking (``scores`` per document, ``relevant`` a bool mask)."""
    rel = np.asarray(relevant, dtype=bool)
    if not rel.any():
        raise ValueError("a query needs at least one relevant document")
    order = np.argsort(-np.asarray(scores), kind="stable")
    hits = rel[order]
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def retrieval_eval(lsa: LSA, queries: Sequence[Sequence[str]], relevant: np.ndarray,
                   exclude: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Average precision of LSA and of term matching for every query.

    Args:
        relevant: ``[n_queries, n_docs]`` bool.
        exclude: ``[n_queries, n_docs]`` bool: documents left out of a query's ranking (e.g. the
            one the query was taken from).
    """
    out = {}
    for name, sc in (("LSA", lsa.scores(queries)), ("term matching", lsa.term_scores(queries))):
        if exclude is not None:
            sc = np.where(exclude, -np.inf, sc)
        out[name] = np.array([average_precision(s, r) for s, r in zip(sc, relevant)])
    return out


def brown_paragraphs(brown, min_words: int = 20) -> tuple[list[list[str]], np.ndarray, np.ndarray]:
    """Brown's paragraphs as documents: lower-cased words that start with a letter, paragraphs
    of at least ``min_words`` such words. Returns ``(documents, fileid of each, genre of each)``."""
    docs, fids, genres = [], [], []
    for f in brown.files:
        for para in f.paras():
            toks = [w.lower() for s in para for w in s if w[:1].isalpha()]
            if len(toks) >= min_words:
                docs.append(toks)
                fids.append(f.fileid)
                genres.append(f.genre_name)
    return docs, np.array(fids), np.array(genres)


def same_source_queries(documents: Sequence[Sequence[str]], sources: np.ndarray, n_queries: int,
                        query_words: int = 8, stop_words: Sequence[str] = (), seed: int = 0):
    """A retrieval test collection from the documents themselves: a query is the first
    ``query_words`` non-stop words of a sampled document; the relevant documents are the *other*
    documents of the same source (the query's own document is excluded from the ranking).

    Returns ``(queries, relevant [n_queries, n_docs], exclude [n_queries, n_docs], query_doc)``."""
    stop = set(stop_words)
    rng = np.random.default_rng(seed)
    n_docs = len(documents)
    candidates = [i for i in range(n_docs) if (sources == sources[i]).sum() > 1]
    picked = np.sort(rng.choice(candidates, size=min(n_queries, len(candidates)), replace=False))
    queries = [[w for w in documents[i] if w not in stop][:query_words] for i in picked]
    exclude = np.zeros((len(picked), n_docs), dtype=bool)
    exclude[np.arange(len(picked)), picked] = True
    relevant = (sources[None, :] == sources[picked][:, None]) & ~exclude
    return queries, relevant, exclude, picked
