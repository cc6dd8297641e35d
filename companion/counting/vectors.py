"""Count-based word vectors end to end: co-occurrence -> PPMI -> SVD, and their evaluation.

``count_word_vectors(sentences)`` builds all three spaces at once; ``similarity_table`` scores
any of them on word-similarity benchmarks with :func:`companion.evaluate.word_similarity` (sparse
spaces are evaluated on the dense rows of the benchmark words only: a 50k x 50k dense matrix
would not fit in memory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .cooccurrence import Cooccurrence, cooccurrence_matrix
from .ppmi import ppmi
from .svd import svd_vectors


@dataclass
class CountVectors:
    """Three vector spaces over the same words.

    Attributes:
        cooc: the co-occurrence counts (``cooc.matrix`` rows are the raw count vectors).
        ppmi: the PPMI matrix (sparse, same shape).
        svd: dense ``[|V|, dim]`` vectors from the truncated SVD of ``ppmi``.
    """

    cooc: Cooccurrence
    ppmi: sp.csr_matrix
    svd: np.ndarray

    @property
    def words(self) -> list[str]:
        return self.cooc.words

    @property
    def index(self) -> dict[str, int]:
        return self.cooc.index

    def spaces(self) -> dict[str, sp.spmatrix | np.ndarray]:
        """``{"counts": ..., "PPMI": ..., "PPMI+SVD": ...}`` for :func:`similarity_table`."""
        return {"counts": self.cooc.matrix, "PPMI": self.ppmi, "PPMI+SVD": self.svd}


def count_word_vectors(sentences: Sequence[Sequence[str]], *, window: int = 2, min_count: int = 5,
                       max_size: int | None = None, dim: int = 300, alpha: float = 0.75, eig_power: float = 0.5,
                       weighting: str = "uniform", seed: int = 0) -> CountVectors:
    """Co-occurrence counts (``window`` each side), their PPMI (``alpha``), and its SVD (``dim``).

    See :func:`~companion.counting.cooccurrence.cooccurrence_matrix`, :func:`~companion.counting.ppmi.ppmi`
    and :func:`~companion.counting.svd.svd_vectors` for the arguments.
    """
    cooc = cooccurrence_matrix(sentences, window, min_count=min_count, max_size=max_size, weighting=weighting)
    dim = min(dim, len(cooc.words) - 1)
    p = ppmi(cooc.matrix, alpha=alpha)
    return CountVectors(cooc, p, svd_vectors(p, dim, eig_power=eig_power, seed=seed))


def dense_rows(matrix: sp.spmatrix | np.ndarray, index: Mapping[str, int],
               words: Sequence[str]) -> tuple[np.ndarray, dict[str, int]]:
    """The rows of ``words`` (those in ``index``) as a dense float32 array, with their new index."""
    keep = sorted({w for w in words if w in index})
    rows = [index[w] for w in keep]
    sub = matrix[rows]
    sub = sub.toarray() if sp.issparse(sub) else np.asarray(sub)
    return sub.astype(np.float32), {w: i for i, w in enumerate(keep)}


def similarity_table(spaces: Mapping[str, sp.spmatrix | np.ndarray], index: Mapping[str, int],
                     benchmarks: Mapping[str, Sequence[tuple[str, str, float]]]) -> pd.DataFrame:
    """Spearman's ρ (and coverage) of every space on every benchmark.

    Args:
        spaces: name -> [|V|, d] matrix (sparse or dense) whose rows follow ``index``.
        index: word -> row.
        benchmarks: name -> ``(w1, w2, score)`` pairs, e.g. ``{"WordSim-353": load_wordsim353()}``.

    Returns:
        A DataFrame with rows = spaces and columns ``(benchmark, "rho")``, ``(benchmark, "coverage")``.
    """
    from companion.evaluate import word_similarity

    if not spaces or not benchmarks:
        raise ValueError("give at least one space and one benchmark")
    out = {}
    for name, mat in spaces.items():
        if mat.shape[0] != len(index):
            raise ValueError(f"space {name!r} has {mat.shape[0]} rows but the index has {len(index)} words")
        row = {}
        for bname, pairs in benchmarks.items():
            words = [w for a, b, _ in pairs for w in (a, b)]
            # lower-cased index: the benchmarks are lower-case, like our corpus
            sub, sub_index = dense_rows(mat, index, words)
            res = word_similarity(sub, sub_index, pairs, case_insensitive=False)
            row[(bname, "rho")] = res.spearman
            row[(bname, "coverage")] = res.coverage
        out[name] = row
    df = pd.DataFrame.from_dict(out, orient="index")
    df.columns = pd.MultiIndex.from_tuples(df.columns)
    return df


def sparse_neighbours(matrix: sp.spmatrix | np.ndarray, index: Mapping[str, int], word: str,
                      k: int = 10) -> list[tuple[str, float]]:
    """The ``k`` words with the highest cosine to ``word`` (works on sparse and dense matrices)."""
    if word not in index:
        raise KeyError(f"{word!r} is not in the vocabulary")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    words = [None] * len(index)
    for w, i in index.items():
        words[i] = w
    if sp.issparse(matrix):
        m = sp.csr_matrix(matrix, dtype=np.float64)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        q = m[index[word]]
        sims = np.asarray((m @ q.T).todense()).ravel()
    else:
        m = np.asarray(matrix, dtype=np.float64)
        norms = np.linalg.norm(m, axis=1)
        sims = m @ m[index[word]]
    qn = norms[index[word]]
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(norms > 0, sims / (norms * max(qn, 1e-300)), 0.0)
    cos[index[word]] = -np.inf
    top = np.argsort(-cos, kind="stable")[:k]
    return [(words[i], float(cos[i])) for i in top]


def pair_cosines(matrix: sp.spmatrix | np.ndarray, index: Mapping[str, int],
                 pairs: Sequence[tuple[str, str, float]]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Cosines of the benchmark pairs whose two words are in ``index``: ``(cosines, human
    scores, positions of the pairs used)``."""
    used = [i for i, (a, b, _) in enumerate(pairs) if a in index and b in index]
    words = [w for i in used for w in pairs[i][:2]]
    sub, sub_index = dense_rows(matrix, index, words)
    unit = sub / np.maximum(np.linalg.norm(sub, axis=1, keepdims=True), 1e-30)
    a = np.array([sub_index[pairs[i][0]] for i in used], dtype=np.int64)
    b = np.array([sub_index[pairs[i][1]] for i in used], dtype=np.int64)
    cos = np.einsum("ij,ij->i", unit[a], unit[b]).astype(np.float64)
    return cos, np.array([pairs[i][2] for i in used], dtype=np.float64), used


def bootstrap_rho_difference(spaces: Mapping[str, sp.spmatrix | np.ndarray], index: Mapping[str, int],
                             pairs: Sequence[tuple[str, str, float]], a: str, b: str, *,
                             n_boot: int = 1000, seed: int = 0) -> dict[str, float]:
    """Spearman's ρ of space ``a`` minus that of space ``b`` on the pairs both cover, with a 95 %
    bootstrap interval (the same resampled pairs for both spaces)."""
    from scipy.stats import rankdata

    ca, gold, used_a = pair_cosines(spaces[a], index, pairs)
    cb, _, used_b = pair_cosines(spaces[b], index, pairs)
    if used_a != used_b:
        raise ValueError(f"spaces {a!r} and {b!r} cover different pairs; compare them on the same ones")

    def rho(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # row-wise Spearman
        rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
        rx = rx - rx.mean(axis=-1, keepdims=True)
        ry = ry - ry.mean(axis=-1, keepdims=True)
        return (rx * ry).sum(axis=-1) / np.sqrt((rx**2).sum(axis=-1) * (ry**2).sum(axis=-1))

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(gold), (n_boot, len(gold)))
    diffs = rho(ca[idx], gold[idx]) - rho(cb[idx], gold[idx])
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    return {"diff": float(rho(ca, gold) - rho(cb, gold)), "low": float(lo), "high": float(hi)}
