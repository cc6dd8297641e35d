"""Chapter 7: packing documents, pre-training with fit, and DDP (2 CPU processes, gloo) gradients
equal to one process on the same global batch."""

from __future__ import annotations

import pytest
import torch

from companion.train import TrainConfig
from companion.transformer import GPT, BertConfig, BertForPreTraining, GPTConfig
from companion.transformer.pretrain import (
    LossModule,
    distributed_gradients,
    lm_batches,
    main,
    mlm_batches,
    nsp_examples,
    pack_lm,
    pack_mlm,
    pretrain,
    shard,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def _docs(n=30, seed=0, V=90):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(5, V, (int(torch.randint(3, 60, (1,), generator=g)),), generator=g).tolist() for _ in range(n)]


def test_pack_lm_every_token_is_a_target_once():
    docs = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
    rows = pack_lm(docs, 3, eos_id=0)
    assert rows.tolist() == [[1, 2, 3, 0], [0, 4, 5, 0], [0, 6, 7, 8]]
    assert rows[:, 1:].reshape(-1).tolist() == [2, 3, 0, 4, 5, 0, 6, 7, 8]
    with pytest.raises(ValueError, match="do not fill"):
        pack_lm([[1, 2]], 8)
    with pytest.raises(ValueError, match="list of token-id lists"):
        pack_lm([], 8)


def test_pack_mlm_frames_and_pads():
    c = BertConfig(max_len=6)
    rows = pack_mlm([[10, 11, 12, 13, 14], [20]], c)
    assert rows.tolist() == [[2, 10, 11, 12, 13, 3], [2, 14, 3, 0, 0, 0], [2, 20, 3, 0, 0, 0]]


def test_batches_are_seeded_and_cover_the_rows():
    rows = pack_lm(_docs(), 8)
    a, b = lm_batches(rows, 4, seed=1)(0), lm_batches(rows, 4, seed=1)(0)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert sorted(map(tuple, torch.cat(a).tolist())) == sorted(map(tuple, rows.tolist()))
    assert not torch.equal(torch.cat(a), torch.cat(lm_batches(rows, 4, seed=1)(1)))
    c = BertConfig()
    mb = mlm_batches(pack_mlm(_docs(), c), c, 4, seed=0)
    first, again, other = mb(0), mb(0), mb(1)
    assert torch.equal(first[0]["ids"], again[0]["ids"]) and not torch.equal(first[0]["labels"], other[0]["labels"])
    assert all((x["labels"] != -100).any() for x in first)


@pytest.mark.slow
def test_pretrain_gpt_and_bert_lower_their_loss():
    docs = [list(range(5, 25)) * 4 for _ in range(8)]  # repetitive text: learnable in a few steps
    cfg = TrainConfig(epochs=15, lr=3e-3, optimizer="adamw", progress=False, device="cpu", seed=0)
    gpt = GPT(GPTConfig(block_size=16))
    h = pretrain(gpt, docs, batch_size=8, config=cfg)
    assert h.step_loss[-1] < 0.5 * h.step_loss[0] and h.items > 0
    bert = BertForPreTraining(BertConfig(max_len=16))
    hb = pretrain(bert, docs, batch_size=8, config=cfg)
    assert sum(hb.step_loss[-3:]) / 3 < 0.8 * hb.step_loss[0]
    h2 = pretrain(GPT(GPTConfig(block_size=16)), docs, batch_size=8, config=cfg)
    assert h2.step_loss == h.step_loss  # seeded: the same run twice
    with pytest.raises(TypeError, match="GPT or a BertForPreTraining"):
        pretrain(torch.nn.Linear(2, 2), docs)


def test_shard_splits_evenly_or_says_why():
    b = {"ids": torch.arange(8).view(4, 2), "labels": torch.arange(4)}
    assert shard(b, 1, 2)["labels"].tolist() == [2, 3]
    with pytest.raises(ValueError, match="split evenly"):
        shard(torch.zeros(5, 2), 0, 2)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gpt", "bert"])
def test_ddp_gradients_equal_one_process_on_the_global_batch(kind):
    torch.manual_seed(0)
    if kind == "gpt":
        model = GPT(GPTConfig(block_size=16), seed=1)
        batch = pack_lm(_docs(), 16)[:8]
    else:
        c = BertConfig(max_len=16)
        model = BertForPreTraining(c, seed=1)
        rows = pack_mlm(_docs(), c)
        ids = rows[(rows != c.pad_id).all(1)][:8].clone()
        # two chosen tokens per row: each process's mean MLM loss then weighs its tokens as the
        # global mean does (with unequal counts DDP's average of means is not the global mean)
        labels = torch.full_like(ids, -100)
        labels[:, 3:5] = ids[:, 3:5]
        ids[:, 3:5] = c.mask_id
        batch = {"ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}
    LossModule(model)(batch).backward()
    single = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    ddp = distributed_gradients(model, batch, world_size=2)
    assert set(single) <= set(ddp)
    for k, g in single.items():
        torch.testing.assert_close(ddp[k], g, atol=1e-6, rtol=1e-5, msg=f"gradient of {k}")


def test_command_line_entry_point_runs_one_process():
    out = main(["--model", "gpt", "--steps", "3", "--vocab-size", "50", "--block-size", "16", "--d-model", "32",
                "--batch-size", "4"])
    assert out["steps"] == 3
    out = main(["--model", "bert", "--steps", "2", "--vocab-size", "50", "--block-size", "16", "--d-model", "32",
                "--batch-size", "4"])
    assert out["steps"] == 2


def test_nsp_examples_half_next_half_random():
    docs = [[[100 * d + 10 * s + t for t in range(1 + (s % 4))] for s in range(8)] for d in range(1, 30)]
    c = BertConfig(vocab_size=4000, max_len=12)
    ex = nsp_examples(docs, c, seed=0)
    assert len(ex) == 29 * 7
    pos = [e for e in ex if e[2] == 1]
    assert abs(len(pos) / len(ex) - 0.5) < 4 * (0.25 / len(ex)) ** 0.5
    for a, b, label in ex:
        assert len(a) + len(b) <= 12 - 3 and a and b
        same_doc = a[0] // 100 == b[0] // 100
        assert same_doc == (label == 1) and (label == 0 or b[0] // 10 == a[0] // 10 + 1)
    assert nsp_examples(docs, c, seed=0) == ex
    with pytest.raises(ValueError, match="two documents"):
        nsp_examples([[[1, 2]]], c)
