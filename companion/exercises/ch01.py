"""Chapter 1's exercises. 1a (n-gram models): a bigram probability, add-k, the mass add-k
gives the unseen (derive), perplexity, the share of unseen test trigrams (predict), continuation
counts, why Kneser-Ney counts contexts (concept), modified Kneser-Ney discounts. 1b (count
vectors): PPMI, folding a query into an LSA space (debug), why LSA matches a document without
the query's words (concept), and an open task on windows and Brown-cluster features (extend)."""

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
    hint=("Pad every sentence: ['<s>'] + s + ['</s>'].",
          ("zip the padded list with itself shifted by one to get the bigrams; count them and "
           "their first words.")),
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
    hint=("The numerator is the count plus k; the denominator must make the |V| estimates sum to 1.",
          "Each of the |V| words gets k extra, so the context's total grows by k * |V|."),
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
    hint=("A product of many small probabilities underflows to 0.0: work with logarithms.",
          "Sum math.log(p) (check p == 0 first), divide by len(probs), negate and take math.exp."),
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
    hint=("Distinct words: collect them in a set.",
          "The left neighbours of word are the v of the pairs (v, w) with w == word."),
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
    hint=("Compute Y once and reuse it in the three discounts.",
          "Each D_r = r - (r + 1) * Y * n_{r+1} / n_r, for r = 1, 2, 3."),
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
    hint=("P(w) P(c) for every cell is an outer product of the row and column probabilities.",
          ("Take the log under np.errstate(divide='ignore'), then np.maximum(pmi, 0) with "
           "np.nan_to_num for the -inf cells.")),
))

# ---------------------------------------------------------------- 7. the mass add-k gives the unseen


def unseen_mass(context_count: int, n_followers: int, vocab_size: int, k: float) -> float:
    """Return the total add-k probability of the words never seen after a context."""
    # Your code here: derive it first; it is one line.
    raise NotImplementedError("write unseen_mass")


def _unseen_mass_cases() -> list[Case]:
    from companion.counting import AddK, NGramCounts

    out = []
    corpus = [["a", "b", "c"], ["a", "c"], ["b", "b", "a"]]
    counts = NGramCounts(corpus, 2)
    for k in (1.0, 0.1):
        lm = AddK(counts, k=k)
        p = lm.next_distribution(["a"])
        seen = {counts.vocab.id(w) for w in ("b", "c", "</s>")}  # what followed "a"
        mass = float(sum(p[i] for i in range(1, len(p)) if i not in seen))
        out.append(Case(args=(3, 3, counts.vocab.n_predictable, k), expected=mass,
                        label=f"'a' in a toy corpus, k = {k}"))
    out.append(Case(args=(10, 4, 13190, 1.0), expected=13186 / 13200, label="Brown's |V|, add-one"))
    out.append(Case(args=(0, 0, 50, 0.5), expected=1.0, label="a context never seen"))
    return out


register(Exercise(
    id="ch01.unseen_mass",
    kind="derive",
    title="How much probability add-k gives to the unseen",
    prompt="""
        A context c was seen C(c) times, followed by N1+(c ·) distinct words. Derive, from
        the add-k formula P(w | c) = (C(c w) + k) / (C(c) + k |V|), the total probability of
        the |V| - N1+(c ·) words that never followed c.

        Write `unseen_mass(context_count, n_followers, vocab_size, k)`. Then use it on Brown:
        with |V| = 13,190 and k = 1, how much is left for the words a context was actually
        followed by, if it was seen 100 times with 40 distinct followers?
    """,
    cases=_unseen_mass_cases,
    stub=unseen_mass,
    hint=("Every unseen word has C(c w) = 0, so each gets the same probability.",
          "Multiply the probability of one unseen word by how many unseen words there are."),
))

# ---------------------------------------------------------------- 8. predict: unseen trigrams

register(Exercise(
    id="ch01.unseen_trigrams",
    kind="predict",
    title="How many test trigrams were never seen?",
    prompt="""
        Bengio et al.'s split trains on 800,000 words of Brown. Before you run the next cell:
        what share of the trigrams of the test split (one per test token, `<s>` included in the
        history) never occurs in the training split? Write your guess as a fraction (0.3 for
        30 %).
    """,
    rtol=0.0,
    atol=0.1,
    unit=".0%",
    explanation="""
        Most people guess far too low. The number of possible trigrams is |V|^3, about 2e12 for
        Brown, and 800,000 words show at most 800,000 of them; the test text keeps asking for
        combinations that are perfectly ordinary yet never happened to occur. This is Zipf's
        law one level up: n-grams have a long tail too.
    """,
))

# ---------------------------------------------------------------- 9. concept: continuation counts

register(Exercise(
    id="ch01.why_continuation",
    kind="concept",
    title="Why Kneser-Ney's lower order counts contexts",
    prompt="""
        Kneser-Ney replaces the unigram frequency #(w)/N in its lower order by the continuation
        probability N1+(· w) / N1+(· ·). Which reason is the right one?
    """,
    choices={
        "a": "The lower order decides only when the longer context was unseen, so it should favour "
             "words that follow many contexts, not words that are merely frequent.",
        "b": "Continuation counts are smaller, so the table takes less memory.",
        "c": "Frequent words need a larger discount, and continuation counts provide it.",
        "d": "Without it the probabilities of a context would not sum to 1.",
    },
    answer="a",
    hint=("Think of 'york': frequent, but after which words?",),
    explanation="""
        (a). 'York' is frequent but nearly always after 'new', where the bigram already
        handles it; after an unseen context it is a poor guess. Kneser and Ney derived the
        continuation probability by asking that the bigram model reproduce the unigram
        frequencies. (d) is false: absolute discounting with any proper lower-order
        distribution sums to 1.
    """,
))

# ---------------------------------------------------------------- 10. debug: LSA fold-in


def fold_in(query_weights, u, s):
    """Map a query's weighted term vector into the LSA space: q = x_q^T U_k S_k^{-1}."""
    import numpy as np

    q = np.asarray(query_weights, dtype=float) @ np.asarray(u, dtype=float)
    return q * np.asarray(s, dtype=float)


def _fold_in_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    out = []
    for n_terms, n_docs, k in ((6, 5, 2), (10, 8, 3)):
        x = rng.poisson(1.0, (n_terms, n_docs)).astype(float) + np.eye(n_terms, n_docs)
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        u, s = u[:, :k], s[:k]
        # folding in a document of X itself must give back its row of V_k
        out.append(Case(args=(x[:, 1], u, s), expected=vt[:k, 1],
                        label=f"document 1 of a {n_terms} x {n_docs} matrix, k = {k}",
                        outputs=("q (the query's coordinates)",)))
    out.append(Case(args=([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], [2.0, 4.0]), expected=np.array([0.5, 0.0]),
                    label="a one-term query, S = diag(2, 4)", outputs=("q (the query's coordinates)",)))
    return out


register(Exercise(
    id="ch01.fold_in",
    kind="debug",
    title="Fold a query into the LSA space",
    prompt="""
        LSA (Deerwester et al. 1990) factors the term x document matrix X ~ U_k S_k V_k^T; a
        document is a row of V_k. A new query with weighted term vector x_q is mapped to

            q = x_q^T U_k S_k^{-1}

        so that a column of X itself would land exactly on its row of V_k. The function below
        has a bug: find it and fix it.
    """,
    cases=_fold_in_cases,
    stub=fold_in,
    hint=("Fold in a column of X and compare the result with the matching row of V_k.",
          "S_k^{-1} is a diagonal matrix: what does multiplying by it do to each coordinate?"),
))

# ---------------------------------------------------------------- 11. concept: LSA and synonyms

register(Exercise(
    id="ch01.lsa_synonymy",
    kind="concept",
    title="How LSA matches a document without the query's words",
    prompt="""
        Term matching scores a query and a document that share no term at 0, whatever they are
        about. LSA can rank such a document high. Why?
    """,
    choices={
        "a": "The SVD adds a thesaurus to the term-document matrix: before the factorisation, each "
             "term's counts are copied to the terms a dictionary lists as its synonyms.",
        "b": "TF-IDF gives rare terms a weight above zero in every document.",
        "c": "Folding the query in adds the words of its nearest documents to it.",
        "d": "The k kept singular directions give terms used in the same documents similar "
             "coordinates, so a query and a document can meet without a shared word.",
    },
    answer="d",
    hint=("What does a truncated SVD keep, and what does it throw away?",),
    explanation="""
        (d). The truncated SVD is the best rank-k approximation of X: it keeps the directions
        along which many terms vary together across documents. Terms used in the same
        documents (car, automobile) get similar rows of U_k S_k, so the query and the document
        meet in those directions even when they share no word.
    """,
))

# ---------------------------------------------------------------- 12. extend: windows and features


def window_study():
    """Open task; the worked answer is ``solutions.ch01.window_study``."""
    raise NotImplementedError("an open task: see the prompt")


register(Exercise(
    id="ch01.window_study",
    kind="extend",
    title="Narrow and wide windows; Brown clusters as features",
    prompt="""
        (a) Build count vectors with window=2 and with window=10 and compare their WordSim-353
        and SimLex-999 scores, with a bootstrap interval over the word pairs: which kind of
        similarity does a narrow window favour? (b) Brown's bit strings are features: for each
        prefix length 2, 4, 6, 8 and the full path, how often do two words that share it
        have the same most frequent part-of-speech tag in Brown? Where does the prefix stop
        telling you the syntax and start telling you the topic?
    """,
    stub=window_study,
    hint=("Use count_word_vectors(brown_lower, window=...) and similarity_table as in the chapter.",
          "For (b), load_brown().tagged_words() gives (word, tag); keep each word's most frequent tag."),
))

# ---------------------------------------------------------------- 13. predict: what PPMI keeps

register(Exercise(
    id="ch01.ppmi_kept",
    kind="predict",
    title="How many co-occurrence cells does PPMI keep?",
    prompt="""
        Section 5 counts co-occurrences in all of Brown (window 5 each side, words seen at least
        5 times): about 2.3 million cells of the word x context matrix are non-zero. PPMI
        (context smoothing alpha = 0.75) keeps a cell only where the pair occurs *more* often
        than chance. Before you run the cell: what share of the non-zero cells keeps a
        positive PMI? Write a share between 0 and 1.
    """,
    rtol=0.0,
    atol=0.15,
    unit=".0%",
    hint=("A pair seen once, of two rare words, is far above chance. How many cells are like that?",),
    explanation="""
        Most people guess about half. But most non-zero cells hold a count of 1 or 2 between
        words that are not frequent: for them one sighting is already more than the product of
        their probabilities predicts, so PMI is positive. Only the cells of frequent words that
        are near everything (the, of, and) fall below chance, and smoothing the context
        distribution (alpha = 0.75) lowers rare contexts' PMI a little, not enough to clip
        them. PPMI throws away few cells; what it changes is their weights.
    """,
))

# ---------------------------------------------------------------- 14. implement: nearest neighbours


def cosine_neighbours(vectors, words, word, k):
    """The ``k`` words whose rows of ``vectors`` have the highest cosine with ``word``'s row,
    best first, without ``word`` itself."""
    # Your code here: normalise the rows, one matrix-vector product, sort.
    raise NotImplementedError("write cosine_neighbours")


def _neighbour_cases() -> list[Case]:
    from companion.counting import sparse_neighbours

    rng = np.random.default_rng(11)
    out = []
    for n, d, k, label in ((6, 3, 2, "six words in 3-D"), (40, 8, 5, "40 words in 8-D"),
                           (25, 4, 24, "every other word")):
        v = rng.normal(size=(n, d)) * rng.lognormal(0.0, 1.0, size=(n, 1))  # lengths vary
        words = [f"w{i}" for i in range(n)]
        index = {w: i for i, w in enumerate(words)}
        expected = [w for w, _ in sparse_neighbours(v, index, words[1], k)]
        out.append(Case(args=(v, words, words[1], k), expected=expected, label=label,
                        outputs=("the neighbours, best first",)))
    v = np.array([[1.0, 0.0], [10.0, 1.0], [0.1, 0.0], [0.0, 1.0]])
    out.append(Case(args=(v, ["a", "b", "c", "d"], "a", 2), expected=["c", "b"],
                    label="a short vector in the same direction beats a long one nearby",
                    outputs=("the neighbours, best first",)))
    return out


register(Exercise(
    id="ch01.cosine_neighbours",
    title="Nearest neighbours by cosine",
    prompt="""
        Section 5's neighbour tables rank every word by the cosine of its vector with the query
        word's: cos(u, v) = u . v / (|u| |v|). The length of a vector (how often the word was
        counted) must not matter, only its direction.

        Write `cosine_neighbours(vectors, words, word, k)`: `vectors` is a dense |V| x d array
        whose row i belongs to `words[i]`. Return the k other words with the highest cosine,
        best first, as a list of strings.
    """,
    cases=_neighbour_cases,
    stub=cosine_neighbours,
    hint=("Divide every row by its length first; then a dot product is a cosine.",
          "Set the query word's own score to -inf before you sort, so it never comes first."),
))
