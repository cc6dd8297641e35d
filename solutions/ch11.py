"""Reference solutions for chapter 11 (try the exercises first!)."""

from __future__ import annotations

from collections import Counter

import numpy as np


def control_task(train_tags: list[list[str]], train_words: list[list[str]], seed: int = 0) -> dict[str, str]:
    """One label per word type, drawn from the tags' empirical distribution (sorted types, so the
    mapping depends only on the seed)."""
    counts = Counter(t for s in train_tags for t in s)
    labels = sorted(counts)
    p = np.array([counts[t] for t in labels], dtype=float)
    types = sorted({w for s in train_words for w in s})
    draws = np.random.default_rng(seed).choice(len(labels), size=len(types), p=p / p.sum())
    return {w: labels[k] for w, k in zip(types, draws)}


def tree_embedding(heads: list[int]) -> np.ndarray:
    """Word i's vector is the sum of one unit vector per edge on its path to the root (an edge is
    named by its child word). h_i - h_j is +-1 exactly on the edges of the path between i and j,
    so ||h_i - h_j||^2 = d_T(i, j). The root has no edge above it: n - 1 edges, n - 1 dimensions.
    Unsquared distances cannot do it: in the star with centre c and leaves a, b, d, we would need
    |a - b| = 2 = |a - c| + |c - b|, so c is the midpoint of every pair of leaves -- impossible for
    three leaves in a Euclidean space (the midpoints of ab and ad differ unless b = d)."""
    n = len(heads)
    edges = [i for i in range(n) if heads[i] != -1]
    col = {c: k for k, c in enumerate(edges)}
    x = np.zeros((n, max(n - 1, 1)))
    for i in range(n):
        j = i
        while heads[j] != -1:
            x[i, col[j]] = 1.0
            j = heads[j]
    return x


def uuas(pred_edges: list[tuple[int, int]], heads: list[int]) -> float:
    gold = {(min(i, h), max(i, h)) for i, h in enumerate(heads) if h != -1}
    pred = {(min(a, b), max(a, b)) for a, b in pred_edges}
    return len(gold & pred) / len(gold)


def visible_matrix(branch: list[int], anchor: list[int]) -> np.ndarray:
    """The bug: ``trunk[:, None] | trunk[None, :]`` let every trunk token see every branch token
    (and every branch token see the whole trunk). Trunk-to-trunk needs both on the trunk; the
    same-branch test must not count two trunk tokens (branch -1 == -1) twice, which is harmless."""
    b = np.asarray(branch)
    trunk = b < 0
    m = trunk[:, None] & trunk[None, :]
    m |= (b[:, None] == b[None, :]) & ~trunk[:, None]
    for k, a in enumerate(anchor):
        m[a, b == k] = True
        m[b == k, a] = True
    return m


def my_extractor(sentences: list[list[str]]) -> list[np.ndarray]:
    """A worked answer: pre-trained GloVe 6B 50d (one layer, trained on 6B tokens, so far more
    text than the chapter's Brown-trained vectors); run the chapter's `run_token_probes` on it to
    compare. A contextual model's extractor returns one array per layer instead, e.g.
    `wordpiece_extractor(encoder, wordpiece, pool="first")` for MiniLM's first-piece vectors."""
    from companion.data.pretrained import load_glove_6b_50d
    from companion.probing.probes import static_extractor

    vectors, words = load_glove_6b_50d()
    return static_extractor(vectors, {w: i for i, w in enumerate(words)})(sentences)


# --- 11b ---


def b_retrieval(a: np.ndarray, b: np.ndarray) -> float:
    """Unit rows, all cosines at once, and the share of rows whose best match is their own."""
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float(((a @ b.T).argmax(1) == np.arange(len(a))).mean())


def b_auc(scores: np.ndarray, y: np.ndarray) -> float:
    """Every (positive, negative) pair compared once; ties count one half."""
    scores, y = np.asarray(scores, dtype=float), np.asarray(y)
    diff = scores[y == 1][:, None] - scores[y == 0][None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def b_pack_sentences(ids: list[list[int]], room: int) -> list[list[int]]:
    """A row is full only when the next sentence would go *over* the room (``>``, not ``>=``)."""
    docs, cur = [], []
    for s in ids:
        s = list(s)[:room]
        if len(cur) + len(s) > room:
            docs.append(cur)
            cur = []
        cur += s
    if cur:
        docs.append(cur)
    return docs
