"""Chapter 1c's package: the vector space model, pLSA, LDA (collapsed Gibbs), MinHash + LSH and
TextRank, on tiny generated data."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from companion.counting import chapter1c, minhash, retrieval, textrank, topics

# ------------------------------------------------------------------------- vector space model

TEXTS = ["the cat sat on the mat", "the dog sat", "a cat and a dog and a cat", "mat and dog"]


@pytest.mark.parametrize("smooth", [True, False])
def test_tfidf_matches_scikit_learn(smooth):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(smooth_idf=smooth, token_pattern=r"\S+")
    x = vec.fit_transform(TEXTS).toarray()
    index = retrieval.VectorSpaceIndex.fit([t.split() for t in TEXTS],
                                           retrieval.VSMConfig(idf="smooth" if smooth else "plain"))
    cols = [index.terms.index(t) for t in vec.get_feature_names_out()]
    assert np.abs(index.matrix.toarray()[:, cols] - x).max() < 1e-12
    q = vec.transform(["cat dog"]).toarray() @ x.T
    assert np.abs(index.scores([["cat", "dog"]]) - q).max() < 1e-12


def test_salton_idf_and_schemes():
    counts = sp.csr_matrix(np.array([[2, 1, 0], [1, 0, 0], [3, 0, 1]]))
    idf = retrieval.idf_weights(counts, "salton")
    assert idf[0] == 0.0 and idf[1] == pytest.approx(np.log(3))  # a term in every document weighs 0
    for scheme in retrieval.SCHEMES:
        w = retrieval.weigh(counts, retrieval.idf_weights(counts, "smooth"), scheme).toarray()
        assert np.allclose(np.linalg.norm(w, axis=1), 1.0)
    assert retrieval.weigh(counts, idf, "binary").toarray()[0, 0] == pytest.approx(1 / np.sqrt(2))
    with pytest.raises(ValueError, match="scheme"):
        retrieval.VSMConfig(scheme="bm25")
    with pytest.raises(TypeError, match="list of tokens"):
        retrieval.VectorSpaceIndex.fit([["a", "b"], ["b"]]).rank("a b")


def test_average_precisions_match_the_lsa_module():
    from companion.counting.lsa import average_precision

    rng = np.random.default_rng(0)
    scores = rng.random((5, 30))
    rel = rng.random((5, 30)) < 0.2
    rel[:, 0] = True
    ours = retrieval.average_precisions(scores, rel)
    assert np.allclose(ours, [average_precision(s, r) for s, r in zip(scores, rel)])
    lo_mean = retrieval.bootstrap_mean(ours)
    assert lo_mean[1] <= lo_mean[0] <= lo_mean[2]
    with pytest.raises(ValueError, match="relevant"):
        retrieval.average_precisions(scores, np.zeros_like(rel))


# ------------------------------------------------------------------------- topic models


@pytest.fixture(scope="module")
def bars():
    phi = topics.bars_topics(5)
    docs, _ = topics.generate_corpus(phi, n_docs=300, doc_len=50, alpha=1.0, seed=0)
    return phi, docs


def test_plsa_em_increases_the_likelihood_and_recovers_bars(bars):
    phi, docs = bars
    model = topics.fit_plsa(docs, 25, topics.PLSAConfig(n_topics=10, n_iter=150, seed=1))
    hist = np.array(model.history)
    assert (np.diff(hist) >= -1e-6 * np.abs(hist[1:])).all()  # EM never lowers the likelihood
    assert np.allclose(model.phi.sum(axis=1), 1) and np.allclose(model.theta.sum(axis=1), 1)
    _, cos = topics.match_topics(phi, model.phi)
    _, base = topics.match_topics(phi, topics.random_topics(10, 25, seed=0))
    assert cos.mean() > 0.9 and base.mean() < 0.7


def test_lda_gibbs_recovers_bars_and_is_deterministic(bars):
    phi, docs = bars
    config = topics.LDAConfig(n_topics=10, alpha=0.5, beta=0.1, n_sweeps=60, seed=3)
    a = topics.fit_lda_gibbs(docs, 25, config)
    b = topics.fit_lda_gibbs(docs, 25, config)
    assert np.array_equal(a.phi, b.phi)
    _, cos = topics.match_topics(phi, a.phi)
    assert cos.mean() > 0.9
    theta = topics.fold_in_lda(a, docs[:5], n_sweeps=20, burn_in=5)
    assert np.allclose(theta.sum(axis=1), 1)


def test_plsa_e_step_is_a_distribution():
    r = topics.plsa_e_step(np.array([[0.5, 0.5], [0.9, 0.1]]), np.array([[0.2, 0.6], [0.5, 0.5]]))
    assert np.allclose(r, [[0.25, 0.75], [0.9, 0.1]])


def test_held_out_perplexity_against_unigram_and_scikit_learn():
    phi = topics.bars_topics(4)
    docs, _ = topics.generate_corpus(phi, n_docs=220, doc_len=40, alpha=0.3, seed=2)
    run = chapter1c.compare_topic_models(docs[:180], docs[180:], 16, topics.LDAConfig(8, 0.3, 0.1, 60),
                                         topics.PLSAConfig(8, 60), sklearn_iter=20)
    table = run.table()
    ppl = table["held-out perplexity"]
    assert ppl["LDA (Gibbs)"] < ppl["unigram"]
    assert ppl["LDA (Gibbs)"] < 1.25 * ppl["LDA (variational, scikit-learn)"]
    assert ppl["LDA (variational, scikit-learn)"] < 1.25 * ppl["LDA (Gibbs)"]


def test_coherence_by_hand():
    # 4 documents over words 0..2; the topic's top words in order 0, 1, 2
    ref = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1], [0, 0, 1]]))
    phi = np.array([[0.5, 0.3, 0.2]])
    # UMass: log((D(1,0)+1)/D(0)) + log((D(2,0)+1)/D(0)) + log((D(2,1)+1)/D(1)) = log(3/3)+log(2/3)+log(1/2)
    assert topics.umass_coherence(phi, ref, n=3)[0] == pytest.approx(np.log(2 / 3) + np.log(1 / 2))
    # NPMI: (0,1): p=1/2, p0=3/4, p1=1/2 -> log(4/3)/log 2; (0,2): p=1/4 -> log(2/3)/log 4; (1,2): -1
    want = (np.log(4 / 3) / np.log(2) + np.log(2 / 3) / np.log(4) - 1) / 3
    assert topics.npmi_coherence(phi, ref, n=3)[0] == pytest.approx(want)


def test_topic_errors():
    with pytest.raises(ValueError, match="n_topics"):
        topics.LDAConfig(n_topics=0)
    with pytest.raises(ValueError, match="word ids"):
        topics.fit_plsa([np.array([0, 7])], 5)
    with pytest.raises(ValueError, match="alpha"):
        topics.fold_in_lda(topics.TopicModel("pLSA", np.full((2, 3), 1 / 3), np.full((1, 2), 0.5)), [np.array([0])])
    with pytest.raises(ValueError, match="phi"):
        topics.generate_corpus(np.ones((2, 3)), 2, 3)


# ------------------------------------------------------------------------- MinHash and LSH


def test_shingles_and_jaccard():
    assert minhash.shingles(["a", "b", "c"], 2) == {"a b", "b c"}
    assert minhash.shingles("abcd", 3) == {"abc", "bcd"}
    assert minhash.jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    with pytest.raises(ValueError, match="k must"):
        minhash.shingles(["a"], 0)


def test_minhash_estimate_is_within_its_standard_error():
    rng = np.random.default_rng(0)
    ids = rng.choice(1 << 30, size=600, replace=False)
    a, b = ids[:400], ids[200:]  # J = 200 / 600
    h = minhash.MinHasher(minhash.MinHashConfig(n_hashes=512, seed=1))
    est = minhash.estimate_jaccard(h.signature(a), h.signature(b))
    assert abs(est - 1 / 3) < 4 * minhash.standard_error(1 / 3, 512)
    assert minhash.estimate_jaccard(h.signature(a), h.signature(a[::-1])) == 1.0


def test_minhash_error_study_follows_theory():
    study = chapter1c.minhash_error_study(jaccards=(0.5,), hashes=(16, 64), n_families=60, set_size=100)
    ratio = study["sd"] / study["theory sd"]
    assert ((ratio > 0.7) & (ratio < 1.3)).all()
    slope, lo, hi = chapter1c.error_slope(study, n_boot=100)
    assert lo <= slope <= hi and -0.8 < slope < -0.2


def test_lsh_candidates_and_s_curve():
    sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9], [5, 6, 3, 4], [7, 8, 0, 0]])
    assert minhash.lsh_candidates(sig, bands=2, rows=2) == {(0, 1), (0, 2)}
    assert minhash.candidate_probability(0.5, 2, 2) == pytest.approx(1 - 0.75 ** 2)
    with pytest.raises(ValueError, match="bands"):
        minhash.lsh_candidates(sig, 3, 2)


def test_near_duplicate_detection_on_generated_documents():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(500)]
    docs = [list(rng.choice(vocab, 60)) for _ in range(80)]
    out = chapter1c.near_duplicate_eval(docs, 20, bands=16, rows=4)
    assert out["precision (LSH)"] > 0.9 and out["recall of pairs with J >= 0.5"] > 0.9
    assert np.abs(out["exact J"] - out["estimated J"]).mean() < 0.1


# ------------------------------------------------------------------------- TextRank


def test_pagerank_by_hand_on_a_path():
    adj = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)
    s, _ = textrank.pagerank(adj, damping=0.85)
    x = (0.05 + 0.425 * 0.05) / (1 - 0.7225)  # the two ends; the middle is 0.05 + 1.7 x
    assert np.allclose(s, [x, 0.05 + 1.7 * x, x])
    with pytest.raises(ValueError, match="square"):
        textrank.pagerank(np.ones((2, 3)))


def test_pagerank_matches_networkx():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(0)
    adj = (rng.random((12, 12)) < 0.3).astype(float)
    adj = np.triu(adj, 1)
    adj = adj + adj.T
    adj[11, :] = adj[:, 11] = 0  # an isolated vertex
    ours, _ = textrank.pagerank(adj)
    ref = nx.pagerank(nx.from_numpy_array(adj), alpha=0.85, tol=1e-12, max_iter=1000)
    assert np.abs(ours - np.array([ref[i] for i in range(12)])).max() < 1e-8


def test_keywords_and_phrases():
    toks = ["linear", "constraints", "over", "natural", "numbers", "and", "linear", "diophantine", "equations"]
    kw = textrank.keywords(toks, 3, textrank.TextRankConfig(stop_words=("over", "and")))
    assert kw[0][0] == "linear"
    assert textrank.keyphrases(toks, {"linear", "constraints", "natural", "numbers"}) == [
        "linear constraints", "natural numbers"]
    with pytest.raises(ValueError, match="no candidate"):
        textrank.keywords(["and", "the"], config=textrank.TextRankConfig(stop_words=("and", "the")))


# ------------------------------------------------------------------------- the widget


def test_scurve_callback_recovers_after_an_error():
    with pytest.raises(ValueError, match="bands"):
        chapter1c.scurve_for(0, 4)
    text = chapter1c.scurve_for(16, 4)
    assert "threshold (1/b)^(1/r) = 0.50" in text and "64 hashes" in text
    w = chapter1c.scurve_widget()
    _bands, rows = w.children[0].children
    rows.value = 8
    assert w.children[1] is not None


def test_plate_diagram_draws():
    import matplotlib

    matplotlib.use("Agg")
    fig = chapter1c.plate_diagram()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert r"$w_i$" in texts and r"$D$ documents" in texts


def test_scheme_average_precisions_prefers_idf_on_a_planted_collection():
    # two sources; every document repeats a common word, the query's rare word marks its source
    docs = [["the"] * 5 + ["apple"], ["the"] * 5 + ["apple", "pie"], ["the", "pear"], ["the", "pear", "tart"]]
    queries = [["the", "apple"]]
    relevant = np.array([[False, True, False, False]])
    exclude = np.array([[True, False, False, False]])
    ap = chapter1c.scheme_average_precisions(docs, queries, relevant, exclude, min_df=1)
    assert set(ap) == {"binary", "tf", "tfidf", "logtfidf"}
    assert ap["tfidf"][0] == 1.0


def test_classify_features_has_a_majority_row_and_intervals():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    x = np.c_[y + rng.normal(0, 0.3, 200), rng.normal(size=200)]
    table = chapter1c.classify_features({"signal": (x[:100], x[100:])}, y[:100], y[100:], n_boot=200)
    assert list(table.index) == ["majority class", "signal"]
    assert table.loc["signal", "accuracy"] > 0.9 > table.loc["majority class", "accuracy"]
    assert (table["low"] <= table["accuracy"]).all() and (table["accuracy"] <= table["high"]).all()
