"""Quick-thoughts (Logeswaran & Lee 2018, *An efficient framework for learning sentence
representations*).

Skip-thoughts (:mod:`.skipthoughts`) learns sentence vectors by *generating* the neighbouring
sentences word by word. Quick-thoughts replaces generation by *classification*: two encoders
``f`` and ``g`` map sentences to vectors, and for a sentence ``s`` the model must pick its true
context sentences among the other sentences of the batch, scoring each candidate ``c`` by the
inner product ``f(s) . g(c)``:

    p(c | s) = exp(f(s) . g(c)) / sum_{c' in batch, c' != s} exp(f(s) . g(c'))

The batch is a run of consecutive sentences, so the neighbours are inside it and the others act
as negatives; the target distribution is uniform over the true contexts (``context`` sentences on
each side, in the same document). No decoder, no softmax over the vocabulary: the paper trains
in hours what Skip-thoughts trained in weeks. The sentence embedding is ``[f(s), g(s)]``.

Quick start::

    res = train_quickthoughts(load_pretraining_corpus()[:200], QuickThoughtsConfig(epochs=1))
    res.encode(["a sentence", "another one"])     # [2, 2 * hidden]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_texts
from ..data.vocab import Vocab
from ..train import History, TrainConfig
from ._text import (
    PAD,
    GRUEncoder,
    OrderedSentences,
    encode_in_batches,
    pad_batch,
    sentence_vocab,
)
from ._training import EncoderTraining, fit_encoder, train_config

__all__ = ["QuickThoughts", "QuickThoughtsConfig", "QuickThoughtsResult", "context_targets", "train_quickthoughts"]


@dataclass(kw_only=True)
class QuickThoughtsConfig(EncoderTraining):
    """Model and training settings (the paper: GRU 1,200/2,400 units, 300-d words, batch 400,
    context 1, Adam 5e-4; ours are smaller by default for CPUs).

    Attributes:
        emb_dim, hidden: word vector and GRU sizes (the embedding is ``2 * hidden``).
        context: true context sentences on each side.
        batch_size: consecutive sentences per batch (the candidates).
        max_len: sentences are cut to this many tokens.
        min_count, max_vocab, epochs, lr, seed, device: see :class:`._training.EncoderTraining`.
    """

    emb_dim: int = 100
    hidden: int = 200
    context: int = 1
    max_len: int = 30
    lr: float = 5e-4

    positive_ints: ClassVar[tuple[str, ...]] = ("emb_dim", "hidden", "context", "max_len", "min_count", "epochs")

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.batch_size, int) or self.batch_size < 2 * self.context + 1:
            raise ValueError(f"batch_size must be an int >= 2 * context + 1 = {2 * self.context + 1}, got {self.batch_size!r}")


def context_targets(doc: torch.Tensor, context: int) -> torch.Tensor:
    """``[B, B]`` target distribution for a run of consecutive sentences: row ``i`` is uniform
    over the sentences at distance 1..``context`` in the same document (a zero row: none)."""
    B = doc.numel()
    i = torch.arange(B, device=doc.device)
    dist = (i.unsqueeze(0) - i.unsqueeze(1)).abs()
    T = ((dist >= 1) & (dist <= context) & (doc.unsqueeze(0) == doc.unsqueeze(1))).float()
    return T / T.sum(1, keepdim=True).clamp(min=1)


class QuickThoughts(nn.Module):
    """Two GRU encoders ``f`` (the sentence) and ``g`` (its candidates)."""

    def __init__(self, vocab_size: int, config: QuickThoughtsConfig, pad_id: int = 1) -> None:
        super().__init__()
        config.validate()
        self.config = config
        self.f = GRUEncoder(vocab_size, config.emb_dim, config.hidden, pad_id)
        self.g = GRUEncoder(vocab_size, config.emb_dim, config.hidden, pad_id)

    def scores(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``[B, B]`` scores ``f(s_i) . g(s_j)``, ``-inf`` on the diagonal (a sentence is not its
        own context)."""
        S = self.f(ids, lengths) @ self.g(ids, lengths).t()
        return S.masked_fill(torch.eye(S.shape[0], dtype=torch.bool, device=S.device), float("-inf"))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean cross-entropy between the softmax over the batch and the true-context targets."""
        S = self.scores(batch["ids"], batch["lengths"])
        T = context_targets(batch["doc"], self.config.context)
        has = T.sum(1) > 0
        logp = F.log_softmax(S, dim=1).masked_fill(~torch.isfinite(S), 0.0)  # 0 * -inf would be nan
        return -(T * logp).sum(1)[has].mean()

    def embed(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The sentence embedding ``[f(s), g(s)]``: ``[B, 2 hidden]``."""
        return torch.cat([self.f(ids, lengths), self.g(ids, lengths)], 1)


@dataclass
class QuickThoughtsResult:
    model: QuickThoughts
    vocab: Vocab
    config: QuickThoughtsConfig
    history: History = field(default_factory=History)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> torch.Tensor:
        """``[n, 2 hidden]`` embeddings of raw sentences (the harness's ``encode``)."""
        check_texts(sentences)
        return encode_in_batches(self.model.embed, self.model, self.vocab, sentences, self.config.max_len,
                                 2 * self.config.hidden, batch_size)


def make_batches(corpus: OrderedSentences, vocab: Vocab, batch_size: int, max_len: int, seed: int):
    """``epoch -> batches`` of consecutive sentences: dicts of ``ids``, ``lengths``, ``doc``."""
    encoded = [vocab.encode(t) for t in corpus.tokens]
    pad = vocab.stoi[PAD]

    def batches(epoch: int):
        for idx in corpus.batches(batch_size, seed + epoch):
            ids, lengths = pad_batch([encoded[i] for i in idx], pad, max_len)
            yield {"ids": ids, "lengths": lengths, "doc": corpus.doc[idx]}

    return batches


def train_quickthoughts(documents: Sequence[Sequence[str]], config: QuickThoughtsConfig | None = None,
                        train: TrainConfig | None = None) -> QuickThoughtsResult:
    """Train Quick-thoughts on ordered documents (lists of raw sentences) with
    :func:`companion.train.fit`; ``History.items`` counts sentences."""
    config = config or QuickThoughtsConfig()
    config.validate()
    corpus = OrderedSentences(documents)
    vocab = sentence_vocab(corpus.tokens, min_count=config.min_count, max_size=config.max_vocab)
    model, hist = fit_encoder(lambda: QuickThoughts(len(vocab), config, vocab.stoi[PAD]),
                              make_batches(corpus, vocab, config.batch_size, config.max_len, config.seed),
                              train or train_config(config), seed=config.seed)
    return QuickThoughtsResult(model, vocab, config, hist)
