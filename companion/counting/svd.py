"""Truncated SVD: dense low-dimensional word vectors from a sparse matrix (LSA; Deerwester et
al. 1990; Levy et al. 2015 for PPMI).

``M ≈ U_k S_k V_k^T``; a word's vector is its row of ``U_k S_k^p``. ``p = 1`` is the textbook
choice; Levy et al. found ``p = 0.5`` (or 0) better for similarity. Ours is the randomized
algorithm of Halko, Martinsson & Tropp (2011): multiply by a random matrix, a few power
iterations, then an exact SVD of a small matrix. Sparse products run in float32 (torch CSR),
everything else in float64. ``method="arpack"`` uses scipy's Lanczos ``svds`` instead (slower,
for checking).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import svds


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Small LAPACK calls (eigh of a few hundred rows) are 100x slower with several threads on a
    busy machine; run them on one."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _orthonormal(y: torch.Tensor, passes: int = 2) -> torch.Tensor:
    """An orthonormal basis of the columns of a tall ``y`` (Gram matrix + eigh; a second pass
    restores the orthogonality the first loses; only matrix products touch the tall matrix)."""
    for _ in range(passes):
        g = y.T @ y
        with _one_thread():
            w, v = torch.linalg.eigh(g)
        keep = w > w.max() * 1e-10
        y = (y @ v[:, keep]) / torch.sqrt(w[keep])
    return y


def _as_operator(a: sp.spmatrix | np.ndarray) -> torch.Tensor:
    """A sparse matrix becomes a float32 torch CSR tensor (its products with tall matrices are
    2-3x faster than scipy's); a dense one stays float64."""
    if not sp.issparse(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))
    a = sp.csr_matrix(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                       torch.from_numpy(a.indices.astype(np.int64)),
                                       torch.from_numpy(a.data.astype(np.float32)), size=a.shape)


def _matmul(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``a @ x`` in ``a``'s precision, returned as float64."""
    return (a @ x.to(a.dtype)).double()


def truncated_svd(matrix: sp.spmatrix | np.ndarray, k: int, *, n_iter: int = 5, oversample: int = 20,
                  seed: int = 0, method: str = "randomized") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` largest singular triplets ``(U [m, k], S [k], Vt [k, n])``, S descending.

    Signs are fixed (the largest-magnitude entry of each column of U is positive) so that the same
    input and seed always give the same vectors.
    """
    if method not in ("randomized", "arpack"):
        raise ValueError(f"method must be 'randomized' or 'arpack', got {method!r}")
    a = matrix if sp.issparse(matrix) else np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {a.shape}")
    m, n = a.shape
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < min(m, n):
        raise ValueError(f"k must be an int in 1..{min(m, n) - 1} for a {m} x {n} matrix, got {k!r}")
    if isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
        raise ValueError(f"n_iter must be an int >= 0, got {n_iter!r}")
    if sp.issparse(a):
        a = sp.csr_matrix(a, dtype=np.float64)
        if a.nnz and not np.isfinite(a.data).all():
            raise ValueError("matrix holds NaN or inf")
    elif not np.isfinite(a).all():
        raise ValueError("matrix holds NaN or inf")
    rng = np.random.default_rng(seed)
    if method == "arpack":
        u, s, vt = svds(a, k=k, v0=rng.standard_normal(min(m, n)))
        order = np.argsort(-s)
        u, s, vt = u[:, order], s[order], vt[order]
    else:
        at = _as_operator(a.T)
        a = _as_operator(a)
        width = min(k + oversample, min(m, n))
        q = _orthonormal(_matmul(a, torch.from_numpy(rng.standard_normal((n, width)))))
        for i in range(n_iter):  # power iterations sharpen the spectrum's top
            q = _orthonormal(_matmul(a, _matmul(at, q)), passes=2 if i == n_iter - 1 else 1)
        b = _matmul(at, q).T  # [width, n] = Q^T A
        with _one_thread():
            w, ub = torch.linalg.eigh(b @ b.T)  # B B^T = Ub S^2 Ub^T
        order = torch.argsort(w, descending=True)[:k]
        s_t = torch.sqrt(torch.clamp(w[order], min=0.0))
        ub = ub[:, order]
        u = (q @ ub).numpy()
        vt = ((ub.T @ b) / s_t.clamp_min(1e-300)[:, None]).numpy()
        s = s_t.numpy()
    flip = np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])
    flip[flip == 0] = 1.0
    return u * flip, s, vt * flip[:, None]


def svd_vectors(matrix: sp.spmatrix | np.ndarray, dim: int, *, eig_power: float = 0.5, seed: int = 0,
                **kwargs) -> np.ndarray:
    """Word vectors ``U_k S_k^p`` (``p = eig_power``) of a word x context matrix, float32 ``[m, dim]``."""
    if not 0 <= eig_power <= 1:
        raise ValueError(f"eig_power must be in [0, 1], got {eig_power!r}")
    u, s, _ = truncated_svd(matrix, dim, seed=seed, **kwargs)
    return (u * s**eig_power).astype(np.float32)
