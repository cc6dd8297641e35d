"""Skip-thoughts (Kiros, Zhu, Salakhutdinov, Zemel, Torralba, Urtasun & Fidler 2015,
*Skip-Thought Vectors*).

Skip-gram one level up: a GRU *encoder* reads sentence ``s_i`` into a thought vector ``h_i``,
and two GRU *decoders* generate the previous sentence ``s_{i-1}`` and the next one ``s_{i+1}``
word by word, each conditioned on ``h_i``. The sentence embedding is ``h_i`` (the paper's
"uni-skip"; "bi-skip" adds a backward encoder, "combine-skip" concatenates both).

Conditioning: the paper adds ``C_z h_i``, ``C_r h_i`` and ``C h_i`` to the decoder's update gate,
reset gate and candidate at every step. Feeding ``[x_t, h_i]`` as the GRU's input at every step
is the same thing: the GRU's input weights on the ``h_i`` half *are* those three matrices. The
two decoders share the output layer (the paper's vocabulary matrix ``V``), not their GRUs.

**Vocabulary expansion** (the paper's section 2.2): the encoder only knows its training words.
A linear map ``W`` from a word2vec space to the encoder's word-embedding space is fitted by least
squares on the words the two share; any word2vec word ``w`` then gets the encoder embedding
``v_w W`` (:meth:`SkipThoughtsResult.expand_vocabulary`). The paper grew 20,000 words to
930,911 this way.

Quick start::

    res = train_skipthoughts(load_pretraining_corpus()[:200], SkipThoughtsConfig(epochs=1))
    res.encode(["a sentence"])               # [1, hidden]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_texts
from ..data.vocab import Vocab
from ..train import History, TrainConfig
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

__all__ = ["SkipThoughts", "SkipThoughtsConfig", "SkipThoughtsResult", "fit_linear_map", "heldout_map_quality",
           "train_skipthoughts"]


@dataclass(kw_only=True)
class SkipThoughtsConfig(EncoderTraining):
    """Model and training settings (the paper: 620-d words, 2,400-unit GRUs, vocabulary 20,000,
    batch 128, Adam, two weeks on a GPU; ours are small by default for CPUs).

    Attributes:
        emb_dim, hidden: word vector and GRU sizes (the embedding is ``hidden``-d).
        batch_size: (previous, sentence, next) triples per batch.
        max_len: sentences are cut to this many tokens.
        min_count, max_vocab, epochs, lr, seed, device: see :class:`._training.EncoderTraining`.
    """

    emb_dim: int = 100
    hidden: int = 200
    max_len: int = 30

    positive_ints: ClassVar[tuple[str, ...]] = ("emb_dim", "hidden", "batch_size", "max_len", "min_count", "epochs")


class SkipThoughts(nn.Module):
    """A GRU encoder, two conditioned GRU decoders (previous, next) and a shared output layer."""

    def __init__(self, vocab_size: int, config: SkipThoughtsConfig, pad_id: int = 1) -> None:
        super().__init__()
        config.validate()
        self.config, self.pad_id = config, pad_id
        self.embedding = nn.Embedding(vocab_size, config.emb_dim, padding_idx=pad_id)
        self.encoder = GRUEncoder(vocab_size, config.emb_dim, config.hidden, pad_id, embedding=self.embedding)
        self.dec_prev = nn.GRU(config.emb_dim + config.hidden, config.hidden, batch_first=True)
        self.dec_next = nn.GRU(config.emb_dim + config.hidden, config.hidden, batch_first=True)
        self.out = nn.Linear(config.hidden, vocab_size)

    def decode_loss(self, gru: nn.GRU, h: torch.Tensor, inp: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Summed cross-entropy of generating ``tgt`` (teacher forcing on ``inp``) from ``h``."""
        x = self.embedding(inp)
        x = torch.cat([x, h.unsqueeze(1).expand(-1, x.shape[1], -1)], 2)  # h_i at every step
        y, _ = gru(x, h.unsqueeze(0))  # the thought vector also starts the decoder
        return F.cross_entropy(self.out(y).flatten(0, 1), tgt.flatten(), ignore_index=self.pad_id, reduction="sum")

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean per-token cross-entropy of both neighbours given the sentence."""
        h = self.encoder(batch["ids"], batch["lengths"])
        total = self.decode_loss(self.dec_prev, h, batch["prev_in"], batch["prev_out"])
        total = total + self.decode_loss(self.dec_next, h, batch["next_in"], batch["next_out"])
        n = (batch["prev_out"] != self.pad_id).sum() + (batch["next_out"] != self.pad_id).sum()
        return total / n

    def embed(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.encoder(ids, lengths)


def fit_linear_map(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """The least-squares ``W`` minimising ``||X W - Y||^2`` (``X [n, p]``, ``Y [n, q]``): ``[p, q]``.

    Solved in float64 by ``torch.linalg.lstsq`` (a QR factorisation: more stable than the
    normal equations ``(X^T X)^{-1} X^T Y`` when word vectors are nearly collinear).
    """
    if X.dim() != 2 or Y.dim() != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must be [n, p] and [n, q] with the same n, got {tuple(X.shape)} and {tuple(Y.shape)}")
    if X.shape[0] < X.shape[1]:
        raise ValueError(f"need at least as many shared words ({X.shape[0]}) as dimensions ({X.shape[1]}) to fit the map")
    return torch.linalg.lstsq(X.double(), Y.double()).solution.to(Y.dtype)


def heldout_map_quality(X: torch.Tensor, Y: torch.Tensor, *, holdout: float = 0.2, k: int = 10,
                        seed: int = 0) -> dict[str, float]:
    """How well a linear map predicts rows it was not fitted on: fit ``W`` on a random
    ``1 - holdout`` of the shared words, map the rest, and report the mean cosine of ``x W`` to
    the true row ``y`` (``"cosine"``), the same for another held-out word's row (``"chance"``),
    and the share of held-out words whose true row is among the ``k`` rows of ``Y`` nearest to
    ``x W`` by cosine (``"top_k"``; chance is ``k / n``)."""
    if not 0 < holdout < 1:
        raise ValueError(f"holdout must be a share between 0 and 1, got {holdout!r}")
    X, Y = torch.as_tensor(X).float(), torch.as_tensor(Y).float()  # NumPy rows welcome (GloVe)
    n = X.shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    test, train = perm[: max(1, int(n * holdout))], perm[max(1, int(n * holdout)):]
    W = fit_linear_map(X[train], Y[train])
    P = F.normalize(X[test].to(W.dtype) @ W, dim=1)
    Yn = F.normalize(Y.to(W.dtype), dim=1)
    sims = P @ Yn.T  # [n_test, n]
    other = test.roll(1)  # each held-out word paired with another one
    hits = (sims.topk(min(k, n), dim=1).indices == test.unsqueeze(1)).any(1)
    return {"cosine": float((P * Yn[test]).sum(1).mean()), "chance": float((P * Yn[other]).sum(1).mean()),
            "top_k": float(hits.float().mean()), "k": k, "n_fit": int(train.numel()), "n_test": int(test.numel())}


@dataclass
class SkipThoughtsResult:
    model: SkipThoughts
    vocab: Vocab
    config: SkipThoughtsConfig
    history: History = field(default_factory=History)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> torch.Tensor:
        """``[n, hidden]`` thought vectors of raw sentences (the harness's ``encode``)."""
        check_texts(sentences)
        return encode_in_batches(self.model.embed, self.model, self.vocab, sentences, self.config.max_len,
                                 self.config.hidden, batch_size)

    @torch.no_grad()
    def expand_vocabulary(self, vectors, words: Sequence[str] | Mapping[str, int]) -> tuple[SkipThoughtsResult, torch.Tensor]:
        """A copy whose encoder knows every word of a word2vec space (the paper's expansion).

        Args:
            vectors: ``[V', p]`` word2vec-space vectors; words: their words (list or word -> row).

        Returns:
            the expanded result (the encoder's embedding grown by the new words; the decoders
            are unchanged, they are not used to encode) and the fitted map ``W [p, emb_dim]``.
        """
        V2 = torch.as_tensor(vectors).float()
        index = dict(words) if isinstance(words, Mapping) else {w: i for i, w in enumerate(words)}
        if V2.dim() != 2 or (not isinstance(words, Mapping) and len(words) != V2.shape[0]):
            raise ValueError("vectors must be [V, p] with one word per row")
        E = self.model.embedding.weight.detach().cpu()
        shared = [w for w in self.vocab.itos if w in index and w not in (PAD, BOS, EOS, self.vocab.unk)]
        W = fit_linear_map(V2[[index[w] for w in shared]], E[[self.vocab.stoi[w] for w in shared]])
        new = [w for w in index if w not in self.vocab.stoi]
        grown = torch.cat([E, V2[[index[w] for w in new]] @ W]) if new else E.clone()
        vocab = Vocab.from_dict(self.vocab.to_dict())
        vocab.itos = list(self.vocab.itos) + new
        vocab.stoi = {w: i for i, w in enumerate(vocab.itos)}
        model = copy.deepcopy(self.model).cpu()
        model.embedding = nn.Embedding.from_pretrained(grown, freeze=True, padding_idx=self.vocab.stoi[PAD])
        model.encoder.embedding = model.embedding
        return SkipThoughtsResult(model, vocab, self.config, self.history), W


def make_triples(corpus: OrderedSentences, vocab: Vocab, batch_size: int, max_len: int, seed: int):
    """``epoch -> batches`` of (previous, sentence, next) triples inside one document, shuffled."""
    encoded = [vocab.encode(t)[: max_len - 1] for t in corpus.tokens]
    pad, bos, eos = vocab.stoi[PAD], vocab.stoi[BOS], vocab.stoi[EOS]
    d = corpus.doc
    centres = torch.nonzero((d[1:-1] == d[:-2]) & (d[1:-1] == d[2:])).flatten() + 1
    if centres.numel() == 0:
        raise ValueError("no sentence has a previous and a next sentence in its document; give longer documents")

    def batches(epoch: int):
        order = centres[torch.randperm(centres.numel(), generator=torch.Generator().manual_seed(seed + epoch))]
        for s in range(0, order.numel(), batch_size):
            idx = order[s:s + batch_size].tolist()
            ids, lengths = pad_batch([encoded[i] for i in idx], pad)
            b = {"ids": ids, "lengths": lengths}
            for name, off in (("prev", -1), ("next", 1)):
                b[f"{name}_in"] = pad_batch([[bos] + encoded[i + off] for i in idx], pad)[0]
                b[f"{name}_out"] = pad_batch([encoded[i + off] + [eos] for i in idx], pad)[0]
            yield b

    return batches


def train_skipthoughts(documents: Sequence[Sequence[str]], config: SkipThoughtsConfig | None = None,
                       train: TrainConfig | None = None) -> SkipThoughtsResult:
    """Train Skip-thoughts on ordered documents (lists of raw sentences) with
    :func:`companion.train.fit`; ``History.items`` counts sentences (triples)."""
    config = config or SkipThoughtsConfig()
    config.validate()
    corpus = OrderedSentences(documents)
    vocab = sentence_vocab(corpus.tokens, min_count=config.min_count, max_size=config.max_vocab)
    batches = make_triples(corpus, vocab, config.batch_size, config.max_len, config.seed)
    model, hist = fit_encoder(lambda: SkipThoughts(len(vocab), config, vocab.stoi[PAD]), batches,
                              train or train_config(config), seed=config.seed)
    return SkipThoughtsResult(model, vocab, config, hist)
