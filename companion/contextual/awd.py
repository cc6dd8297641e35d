"""The dropouts of AWD-LSTM (Merity, Keskar & Socher 2018), which ULMFiT builds on.

Plain dropout draws a new mask for every number at every time step. An LSTM reuses its weights
and carries its state across time, and three variants respect that:

* **embedding dropout** (Gal & Ghahramani 2016): drop whole *words* — rows of the embedding
  matrix — so every occurrence of a dropped word in the batch becomes the zero vector;
* **locked (variational) dropout** (Gal & Ghahramani 2016): one mask per sequence, the same at
  every time step, on the inputs and outputs of each LSTM layer;
* **weight drop** (DropConnect, Wan et al. 2013) on the hidden-to-hidden matrix ``W_hh``: one mask
  on the recurrent *weights* per forward pass, so the recurrence itself is regularised while
  ``nn.LSTM``'s fast kernel still runs (the dropped matrix is passed in through
  ``torch.func.functional_call``).

Each kept value is scaled by ``1 / (1 - p)`` so that expectations match evaluation mode, where
nothing is dropped. Every function takes an optional ``torch.Generator`` so masks repeat.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from .lstm_lm import State, _check_pos_int, _check_rate


def bernoulli_mask(shape: tuple[int, ...], p: float, *, like: torch.Tensor,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """A mask of ``shape``: 0 with probability ``p``, else ``1 / (1 - p)`` (``like``'s dtype/device)."""
    _check_rate("p", p)
    keep = torch.rand(shape, generator=generator, device=like.device) >= p
    return keep.to(like.dtype) / (1.0 - p)


def embedding_dropout(weight: torch.Tensor, p: float, *, generator: torch.Generator | None = None
                      ) -> torch.Tensor:
    """The embedding matrix ``[V, D]`` with whole rows (words) zeroed at rate ``p``, the rest scaled."""
    if weight.dim() != 2:
        raise ValueError(f"weight must be an embedding matrix [vocab, dim], got {tuple(weight.shape)}")
    if p == 0:
        return weight
    return weight * bernoulli_mask((weight.shape[0], 1), p, like=weight, generator=generator)


class DroppedEmbedding(nn.Embedding):
    """``nn.Embedding`` with embedding dropout in training mode (whole words dropped)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, p: float = 0.1, **kwargs):
        super().__init__(num_embeddings, embedding_dim, **kwargs)
        _check_rate("p", p)
        self.p = p
        self.generator: torch.Generator | None = None  # set to repeat the masks

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        w = embedding_dropout(self.weight, self.p, generator=self.generator) if self.training else self.weight
        return F.embedding(ids, w, self.padding_idx)


class LockedDropout(nn.Module):
    """Variational dropout for ``[B, T, D]`` sequences: one mask ``[B, 1, D]`` for all time steps."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        _check_rate("p", p)
        self.p = p
        self.generator: torch.Generator | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if x.dim() != 3:
            raise ValueError(f"LockedDropout expects [batch, time, features], got {tuple(x.shape)}")
        return x * bernoulli_mask((x.shape[0], 1, x.shape[2]), self.p, like=x, generator=self.generator)


class WeightDropLSTM(nn.Module):
    """A one-layer ``nn.LSTM`` (batch first) whose hidden-to-hidden weights are dropped (DropConnect).

    The raw matrix is the parameter ``lstm.weight_hh_l0``; in training mode each forward pass
    draws one mask over its entries (rate ``p``), and the LSTM runs with the masked matrix for
    every time step of the batch. :attr:`last_weight` keeps the matrix used last (for tests).
    """

    def __init__(self, input_size: int, hidden_size: int, p: float = 0.5):
        super().__init__()
        _check_pos_int("input_size", input_size)
        _check_pos_int("hidden_size", hidden_size)
        _check_rate("p", p)
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.input_size, self.hidden_size, self.p = input_size, hidden_size, p
        self.generator: torch.Generator | None = None
        self.last_weight: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, state: State | None = None) -> tuple[torch.Tensor, State]:
        raw = self.lstm.weight_hh_l0
        if not self.training or self.p == 0:
            self.last_weight = raw.detach()
            return self.lstm(x, state)
        w = raw * bernoulli_mask(tuple(raw.shape), self.p, like=raw, generator=self.generator)
        self.last_weight = w.detach()
        return functional_call(self.lstm, {"weight_hh_l0": w}, (x, state))
