"""Chapter 10c's exercises (in-context learning and induction heads): ids ``ch10.c_<name>``.
All three are answered by a number or a prediction, so no reference solution is needed."""

from __future__ import annotations

from .core import Exercise, register

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
