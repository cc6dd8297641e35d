"""Chapter 11b's exercises (a shared-vocabulary MLM across English and Chinese); ids
``ch11.b_<name>`` so that they count for chapter 11 next to 11_probing's. Reference solutions:
the ``# --- 11b ---`` block of solutions/ch11.py."""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: retrieval


def b_retrieval(a: np.ndarray, b: np.ndarray) -> float:
    """Row i of ``a`` and row i of ``b`` are translations of each other. Return precision@1:
    the share of rows i of ``a`` whose most cosine-similar row of ``b`` is row i."""
    # Your code here
    raise NotImplementedError("write b_retrieval")


def _retrieval_cases() -> list[Case]:
    from ..probing.multilingual import retrieval

    out = []
    for n, d, noise, scale, label in ((40, 8, 0.5, 1.0, "40 noisy pairs"), (30, 4, 2.0, 1.0, "very noisy"),
                                      (25, 6, 0.3, 100.0, "b's rows are 100x longer: cosine, not dot")):
        rng = np.random.default_rng(n)
        a = rng.normal(size=(n, d))
        b = scale * (a + noise * rng.normal(size=a.shape)) * rng.uniform(0.5, 2.0, (n, 1))
        out.append(Case(args=(a, b), expected=float(retrieval(a, b).mean()), label=label))
    return out


register(Exercise(
    id="ch11.b_retrieval",
    title="Translation retrieval by cosine",
    kind="implement",
    prompt="""
        Tatoeba gives sentence pairs (English, Chinese). With sentence vectors `a` (English) and
        `b` (Chinese), row i of each being one pair, write `b_retrieval(a, b)` returning
        precision@1: the share of English sentences whose nearest Chinese sentence by *cosine*
        similarity is their own translation. (One case has rows of very different lengths.)
    """,
    cases=_retrieval_cases,
    stub=b_retrieval,
    outputs=("precision@1",),
    atol=1e-12,
    hint=("Divide every row by its norm; then a @ b.T holds all the cosines.",
          "sim.argmax(axis=1) == np.arange(len(a)), averaged."),
))

# --------------------------------------------------------------------------------- implement: AUC


def b_auc(scores: np.ndarray, y: np.ndarray) -> float:
    """ROC AUC of ``scores`` for binary labels ``y`` (1 = positive): the chance that a random
    positive scores above a random negative, ties counted as one half."""
    # Your code here
    raise NotImplementedError("write b_auc")


def _auc_cases() -> list[Case]:
    from ..probing.multilingual import auc

    out = [Case(args=(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])), expected=0.75,
                label="four examples"),
           Case(args=(np.array([1.0, 1.0, 1.0]), np.array([0, 1, 1])), expected=0.5, label="all tied")]
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 60)
    s = np.round(rng.normal(size=60) + y, 1)
    out.append(Case(args=(s, y), expected=auc(s, y), label="60 examples with ties"))
    return out


register(Exercise(
    id="ch11.b_auc",
    title="AUC: chance is 0.5 whatever the threshold",
    kind="implement",
    prompt="""
        A classifier trained on English and applied to Chinese may put every Chinese review on
        one side of its threshold: its accuracy is then exactly the class balance, whatever the
        scores' order. The AUC looks at the order only. Write `b_auc(scores, y)`: the share of
        (positive, negative) pairs in which the positive scores higher, ties counting 1/2.
    """,
    cases=_auc_cases,
    stub=b_auc,
    outputs=("AUC",),
    atol=1e-12,
    hint=("Compare every positive score with every negative score: pos[:, None] - neg[None, :].",
          "((diff > 0) + 0.5 * (diff == 0)).mean()"),
))

# --------------------------------------------------------------------------- debug: packing rows


def b_pack_sentences(ids: list[list[int]], room: int) -> list[list[int]]:
    """Concatenate consecutive sentences into documents of at most ``room`` ids (a sentence
    longer than ``room`` is cut to ``room``)."""
    docs, cur = [], []
    for s in ids:
        s = list(s)[:room]
        if len(cur) + len(s) >= room:  # start a new document when this one would overflow
            docs.append(cur)
            cur = []
        cur += s
    if cur:
        docs.append(cur)
    return docs


def _pack_cases() -> list[Case]:
    from ..probing.multilingual import pack_sentences

    inputs = (([[1, 2], [3], [4, 5, 6], [7]], 3, "fills a row exactly"),
              ([[1, 2, 3, 4], [5]], 3, "a long first sentence"),
              ([[1], [2], [3], [4], [5]], 2, "one-token sentences"))
    return [Case(args=(x, r), expected=pack_sentences(x, r), label=lab) for x, r, lab in inputs]


register(Exercise(
    id="ch11.b_pack_sentences",
    title="Debug: rows that waste room",
    kind="debug",
    prompt="""
        Tatoeba's sentences are short; one per row would fill most of a 48-token row with
        padding, so the chapter packs consecutive sentences of one language into a row.
        `b_pack_sentences` below gives rows that are too short, and on some inputs an empty
        one. Fix it.
    """,
    cases=_pack_cases,
    stub=b_pack_sentences,
    outputs=("documents",),
    hint=("When does a row overflow: at len(cur) + len(s) == room, or only above it?",
          "Use `>` instead of `>=`; an empty row appears when the first sentence already fills the room."),
))

# ------------------------------------------------------------------------------ predict: transfer


register(Exercise(
    id="ch11.b_zero_shot_auc",
    title="Zero-shot: English sentiment on Chinese reviews",
    kind="predict",
    prompt="""
        A logistic regression is trained on our tiny bilingual MLM's English SST-2 sentence
        vectors and applied, unchanged, to Chinese hotel reviews. Chance AUC is 0.5; the same
        classifier trained on Chinese reviews gets the in-language AUC of the table. Before the
        cell runs: what AUC (a number between 0 and 1) will the zero-shot classifier reach,
        averaged over the pre-training seeds?
    """,
    rtol=0.0,
    atol=0.05,
    unit=".2f",
    hint=(("The only bridge between the languages is what the vocabulary shares: how much of the "
           "Chinese text is made of shared tokens (section 3)?"),),
    explanation="""
        mBERT's transfer needs depth, many steps and a lot of text (K et al. 2020 find that
        overlap of word pieces is not even necessary at that scale). Our model trains for a few
        hundred steps on a few hundred thousand tokens per language and the Chinese text shares
        little more than digits and punctuation with the English text: the two languages occupy
        separate regions, and a direction learned in one says nothing in the other.
    """,
))

# ---------------------------------------------------------------------------- concept: centring


register(Exercise(
    id="ch11.b_centering",
    title="Why remove each language's mean vector?",
    kind="concept",
    prompt="""
        Before retrieval and transfer, the chapter subtracts the English mean vector from every
        English sentence vector and the Chinese mean from every Chinese one. Why?
    """,
    choices={
        "a": "To make the vectors unit length, so that cosine equals the dot product.",
        "b": "Much of a multilingual sentence vector says which language it is in; that shared "
             "offset dominates cosines and a classifier's threshold, and removing it leaves what "
             "varies within each language.",
        "c": "Because the Chinese sentences are shorter than the English ones.",
        "d": "It uses the labels of the target language, so it is not zero-shot any more.",
    },
    answer="b",
    hint=("Compare cos(a + u, b + v) with cos(a, b) when u and v are large and different.",),
    explanation="""
        Libovicky et al. (2020) found that mBERT's vectors carry a strong language-specific
        component; subtracting each language's mean (computed without labels) made them far more
        language-neutral. It needs only unlabelled target text, so the transfer stays zero-shot.
    """,
))

# ------------------------------------------------------------------------------- concept: chance


register(Exercise(
    id="ch11.b_chance",
    title="Chance for retrieval",
    kind="concept",
    prompt="""
        Retrieval ranks all 1,000 held-out Chinese sentences for each English one. A model whose
        vectors carry no information about the translation picks one at random. What is its
        expected precision@1, in percent (a number)?
    """,
    answer=0.1,
    atol=1e-9,
    hint=("One right answer among how many candidates?",),
    explanation="""
        1 / 1,000 = 0.1 %. A precision@1 of 1 % is ten times chance but still a failure for
        translation retrieval; both numbers belong in the table.
    """,
))
