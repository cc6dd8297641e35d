"""Chapter 5: the sentence encoders share one config base and one training call
(:mod:`companion.sentence._training`)."""

import dataclasses

import pytest
import torch

from companion.sentence import (
    FastSentConfig,
    GenSenConfig,
    InferSentConfig,
    QuickThoughtsConfig,
    SDAEConfig,
    SkipThoughtsConfig,
)
from companion.sentence._training import EncoderTraining, fit_encoder, train_config
from companion.train import TrainConfig

CONFIGS = [FastSentConfig, GenSenConfig, InferSentConfig, QuickThoughtsConfig, SDAEConfig, SkipThoughtsConfig]


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_every_config_shares_the_training_settings(cls):
    assert issubclass(cls, EncoderTraining)
    names = {f.name for f in dataclasses.fields(cls)}
    assert {"batch_size", "min_count", "max_vocab", "epochs", "lr", "seed", "device"} <= names
    with pytest.raises(TypeError):
        cls(8)  # keyword-only: no field is set by position
    cls().validate()
    for name in cls.positive_ints:
        with pytest.raises(ValueError, match=name):
            cls(**{name: 0}).validate()
    t = train_config(cls(epochs=3, lr=0.5, seed=7), clip_grad_norm=2.0)
    assert (t.epochs, t.lr, t.seed, t.device, t.clip_grad_norm, t.progress) == (3, 0.5, 7, None, 2.0, False)


def test_the_models_keep_their_own_defaults():
    assert QuickThoughtsConfig().lr == 5e-4 and SkipThoughtsConfig().lr == 1e-3
    assert (InferSentConfig().min_count, InferSentConfig().epochs, InferSentConfig().max_len) == (1, 5, 40)
    assert (GenSenConfig().min_count, GenSenConfig().epochs, GenSenConfig().max_len) == (2, 1, 30)
    assert not hasattr(FastSentConfig(), "max_len")  # FastSent reads bags of words, uncut


def test_fit_encoder_seeds_the_initial_weights():
    def batches(epoch):
        g = torch.Generator().manual_seed(epoch)
        return [torch.randn(4, 3, generator=g) for _ in range(2)]

    class Model(torch.nn.Linear):
        def loss(self, x):
            return self(x).pow(2).mean()

    torch.manual_seed(99)
    a, ha = fit_encoder(lambda: Model(3, 1), batches, TrainConfig(progress=False), seed=5)
    torch.randn(10)  # whatever ran before does not matter
    b, hb = fit_encoder(lambda: Model(3, 1), batches, TrainConfig(progress=False), seed=5)
    assert torch.equal(a.weight, b.weight) and ha.step_loss == hb.step_loss and ha.steps == 2
