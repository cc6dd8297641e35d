"""word2vec's training examples: vocabulary, subsampling, dynamic window, batches."""

from __future__ import annotations

import math

import pytest
import torch

from companion.word2vec import (
    pairs_of,
    build_vocab,
    context_matrix,
    encode_corpus,
    epoch_batches,
    keep_probability,
    reduced_windows,
    subsample,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread


def _zipf_sentences(n_sent=200, length=12, vocab=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    p = 1.0 / torch.arange(1, vocab + 1).double()
    ids = torch.multinomial(p, n_sent * length, replacement=True, generator=g).view(n_sent, length)
    return [[f"w{i}" for i in row.tolist()] for row in ids]


# -- vocabulary ------------------------------------------------------------------------------

def test_vocab_sorted_by_count_min_count_and_ties_in_first_occurrence_order():
    sents = [["b", "a", "c", "a", "d"], ["c", "a", "e", "e"]]
    v = build_vocab(sents, min_count=2)
    assert v.itos == ["a", "c", "e"]  # a:3, then c:2 (seen before e:2); b, d dropped
    assert v.counts.tolist() == [3, 2, 2]
    assert v.total == 7 and len(v) == 3 and "c" in v and "b" not in v


def test_encode_drops_rare_words_and_keeps_sentence_ids():
    sents = [["x", "a", "b"], ["a", "y", "b", "a"]]
    corpus = encode_corpus(sents, min_count=2)
    assert corpus.vocab.decode(corpus.ids.tolist()) == ["a", "b", "a", "b", "a"]
    assert corpus.sentence.tolist() == [0, 0, 1, 1, 1]


@pytest.mark.parametrize("bad, err", [
    ("just a string", TypeError),
    ([["ok"], "not a list"], TypeError),
    (42, TypeError),
])
def test_vocab_rejects_bad_sentences(bad, err):
    with pytest.raises(err, match="list"):
        build_vocab(bad, min_count=1)


def test_vocab_rejects_bad_min_count_and_too_few_words():
    with pytest.raises(ValueError, match="min_count"):
        build_vocab([["a", "b"]], min_count=0)
    with pytest.raises(ValueError, match="lower min_count"):
        build_vocab([["a", "b"]], min_count=5)


# -- subsampling -----------------------------------------------------------------------------

def test_keep_probability_both_rules_by_hand():
    counts = torch.tensor([900, 90, 10])  # f = 0.9, 0.09, 0.01
    t = 0.01
    f = torch.tensor([0.9, 0.09, 0.01], dtype=torch.float64)
    paper = keep_probability(counts, t, rule="paper")
    c_rule = keep_probability(counts, t, rule="c")
    assert torch.allclose(paper, (t / f).sqrt().clamp(max=1))
    assert torch.allclose(c_rule, (((f / t).sqrt() + 1) * (t / f)).clamp(max=1))  # the C code's formula
    assert c_rule[2] == 1.0 and paper[2] == 1.0  # f <= t: always kept
    assert bool((c_rule >= paper).all())  # the C rule keeps more (by t/f)
    assert keep_probability(counts, 0).tolist() == [1.0, 1.0, 1.0]


def test_keep_probability_rejects_bad_input():
    with pytest.raises(ValueError, match="positive"):
        keep_probability(torch.tensor([3, 0]), 1e-3)
    with pytest.raises(ValueError, match="sample"):
        keep_probability(torch.tensor([3, 1]), -1.0)
    with pytest.raises(ValueError, match="rule"):
        keep_probability(torch.tensor([3, 1]), 1e-3, rule="gensim")


def test_subsampling_keeps_each_word_at_its_rate():
    counts = torch.tensor([50_000, 20_000, 5_000, 1_000])
    ids = torch.repeat_interleave(torch.arange(4), counts)
    keep = keep_probability(counts, 1e-2, rule="c")
    mask = subsample(ids, keep, torch.Generator().manual_seed(0))
    for w in range(4):
        rate = mask[ids == w].double().mean().item()
        n = int(counts[w])
        sd = math.sqrt(keep[w] * (1 - keep[w]) / n) + 1e-12
        assert abs(rate - keep[w].item()) < 5 * sd + 1e-9, (w, rate, keep[w].item())
    assert keep[0] < 0.6 and keep[3] == 1.0  # the frequent word is really thinned


def test_subsampling_is_reproducible_with_a_seed():
    ids = torch.randint(0, 5, (1000,), generator=torch.Generator().manual_seed(1))
    keep = torch.full((5,), 0.5, dtype=torch.float64)
    a = subsample(ids, keep, torch.Generator().manual_seed(3))
    b = subsample(ids, keep, torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


# -- dynamic window ----------------------------------------------------------------------------

def test_reduced_windows_uniform_on_1_to_window():
    w = reduced_windows(60_000, 5, torch.Generator().manual_seed(0))
    assert int(w.min()) == 1 and int(w.max()) == 5
    freq = torch.bincount(w, minlength=6)[1:].double() / w.numel()
    assert torch.allclose(freq, torch.full((5,), 0.2, dtype=torch.float64), atol=0.01)
    with pytest.raises(ValueError, match="window"):
        reduced_windows(3, 0)


def test_pairs_at_distance_k_have_rate_window_minus_k_plus_1_over_window():
    # one long sentence, no subsampling: count skip-gram pairs per distance
    V, n, W = 50, 20_000, 4
    ids = torch.arange(n) % V  # distance between two ids identifies the offset (mod V)
    corpus = encode_corpus([[f"w{i}" for i in ids.tolist()]], min_count=1)
    # ids are re-numbered by the vocabulary; map back to positions through the words
    pos_of = torch.tensor([int(w[1:]) for w in corpus.vocab.itos])
    counts = torch.zeros(W + 1)
    for b in epoch_batches(corpus, window=W, sample=0, batch_size=4096, seed=0):
        inputs, targets = pairs_of(b)
        d = (pos_of[inputs] - pos_of[targets]).abs()
        d = torch.minimum(d, V - d)
        counts += torch.bincount(d, minlength=W + 1)[: W + 1].float()
    per_centre = counts / n / 2  # per side
    expected = torch.tensor([(W - k + 1) / W for k in range(1, W + 1)])
    assert counts[0] == 0
    assert torch.allclose(per_centre[1:], expected, atol=0.02), per_centre


def test_context_matrix_respects_sentence_boundaries_and_window():
    ids = torch.tensor([10, 11, 12, 13, 14])
    sent = torch.tensor([0, 0, 0, 1, 1])
    eff = torch.tensor([2, 1, 2, 2, 2])
    ctx, valid = context_matrix(ids, sent, eff, window=2)
    # offsets -2, -1, +1, +2
    got = [ctx[i][valid[i]].tolist() for i in range(5)]
    assert got == [[11, 12], [10, 12], [10, 11], [14], [13]]
    with pytest.raises(ValueError, match="start"):
        context_matrix(ids, sent, eff, 2, start=3, stop=9)


# -- batches ----------------------------------------------------------------------------------

def _pairs_plain(corpus, window, eff):
    """Every (context, centre) pair by a plain double loop (the reference for the blocks)."""
    ids, sent = corpus.ids.tolist(), corpus.sentence.tolist()
    out = []
    for i in range(len(ids)):
        for j in range(max(0, i - eff[i]), min(len(ids), i + eff[i] + 1)):
            if j != i and sent[j] == sent[i]:
                out.append((ids[j], ids[i]))
    return sorted(out)


@pytest.mark.parametrize("block, batch_size", [(1, 7), (4, 32), (8, 1000)])
def test_blocks_hold_exactly_the_pairs_of_the_windows(block, batch_size):
    corpus = encode_corpus(_zipf_sentences(n_sent=30, length=7), min_count=1)
    W = 3
    batches = list(epoch_batches(corpus, window=W, sample=0, batch_size=batch_size, block=block, seed=4))
    # the same generator draws the same windows
    eff = reduced_windows(len(corpus), W, torch.Generator().manual_seed(4 * 1_000_003)).tolist()
    got = sorted(p for b in batches for p in zip(*(t.tolist() for t in pairs_of(b))))
    assert got == _pairs_plain(corpus, W, eff)
    for b in batches:
        nb, L, g = b.mask.shape
        assert g == block and L == block + 2 * W and b.tokens.shape == (nb, L) and b.targets.shape == (nb, g)
        assert nb * g <= max(block, batch_size - batch_size % block)


@pytest.mark.parametrize("sample", [0.0, 1e-2])
def test_epoch_batches_cover_the_corpus_words_and_progress_grows(sample):
    corpus = encode_corpus(_zipf_sentences(), min_count=1)
    for epoch in range(2):
        batches = list(epoch_batches(corpus, window=3, sample=sample, batch_size=64,
                                     epoch=epoch, epochs=2, seed=5))
        assert sum(b.words for b in batches) == corpus.corpus_words
        prog = [b.progress for b in batches]
        assert prog == sorted(prog) and prog[0] == pytest.approx(epoch / 2)
        assert max(prog) < (epoch + 1) / 2


def test_subsampling_thins_the_pairs_of_frequent_words():
    corpus = encode_corpus(_zipf_sentences(n_sent=400), min_count=1)
    def share_of_top(sample):
        t = torch.cat([pairs_of(b)[1] for b in epoch_batches(corpus, window=3, sample=sample, seed=1)])
        return float((t == 0).double().mean())
    assert share_of_top(1e-2) < 0.7 * share_of_top(0.0)


def test_epoch_batches_are_seeded():
    corpus = encode_corpus(_zipf_sentences(), min_count=1)
    kw = dict(window=3, sample=1e-2, batch_size=48, seed=7)
    a = torch.cat([pairs_of(b)[0] for b in epoch_batches(corpus, **kw)])
    b = torch.cat([pairs_of(b)[0] for b in epoch_batches(corpus, **kw)])
    assert torch.equal(a, b)
    other = torch.cat([pairs_of(b)[0] for b in epoch_batches(corpus, **{**kw, "seed": 8})])
    assert not torch.equal(a, other)


@pytest.mark.parametrize("kwargs, match", [
    (dict(block=0), "block"),
    (dict(batch_size=0), "batch_size"),
    (dict(epoch=2, epochs=2), "epoch"),
    (dict(window=0), "window"),
])
def test_epoch_batches_rejects_bad_arguments(kwargs, match):
    corpus = encode_corpus([["a", "b", "c"]], min_count=1)
    with pytest.raises(ValueError, match=match):
        list(epoch_batches(corpus, **kwargs))
    with pytest.raises(TypeError, match="encode_corpus"):
        list(epoch_batches([["a", "b"]]))


def test_batch_words_count_the_whole_corpus_as_gensim_does():
    # each 'rare<i>' occurs once: min_count=2 drops it from the stream, but it is a corpus word
    sents = [["a", "b", f"rare{i}", "a", "b", "c", "c"] for i in range(4)]
    corpus = encode_corpus(sents, min_count=2)
    assert len(corpus) == 24 and corpus.corpus_words == 28
    for sample in (0.0, 0.3):
        batches = list(epoch_batches(corpus, window=2, sample=sample, batch_size=8, block=4, seed=1))
        assert len(batches) > 1 and sum(b.words for b in batches) == 28
