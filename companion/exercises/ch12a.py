"""Chapter 12a's exercises (knowledge in pre-trained models): ids ``ch12.a_<name>``. Reference
solutions: the ``# --- 12a ---`` block of solutions/ch12.py."""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

# ------------------------------------------------------------------ concept: a TransE energy

register(Exercise(
    id="ch12.a_energy",
    title="A TransE energy by hand",
    kind="concept",
    prompt="""
        TransE with the L1 norm, in two dimensions: e_paris = (0.6, 0.8), r_capital_of = (0.2,
        -0.5), e_france = (0.9, 0.1). What is the energy d(paris, capital_of, france) =
        ||e_paris + r - e_france||_1? (A number, 2 decimals.)
    """,
    answer=0.3,
    atol=0.005,
    hint=("Add the relation to the head, subtract the tail, then sum the absolute values.",),
    explanation="""
        e_paris + r = (0.8, 0.3); minus e_france gives (-0.1, 0.2); |-0.1| + |0.2| = 0.30. A
        true triple should have a low energy: the margin loss pushes it at least gamma below
        the energy of the corrupted triples.
    """,
))

# ------------------------------------------------------------------ implement: the margin loss


def a_margin_loss(pos: np.ndarray, neg: np.ndarray, margin: float) -> float:
    """The mean over pairs of ``max(0, margin + pos - neg)``: ``pos`` are the energies of true
    triples, ``neg`` those of their corruptions."""
    # Your code here
    raise NotImplementedError("write a_margin_loss")


def _margin_cases() -> list[Case]:
    rng = np.random.default_rng(5)
    out = [Case(args=(np.array([0.0, 2.0, 1.0]), np.array([3.0, 2.5, 0.5]), 1.0), expected=2 / 3,
                label="three pairs, margin 1"),
           Case(args=(np.array([0.1]), np.array([5.0]), 2.0), expected=0.0, label="far apart: no loss")]
    pos, neg = rng.uniform(0, 3, 50), rng.uniform(0, 3, 50)
    out.append(Case(args=(pos, neg, 0.5), expected=float(np.maximum(0, 0.5 + pos - neg).mean()),
                    label="50 random pairs, margin 0.5"))
    return out


register(Exercise(
    id="ch12.a_margin_loss",
    title="TransE's margin ranking loss",
    kind="implement",
    prompt="""
        Write `a_margin_loss(pos, neg, margin)`: the mean of [margin + d(h, r, t) - d(h', r,
        t')]_+ over pairs of a true triple's energy `pos[i]` and its corruption's `neg[i]`.
    """,
    cases=_margin_cases,
    stub=a_margin_loss,
    outputs=("loss",),
    atol=1e-9,
    hint=("np.maximum(0, ...) is the hinge [x]_+.", "Average over the pairs, do not sum."),
))

# ---------------------------------------------------------------------- implement: filtered rank


def a_filtered_rank(energies: np.ndarray, gold: int, others: set[int]) -> int:
    """The rank (1 = best, lowest energy) of entity ``gold`` among all entities, skipping the
    entities in ``others`` (other true answers; ``gold`` itself is never skipped). An entity with
    the same energy as ``gold`` ranks before it."""
    # Your code here
    raise NotImplementedError("write a_filtered_rank")


def _rank_cases() -> list[Case]:
    out = [Case(args=(np.array([0.5, 0.1, 0.3, 0.9]), 2, {1, 2}), expected=1,
                label="the better entity 1 is another true answer"),
           Case(args=(np.array([0.2, 0.2, 0.4, 0.1]), 0, set()), expected=3, label="a tie counts against gold"),
           Case(args=(np.array([0.4, 0.3, 0.2, 0.1]), 0, {0}), expected=4, label="gold in others is kept")]
    rng = np.random.default_rng(8)
    e = rng.normal(size=40)
    others = {3, 9, 17, 22}
    expected = int(sum(1 for i in range(40) if i not in others - {5} and e[i] <= e[5]))
    out.append(Case(args=(e, 5, others), expected=expected, label="40 entities, 4 filtered"))
    return out


register(Exercise(
    id="ch12.a_filtered_rank",
    title="The filtered rank of link prediction",
    kind="implement",
    prompt="""
        Link prediction asks for the tail of (h, r, ?). Write `a_filtered_rank(energies, gold,
        others)`: the rank of `gold` (1 = lowest energy) after removing the entities in `others`
        (the other right answers, which should not count as mistakes).
    """,
    cases=_rank_cases,
    stub=a_filtered_rank,
    outputs=("rank",),
    hint=("Count the entities whose energy is <= gold's, leaving out `others` but not gold.",),
))

# ------------------------------------------------------------------- debug: corrupting triples


def a_corrupt(triples: np.ndarray, n_entities: int, seed: int = 0) -> np.ndarray:
    """Corrupt each triple ``(h, r, t)`` of ``triples [N, 3]``: with probability 1/2 replace the
    head, otherwise the tail, by an entity drawn uniformly from ``range(n_entities)``."""
    rng = np.random.default_rng(seed)
    out = triples.copy()
    swap_head = rng.random(len(out)) < 0.5
    new = rng.integers(n_entities, size=len(out))
    out[swap_head, 0] = new[swap_head]
    out[:, 2] = new
    return out


def _corrupt_cases() -> list[Case]:
    rng = np.random.default_rng(1)
    out = []
    for n, ne, label in ((200, 5, "200 triples, 5 entities"), (50, 1000, "50 triples, 1000 entities")):
        t = np.stack([rng.integers(ne, size=n), np.zeros(n, int), rng.integers(ne, size=n)], 1)
        out.append(Case(args=(t, ne, 3), expected=_reference_corrupt(t, ne, 3), label=label))
    return out


def _reference_corrupt(triples: np.ndarray, n_entities: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = triples.copy()
    swap_head = rng.random(len(out)) < 0.5
    new = rng.integers(n_entities, size=len(out))
    out[swap_head, 0] = new[swap_head]
    out[~swap_head, 2] = new[~swap_head]
    return out


register(Exercise(
    id="ch12.a_corrupt",
    title="Corrupted triples that corrupt too much",
    kind="debug",
    prompt="""
        `a_corrupt(triples, n_entities, seed)` should replace the head *or* the tail of each
        triple (one of the two, at random). It runs, but TransE trained with it learns less
        than it should. Find the bug and fix it (keep the same random draws, in the same order).
    """,
    cases=_corrupt_cases,
    stub=a_corrupt,
    outputs=("corrupted triples",),
    hint=("Look at which rows get a new tail.", "Only the rows that kept their head."),
))

# ------------------------------------------------------------ concept: what the [MASK] sees

register(Exercise(
    id="ch12.a_visible",
    title="What the [MASK] sees in K-BERT",
    kind="concept",
    prompt="""
        K-BERT turns "X was born in [MASK] ." into a tree: X grows the branch "born_in C". With
        the visible matrix and two Transformer layers, how can the [MASK] use C?

        a) It cannot: C is invisible to every trunk token, so the branch only changes X's own
           output.
        b) In layer 1 it attends to C directly, because soft positions put C next to it.
        c) In layer 1 X attends to its branch and takes in C; in layer 2 the [MASK] attends to
           X, which now carries C.
        d) Only if the visible matrix is switched off at the [MASK]'s row.
    """,
    choices={"a": "cannot", "b": "direct", "c": "through X", "d": "switch off"},
    answer="c",
    hint=("Who may attend to the branch, and who may attend to that token?",),
    explanation="""
        (c). The visible matrix keeps the branch from the trunk, except for the entity it hangs
        from. Information therefore reaches the rest of the sentence in two hops: through X, one
        layer later. With one layer, the [MASK] could not use the branch at all.
    """,
))

# ------------------------------------------------------- predict: ERNIE with shuffled vectors

register(Exercise(
    id="ch12.a_shuffled",
    title="ERNIE with the wrong vectors",
    kind="predict",
    prompt="""
        Train ERNIE with each person's TransE vector swapped for another person's (cities and
        countries kept). Before looking at the table: what share (0 to 1) of the held-out
        birthplaces will it name, averaged over the stored seeds?
    """,
    atol=0.1,
    unit=".0%",
    explanation="""
        About what plain MLM gets. The swapped vectors are consistent (one per person) but point
        at another person's city; on the people whose birthplace the text states, the model
        learns that they disagree with the text and leans on the text instead. On the held-out
        people the text says nothing, and the vectors say the wrong city: the knowledge, not the
        extra parameters, made ERNIE better.
    """,
))

# ------------------------------------------------------------------------ extend: N-to-N facts

register(Exercise(
    id="ch12.a_lives_in",
    title="Extend: a relation TransE cannot hold",
    kind="extend",
    prompt="""
        Add `lives_in` (a city, the birthplace 30 % of the time, otherwise random) to the KG of
        a world and train TransE again. Measure link prediction for `born_in` with and without
        the new relation, and explain the difference from the geometry of e_h + r = e_t. Then
        try the fix of TransH or TransR in one sentence: what do they change?
    """,
    hint=("Write e_p + r_born = e_C1 and e_p + r_lives = e_C2 for two people.",),
))
