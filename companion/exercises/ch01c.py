"""Chapter 1c's exercises (retrieval, topics and near-duplicates): ids ``ch01.c_<name>``.
An IDF by hand (derive, a number), cosine ranking (implement), pLSA's E-step (implement), why
LDA can score a new document (concept), MinHash's standard error (concept, a number), the share
of near-duplicates LSH catches (predict), a banding bug (debug) and an open study of the number
of topics (extend). Worked answers: ``solutions/ch01c.py`` (re-exported by ``solutions/ch01.py``)."""

from __future__ import annotations

import math

import numpy as np

from .core import Case, Exercise, register

# ---------------------------------------------------------------- 1. derive: an IDF by hand

register(Exercise(
    id="ch01.c_idf_by_hand",
    kind="derive",
    title="An inverse document frequency by hand",
    prompt="""
        A collection has N = 8 documents; the term "ballot" occurs in 2 of them. What is its
        IDF with scikit-learn's default (smoothed) formula, idf = ln((1 + N) / (1 + df)) + 1?
        Answer with a number (3 decimals).
    """,
    answer=math.log(9 / 3) + 1,
    atol=2e-3,
    hint=("Put N = 8 and df = 2 into the formula; ln is the natural logarithm.",),
))

# ---------------------------------------------------------------- 2. implement: cosine ranking


def c_cosine_rank(doc_vectors, query_vector):
    """Return the document indices ordered by cosine with the query, best first (ties: lower
    index first). ``doc_vectors`` is ``[n_docs, n_terms]``, ``query_vector`` ``[n_terms]``."""
    # Your code here: normalise the rows and the query, one matrix-vector product, a stable sort.
    raise NotImplementedError("write c_cosine_rank")


def _rank_cases() -> list[Case]:
    rng = np.random.default_rng(4)
    out = []
    for n_docs, n_terms in ((5, 4), (12, 30)):
        d = rng.random((n_docs, n_terms)) * (rng.random((n_docs, n_terms)) < 0.5)
        d[0] = d[1] * 3.0  # same direction, different length: a cosine tie
        q = rng.random(n_terms)
        unit = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-300)
        cos = unit @ (q / np.linalg.norm(q))
        order = np.argsort(-np.round(cos, 12), kind="stable")
        out.append(Case(args=(d, q), expected=order, label=f"{n_docs} documents, {n_terms} terms",
                        outputs=("the ranking",)))
    return out


register(Exercise(
    id="ch01.c_cosine_rank",
    kind="implement",
    title="Rank documents by cosine",
    prompt="""
        The vector space model ranks documents by the cosine of their weighted term vector with
        the query's: cos(d, q) = d . q / (|d| |q|). Write c_cosine_rank(doc_vectors, query_vector)
        returning the document indices, best first. Two documents whose vectors point the same
        way tie, whatever their lengths: break ties by the lower index (np.argsort with
        kind="stable" on the negated cosines, rounded to 12 decimals).
    """,
    cases=_rank_cases,
    stub=c_cosine_rank,
    hint=(("Divide each row by its length before the dot product; a longer document is not a "
           "better match."),
          "np.argsort(-np.round(cos, 12), kind='stable')"),
))

# ---------------------------------------------------------------- 3. implement: pLSA's E-step


def c_plsa_estep(theta, phi, d, w):
    """Return p(z = k | d, w) for every topic k, a vector of length K, from ``theta`` [D, K]
    (topic proportions of the documents) and ``phi`` [K, V] (word distributions of the topics)."""
    # Your code here: Bayes' rule over the topics.
    raise NotImplementedError("write c_plsa_estep")


def _estep_cases() -> list[Case]:
    rng = np.random.default_rng(7)
    out = [Case(args=(np.array([[0.5, 0.5]]), np.array([[0.2, 0.8], [0.6, 0.4]]), 0, 1),
                expected=np.array([2 / 3, 1 / 3]), label="two topics, by hand",
                outputs=("p(z | d, w)",))]
    theta = rng.dirichlet(np.ones(4), size=3)
    phi = rng.dirichlet(np.ones(6), size=4)
    for d, w in ((0, 5), (2, 0)):
        p = theta[d] * phi[:, w]
        out.append(Case(args=(theta, phi, d, w), expected=p / p.sum(), label=f"4 topics, d={d}, w={w}",
                        outputs=("p(z | d, w)",)))
    return out


register(Exercise(
    id="ch01.c_plsa_estep",
    kind="implement",
    title="pLSA's E-step",
    prompt="""
        In pLSA a word w of document d was produced by topic k with prior probability theta[d, k]
        and then drawn with probability phi[k, w]. Write c_plsa_estep(theta, phi, d, w):
        the posterior p(z = k | d, w) of each topic, the E-step of Hofmann's EM.
    """,
    cases=_estep_cases,
    stub=c_plsa_estep,
    hint=("p(z = k | d, w) is proportional to p(z = k | d) p(w | z = k).",
          "Multiply theta[d] by the column phi[:, w], then divide by the sum."),
))

# ---------------------------------------------------------------- 4. concept: a new document

register(Exercise(
    id="ch01.c_new_document",
    kind="concept",
    title="Why LDA can score a document it never saw",
    prompt="""
        Blei, Ng & Jordan criticised pLSA as "not a well-defined generative model of documents".
        Which property of LDA answers that criticism?
    """,
    choices={
        "a": "LDA draws each document's topic proportions from a Dirichlet prior, so a new "
             "document's proportions have a distribution to be inferred from its words.",
        "b": "LDA fits its topic-word distributions by sampling, so the topics of a new "
             "document can be sampled from the same chain without any extra inference.",
        "c": "LDA removes the stop words before fitting, so a new document's frequent words "
             "cannot dominate the topics it is assigned at test time.",
        "d": "LDA uses many more topics than pLSA, so every possible new document is already "
             "close to one of the training documents it has a parameter for.",
    },
    answer="a",
    hint=("In pLSA, theta[d] is a parameter fitted for each training document d. What is it in LDA?",),
    explanation="""
        (a). pLSA has one free parameter vector per training document and no rule for producing
        another, so a new document needs an ad hoc fold-in, and the number of parameters grows
        with the corpus. LDA makes the proportions a random variable with a Dirichlet prior:
        a new document's probability is defined (integrating over the proportions), and the
        parameters do not grow with the number of documents. (b) confuses the inference method
        with the model; (c) and (d) are not properties of LDA.
    """,
))

# ---------------------------------------------------------------- 5. concept: MinHash's error

register(Exercise(
    id="ch01.c_minhash_se",
    kind="concept",
    title="MinHash's standard error",
    prompt="""
        Two documents have Jaccard similarity J = 0.5. Their MinHash signatures have k = 100
        rows. What is the standard error of the estimated J? (A number, 3 decimals.)
    """,
    answer=0.05,
    atol=2e-3,
    hint=("Each row agrees with probability J, independently: a binomial proportion.",),
    explanation="""
        sqrt(J (1 - J) / k) = sqrt(0.25 / 100) = 0.05. Each row is a coin that lands "agree"
        with probability J, and the estimate is the share of agreeing rows. Four times the rows
        halve the error.
    """,
))

# ---------------------------------------------------------------- 6. predict: LSH recall

register(Exercise(
    id="ch01.c_lsh_recall",
    kind="predict",
    title="How many near-duplicates does LSH catch?",
    prompt="""
        The chapter makes two edited copies of each of a few hundred news articles (each word
        deleted, replaced or followed by an insertion with probability 2%, 5%, 10% or 20%) and
        mixes them with as many other articles. MinHash signatures of word 3-shingles, 128 rows
        cut into 32 bands of 4 rows, pick candidate pairs. Before the run: what share (0 to 1) of
        the true near-duplicate pairs (same original) become candidates?
    """,
    atol=0.1,
    unit=".0%",
    explanation="""
        About three quarters. The S-curve 1 - (1 - J^4)^32 has its threshold near
        (1/32)^(1/4) = 0.42: pairs above J = 0.6 are nearly always caught, pairs below 0.3
        rarely. An edit touches up to three 3-shingles, so a copy with 20% of its words edited
        keeps well under half of its shingles: those copies are the near-duplicates that LSH
        misses, while lightly edited copies are all found.
    """,
))

# ---------------------------------------------------------------- 7. debug: banding


def c_band_probability(j, bands, rows):
    """The probability that a pair with Jaccard ``j`` becomes an LSH candidate with ``bands``
    bands of ``rows`` rows each."""
    return 1.0 - (1.0 - j**bands) ** rows


def _band_cases() -> list[Case]:
    out = []
    for j, b, r in ((0.5, 4, 2), (0.8, 20, 5), (0.3, 10, 3)):
        # by enumeration: a band agrees with probability j^r (all r rows), bands independently
        p_band = np.prod([j] * r)
        p_none = np.prod([1.0 - p_band] * b)
        out.append(Case(args=(j, b, r), expected=1.0 - p_none, label=f"J={j}, {b} bands of {r} rows",
                        outputs=("P(candidate)",)))
    return out


register(Exercise(
    id="ch01.c_band_probability",
    kind="debug",
    title="The probability of becoming a candidate",
    prompt="""
        LSH cuts a signature of b * r rows into b bands of r rows; a pair is a candidate if all
        rows of at least one band agree. Each row agrees with probability J. The function below
        returns a wrong probability: find the bug and fix it.
    """,
    cases=_band_cases,
    stub=c_band_probability,
    hint=("What is the probability that one band, r rows, agrees entirely?",
          ("A band agrees with probability J^r; none of the b bands agrees with probability "
           "(1 - J^r)^b.")),
))

# ---------------------------------------------------------------- 8. extend: how many topics?


def c_number_of_topics():
    """Open task; the worked answer is ``solutions.ch01.c_number_of_topics``."""
    raise NotImplementedError("an open task: see the prompt")


register(Exercise(
    id="ch01.c_number_of_topics",
    kind="extend",
    title="How many topics?",
    prompt="""
        Fit LDA by Gibbs sampling on the chapter's AG News sample with K = 5, 10, 20 and 40
        topics (same alpha, beta and sweeps) and plot the held-out perplexity (document
        completion) and the mean NPMI of the topics against K. Do the two criteria pick the same
        K? Read the top words of the best and the worst topics at each K.
    """,
    hint=(("Use compare_topic_models's pieces: fit_lda_gibbs, completion_split, fold_in_lda, "
           "doc_log_likelihoods and npmi_coherence."),),
))
