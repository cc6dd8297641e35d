"""Chapter 10c's exercises (in-context learning and induction heads): ids ``ch10.c_<name>``.
The implement and debug exercises have reference solutions at the end of ``solutions/ch10.py``,
under ``# --- 10c ---``; the others are answered by a number or a prediction."""

from __future__ import annotations

import torch

from .core import Case, Exercise, register

# ------------------------------------------------------------ concept: the loss of copying

register(Exercise(
    id="ch10.c_copy_floor",
    title="The loss of a model that only copies",
    kind="concept",
    prompt="""
        A repeated segment of L = 8 distinct tokens is on its second copy. A model that has only
        learnt "the next token is one of the tokens I have already seen in this segment" puts
        probability 1/8 on each of the 8 and nothing elsewhere. What is its cross-entropy loss,
        in nats, on the next token of the second copy? (Answer with a number, 3 decimals.)
    """,
    answer=2.079,
    atol=0.01,
    hint=("The loss is -log of the probability given to the right token.",),
    explanation="""
        -log(1/8) = log 8 = 2.079 nats. This copying floor, log L, is what a layer-1 head that
        spreads its attention over the context can reach; only a model that knows *which* of
        the earlier tokens comes next (an induction head) goes below it.
    """,
))

# ------------------------------------------------------ concept: the baseline of the k-curve

register(Exercise(
    id="ch10.c_copy_baseline",
    title="Copying a shown value at random",
    kind="concept",
    prompt="""
        A few-shot episode shows k = 4 pairs with distinct keys, "k1 v1 k2 v2 k3 v3 k4 v4", then
        one of the four keys again; the right answer is its value. A model that has learnt only
        to answer with one of the values it has seen, chosen at random (the four values are
        distinct here), ignoring which key was asked: what accuracy does it reach? (A number
        between 0 and 1.)
    """,
    answer=0.25,
    atol=0.001,
    hint=("One of the four shown values is the right one.",),
    explanation="""
        1/4. In general 1/k: one shown value in k is right. A model that beats it has to match
        the query against the keys, the lookup an induction head does. (The chapter's episodes
        draw each value at random, so two keys sometimes share one and copying gets a little
        more: (1 + 3/16)/4 = 0.297 at k = 4.)
    """,
))

# ------------------------------------------------------------ predict: uniform training data

register(Exercise(
    id="ch10.c_uniform_k1",
    title="Uniform key->value data",
    kind="predict",
    prompt="""
        Two fresh models are trained on key->value sequences only, with a new random mapping in
        every sequence: one on bursty sequences (each sequence uses 4 of the 16 keys, so every
        key recurs several times), one on uniform ones (keys drawn from all 16). Before the
        run: what accuracy (0 to 1) will the *uniform* model reach with one shown pair, "k1 v1
        k1 -> ?", on mappings it never saw? Chance is 1/16.
    """,
    atol=0.15,
    unit=".0%",
    explanation="""
        Far below the bursty model's. In a uniform sequence of 16 pairs a key recurs less often
        (about 10 of the 16 keys appear, most once), so reading the context pays off on few
        tokens and the gradient towards it is weak; after 500 steps the uniform model has
        barely begun to use its context. In a bursty sequence every key recurs about four
        times, and the model learns to copy from the context: Chan et al.'s finding, here at
        500 training steps per arm.
    """,
))

# ------------------------------------------------------- implement: the prefix-matching score


def c_induction_score(pattern: torch.Tensor, ids: torch.Tensor) -> float:
    """Olsson et al.'s prefix-matching score of one head on one sequence: ``pattern`` is the
    head's ``[T, T]`` attention (row = query, each row sums to 1, nothing above the diagonal),
    ``ids`` the ``[T]`` tokens. For every position whose token occurred before, add up the
    attention it pays to the positions right *after* the earlier occurrences; return the mean of
    those sums over such positions."""
    # Your code here.
    raise NotImplementedError("write c_induction_score")


def _causal_pattern(T: int, g: torch.Generator) -> torch.Tensor:
    scores = torch.randn(T, T, generator=g, dtype=torch.float64)
    scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return scores.softmax(-1)


def _induction_cases() -> list[Case]:
    from ..transfer.induction import induction_scores

    g = torch.Generator().manual_seed(10)
    out = []
    for ids, label in ((torch.tensor([3, 7, 1, 4, 3, 7, 1, 4]), "a segment of 4, twice"),
                       (torch.tensor([5, 2, 5, 2, 5, 2]), "a token seen twice before"),
                       (torch.tensor([1, 2, 3, 9, 9, 4, 1, 2]), "a token right after itself")):
        pattern = _causal_pattern(len(ids), g)
        out.append(Case(args=(pattern, ids), expected=float(induction_scores(pattern, ids)), label=label))
    return out


register(Exercise(
    id="ch10.c_induction_score",
    title="The prefix-matching score of a head",
    kind="implement",
    prompt="""
        Write `c_induction_score(pattern, ids)`: for each query position t whose token ids[t]
        occurred at earlier positions s < t, add up pattern[t, s + 1] over those s (the tokens
        that followed the earlier copies); return the mean of these sums over all such t. For
        "3 7 1 4 3 7 1 4" an induction head scores 1 and attention spread evenly over the
        positions seen so far scores about 0.16.
    """,
    cases=_induction_cases,
    stub=c_induction_score,
    outputs=("prefix-matching score",),
    rtol=1e-6,
    atol=1e-9,
    hint=("Only positions t whose token appears among ids[:t] count, and each of them counts once.",
          "For such a t, the targets are s + 1 for every s < t with ids[s] == ids[t]; note that s + 1 "
          "can be t itself when a token repeats right away."),
))

# ------------------------------------------------------ debug: the previous-token score


def c_previous_token_score(pattern: torch.Tensor) -> float:
    """The mean attention from each position t >= 1 to t - 1 in one head's ``[T, T]`` pattern
    (rows are queries): 1 for a perfect previous-token head."""
    return float(pattern.diagonal(1).mean())


def _previous_cases() -> list[Case]:
    g = torch.Generator().manual_seed(11)
    out = []
    for T in (4, 7, 12):
        p = _causal_pattern(T, g)
        out.append(Case(args=(p,), expected=float(p.diagonal(-1).mean()), label=f"T = {T}"))
    prev = torch.zeros(5, 5)
    prev[0, 0] = 1.0
    prev[torch.arange(1, 5), torch.arange(0, 4)] = 1.0
    out.append(Case(args=(prev,), expected=1.0, label="a perfect previous-token head"))
    return out


register(Exercise(
    id="ch10.c_previous_token_score",
    title="A previous-token score that is always zero",
    kind="debug",
    prompt="""
        An induction head needs a layer-1 partner that attends to the previous token. The
        function `c_previous_token_score` is meant to measure that, but on every head of our
        causal model it returns 0, even for a head that does nothing but look one token back.
        Find the bug and fix it. Why is the number it returns 0 for every causal model?
    """,
    cases=_previous_cases,
    stub=c_previous_token_score,
    outputs=("previous-token score",),
    rtol=1e-6,
    atol=1e-9,
    hint=("Which entries does `diagonal(1)` read: row t, column t + 1, or column t - 1?",
          "In a causal pattern every entry above the diagonal is 0: the head may not look ahead."),
))

# -------------------------------------------- derive: how many keys a uniform sequence shows


register(Exercise(
    id="ch10.c_distinct_keys",
    title="How often does a key come back?",
    kind="derive",
    prompt="""
        A uniform key->value training sequence holds 16 pairs whose keys are drawn independently
        and uniformly from 16 keys. Derive the expected number of distinct keys in it
        (2 decimals). A key that appears only once teaches the model nothing about reading the
        context: there is no earlier pair to look up.
    """,
    answer=10.30,
    atol=0.01,
    hint=("Use linearity of expectation: add up, over the 16 keys, the probability that the key "
          "appears at least once.",
          "A given key is missing from all 16 draws with probability (15/16)^16."),
    explanation="""
        16 (1 - (15/16)^16) = 16 x (1 - 0.356) = 10.30. About 10 keys appear, so of the 16 pairs
        only about 6 repeat a key seen earlier in the sequence; in a bursty sequence that uses
        4 keys, 12 of the 16 pairs do. The uniform model gets about half as many tokens on which
        reading the context pays.
    """,
))
