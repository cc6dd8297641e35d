"""Reference solutions for chapter 12a (knowledge in pre-trained models), imported by
solutions/ch12.py."""

from __future__ import annotations

import numpy as np

def a_margin_loss(pos: np.ndarray, neg: np.ndarray, margin: float) -> float:
    """The hinge of each pair, averaged: a pair whose corruption is already ``margin`` worse
    than the true triple costs nothing."""
    return float(np.maximum(0.0, margin + np.asarray(pos) - np.asarray(neg)).mean())


def a_filtered_rank(energies: np.ndarray, gold: int, others: set[int]) -> int:
    """Energies of the skipped entities are set to +inf, then the entities at or below gold's
    energy are counted (gold itself included, so the best rank is 1)."""
    e = np.asarray(energies, dtype=float).copy()
    skip = [o for o in others if o != gold]
    e[skip] = np.inf
    return int((e <= e[gold]).sum())


def a_corrupt(triples: np.ndarray, n_entities: int, seed: int = 0) -> np.ndarray:
    """The bug: ``out[:, 2] = new`` gave every triple a new tail, so the rows whose head was
    replaced lost their tail too (both sides corrupted: easy negatives that teach little).
    Only the rows that kept their head get a new tail."""
    rng = np.random.default_rng(seed)
    out = triples.copy()
    swap_head = rng.random(len(out)) < 0.5
    new = rng.integers(n_entities, size=len(out))
    out[swap_head, 0] = new[swap_head]
    out[~swap_head, 2] = new[~swap_head]
    return out


def a_lives_in() -> str:
    """Worked answer of the extend exercise (run it with companion.knowledge: add the triples
    (p, lives_in, city) to ``world.triples`` with a new relation id and train TransE again).

    For two people born in the same city C1, TransE wants e_p + r_born = e_C1 for both, so the
    two people's vectors nearly coincide; if they live in different cities C2 and C3, it also
    wants e_p + r_lives = e_C2 and = e_C3, impossible for one point. The loss cannot reach zero,
    the people's vectors are pulled between their constraints, and link prediction for born_in
    should drop once lives_in is added (measure it). TransH
    projects entities onto a relation-specific hyperplane before translating, and TransR maps
    them into a relation-specific space, so that one person can sit at different points for
    different relations."""
    return "TransE cannot place one vector for N-to-N relations; TransH/TransR project per relation."
