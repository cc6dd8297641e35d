"""companion.zoo.finetune on tiny generated data: the two arms differ only in the Transformer's
starting weights, a learnable task is learnt, the baselines and the interval behave."""

import numpy as np
import pytest
import torch

from companion import zoo
from companion.data.tasks import Example
from companion.transformer.gpt import GPT, GPTConfig
from companion.zoo import finetune as ft


@pytest.fixture(scope="module")
def tok():
    return zoo.tokenizer()


def _tiny(tok, seed=0):
    return GPT(GPTConfig(vocab_size=len(tok) + 3, block_size=24, n_layer=1, n_head=2, d_model=16), seed=seed)


def _task(n, seed=0):
    """Label 1 when the text holds 'good', 0 when it holds 'bad' (one word decides)."""
    rng = np.random.default_rng(seed)
    fill = ["the", "film", "was", "a", "story", "of", "it", "and"]
    out = []
    for i in range(n):
        words = list(rng.choice(fill, 5))
        y = i % 2
        words.insert(int(rng.integers(0, 6)), "good" if y else "bad")
        out.append(Example(" ".join(words), y))
    return out


CFG = ft.FinetuneConfig(epochs=8, lr=3e-3, batch_size=8, max_len=16)


def test_the_arms_differ_only_in_the_starting_weights(tok):
    train, test = _task(32), _task(16, 1)
    gpt = _tiny(tok, seed=5)
    a = ft.finetune_classifier(gpt, tok, train, test, ft.FinetuneConfig(epochs=1, batch_size=8, max_len=16), seed=3)
    b = ft.finetune_classifier(gpt, tok, train, test, ft.FinetuneConfig(epochs=1, batch_size=8, max_len=16), seed=3)
    assert a.step_loss == b.step_loss and np.array_equal(a.predictions, b.predictions)  # deterministic
    twin = ft.random_twin(gpt, seed=3)
    assert twin.config == gpt.config
    assert not torch.equal(twin.wte.weight, gpt.wte.weight)
    assert torch.equal(ft.random_twin(gpt, seed=3).wte.weight, twin.wte.weight)
    # the caller's model is never modified
    before = {k: v.clone() for k, v in gpt.state_dict().items()}
    ft.finetune_classifier(gpt, tok, train, test, CFG, seed=0)
    assert all(torch.equal(before[k], v) for k, v in gpt.state_dict().items())


def test_a_learnable_task_is_learnt_and_the_loss_falls(tok):
    train, test = _task(64), _task(32, 1)
    r = ft.finetune_classifier(_tiny(tok), tok, train, test, CFG, seed=0, device="cpu")
    assert r.steps == 8 * 8 == len(r.step_loss)
    assert r.final_loss(8) < np.mean(r.step_loss[:8])
    assert ft.accuracy(r.predictions, [e.label for e in test]) >= 75.0


def test_probe_features_and_baselines(tok):
    train, test = _task(40), _task(20, 1)
    x = ft.pooled_features(_tiny(tok), tok, train, max_len=16)
    assert x.shape == (40, 16) and np.isfinite(x).all()
    # a padded batch gives each text the features it has alone (causal: padding unseen)
    alone = ft.pooled_features(_tiny(tok), tok, train[:1], max_len=16)
    assert np.allclose(alone[0], x[0], atol=1e-5)
    acc, pred = ft.probe_accuracy(x, [e.label for e in train], ft.pooled_features(_tiny(tok), tok, test, 16),
                                  [e.label for e in test])
    assert 0 <= acc <= 100 and pred.shape == (20,)
    assert ft.majority_accuracy([0, 0, 1], [0, 1, 1, 1]) == 25.0
    with pytest.raises(ValueError, match="same non-zero length"):
        ft.accuracy([0, 1], [0])


def test_paired_interval_contains_the_effect_and_every_seed():
    gold = np.array([0, 1] * 50)
    a = [gold.copy(), gold.copy()]
    b = [np.zeros(100, int), np.ones(100, int)]  # 50 % each
    iv = ft.paired_interval(a, b, gold, n_boot=200)
    assert iv["effect"] == pytest.approx(50.0)
    assert iv["low"] <= iv["seed_min"] <= iv["seed_max"] <= iv["high"]
    assert iv["low"] <= iv["effect"] <= iv["high"] and iv["low"] > 0
    with pytest.raises(ValueError, match="same non-zero number of seeds"):
        ft.paired_interval(a, b[:1], gold)


def test_bad_inputs(tok):
    with pytest.raises(ValueError, match="epochs"):
        ft.FinetuneConfig(epochs=0)
    with pytest.raises(ValueError, match="max_len"):
        ft.FinetuneConfig(max_len=2)
    with pytest.raises(ValueError, match="non-empty list"):
        ft.finetune_classifier(_tiny(tok), tok, [], _task(4), CFG)
    with pytest.raises(ValueError, match="block_size"):
        ft.finetune_classifier(_tiny(tok), tok, _task(4), _task(4), ft.FinetuneConfig(max_len=64))
    with pytest.raises(ValueError, match="n_classes"):
        ft.finetune_classifier(_tiny(tok), tok, [Example("a b", 0)] * 4, _task(4), CFG)


def test_sample_and_sizes():
    xs = list(range(10))
    assert ft.sample(xs, None) == xs and ft.sample(xs, 20) == xs
    s = ft.sample(xs, 4, seed=1)
    assert len(s) == 4 == len(set(s)) and s == sorted(s) and s == ft.sample(xs, 4, seed=1)
    assert ft.sizes("ci").sst2_train < ft.sizes("laptop").sst2_train
