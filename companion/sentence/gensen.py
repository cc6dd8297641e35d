"""GenSen-lite: one sentence encoder, several training signals (after Subramanian, Trischler,
Bengio & Pal 2018, *Learning General Purpose Distributed Sentence Representations via Large
Scale Multi-task Learning*; the idea the source post draws from GenSen and the Universal
Sentence Encoder).

A *shared* GRU encoder feeds three task heads, and training cycles through the tasks one batch
at a time (round-robin, as GenSen samples a task per step):

* ``"next"`` -- Skip-thoughts' next-sentence generation (a conditioned GRU decoder);
* ``"nli"`` -- InferSent's classifier on ``[u, v, |u - v|, u * v]`` (SICK-E here);
* ``"translate"`` -- an English -> German GRU decoder (Multi30k here).

The claim to check: the shared encoder's vectors transfer better than any single task's. Any
subset of the tasks can be given (the single-task runs are the comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_texts
from ..data.text import tokenize
from ..data.vocab import Vocab
from ..train import History
from ._text import (
    BOS,
    EOS,
    PAD,
    GRUEncoder,
    OrderedSentences,
    encode_in_batches,
    pad_batch,
    sentence_vocab,
)
from ._training import EncoderTraining, fit_encoder, train_config
from .infersent import _pairs, nli_features

__all__ = ["TASKS", "GenSen", "GenSenConfig", "GenSenResult", "train_gensen"]

TASKS = ("next", "nli", "translate")


@dataclass(kw_only=True)
class GenSenConfig(EncoderTraining):
    """Attributes: emb_dim, hidden (shared GRU), mlp (NLI head), n_classes, max_len, and the
    training settings of :class:`._training.EncoderTraining`."""

    emb_dim: int = 100
    hidden: int = 300
    mlp: int = 256
    n_classes: int = 3
    max_len: int = 30

    positive_ints: ClassVar[tuple[str, ...]] = ("emb_dim", "hidden", "mlp", "batch_size", "max_len", "min_count", "epochs")


class _Decoder(nn.Module):
    """A GRU decoder conditioned on the thought vector at every step (see :mod:`.skipthoughts`)."""

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, pad_id: int) -> None:
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.gru = nn.GRU(emb_dim + hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def loss(self, h: torch.Tensor, inp: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        x = self.embedding(inp)
        y, _ = self.gru(torch.cat([x, h.unsqueeze(1).expand(-1, x.shape[1], -1)], 2), h.unsqueeze(0))
        return F.cross_entropy(self.out(y).flatten(0, 1), tgt.flatten(), ignore_index=self.pad_id)


class GenSen(nn.Module):
    """The shared encoder and one head per task in ``tasks``."""

    def __init__(self, vocab_size: int, config: GenSenConfig, tasks: Sequence[str], pad_id: int = 1,
                 target_vocab_size: int | None = None) -> None:
        super().__init__()
        config.validate()
        bad = [t for t in tasks if t not in TASKS]
        if bad or not tasks:
            raise ValueError(f"tasks must be a non-empty subset of {TASKS}, got {list(tasks)}")
        self.encoder = GRUEncoder(vocab_size, config.emb_dim, config.hidden, pad_id)
        self.heads = nn.ModuleDict()
        if "next" in tasks:
            self.heads["next"] = _Decoder(vocab_size, config.emb_dim, config.hidden, pad_id)
        if "nli" in tasks:
            self.heads["nli"] = nn.Sequential(nn.Linear(4 * config.hidden, config.mlp), nn.Tanh(),
                                              nn.Linear(config.mlp, config.n_classes))
        if "translate" in tasks:
            if target_vocab_size is None:
                raise ValueError("the translate task needs target_vocab_size (the German vocabulary)")
            self.heads["translate"] = _Decoder(target_vocab_size, config.emb_dim, config.hidden, pad_id)

    def loss(self, batch: dict[str, Any]) -> torch.Tensor:
        """The loss of the batch's task (``batch["task"]``)."""
        task = batch["task"]
        h = self.encoder(batch["ids"], batch["lengths"])
        if task == "nli":
            v = self.encoder(batch["b"], batch["b_len"])
            return F.cross_entropy(self.heads["nli"](nli_features(h, v)), batch["label"])
        return self.heads[task].loss(h, batch["tgt_in"], batch["tgt_out"])


@dataclass
class GenSenResult:
    model: GenSen
    vocab: Vocab
    config: GenSenConfig
    tasks: tuple[str, ...]
    history: History = field(default_factory=History)
    task_losses: dict[str, list[float]] = field(default_factory=dict)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> torch.Tensor:
        """``[n, hidden]`` vectors of the shared encoder (the harness's ``encode``)."""
        check_texts(sentences)
        return encode_in_batches(self.model.encoder, self.model, self.vocab, sentences, self.config.max_len,
                                 self.config.hidden, batch_size)


def train_gensen(*, documents: Sequence[Sequence[str]] | None = None, nli: Sequence[Any] | None = None,
                 translation: Sequence[tuple[str, str]] | None = None, config: GenSenConfig | None = None) -> GenSenResult:
    """Train the shared encoder on the tasks whose data is given, one batch of each in turn.

    Args:
        documents: ordered documents (lists of sentences) for ``"next"``.
        nli: labelled sentence pairs (``Example`` s or ``(a, b, label)``) for ``"nli"``.
        translation: ``(english, german)`` pairs (e.g. ``load_multi30k()["train"]``) for ``"translate"``.
    """
    config = config or GenSenConfig()
    config.validate()
    tasks = tuple(t for t, d in zip(TASKS, (documents, nli, translation)) if d is not None)
    if not tasks:
        raise ValueError("give data for at least one task: documents=, nli= or translation=")
    L, B = config.max_len, config.batch_size
    english: list[list[str]] = []
    corpus = OrderedSentences(documents) if documents is not None else None
    if corpus is not None:
        english += corpus.tokens
    pairs = _pairs(nli) if nli is not None else []
    english += [tokenize(s) for p in pairs for s in p[:2]]
    trans = [(tokenize(a), tokenize(b)) for a, b in translation] if translation is not None else []
    english += [a for a, _ in trans]
    vocab = sentence_vocab(english, min_count=config.min_count, max_size=config.max_vocab)
    de_vocab = sentence_vocab([b for _, b in trans], min_count=config.min_count, max_size=config.max_vocab) if trans else None
    pad = vocab.stoi[PAD]
    bos, eos = vocab.stoi[BOS], vocab.stoi[EOS]  # the same ids in both vocabularies (specials first)

    def seq2seq(src: list[list[int]], tgt: list[list[int]], task: str) -> dict[str, Any]:
        ids, lengths = pad_batch(src, pad, L)
        return {"task": task, "ids": ids, "lengths": lengths,
                "tgt_in": pad_batch([[bos] + t[: L - 1] for t in tgt], pad)[0],
                "tgt_out": pad_batch([t[: L - 1] + [eos] for t in tgt], pad)[0]}

    def task_batches(task: str, epoch: int):
        g = torch.Generator().manual_seed(config.seed * 1_000 + epoch * 10 + TASKS.index(task))
        if task == "next":
            enc = [vocab.encode(t) for t in corpus.tokens]
            d = corpus.doc
            idx = torch.nonzero(d[:-1] == d[1:]).flatten()
            idx = idx[torch.randperm(idx.numel(), generator=g)].tolist()
            for s in range(0, len(idx), B):
                chunk = idx[s:s + B]
                yield seq2seq([enc[i] for i in chunk], [enc[i + 1] for i in chunk], "next")
        elif task == "nli":
            order = torch.randperm(len(pairs), generator=g).tolist()
            for s in range(0, len(order), B):
                chunk = [pairs[i] for i in order[s:s + B]]
                a, al = pad_batch([vocab.encode(tokenize(p[0])) for p in chunk], pad, L)
                b, bl = pad_batch([vocab.encode(tokenize(p[1])) for p in chunk], pad, L)
                yield {"task": "nli", "ids": a, "lengths": al, "b": b, "b_len": bl,
                       "label": torch.tensor([p[2] for p in chunk])}
        else:
            order = torch.randperm(len(trans), generator=g).tolist()
            for s in range(0, len(order), B):
                chunk = [trans[i] for i in order[s:s + B]]
                yield seq2seq([vocab.encode(a) for a, _ in chunk], [de_vocab.encode(b) for _, b in chunk], "translate")

    def batches(epoch: int):
        # round-robin: one batch of each task in turn, until every task is exhausted
        for group in zip_longest(*(task_batches(t, epoch) for t in tasks)):
            yield from (b for b in group if b is not None)

    losses: dict[str, list[float]] = {t: [] for t in tasks}

    def loss_fn(m: GenSen, batch: dict[str, Any]) -> torch.Tensor:
        value = m.loss(batch)
        losses[batch["task"]].append(float(value.detach()))
        return value

    model, hist = fit_encoder(lambda: GenSen(len(vocab), config, tasks, pad, len(de_vocab) if de_vocab else None),
                              batches, train_config(config), seed=config.seed, loss_fn=loss_fn)
    return GenSenResult(model, vocab, config, tasks, hist, losses)
