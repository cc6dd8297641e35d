"""Sequential denoising autoencoder -- SDAE (Hill, Cho & Korhonen 2016, *Learning Distributed
Representations of Sentences from Unlabelled Data*).

An LSTM encoder reads a *corrupted* sentence and an LSTM decoder must reproduce the original.
The paper's noise ``N(S | p0, px)``: every word is deleted with probability ``p0``; then each
non-overlapping bigram ``w_i w_{i+1}`` of what remains is swapped with probability ``px`` (the
paper's best settings: ``p0 = px = 0.1``). Unlike Skip-thoughts it needs no ordered text -- each
sentence is its own target -- so it learns what a sentence *contains* rather than what comes
next. The embedding is the encoder's last hidden state.

Quick start::

    res = train_sdae(sentences, SDAEConfig(epochs=1))   # a list of raw sentences
    res.encode(["a sentence"])                          # [1, hidden]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..checks import check_texts
from ..data.text import tokenize
from ..data.vocab import Vocab
from ..train import History, TrainConfig
from ._text import BOS, EOS, PAD, encode_in_batches, pad_batch, sentence_vocab
from ._training import EncoderTraining, fit_encoder, train_config

__all__ = ["SDAE", "SDAEConfig", "SDAEResult", "add_noise", "train_sdae"]


def _check_p(name: str, p: float) -> None:
    if not (isinstance(p, (int, float)) and 0 <= p <= 1):
        raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}")


def add_noise(tokens: Sequence, p0: float, px: float, rng: random.Random) -> list:
    """Hill et al.'s corruption: delete each token with probability ``p0``, then swap each
    non-overlapping bigram (positions 0-1, 2-3, ...) of the remainder with probability ``px``."""
    _check_p("p0", p0)
    _check_p("px", px)
    kept = [t for t in tokens if rng.random() >= p0]
    for i in range(0, len(kept) - 1, 2):
        if rng.random() < px:
            kept[i], kept[i + 1] = kept[i + 1], kept[i]
    return kept


@dataclass(kw_only=True)
class SDAEConfig(EncoderTraining):
    """Attributes: emb_dim, hidden (the paper: 2,400-unit LSTMs), p0, px (noise), max_len, and
    the training settings of :class:`._training.EncoderTraining`."""

    emb_dim: int = 100
    hidden: int = 200
    p0: float = 0.1
    px: float = 0.1
    max_len: int = 30

    positive_ints: ClassVar[tuple[str, ...]] = ("emb_dim", "hidden", "batch_size", "max_len", "min_count", "epochs")

    def validate(self) -> None:
        super().validate()
        _check_p("p0", self.p0)
        _check_p("px", self.px)


class SDAE(nn.Module):
    """LSTM encoder of the noisy sentence; LSTM decoder of the clean one, started from the
    encoder's final state and fed ``[word, h]`` at every step (as Skip-thoughts' decoders)."""

    def __init__(self, vocab_size: int, config: SDAEConfig, pad_id: int = 1) -> None:
        super().__init__()
        config.validate()
        self.config, self.pad_id = config, pad_id
        self.embedding = nn.Embedding(vocab_size, config.emb_dim, padding_idx=pad_id)
        self.encoder = nn.LSTM(config.emb_dim, config.hidden, batch_first=True)
        self.decoder = nn.LSTM(config.emb_dim + config.hidden, config.hidden, batch_first=True)
        self.out = nn.Linear(config.hidden, vocab_size)

    def encode_state(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = pack_padded_sequence(self.embedding(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, c) = self.encoder(packed)
        return h, c

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean per-token cross-entropy of the clean sentence given the noisy one."""
        h, c = self.encode_state(batch["noisy"], batch["noisy_lengths"])
        x = self.embedding(batch["clean_in"])
        x = torch.cat([x, h[-1].unsqueeze(1).expand(-1, x.shape[1], -1)], 2)
        y, _ = self.decoder(x, (h, c))
        return F.cross_entropy(self.out(y).flatten(0, 1), batch["clean_out"].flatten(), ignore_index=self.pad_id)

    def embed(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.encode_state(ids, lengths)[0][-1]


@dataclass
class SDAEResult:
    model: SDAE
    vocab: Vocab
    config: SDAEConfig
    history: History = field(default_factory=History)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> torch.Tensor:
        """``[n, hidden]`` embeddings of raw (clean) sentences (the harness's ``encode``)."""
        check_texts(sentences)
        return encode_in_batches(self.model.embed, self.model, self.vocab, sentences, self.config.max_len,
                                 self.config.hidden, batch_size)


def make_batches(encoded: list[list[int]], vocab: Vocab, config: SDAEConfig):
    """``epoch -> batches``: fresh noise every epoch (seeded by ``config.seed`` and the epoch)."""
    pad, bos, eos = vocab.stoi[PAD], vocab.stoi[BOS], vocab.stoi[EOS]

    def batches(epoch: int):
        rng = random.Random(config.seed * 100_003 + epoch)
        order = list(range(len(encoded)))
        rng.shuffle(order)
        for s in range(0, len(order), config.batch_size):
            clean = [encoded[i] for i in order[s:s + config.batch_size]]
            noisy, lengths = pad_batch([add_noise(c, config.p0, config.px, rng) for c in clean], pad)
            yield {"noisy": noisy, "noisy_lengths": lengths,
                   "clean_in": pad_batch([[bos] + c for c in clean], pad)[0],
                   "clean_out": pad_batch([c + [eos] for c in clean], pad)[0]}

    return batches


def train_sdae(sentences: Sequence[str], config: SDAEConfig | None = None, train: TrainConfig | None = None) -> SDAEResult:
    """Train an SDAE on raw sentences (no order needed) with :func:`companion.train.fit`."""
    config = config or SDAEConfig()
    config.validate()
    if isinstance(sentences, str) or not isinstance(sentences, Sequence) or not sentences:
        raise TypeError("sentences must be a non-empty list of strings")
    tokens = [tokenize(s) if isinstance(s, str) else None for s in sentences]
    if any(t is None for t in tokens):
        raise TypeError("sentences must be strings")
    tokens = [t[: config.max_len - 1] for t in tokens if t]
    vocab = sentence_vocab(tokens, min_count=config.min_count, max_size=config.max_vocab)
    model, hist = fit_encoder(lambda: SDAE(len(vocab), config, vocab.stoi[PAD]),
                              make_batches([vocab.encode(t) for t in tokens], vocab, config),
                              train or train_config(config), seed=config.seed)
    return SDAEResult(model, vocab, config, hist)
