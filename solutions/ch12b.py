"""Reference solutions for chapter 12b (try the exercises first!). ``solutions.get`` finds them
through solutions/ch12.py, which imports this module's functions."""

from __future__ import annotations

import numpy as np


def b_purity(clusters: np.ndarray, classes: np.ndarray) -> float:
    clusters, classes = np.asarray(clusters), np.asarray(classes)
    total = 0
    for c in np.unique(clusters):
        _, counts = np.unique(classes[clusters == c], return_counts=True)
        total += counts.max()
    return total / len(clusters)


def b_lloyd_step(x: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d2 = ((x[:, None, :] - centres[None]) ** 2).sum(-1)
    labels = d2.argmin(1)
    new = centres.astype(float).copy()
    for j in range(len(centres)):
        if (labels == j).any():
            new[j] = x[labels == j].mean(0)
    return labels, new


def b_recall_at_1(scores: np.ndarray) -> float:
    """The bug: ``argmax(axis=0)`` picked, for each *caption*, its best image (text-to-image
    retrieval). Image-to-text ranks the captions of each row."""
    best = scores.argmax(axis=1)
    return float((best == np.arange(len(scores))).mean())


def b_coattention_params(d: int) -> int:
    """q, k, v and output projections: four d x d matrices and four biases. A two-stream layer
    has two of these on top of two ordinary blocks (2 x 12 d^2): 32 d^2 against 12 d^2 for one
    single-stream block, which is why the matched single-stream model has about 2.7 times as
    many layers."""
    return 4 * d * d + 4 * d


def b_hierarchical_kmeans(x: np.ndarray, k: int, levels: int, seed: int = 0) -> np.ndarray:
    """Worked answer. With the chapter's features (8 x 8 crops, four colours, three shapes),
    flat k-means splits first by colour, the largest difference in pixels; at k = 4 the first
    level is close to the four colours, and the second level splits each colour by shape and
    size, so two levels of k = 4 reach a purity close to flat k = 16's. VideoBERT needed the
    hierarchy for speed (20,736 centres), not for quality."""
    from companion.multimodal.visual_words import kmeans

    x = np.asarray(x, dtype=float)
    ids = np.zeros(len(x), dtype=int)
    if levels == 0 or len(x) == 0:
        return ids
    if len(x) < k:
        return ids * k ** (levels - 1)
    _, top, _ = kmeans(x, k, seed=seed)
    for j in range(k):
        rows = top == j
        child = b_hierarchical_kmeans(x[rows], k, levels - 1, seed)
        ids[rows] = j * k ** (levels - 1) + child
    return ids
