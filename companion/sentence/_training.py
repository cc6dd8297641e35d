"""What the trained sentence encoders share: their training settings and the few lines around
:func:`companion.train.fit` (Skip-thoughts, Quick-thoughts, FastSent, SDAE, GenSen, InferSent).

Each model's config is a dataclass that adds its own sizes to :class:`EncoderTraining` and names
in ``positive_ints`` the fields that must be ints >= 1; every config is keyword-only
(``SDAEConfig(hidden=64, epochs=2)``). :func:`fit_encoder` seeds torch with the config's seed,
builds the model (so the initial weights depend on the seed only) and trains it with
:func:`companion.train.fit`, which seeds again before the first step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import torch
from torch import nn

from ..train import History, TrainConfig, fit
from ..word2vec._loop import check_positive_ints

M = TypeVar("M", bound=nn.Module)


@dataclass(kw_only=True)
class EncoderTraining:
    """The training settings every sentence encoder's config has.

    Attributes:
        batch_size: examples (sentences, triples, pairs) per step.
        min_count, max_vocab: the vocabulary (words seen fewer times are unknown; ``None``: no cap).
        epochs, lr, seed, device: training (:class:`companion.train.TrainConfig`).
    """

    batch_size: int = 64
    min_count: int = 2
    max_vocab: int | None = 20_000
    epochs: int = 1
    lr: float = 1e-3
    seed: int = 0
    device: str | None = None

    positive_ints: ClassVar[tuple[str, ...]] = ("batch_size", "min_count", "epochs")
    """The fields that must be ints >= 1, checked in this order (each model lists its own)."""

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first field of ``positive_ints`` that is not an int >= 1."""
        check_positive_ints(self, self.positive_ints)


def train_config(config: Any, clip_grad_norm: float | None = 5.0) -> TrainConfig:
    """The :class:`~companion.train.TrainConfig` of an encoder's config (its ``epochs``, ``lr``,
    ``seed`` and ``device``; no progress bar), clipping the gradient norm at ``clip_grad_norm``."""
    return TrainConfig(epochs=config.epochs, lr=config.lr, seed=config.seed, device=config.device,
                       clip_grad_norm=clip_grad_norm, progress=False)


def fit_encoder(build: Callable[[], M], batches: Callable[[int], Iterable[Any]], train: TrainConfig, *,
                seed: int, **fit_kwargs: Any) -> tuple[M, History]:
    """``(model, history)``: ``torch.manual_seed(seed)``, then ``model = build()`` (its initial
    weights; :func:`~companion.train.fit` seeds only the steps after), then
    ``fit(model, batches, config=train, **fit_kwargs)``."""
    torch.manual_seed(seed)
    model = build()
    return model, fit(model, batches, config=train, **fit_kwargs)
