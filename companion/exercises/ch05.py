"""Chapter 5's exercises: SIF, the PV-DBOW gradient, a bigram-swap noiser with a bug,
Quick-thoughts' loss, why max pooling, the Quick-thoughts speed-up, and SIF on our own vectors."""

from __future__ import annotations

import random

import numpy as np

from .core import Case, Exercise, numeric_gradient, register

# --------------------------------------------------------------------------- SIF (implement)


def sif_embed(X: np.ndarray, weights: np.ndarray, sentences: list[list[int]]) -> np.ndarray:
    """Return the SIF embeddings ``[n, d]``: weighted means of the rows of ``X`` (one list of
    word ids per sentence, ``weights[w] = a / (a + p(w))``), then the projection on their first
    principal component (uncentred) removed."""
    # Your code here: 1) v_s = mean over the words w of s of weights[w] * X[w];
    # 2) u = first right singular vector of the stacked v_s; 3) v_s - (v_s . u) u.
    raise NotImplementedError("write sif_embed")


def _sif_ref(X, weights, sentences):
    V = np.stack([np.mean([weights[w] * X[w] for w in s], axis=0) for s in sentences])
    u = np.linalg.svd(V, full_matrices=False)[2][0]
    return V - np.outer(V @ u, u)


def _sif_cases() -> list[Case]:
    rng = np.random.default_rng(5)
    out = []
    for n, d, V, lab in [(4, 2, 5, "four sentences, d = 2"), (12, 6, 20, "twelve sentences, d = 6"),
                         (30, 10, 50, "thirty sentences, d = 10")]:
        X = rng.normal(size=(V, d)) + 2.0  # a shared offset: a strong common component
        p = rng.dirichlet(np.ones(V))
        w = 1e-3 / (1e-3 + p)
        sents = [list(rng.integers(0, V, size=int(rng.integers(2, 7)))) for _ in range(n)]
        out.append(Case(args=(X, w, sents), expected=_sif_ref(X, w, sents), label=lab))
    # the sign of a singular vector is arbitrary; the projection removed is not
    return out


register(Exercise(
    id="ch05.sif_embed",
    title="SIF: weighted average, common component removed",
    kind="implement",
    atol=1e-8,
    rtol=1e-6,
    prompt="""
        Arora et al.'s SIF embedding of a sentence s is

            v_s = (1 / |s|) sum_{w in s} a / (a + p(w)) x_w

        followed by removing, from every v_s, its projection on u, the first (right) singular
        vector of the matrix whose rows are the v_s (no centring):  v_s <- v_s - (v_s . u) u.

        Write `sif_embed(X, weights, sentences)`: X is the [V, d] word-vector matrix (NumPy),
        weights[w] = a / (a + p(w)) is given, sentences is a list of word-id lists. Return the
        [n, d] array of embeddings.
    """,
    cases=_sif_cases,
    stub=sif_embed,
    outputs=("SIF embeddings",),
    hint=(
        "Build the n x d matrix of weighted means first; one np.linalg.svd gives u.",
        "np.linalg.svd(V, full_matrices=False) returns (U, S, Vt); u = Vt[0]. Then "
        "V - np.outer(V @ u, u).",
    ),
))

# --------------------------------------------------------------------------- PV-DBOW gradient (derive)


def dbow_gradient(d: np.ndarray, u_words: np.ndarray, u_noise: np.ndarray) -> np.ndarray:
    """Return dL/dd for PV-DBOW with negative sampling: ``d`` the paragraph vector, ``u_words``
    ``[m, d]`` the output vectors of the document's m words, ``u_noise`` ``[m, k, d]`` the output
    vectors of each word's k noise words."""
    # Your code here: L = sum_i [ -log sig(u_i . d) - sum_j log sig(-u_ij . d) ].
    raise NotImplementedError("write dbow_gradient")


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _dbow_loss(d, u_words, u_noise):
    pos = -np.log(_sig(u_words @ d)).sum()
    neg = -np.log(_sig(-(u_noise @ d))).sum()
    return float(pos + neg)


def _dbow_cases() -> list[Case]:
    rng = np.random.default_rng(11)
    out = []
    for m, k, dim, lab in [(1, 1, 3, "one word, one noise word"), (4, 5, 4, "four words, five noise each"),
                           (7, 2, 10, "seven words, d = 10")]:
        d, uw, un = rng.normal(size=dim), rng.normal(size=(m, dim)), rng.normal(size=(m, k, dim))
        out.append(Case(args=(d, uw, un), expected=numeric_gradient(lambda x: _dbow_loss(x, uw, un), d),
                        label=lab))
    d = np.zeros(4)
    uw, un = rng.normal(size=(3, 4)), rng.normal(size=(3, 2, 4))
    out.append(Case(args=(d, uw, un), expected=numeric_gradient(lambda x: _dbow_loss(x, uw, un), d),
                    label="a new paragraph vector at zero"))
    return out


register(Exercise(
    id="ch05.dbow_gradient",
    title="The PV-DBOW gradient for the paragraph vector",
    kind="derive",
    rtol=1e-5,
    atol=1e-7,
    prompt="""
        PV-DBOW is skip-gram with the paragraph vector d in place of the input word. For a
        document of m words, with output vectors u_i of its words and u_ij of word i's k noise
        words, negative sampling minimises

            L(d) = sum_i [ -log sigma(u_i . d) - sum_j log sigma(-u_ij . d) ].

        Derive dL/dd on paper, then write `dbow_gradient(d, u_words, u_noise)` (u_words is
        [m, d], u_noise is [m, k, d]). The checker compares with finite differences of L. This
        is the whole of inference for an unseen document: every u is frozen, only d moves.
    """,
    cases=_dbow_cases,
    stub=dbow_gradient,
    outputs=("dL/dd",),
    hint=(
        "d/dx of -log sigma(x) is sigma(x) - 1; d/dx of -log sigma(-x) is sigma(x).",
        "dL/dd = sum_i (sigma(u_i.d) - 1) u_i + sum_ij sigma(u_ij.d) u_ij.",
    ),
))

# --------------------------------------------------------------------------- bigram swaps (debug)


def swap_bigrams(tokens: list[str], px: float, rng: random.Random) -> list[str]:
    """Hill et al.'s second noise: swap each non-overlapping bigram (positions 0-1, 2-3, ...)
    with probability ``px``; one ``rng.random()`` draw per bigram, in order."""
    out = list(tokens)
    for i in range(0, len(out) - 1):  # walk the bigrams
        if rng.random() < px:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _swap_ref(tokens, px, rng):
    out = list(tokens)
    for i in range(0, len(out) - 1, 2):
        if rng.random() < px:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _swap_cases() -> list[Case]:
    s = "the cat sat on the mat".split()
    odd = "a b c d e".split()
    long = [f"w{i}" for i in range(20)]
    cases = []
    for toks, px, seed, lab in [(s, 1.0, 0, "px = 1: every bigram swapped"), (odd, 1.0, 0, "odd length, px = 1"),
                                (s, 0.0, 0, "px = 0: nothing swapped"), (long, 0.5, 3, "20 tokens, px = 0.5, seed 3"),
                                (["one"], 1.0, 0, "a single token")]:
        cases.append(Case(args=(toks, px, random.Random(seed)), expected=_swap_ref(toks, px, random.Random(seed)),
                          label=lab, outputs=("noisy tokens",)))
    return cases


register(Exercise(
    id="ch05.swap_bigrams",
    title="A bigram-swap noiser with a bug",
    kind="debug",
    prompt="""
        SDAE's corruption swaps *non-overlapping* bigrams: with tokens t0 t1 t2 t3 t4 the
        candidates are (t0, t1) and (t2, t3), each swapped with probability px, one
        rng.random() draw per bigram in order. The function below gets some sentences wrong
        (try px = 1 on "the cat sat on the mat": the paper's noise would give
        "cat the on sat mat the"). Find and fix the bug.
    """,
    cases=_swap_cases,
    stub=swap_bigrams,
    hint=(
        "Which positions does the loop visit? How many times is token 1 moved?",
        "Step through the bigrams two positions at a time: range(0, len(out) - 1, 2).",
    ),
))

# --------------------------------------------------------------------------- Quick-thoughts loss (implement)


def qt_loss(F_: np.ndarray, G: np.ndarray) -> float:
    """Return Quick-thoughts' mean loss for a batch of consecutive sentences of one document,
    context 1: ``F_`` and ``G`` are the ``[B, h]`` outputs of the encoders f and g."""
    # Your code here: scores S = F_ G^T, the diagonal excluded from the softmax of each row;
    # the target of row i is uniform over its neighbours i - 1 and i + 1 (those that exist).
    raise NotImplementedError("write qt_loss")


def _qt_ref(F_, G):
    S = F_ @ G.T
    B = S.shape[0]
    total = 0.0
    for i in range(B):
        others = [j for j in range(B) if j != i]
        m = max(S[i, j] for j in others)
        lse = m + np.log(sum(np.exp(S[i, j] - m) for j in others))
        ctx = [j for j in (i - 1, i + 1) if 0 <= j < B]
        total += -np.mean([S[i, j] - lse for j in ctx])
    return float(total / B)


def _qt_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    out = []
    for B, h, lab in [(3, 2, "three sentences"), (5, 4, "five sentences"), (8, 6, "eight sentences")]:
        F_, G = rng.normal(size=(B, h)), rng.normal(size=(B, h))
        out.append(Case(args=(F_, G), expected=_qt_ref(F_, G), label=lab, outputs=("loss",)))
    F_ = np.eye(4) * 20
    G = np.roll(np.eye(4), 1, axis=0) * 20
    out.append(Case(args=(F_, G), expected=_qt_ref(F_, G), label="large scores (a log-sum-exp must not overflow)",
                    outputs=("loss",)))
    return out


register(Exercise(
    id="ch05.qt_loss",
    title="Quick-thoughts' loss: a softmax over the batch",
    kind="implement",
    rtol=1e-6,
    atol=1e-8,
    prompt="""
        A batch holds B consecutive sentences of one document. With f(s_i) the rows of F_ and
        g(s_j) the rows of G, Quick-thoughts scores every candidate by S_ij = f(s_i) . g(s_j)
        and defines, for each sentence i, a softmax over the *other* sentences of the batch:

            p(j | i) = exp(S_ij) / sum_{j' != i} exp(S_ij').

        The targets are uniform over the true contexts (context 1: i - 1 and i + 1 where they
        exist). Write `qt_loss(F_, G)`: the mean over i of - sum_j target_ij log p(j | i).
    """,
    cases=_qt_cases,
    stub=qt_loss,
    outputs=("loss",),
    hint=(
        "Mask the diagonal out of each row's softmax (it must not count in the denominator).",
        "Per row: lse = log sum over j != i of exp(S_ij) (subtract the row max first); the row's "
        "loss is the mean of lse - S_ij over its one or two neighbours.",
    ),
))

# --------------------------------------------------------------------------- why max pooling (concept)

register(Exercise(
    id="ch05.why_max",
    title="Why did max pooling transfer best?",
    kind="concept",
    prompt="""
        InferSent's BiLSTM produces a vector h_t for every word; the sentence vector pools them.
        Conneau et al. found max pooling (each coordinate: the largest value over the words)
        transferred better than mean pooling or the last state. Which explanation fits the
        way max pooling works?
    """,
    choices={
        "a": "Max pooling makes the vector depend on word order, which mean pooling cannot: the "
             "maximum of each coordinate remembers where in the sentence it was reached.",
        "b": "The last state is better in theory, since it has read the whole sentence; max "
             "pooling only wins because it is faster to train and so sees more data in the same "
             "time.",
        "c": "Max pooling has more parameters than mean pooling, so it can fit more.",
        "d": "Each coordinate can act as a detector that fires on one salient word or phrase "
             "anywhere in the sentence, undiluted by the other words.",
    },
    answer="d",
    hint=("Count the parameters of each pooling; then think of a sentence of 40 words where "
          "one word decides the label.",),
    explanation="""
        (d). No pooling adds parameters (c is false); order comes from the LSTM, not the pooling
        (a); the last state must carry the whole sentence through one vector that the final words
        dominate. Max pooling lets each dimension pick its strongest evidence wherever it is,
        and a mean over 40 words would dilute it 40 times. Conneau et al.'s visualisation shows
        max-pooled dimensions aligned with content words.
    """,
))

# --------------------------------------------------------------------------- QT speed-up (predict)

register(Exercise(
    id="ch05.qt_speedup",
    title="How much faster is Quick-thoughts than Skip-thoughts?",
    kind="predict",
    prompt="""
        The chapter trains Skip-thoughts and Quick-thoughts on the same sentences, with the same
        word-vector and GRU sizes, vocabulary and batch size. Before you run the training cell:
        how many times more training sentences per second does Quick-thoughts process? (A number:
        1 means equally fast.) Think about what each model computes for every word of the two
        neighbouring sentences.
    """,
    rtol=0.5,
    atol=0.0,
    unit=".1f",
    hint=(
        "Skip-thoughts runs two decoders and a softmax over the vocabulary for every word of two "
        "sentences; Quick-thoughts runs two encoders and one B x B score matrix.",
    ),
    explanation="""
        Quick-thoughts encodes each sentence twice (f and g) and scores the batch with one B x B
        product; Skip-thoughts encodes once but decodes two sentences word by word with a softmax
        over |V| words at every step. The gap grows with the vocabulary: at a few thousand words
        it is several times, at the paper's 20,000 words and full-size GRUs it was the difference
        between hours and weeks.
    """,
))

# --------------------------------------------------------------------------- extend


def sif_gain(cos_avg: np.ndarray, cos_sif: np.ndarray, gold: np.ndarray) -> float:
    """Return Spearman(cos_sif, gold) - Spearman(cos_avg, gold): what SIF adds on an
    unsupervised similarity task."""
    # Your code here: rank correlations of each cosine list with the human scores.
    raise NotImplementedError("write sif_gain")


def _gain_checker(a, b, y, same: bool):
    def check(got):
        try:
            got = float(got)
        except (TypeError, ValueError):
            return False, "return one number, a difference of two Spearman correlations"
        if not -2.0 <= got <= 2.0:
            return False, f"a difference of two correlations lies in [-2, 2], got {got}"
        if same and abs(got) > 1e-9:
            return False, "the same cosines twice must give a gain of 0"
        from scipy.stats import spearmanr

        want = spearmanr(b, y)[0] - spearmanr(a, y)[0]
        if abs(got - want) > 1e-6:
            return False, f"expected {want:.4f} (Spearman, not Pearson?)"
        return True

    return check


def _gain_cases() -> list[Case]:
    rng = np.random.default_rng(2)
    y = rng.uniform(0, 5, size=40)
    a = y + rng.normal(0, 3, size=40)
    b = y + rng.normal(0, 1, size=40)
    return [Case(args=(a, b, y), checker=_gain_checker(a, b, y, False), label="a noisier and a cleaner cosine"),
            Case(args=(a, a, y), checker=_gain_checker(a, a, y, True), label="the same cosines twice")]


register(Exercise(
    id="ch05.sif_gain",
    title="SIF on our own word vectors",
    kind="extend",
    prompt="""
        The chapter's SIF claim check uses GloVe vectors trained on six billion tokens. Does SIF
        help as much with our own skip-gram vectors, trained on the chapter's corpus?

        1. Write `sif_gain(cos_avg, cos_sif, gold)`: Spearman of SIF's cosines with the human
           scores minus Spearman of plain averaging's (check() runs loose sanity checks).
        2. Compute both cosine lists on the STS-B and SICK-R test pairs with our skip-gram
           vectors (`AveragedVectors` and `SIF` with the chapter's word probabilities) and
           bootstrap the gain with `cosine_bootstrap`.
        3. Try a = 1e-2, 1e-3, 1e-4, and SIF without the component removal (`remove=False`).
           Which of the two ingredients carries the gain?
    """,
    cases=_gain_cases,
    stub=sif_gain,
    hint=("scipy.stats.spearmanr(x, y)[0] is Spearman's rho.",),
))
