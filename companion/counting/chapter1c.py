"""Chapter 1c's experiments, as functions the notebook calls (the models are in
:mod:`~companion.counting.topics`, :mod:`~companion.counting.retrieval`,
:mod:`~companion.counting.minhash` and :mod:`~companion.counting.textrank`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .topics import (
    LDAConfig,
    PLSAConfig,
    TopicModel,
    completion_split,
    doc_log_likelihoods,
    doc_term,
    encode,
    fit_lda_gibbs,
    fit_plsa,
    fold_in_lda,
    fold_in_plsa,
    npmi_coherence,
    perplexity,
    umass_coherence,
)


def stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list (318 words)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def content_words(tokens: Sequence[str], stop: frozenset[str] | set[str]) -> list[str]:
    """Tokens of at least 3 letters that are not stop words."""
    return [t for t in tokens if len(t) >= 3 and t.isalpha() and t not in stop]


def topic_vocab(documents: Sequence[Sequence[str]], min_df: int = 5, max_df: float = 0.5) -> list[str]:
    """Words in at least ``min_df`` documents and at most a share ``max_df`` of them, most
    frequent first (ties alphabetical)."""
    from collections import Counter

    if not 0 < max_df <= 1:
        raise ValueError(f"max_df must lie in (0, 1], got {max_df}")
    df, tf = Counter(), Counter()
    for d in documents:
        df.update(set(d))
        tf.update(d)
    limit = max_df * len(documents)
    return sorted((w for w, c in df.items() if min_df <= c <= limit), key=lambda w: (-tf[w], w))


@dataclass
class TopicRun:
    """Fitted models and their held-out scores (see :func:`compare_topic_models`).

    Attributes:
        models: name -> fitted :class:`TopicModel` (the unigram has one topic).
        heldout_ll: name -> log-likelihood of each test document's held-out half (nats).
        n_heldout: tokens in each held-out half.
        seconds: name -> fitting time.
        coherence: name -> ``{"NPMI": [...], "UMass": [...]}`` per topic.
    """

    models: dict[str, TopicModel]
    heldout_ll: dict[str, np.ndarray]
    n_heldout: np.ndarray
    seconds: dict[str, float] = field(default_factory=dict)
    coherence: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """Per model: held-out perplexity, mean NPMI and UMass of the topics, fitting seconds."""
        rows = []
        for name, ll in self.heldout_ll.items():
            coh = self.coherence.get(name, {})
            rows.append({"model": name, "held-out perplexity": perplexity(ll, self.n_heldout),
                         "NPMI": float(np.mean(coh["NPMI"])) if "NPMI" in coh else np.nan,
                         "UMass": float(np.mean(coh["UMass"])) if "UMass" in coh else np.nan,
                         "seconds": self.seconds.get(name, np.nan)})
        return pd.DataFrame(rows).set_index("model")


def fit_sklearn_lda(counts: sp.spmatrix, config: LDAConfig, max_iter: int = 30) -> tuple[TopicModel, object]:
    """scikit-learn's variational LDA (batch) with the same priors; returns the model as a
    :class:`TopicModel` and the estimator (for ``transform``)."""
    from sklearn.decomposition import LatentDirichletAllocation

    est = LatentDirichletAllocation(n_components=config.n_topics, doc_topic_prior=config.alpha,
                                    topic_word_prior=config.beta, learning_method="batch",
                                    max_iter=max_iter, random_state=config.seed, n_jobs=1)
    theta = est.fit_transform(counts)
    phi = est.components_ / est.components_.sum(axis=1, keepdims=True)
    return TopicModel("LDA (variational, scikit-learn)", phi, theta, [], config.alpha), est


def compare_topic_models(train: Sequence[np.ndarray], test: Sequence[np.ndarray], n_words: int,
                         lda: LDAConfig, plsa: PLSAConfig, *, sklearn_iter: int = 30,
                         fold_in_sweeps: int = 50, seed: int = 0) -> TopicRun:
    """Fit a unigram model, pLSA, LDA by Gibbs sampling and scikit-learn's variational LDA on
    ``train``; score each by document completion on ``test`` (``theta`` from a random half of a
    document's tokens, the other half scored); topic coherence on the training documents."""
    seen, held = completion_split(test, seed=seed)
    counts = doc_term(train, n_words)
    models, lls, secs = {}, {}, {}
    t = time.perf_counter()
    uni = np.asarray(counts.sum(axis=0)).ravel() + 1.0  # add-one: every vocabulary word is seen
    models["unigram"] = TopicModel("unigram", (uni / uni.sum())[None, :], np.ones((len(train), 1)))
    lls["unigram"] = doc_log_likelihoods(models["unigram"].phi, np.ones((len(held), 1)), held)
    secs["unigram"] = time.perf_counter() - t

    t = time.perf_counter()
    models["pLSA"] = fit_plsa(train, n_words, plsa)
    secs["pLSA"] = time.perf_counter() - t
    lls["pLSA"] = doc_log_likelihoods(models["pLSA"].phi, fold_in_plsa(models["pLSA"], seen, seed=seed), held)

    t = time.perf_counter()
    models["LDA (Gibbs)"] = fit_lda_gibbs(train, n_words, lda)
    secs["LDA (Gibbs)"] = time.perf_counter() - t
    theta = fold_in_lda(models["LDA (Gibbs)"], seen, n_sweeps=fold_in_sweeps, seed=seed)
    lls["LDA (Gibbs)"] = doc_log_likelihoods(models["LDA (Gibbs)"].phi, theta, held)

    t = time.perf_counter()
    sk, est = fit_sklearn_lda(counts, lda, max_iter=sklearn_iter)
    secs[sk.name] = time.perf_counter() - t
    models[sk.name] = sk
    theta = est.transform(doc_term(seen, n_words))
    lls[sk.name] = doc_log_likelihoods(sk.phi, theta, held)

    run = TopicRun(models, lls, np.array([len(h) for h in held]), secs)
    for name, m in models.items():
        if m.n_topics > 1:
            run.coherence[name] = {"NPMI": npmi_coherence(m.phi, counts), "UMass": umass_coherence(m.phi, counts)}
    return run


def topic_table(model: TopicModel, vocab: Sequence[str], n_words: int = 8, topics: Sequence[int] | None = None) -> pd.DataFrame:
    """The top words of some topics, with each topic's share of the training tokens."""
    share = model.theta.mean(axis=0)
    ids = list(range(model.n_topics)) if topics is None else list(topics)
    top = model.top_words(vocab, n_words)
    return pd.DataFrame({"share": [round(float(share[k]), 3) for k in ids],
                         "top words": [" ".join(top[k]) for k in ids]}, index=pd.Index(ids, name="topic"))


def classify_features(features: dict[str, tuple[np.ndarray, np.ndarray]], y_train: np.ndarray, y_test: np.ndarray,
                      c: float = 1.0, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Test accuracy of a logistic regression on each feature set (``name -> (X_train,
    X_test)``), with a bootstrap 95% interval over the test documents; a majority-class row."""
    from sklearn.linear_model import LogisticRegression

    from .retrieval import bootstrap_mean

    rows = []
    majority = np.bincount(y_train).argmax()
    correct = {"majority class": (y_test == majority).astype(float)}
    dims = {"majority class": 0}
    for name, (xtr, xte) in features.items():
        clf = LogisticRegression(C=c, max_iter=2000, random_state=seed)
        clf.fit(xtr, y_train)
        correct[name] = (clf.predict(xte) == y_test).astype(float)
        dims[name] = xtr.shape[1]
    for name, ok in correct.items():
        acc, lo, hi = bootstrap_mean(ok, n_boot=n_boot, seed=seed)
        rows.append({"features": name, "dimensions": dims[name], "accuracy": acc, "low": lo, "high": hi})
    return pd.DataFrame(rows).set_index("features")


def minhash_error_study(jaccards: Sequence[float] = (0.2, 0.5, 0.8), hashes: Sequence[int] = (16, 32, 64, 128, 256),
                        n_families: int = 200, set_size: int = 300, seed: int = 0) -> pd.DataFrame:
    """The MinHash estimate's spread against theory: for pairs of sets with known Jaccard
    ``J``, ``n_families`` independent hash families; per ``(J, k)`` the mean estimate, its
    standard deviation over the families and ``sqrt(J (1 - J) / k)``. One row per ``(J, k)``;
    column ``errors`` holds the per-family errors (for bootstraps)."""
    from .minhash import MinHashConfig, MinHasher, standard_error

    rng = np.random.default_rng(seed)
    k_max = max(hashes)
    rows = []
    pairs = []
    for j in jaccards:
        if not 0 < j < 1:
            raise ValueError(f"every Jaccard must lie in (0, 1), got {j}")
        inter = round(2 * set_size * j / (1 + j))  # |A| = |B| = n, J = m / (2n - m)
        ids = rng.choice(1 << 30, size=2 * set_size - inter, replace=False)
        a, b = ids[:set_size], ids[set_size - inter:]
        exact = inter / (2 * set_size - inter)
        pairs.append((exact, a, b))
    est = np.zeros((len(pairs), n_families, k_max))
    for f in range(n_families):
        h = MinHasher(MinHashConfig(n_hashes=k_max, seed=seed * 1_000_003 + f + 1))
        for p, (_, a, b) in enumerate(pairs):
            est[p, f] = h.signature(a) == h.signature(b)
    for p, (exact, _, _) in enumerate(pairs):
        for k in hashes:
            e = est[p, :, :k].mean(axis=1)
            rows.append({"J": exact, "k": k, "mean estimate": float(e.mean()), "sd": float(e.std(ddof=1)),
                         "theory sd": float(standard_error(exact, k)), "errors": e - exact})
    return pd.DataFrame(rows)


def error_slope(study: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """The slope of log RMSE against log k (pooled over the pairs), with a bootstrap 95%
    interval over the hash families: ``(slope, low, high)``; theory says -1/2."""
    ks = np.array(sorted(study["k"].unique()))
    err = {k: np.stack(list(study[study["k"] == k]["errors"])) for k in ks}  # [pairs, families]
    n_fam = next(iter(err.values())).shape[1]

    def slope(idx):
        rmse = [np.sqrt((err[k][:, idx] ** 2).mean()) for k in ks]
        return float(np.polyfit(np.log(ks), np.log(rmse), 1)[0])

    rng = np.random.default_rng(seed)
    boots = [slope(rng.integers(0, n_fam, n_fam)) for _ in range(n_boot)]
    lo, hi = np.quantile(boots, [0.025, 0.975])
    return slope(np.arange(n_fam)), float(lo), float(hi)


def near_duplicate_eval(documents: Sequence[Sequence[str]], n_sources: int, *, shingle_k: int = 3,
                        bands: int = 32, rows: int = 4, threshold: float = 0.5, seed: int = 0) -> dict:
    """MinHash + LSH on a synthetic near-duplicate set (:func:`minhash.near_duplicate_set`).

    Returns a dict with the candidate pairs' precision and recall against the true pairs (same
    source), the same after keeping candidates whose *estimated* Jaccard is >= ``threshold``,
    the number of pairs compared, and the exact and estimated Jaccard of every true pair."""
    from .minhash import (
        MinHashConfig,
        MinHasher,
        estimate_jaccard,
        jaccard,
        lsh_candidates,
        near_duplicate_set,
        precision_recall,
        shingle_ids,
        shingles,
    )

    docs, source = near_duplicate_set(documents, n_sources, seed=seed)
    sets = [shingles(d, shingle_k) for d in docs]
    hasher = MinHasher(MinHashConfig(n_hashes=bands * rows, seed=seed))
    sigs = hasher.signatures([shingle_ids(s) for s in sets])
    truth = {(i, j) for i in range(len(docs)) for j in range(i + 1, len(docs)) if source[i] == source[j]}
    cands = lsh_candidates(sigs, bands, rows)
    kept = {(i, j) for i, j in cands if estimate_jaccard(sigs[i], sigs[j]) >= threshold}
    p_c, r_c = precision_recall(cands, truth)
    p_k, r_k = precision_recall(kept, truth)
    pairs = sorted(truth)
    exact = np.array([jaccard(sets[i], sets[j]) for i, j in pairs])
    high = {pr for pr, e in zip(pairs, exact) if e >= threshold}
    return {"documents": len(docs), "true pairs": len(truth), "candidates": len(cands),
            "all pairs": len(docs) * (len(docs) - 1) // 2,
            "precision (LSH)": p_c, "recall (LSH)": r_c, "precision (LSH + check)": p_k, "recall (LSH + check)": r_k,
            f"recall of pairs with J >= {threshold}": len(cands & high) / max(len(high), 1),
            "exact J": exact,
            "estimated J": np.array([estimate_jaccard(sigs[i], sigs[j]) for i, j in pairs])}


def scheme_average_precisions(documents: Sequence[Sequence[str]], queries: Sequence[Sequence[str]],
                              relevant: np.ndarray, exclude: np.ndarray | None = None,
                              schemes: Sequence[str] = ("binary", "tf", "tfidf", "logtfidf"),
                              min_df: int = 2) -> dict[str, np.ndarray]:
    """Average precision of every query under each weighting scheme of the vector space model."""
    from .representations import bag_of_words
    from .retrieval import VectorSpaceIndex, VSMConfig, average_precisions, weigh

    base = VectorSpaceIndex.fit(documents, VSMConfig(scheme="tf", min_df=min_df))
    counts = bag_of_words(documents, base.terms)  # counted once; each scheme re-weighs them
    q_counts = bag_of_words(queries, base.terms)
    out = {}
    for scheme in schemes:
        d, q = weigh(counts, base.idf, scheme), weigh(q_counts, base.idf, scheme)
        out[scheme] = average_precisions(np.asarray((q @ d.T).todense()), relevant, exclude)
    return out


def document_features(train: Sequence[Sequence[str]], test: Sequence[Sequence[str]], n_topics: int,
                      lda: LDAConfig, plsa: PLSAConfig, *, min_df: int = 5,
                      seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Four views of the same documents (content words), fitted on ``train`` only: TF-IDF
    (sparse, every term), LSA (a rank-``n_topics`` SVD of the TF-IDF matrix), pLSA's and LDA's
    topic proportions (``n_topics`` each; test documents folded in)."""
    from sklearn.decomposition import TruncatedSVD

    from .retrieval import VectorSpaceIndex, VSMConfig

    index = VectorSpaceIndex.fit(train, VSMConfig(scheme="tfidf", idf="smooth", min_df=min_df))
    x_tr, x_te = index.matrix, index.vectors(test)
    svd = TruncatedSVD(n_components=n_topics, random_state=seed).fit(x_tr)
    vocab = index.terms
    enc_tr, enc_te = encode(train, vocab), encode(test, vocab)
    lda_model = fit_lda_gibbs(enc_tr, len(vocab), lda)
    plsa_model = fit_plsa(enc_tr, len(vocab), plsa)
    return {"TF-IDF": (x_tr, x_te),
            f"LSA ({n_topics} dims)": (svd.transform(x_tr), svd.transform(x_te)),
            f"pLSA ({n_topics} topics)": (plsa_model.theta, fold_in_plsa(plsa_model, enc_te, seed=seed)),
            f"LDA ({n_topics} topics)": (lda_model.theta, fold_in_lda(lda_model, enc_te, seed=seed))}


def scurve_for(bands: int, rows: int, jaccards: Sequence[float] = (0.2, 0.4, 0.6, 0.8)) -> str:
    """The widget's callback: LSH banding's threshold ``(1/b)^(1/r)`` and the probability that
    a pair of each Jaccard becomes a candidate, as text (the figure is drawn by the widget)."""
    from .minhash import candidate_probability

    for name, v in (("bands", bands), ("rows", rows)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    probs = ", ".join(f"J={j:.1f}: {float(candidate_probability(j, bands, rows)):.3f}" for j in jaccards)
    return (f"{bands} bands x {rows} rows = {bands * rows} hashes; threshold (1/b)^(1/r) = "
            f"{(1 / bands) ** (1 / rows):.2f}; P(candidate) {probs}")


def scurve_widget():
    """Sliders for the bands and rows of LSH; draws the S-curve ``1 - (1 - J^r)^b``."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from .minhash import candidate_probability

    out = w.Output()
    b = w.IntSlider(value=16, min=1, max=64, description="bands")
    r = w.IntSlider(value=4, min=1, max=16, description="rows")

    def redraw(*_):
        out.clear_output(wait=True)
        with out:
            try:
                print(scurve_for(b.value, r.value))
            except ValueError as err:
                print(f"error: {err}")
                return
            j = np.linspace(0, 1, 201)
            _fig, ax = plt.subplots(figsize=(5, 3))
            ax.plot(j, candidate_probability(j, b.value, r.value))
            ax.set_xlabel("Jaccard similarity J")
            ax.set_ylabel("P(candidate)")
            plt.show()

    b.observe(redraw, "value")
    r.observe(redraw, "value")
    redraw()
    return w.VBox([w.HBox([b, r]), out])


def plate_diagram(ax=None):
    """LDA's graphical model in plate notation: alpha -> theta_d -> z_i -> w_i <- phi_k <- beta,
    with plates over the N_d tokens, the D documents and the K topics (w_i shaded: observed).
    pLSA is the same picture without alpha and beta. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, FancyBboxPatch

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 2.6))
    else:
        fig = ax.figure
    nodes = {"alpha": (0.5, 1.2, r"$\alpha$"), "theta": (2.0, 1.2, r"$\theta_d$"),
             "z": (3.5, 1.2, r"$z_i$"), "w": (5.0, 1.2, r"$w_i$"),
             "phi": (6.6, 1.2, r"$\phi_k$"), "beta": (8.1, 1.2, r"$\beta$")}
    for name, (x, y, label) in nodes.items():
        ax.add_patch(Circle((x, y), 0.35, facecolor="#cccccc" if name == "w" else "white",
                            edgecolor="black", lw=1.2))
        ax.text(x, y, label, ha="center", va="center", fontsize=12)
    for a, b in (("alpha", "theta"), ("theta", "z"), ("z", "w"), ("phi", "w"), ("beta", "phi")):
        (x0, y0, _), (x1, y1, _) = nodes[a], nodes[b]
        step = 0.38 if x1 > x0 else -0.38
        ax.annotate("", xy=(x1 - step, y1), xytext=(x0 + step, y0),
                    arrowprops={"arrowstyle": "->", "lw": 1.2})
    plates = ((2.9, 5.6, 0.6, 1.8, r"$N_d$ tokens"), (1.4, 5.9, 0.3, 2.1, r"$D$ documents"),
              (6.0, 7.2, 0.6, 1.8, r"$K$ topics"))
    for x0, x1, y0, y1, label in plates:
        ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0.02", fill=False, lw=1))
        ax.text(x1 - 0.05, y0 + 0.05, label, ha="right", va="bottom", fontsize=9)
    ax.set_xlim(0, 8.6)
    ax.set_ylim(0.1, 2.3)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


__all__ = [
    "TopicRun",
    "classify_features",
    "compare_topic_models",
    "content_words",
    "document_features",
    "encode",
    "error_slope",
    "fit_sklearn_lda",
    "minhash_error_study",
    "near_duplicate_eval",
    "plate_diagram",
    "scheme_average_precisions",
    "scurve_for",
    "scurve_widget",
    "stop_words",
    "topic_table",
    "topic_vocab",
]
