"""Chapter 1's exercises: a bigram probability, add-k, perplexity, continuation counts,
modified Kneser-Ney discounts, and PPMI."""

from __future__ import annotations

import math

import numpy as np

from .core import Case, Exercise, register

# ---------------------------------------------------------------- 1. a bigram probability


def bigram_prob(sentences: list[list[str]], prev: str, word: str) -> float:
    """Return the maximum-likelihood P(word | prev) with <s> and </s> around every sentence."""
    # Your code here: count the bigrams (prev, word) and how often prev is followed by anything.
    raise NotImplementedError("write bigram_prob")


def _bigram_cases() -> list[Case]:
    from companion.counting import MLE

    corpus = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "cat"]]
    lm = MLE.fit(corpus, 2)
    out = []
    for prev, word, label in [("the", "cat", "a seen bigram"), ("<s>", "the", "the sentence start"),
                              ("cat", "</s>", "the sentence end"), ("sat", "</s>", "a word always last"),
                              ("the", "ran", "an unseen bigram"), ("cat", "sat", "a word with three followers")]:
        out.append(Case(args=(corpus, prev, word), expected=lm.prob(word, [prev]), label=label))
    out.append(Case(args=([["x", "x", "x"]], "x", "x"), expected=2 / 3, label="a word repeated"))
    out.append(Case(args=(corpus, "zebra", "cat"), expected=0.0, label="a context never seen (return 0.0)"))
    return out


register(Exercise(
    id="ch01.bigram_prob",
    title="A bigram probability by counting",
    prompt="""
        Each sentence is read as `<s> w1 ... wm </s>`: `<s>` is a context only, `</s>` is a word
        the model predicts. The maximum-likelihood bigram probability is

            P(word | prev) = C(prev word) / C(prev ·)

        where C(prev ·) counts every bigram that starts with prev (so `</s>` never starts one).

        Write `bigram_prob(sentences, prev, word)` for a list of token lists. Return 0.0 when
        prev is never followed by anything.
    """,
    cases=_bigram_cases,
    stub=bigram_prob,
    hint="Build the padded list ['<s>'] + s + ['</s>'] and zip it with itself shifted by one.",
))

# ---------------------------------------------------------------- 2. add-k


def add_k(ngram_count: int, context_count: int, vocab_size: int, k: float) -> float:
    """Return the add-k estimate of P(word | context) from the counts."""
    # Your code here: one line.
    raise NotImplementedError("write add_k")


register(Exercise(
    id="ch01.add_k",
    title="Add-k smoothing",
    prompt="""
        Add-k smoothing pretends every possible next word was seen k more times than it was:

            P(w | c) = (C(c w) + k) / (C(c) + k |V|)

        Write `add_k(ngram_count, context_count, vocab_size, k)`. (Check: summed over the |V|
        possible words, the probabilities add up to 1; with k = 1 it is Laplace's add-one.)
    """,
    cases=[
        Case(args=(3, 10, 5, 1.0), expected=4 / 15, label="add-one"),
        Case(args=(0, 10, 5, 1.0), expected=1 / 15, label="an unseen n-gram"),
        Case(args=(3, 10, 5, 0.5), expected=3.5 / 12.5, label="k = 0.5"),
        Case(args=(0, 0, 4, 0.1), expected=0.25, label="an unseen context: uniform"),
        Case(args=(7, 7, 13190, 0.01), expected=7.01 / (7 + 131.9), label="Brown's vocabulary, small k"),
    ],
    stub=add_k,
    hint="(ngram_count + k) / (context_count + k * vocab_size).",
))

# ---------------------------------------------------------------- 3. perplexity


def perplexity(probs: list[float]) -> float:
    """Return the perplexity of a model that gave these probabilities to the tokens of a text."""
    # Your code here: the exponential of the average negative log-probability.
    raise NotImplementedError("write perplexity")


register(Exercise(
    id="ch01.perplexity",
    title="Perplexity from token probabilities",
    prompt="""
        Perplexity is exp of the average negative log-probability per token:

            PPL = exp(-(1/N) Σ log p_i)

        (the same number as 2 to the cross-entropy in bits). A model that is uniform over |V|
        words has perplexity |V|; a model that is always sure and right has perplexity 1.

        Write `perplexity(probs)` for a non-empty list of per-token probabilities. Return
        `math.inf` if a probability is 0.
    """,
    cases=lambda: [
        Case(args=([0.25] * 8,), expected=4.0, label="uniform over 4 words"),
        Case(args=([1.0, 1.0],), expected=1.0, label="always sure and right"),
        Case(args=([0.5, 0.125],), expected=4.0, label="two different tokens"),
        Case(args=([0.1, 0.2, 0.3, 0.4],), expected=math.exp(-np.mean(np.log([0.1, 0.2, 0.3, 0.4]))),
             label="four tokens"),
        Case(args=([0.5, 0.0],), expected=math.inf, label="a zero probability"),
        Case(args=([1e-300] * 3,), expected=1e300, label="tiny probabilities (use logs, not a product)"),
    ],
    stub=perplexity,
    hint="Sum math.log(p) (check p == 0 first), divide by len(probs), negate and take math.exp.",
))

# ---------------------------------------------------------------- 4. continuation counts


def continuation_count(bigrams: list[tuple[str, str]], word: str) -> int:
    """Return N1+(· word): how many distinct words come right before ``word`` in ``bigrams``."""
    # Your code here: a set of the left neighbours.
    raise NotImplementedError("write continuation_count")


def _continuation_cases() -> list[Case]:
    sf = [("san", "francisco")] * 50 + [("the", "glasses"), ("my", "glasses"), ("old", "glasses"),
                                          ("my", "glasses")]
    return [
        Case(args=(sf, "francisco"), expected=1, label="'francisco': 50 times, always after 'san'"),
        Case(args=(sf, "glasses"), expected=3, label="'glasses': 4 times after 3 different words"),
        Case(args=(sf, "san"), expected=0, label="a word never second"),
        Case(args=([], "a"), expected=0, label="no bigrams"),
        Case(args=([("a", "a"), ("b", "a"), ("a", "b")], "a"), expected=2, label="a word after itself"),
    ]


register(Exercise(
    id="ch01.continuation_count",
    title="Kneser-Ney's continuation count",
    prompt="""
        Kneser-Ney's insight: a lower-order distribution is only used when the longer context
        failed, so it should ask "how many different contexts does this word complete?", not
        "how often does it occur?". "Francisco" is frequent but almost only after "San".

        Write `continuation_count(bigrams, word)` that returns the number of *distinct* words
        v with (v, word) in the list of bigram tuples.
    """,
    cases=_continuation_cases,
    stub=continuation_count,
    hint="len({v for v, w in bigrams if w == word}).",
))

# ---------------------------------------------------------------- 5. modified KN discounts


def kn_discounts(n1: int, n2: int, n3: int, n4: int) -> tuple[float, float, float]:
    """Return Chen & Goodman's modified Kneser-Ney discounts (D1, D2, D3+)."""
    # Your code here: Y first, then the three discounts.
    raise NotImplementedError("write kn_discounts")


def _discount_cases() -> list[Case]:
    from companion.counting import modified_discounts

    rows = [((200, 434, 1093, 2045), "unigrams of Brown's training split (continuation counts)"),
            ((214000, 31000, 11000, 5600), "a typical trigram table"),
            ((10, 5, 3, 2), "a small table"),
            ((1, 1, 1, 1), "one n-gram each")]
    out = []
    for n, label in rows:
        d = modified_discounts([0, *n])
        if d is None:  # outside the valid range: skip the case rather than test garbage
            continue
        out.append(Case(args=n, expected=d, label=label))
    return out


register(Exercise(
    id="ch01.kn_discounts",
    title="Modified Kneser-Ney's three discounts",
    prompt="""
        Let n_r be the number of n-grams (of one order) with count r. Chen & Goodman estimate

            Y  = n1 / (n1 + 2 n2)
            D1 = 1 - 2 Y n2 / n1
            D2 = 2 - 3 Y n3 / n2
            D3+ = 3 - 4 Y n4 / n3

        and subtract D1 from counts of 1, D2 from counts of 2, D3+ from larger counts.

        Write `kn_discounts(n1, n2, n3, n4)` returning the tuple (D1, D2, D3+).
    """,
    cases=_discount_cases,
    stub=kn_discounts,
    hint="Compute y = n1 / (n1 + 2 * n2) once; then each D_r = r - (r + 1) * y * n_{r+1} / n_r.",
))

# ---------------------------------------------------------------- 6. PPMI


def ppmi_matrix(counts: np.ndarray) -> np.ndarray:
    """Return the positive PMI of a dense word x context count matrix (0 where a count is 0)."""
    # Your code here: probabilities of cells, rows and columns, then log, then clip at 0.
    raise NotImplementedError("write ppmi_matrix")


def _ppmi_cases() -> list[Case]:
    from companion.counting import ppmi

    rng = np.random.default_rng(0)
    mats = [
        (np.array([[2.0, 0.0], [0.0, 2.0]]), "two words that only see themselves"),
        (np.array([[1.0, 1.0], [1.0, 1.0]]), "independent: PMI 0 everywhere"),
        (rng.integers(0, 6, (5, 4)).astype(float), "a random 5 x 4 count matrix"),
        (np.array([[10.0, 0.0, 1.0], [0.0, 3.0, 0.0]]), "zeros stay zero"),
    ]
    return [Case(args=(m,), expected=ppmi(m, alpha=1.0).toarray(), label=label) for m, label in mats]


register(Exercise(
    id="ch01.ppmi_matrix",
    title="Positive pointwise mutual information",
    prompt="""
        For a word x context count matrix C with total N = Σ C:

            PMI(w, c) = log( P(w, c) / (P(w) P(c)) ),  P(w, c) = C[w, c] / N,
            P(w) = row sum / N,  P(c) = column sum / N

        PPMI keeps max(PMI, 0), and is 0 where C[w, c] = 0 (log 0 is -inf, clipped to 0).

        Write `ppmi_matrix(counts)` for a dense NumPy array and return a dense array of the same
        shape (natural logarithm).
    """,
    cases=_ppmi_cases,
    stub=ppmi_matrix,
    hint="Compute the outer product of row and column probabilities; use np.errstate(divide='ignore') "
         "around the log and np.maximum(pmi, 0) with np.nan_to_num for the -inf cells.",
))
