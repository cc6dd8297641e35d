"""BART's five noisings and T5's span corruption: rates, span lengths, invertibility, round trip,
batches of fixed shape, and the FLOPs an encoder--decoder is charged."""

import math

import numpy as np
import pytest
import torch

from companion.pretraining.bart import (
    BART,
    NOISINGS,
    EncoderMaskedLM,
    document_rotation,
    poisson_spans,
    sentence_permutation,
    split_sentences,
    text_infilling,
    token_deletion,
    token_masking,
    unpermute,
    unrotate,
)
from companion.pretraining.harness import ModelSize, model_flops, pretrain, toy_vocab
from companion.pretraining.t5 import (
    T5SpanCorruption,
    random_segmentation,
    span_corruption,
    span_layout,
    uncorrupt,
)

V = toy_vocab(64, n_sentinels=8)
IS_END = torch.zeros(64, dtype=torch.bool)
IS_END[[20, 30]] = True  # two "full stop" tokens
SIZE = ModelSize(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=35)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_masking_and_deletion_rates():
    ids = list(range(14, 64)) * 200  # 10,000 tokens
    masked = token_masking(ids, V.mask, _gen(), p=0.3)
    assert len(masked) == len(ids)
    share = np.mean([m == V.mask for m in masked])
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / len(ids))
    assert all(m in (V.mask, t) for m, t in zip(masked, ids))
    kept = token_deletion(ids, _gen(1), p=0.3)
    assert abs(len(kept) / len(ids) - 0.7) < 4 * math.sqrt(0.3 * 0.7 / len(ids))


def test_infilling_spans_are_poisson_and_cover_the_ratio():
    lengths = []
    for s in range(300):
        lengths += poisson_spans(30, _gen(s))[:-1]  # the last span is cut to fit
    lengths = np.array(lengths)
    assert abs(lengths.mean() - 3.0) < 0.15  # Poisson(3): mean 3
    assert abs((lengths == 0).mean() - math.exp(-3)) < 0.02  # P(0) = e^-3: zero-length spans insert a mask
    ids = list(range(10, 110))
    out, spans = text_infilling(ids, V.mask, _gen(3), ratio=0.3)
    assert sum(n for _, n in spans) == 30
    assert out.count(V.mask) == len(spans)  # one mask per span, whatever its length
    assert len(out) == 100 - 30 + len(spans)
    # putting each span back where its mask is restores the text
    rebuilt, k = [], 0
    for t in out:
        if t == V.mask:
            start, n = spans[k]
            rebuilt += ids[start:start + n]
            k += 1
        else:
            rebuilt.append(t)
    assert rebuilt == ids


def test_sentence_permutation_and_rotation_are_invertible():
    ids = [10, 11, 20, 12, 13, 14, 30, 15, 20, 16, 17]  # three sentences and a tail
    sents = split_sentences(ids, IS_END)
    assert sents == [[10, 11, 20], [12, 13, 14, 30], [15, 20], [16, 17]]
    seen = set()
    for s in range(30):
        out, order = sentence_permutation(ids, IS_END, _gen(s))
        assert sorted(out) == sorted(ids)
        assert unpermute(out, order, [len(x) for x in sents]) == ids
        seen.add(tuple(order))
        rot, k = document_rotation(ids, _gen(s))
        assert rot[0] == ids[k] and unrotate(rot, k) == ids
    assert len(seen) > 10  # different draws give different orders
    with pytest.raises(ValueError, match="permutation"):
        unpermute(ids, [0, 0, 1, 2], [3, 4, 2, 2])


def test_rotation_start_is_uniform():
    ks = [document_rotation(list(range(5)), _gen(s))[1] for s in range(2000)]
    counts = np.bincount(ks, minlength=5)
    assert counts.min() > 330 and counts.max() < 470  # 400 expected each


def test_t5_round_trip_and_lengths():
    assert sorted(random_segmentation(10, 4, _gen())) != [] and sum(random_segmentation(10, 4, _gen())) == 10
    for s in range(50):
        row = torch.randint(14, 64, (40,), generator=_gen(s)).tolist()
        inp, tgt = span_corruption(row, V.sentinels, V.sep, _gen(s))
        assert uncorrupt(inp, tgt, V.sentinels, V.sep) == row
        n_noise, n_spans = span_layout(40)
        assert (n_noise, n_spans) == (6, 2)
        assert len(inp) == 40 - 6 + 2 and len(tgt) == 6 + 2 + 1
        assert tgt[0] == V.sentinels[0] and tgt[-1] == V.sep
        assert [t for t in inp if t in V.sentinels] == list(V.sentinels[:2])


def test_t5_span_lengths_average_three():
    noise = [random_segmentation(60, 20, _gen(s)) for s in range(100)]
    assert all(min(n) >= 1 for n in noise)
    assert np.mean([x for n in noise for x in n]) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="sentinels"):
        span_corruption(list(range(14, 64)) * 4, V.sentinels[:2], V.sep, _gen())


def test_objective_batches_have_fixed_shapes():
    rows = torch.randint(14, 64, (4, SIZE.row_len), generator=_gen())
    objectives = [BART(V, (n,), is_end=IS_END) for n in NOISINGS] + [T5SpanCorruption(V)]
    for obj in objectives:
        S, L = obj.lengths(SIZE.row_len)
        for s in range(3):
            b = obj.make_batch(rows, _gen(s))
            assert b["src"].shape == (4, S) and b["tgt_out"].shape == (4, L), obj.name
            assert torch.equal(b["tgt_in"][:, 0], torch.full((4,), V.cls))
        if isinstance(obj, BART):  # BART reconstructs the original row
            assert torch.equal(b["tgt_out"], rows)
    with pytest.raises(ValueError, match="unknown noisings"):
        BART(V, ("shuffle",))
    with pytest.raises(ValueError, match="is_end"):
        BART(V, ("sentence permutation",))
    with pytest.raises(ValueError, match="at most one"):
        BART(V, ("token masking", "text infilling"))


def test_flops_follow_source_and_target_lengths():
    bart, t5 = BART(V, ("text infilling",)), T5SpanCorruption(V)
    m_bart, m_t5 = bart.build_model(SIZE, V.size), t5.build_model(SIZE, V.size)
    assert sum(p.numel() for p in m_bart.parameters()) == sum(p.numel() for p in m_t5.parameters())
    # T5's targets are a fifth of the row: the same budget buys it more tokens
    assert model_flops(m_t5, 1000) < 0.75 * model_flops(m_bart, 1000)
    enc_only = EncoderMaskedLM(V).build_model(SIZE, V.size)
    assert model_flops(enc_only, 1000) < 0.5 * model_flops(m_bart, 1000)


def test_objectives_train_through_the_harness():
    rows = torch.randint(14, 64, (64, SIZE.row_len), generator=_gen())
    for obj in (BART(V, ("text infilling",)), T5SpanCorruption(V), EncoderMaskedLM(V)):
        res = pretrain(obj, rows, SIZE, V.size, flops_budget=6e7, batch_size=16, lr=3e-3)
        assert res.steps >= 3 and all(map(math.isfinite, res.losses))
        assert res.losses[-1] < res.losses[0], obj.name
