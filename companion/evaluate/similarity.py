"""Word similarity: does the geometry of the vectors agree with human judgements?

For every pair ``(w1, w2, human_score)`` of a benchmark (WordSim-353, SimLex-999) we take the
cosine of the two word vectors and report Spearman's rank correlation ρ between the cosines and
the human scores. Spearman's ρ is Pearson's correlation of the *ranks*; tied values share the
average of the ranks they span (the convention of scipy, gensim and the original papers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ._vectors import IndexLike, VectorsLike, as_matrix, build_lookup, check_pairs_like, unit_rows


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``; tied values get the mean of the ranks they occupy.

    Example:
        >>> average_ranks([10, 20, 20, 5]).tolist()
        [2.0, 3.5, 3.5, 1.0]
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"average_ranks needs a 1-D sequence, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("cannot rank NaN values; drop or fix them first")
    n = x.size
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts_group = np.r_[True, xs[1:] != xs[:-1]] if n else np.zeros(0, bool)
    group = np.cumsum(starts_group) - 1
    starts = np.flatnonzero(starts_group)
    ends = np.r_[starts[1:], n]
    mean_rank = (starts + ends + 1) / 2.0  # mean of the 1-based ranks starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = mean_rank[group]
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation of two equally long sequences (ties: average ranks).

    Returns NaN when either sequence is constant (the correlation is undefined).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"spearman needs two 1-D sequences of equal length, got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"spearman needs at least 2 pairs, got {x.size}")
    rx, ry = average_ranks(x), average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = math.sqrt(float(rx @ rx) * float(ry @ ry))
    if denom == 0.0:
        return float("nan")
    return float(np.clip((rx @ ry) / denom, -1.0, 1.0))


@dataclass
class SimilarityResult:
    """Outcome of :func:`word_similarity`.

    Attributes:
        spearman: Spearman's ρ between cosines and human scores over the pairs used.
        coverage: share of pairs whose two words are both in the (restricted) vocabulary.
        n_pairs: pairs in the benchmark.
        n_used: pairs that entered the correlation (all of them with ``oov_as_zero``).
        n_oov: pairs with at least one word missing.
        cosines: the model's score for every used pair, in benchmark order.
    """

    spearman: float
    coverage: float
    n_pairs: int
    n_used: int
    n_oov: int
    cosines: list[float] = field(repr=False)


def word_similarity(
    vectors: VectorsLike,
    vocab_or_index: IndexLike,
    pairs: Sequence[tuple[str, str, float]],
    *,
    case_insensitive: bool = True,
    oov_as_zero: bool = False,
    restrict_vocab: int | None = None,
    device: str | torch.device | None = None,
) -> SimilarityResult:
    """Spearman's ρ between the cosine of each pair's vectors and its human score.

    Args:
        vectors: [V, d] tensor or array, row ``i`` the vector of word ``i``.
        vocab_or_index: a ``Vocab`` or a dict word -> row.
        pairs: ``(word1, word2, human_score)`` triples, e.g. ``load_wordsim353()``.
        case_insensitive: fold case before looking words up (the first, most frequent case
            variant in the index wins), as gensim's ``evaluate_word_pairs`` does by default.
        oov_as_zero: score pairs with a missing word as cosine 0 instead of skipping them.
        restrict_vocab: only the first ``restrict_vocab`` rows count as in the vocabulary.
        device: where to compute (default: where ``vectors`` already is).

    Raises:
        ValueError: for malformed pairs, or if no pair can be scored.
    """
    check_pairs_like(pairs, 3, "pairs")
    mat = as_matrix(vectors, device)
    lookup = build_lookup(vocab_or_index, mat.shape[0], restrict_vocab=restrict_vocab,
                          case_insensitive=case_insensitive, device=mat.device)
    gold_in, rows_a, rows_b, slots = [], [], [], []
    gold_all: list[float] = []
    n_oov = 0
    for i, (w1, w2, score) in enumerate(pairs):
        try:
            score = float(score)
        except (TypeError, ValueError):
            raise ValueError(f"pairs[{i}] has a non-numeric human score {score!r}") from None
        if not math.isfinite(score):
            raise ValueError(f"pairs[{i}] has a non-finite human score {score!r}")
        ra, rb = lookup.get(str(w1)), lookup.get(str(w2))
        if ra is None or rb is None:
            n_oov += 1
            if oov_as_zero:
                gold_all.append(score)
                slots.append(None)
            continue
        rows_a.append(ra)
        rows_b.append(rb)
        gold_all.append(score)
        slots.append(len(rows_a) - 1)
        gold_in.append(score)
    if not gold_all:
        raise ValueError(
            f"none of the {len(pairs)} pairs has both words in the vocabulary; check the index "
            "(and case_insensitive / restrict_vocab)"
        )
    cos_in: list[float] = []
    if rows_a:
        unit = unit_rows(mat)
        ia = torch.tensor(rows_a, device=mat.device)
        ib = torch.tensor(rows_b, device=mat.device)
        cos_in = (unit[ia] * unit[ib]).sum(dim=1).double().cpu().tolist()
    cosines = [0.0 if s is None else cos_in[s] for s in slots]
    rho = spearman(gold_all, cosines) if len(cosines) >= 2 else float("nan")
    return SimilarityResult(
        spearman=rho,
        coverage=(len(pairs) - n_oov) / len(pairs),
        n_pairs=len(pairs),
        n_used=len(cosines),
        n_oov=n_oov,
        cosines=cosines,
    )


def nearest_neighbours(
    vectors: VectorsLike,
    index: IndexLike,
    word: str | Sequence[float] | np.ndarray | torch.Tensor,
    k: int = 10,
    *,
    case_insensitive: bool = True,
    restrict_vocab: int | None = None,
    device: str | torch.device | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` words whose vectors have the highest cosine with ``word``'s vector.

    ``word`` may be a string (it is left out of its own neighbours, with its case variants) or a
    query vector of the right dimension (nothing is left out). Ties are broken by row order.

    Raises:
        KeyError: if ``word`` is not in the (restricted) vocabulary.
        ValueError: for a bad ``k`` or a query vector of the wrong size.
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    mat = as_matrix(vectors, device)
    lookup = build_lookup(index, mat.shape[0], restrict_vocab=restrict_vocab,
                          case_insensitive=case_insensitive, device=mat.device)
    unit = unit_rows(mat[: lookup.n_allowed])
    exclude = torch.zeros(lookup.n_allowed, dtype=torch.bool, device=mat.device)
    exclude |= lookup.canon < 0  # rows without a word are never answers
    if isinstance(word, str):
        row = lookup.get(word)
        if row is None:
            raise KeyError(f"{word!r} is not in the vocabulary (of {lookup.n_allowed} allowed rows)")
        query = unit[row]
        exclude |= lookup.canon == row
    else:
        query = torch.as_tensor(np.asarray(word) if not isinstance(word, torch.Tensor) else word)
        query = query.to(device=mat.device, dtype=mat.dtype).flatten()
        if query.numel() != mat.shape[1]:
            raise ValueError(f"the query vector has {query.numel()} numbers but the vectors have {mat.shape[1]} dims")
        query = query / query.norm().clamp_min(torch.finfo(mat.dtype).tiny)
    scores = (unit @ query).masked_fill(exclude, float("-inf"))
    k_eff = min(k, int((~exclude).sum()))
    # stable descending order so that ties go to the more frequent (earlier) word
    order = torch.sort(scores.cpu(), descending=True, stable=True).indices[:k_eff].tolist()
    top = scores.cpu()
    return [(lookup.words[r], float(top[r])) for r in order]
