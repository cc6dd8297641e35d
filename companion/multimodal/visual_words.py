"""VideoBERT's idea in miniature: quantise region features into a vocabulary of visual words.

Sun et al. (2019) clustered video-clip features by hierarchical k-means into 20,736 "visual
words", so that a BERT could read a video as tokens next to the words of its transcript. Here
one level of k-means (Lloyd's algorithm with k-means++ seeding, written out) turns each region
feature into one of K ids; :func:`purity` measures how well the clusters match what the scenes
were drawn from (colour, shape), against clusters of the same sizes assigned at random.
"""

from __future__ import annotations

import numpy as np


def _check(x: np.ndarray, k: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or not np.isfinite(x).all():
        raise ValueError(f"x must be a finite 2-D array [n, d], got shape {x.shape}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= len(x):
        raise ValueError(f"k must be an int in 1..n={len(x)}, got {k!r}")
    return x


def kmeans_pp(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur and Vassilvitskii, 2007): the first centre at random, each next
    one drawn with probability proportional to the squared distance to the nearest centre."""
    x = _check(x, k)
    centres = [x[rng.integers(len(x))]]
    d2 = ((x - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(len(x), 1 / len(x))
        c = x[rng.choice(len(x), p=p)]
        centres.append(c)
        d2 = np.minimum(d2, ((x - c) ** 2).sum(1))
    return np.stack(centres)


def assign(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The index of each row's nearest centre (squared Euclidean distance)."""
    x, centres = np.asarray(x, dtype=np.float64), np.asarray(centres, dtype=np.float64)
    if x.ndim != 2 or centres.ndim != 2 or x.shape[1] != centres.shape[1]:
        raise ValueError(f"x [n, d] and centres [k, d] must share d, got {x.shape} and {centres.shape}")
    d2 = (x * x).sum(1)[:, None] - 2 * x @ centres.T + (centres * centres).sum(1)[None, :]
    return d2.argmin(1)


def kmeans(x: np.ndarray, k: int, *, seed: int = 0, n_iter: int = 100, init: np.ndarray | None = None,
           tol: float = 1e-8) -> tuple[np.ndarray, np.ndarray, float]:
    """Lloyd's k-means: assign every point to its nearest centre, move every centre to the mean
    of its points, until no centre moves more than ``tol``. An empty cluster keeps its centre.

    Returns ``(centres [k, d], labels [n], inertia)``; inertia is the sum of squared distances
    to the assigned centres, the quantity each step can only lower."""
    x = _check(x, k)
    c = kmeans_pp(x, k, np.random.default_rng(seed)) if init is None else np.array(init, dtype=np.float64)
    if c.shape != (k, x.shape[1]):
        raise ValueError(f"init must have shape {(k, x.shape[1])}, got {c.shape}")
    for _ in range(n_iter):
        labels = assign(x, c)
        new = c.copy()
        for j in range(k):
            members = x[labels == j]
            if len(members):
                new[j] = members.mean(0)
        shift = np.abs(new - c).max()
        c = new
        if shift <= tol:
            break
    labels = assign(x, c)
    return c, labels, float(((x - c[labels]) ** 2).sum())


def purity(clusters: np.ndarray, classes: np.ndarray) -> float:
    """The share of points whose cluster's most common class is their own class."""
    clusters, classes = np.asarray(clusters), np.asarray(classes)
    if clusters.shape != classes.shape or clusters.ndim != 1 or clusters.size == 0:
        raise ValueError(f"clusters and classes must be equal, non-empty 1-D arrays, got "
                         f"{clusters.shape} and {classes.shape}")
    total = 0
    for c in np.unique(clusters):
        total += np.bincount(np.unique(classes, return_inverse=True)[1][clusters == c]).max()
    return total / clusters.size


def random_purity(clusters: np.ndarray, classes: np.ndarray, n: int = 200, seed: int = 0) -> np.ndarray:
    """Purity of ``n`` random assignments with the same cluster sizes (the clusters permuted
    over the points): what purity reaches by chance."""
    rng = np.random.default_rng(seed)
    clusters = np.asarray(clusters)
    return np.array([purity(rng.permutation(clusters), classes) for _ in range(n)])
