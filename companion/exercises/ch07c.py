"""Chapter 7c's exercises (what pre-training buys); ids ``ch07.c_<name>`` so that they count for
chapter 7 next to 07a's and 07b's. Both are answered in the chapter itself (no reference
solution file is needed)."""

from __future__ import annotations

from .core import Exercise, register

# ------------------------------------------------------------- predict: the random arm on SST-2

register(Exercise(
    id="ch07.c_random_arm",
    title="How far does SST-2 get without pre-training?",
    kind="predict",
    prompt="""
        The same 4.2M-parameter GPT, randomly initialised, is fine-tuned on 2,000 SST-2 training
        sentences (three epochs, the same optimiser and schedule as the pre-trained arm) and
        tested on the 872 test sentences. Before the run: what test accuracy (in %) will the
        randomly initialised network reach? The majority class scores about 51 %.
    """,
    atol=5.0,
    unit=".1f",
    explanation="""
        In the book's run, about 69 %: well above the majority class, some five points below the
        pre-trained arm. A network trained from scratch on two thousand phrases still learns
        which frequent words carry sentiment ("great", "dull"); what it cannot learn from so few
        examples is what pre-training supplies, such as what rarer words mean and how words
        combine.
    """,
))

# ------------------------------------------------------------- concept: which probe to compare

register(Exercise(
    id="ch07.c_untrained_probe",
    title="Which comparison isolates what pre-training put into the features?",
    kind="concept",
    prompt="""
        Section 4 trains a logistic regression on the frozen, mean-pooled final states of
        gpt-book, and the same logistic regression on the states of its untrained twin (the same
        architecture with random weights, never trained on anything). Which comparison isolates
        what pre-training put into the features?
    """,
    choices={
        "a": "gpt-book's probe against the majority class.",
        "b": "gpt-book's probe against the untrained twin's probe.",
        "c": "Fine-tuned gpt-book against gpt-book's probe.",
        "d": "The untrained twin's probe against the majority class.",
    },
    answer="b",
    hint=("A probe on random features is not at chance: what do mean-pooled random embeddings "
          "still carry about a text?",
          "Only one pair differs in the pre-training and nothing else."),
    explanation="""
        (b). Mean-pooled states of a random network still carry which tokens a text holds (close
        to a random projection of its bag of tokens), and word identity alone says something
        about sentiment; the untrained twin's probe measures that shortcut (d). Comparing
        gpt-book's probe with the majority class (a) mixes the shortcut into the effect of
        pre-training; (c) measures what fine-tuning adds on top of frozen features. Only (b)
        changes the pre-training and keeps the classifier, the pooling and the data.
    """,
))
