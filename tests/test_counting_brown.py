"""Brown clustering and the class-based bigram model: AMI by hand, the greedy merge against a
brute-force reference, bit strings as a prefix code, proper distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from companion.counting import KneserNey, NGramCounts
from companion.counting.brown_clusters import (
    BrownConfig,
    average_mutual_information,
    bigram_matrix,
    brown_clusters,
)
from companion.counting.class_lm import (
    ClassBigramLM,
    bootstrap_perplexity_ratio,
    fit_mixture,
)

pytestmark = pytest.mark.filterwarnings("ignore:Kneser-Ney discounts")  # toy corpora


def markov_corpus(n_words: int = 9, n_sents: int = 60, seed: int = 0) -> list[list[str]]:
    """Sentences from a random Markov chain: counts without ties, so the greedy choice is unique."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n_words)]
    trans = rng.dirichlet(np.full(n_words, 0.4), size=n_words)
    sents = []
    for _ in range(n_sents):
        w = int(rng.integers(n_words))
        s = [words[w]]
        for _ in range(int(rng.integers(2, 9))):
            w = int(rng.choice(n_words, p=trans[w]))
            s.append(words[w])
        sents.append(s)
    return sents


def test_ami_of_a_hand_example():
    # ids 0..3 = a, b, c, d; bigrams a->c 2, b->d 2, c->a 1, d->b 1; classes X = {a, b}, Y = {c, d}
    b = np.zeros((4, 4))
    b[0, 2] = b[1, 3] = 2
    b[2, 0] = b[3, 1] = 1
    # p(X, Y) = 4/6 with p_l(X) = p_r(Y) = 4/6; p(Y, X) = 2/6 with p_l(Y) = p_r(X) = 2/6
    by_hand = 4 / 6 * math.log((4 / 6) / (4 / 6 * 4 / 6)) + 2 / 6 * math.log((2 / 6) / (2 / 6 * 2 / 6))
    assert math.isclose(by_hand, 2 / 3 * math.log(1.5) + 1 / 3 * math.log(3))
    assert math.isclose(average_mutual_information(b, np.array([0, 0, 1, 1])), by_hand)
    # one class: no information; every word its own class: the word bigram MI
    assert average_mutual_information(b, np.zeros(4, int)) == pytest.approx(0.0, abs=1e-15)
    assert average_mutual_information(b, np.arange(4)) >= by_hand


def _brute_force(b: sp.csr_matrix, order: np.ndarray, c: int) -> tuple[list[float], list[frozenset]]:
    """The windowed algorithm the slow way: try every pair, recompute the AMI from scratch."""
    cluster = np.full(b.shape[0], -1)
    cluster[order[:c]] = np.arange(c)
    losses, next_id = [], c
    for w in order[c:]:
        cluster[w] = next_id
        next_id += 1
        before = average_mutual_information(b, cluster)
        ids = sorted(set(cluster[cluster >= 0]))
        best = None
        for i, x in enumerate(ids):
            for y in ids[i + 1:]:
                trial = np.where(cluster == y, x, cluster)
                loss = before - average_mutual_information(b, trial)
                if best is None or loss < best[0]:
                    best = (loss, x, y)
        losses.append(best[0])
        cluster[cluster == best[2]] = best[1]
    parts = [frozenset(np.flatnonzero(cluster == k)) for k in set(cluster[cluster >= 0])]
    return losses, parts


def test_each_merge_loses_the_least_ami_among_all_pairs():
    sents = markov_corpus()
    counts = NGramCounts(sents, 2)
    res = brown_clusters(counts, BrownConfig(n_clusters=3, n_words=None), check_every=1)
    b, _ = bigram_matrix(counts)
    occ = np.maximum(np.asarray(b.sum(axis=1)).ravel(), np.asarray(b.sum(axis=0)).ravel())
    order = np.flatnonzero(occ > 0)
    order = order[np.argsort(-occ[order], kind="stable")]
    losses, parts = _brute_force(b, order, 3)
    ours = [loss for phase, _, _, loss in res.merges if phase == 1]
    np.testing.assert_allclose(ours, losses, rtol=1e-9, atol=1e-12)
    assert all(x >= -1e-12 for x in ours)  # merging never gains information
    mine = [frozenset(np.flatnonzero(res.cluster == k)) for k in range(res.n_clusters)]
    assert set(mine) == set(parts)
    # the AMI trace is the AMI of the partition the algorithm holds
    assert res.ami[-1] == pytest.approx(average_mutual_information(b, res.cluster))


def test_rare_words_join_the_class_that_loses_least():
    sents = markov_corpus(n_words=12, n_sents=80, seed=1)
    counts = NGramCounts(sents, 2)
    res = brown_clusters(counts, BrownConfig(n_clusters=3, n_words=6))
    b, _ = bigram_matrix(counts)
    assert len(res.words) == 6 and res.n_clusters == 3
    seen = np.asarray(b.sum(axis=0)).ravel() + np.asarray(b.sum(axis=1)).ravel() > 0
    assert (res.cluster[seen] >= 0).all() and (res.cluster[~seen] == -1).all()
    # moving the least frequent word to another class never raises the AMI
    last = counts.vocab.id(res.itos[int(np.argmin(np.where(seen, np.asarray(b.sum(axis=0)).ravel(), np.inf)))])
    base = average_mutual_information(b, res.cluster)
    for k in range(res.n_clusters):
        moved = res.cluster.copy()
        moved[last] = k
        assert average_mutual_information(b, moved) <= base + 1e-12


def test_bit_strings_are_a_prefix_code():
    res = brown_clusters(markov_corpus(n_words=14, n_sents=120), BrownConfig(n_clusters=6, n_words=10))
    paths = res.paths
    assert len(paths) == 6 and len(set(paths)) == 6
    assert all(set(p) <= {"0", "1"} and p for p in paths)
    for p in paths:
        assert not any(q != p and q.startswith(p) for q in paths)
    # a full binary tree: Kraft's sum is exactly 1
    assert sum(2.0 ** -len(p) for p in paths) == pytest.approx(1.0)
    w = res.words[0]
    assert res.path(w) == paths[res.cluster[res._stoi[w]]]
    groups = res.prefix_groups(1)
    assert sorted(groups) == ["0", "1"] and sum(len(g) for g in groups.values()) == 6
    with pytest.raises(KeyError, match="not clustered"):
        res.path("no-such-word")


def test_bad_sizes_are_refused():
    sents = markov_corpus()
    with pytest.raises(ValueError, match="n_clusters"):
        brown_clusters(sents, BrownConfig(n_clusters=0))
    with pytest.raises(ValueError, match="n_words"):
        brown_clusters(sents, BrownConfig(n_clusters=4, n_words=2))
    with pytest.raises(ValueError, match="bigram"):
        brown_clusters(NGramCounts(sents, 1), BrownConfig(n_clusters=2))


@pytest.fixture(scope="module")
def class_lm():
    train = markov_corpus(n_words=12, n_sents=150, seed=2)
    vocab = sorted({w for s in train for w in s}) + ["never-seen"]
    counts = NGramCounts(train, 3, vocab=vocab)
    res = brown_clusters(counts.truncate(2), BrownConfig(n_clusters=4, n_words=8))
    return counts, ClassBigramLM(counts, res), markov_corpus(n_words=12, n_sents=40, seed=3)


def test_class_lm_is_a_proper_distribution(class_lm):
    counts, lm, test = class_lm
    for ctx in (["<s>"], ["w0"], ["w5"], ["<unk>"], ["never-seen"], None):
        p = lm.next_distribution(ctx)
        assert p.sum() == pytest.approx(1.0, abs=1e-12) and p[0] == 0.0
        assert (p[1:] > 0).all()  # every word, unseen ones included, keeps some probability
    # the fast scoring path agrees with the one-context-at-a-time path
    s = test[0]
    hist, probs = ["<s>"], []
    for w in s + ["</s>"]:
        probs.append(lm.prob(w, hist))
        hist.append(w)
    np.testing.assert_allclose(lm.token_probs([s]), probs, rtol=1e-12)
    # p(w | v) = p(c(w) | c(v)) p(w | c(w))
    v, w = counts.vocab.id("w1"), counts.vocab.id("w2")
    assert lm.prob("w2", ["w1"]) == pytest.approx(lm.trans[lm.cls[v], lm.cls[w]] * lm.p_word[w])
    assert math.isfinite(lm.perplexity(test))


def test_mixture_and_bootstrap(class_lm):
    counts, lm, test = class_lm
    kn = KneserNey(counts, order=3)
    mix = fit_mixture([kn, lm], test[:20])
    assert mix.weights.sum() == pytest.approx(1.0) and (mix.weights > 0).all()
    assert mix.next_distribution(["<s>", "w1"]).sum() == pytest.approx(1.0)
    # EM on the held-out text can only help there
    assert mix.perplexity(test[:20]) <= min(kn.perplexity(test[:20]), lm.perplexity(test[:20])) + 1e-9
    same = bootstrap_perplexity_ratio(kn, kn, test, n_boot=50)
    assert same == {"ratio": 1.0, "low": 1.0, "high": 1.0}
    r = bootstrap_perplexity_ratio(mix, kn, test, n_boot=200)
    assert r["low"] <= r["ratio"] <= r["high"]
    assert r["ratio"] == pytest.approx(mix.perplexity(test) / kn.perplexity(test))
    with pytest.raises(ValueError, match="sum to 1"):
        type(mix)([kn, lm], [0.5, 0.6])
