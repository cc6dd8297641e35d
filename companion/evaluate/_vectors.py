"""Shared plumbing for the embedding evaluations: turning the caller's vectors and word index
into a float matrix on a device, and a row lookup that handles case folding and
``restrict_vocab`` exactly as gensim's ``KeyedVectors.evaluate_*`` methods do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from ..device import get_device

VectorsLike = Any  # torch.Tensor | np.ndarray | nn.Embedding
IndexLike = Any  # Vocab (has .itos) | Mapping[str, int] | gensim KeyedVectors (has .index_to_key)


def as_matrix(vectors: VectorsLike, device: str | torch.device | None = None) -> torch.Tensor:
    """Return ``vectors`` as a 2-D floating tensor on ``device`` (default: where it already is, or cpu).

    Accepts a tensor, a NumPy array or an ``nn.Embedding``. Half-precision inputs are promoted
    to float32 (cosines in fp16 tie too often); float64 stays float64.

    Raises:
        TypeError: for anything that is not array-like.
        ValueError: if the matrix is not 2-D, is empty or holds NaN/inf.
    """
    if isinstance(vectors, torch.nn.Embedding):
        vectors = vectors.weight
    if isinstance(vectors, torch.Tensor):
        mat = vectors.detach()
    elif isinstance(vectors, np.ndarray):
        mat = torch.from_numpy(np.ascontiguousarray(vectors))
    else:
        raise TypeError(
            f"vectors must be a torch tensor, a NumPy array or an nn.Embedding, got {type(vectors).__name__}"
        )
    if mat.dim() != 2 or mat.shape[0] == 0 or mat.shape[1] == 0:
        raise ValueError(f"vectors must be a non-empty 2-D matrix [words, dims], got shape {tuple(mat.shape)}")
    if not mat.is_floating_point():
        mat = mat.float()
    elif mat.dtype in (torch.float16, torch.bfloat16):
        mat = mat.float()
    if device is not None:
        mat = mat.to(get_device(device))
    bad = ~torch.isfinite(mat).all(dim=1)
    if bool(bad.any()):
        rows = torch.nonzero(bad).flatten()[:5].tolist()
        raise ValueError(f"vectors hold NaN or inf in row(s) {rows}; fix the training run before evaluating")
    return mat


def unit_rows(mat: torch.Tensor) -> torch.Tensor:
    """Scale every row to unit length; an all-zero row stays zero (its cosine with anything is 0)."""
    norms = mat.norm(dim=1, keepdim=True)
    return mat / norms.clamp_min(torch.finfo(mat.dtype).tiny)


def _fold(case_insensitive: bool) -> Callable[[str], str]:
    # gensim folds with str.upper; we do the same so that parity holds even for odd Unicode.
    return str.upper if case_insensitive else (lambda w: w)


def row_words(index: IndexLike, n_rows: int) -> list[str | None]:
    """Row -> word list for an index (a Vocab, a dict word->row, or anything with ``itos``/
    ``index_to_key``/``stoi``); rows that no word maps to are ``None``.

    Raises:
        TypeError: if ``index`` is none of those.
        ValueError: if the index and the matrix disagree in size, or a row is claimed twice.
    """
    itos = getattr(index, "itos", None)
    if itos is None:
        itos = getattr(index, "index_to_key", None)
    if itos is not None and not isinstance(index, Mapping):
        words = list(itos)
        if len(words) != n_rows:
            raise ValueError(
                f"the index has {len(words)} words but the vectors have {n_rows} rows; "
                "pass the vocabulary the vectors were trained with"
            )
        return words
    stoi = index if isinstance(index, Mapping) else getattr(index, "stoi", None)
    if not isinstance(stoi, Mapping):
        raise TypeError(
            "index must be a Vocab (with .itos), a dict word -> row, or a gensim KeyedVectors; "
            f"got {type(index).__name__}"
        )
    words: list[str | None] = [None] * n_rows
    for word, row in stoi.items():
        if not isinstance(row, (int, np.integer)) or not 0 <= int(row) < n_rows:
            raise ValueError(f"index maps {word!r} to row {row!r}, outside the {n_rows} rows of the vectors")
        if words[int(row)] is not None:
            raise ValueError(f"index maps both {words[int(row)]!r} and {word!r} to row {int(row)}")
        words[int(row)] = word
    return words


@dataclass
class WordLookup:
    """Which rows may be looked up and answered, after ``restrict_vocab`` and case folding.

    Attributes:
        words: row -> word for every row of the matrix (``None`` where no word maps there).
        n_allowed: rows ``[0, n_allowed)`` are the allowed ones (the most frequent words).
        rows: folded word -> its first (most frequent) row among the allowed rows.
        canon: for each allowed row, the first row sharing its folded word (-1: no word).
        variants: [n_allowed, k]: for each canonical row, every allowed row with the same
            folded word (padded by repeating the first), so that excluding a word and its case
            variants is one scatter.
        no_word: allowed rows that no word maps to (never answers).
        fold: the folding function (``str.upper`` or identity).
    """

    words: list[str | None]
    n_allowed: int
    rows: dict[str, int]
    canon: torch.Tensor
    variants: torch.Tensor
    no_word: torch.Tensor
    fold: Callable[[str], str]

    def get(self, word: str) -> int | None:
        """The row of ``word`` (after folding), or ``None`` if it is not allowed."""
        return self.rows.get(self.fold(word))


def word_rows(index: Any) -> Mapping[str, int]:
    """The word -> row mapping of ``index``: a dict word -> row, or anything with ``.stoi``
    (a :class:`companion.data.Vocab`, a word2vec or fastText vocabulary)."""
    if isinstance(index, Mapping):
        return index
    stoi = getattr(index, "stoi", None)
    if isinstance(stoi, Mapping):
        return stoi
    raise TypeError(f"index must be a dict word -> row or a vocabulary with .stoi, got {type(index).__name__}")


def build_lookup(
    index: IndexLike,
    n_rows: int,
    *,
    restrict_vocab: int | None = None,
    case_insensitive: bool = True,
    device: torch.device | None = None,
) -> WordLookup:
    """Build the :class:`WordLookup` of an index for a matrix of ``n_rows`` rows.

    Only the first ``restrict_vocab`` rows are allowed (the index is assumed ordered by
    descending frequency, as gensim assumes). With ``case_insensitive`` the first row of each
    case variant wins, exactly as in gensim.
    """
    if restrict_vocab is not None and (not isinstance(restrict_vocab, int) or restrict_vocab < 1):
        raise ValueError(f"restrict_vocab must be a positive int or None, got {restrict_vocab!r}")
    if not isinstance(case_insensitive, bool):
        raise TypeError(f"case_insensitive must be True or False, got {case_insensitive!r}")
    words = row_words(index, n_rows)
    n_allowed = n_rows if restrict_vocab is None else min(restrict_vocab, n_rows)
    fold = _fold(case_insensitive)
    rows: dict[str, int] = {}
    canon = [-1] * n_allowed
    extra: dict[int, list[int]] = {}  # canonical row -> its other case variants
    for r in range(n_allowed):
        w = words[r]
        if w is None:
            continue
        if not isinstance(w, str):
            raise ValueError(f"index holds a non-string key {w!r} at row {r}")
        c = canon[r] = rows.setdefault(fold(w), r)
        if c != r:
            extra.setdefault(c, []).append(r)
    k = 1 + max((len(v) for v in extra.values()), default=0)
    variants = torch.arange(n_allowed, dtype=torch.long).unsqueeze(1).repeat(1, k)
    for c, others in extra.items():
        variants[c, 1:1 + len(others)] = torch.tensor(others)
    return WordLookup(
        words, n_allowed, rows,
        canon=torch.tensor(canon, dtype=torch.long, device=device),
        variants=variants.to(device),
        no_word=torch.tensor([r for r in range(n_allowed) if canon[r] < 0], dtype=torch.long, device=device),
        fold=fold,
    )


def check_pairs_like(items: Sequence[Any], width: int, what: str) -> None:
    """Raise a clear error unless ``items`` is a non-empty sequence of ``width``-tuples."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"{what} must be a list of {width}-tuples, got {type(items).__name__}")
    if len(items) == 0:
        raise ValueError(f"{what} is empty; nothing to evaluate")
    for i, item in enumerate(items):
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != width:
            raise ValueError(f"{what}[{i}] = {item!r} is not a {width}-tuple")
