"""Chapter 8's masking schemes: rates, units, span lengths, static vs dynamic, sentence tasks."""

import numpy as np
import pytest
import torch

from companion.pretraining.harness import MaskedLM, toy_vocab
from companion.pretraining.mlm import (
    EntityMLM,
    MacBERTMLM,
    SpanMLM,
    StaticMLM,
    WholeWordMLM,
    geometric_pmf,
    hash_uniform,
    sample_span_lengths,
    span_mask,
    word_starts,
)
from companion.pretraining.sentence_tasks import SentenceTask

V = toy_vocab(64)


def rows(n=64, T=30, seed=0):
    return torch.randint(6, V.size, (n, T), generator=torch.Generator().manual_seed(seed))


def chosen_of(batch):
    return batch["labels"] != -100


def test_hash_uniform_is_uniform_and_deterministic():
    u = hash_uniform(torch.arange(100_000))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean().item() - 0.5) < 0.005
    assert torch.equal(u, hash_uniform(torch.arange(100_000)))
    counts = np.histogram(u.numpy(), bins=10, range=(0, 1))[0]
    assert counts.min() > 9_500 and counts.max() < 10_500


def test_static_masks_repeat_and_dynamic_ones_do_not():
    r = rows()
    static, dynamic = StaticMLM(V), MaskedLM(V)
    g = torch.Generator().manual_seed(0)
    s1, s2 = static.make_batch(r, g), static.make_batch(r, g)
    d1, d2 = dynamic.make_batch(r, g), dynamic.make_batch(r, g)
    assert torch.equal(s1["ids"], s2["ids"]) and torch.equal(s1["labels"], s2["labels"])
    assert not torch.equal(chosen_of(d1), chosen_of(d2))
    # the same row gets the same mask wherever it sits in a batch
    s3 = static.make_batch(r.flip(0), g)
    assert torch.equal(s3["labels"].flip(0), s1["labels"])
    # rates as BERT's: 15 % chosen, 80 % of them [MASK]
    big = static.make_batch(rows(2000), g)
    c = chosen_of(big)
    assert abs(c.float().sum().item() / (2000 * 30) - 0.15) < 0.005
    assert abs((big["ids"][c] == V.mask).float().mean().item() - 0.8) < 0.02
    # dupe_factor 3: exactly three distinct masks per row over many draws
    s = StaticMLM(V, dupe_factor=3)
    one = r[:1].expand(200, -1)
    masks = {tuple(m.tolist()) for m in chosen_of(s.make_batch(one, g))}
    assert len(masks) == 3


def test_whole_word_masking_takes_words_whole():
    wwm = WholeWordMLM(V)
    r = rows(500)
    b = wwm.make_batch(r, torch.Generator().manual_seed(1))
    ids = wwm.frame(r)
    c = chosen_of(b)
    uid = wwm.units(ids)
    for row in range(50):
        for u in torch.unique(uid[row][uid[row] >= 0]).tolist():
            inside = c[row][uid[row] == u]
            assert inside.all() or not inside.any()  # all pieces or none
    assert abs(c.float().sum().item() / (500 * 30) - 0.15) < 0.02
    # a word is a word start and its continuations
    starts = word_starts(ids, V, wwm.candidates(ids))
    assert torch.equal(starts[:, 1], torch.ones(500, dtype=torch.bool))  # first text token after [CLS]


def test_entity_units_are_capitalised_runs_not_sentence_initial():
    ent = EntityMLM(V)
    cap = [i for i in range(6, 64) if V.capital[i] and not V.word_start[i] and not V.sentence_end[i]]
    capw = [i for i in range(6, 64) if V.capital[i] and V.word_start[i]]
    plain = [i for i in range(6, 64) if V.word_start[i] and not V.capital[i] and not V.sentence_end[i]]
    end = next(i for i in range(6, 64) if V.sentence_end[i] and V.word_start[i])
    # plain, Cap-word (+ a capitalised piece), Cap-word, plain, end-of-sentence, Cap-word, plain
    row = torch.tensor([[plain[0], capw[0], cap[0], capw[1], plain[1], end, capw[2], plain[2]]])
    spans = ent.entity_spans(ent.frame(row))
    assert spans == [[(2, 5)]]  # one entity of two words (three tokens); the sentence-initial one is not
    units = ent.units(ent.frame(row))[0].tolist()
    assert units == [-1, 0, 1, 1, 1, 2, 3, 4, 5, -1]


def test_span_lengths_follow_the_clipped_geometric():
    pmf = geometric_pmf(0.2, 10)
    assert abs((np.arange(1, 11) * pmf).sum() - 3.8) < 0.05  # SpanBERT's mean span length
    rng = np.random.default_rng(0)
    draws = sample_span_lengths(20_000, rng)
    freq = np.bincount(draws, minlength=11)[1:] / len(draws)
    assert draws.max() <= 10 and np.abs(freq - pmf).max() < 0.01
    # spans placed in rows: whole words, 15 % of the tokens, lengths from the same law
    wwm = WholeWordMLM(V)
    ids = wwm.frame(rows(800, T=60))
    cand = wwm.candidates(ids)
    span_id, lengths = span_mask(word_starts(ids, V, cand), cand, 0.15, np.random.default_rng(1))
    rate = (span_id >= 0).float().sum().item() / cand.sum().item()
    assert 0.14 < rate < 0.17
    assert lengths.max() <= 10 and 1 < lengths.float().mean() < 3.8  # long spans rarely fit 9 tokens


def test_span_batch_boundaries_and_sbo_loss():
    obj = SpanMLM(V)
    r = rows(16, T=40)
    b = obj.make_batch(r, torch.Generator().manual_seed(0))
    c = chosen_of(b)
    assert c.any()
    for row in range(16):
        for t in c[row].nonzero().squeeze(1).tolist():
            lo, hi = b["left"][row, t].item(), b["right"][row, t].item()
            assert lo < t < hi and c[row, lo + 1: hi].all() and b["rel"][row, t] == t - lo - 1
    from companion.pretraining.harness import ModelSize

    torch.manual_seed(0)
    m = obj.build_model(ModelSize(16, 1, 2, 32, 43), V.size)
    loss = obj.loss(m, b)
    loss.backward()
    assert m.sbo.mlp[0].weight.grad.abs().sum() > 0
    no_sbo = SpanMLM(V, sbo=False)
    assert no_sbo.loss(m, b) < loss  # SBO adds a second cross-entropy


def test_macbert_never_uses_mask_and_replaces_with_similar():
    similar = torch.randint(6, 64, (64, 3), generator=torch.Generator().manual_seed(0))
    obj = MacBERTMLM(V, similar)
    r = rows(1000)
    b = obj.make_batch(r, torch.Generator().manual_seed(0))
    ids = obj.frame(r)
    c = chosen_of(b)
    assert not (b["ids"] == V.mask).any()
    rate = c.float().sum().item() / (1000 * 30)
    assert 0.12 < rate < 0.19
    replaced = c & (b["ids"] != ids)
    from_table = (similar[ids] == b["ids"][..., None]).any(-1)
    assert from_table[replaced].float().mean() > 0.85  # 80 % similar of 90 % changed (some randoms collide)
    with pytest.raises(ValueError, match="table"):
        MacBERTMLM(V, torch.zeros(10, 3, dtype=torch.long))


@pytest.mark.parametrize("kind", ["nsp", "sop", "none"])
def test_sentence_pairs(kind):
    obj = SentenceTask(V, kind)
    r = rows(400, T=20)
    p = obj.pairs(r, torch.Generator().manual_seed(0))
    ids, seg, y = p["ids"], p["segments"], p["nsp_labels"]
    assert ids.shape == (400, 23) and (ids[:, 0] == V.cls).all() and (ids[:, -1] == V.sep).all()
    assert ((ids == V.sep).sum(1) == 2).all()  # [CLS] a [SEP] b [SEP]
    mid = (ids == V.sep).long().argmax(1)
    assert torch.equal(seg.argmax(1), mid + 1)  # segment 1 starts after the middle [SEP]
    a_len = mid - 1
    text = torch.stack([torch.cat([row[1:m], row[m + 1:-1]]) for row, m in zip(ids, mid)])
    if kind == "none":
        assert y.all() and torch.equal(text, r)
        return
    assert 0.4 < y.float().mean() < 0.6
    assert torch.equal(text[y == 1], r[y == 1])  # positives: the row in order
    neg = (y == 0).nonzero().squeeze(1)
    for i in neg[:20].tolist():
        if kind == "sop":  # the two halves swapped
            la = int(a_len[i])
            assert torch.equal(torch.cat([r[i, 20 - la:], r[i, :20 - la]]), text[i])
        else:  # a stays, b comes from the row before
            la = int(a_len[i])
            assert torch.equal(text[i, :la], r[i, :la]) and torch.equal(text[i, la:], r[i - 1, la:])
    b = obj.make_batch(r, torch.Generator().manual_seed(0))
    assert "nsp_labels" in b and not chosen_of(b)[ids == V.sep].any()


def test_similar_tokens_finds_interchangeable_ids():
    from companion.pretraining.mlm import similar_tokens

    # ids 10 and 11 occur in the same contexts (either one between 20 and 30), as do 12 and 13
    g = torch.Generator().manual_seed(0)
    pick = torch.randint(0, 2, (400,), generator=g)
    rows_ = torch.stack([torch.tensor([20, 10 + int(a), 30, 40, 12 + int(b), 50, 60]) for a, b in
                         zip(pick, torch.randint(0, 2, (400,), generator=g))])
    table = similar_tokens(rows_, V, k=1, dim=8, min_count=5)
    assert table.shape == (64, 1)
    assert table[10, 0] == 11 and table[11, 0] == 10 and table[12, 0] == 13
    assert not torch.isin(table, torch.tensor(V.specials)).any()  # never a special token
