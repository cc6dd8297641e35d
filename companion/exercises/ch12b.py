"""Chapter 12b's exercises (vision-language pre-training in miniature): ids ``ch12.b_<name>``
so that they count for chapter 12. Reference solutions: solutions/ch12b.py (re-exported by
solutions/ch12.py's ``# --- 12b ---`` block)."""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

# ----------------------------------------------------------------------- implement: purity


def b_purity(clusters: np.ndarray, classes: np.ndarray) -> float:
    """The share of points whose cluster's most common class is their own class."""
    # Your code here
    raise NotImplementedError("write b_purity")


def _purity_cases() -> list[Case]:
    from ..multimodal.visual_words import purity

    out = [Case(args=(np.array([0, 0, 1, 1]), np.array([5, 5, 5, 7])), expected=0.75,
                label="two clusters by hand"),
           Case(args=(np.array([3, 3, 3]), np.array([1, 2, 3])), expected=1 / 3,
                label="one cluster, three classes")]
    rng = np.random.default_rng(12)
    c, y = rng.integers(0, 6, 80), rng.integers(0, 4, 80)
    out.append(Case(args=(c, y), expected=purity(c, y), label="80 random points"))
    return out


register(Exercise(
    id="ch12.b_purity",
    title="Purity of visual words",
    kind="implement",
    prompt="""
        k-means gives every region a cluster id (its visual word). Write
        `b_purity(clusters, classes)`: for each cluster take its most common class, count the
        points of that class in it, add over clusters and divide by the number of points. Ids
        need not be 0..K-1.
    """,
    cases=_purity_cases,
    stub=b_purity,
    outputs=("purity",),
    atol=1e-12,
    hint=("Loop over np.unique(clusters); np.unique(..., return_counts=True) counts classes.",
          "total += counts.max() for each cluster; return total / len(clusters)."),
))

# -------------------------------------------------------------------- implement: a Lloyd step


def b_lloyd_step(x: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of k-means: assign each row of ``x`` to its nearest centre (squared Euclidean
    distance, ties to the lower index), then move each centre to the mean of its rows (a centre
    with no rows stays). Return ``(labels, new_centres)``."""
    # Your code here
    raise NotImplementedError("write b_lloyd_step")


def _lloyd_cases() -> list[Case]:
    from ..multimodal.visual_words import assign

    def ref(x, c):
        lab = assign(x, c)
        new = c.astype(float).copy()
        for j in range(len(c)):
            if (lab == j).any():
                new[j] = x[lab == j].mean(0)
        return lab, new

    x1 = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 2.0]])
    c1 = np.array([[1.0, 0.0], [9.0, 0.0]])
    rng = np.random.default_rng(4)
    x2 = rng.normal(size=(30, 3))
    c2 = np.vstack([x2[:3], [[50.0, 50.0, 50.0]]])  # the last centre gets no points
    return [Case(args=(x1, c1), expected=ref(x1, c1), label="four points, two centres"),
            Case(args=(x2, c2), expected=ref(x2, c2), label="an empty cluster keeps its centre")]


register(Exercise(
    id="ch12.b_lloyd_step",
    title="One step of k-means",
    kind="implement",
    prompt="""
        VideoBERT's visual words come from k-means. Write `b_lloyd_step(x, centres)` returning
        `(labels, new_centres)`: each row of `x` goes to its nearest centre; each centre moves to
        the mean of its rows; a centre that got no rows stays where it was.
    """,
    cases=_lloyd_cases,
    stub=b_lloyd_step,
    outputs=("labels", "new centres"),
    atol=1e-9,
    hint=("Distances: ((x[:, None, :] - centres[None]) ** 2).sum(-1), then argmin(1).",
          "new = centres.copy(); for j with any(labels == j): new[j] = x[labels == j].mean(0)."),
))

# --------------------------------------------------------------------- debug: recall at 1


def b_recall_at_1(scores: np.ndarray) -> float:
    """``scores[i, j]`` is the match score of image i with caption j; caption i belongs to
    image i. Image-to-text recall@1: the share of images whose best caption is their own."""
    best = scores.argmax(axis=0)
    return float((best == np.arange(len(scores))).mean())


def _recall_cases() -> list[Case]:
    s1 = np.array([[0.9, 0.1, 0.2], [0.8, 0.7, 0.1], [0.85, 0.2, 0.6]])
    rng = np.random.default_rng(7)
    s2 = rng.normal(size=(12, 12)) + 1.5 * np.eye(12)
    truth = lambda s: float((s.argmax(1) == np.arange(len(s))).mean())
    return [Case(args=(s1,), expected=truth(s1), label="3 images by hand"),
            Case(args=(s2,), expected=truth(s2), label="12 noisy images")]


register(Exercise(
    id="ch12.b_recall_at_1",
    title="Which way does retrieval run?",
    kind="debug",
    prompt="""
        `b_recall_at_1(scores)` should measure image-to-text retrieval: for each image (a row),
        is its own caption the best-scoring one? It returns numbers in [0, 1] but the wrong
        ones. Find and fix the bug.
    """,
    cases=_recall_cases,
    stub=b_recall_at_1,
    outputs=("recall@1",),
    atol=1e-12,
    hint=("For image i, which entries of scores compete: a row or a column?",
          "argmax over captions is argmax(axis=1); axis=0 ranks images for each caption."),
))

# --------------------------------------------------------------- derive: co-attention's size


def b_coattention_params(d: int) -> int:
    """Parameters of one co-attention sub-layer of width ``d`` (weights and biases)."""
    # Your code here
    raise NotImplementedError("write b_coattention_params")


register(Exercise(
    id="ch12.b_coattention_params",
    title="What co-attention costs",
    kind="derive",
    prompt="""
        A co-attention sub-layer of width d has a query projection (d x d and a bias of d) for
        its own stream, a key and a value projection (each d x d with a bias) for the other
        stream, and an output projection (d x d with a bias). Write
        `b_coattention_params(d)` returning its number of parameters, and use it to see what a
        two-stream layer adds over two single-stream blocks.
    """,
    cases=[Case(args=(d,), expected=4 * d * d + 4 * d, label=f"d = {d}") for d in (1, 32, 64, 768)],
    stub=b_coattention_params,
    outputs=("parameters",),
    atol=0,
    hint=("Four d x d matrices, four bias vectors of d.",),
))

# ------------------------------------------------------------- concept: masks in negatives


register(Exercise(
    id="ch12.b_masks_in_negatives",
    title="Why mask words in mismatched pairs too?",
    kind="concept",
    prompt="""
        Masked LM and masked region modelling are scored only on matched image-caption pairs.
        The chapter still puts [MASK] tokens into the mismatched pairs that image-text matching
        (ITM) uses. Why?
    """,
    choices={
        "a": "Masking mismatched pairs adds more MLM training signal per batch",
        "b": "Without masks there, ITM could answer 'no match' from the mere absence of [MASK]",
        "c": "BERT's 80/10/10 rule requires every row of a batch to be masked alike",
        "d": "Masked words make mismatched captions harder, which sharpens the ITM head",
    },
    answer="b",
    hint=("What would a mismatched row look like if only matched rows were masked?",),
    explanation="""
        (b). If only matched rows carried [MASK], the ITM head could tell a match from a
        mismatch by looking for a [MASK] token, without reading the image at all: a shortcut.
        Masking every row and counting the MLM loss only on matched rows removes it.
    """,
))

# ----------------------------------------------------------- concept: where the image enters


register(Exercise(
    id="ch12.b_where_the_image_enters",
    title="Where does the image enter a word?",
    kind="concept",
    prompt="""
        In the chapter's two-stream model, the state of the word "circle" in the last layer
        changes when the regions change. Through which part of the network does that change
        reach it?
    """,
    choices={
        "a": "The shared token embedding table, which both streams read",
        "b": "The text stream's self-attention over words and regions",
        "c": "The co-attention in which text queries read the regions' keys and values",
        "d": "The final LayerNorm, which normalises both streams together",
    },
    answer="c",
    hint=("Which attention in a two-stream layer takes its keys from the other stream?",),
    explanation="""
        (c). Each stream's self-attention sees only its own tokens; the only path from the
        regions to a word is the text stream's co-attention (queries from the words, keys and
        values from the regions). Zero its output projection and the words no longer change
        with the image, which the book's tests check.
    """,
))

# -------------------------------------------------------------- predict: shuffled images


register(Exercise(
    id="ch12.b_shuffled_cloze",
    title="The colour cloze with the wrong image",
    kind="predict",
    prompt="""
        The single-stream model fills "a small [MASK] circle ..." with the right colour for most
        held-out scenes. Now every caption is shown with *another* scene's regions. Before the
        next cell runs: what accuracy (0 to 1) will it reach? There are four colours.
    """,
    atol=0.1,
    unit=".0%",
    explanation="""
        About a quarter: the shuffled image says nothing about this caption's colours, yet the
        model still reads a colour off it (from an object of the named shape, or of another),
        which is right only by coincidence, about one time in four. It falls to about the level
        of the text-only model, which knows only how often each colour went with each shape.
        The control shows that the model's cloze accuracy comes from the image it is given, not
        from the words.
    """,
))

# ----------------------------------------------------------------- extend: hierarchical k-means


register(Exercise(
    id="ch12.b_hierarchical_kmeans",
    title="VideoBERT's hierarchical k-means",
    kind="extend",
    prompt="""
        VideoBERT clustered its features hierarchically: k-means with k = 12, then again k = 12
        inside each cluster, four levels deep (12^4 = 20,736 visual words). Write
        `b_hierarchical_kmeans(x, k, levels, seed)` returning one id per row (in
        0..k**levels - 1) with two levels over the chapter's region features, and compare the
        purity of k = 4 at two levels with flat k-means with k = 16. Which splits does the second
        level make: colours inside shapes, or shapes inside colours?
    """,
    hint=("Cluster, then call yourself on the rows of each cluster with levels - 1.",
          "id = parent_id * k + child_id; a cluster with fewer than k rows keeps child id 0."),
))
