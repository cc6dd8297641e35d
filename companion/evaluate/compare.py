"""One table for many embedding sets: the comparison every chapter from 1 to 6 extends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import torch

from ._vectors import IndexLike, VectorsLike, as_matrix
from .analogy import METHODS, analogy
from .similarity import word_similarity


def compare_embeddings(
    named_vectors: Mapping[str, tuple[VectorsLike, IndexLike]],
    *,
    similarity: Mapping[str, Sequence[tuple[str, str, float]]] | None = None,
    analogies: Sequence[tuple[str, str, str, str, str]] | None = None,
    methods: Sequence[str] = ("3cosadd",),
    restrict_vocab: int | None = 30000,
    case_insensitive: bool = True,
    device: str | torch.device | None = None,
) -> pd.DataFrame:
    """Evaluate several embedding sets on the same benchmarks; one row per set.

    Args:
        named_vectors: ``{"PPMI-SVD": (vectors, vocab), "skip-gram": (vectors, vocab), ...}``.
        similarity: ``{"WS353": pairs, "SimLex": pairs}`` (see ``load_wordsim353``).
        analogies: questions ``(section, a, b, c, d)`` (see ``load_google_analogies``).
        methods: analogy methods to run (``3cosadd`` and/or ``3cosmul``).
        restrict_vocab: allowed analogy candidates (the most frequent rows), as in :func:`analogy`.

    Returns:
        A DataFrame indexed by name with columns ``vocab``, ``dim``, then for each similarity set
        ``<set> rho`` and ``<set> coverage``, then for each method ``<method>``,
        ``<method> semantic``, ``<method> syntactic`` and one ``analogy coverage``.
    """
    if not isinstance(named_vectors, Mapping) or not named_vectors:
        raise ValueError("named_vectors must be a non-empty dict name -> (vectors, index)")
    if not similarity and not analogies:
        raise ValueError("give at least one benchmark: similarity={...} and/or analogies=[...]")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown analogy method {m!r}; use {METHODS}")
    rows: list[dict[str, Any]] = []
    for name, pair in named_vectors.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ValueError(f"named_vectors[{name!r}] must be a pair (vectors, index)")
        vectors, index = pair
        mat = as_matrix(vectors, device)
        row: dict[str, Any] = {"name": name, "vocab": mat.shape[0], "dim": mat.shape[1]}
        for set_name, pairs in (similarity or {}).items():
            try:
                res = word_similarity(mat, index, pairs, case_insensitive=case_insensitive)
                row[f"{set_name} rho"], row[f"{set_name} coverage"] = res.spearman, res.coverage
            except ValueError as err:
                if "none of the" not in str(err):
                    raise
                row[f"{set_name} rho"], row[f"{set_name} coverage"] = float("nan"), 0.0
        if analogies:
            for m in methods:
                res = analogy(mat, index, analogies, method=m, restrict_vocab=restrict_vocab,
                              case_insensitive=case_insensitive)
                row[m], row[f"{m} semantic"], row[f"{m} syntactic"] = res.accuracy, res.semantic, res.syntactic
                row["analogy coverage"] = res.coverage
        rows.append(row)
    return pd.DataFrame(rows).set_index("name")
