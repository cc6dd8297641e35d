"""SENNA-style ranking, the NNLM + n-gram mixture, and the throughput helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from companion.neural_lm import (
    SennaConfig,
    WindowRanker,
    context_windows,
    corrupt_centre,
    interpolate,
    iterate_minibatches,
    mix,
    ranking_accuracy,
    softmax_speed_table,
    tune_weight,
    zipf_stream,
)
from companion.train import TrainConfig, fit

V = 40


def structured_stream(n: int, seed: int) -> torch.Tensor:
    """Each word predicts its neighbours: w_{t+1} = (w_t + 1 + {0,1}) mod V."""
    g = torch.Generator().manual_seed(seed)
    steps = 1 + torch.randint(0, 2, (n,), generator=g)
    return torch.cumsum(steps, 0) % V


def test_corruption_replaces_only_the_centre_with_a_different_word():
    w = context_windows(structured_stream(200, 0), 5)
    g = torch.Generator().manual_seed(0)
    c = corrupt_centre(w, V, generator=g)
    assert torch.equal(c[:, [0, 1, 3, 4]], w[:, [0, 1, 3, 4]])
    assert (c[:, 2] != w[:, 2]).all() and (c[:, 2] >= 0).all() and (c[:, 2] < V).all()
    # seeded: same generator seed, same corruption; over many draws every other word appears
    assert torch.equal(c, corrupt_centre(w, V, generator=torch.Generator().manual_seed(0)))
    many = corrupt_centre(w[:1].expand(5000, -1), V, generator=g)[:, 2]
    assert set(many.tolist()) == set(range(V)) - {int(w[0, 2])}


def test_hinge_loss_formula():
    model = WindowRanker(SennaConfig(vocab_size=V, window=3, dim=4, hidden=6))
    w = context_windows(structured_stream(50, 0), 3)
    neg = corrupt_centre(w, V, generator=torch.Generator().manual_seed(1))
    expected = torch.clamp(1 - model.score(w) + model.score(neg), min=0).mean()
    assert torch.allclose(model.loss((w, neg)), expected)
    assert model.score(w).shape == (w.shape[0],)


def topic_stream(n: int, seed: int) -> torch.Tensor:
    """Runs of 20 words from one of 8 topics of 5 words each: a window's words share a topic."""
    g = torch.Generator().manual_seed(seed)
    topics = torch.randint(0, 8, (n // 20 + 1,), generator=g).repeat_interleave(20)[:n]
    return topics * 5 + torch.randint(0, 5, (n,), generator=g)


def test_ranking_training_learns_to_rank_real_windows_higher():
    # a corrupted centre comes from another topic 35 times in 39: a model that learned the
    # topics ranks ~90 % of pairs right (ties within a topic count as wrong)
    train = context_windows(topic_stream(3000, 0), 5)
    valid = context_windows(topic_stream(800, 1), 5)
    model = WindowRanker(SennaConfig(vocab_size=V, window=5, dim=8, hidden=16), seed=0)
    before = ranking_accuracy(model, valid, seed=0)
    assert ranking_accuracy(model, valid, seed=0) == before  # the metric is deterministic
    fit(
        model,
        lambda e: ((b,) for (b,) in iterate_minibatches(train, batch_size=128, seed=e)),
        config=TrainConfig(epochs=6, lr=1e-2, progress=False, device="cpu"),
    )
    after = ranking_accuracy(model, valid, n_negatives=3, seed=0)
    assert before < 0.65 and after > 0.85, (before, after)


def test_senna_seeded_training_repeats_and_bad_inputs():
    train = context_windows(structured_stream(500, 0), 3)

    def run():
        m = WindowRanker(SennaConfig(vocab_size=V, window=3, dim=4, hidden=4), seed=5)
        return fit(m, [train[:100], train[100:200]], config=TrainConfig(epochs=2, progress=False, device="cpu")).step_loss

    assert run() == run()
    model = WindowRanker(SennaConfig(vocab_size=V, window=3))
    with pytest.raises(ValueError, match="odd"):
        WindowRanker(SennaConfig(vocab_size=V, window=4))
    with pytest.raises(ValueError, match=r"\[N, 3\]"):
        model.score(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 40\)"):
        model.score(torch.full((2, 3), V))
    with pytest.raises(TypeError):
        model.score(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="odd"):
        context_windows([1, 2, 3], 2)
    with pytest.raises(ValueError, match="must match"):
        model.loss((torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, 3, dtype=torch.long)))


# ---------------------------------------------------------------------------- mixture


def test_interpolate_is_log_of_weighted_probabilities():
    a = torch.log(torch.tensor([0.5, 0.1, 0.2], dtype=torch.float64))
    b = torch.log(torch.tensor([0.1, 0.3, 0.2], dtype=torch.float64))
    mixed = interpolate(a, b, 0.25).exp()
    assert torch.allclose(mixed, torch.tensor([0.25 * 0.5 + 0.75 * 0.1, 0.25 * 0.1 + 0.75 * 0.3, 0.2], dtype=torch.float64))
    assert torch.equal(interpolate(a, b, 1.0), a) and torch.equal(interpolate(a, b, 0.0), b)
    # accepts numpy arrays, lists and callables
    assert torch.allclose(interpolate(a.numpy(), lambda: b.tolist(), 0.25).exp(), mixed)


def test_em_and_grid_agree_and_find_the_optimum():
    rng = np.random.default_rng(0)
    # model a is good on half the tokens, model b on the other half
    pa = np.where(np.arange(2000) % 2 == 0, 0.6, 0.02) * rng.uniform(0.8, 1.0, 2000)
    pb = np.where(np.arange(2000) % 2 == 0, 0.05, 0.3) * rng.uniform(0.8, 1.0, 2000)
    a, b = np.log(pa), np.log(pb)
    lam_em = tune_weight(a, b, method="em")
    lam_grid = tune_weight(a, b, method="grid", grid=1001)
    assert abs(lam_em - lam_grid) < 2e-3
    nll = lambda w: -float(interpolate(a, b, w).mean())
    assert nll(lam_em) <= min(nll(w) for w in np.linspace(0, 1, 101)) + 1e-9
    res = mix(a, b, a, b)
    assert res.val_ppl < min(res.val_ppl_a, res.val_ppl_b)
    assert math.isclose(res.test_ppl, math.exp(nll(res.weight)))
    assert 0 < res.test_reduction_vs_b < 1


def test_mixture_weight_goes_to_the_better_model_when_one_dominates():
    a = np.log(np.full(100, 0.5))
    b = np.log(np.full(100, 0.01))
    assert tune_weight(a, b) > 0.99


def test_mixture_bad_inputs():
    with pytest.raises(ValueError, match="same tokens"):
        mix([-1.0, -2.0], [-1.0], [-1.0], [-1.0])
    with pytest.raises(ValueError, match="probabilities or NLLs"):
        tune_weight([1.2, 0.5], [-1.0, -1.0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        interpolate([-1.0], [-1.0], 1.5)
    with pytest.raises(ValueError, match="method"):
        tune_weight([-1.0], [-1.0], method="newton")
    with pytest.raises(ValueError, match="non-empty"):
        tune_weight([], [])


# ---------------------------------------------------------------------------- timing


def test_zipf_stream_is_seeded_and_skewed():
    a = zipf_stream(100, 5000, seed=1)
    assert torch.equal(a, zipf_stream(100, 5000, seed=1))
    c = torch.bincount(a, minlength=100)
    assert c[0] > 5 * c[50]


def test_speed_table_shape():
    table = softmax_speed_table((50, 200), n=3, dim=4, hidden=8, batch_size=64, steps=2, n_tokens=500, device="cpu")
    assert list(table.columns) == ["vocab_size", "full_tokens_per_s", "hsoftmax_tokens_per_s", "speedup", "mean_depth"]
    assert table["vocab_size"].tolist() == [50, 200]
    assert (table["full_tokens_per_s"] > 0).all() and (table["hsoftmax_tokens_per_s"] > 0).all()
    # Huffman over a Zipf law: the mean path is shorter than log2 V for every size
    assert (table["mean_depth"] < np.log2(table["vocab_size"])).all()


@pytest.mark.gpu
def test_senna_and_timing_on_cuda():
    train = context_windows(structured_stream(500, 0), 3)
    model = WindowRanker(SennaConfig(vocab_size=V, window=3, dim=4, hidden=4), device="cuda")
    loss = model.loss(train.cuda())
    loss.backward()
    assert loss.device.type == "cuda"
    assert 0.0 <= ranking_accuracy(model, train) <= 1.0
    table = softmax_speed_table((100,), n=3, dim=4, hidden=8, batch_size=64, steps=2, n_tokens=500, device="cuda")
    assert (table["speedup"] > 0).all()
