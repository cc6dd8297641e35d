"""ELECTRA, ALBERT and XLNet: RTD labels, shared embeddings, parameter sharing, two-stream masks."""

import pytest
import torch

from companion.pretraining.albert import AlbertObjective, parameter_counts
from companion.pretraining.electra import ElectraObjective
from companion.pretraining.harness import (
    MaskedLM,
    ModelSize,
    flop_parameters,
    model_flops,
    toy_vocab,
)
from companion.pretraining.sentence_tasks import SentenceTask
from companion.pretraining.xlnet import PermutationLM, sample_order, two_stream_masks
from companion.transformer.bert import BertEncoder

V = toy_vocab(64)
SIZE = ModelSize(d_model=32, n_layers=2, n_heads=4, d_ff=64, max_len=23)


def rows(n=8, T=20, seed=0):
    return torch.randint(6, V.size, (n, T), generator=torch.Generator().manual_seed(seed))


def build(obj, seed=0):
    torch.manual_seed(seed)
    return obj.build_model(SIZE, V.size)


# ------------------------------------------------------------------------------ ELECTRA


def test_rtd_labels_mark_replacements_and_count_lucky_samples_as_original():
    original = torch.tensor([[3, 10, 11, 12, 13, 4]])
    chosen = torch.tensor([[False, True, False, True, True, False]])
    logits = torch.full((3, 64), -1e9)
    logits[0, 10], logits[1, 40], logits[2, 41] = 0, 0, 0  # position 1 resamples its own token
    corrupted, labels = ElectraObjective.replace(logits, original, chosen)
    assert corrupted.tolist() == [[3, 10, 11, 40, 41, 4]]
    assert labels.tolist() == [[0, 0, 0, 1, 1, 0]]


def test_electra_shares_embeddings_and_trains_both_networks():
    obj = ElectraObjective(V)
    m = build(obj)
    assert m.generator.embedding is m.discriminator.embeddings.tok  # one table, not a copy
    assert m.generator.down.out_features == 8  # a quarter of the discriminator's width
    b = obj.make_batch(rows(), torch.Generator().manual_seed(0))
    assert (b["ids"][b["labels"] != -100] == V.mask).all()  # the generator sees [MASK] only
    out = obj.losses(m, b)
    assert 0 < out["replaced"] <= 0.2  # at most the masked share is replaced
    loss = obj.loss(m, b)
    assert torch.isclose(loss, out["mlm"] + 50 * out["rtd"], rtol=1e-5)
    loss.backward()
    for part in (m.generator.blocks[0].attn.qkv, m.discriminator.blocks[0].attn.qkv, m.head[0]):
        assert part.weight.grad.abs().sum() > 0
    assert isinstance(obj.encoder(m), BertEncoder)
    # FLOPs charge both networks: more than the discriminator alone
    assert flop_parameters(m) > flop_parameters(build(MaskedLM(V)).encoder)


def test_electra_batches_repeat_with_the_seed():
    obj = ElectraObjective(V)
    m = build(obj)
    b = obj.make_batch(rows(), torch.Generator().manual_seed(0))
    assert torch.equal(obj.loss(m, b), obj.loss(m, b))  # the sampling is seeded by the batch


# ------------------------------------------------------------------------------ ALBERT


def test_albert_factorises_and_shares():
    bert = build(SentenceTask(V, "sop"))
    albert = build(AlbertObjective(V, embedding_size=8, share=True))
    unshared = build(AlbertObjective(V, embedding_size=8, share=False))
    pb, pa, pu = parameter_counts(bert), parameter_counts(albert), parameter_counts(unshared)
    assert pa["embedding"] == (V.size + SIZE.max_len + 2) * 8  # token, position, segment tables at E
    assert pb["embedding"] == (V.size + SIZE.max_len + 2) * 32
    block = sum(p.numel() for p in albert.encoder.blocks[0].parameters())
    assert pu["parameters"] - pa["parameters"] == block  # two layers, one block shared
    assert pa["flop parameters"] == pu["flop parameters"]  # sharing saves memory, not compute
    b = AlbertObjective(V, 8).make_batch(rows(), torch.Generator().manual_seed(0))
    loss = AlbertObjective(V, 8).loss(albert, b)
    loss.backward()
    assert albert.encoder.blocks[0].attn.qkv.weight.grad.abs().sum() > 0
    assert isinstance(albert.encoder, BertEncoder) and albert.encoder(b["ids"]).shape == (8, 23, 32)
    # the shared block really is applied n_layer times
    x = albert.encoder.project(albert.encoder.embeddings(b["ids"]))
    for _ in range(SIZE.n_layers):
        x = albert.encoder.blocks[0](x)
    assert torch.allclose(x, albert.encoder(b["ids"]), atol=1e-6)


# ------------------------------------------------------------------------------ XLNet


def test_order_puts_specials_first_and_is_a_permutation():
    obj = PermutationLM(V)
    ids = obj.frame(rows(50))
    rank = sample_order(ids, torch.tensor(V.specials), torch.Generator().manual_seed(0))
    assert (rank.sort(1).values == torch.arange(22)).all()
    assert (rank[:, 0] == 0).all() and (rank[:, -1] == 1).all()  # [CLS], [SEP] first, in that order


def test_two_stream_masks_realise_the_order():
    rank = torch.tensor([[0, 3, 1, 4, 2]])  # order: position 0, 2, 4, 1, 3
    targets = torch.tensor([[False, True, False, True, False]])
    content, query = two_stream_masks(rank, targets)
    # position 1 (step 3) sees positions 0, 2, 4 (steps 0-2) in both streams, itself only in content
    assert content[0, 1].tolist() == [True, True, True, False, True]
    assert query[0, 1].tolist() == [True, False, True, False, True]
    assert query[0, 3].tolist() == [True, True, True, False, True]  # the last step sees all others
    assert not (query & torch.eye(5, dtype=torch.bool)).any(dim=-1)[targets].any()  # never itself


def test_query_stream_depends_only_on_earlier_tokens_of_the_order():
    obj = PermutationLM(V, K=3)
    m = build(obj).eval()
    b = obj.make_batch(rows(4), torch.Generator().manual_seed(1))
    _, g = m.streams(b["ids"], b["content_mask"], b["query_mask"])
    rank, targets = b["rank"], b["labels"] != -100
    for row in range(4):
        t = targets[row].nonzero()[0, 0].item()  # a predicted position
        later = (rank[row] >= rank[row, t]).nonzero().squeeze(1)  # itself and everything after it
        earlier = [j for j in (rank[row] < rank[row, t]).nonzero().squeeze(1).tolist() if 0 < j < 21]
        ids = b["ids"].clone()
        ids[row, later[(later > 0) & (later < 21)]] = 7  # change the future (and the token itself)
        _, g2 = m.streams(ids, b["content_mask"], b["query_mask"])
        assert torch.allclose(g[row, t], g2[row, t], atol=1e-5)
        ids = b["ids"].clone()
        ids[row, earlier[0]] = 7 if b["ids"][row, earlier[0]] != 7 else 8  # change one token of the past
        _, g3 = m.streams(ids, b["content_mask"], b["query_mask"])
        assert not torch.allclose(g[row, t], g3[row, t], atol=1e-5)


def test_partial_prediction_and_loss():
    obj = PermutationLM(V, K=6)
    b = obj.make_batch(rows(8), torch.Generator().manual_seed(0))
    n_pred = (b["labels"] != -100).sum(1)
    assert (n_pred == 4).all()  # ceil(20 / 6): the last sixth of each order
    assert (b["rank"][b["labels"] != -100] >= 22 - 4).all()
    m = build(obj)
    loss = obj.loss(m, b)
    loss.backward()
    assert abs(loss.item() - torch.log(torch.tensor(64.0)).item()) < 0.5
    # the query stream runs the blocks again: more FLOP parameters than the encoder alone
    assert flop_parameters(m) > flop_parameters(m.encoder)
    assert model_flops(m, 10) == 6 * flop_parameters(m) * 10
    with pytest.raises(ValueError, match="K must be"):
        PermutationLM(V, K=1)
