"""Chapter 7c's exercises (what pre-training buys); ids ``ch07.c_<name>`` so that they count for
chapter 7 next to 07a's and 07b's. The predict and concept ones are answered in the chapter
itself; the implement and debug ones have worked answers in ``solutions/ch07.py`` (after the
``# --- 07c ---`` marker)."""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

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

# ------------------------------------------------------------- concept: which vector BERT's head reads

register(Exercise(
    id="ch07.c_bert_pooling",
    title="Why does bert-book's head read the mean of the states?",
    kind="concept",
    prompt="""
        Devlin et al. put the classification head on the [CLS] token, through a tanh pooler that
        next-sentence prediction had trained. bert-book was pre-trained by masked LM alone (no
        NSP), and chapter 7c's head reads the mean of its final states instead. Why?
    """,
    choices={
        "a": "Nothing trained its [CLS] state or its pooler to sum up a text; MLM trained every token's state.",
        "b": "Mean pooling costs less than the pooler on [CLS], and every run of the chapter is on a CPU.",
        "c": "The [CLS] token cannot attend to the other tokens in bert-book.",
        "d": "A mean of states has no parameters, so fine-tuning moves no weight of the encoder.",
    },
    answer="a",
    hint=("What did each part of bert-book learn to predict in pre-training?",
          "The MLM loss is computed on masked text tokens; is [CLS] ever one of them?"),
    explanation="""
        (a). MLM's loss reads the final states of (masked) text tokens, so those states were
        trained; [CLS] is never a target, and the pooler is trained only by NSP, which bert-book
        did not have. The cost is the same either way (b); in a bidirectional encoder [CLS]
        attends to every real token (c); and fine-tuning moves every weight of the encoder
        whatever the head reads (d). Fine-tuning could still teach [CLS] to summarise, but it
        would start from an untrained summary.
    """,
))

# ------------------------------------------------------------- derive: an unpaired interval

register(Exercise(
    id="ch07.c_unpaired_halfwidth",
    title="How wide would the interval be without pairing?",
    kind="derive",
    prompt="""
        Two classifiers each reach about 70 % on SST-2's 872 test sentences. Suppose their errors
        were independent (as if each were tested on its own sample of 872 sentences). Derive the
        half-width, in points of accuracy, of the usual 95 % interval (1.96 standard errors) for
        the difference of their accuracies (2 decimals). Compare it with the chapter's paired
        intervals.
    """,
    answer=4.30,
    atol=0.02,
    hint=("An accuracy on n examples has variance p (1 - p) / n; a difference of two independent "
          "ones has the sum of their variances.",
          "1.96 * sqrt(2 * 0.7 * 0.3 / 872), then times 100 for points."),
    explanation="""
        sqrt(2 x 0.7 x 0.3 / 872) = 0.0219, times 1.96 = 0.0430: 4.30 points either side. The
        two arms are tested on the same sentences and agree on most of them, so the paired
        bootstrap, which resamples examples once for both arms, sees only the sentences where
        they disagree; its interval is narrower than this, and a difference of a few points can
        exclude zero.
    """,
))

# ------------------------------------------------------------- implement: the paired effect


def c_paired_effect(a: list, b: list, gold) -> float:
    """The difference of accuracies ``a - b`` in points, averaged over seeds: ``a[k]`` and
    ``b[k]`` are seed ``k``'s predictions of the two arms on the same test examples."""
    # Your code here: compare each arm with gold, average over seeds, then over examples.
    raise NotImplementedError("write c_paired_effect")


def _paired_cases() -> list[Case]:
    rng = np.random.default_rng(7)
    out = []
    for seeds, n in ((1, 10), (3, 40), (2, 25)):
        gold = rng.integers(0, 2, n)
        a = [np.where(rng.random(n) < 0.8, gold, 1 - gold) for _ in range(seeds)]
        b = [np.where(rng.random(n) < 0.6, gold, 1 - gold) for _ in range(seeds)]
        expected = float(np.mean([(x == gold).mean() - (y == gold).mean() for x, y in zip(a, b)]) * 100)
        out.append(Case(args=(a, b, gold), expected=expected, label=f"{seeds} seed(s), {n} examples"))
    g = np.array([0, 1, 1, 0])
    out.append(Case(args=([g.copy()], [1 - g], g), expected=100.0, label="one arm always right, the other never"))
    return out


register(Exercise(
    id="ch07.c_paired_effect",
    title="The effect the chapter's interval is built around",
    kind="implement",
    prompt="""
        Write c_paired_effect(a, b, gold): a and b are lists of prediction arrays, one per seed
        (a[k] and b[k] come from the same seed), gold the test labels. Return the difference of
        accuracies a - b in points (0-100 scale), averaged over the seeds. The chapter's
        bootstrap resamples the per-example version of this number.
    """,
    cases=_paired_cases,
    stub=c_paired_effect,
    outputs=("difference in points",),
    rtol=1e-9,
    atol=1e-9,
    hint=("For each seed, (a[k] == gold) is a vector of 0/1 correctness; its mean is an accuracy.",
          "Average (a[k] == gold) - (b[k] == gold) over k and over the examples, then times 100."),
))

# ------------------------------------------------------------- debug: a majority baseline that peeks


def c_majority_accuracy(train_labels, test_labels) -> float:
    """Accuracy in % of always predicting the most common class."""
    values, counts = np.unique(np.asarray(test_labels), return_counts=True)
    guess = values[np.argmax(counts)]
    return float((np.asarray(test_labels) == guess).mean() * 100)


def _majority_cases() -> list[Case]:
    return [
        Case(args=([0, 0, 0, 1], [1, 1, 1, 0]), expected=25.0, label="the classes swap between train and test"),
        Case(args=([1, 1, 0], [1, 0, 1, 1, 0]), expected=60.0, label="the same majority in both"),
        Case(args=([2, 2, 1, 0], [0, 0, 1, 2]), expected=25.0, label="three classes"),
    ]


register(Exercise(
    id="ch07.c_majority_accuracy",
    title="A majority baseline that scores too well",
    kind="debug",
    prompt="""
        c_majority_accuracy is meant to be the chapter's majority-class baseline: the accuracy on
        the test labels of always predicting one class, chosen without seeing the test set. On
        a test set whose classes are the other way round from the training set's, it still
        scores above 50 %. Find the bug and fix it.
    """,
    cases=_majority_cases,
    stub=c_majority_accuracy,
    outputs=("accuracy %",),
    rtol=1e-9,
    atol=1e-9,
    hint=("Which labels does it count to choose the class?",
          "A baseline may learn from the training labels only; the test labels are for scoring."),
))
