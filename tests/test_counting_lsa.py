"""LSA as Deerwester et al. did it: TF-IDF term-document matrix, truncated SVD, queries folded
in; against scikit-learn's TF-IDF and numpy's SVD on the same toy collection."""

from __future__ import annotations

import numpy as np
import pytest

from companion.counting.lsa import average_precision, fit_lsa, retrieval_eval

DOCS = [
    "human machine interface for computer applications",
    "a survey of user opinion of computer system response time",
    "the eps user interface management system",
    "system and human system engineering testing of eps",
    "relation of user perceived response time to error measurement",
    "the generation of random binary unordered trees",
    "the intersection graph of paths in trees",
    "graph minors iv widths of trees and well quasi ordering",
    "graph minors a survey",
]  # Deerwester et al.'s (1990) example titles
TOKS = [d.split() for d in DOCS]


@pytest.fixture(scope="module")
def lsa():
    return fit_lsa(TOKS, k=2, min_df=2)


def test_weighting_matches_scikit_learn(lsa):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(vocabulary=lsa.terms, token_pattern=r"\S+")
    ref = vec.fit_transform(DOCS).toarray()
    np.testing.assert_allclose(lsa.tfidf.toarray(), ref, atol=1e-12)


def test_svd_and_fold_in(lsa):
    x = lsa.tfidf.toarray().T  # terms x documents
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(lsa.s, s[:2], rtol=1e-6)
    # a document folded in as a query lands on its own row of V_k
    np.testing.assert_allclose(np.abs(lsa.fold_in([TOKS[3]])[0]), np.abs(vt[:2, 3]), atol=1e-6)
    np.testing.assert_allclose(lsa.fold_in([TOKS[3]])[0], lsa.vt[:, 3], atol=1e-6)


def test_lsa_finds_a_document_without_the_query_terms(lsa):
    query = ["human", "computer", "interaction"]
    terms = lsa.term_scores([query])[0]
    ranked = [i for i, _ in lsa.rank(query, top=5)]
    no_overlap = [i for i in ranked if terms[i] == 0]
    assert no_overlap, "LSA should rank a document that shares no term with the query"
    assert all(i < 5 for i in ranked[:3])  # the human-computer titles, not the graph ones
    with pytest.raises(TypeError, match="list of tokens"):
        lsa.rank("human computer")
    with pytest.raises(ValueError, match="method"):
        lsa.rank(query, method="bm25")


def test_average_precision_by_hand():
    # relevant at ranks 1 and 3: AP = (1/1 + 2/3) / 2
    assert average_precision([0.9, 0.8, 0.7, 0.1], [True, False, True, False]) == pytest.approx(5 / 6)
    with pytest.raises(ValueError, match="relevant"):
        average_precision([0.1, 0.2], [False, False])


def test_retrieval_eval_and_bad_input(lsa):
    rel = np.zeros((2, len(DOCS)), bool)
    rel[0, :5] = True
    rel[1, 5:] = True
    excl = np.zeros_like(rel)
    excl[0, 0] = excl[1, 8] = True
    out = retrieval_eval(lsa, [["user", "interface"], ["graph", "trees"]], rel & ~excl, excl)
    assert set(out) == {"LSA", "term matching"} and all(v.shape == (2,) for v in out.values())
    assert (out["LSA"] > 0.5).all()
    with pytest.raises(ValueError, match="k <"):
        fit_lsa(TOKS, k=50)
    with pytest.raises(ValueError, match="at least 3"):
        fit_lsa(TOKS[:2], k=1)
