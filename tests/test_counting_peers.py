"""Parity with the peers: NLTK's nltk.lm (add-k, Jelinek-Mercer) and KenLM's lmplz/query
(modified Kneser-Ney), on synthetic text and on Brown with Bengio's split.

Run with ``make test-peers`` (which builds KenLM first) or ``pytest -m peers``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from companion.counting import AddK, JelinekMercer, MLE, ModifiedKneserNey, NGramCounts, compare_with_arpa

pytestmark = [pytest.mark.peers, pytest.mark.filterwarnings("ignore:Kneser-Ney discounts")]


def zipf_corpus(n_sents: int, seed: int, vocab: int = 400) -> list[list[str]]:
    """Sentences from a random bigram process over Zipf-distributed words."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.1
    p /= p.sum()
    trans = 0.6 * rng.dirichlet(np.full(vocab, 0.05), size=vocab) + 0.4 * p
    out = []
    for _ in range(n_sents):
        w = rng.choice(vocab, p=p)
        s = []
        for _ in range(int(rng.integers(1, 15))):
            s.append(f"w{w}")
            w = rng.choice(vocab, p=trans[w])
        out.append(s)
    return out


@pytest.fixture(scope="module")
def synthetic():
    return zipf_corpus(3000, seed=11), zipf_corpus(300, seed=12)


def ngram_sentences(sents, order):
    """For NLTK: at each predicted token, the k-grams (k = 1..order) ending there, context cut at <s>."""
    out = []
    for s in sents:
        toks = ["<s>"] + list(s) + ["</s>"]
        grams = []
        for i in range(1, len(toks)):
            for k in range(1, min(order, i + 1) + 1):
                grams.append(tuple(toks[i - k + 1: i + 1]))
        out.append(grams)
    return out


def nltk_model(cls, sents, order, **kwargs):
    """An NLTK model over the same n-grams and the same vocabulary as ours (see the module doc).

    NLTK's own pipeline (padded_everygram_pipeline) pads with n-1 <s> and n-1 </s> and puts <s> in
    the vocabulary; here its counter gets our n-grams directly and its vocabulary is the
    predicted symbols (words, </s>, <unk>), so both normalise over the same |V'|.
    """
    from nltk.lm import Vocabulary

    vocab = Vocabulary([w for s in sents for w in s] + ["</s>"], unk_cutoff=1, unk_label="<unk>")
    lm = cls(order=order, vocabulary=vocab, **kwargs)
    lm.counts.update(ngram_sentences(sents, order))
    return lm


def nltk_scores(lm, sents, order, vocab):
    out = []
    for s in sents:
        toks = ["<s>"] + [w if w in vocab else "<unk>" for w in s] + ["</s>"]
        for i in range(1, len(toks)):
            out.append(lm.unmasked_score(toks[i], tuple(toks[max(0, i - order + 1): i])))
    return np.array(out)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("k", [1.0, 0.05])
def test_add_k_matches_nltk_lidstone(synthetic, order, k):
    from nltk.lm import Laplace, Lidstone

    train, test = synthetic
    train = train[:800]
    ours = AddK.fit(train, order, k=k)
    theirs = nltk_model(Laplace, train, order) if k == 1.0 else nltk_model(Lidstone, train, order, gamma=k)
    assert len(theirs.vocab) == ours.vocab.n_predictable
    assert np.allclose(ours.token_probs(test), nltk_scores(theirs, test, order, ours.vocab), rtol=1e-9, atol=0)


@pytest.mark.parametrize("order", [2, 3])
def test_jelinek_mercer_matches_nltk_interpolated(synthetic, order):
    from nltk.lm.api import Smoothing
    from nltk.lm.models import InterpolatedLanguageModel

    class JelinekMercerSmoothing(Smoothing):
        """λ_k ML + (1 - λ_k) lower order; the unigram level mixes with the uniform distribution."""

        def __init__(self, vocabulary, counter, lambdas):
            super().__init__(vocabulary, counter)
            self.lambdas = lambdas

        def unigram_score(self, word):
            lam = self.lambdas[0]
            return lam * self.counts.unigrams.freq(word) + (1 - lam) / len(self.vocab)

        def alpha_gamma(self, word, context):
            lam = self.lambdas[len(context)]
            return lam * self.counts[context].freq(word), 1 - lam

    train, test = synthetic
    train = train[:800]
    lambdas = [0.9, 0.6, 0.3][:order]
    ours = JelinekMercer.fit(train, order, lambdas=lambdas)
    theirs = nltk_model(InterpolatedLanguageModel, train, order, smoothing_cls=JelinekMercerSmoothing,
                        params={"lambdas": lambdas})
    assert np.allclose(ours.token_probs(test), nltk_scores(theirs, test, order, ours.vocab), rtol=1e-9, atol=0)


def test_mle_matches_nltk_on_seen_contexts(synthetic):
    from nltk.lm import MLE as NltkMLE

    train, _ = synthetic
    train = train[:300]
    ours = MLE.fit(train, 2)
    theirs = nltk_model(NltkMLE, train, 2)
    # on training text every context is seen, where both are relative frequencies
    assert np.allclose(ours.token_probs(train[:50]), nltk_scores(theirs, train[:50], 2, ours.vocab), rtol=1e-12)


# ------------------------------------------------------------------ KenLM
@pytest.fixture(scope="module")
def kenlm():
    from companion.peers import kenlm_build

    try:
        kenlm_build.ensure()
    except kenlm_build.KenLMUnavailable as err:  # `make test-peers` builds it first and fails loudly
        pytest.skip(f"KenLM is not built and cannot be built here: {err}")
    return kenlm_build


@pytest.mark.parametrize("order", [2, 3, 5])
def test_modified_kn_matches_kenlm_on_synthetic_text(kenlm, synthetic, tmp_path, order):
    train, test = synthetic
    test = test + [["w1", "never-seen-word", "w2"]]  # one OOV: both score it as <unk>
    run = kenlm.lmplz(train, order, tmp_path / "model.arpa", discount_fallback=True)
    q = kenlm.query(run.arpa, test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = ModifiedKneserNey.fit(train, order, kenlm_compat=True)
        plain = ModifiedKneserNey(exact.counts)
    assert q.n_tokens == sum(len(s) + 1 for s in test) and q.n_oov == 1
    # with lmplz's discount statistics, every probability is KenLM's to float32 precision
    assert np.allclose(exact.discounts, [run.discounts[k] for k in range(1, order + 1)], rtol=1e-5)  # printed to 6 digits
    assert np.abs(np.log10(exact.token_probs(test)) - np.array(q.log10_probs)).max() < 2e-6
    assert exact.perplexity(test) == pytest.approx(q.perplexity, rel=1e-6)
    cmp = compare_with_arpa(exact, run.arpa)
    assert cmp.missing_in_model == 0 and cmp.worst < 2e-6, cmp
    # the textbook estimate differs by one n-gram per order in the discount statistics: < 0.1 %
    assert plain.perplexity(test) == pytest.approx(q.perplexity, rel=1e-3)


@pytest.fixture(scope="module")
def brown():
    from companion.data import DataUnavailableError, bengio_split

    try:
        split = bengio_split()
    except DataUnavailableError as err:
        pytest.skip(f"Brown is not cached and cannot be fetched: {err}")

    def rename(sents):  # KenLM reserves <unk>; give both models the same ordinary token
        return [["<rare>" if w == "<unk>" else w for w in s] for s in sents]

    return rename(split.train), rename(split.test)


@pytest.mark.slow
@pytest.mark.parametrize("order", [3, 5])
def test_modified_kn_matches_kenlm_on_brown(kenlm, brown, tmp_path, order):
    train, test = brown
    run = kenlm.lmplz(train, order, tmp_path / "brown.arpa")
    q = kenlm.query(run.arpa, test)
    counts = NGramCounts(train, order)
    plain = ModifiedKneserNey(counts)
    exact = ModifiedKneserNey(counts, kenlm_compat=True)
    assert q.n_oov == 0 and q.n_tokens == sum(len(s) + 1 for s in test)
    assert plain.perplexity(test) == pytest.approx(q.perplexity, rel=1e-3)  # the bar: 0.1 %
    assert exact.perplexity(test) == pytest.approx(q.perplexity, rel=1e-7)
    assert np.abs(np.log10(exact.token_probs(test)) - np.array(q.log10_probs)).max() < 2e-6
    if order == 3:  # every n-gram of the ARPA file (5-grams: same code, 20 s more)
        cmp = compare_with_arpa(exact, run.arpa)
        assert cmp.missing_in_model == 0 and cmp.worst < 2e-6, cmp
    assert math.isfinite(plain.perplexity(test))


def test_kenlm_table_renames_unk_for_both(kenlm, synthetic):
    from companion.counting import kenlm_table

    train, test = synthetic
    train = [["<unk>" if w == "w7" else w for w in s] for s in train]  # like Bengio's rare words
    table = kenlm_table(train, test, orders=(2, 3), discount_fallback=True)
    assert list(table.index) == [2, 3]
    assert (table["relative difference"].abs() < 1e-3).all()
    assert (table["ours build s"] > 0).all() and (table["KenLM build s"] > 0).all()
