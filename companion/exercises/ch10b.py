"""Chapter 10b's exercises (prompting): ids ``ch10.b_<name>``; reference solutions at the end of
``solutions/ch10.py``, under ``# --- 10b ---``. (10b's first three, ``ch10.verbalize``,
``ch10.calibrate_probs`` and ``ch10.hotflip_candidates``, are registered in ``ch10.py``.)"""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

# ------------------------------------------------------------------ concept: a HotFlip step by hand

register(Exercise(
    id="ch10.b_hotflip_by_hand",
    title="AutoPrompt's candidate, by hand",
    kind="concept",
    prompt="""
        A trigger slot's input embedding has gradient g = dL/de = (1, -2). The vocabulary has four
        tokens with embeddings e_0 = (1, 0), e_1 = (0, 1), e_2 = (-1, -1), e_3 = (2, 1). Which
        token id does AutoPrompt's first-order step rank first as the replacement for the slot
        (the largest estimated decrease of the loss)? Answer with the id, 0 to 3.
    """,
    answer=1,
    atol=0,
    hint=(("The first-order change of the loss when e_t becomes e_w is (e_w - e_t) . g; e_t is "
           "the same for every candidate."),
          "Compute -e_w . g for the four tokens and take the largest."),
    explanation="""
        Token 1: -e_w . g is -1, 2, -1, 0 for tokens 0-3, so e_1 = (0, 1) lowers the loss most to
        first order. It is only an estimate: AutoPrompt then evaluates each of the k best
        candidates exactly, with a forward pass, and keeps one only if the loss really drops.
    """,
))

# ------------------------------------------------------------------- implement: iPET's label growth


def b_ipet_growth(labels: list[int], generation: int, growth: int = 5) -> dict[int, int]:
    """Return ``{label: number of new pseudo-labelled examples}`` for a model of iPET's
    ``generation`` (1 = PET: none), whose training set is ``growth ** (generation - 1)`` times the
    labelled set ``labels`` (the labelled examples included), the new examples in the labelled
    set's label proportions."""
    # Your code here.
    raise NotImplementedError("write b_ipet_growth")


def _growth_cases() -> list[Case]:
    from ..transfer.pet import ipet_label_counts

    out = []
    for labels, gen, d in (([0, 1], 1, 5), ([0, 0, 1, 1], 2, 5), ([0, 0, 0, 1], 3, 5), ([0, 1, 2, 2], 2, 3),
                           ([1] * 8 + [0] * 8, 3, 2)):
        out.append(Case(args=(labels, gen, d), expected=ipet_label_counts(labels, gen, d),
                        label=f"{len(labels)} labelled, generation {gen}, d={d}"))
    return out


register(Exercise(
    id="ch10.b_ipet_growth",
    title="iPET's growing training sets",
    kind="implement",
    prompt="""
        In iPET each generation's models train on d times as many examples as the previous
        generation's: generation 1 (PET) on the labelled set T, generation 2 on d |T|, generation
        3 on d^2 |T|, T always included. The new examples are unlabelled ones labelled by the
        previous generation, in T's label proportions. Write `b_ipet_growth(labels,
        generation, growth)` returning how many new examples of each label a model of that
        generation receives. With 32 labelled examples and d = 5, how many does generation 3 add?
    """,
    cases=_growth_cases,
    stub=b_ipet_growth,
    outputs=("new examples per label",),
    hint=(("The training set has growth ** (generation - 1) * len(labels) examples; "
           "len(labels) of them are the labelled ones."),
          "Split the rest by each label's share of `labels` (the cases divide exactly)."),
))

# ------------------------------------------------------------- predict: AutoPrompt and calibration

register(Exercise(
    id="ch10.b_autoprompt_calibrated",
    title="Triggers, then calibration",
    kind="predict",
    prompt="""
        AutoPrompt searches three trigger tokens for bert-book's pattern "{text} [T] [T] [T]
        [MASK]." on a few dozen SST-2 training examples, then the pattern with its triggers is
        calibrated with content-free inputs. Before the run: what dev accuracy (in %) will the
        calibrated pattern with triggers reach? (Chance is 50 %; section 3 measured the
        hand-written pattern "It was [MASK]." on the same model.)
    """,
    atol=5.0,
    unit=".1f",
    explanation="""
        A search of a few steps on a few dozen examples mostly moves the blank's preference
        between the two label words, and calibration removes a constant preference anyway, so
        the triggers change the accuracy of the hand-written pattern by a few points at most,
        up or down. What the pattern can reach is bounded by what bert-book's blank knows about
        sentiment; Shin et al.'s triggers took RoBERTa-large to 91 % on SST-2 with a longer
        search over thousands of examples.
    """,
))

# -------------------------------------------------------------------- debug: PET's soft labels


def b_soft_labels(logits: list[np.ndarray], temperature: float = 2.0) -> np.ndarray:
    """PET's soft labels from the label scores of several PVP models (each ``[n, L]``):
    ``softmax(mean_p s_p(x) / T)`` (equal weights)."""
    s = np.stack([np.asarray(x, dtype=np.float64) for x in logits])
    z = s.sum(0) / temperature
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _soft_cases() -> list[Case]:
    from ..transfer.pet import ensemble_soft_labels

    rng = np.random.default_rng(0)
    out = []
    for m, n, L, T in ((2, 3, 2, 2.0), (3, 4, 3, 2.0), (4, 2, 5, 1.0)):
        xs = [rng.normal(size=(n, L)) * 2 for _ in range(m)]
        out.append(Case(args=(xs, T), expected=ensemble_soft_labels(xs, temperature=T),
                        label=f"{m} models, {L} labels, T={T}"))
    return out


register(Exercise(
    id="ch10.b_soft_labels",
    title="A bug in PET's soft labels",
    kind="debug",
    prompt="""
        `b_soft_labels` should give PET's soft labels: the mean of the PVP models' label scores,
        divided by the temperature T, then a softmax. It returns a distribution for every
        example, but not the right one when there is more than one model. Find and fix the bug.
        What does the bug do to the effective temperature?
    """,
    cases=_soft_cases,
    stub=b_soft_labels,
    outputs=("soft labels",),
    rtol=1e-6,
    hint=("Compare with one model: then the function is right. What changes with m models?",
          "s.sum(0) is m times the mean."),
))
