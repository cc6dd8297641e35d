"""Worked answers of chapter 1c's exercises (ids ``ch01.c_<name>``), re-exported by
``solutions/ch01.py`` so that ``solutions.get("ch01.c_cosine_rank")`` finds them."""

from __future__ import annotations

import numpy as np


def c_idf_by_hand(n_docs=8, df=2):
    """scikit-learn's smoothed IDF: ln((1 + N) / (1 + df)) + 1 = ln 3 + 1 = 2.099 for N = 8, df = 2."""
    return float(np.log((1 + n_docs) / (1 + df)) + 1)


def c_cosine_rank(doc_vectors, query_vector):
    d = np.asarray(doc_vectors, dtype=float)
    q = np.asarray(query_vector, dtype=float)
    unit = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-300)
    cos = unit @ (q / np.linalg.norm(q))
    return np.argsort(-np.round(cos, 12), kind="stable")


def c_plsa_estep(theta, phi, d, w):
    p = np.asarray(theta)[d] * np.asarray(phi)[:, w]
    return p / p.sum()


def c_band_probability(j, bands, rows):
    return 1.0 - (1.0 - j**rows) ** bands


def c_number_of_topics(ks=(5, 10, 20, 40), n_train=3000, n_test=800, sweeps=150, seed=0):
    """Held-out perplexity and mean NPMI of LDA (collapsed Gibbs) on AG News for several K.

    The same protocol as the chapter's comparison (document completion on AG News test
    articles, NPMI over the training articles). Returns a DataFrame: K, perplexity, NPMI."""
    import pandas as pd

    from companion.counting.chapter1c import content_words, stop_words, topic_vocab
    from companion.counting.topics import (
        LDAConfig,
        completion_split,
        doc_log_likelihoods,
        doc_term,
        encode,
        fit_lda_gibbs,
        fold_in_lda,
        npmi_coherence,
        perplexity,
    )
    from companion.data import load_task
    from companion.data.text import tokenize

    ag = load_task("ag_news")
    stop = stop_words()
    train = [content_words(tokenize(e.text), stop) for e in ag.splits["train"][:n_train]]
    test = [content_words(tokenize(e.text), stop) for e in ag.splits["test"][:n_test]]
    vocab = topic_vocab(train)
    tr = encode(train, vocab)
    te = [d for d in encode(test, vocab) if len(d) >= 4]
    seen, held = completion_split(te, seed=seed)
    counts = doc_term(tr, len(vocab))
    rows = []
    for k in ks:
        model = fit_lda_gibbs(tr, len(vocab), LDAConfig(k, alpha=0.1, beta=0.01, n_sweeps=sweeps, seed=seed))
        ll = doc_log_likelihoods(model.phi, fold_in_lda(model, seen, seed=seed), held)
        rows.append({"K": k, "perplexity": perplexity(ll, [len(h) for h in held]),
                     "NPMI": float(npmi_coherence(model.phi, counts).mean())})
    return pd.DataFrame(rows)
