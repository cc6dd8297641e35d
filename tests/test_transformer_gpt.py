"""Chapter 7: GPT -- the LM, generation with and without the KV cache, fine-tuning inputs and loss."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from companion.train import TrainConfig, fit
from companion.transformer import (
    GPT,
    GPTConfig,
    GPTForTask,
    sample_next,
    task_batch,
    task_inputs,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def _gpt(**kw) -> GPT:
    return GPT(GPTConfig(**kw), seed=0)


def _ids(B=2, T=10, seed=0, V=97):
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed))


def test_shapes_loss_at_init_and_weight_tying():
    m = _gpt()
    x = _ids()
    assert m(x).shape == (2, 10, 100)
    loss = m.loss(_ids(T=11))
    assert abs(loss.item() - math.log(100)) < 0.3  # N(0, 0.02) weights: nearly uniform predictions
    assert m.lm_head.weight is m.wte.weight
    assert m.num_parameters() < sum(p.numel() for p in m.state_dict().values())
    untied = _gpt(tie_weights=False)
    assert untied.num_parameters() == m.num_parameters() + 100 * 32


@pytest.mark.parametrize("kw", [{}, {"pre_ln": False}, {"positions": "sinusoidal"}])
def test_causal_no_position_sees_the_future(kw):
    m = _gpt(**kw).eval()
    x = _ids()
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 97
    a, b = m(x), m(y)
    torch.testing.assert_close(a[:, :6], b[:, :6])
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_forward_targets_and_loss_agree():
    m = _gpt()
    batch = _ids(T=11)
    _, loss = m(batch[:, :-1], batch[:, 1:])
    ref = F.cross_entropy(m(batch[:, :-1]).reshape(-1, 100), batch[:, 1:].reshape(-1))
    torch.testing.assert_close(loss, ref)
    torch.testing.assert_close(m.loss((batch[:, :-1], batch[:, 1:])), ref)


@pytest.mark.parametrize("kw", [{}, {"pre_ln": False, "positions": "sinusoidal"}])
def test_kv_cache_gives_the_same_tokens_and_logits(kw):
    m = _gpt(block_size=48, **kw)
    prompt = _ids(B=3, T=5)
    with_cache, lc = m.generate(prompt, 30, temperature=0, use_cache=True, return_logits=True)
    without, ln = m.generate(prompt, 30, temperature=0, use_cache=False, return_logits=True)
    assert torch.equal(with_cache, without)
    torch.testing.assert_close(lc, ln, atol=1e-5, rtol=1e-5)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:  # a small cached generation runs on one thread, then gives the threads back
        assert torch.equal(m.generate(prompt, 30, temperature=0), with_cache)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    # sampling with the same seed draws the same tokens too
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    a = m.generate(prompt, 20, temperature=1.3, top_k=20, top_p=0.9, generator=g1)
    b = m.generate(prompt, 20, temperature=1.3, top_k=20, top_p=0.9, generator=g2, use_cache=False)
    assert torch.equal(a, b)


def test_generate_errors_and_cropping():
    m = _gpt(block_size=16)
    with pytest.raises(ValueError, match="block_size"):
        m.generate(_ids(T=10), 10)
    out = m.generate(_ids(T=10), 10, use_cache=False)  # crops the context to the last 16 tokens
    assert out.shape == (2, 20)
    with pytest.raises(ValueError, match="temperature"):
        m.generate(_ids(T=3), 2, temperature=-1)
    with pytest.raises(ValueError, match="exceeds block_size"):
        m(_ids(T=17))


def test_sampling_filters():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])).expand(4000, 4)
    g = torch.Generator().manual_seed(0)
    assert torch.equal(sample_next(logits, 0), torch.zeros(4000, 1, dtype=torch.long))
    assert set(sample_next(logits, 1.0, top_k=2, generator=g).unique().tolist()) == {0, 1}
    assert set(sample_next(logits, 1.0, top_p=0.7, generator=g).unique().tolist()) == {0, 1}  # 0.5 < 0.7 <= 0.8
    assert set(sample_next(logits, 1.0, top_p=0.5, generator=g).unique().tolist()) == {0}
    freq = torch.bincount(sample_next(logits, 1.0, generator=g).squeeze(1), minlength=4) / 4000
    assert torch.allclose(freq, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.03)
    hot = torch.bincount(sample_next(logits, 2.0, generator=g).squeeze(1), minlength=4) / 4000
    assert hot[3] > freq[3] + 0.03  # a higher temperature flattens the distribution
    with pytest.raises(ValueError, match="top_p"):
        sample_next(logits, 1.0, top_p=0.0)


def test_task_inputs_follow_the_paper():
    c = GPTConfig()
    s, d, e = c.start_id, c.delim_id, c.extract_id
    assert (s, d, e) == (97, 98, 99)
    assert task_inputs(c, "classification", [5, 6]) == [[s, 5, 6, e]]
    assert task_inputs(c, "entailment", [5], [7, 8]) == [[s, 5, d, 7, 8, e]]
    assert task_inputs(c, "similarity", [5], [7]) == [[s, 5, d, 7, e], [s, 7, d, 5, e]]
    assert task_inputs(c, "multiple_choice", [5], [[7], [8, 9]]) == [[s, 5, d, 7, e], [s, 5, d, 8, 9, e]]
    with pytest.raises(ValueError, match="unknown"):
        task_inputs(c, "summarise", [1], [2])
    with pytest.raises(ValueError, match="second text"):
        task_inputs(c, "entailment", [1])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        GPTConfig(start_id=100)


def test_task_heads_shapes_symmetry_and_padding():
    gpt = _gpt().eval()
    c = gpt.config
    batch = task_batch(c, "similarity", [([1, 2, 3], [4], 1), ([6], [7, 8, 9, 10], 0)])
    assert batch["ids"].shape == (2, 2, 8) and batch["lengths"].tolist() == [[7, 7], [8, 8]]
    sim = GPTForTask(gpt, "similarity", 2).eval()
    swapped = task_batch(c, "similarity", [([4], [1, 2, 3], 1), ([7, 8, 9, 10], [6], 0)])
    torch.testing.assert_close(sim(batch), sim(swapped))  # both orders summed: symmetric
    mc = GPTForTask(gpt, "multiple_choice", 1).eval()
    mcb = task_batch(c, "multiple_choice", [([1, 2], [[3], [4, 5], [6]], 2)])
    assert mc(mcb).shape == (1, 3)
    clf = GPTForTask(gpt, "classification", 3).eval()
    alone = clf(task_batch(c, "classification", [([1, 2, 3], 0)]))
    padded = clf(task_batch(c, "classification", [([1, 2, 3], 0), ([4] * 9, 2)]))
    torch.testing.assert_close(alone[0], padded[0])  # right padding never changes a result
    with pytest.raises(ValueError, match="same number"):
        task_batch(c, "multiple_choice", [([1], [[2], [3]], 0), ([1], [[2]], 0)])


def test_auxiliary_lm_loss_is_added_with_weight():
    gpt = _gpt()
    batch = task_batch(gpt.config, "entailment", [([1, 2, 3], [4, 5], 1), ([6], [7, 8, 9, 10], 0)])
    plain = GPTForTask(gpt, "entailment", 2, lm_weight=0.0)
    aux = GPTForTask(gpt, "entailment", 2, lm_weight=0.5)
    ids, lengths = batch["ids"], batch["lengths"]
    # the LM loss over the real tokens only, written out example by example
    losses = [F.cross_entropy(gpt(ids[i:i + 1, :n])[0, :-1], ids[i, 1:n], reduction="sum") for i, n in enumerate(lengths)]
    lm = sum(losses) / (lengths - 1).sum()
    torch.testing.assert_close(aux.loss(batch) - plain.loss(batch), 0.5 * lm)
    reg = GPTForTask(gpt, "similarity", 1)
    rb = task_batch(gpt.config, "similarity", [([1], [2], 0.7), ([3], [4], 0.1)])
    assert rb["labels"].dtype == torch.float32 and reg.loss(rb).ndim == 0


def test_gpt_learns_a_pattern_with_fit():
    torch.manual_seed(0)
    seqs = torch.stack([torch.arange(s, s + 17) % 20 for s in range(20)])  # count mod 20
    m = _gpt(vocab_size=23)
    hist = fit(m, [seqs], config=TrainConfig(epochs=60, lr=3e-3, optimizer="adamw", progress=False, device="cpu"))
    assert hist.step_loss[-1] < 0.2 * hist.step_loss[0]
    out = m.generate(torch.tensor([[3, 4, 5]]), 5, temperature=0)
    assert out[0, 3:].tolist() == [6, 7, 8, 9, 10]


def test_fit_checkpoint_keeps_tied_weights(tmp_path):
    from companion.train import load_checkpoint

    m = _gpt()
    seqs = _ids(B=4, T=9)
    fit(m, [seqs], config=TrainConfig(epochs=2, progress=False, device="cpu", checkpoint=str(tmp_path / "g.safetensors")),
        evaluate=lambda model: {"val_loss": float(model.loss(seqs))})
    again = _gpt()
    load_checkpoint(again, tmp_path / "g.safetensors")
    assert again.lm_head.weight is again.wte.weight
    torch.testing.assert_close(again(seqs), m(seqs))


def test_config_errors():
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(d_model=30, n_head=4)
    with pytest.raises(ValueError, match="positive int"):
        GPTConfig(n_layer=0)
    with pytest.raises(ValueError, match="positions"):
        GPT(GPTConfig(positions="rotary"))


@pytest.mark.gpu
def test_gpt_cuda_equals_cpu_and_generates_the_same():
    m = _gpt()
    x = _ids()
    cpu = m(x)
    m.cuda()
    torch.testing.assert_close(m(x.cuda()).cpu(), cpu, atol=1e-4, rtol=1e-4)
    a = m.generate(x.cuda()[:, :5], 20, temperature=0)
    b = m.generate(x.cuda()[:, :5], 20, temperature=0, use_cache=False)
    assert torch.equal(a, b)
