"""Chapter 4 against peer libraries (``make test-peers``): fastText's official bindings (C++) and
gensim. GloVe has no peer here: ``glove-python`` does not build on Python 3.11."""

from __future__ import annotations

import random

import numpy as np
import pytest

from companion.static import char_ngrams, fnv1a_32, ngram_buckets, train_fasttext

pytestmark = [pytest.mark.peers, pytest.mark.usefixtures("one_thread")]

WORDS = ["where", "the", "a", "naïve", "café", "東京", "straße", "😀ok", "embeddings", "x"]
TOPICS = {"a": ["zarb", "quil", "morv", "tesk"], "b": ["plon", "gweb", "fuds", "kaxi"]}
SUFFIXES = ["", "ing", "ed", "er", "s"]


def _corpus(n: int = 600, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = {t: [s + x for s in stems for x in SUFFIXES] for t, stems in TOPICS.items()}
    return [[rng.choice(vocab["a" if k % 2 else "b"]) for _ in range(8)] for k in range(n)]


def _topic(word: str) -> str:
    return "a" if any(word.startswith(s) for s in TOPICS["a"]) else "b"


def _purity(vectors: np.ndarray, words: list[str], k: int = 5) -> float:
    """Share of each word's k nearest neighbours (cosine) that belong to its topic."""
    u = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = u @ u.T
    np.fill_diagonal(sims, -np.inf)
    top = np.argsort(-sims, axis=1)[:, :k]
    return float(np.mean([[_topic(words[j]) == _topic(words[i]) for j in row] for i, row in enumerate(top)]))


@pytest.fixture(scope="module")
def cpp_model(tmp_path_factory):
    fasttext = pytest.importorskip("fasttext")
    path = tmp_path_factory.mktemp("ft") / "corpus.txt"
    lines = _corpus() + [WORDS]
    path.write_text("\n".join(" ".join(s) for s in lines) + "\n", encoding="utf-8")
    return fasttext.train_unsupervised(str(path), model="skipgram", dim=16, ws=3, epoch=10, minCount=1, neg=5,
                                       minn=3, maxn=6, bucket=2_000_000, lr=0.05, t=1.0, thread=1, verbose=0)


@pytest.mark.parametrize("word", WORDS + ["unseenword", "ünseen"])
def test_ngrams_and_ids_equal_the_official_bindings(cpp_model, word):
    subs, ids = cpp_model.get_subwords(word)
    nwords = len(cpp_model.words)
    if word in cpp_model.words:  # in the vocabulary: the word itself comes first
        assert subs[0] == word and ids[0] == cpp_model.get_word_id(word)
        subs, ids = subs[1:], ids[1:]
    assert list(subs) == char_ngrams(word)
    assert [int(i) for i in ids] == (nwords + ngram_buckets(char_ngrams(word), 2_000_000)).tolist()


def test_full_width_hashes_equal_the_official_bindings(tmp_path):
    fasttext = pytest.importorskip("fasttext")
    path = tmp_path / "c.txt"
    path.write_text("a b\n", encoding="utf-8")
    big = 2_000_000_000  # nearly the whole 32-bit range: hash % big keeps almost every bit
    m = fasttext.train_unsupervised(str(path), model="skipgram", dim=2, epoch=1, minCount=1, minn=2, maxn=4,
                                    bucket=big, thread=1, verbose=0)
    nwords = len(m.words)
    for word in ["naïve", "東京", "😀", "ÿ"]:
        subs, ids = m.get_subwords(word)
        assert [int(i) - nwords for i in ids] == [fnv1a_32(g) % big for g in subs]


def test_ngrams_and_hashes_equal_gensim():
    fi = pytest.importorskip("gensim.models.fasttext_inner")
    for word in WORDS:
        assert [b.decode("utf-8") for b in fi.compute_ngrams_bytes(word, 3, 6)] == char_ngrams(word)
        for g in char_ngrams(word):
            assert fi.ft_hash_bytes(g.encode("utf-8")) == fnv1a_32(g)


@pytest.fixture(scope="module")
def ours():
    return train_fasttext(_corpus() + [WORDS], dim=16, window=3, epochs=10, min_count=1, negative=5, bucket=2_000_000,
                          lr=0.05, sample=0.0, batch_size=64, seed=0)


def test_same_quality_as_the_official_code(ours, cpp_model):
    words = [w for w in ours.vocab.itos if w not in WORDS]
    ours_p = _purity(ours.model.vectors_of(words).numpy(), words)
    cpp_p = _purity(np.stack([cpp_model.get_word_vector(w) for w in words]), words)
    assert cpp_p > 0.8
    assert ours_p >= cpp_p - 0.1, (ours_p, cpp_p)


def test_same_quality_as_gensim(ours):
    models = pytest.importorskip("gensim.models")
    g = models.FastText(sentences=_corpus() + [WORDS], vector_size=16, window=3, min_count=1, sg=1, negative=5,
                        min_n=3, max_n=6, bucket=2_000_000, alpha=0.05, sample=0, ns_exponent=0.5, workers=1,
                        epochs=10, seed=1)
    words = [w for w in ours.vocab.itos if w not in WORDS]
    ours_p = _purity(ours.model.vectors_of(words).numpy(), words)
    gen_p = _purity(np.stack([g.wv[w] for w in words]), words)
    assert gen_p > 0.8
    assert ours_p >= gen_p - 0.1, (ours_p, gen_p)


def test_oov_vectors_agree_in_kind_with_the_official_code(ours, cpp_model):
    # an unseen inflection of a topic-a stem: both implementations put it in topic a
    words = [w for w in ours.vocab.itos if w not in WORDS]
    for name, vec, table in (
        ("ours", ours.vector("zarbings").numpy(), ours.model.vectors_of(words).numpy()),
        ("cpp", cpp_model.get_word_vector("zarbings"), np.stack([cpp_model.get_word_vector(w) for w in words])),
    ):
        u = table / np.linalg.norm(table, axis=1, keepdims=True)
        sims = u @ (vec / np.linalg.norm(vec))
        top = [words[k] for k in np.argsort(-sims)[:5]]
        assert all(_topic(w) == "a" for w in top), (name, top)

