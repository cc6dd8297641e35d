"""Chapter 8's pre-training harness: the contract, FLOP accounting, and the reference MLM."""

import pytest
import torch

from companion.pretraining.harness import (
    MaskedLM,
    ModelSize,
    Objective,
    flop_parameters,
    heldout_loss,
    model_flops,
    non_embedding_parameters,
    pack_rows,
    pretrain,
    reference_mask_tokens,
    toy_vocab,
)

SIZE = ModelSize(d_model=16, n_layers=2, n_heads=2, d_ff=32, max_len=19)


def rows(n=32, T=16, V=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(6, V, (n, T), generator=g)


def test_model_size_and_rows_validate():
    with pytest.raises(ValueError, match="divisible"):
        ModelSize(d_model=15, n_layers=1, n_heads=2, d_ff=8, max_len=16)
    with pytest.raises(ValueError, match="positive int"):
        ModelSize(d_model=16, n_layers=0, n_heads=2, d_ff=8, max_len=16)
    assert SIZE.row_len == 16
    packed = pack_rows([[7, 8, 9], [10, 11]], row_len=3, eos=0)
    assert packed.tolist() == [[7, 8, 9], [0, 10, 11]]  # documents joined by eos, tail dropped
    with pytest.raises(ValueError, match="do not fill"):
        pack_rows([[7]], row_len=5, eos=0)


def test_objective_is_abstract():
    with pytest.raises(TypeError):
        Objective()


def test_flops_are_six_n_tokens_without_embeddings():
    v = toy_vocab()
    obj = MaskedLM(v)
    torch.manual_seed(0)
    m = obj.build_model(SIZE, v.size)
    n = non_embedding_parameters(m)
    emb = sum(p.numel() for mod in m.modules() if isinstance(mod, torch.nn.Embedding) for p in mod.parameters())
    total = sum(p.numel() for p in {id(p): p for p in m.parameters()}.values())
    assert n == total - emb and flop_parameters(m) == n
    assert model_flops(m, 1000) == 6.0 * n * 1000


def test_masked_lm_agrees_with_chapter7_mask_tokens():
    v = toy_vocab()
    obj = MaskedLM(v)
    ids = obj.frame(rows())
    a_in, a_lab = obj.corrupt(ids, obj.choose(ids, g := torch.Generator().manual_seed(5)), g)
    b_in, b_lab = reference_mask_tokens(ids, v, 0.15, torch.Generator().manual_seed(5))
    assert torch.equal(a_lab, b_lab)  # the same positions chosen
    # [MASK] and kept positions agree; random replacements sit at the same positions (the
    # candidate pools differ: ours also excludes the end-of-document id)
    swapped_a = (a_in != ids) & (a_in != v.mask)
    assert torch.equal(a_in == v.mask, b_in == v.mask)
    assert not torch.isin(a_in[swapped_a], torch.tensor(v.specials)).any()


def test_masked_lm_rates_and_no_special_chosen():
    v = toy_vocab()
    obj = MaskedLM(v)
    r = rows(n=400, T=16)
    r[:, 5] = v.eos  # document boundaries are never chosen
    b = obj.make_batch(r, torch.Generator().manual_seed(0))
    chosen = b["labels"] != -100
    assert not chosen[:, [0, 6, -1]].any()  # [CLS], the eos (row column 5), [SEP]
    rate = chosen.sum().item() / (400 * 15)
    assert abs(rate - 0.15) < 0.01
    masked = (b["ids"][chosen] == v.mask).float().mean().item()
    assert abs(masked - 0.8) < 0.03


def test_pretrain_spends_the_budget_and_learns():
    v = toy_vocab()
    obj = MaskedLM(v)
    data = rows(n=64, V=10)  # four text ids: a model that learns anything beats log(64) fast
    torch.manual_seed(0)
    per_step = model_flops(obj.build_model(SIZE, v.size), 8 * 16)
    res = pretrain(obj, data, SIZE, v.size, flops_budget=40.5 * per_step, batch_size=8, lr=1e-2, seed=0)
    assert res.steps == 40 and res.tokens == 40 * 8 * 16 and res.flops <= 40.5 * per_step
    assert len(res.losses) == 40 and res.final_loss(10) < res.losses[0] - 1.0
    assert 0 < res.batch_s < res.wall_s and res.tokens_per_s > 0
    again = pretrain(obj, data, SIZE, v.size, flops_budget=40.5 * per_step, batch_size=8, lr=1e-2, seed=0)
    assert again.losses == res.losses  # seeded: repeats exactly on the CPU
    h = heldout_loss(obj, res.model, data, batch_size=16)
    assert h < res.losses[0]
    assert obj.encoder(res.model) is res.model.encoder
    with pytest.raises(ValueError, match="does not buy one step"):
        pretrain(obj, data, SIZE, v.size, flops_budget=1.0, batch_size=8, lr=1e-3)
    with pytest.raises(ValueError, match="longer than size.row_len"):
        pretrain(obj, torch.zeros(8, 40, dtype=torch.long), SIZE, v.size, flops_budget=1e12, batch_size=8, lr=1e-3)
