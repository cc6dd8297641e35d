"""Chapter 5 baselines: bag of words / TF-IDF, averaged vectors, SIF."""

import math

import pytest
import torch

from companion.sentence import (
    SIF,
    AveragedVectors,
    BagOfWords,
    first_component,
    remove_component,
    sif_weights,
    word_probabilities,
)

pytestmark = pytest.mark.usefixtures("one_thread")

DOCS = ["the cat sat", "the dog sat", "a cat and a dog"]


def test_tfidf_value_by_hand():
    bow = BagOfWords("tfidf").fit(DOCS)
    X = bow.encode(["the cat cat"])
    # idf = ln((1 + N) / (1 + df)) + 1 with N = 3; "the": df 2, "cat": df 2
    idf = math.log(4 / 3) + 1
    raw = {"the": 1 * idf, "cat": 2 * idf}
    norm = math.sqrt(sum(v * v for v in raw.values()))
    assert X[0, bow.index["cat"]].item() == pytest.approx(raw["cat"] / norm, rel=1e-6)
    assert X[0, bow.index["the"]].item() == pytest.approx(raw["the"] / norm, rel=1e-6)
    assert X[0, bow.index["dog"]].item() == 0


def test_tfidf_matches_sklearn():
    sk = pytest.importorskip("sklearn.feature_extraction.text")
    from companion.data import tokenize

    ref = sk.TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None).fit(DOCS)
    ours = BagOfWords("tfidf").fit(DOCS)
    assert list(ours.index) == list(ref.get_feature_names_out())
    q = ["the dog and the cat", "unknown words only"]
    assert torch.allclose(ours.encode(q), torch.tensor(ref.transform(q).toarray(), dtype=torch.float32), atol=1e-6)


def test_counts_and_binary():
    c = BagOfWords("count").fit(DOCS).encode(["a a cat"])
    b = BagOfWords("binary").fit(DOCS).encode(["a a cat"])
    assert sorted(c[0][c[0] > 0].tolist()) == [1.0, 2.0]
    assert sorted(b[0][b[0] > 0].tolist()) == [1.0, 1.0]


def test_bag_of_words_bad_input():
    with pytest.raises(ValueError, match="weighting"):
        BagOfWords("bm25")
    with pytest.raises(RuntimeError, match="fit"):
        BagOfWords().encode(["x"])
    with pytest.raises(TypeError, match="list of strings"):
        BagOfWords().fit("the cat sat")
    with pytest.raises(ValueError, match="min_df"):
        BagOfWords(min_df=5).fit(DOCS)


def test_averaged_vectors():
    V = torch.tensor([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]])
    enc = AveragedVectors(V, ["cat", "dog", "the"])
    X = enc.encode(["cat dog", "the zebra", "zebra", ""])
    assert torch.allclose(X, torch.tensor([[0.5, 1.0], [4.0, 4.0], [0.0, 0.0], [0.0, 0.0]]))
    W = AveragedVectors(V, ["cat", "dog", "the"], weights={"cat": 3.0, "dog": 1.0}).encode(["cat dog"])
    assert torch.allclose(W, torch.tensor([[1.5, 1.0]]))  # (3 v_cat + v_dog) / 2


def test_averaged_vectors_bad_input():
    with pytest.raises(ValueError, match="one word per row"):
        AveragedVectors(torch.zeros(3, 2), ["a", "b"])
    with pytest.raises(ValueError, match="2-D"):
        AveragedVectors(torch.zeros(3), ["a", "b", "c"])
    with pytest.raises(TypeError, match="not a str"):
        AveragedVectors(torch.zeros(1, 2), ["a"]).encode([1])


def test_sif_weights_by_hand():
    p = word_probabilities(["the cat the dog"])
    assert p == {"the": 0.5, "cat": 0.25, "dog": 0.25}
    w = sif_weights(p, a=0.5)
    assert w["the"] == pytest.approx(0.5 / (0.5 + 0.5))
    assert w["cat"] == pytest.approx(0.5 / 0.75)
    with pytest.raises(ValueError, match="positive"):
        sif_weights(p, a=0)
    with pytest.raises(ValueError, match="probability"):
        sif_weights({"x": 2.0})


def test_first_component_matches_svd_and_removal_is_orthogonal():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(50, 6, generator=g) + torch.tensor([3.0, 0, 0, 1, 0, 0])  # a strong common direction
    u = first_component(X)
    v = torch.linalg.svd(X.double(), full_matrices=False).Vh[0].float()
    assert abs(float(u @ v)) == pytest.approx(1.0, abs=1e-5)
    R = remove_component(X, u)
    assert (R @ u).abs().max() < 1e-4
    assert torch.allclose(first_component(torch.zeros(3, 2)), torch.zeros(2))


def test_sif_end_to_end():
    g = torch.Generator().manual_seed(1)
    words = ["the", "a", "cat", "dog", "sat", "ran"]
    V = torch.randn(6, 4, generator=g)
    sents = ["the cat sat", "a dog ran", "the dog sat", "a cat ran"]
    sif = SIF(V, words, word_probabilities(sents), a=1e-2).fit(sents)
    X = sif.encode(sents + ["the the the"])
    assert X.shape == (5, 4)
    assert (X @ sif.component).abs().max() < 1e-5
    with pytest.raises(RuntimeError, match="fit"):
        SIF(V, words, {}).encode(["the cat"])
    assert torch.allclose(SIF(V, words, {}, remove=False).encode(["cat dog"]), (V[2] + V[3]).unsqueeze(0) / 2)
