"""InferSent (Conneau, Kiela, Schwenk, Barrault & Bordes 2017, *Supervised Learning of
Universal Sentence Representations from Natural Language Inference Data*).

A sentence encoder trained on a *supervised* task, natural language inference: for a premise
``u`` and a hypothesis ``v`` (both encoded by the same encoder) a classifier reads
``[u, v, |u - v|, u * v]`` and predicts entailment / neutral / contradiction. The paper compared
encoders on SNLI; the one that transferred best was a BiLSTM whose hidden states are *max-pooled*
over time. Here every encoder the paper compared is a ``pooling`` option:

* ``"last"``: a (unidirectional) LSTM's last state;
* ``"mean"`` / ``"max"``: a BiLSTM's states averaged / max-pooled over the real positions;
* ``"attention"``: a BiLSTM with inner self-attention, ``a = softmax(w . tanh(W h_t))``,
  ``u = sum_t a_t h_t`` (a single attention head).

SNLI/MultiNLI are not obtainable here: the chapter trains on SICK-E (4,500 pairs; and SICK-E +
RTE as a second run), 100x less data than the paper -- which is itself one of the questions.
:func:`train_nli` trains any encoder module (``forward(ids, lengths) -> [B, d]``, e.g.
:class:`.dan.DAN`) with this classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..checks import check_texts
from ..data.text import tokenize
from ..data.vocab import Vocab
from ..train import History, TrainConfig
from ._text import PAD, encode_in_batches, pad_batch, sentence_vocab
from ._training import EncoderTraining, fit_encoder, train_config

__all__ = [
    "POOLINGS",
    "BiLSTMEncoder",
    "InferSentConfig",
    "NLIClassifier",
    "NLIResult",
    "nli_features",
    "train_infersent",
    "train_nli",
]

POOLINGS = ("last", "mean", "max", "attention")


@dataclass(kw_only=True)
class InferSentConfig(EncoderTraining):
    """Attributes: emb_dim (300 GloVe in the paper), hidden (LSTM units per direction: 2,048 in
    the paper), pooling, mlp (classifier hidden units, 512), n_classes, max_len, and the training
    settings of :class:`._training.EncoderTraining` (batch_size 64 as the paper's; min_count 1,
    epochs 5 here)."""

    emb_dim: int = 100
    hidden: int = 256
    pooling: str = "max"
    mlp: int = 512
    n_classes: int = 3
    max_len: int = 40
    min_count: int = 1
    epochs: int = 5

    positive_ints: ClassVar[tuple[str, ...]] = ("emb_dim", "hidden", "mlp", "batch_size", "max_len", "min_count", "epochs")

    def validate(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {self.pooling!r}")
        super().validate()
        if not isinstance(self.n_classes, int) or self.n_classes < 2:
            raise ValueError(f"n_classes must be an int >= 2, got {self.n_classes!r}")


def masked_pool(h: torch.Tensor, lengths: torch.Tensor, how: str) -> torch.Tensor:
    """Pool ``h [B, T, d]`` over each row's first ``lengths`` positions: ``"mean"`` or ``"max"``
    (padding never wins the max, even where every real value is negative)."""
    mask = torch.arange(h.shape[1], device=h.device).unsqueeze(0) < lengths.to(h.device).unsqueeze(1)
    if how == "max":
        return h.masked_fill(~mask.unsqueeze(2), float("-inf")).max(1).values
    if how == "mean":
        return (h * mask.unsqueeze(2)).sum(1) / lengths.to(h.device).unsqueeze(1).to(h.dtype)
    raise ValueError(f"how must be 'mean' or 'max', got {how!r}")


class BiLSTMEncoder(nn.Module):
    """The encoders InferSent compared; ``dim`` is the sentence vector size."""

    def __init__(self, vocab_size: int, config: InferSentConfig, pad_id: int = 1,
                 embedding: torch.Tensor | None = None) -> None:
        super().__init__()
        config.validate()
        self.pooling = config.pooling
        self.embedding = nn.Embedding(vocab_size, config.emb_dim, padding_idx=pad_id)
        if embedding is not None:  # e.g. GloVe rows for the vocabulary (the paper's input)
            with torch.no_grad():
                self.embedding.weight.copy_(torch.as_tensor(embedding))
        bi = config.pooling != "last"
        self.lstm = nn.LSTM(config.emb_dim, config.hidden, batch_first=True, bidirectional=bi)
        self.dim = config.hidden * (2 if bi else 1)
        if config.pooling == "attention":
            self.att = nn.Linear(self.dim, self.dim)
            self.att_w = nn.Linear(self.dim, 1, bias=False)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(self.embedding(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h_n, _) = self.lstm(packed)
        if self.pooling == "last":
            return h_n[-1]
        h, _ = pad_packed_sequence(out, batch_first=True)  # [B, T, dim], zeros past each length
        if self.pooling in ("mean", "max"):
            return masked_pool(h, lengths, self.pooling)
        scores = self.att_w(torch.tanh(self.att(h))).squeeze(2)  # [B, T]
        mask = torch.arange(h.shape[1], device=h.device).unsqueeze(0) < lengths.to(h.device).unsqueeze(1)
        a = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)
        return (a.unsqueeze(2) * h).sum(1)


def nli_features(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """InferSent's pair features ``[u, v, |u - v|, u * v]``: ``[B, 4 d]``."""
    return torch.cat([u, v, (u - v).abs(), u * v], 1)


class NLIClassifier(nn.Module):
    """A sentence encoder shared by both sides and an MLP on :func:`nli_features`."""

    def __init__(self, encoder: nn.Module, dim: int, mlp: int, n_classes: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.classifier = nn.Sequential(nn.Linear(4 * dim, mlp), nn.Tanh(), nn.Linear(mlp, n_classes))

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        u = self.encoder(batch["a"], batch["a_len"])
        v = self.encoder(batch["b"], batch["b_len"])
        return self.classifier(nli_features(u, v))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return F.cross_entropy(self.logits(batch), batch["label"])


def _pairs(examples: Sequence[Any]) -> list[tuple[str, str, int]]:
    """``(premise, hypothesis, label)`` triples from :class:`companion.data.tasks.Example` s or tuples."""
    out = []
    for i, ex in enumerate(examples):
        a, b, y = (ex.text, ex.text_b, ex.label) if hasattr(ex, "text_b") else ex
        if not isinstance(a, str) or not isinstance(b, str):
            raise TypeError(f"example {i} must be a sentence pair (text, text_b, label); got {ex!r}")
        if isinstance(y, bool) or not isinstance(y, int) or y < 0:
            raise ValueError(f"example {i} has label {y!r}; NLI labels are class indices 0, 1, 2, ...")
        out.append((a, b, y))
    if not out:
        raise ValueError("no training examples")
    return out


@dataclass
class NLIResult:
    """A trained NLI model: its encoder (``encode``), classifier (``accuracy``) and history."""

    model: NLIClassifier
    vocab: Vocab
    max_len: int
    history: History = field(default_factory=History)

    def _ids(self, sentences: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        return pad_batch([self.vocab.encode(tokenize(s)) for s in sentences], self.vocab.stoi[PAD], self.max_len)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> torch.Tensor:
        """``[n, d]`` sentence vectors of the trained encoder (the harness's ``encode``)."""
        check_texts(sentences)
        return encode_in_batches(self.model.encoder, self.model, self.vocab, sentences, self.max_len,
                                 self.model.classifier[0].in_features // 4, batch_size)

    @torch.no_grad()
    def accuracy(self, examples: Sequence[Any]) -> float:
        """Accuracy of the trained classifier on labelled pairs."""
        pairs = _pairs(examples)
        self.model.eval()
        dev = next(self.model.parameters()).device
        correct = 0
        for s in range(0, len(pairs), 256):
            chunk = pairs[s:s + 256]
            a, al = self._ids([p[0] for p in chunk])
            b, bl = self._ids([p[1] for p in chunk])
            pred = self.model.logits({"a": a.to(dev), "a_len": al, "b": b.to(dev), "b_len": bl}).argmax(1).cpu()
            correct += int((pred == torch.tensor([p[2] for p in chunk])).sum())
        return correct / len(pairs)


def train_nli(encoder_fn, examples: Sequence[Any], *, dim_of=lambda enc: enc.dim, mlp: int = 512, n_classes: int = 3,
              batch_size: int = 64, max_len: int = 40, min_count: int = 1, max_vocab: int | None = 20_000,
              train: TrainConfig | None = None, seed: int = 0) -> NLIResult:
    """Train ``encoder_fn(vocab) -> nn.Module`` with the NLI classifier on sentence pairs.

    Args:
        encoder_fn: builds the encoder for the vocabulary (so it can size its embedding).
        examples: :class:`companion.data.tasks.Example` pairs or ``(a, b, label)`` tuples.
        train: the :class:`companion.train.TrainConfig` (epochs, lr, device, ...).
    """
    pairs = _pairs(examples)
    vocab = sentence_vocab([tokenize(s) for p in pairs for s in p[:2]], min_count=min_count, max_size=max_vocab)
    if max(p[2] for p in pairs) >= n_classes:
        raise ValueError(f"a label is >= n_classes ({n_classes})")
    pad = vocab.stoi[PAD]
    enc = [(vocab.encode(tokenize(a)), vocab.encode(tokenize(b)), y) for a, b, y in pairs]

    def batches(epoch: int):
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(seed + epoch)).tolist()
        for s in range(0, len(order), batch_size):
            chunk = [enc[i] for i in order[s:s + batch_size]]
            a, al = pad_batch([c[0] for c in chunk], pad, max_len)
            b, bl = pad_batch([c[1] for c in chunk], pad, max_len)
            yield {"a": a, "a_len": al, "b": b, "b_len": bl, "label": torch.tensor([c[2] for c in chunk])}

    def build() -> NLIClassifier:
        encoder = encoder_fn(vocab)
        return NLIClassifier(encoder, dim_of(encoder), mlp, n_classes)

    model, hist = fit_encoder(build, batches, train or TrainConfig(seed=seed, progress=False), seed=seed)
    return NLIResult(model, vocab, max_len, hist)


def train_infersent(examples: Sequence[Any], config: InferSentConfig | None = None) -> NLIResult:
    """InferSent: a :class:`BiLSTMEncoder` with ``config.pooling`` trained on NLI pairs."""
    config = config or InferSentConfig()
    config.validate()
    return train_nli(
        lambda vocab: BiLSTMEncoder(len(vocab), config, vocab.stoi[PAD]), examples, mlp=config.mlp,
        n_classes=config.n_classes, batch_size=config.batch_size, max_len=config.max_len,
        min_count=config.min_count, max_vocab=config.max_vocab, seed=config.seed,
        train=train_config(config),
    )
