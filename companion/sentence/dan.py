"""Deep averaging network -- DAN (Iyyer, Manjunatha, Boyd-Graber & Daume III 2015), the cheaper of
the two Universal Sentence Encoders (Cer et al. 2018, *Universal Sentence Encoder*).

The input embeddings of a sentence's words *and bigrams* are averaged, and the average goes
through a few feed-forward layers: order is seen only through the bigrams, the cost is linear in
the length, and the depth lets the network recombine the averaged features. USE trained this
encoder on several tasks at once (a skip-thought-like task, conversational response prediction,
SNLI); here it plugs into the NLI classifier of :mod:`.infersent` (:func:`train_dan`) or any
other objective.

Bigrams are *hashed* into ``buckets`` rows (as fastText's n-grams, chapter 4): no bigram
vocabulary to build, and an unseen bigram still gets a (shared) vector. Iyyer et al.'s word
dropout (drop whole tokens from the average while training) is ``word_dropout``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import torch
from torch import nn

from ..word2vec._loop import check_positive_ints
from ._text import PAD
from ._training import train_config
from .infersent import NLIResult, train_nli

__all__ = ["DAN", "DANConfig", "bigram_buckets", "train_dan"]


@dataclass
class DANConfig:
    """Attributes: emb_dim, hidden (feed-forward width), layers, out_dim (USE: 512), buckets
    (hashed bigram rows; 0: words only), word_dropout, and for :func:`train_dan`: mlp,
    n_classes, batch_size, max_len, epochs, lr, seed, device."""

    emb_dim: int = 100
    hidden: int = 300
    layers: int = 2
    out_dim: int = 300
    buckets: int = 100_000
    word_dropout: float = 0.0
    mlp: int = 512
    n_classes: int = 3
    batch_size: int = 64
    max_len: int = 40
    epochs: int = 5
    lr: float = 1e-3
    seed: int = 0
    device: str | None = None

    def validate(self) -> None:
        check_positive_ints(self, ("emb_dim", "hidden", "layers", "out_dim", "mlp", "batch_size", "max_len", "epochs"))
        if not isinstance(self.buckets, int) or self.buckets < 0:
            raise ValueError(f"buckets must be an int >= 0 (0: no bigrams), got {self.buckets!r}")
        if not (0 <= self.word_dropout < 1):
            raise ValueError(f"word_dropout must be in [0, 1), got {self.word_dropout!r}")


def bigram_buckets(ids: torch.Tensor, buckets: int) -> torch.Tensor:
    """Hashed bucket of each adjacent pair ``(ids[:, t], ids[:, t + 1])``: ``[B, T - 1]``."""
    return (ids[:, :-1] * 1_000_003 + ids[:, 1:]) % buckets


class DAN(nn.Module):
    """Average of word and hashed-bigram embeddings, then ``layers`` tanh layers."""

    def __init__(self, vocab_size: int, config: DANConfig, pad_id: int = 1) -> None:
        super().__init__()
        config.validate()
        self.config, self.pad_id, self.dim = config, pad_id, config.out_dim
        self.words = nn.Embedding(vocab_size, config.emb_dim)
        self.bigrams = nn.Embedding(config.buckets, config.emb_dim) if config.buckets else None
        sizes = [config.emb_dim] + [config.hidden] * (config.layers - 1) + [config.out_dim]
        self.ff = nn.Sequential(*[m for a, b in pairwise(sizes) for m in (nn.Linear(a, b), nn.Tanh())])

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        lengths = lengths.to(ids.device)
        T = ids.shape[1]
        mask = torch.arange(T, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)  # real words
        if self.training and self.config.word_dropout > 0:
            keep = torch.rand(mask.shape, device=ids.device) >= self.config.word_dropout
            mask = mask & (keep | ~(mask & keep).any(1, keepdim=True))  # never drop a whole sentence
        total = (self.words(ids) * mask.unsqueeze(2)).sum(1)
        count = mask.sum(1, keepdim=True).to(total.dtype)
        if self.bigrams is not None and T > 1:
            bmask = mask[:, :-1] & mask[:, 1:]
            total = total + (self.bigrams(bigram_buckets(ids, self.config.buckets)) * bmask.unsqueeze(2)).sum(1)
            count = count + bmask.sum(1, keepdim=True)
        return self.ff(total / count.clamp(min=1))


def train_dan(examples: Sequence[Any], config: DANConfig | None = None) -> NLIResult:
    """A DAN trained with InferSent's NLI classifier (``[u, v, |u-v|, u*v]``) on sentence pairs."""
    config = config or DANConfig()
    config.validate()
    return train_nli(
        lambda vocab: DAN(len(vocab), config, vocab.stoi[PAD]), examples, mlp=config.mlp,
        n_classes=config.n_classes, batch_size=config.batch_size, max_len=config.max_len, seed=config.seed,
        train=train_config(config),
    )
