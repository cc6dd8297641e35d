"""FastSent (Hill, Cho & Korhonen 2016, *Learning Distributed Representations of Sentences from
Unlabelled Data*): Skip-thoughts' objective with a log-linear model.

A sentence is the *sum* of its words' source vectors, ``s_i = sum_{w in S_i} u_w``; it must
predict every word of the previous and the next sentence through a softmax over the target
vectors ``v``:

    loss(S_i) = - sum_{w in S_{i-1} and S_{i+1}} log softmax(V s_i)_w

FastSent+AE also predicts the sentence's own words (the autoencoder term). No recurrence, no
decoder: one embedding-bag and one matrix product per batch. Hill et al.'s finding, which the
chapter checks: such log-linear models do well on *unsupervised* similarity (STS, SICK-R by
cosine), the deep ones on supervised probes. The embedding is ``s_i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_texts
from ..data.text import tokenize
from ..data.vocab import Vocab
from ..train import History, TrainConfig
from ._text import OrderedSentences, sentence_vocab
from ._training import EncoderTraining, fit_encoder, train_config

__all__ = ["FastSent", "FastSentConfig", "FastSentResult", "train_fastsent"]


@dataclass(kw_only=True)
class FastSentConfig(EncoderTraining):
    """Attributes: dim (the paper: 100), autoencode (FastSent+AE), and the training settings of
    :class:`._training.EncoderTraining`."""

    dim: int = 100
    autoencode: bool = False

    positive_ints: ClassVar[tuple[str, ...]] = ("dim", "batch_size", "min_count", "epochs")


def _bags(rows: list[list[int]], device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Flattened ids and offsets for ``F.embedding_bag`` (an empty sentence is an empty bag)."""
    flat = torch.tensor([i for r in rows for i in r], dtype=torch.long, device=device)
    offsets = torch.tensor([0] + [len(r) for r in rows[:-1]], dtype=torch.long, device=device).cumsum(0)
    return flat, offsets


class FastSent(nn.Module):
    """Source vectors ``u`` (the encoder) and target vectors ``v`` (the softmax)."""

    def __init__(self, vocab_size: int, config: FastSentConfig) -> None:
        super().__init__()
        config.validate()
        self.config = config
        self.u = nn.Embedding(vocab_size, config.dim)
        self.v = nn.Linear(config.dim, vocab_size, bias=False)
        nn.init.normal_(self.u.weight, std=0.1)

    def sentence(self, flat: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """``s = sum_w u_w`` per bag: ``[B, dim]``."""
        return F.embedding_bag(flat, self.u.weight, offsets, mode="sum")

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean ``-log p(w | s_i)`` over the (sentence, target word) pairs of the batch."""
        logp = F.log_softmax(self.v(self.sentence(batch["flat"], batch["offsets"])), dim=1)
        return -logp[batch["pair_row"], batch["pair_word"]].mean()


@dataclass
class FastSentResult:
    model: FastSent
    vocab: Vocab
    config: FastSentConfig
    history: History = field(default_factory=History)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str]) -> torch.Tensor:
        """``[n, dim]`` sums of source vectors (unknown words are skipped)."""
        check_texts(sentences)
        unk = self.vocab.unk_id
        rows = [[i for i in self.vocab.encode(tokenize(s)) if i != unk] for s in sentences]
        if not rows:
            return torch.zeros(0, self.config.dim)
        dev = self.model.u.weight.device
        return self.model.sentence(*_bags(rows, dev)).cpu()


def make_batches(corpus: OrderedSentences, vocab: Vocab, config: FastSentConfig):
    """``epoch -> batches``: centre sentences as bags, targets as (row, word) pairs."""
    unk = vocab.unk_id
    enc = [[i for i in vocab.encode(t) if i != unk] for t in corpus.tokens]
    d = corpus.doc.tolist()
    n = len(enc)

    def targets(i: int) -> list[int]:
        out = [w for j in (i - 1, i + 1) if 0 <= j < n and d[j] == d[i] for w in enc[j]]
        return out + (enc[i] if config.autoencode else [])

    usable = [i for i in range(n) if enc[i] and targets(i)]
    if not usable:
        raise ValueError("no sentence has a known word and a neighbour with known words; give more text")

    def batches(epoch: int):
        order = torch.tensor(usable)[torch.randperm(len(usable), generator=torch.Generator().manual_seed(config.seed + epoch))]
        for s in range(0, len(order), config.batch_size):
            idx = order[s:s + config.batch_size].tolist()
            flat, offsets = _bags([enc[i] for i in idx])
            tg = [targets(i) for i in idx]
            rows = torch.repeat_interleave(torch.arange(len(idx)), torch.tensor([len(t) for t in tg]))
            yield {"flat": flat, "offsets": offsets, "pair_row": rows,
                   "pair_word": torch.tensor([w for t in tg for w in t], dtype=torch.long)}

    return batches


def train_fastsent(documents: Sequence[Sequence[str]], config: FastSentConfig | None = None,
                   train: TrainConfig | None = None) -> FastSentResult:
    """Train FastSent on ordered documents (lists of raw sentences) with :func:`companion.train.fit`."""
    config = config or FastSentConfig()
    config.validate()
    corpus = OrderedSentences(documents)
    vocab = sentence_vocab(corpus.tokens, min_count=config.min_count, max_size=config.max_vocab)
    batches = make_batches(corpus, vocab, config)
    model, hist = fit_encoder(lambda: FastSent(len(vocab), config), batches,
                              train or train_config(config, clip_grad_norm=None), seed=config.seed,
                              count_fn=lambda b: int(b["offsets"].numel()))
    return FastSentResult(model, vocab, config, hist)
