"""Count-based representations: one-hot, bag of words, TF-IDF, co-occurrence, PPMI, SVD."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from companion.counting import (
    bag_of_words,
    build_vocab,
    cooccurrence_matrix,
    count_word_vectors,
    dense_rows,
    one_hot,
    ppmi,
    similarity_table,
    sparse_neighbours,
    svd_vectors,
    tfidf,
    truncated_svd,
)


def test_one_hot_and_bag_of_words():
    v = ["a", "b", "c"]
    assert one_hot(["c"], v).tolist() == [[0.0, 0.0, 1.0]]
    assert one_hot(["z"], v, unknown="zeros").sum() == 0
    with pytest.raises(KeyError, match="not in the vocabulary"):
        one_hot(["z"], v)
    with pytest.raises(TypeError):
        one_hot("abc", v)
    m = bag_of_words([["a", "b", "a", "z"], [], ["c"]], {"a": 0, "b": 1, "c": 2})
    assert sp.issparse(m) and m.toarray().tolist() == [[2, 1, 0], [0, 0, 0], [0, 0, 1]]
    assert bag_of_words([["a", "a"]], v, binary=True).toarray().tolist() == [[1, 0, 0]]
    with pytest.raises(ValueError, match="twice"):
        bag_of_words([["a"]], ["a", "a"])
    with pytest.raises(TypeError, match="one string"):
        bag_of_words("a b", v)
    assert build_vocab([["b", "a", "b"], ["c"]]) == ["b", "a", "c"]
    assert build_vocab([["b", "a", "b"]], min_count=2) == ["b"]


def test_tfidf_by_hand():
    counts = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    out = tfidf(counts, norm=None).toarray()
    idf = np.log(3 / np.array([2, 3, 2])) + 1  # smooth: ln((1+N)/(1+df)) + 1
    assert np.allclose(out, counts * idf)
    l2 = tfidf(counts).toarray()
    assert np.allclose(np.linalg.norm(l2, axis=1), 1)
    raw = tfidf(counts, smooth=False, norm=None).toarray()
    assert np.allclose(raw[0], counts[0] * (np.log(2 / np.array([1, 2, 1])) + 1))
    sub = tfidf(counts, sublinear_tf=True, norm="l1").toarray()
    assert np.allclose(sub.sum(axis=1), 1)
    with pytest.raises(ValueError, match=">= 0"):
        tfidf(-counts)
    with pytest.raises(ValueError, match="norm"):
        tfidf(counts, norm="max")


def test_cooccurrence_by_hand():
    sents = [["a", "b", "c"], ["c", "a"]]
    c = cooccurrence_matrix(sents, window=1, vocab=["a", "b", "c"])
    m = c.matrix.toarray()
    # pairs at distance 1 within sentences: (a,b), (b,c), (c,a), counted both ways
    assert m.tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    c2 = cooccurrence_matrix(sents, window=2, vocab=["a", "b", "c"], weighting="harmonic", symmetric=False)
    m2 = c2.matrix.toarray()
    assert m2[0, 2] == pytest.approx(0.5) and m2[2, 0] == 1.0 and m2[0, 1] == 1.0
    # sentence boundaries are never crossed: "c" (end of 1st) and "c" (start of 2nd) are not neighbours
    assert m[2, 2] == 0
    # out-of-vocabulary words keep their place: with b dropped, a and c stay 2 apart
    c3 = cooccurrence_matrix([["a", "b", "c"]], window=1, vocab=["a", "c"])
    assert c3.matrix.nnz == 0
    assert c.row("a").tolist() == [0, 1, 1]
    assert c.counts.tolist() == [2, 1, 2]
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="window"):
            cooccurrence_matrix(sents, window=bad)
    with pytest.raises(ValueError, match="weighting"):
        cooccurrence_matrix(sents, weighting="gaussian")
    with pytest.raises(ValueError, match="empty"):
        cooccurrence_matrix(sents, min_count=10)


def test_ppmi_matches_dense_formula():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, (6, 7)).astype(float)
    for alpha in (1.0, 0.75):
        total = counts.sum()
        pc = counts.sum(0) ** alpha / (counts.sum(0) ** alpha).sum()
        with np.errstate(divide="ignore"):
            pmi = np.log(counts / total) - np.log(counts.sum(1, keepdims=True) / total) - np.log(pc)
        ref = np.maximum(np.nan_to_num(pmi, neginf=0.0), 0)
        assert np.allclose(ppmi(counts, alpha=alpha).toarray(), ref)
    shifted = ppmi(counts, alpha=1.0, shift=5).toarray()
    assert (shifted <= np.maximum(ppmi(counts, alpha=1.0).toarray() - math.log(5), 0) + 1e-12).all()
    with pytest.raises(ValueError, match="alpha"):
        ppmi(counts, alpha=0)
    with pytest.raises(ValueError, match="all zero"):
        ppmi(np.zeros((2, 2)))


def test_truncated_svd_matches_lapack():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((80, 30)) @ np.diag(np.linspace(5, 0.1, 30)) @ rng.standard_normal((30, 60))
    u_ref, s_ref, vt_ref = np.linalg.svd(a, full_matrices=False)
    for mat, tol in ((a, 1e-8), (sp.csr_matrix(a), 1e-5)):  # sparse products run in float32
        u, s, vt = truncated_svd(mat, 5)
        assert np.allclose(s, s_ref[:5], rtol=tol)
        assert np.allclose(np.abs(u), np.abs(u_ref[:, :5]), atol=tol * 100)
        assert np.allclose(u @ np.diag(s) @ vt, u_ref[:, :5] @ np.diag(s_ref[:5]) @ vt_ref[:5], atol=tol * 100)
    u2, s2, _ = truncated_svd(a, 5, method="arpack")
    assert np.allclose(s2, s_ref[:5])
    again = truncated_svd(a, 5)[0]
    assert np.array_equal(again, truncated_svd(a, 5)[0])  # deterministic
    v = svd_vectors(a, 4, eig_power=0.0)
    assert v.shape == (80, 4) and v.dtype == np.float32
    with pytest.raises(ValueError, match="k must be"):
        truncated_svd(a, 30 * 3)
    with pytest.raises(ValueError, match="method"):
        truncated_svd(a, 3, method="qr")
    with pytest.raises(ValueError, match="NaN"):
        truncated_svd(np.full((4, 4), np.nan), 2)


def two_topic_corpus(n: int = 300, seed: int = 0) -> list[list[str]]:
    """Sentences about animals or vehicles: words of one topic share contexts."""
    rng = np.random.default_rng(seed)
    topics = [["cat", "dog", "horse", "cow"], ["car", "bus", "truck", "train"]]
    verbs = [["eats", "runs", "sleeps"], ["drives", "stops", "honks"]]
    out = []
    for _ in range(n):
        t = rng.integers(2)
        out.append(["the", str(rng.choice(topics[t])), str(rng.choice(verbs[t])), "near", "the",
                    str(rng.choice(topics[t]))])
    return out


def test_count_vectors_find_topics_and_evaluate():
    cv = count_word_vectors(two_topic_corpus(), window=2, min_count=1, dim=4)
    assert cv.svd.shape == (len(cv.words), 4)
    near = [w for w, _ in sparse_neighbours(cv.ppmi, cv.index, "cat", 3)]
    assert set(near) <= {"dog", "horse", "cow"}
    near_svd = [w for w, _ in sparse_neighbours(cv.svd, cv.index, "bus", 3)]
    assert set(near_svd) <= {"car", "truck", "train"}
    pairs = [("cat", "dog", 9.0), ("car", "bus", 9.0), ("cat", "car", 1.0), ("dog", "truck", 1.0),
             ("horse", "cow", 8.0), ("bus", "cow", 0.5), ("nope", "cat", 3.0)]
    table = similarity_table(cv.spaces(), cv.index, {"toy": pairs})
    assert list(table.index) == ["counts", "PPMI", "PPMI+SVD"]
    assert table.loc["PPMI", ("toy", "rho")] > 0.5
    assert table.loc["PPMI", ("toy", "coverage")] == pytest.approx(6 / 7)
    sub, index = dense_rows(cv.ppmi, cv.index, ["cat", "nope", "dog"])
    assert sub.shape == (2, len(cv.words)) and set(index) == {"cat", "dog"}
    with pytest.raises(KeyError):
        sparse_neighbours(cv.ppmi, cv.index, "nope")
    with pytest.raises(ValueError, match="rows"):
        similarity_table({"bad": cv.svd[:3]}, cv.index, {"toy": pairs})
