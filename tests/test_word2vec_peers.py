"""Parity with gensim 4.4.0's Word2Vec on the same tokens and hyperparameters (``make test-peers``).

Exact where the algorithms are defined the same way (vocabulary order, subsampling rates, noise
distribution); a loose bound where training is stochastic (same structure learnt, similar
quality). The full-corpus comparison is ``benchmarks/bench_word2vec.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from companion.evaluate import spearman
from companion.word2vec import encode_corpus, keep_probability, noise_distribution, train_word2vec

pytestmark = pytest.mark.peers
gensim_models = pytest.importorskip("gensim.models")

TOPICS, PER_TOPIC = 8, 20


def ring_sentences(n_sent=3000, length=12, seed=11):
    """Topics on a ring: a sentence about topic t also borrows words of t-1 and t+1, so how
    similar two topics' words should be falls with their distance on the ring."""
    g = torch.Generator().manual_seed(seed)
    function = ["the", "of", "and", "a", "to"]
    out = []
    for _ in range(n_sent):
        t = int(torch.randint(0, TOPICS, (1,), generator=g))
        s = []
        for _ in range(length):
            u = float(torch.rand(1, generator=g))
            if u < 0.3:
                s.append(function[int(torch.randint(0, len(function), (1,), generator=g))])
            else:
                k = (t + (0 if u < 0.8 else 1 if u < 0.9 else -1)) % TOPICS
                s.append(f"k{k}w{int(torch.randint(0, PER_TOPIC, (1,), generator=g))}")
        out.append(s)
    return out


def topic_cosines(vectors: torch.Tensor, words: list[str]) -> torch.Tensor:
    """Mean cosine between the words of every pair of different topics: ``[TOPICS*(TOPICS-1)/2]``."""
    rows = [i for i, w in enumerate(words) if w.startswith("k")]
    topic = torch.tensor([int(words[i][1:].split("w")[0]) for i in rows])
    x = torch.nn.functional.normalize(vectors[rows].float(), dim=1)
    cos = x @ x.t()
    out = []
    for a in range(TOPICS):
        for b in range(a + 1, TOPICS):
            out.append(cos[topic == a][:, topic == b].mean())
    return torch.stack(out)


def ring_distance() -> torch.Tensor:
    return torch.tensor([min(b - a, TOPICS - (b - a)) for a in range(TOPICS) for b in range(a + 1, TOPICS)], dtype=torch.float64)


SENTS = ring_sentences()
HYPER = dict(window=5, negative=5, min_count=1, sample=1e-3, epochs=5)


@pytest.fixture(scope="module")
def gensim_model():
    return gensim_models.Word2Vec(
        SENTS, vector_size=32, sg=1, hs=0, workers=1, seed=1, alpha=0.025, min_alpha=0.025e-4,
        window=HYPER["window"], negative=HYPER["negative"], min_count=HYPER["min_count"],
        sample=HYPER["sample"], epochs=HYPER["epochs"],
    )


@pytest.fixture(scope="module")
def ours():
    n = torch.get_num_threads()
    try:
        return train_word2vec(SENTS, arch="sg", output="neg", dim=32, device="cpu", seed=1, **HYPER)
    finally:
        torch.set_num_threads(n)


def test_same_vocabulary_and_counts(gensim_model):
    vocab = encode_corpus(SENTS, min_count=1).vocab
    counts = {w: gensim_model.wv.get_vecattr(w, "count") for w in gensim_model.wv.index_to_key}
    assert {w: int(c) for w, c in zip(vocab.itos, vocab.counts.tolist())} == counts
    # both sort by decreasing count
    assert [counts[w] for w in gensim_model.wv.index_to_key] == sorted(counts.values(), reverse=True)


def test_subsampling_rates_equal_gensims(gensim_model):
    wv = gensim_model.wv
    counts = torch.tensor([wv.get_vecattr(w, "count") for w in wv.index_to_key])
    ours = keep_probability(counts, HYPER["sample"], rule="c")
    theirs = torch.tensor([wv.get_vecattr(w, "sample_int") / 2**32 for w in wv.index_to_key], dtype=torch.float64)
    assert torch.allclose(ours, theirs, atol=1e-9)
    assert float(ours.min()) < 0.9  # the frequent words really are subsampled here


def test_noise_distribution_equals_gensims_cum_table(gensim_model):
    wv = gensim_model.wv
    counts = torch.tensor([wv.get_vecattr(w, "count") for w in wv.index_to_key])
    cum = np.asarray(gensim_model.cum_table, dtype=np.float64)
    theirs = np.diff(np.concatenate([[0.0], cum])) / cum[-1]
    assert np.allclose(noise_distribution(counts).numpy(), theirs, atol=1e-8)


def test_same_structure_learnt_as_gensim(gensim_model, ours):
    """Both models should find that neighbouring topics on the ring are more alike."""
    g_vec = torch.from_numpy(np.array(gensim_model.wv.vectors))
    ours_cos = topic_cosines(ours.vectors(), ours.vocab.itos)
    g_cos = topic_cosines(g_vec, list(gensim_model.wv.index_to_key))
    truth = -ring_distance()
    g_rho = spearman(g_cos.numpy(), truth.numpy())
    ours_rho = spearman(ours_cos.numpy(), truth.numpy())
    assert g_rho > 0.6, f"gensim itself did not learn the ring ({g_rho:.3f}); the corpus is too small"
    assert ours_rho > g_rho - 0.1, f"ours {ours_rho:.3f} vs gensim {g_rho:.3f}"
    agree = spearman(ours_cos.numpy(), g_cos.numpy())
    assert agree > 0.6, f"topic similarities of ours and gensim's vectors correlate only {agree:.3f}"
