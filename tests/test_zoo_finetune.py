"""companion.zoo.finetune on tiny generated data: the two arms differ only in the Transformer's
starting weights, a learnable task is learnt, the baselines and the interval behave."""

import numpy as np
import pytest
import torch

from companion import zoo
from companion.data.tasks import Example
from companion.transformer.bert import BertConfig, BertEncoder, BertForPreTraining
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


# ------------------------------------------------------------------------------ the BERT path


def _tiny_bert(tok, seed=0):
    sp = tok.special_tokens
    cfg = BertConfig(vocab_size=len(tok) + 3, max_len=24, n_layer=1, n_head=2, d_model=16, pad_id=sp["[PAD]"],
                     unk_id=sp["[UNK]"], cls_id=sp["[CLS]"], sep_id=sp["[SEP]"], mask_id=sp["[MASK]"])
    return BertForPreTraining(cfg, seed=seed)


def test_bert_arms_start_from_the_same_head_and_differ_in_the_encoder(tok):
    bert = _tiny_bert(tok, seed=5)
    twin = ft.random_twin(bert, seed=3)
    assert type(twin) is BertForPreTraining and twin.config == bert.config
    assert [n for n, _ in twin.named_parameters()] == [n for n, _ in bert.named_parameters()]
    assert not torch.equal(twin.encoder.embeddings.tok.weight, bert.encoder.embeddings.tok.weight)
    assert torch.equal(ft.random_twin(bert, seed=3).encoder.embeddings.tok.weight, twin.encoder.embeddings.tok.weight)
    enc_twin = ft.random_twin(bert.encoder, seed=3)  # a bare encoder has an encoder twin
    assert type(enc_twin) is BertEncoder and enc_twin.config == bert.config
    # both arms' heads start identical: they depend on the seed alone
    cfg = ft.FinetuneConfig(epochs=1, batch_size=8, max_len=16)
    heads = [ft._task_net(m, 2, cfg, "mean", seed=7).head for m in (bert, twin)]
    assert torch.equal(heads[0].weight, heads[1].weight) and torch.equal(heads[0].bias, heads[1].bias)
    # deterministic, and the caller's model is never modified
    train, test = _task(32), _task(16, 1)
    before = {k: v.clone() for k, v in bert.state_dict().items()}
    a = ft.finetune_classifier(bert, tok, train, test, cfg, seed=3)
    b = ft.finetune_classifier(bert, tok, train, test, cfg, seed=3)
    assert a.step_loss == b.step_loss and np.array_equal(a.predictions, b.predictions)
    assert all(torch.equal(before[k], v) for k, v in bert.state_dict().items())
    c = ft.finetune_classifier(twin, tok, train, test, cfg, seed=3)
    assert c.steps == a.steps and c.step_loss != a.step_loss  # same batches, other starting weights


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_bert_learns_a_learnable_task(tok, pooling):
    train, test = _task(64), _task(32, 1)
    cfg = ft.FinetuneConfig(epochs=12, lr=3e-3, batch_size=8, max_len=16)
    r = ft.finetune_classifier(_tiny_bert(tok), tok, train, test, cfg, seed=0, pooling=pooling, device="cpu")
    assert r.steps == 12 * 8 == len(r.step_loss)
    assert r.final_loss(8) < np.mean(r.step_loss[:8])
    assert ft.accuracy(r.predictions, [e.label for e in test]) >= 75.0


def test_bert_probe_features(tok):
    train = _task(20)
    bert = _tiny_bert(tok)
    x = ft.pooled_features(bert, tok, train, max_len=16)
    assert x.shape == (20, 16) and np.isfinite(x).all()
    # padding is masked out: a text alone gets the features it gets in a padded batch
    assert np.allclose(ft.pooled_features(bert, tok, train[:1], max_len=16)[0], x[0], atol=1e-5)
    assert np.allclose(ft.pooled_features(bert.encoder, tok, train, max_len=16), x)


def test_bert_bad_inputs(tok):
    bert = _tiny_bert(tok)
    with pytest.raises(ValueError, match="max_len=24"):
        ft.finetune_classifier(bert, tok, _task(4), _task(4), ft.FinetuneConfig(max_len=64))
    with pytest.raises(ValueError, match="pooling"):
        ft.finetune_classifier(bert, tok, _task(4), _task(4), CFG, pooling="max")
    with pytest.raises(ValueError, match="lm_weight"):
        ft.finetune_classifier(bert, tok, _task(4), _task(4), ft.FinetuneConfig(max_len=16, lm_weight=0.5))
    with pytest.raises(TypeError, match="model must be a GPT"):
        ft.random_twin(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="model must be a GPT"):
        ft.finetune_classifier("bert-book", tok, _task(4), _task(4), CFG)
    with pytest.raises(ValueError, match="max_len must be"):
        ft.pooled_features(bert, tok, _task(4), max_len=64)
    with pytest.raises(ValueError, match="model must be one of"):
        ft.results_path("bert-base")
    assert ft.results_path("bert-book").name == "finetune_results_bert-book.json"
