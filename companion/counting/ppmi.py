"""Positive pointwise mutual information: re-weight co-occurrence counts by surprise.

``PMI(w, c) = log P(w, c) / (P(w) P(c))``: how much more often w and c occur together than if
they were independent. Frequent function words co-occur with everything, so raw counts are
dominated by them; PMI discounts them. Negative and undefined (zero-count) values are set to 0:
``PPMI = max(PMI, 0)`` (Church & Hanks 1990; Bullinaria & Levy 2007). Levy, Goldberg & Dagan
(2015) found two tweaks that help: raise the context counts to ``alpha = 0.75`` before
normalising (rare contexts otherwise get huge PMI), and shift by ``log k``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp


def ppmi(counts: sp.spmatrix | np.ndarray, *, alpha: float = 0.75, shift: float = 1.0) -> sp.csr_matrix:
    """PPMI of a (word x context) count matrix, as a sparse matrix with the same non-zero pattern or fewer.

    Args:
        counts: non-negative co-occurrence counts.
        alpha: context-distribution smoothing (1.0 = plain PMI; 0.75 as Levy et al. 2015).
        shift: subtract ``log(shift)`` before clipping at 0 (1.0 = no shift).

    Example:
        >>> import numpy as np
        >>> m = ppmi(np.array([[2.0, 0.0], [0.0, 2.0]]), alpha=1.0).toarray()
        >>> np.round(m, 4).tolist()   # log(0.5 / (0.5 * 0.5)) = log 2
        [[0.6931, 0.0], [0.0, 0.6931]]
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    if isinstance(shift, bool) or not isinstance(shift, (int, float)) or not shift >= 1 or not math.isfinite(shift):
        raise ValueError(f"shift must be a finite number >= 1 (1 = no shift), got {shift!r}")
    m = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    if m.ndim != 2:
        raise ValueError(f"counts must be a 2-D matrix, got shape {m.shape}")
    if m.nnz and m.data.min() < 0:
        raise ValueError("counts must be >= 0")
    m.eliminate_zeros()
    total = m.data.sum()
    if total <= 0:
        raise ValueError("counts are all zero: nothing co-occurs")
    row = np.asarray(m.sum(axis=1)).ravel()
    col = np.asarray(m.sum(axis=0)).ravel()
    col_a = col**alpha
    p_col = col_a / col_a.sum()
    p_row = row / total
    r = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    pmi = np.log(m.data / total) - np.log(p_row[r]) - np.log(p_col[m.indices]) - math.log(shift)
    m.data = np.maximum(pmi, 0.0)
    m.eliminate_zeros()
    return m
