"""Context2Vec (Melamud, Goldberger & Dagan 2016): a vector for a *context*, not for a word.

word2vec's CBOW averages the window around a target; Context2Vec reads the whole sentence with
two LSTMs instead — one left to right up to the word before the target, one right to left down
to the word after it — concatenates their states, passes them through an MLP, and trains the
result ``c`` against the target's own embedding ``t_w`` with word2vec's negative sampling::

    loss = -log sigmoid(c . t_w) - sum_{k=1}^{K} log sigmoid(-c . t_{n_k}),  n_k ~ U(w)^0.75

The target word itself is never read. The context vectors and target vectors live in one space,
so ``c . t_w`` ranks substitutes for the blank ("the ___ barked"), and contexts can be compared
with each other. All positions of a sentence are trained at once: one forward pass of each LSTM
gives every position's left and right states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..train import History, TrainConfig, fit
from .lstm_lm import _check_pos_int


@dataclass
class Context2VecConfig:
    """Sizes (the paper: 600-d word vectors, 600-d LSTMs, a 1200-d MLP, 10 negatives, power 0.75).

    Attributes:
        vocab_size: words including ``<unk>``, ``<pad>`` and the sentence-boundary symbol.
        emb_dim: the LSTMs' input word vectors. hidden: each LSTM's state size.
        mlp_hidden: the MLP's hidden layer. out_dim: context and target vector size.
        negatives: noise words per target. power: the noise distribution's exponent.
    """

    vocab_size: int
    emb_dim: int = 64
    hidden: int = 64
    mlp_hidden: int = 128
    out_dim: int = 64
    negatives: int = 10
    power: float = 0.75

    def validate(self) -> None:
        for name in ("vocab_size", "emb_dim", "hidden", "mlp_hidden", "out_dim", "negatives"):
            _check_pos_int(name, getattr(self, name))
        if not 0 <= self.power <= 1:
            raise ValueError(f"power must lie in [0, 1], got {self.power!r}")


class Context2Vec(nn.Module):
    """Two LSTMs around the blank, an MLP on top, target embeddings to score words against.

    Args:
        config: the sizes.
        counts: corpus count per word id (the noise distribution is ``counts ** power``).
        bos_id: the boundary symbol's id, put before and after every sentence.
        pad_id: the padding id.
    """

    def __init__(self, config: Context2VecConfig, counts: Sequence[int], *, bos_id: int, pad_id: int,
                 seed: int | None = 0):
        super().__init__()
        if not isinstance(config, Context2VecConfig):
            raise TypeError(f"config must be a Context2VecConfig, got {type(config).__name__}")
        config.validate()
        if len(counts) != config.vocab_size:
            raise ValueError(f"counts has {len(counts)} entries but vocab_size is {config.vocab_size}")
        if seed is not None:
            torch.manual_seed(seed)
        c = self.config = config
        self.bos_id, self.pad_id = bos_id, pad_id
        self.left_embed = nn.Embedding(c.vocab_size, c.emb_dim, padding_idx=pad_id)
        self.right_embed = nn.Embedding(c.vocab_size, c.emb_dim, padding_idx=pad_id)
        self.left = nn.LSTM(c.emb_dim, c.hidden, batch_first=True)
        self.right = nn.LSTM(c.emb_dim, c.hidden, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(2 * c.hidden, c.mlp_hidden), nn.ReLU(),
                                 nn.Linear(c.mlp_hidden, c.out_dim))
        self.target = nn.Embedding(c.vocab_size, c.out_dim)
        # Not word2vec's zero start: word2vec's *input* vectors differ from the first step, but
        # here the contexts come out of an untrained LSTM + MLP nearly parallel, and zero targets
        # would all move along that one average context; the model then sits for hundreds of
        # steps on the unigram solution (every blank, the same fillers). Small random targets
        # give each word its own direction from step one (tests/test_contextual_context2vec.py).
        nn.init.normal_(self.target.weight, std=0.1)
        noise = torch.as_tensor(counts, dtype=torch.float64).clamp(min=0) ** c.power
        for special in {bos_id, pad_id}:
            noise[special] = 0.0  # never sample the boundary or padding as a noise word
        if noise.sum() <= 0:
            raise ValueError("counts must give some word (other than bos/pad) a positive count")
        self.register_buffer("noise", (noise / noise.sum()).float())

    def contexts(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Context vectors for every position: ``ids [B, T]`` (right-padded, no boundaries)
        -> ``[B, T, out_dim]``; row ``(b, i)`` reads ``ids[b, :i]`` and ``ids[b, i+1:len]`` only."""
        if ids.dim() != 2 or ids.dtype != torch.long:
            raise ValueError("ids must be a LongTensor [batch, time]")
        B, T = ids.shape
        dev = ids.device
        lengths = lengths.to(dev)
        bos = torch.full((B, 1), self.bos_id, dtype=torch.long, device=dev)
        # left to right over [bos, w_1 .. w_T]: state after reading position i-1 is at index i
        lh, _ = self.left(self.left_embed(torch.cat([bos, ids], dim=1)))
        left = lh[:, :T]
        # right to left: reverse each sentence's real words, then read [bos, w_n .. w_1]
        pos = torch.arange(T, device=dev)[None, :]
        rev_idx = (lengths[:, None] - 1 - pos).clamp(min=0)
        rev = torch.where(pos < lengths[:, None], ids.gather(1, rev_idx), self.pad_id)
        rh, _ = self.right(self.right_embed(torch.cat([bos, rev], dim=1)))
        # the right context of w_i (words i+1..n) is the state after reading n-i of them
        right = rh.gather(1, rev_idx[..., None].expand(-1, -1, rh.shape[-1]))
        return self.mlp(torch.cat([left, right], dim=-1))

    def loss(self, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """Negative-sampling loss averaged over the real positions of ``(ids, lengths)``."""
        ids, lengths = batch
        c = self.contexts(ids, lengths)  # [B, T, D]
        valid = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths.to(ids.device)[:, None]
        c, targets = c[valid], ids[valid]  # [N, D], [N]
        neg = torch.multinomial(self.noise, targets.numel() * self.config.negatives, replacement=True)
        pos_score = (c * self.target(targets)).sum(-1)
        neg_score = torch.einsum("nd,nkd->nk", c, self.target(neg.view(targets.numel(), -1)))
        return -(F.logsigmoid(pos_score).mean() + F.logsigmoid(-neg_score).sum(-1).mean())

    @torch.no_grad()
    def context_vector(self, ids: Sequence[int], position: int) -> torch.Tensor:
        """The context vector of the blank at ``position`` of one sentence (the word there is
        ignored: pass any id, e.g. ``<unk>``)."""
        if not 0 <= position < len(ids):
            raise ValueError(f"position must lie in [0, {len(ids)}), got {position}")
        was = self.training
        self.eval()
        try:
            dev = self.target.weight.device
            t = torch.as_tensor([list(ids)], dtype=torch.long, device=dev)
            return self.contexts(t, torch.tensor([len(ids)], device=dev))[0, position]
        finally:
            self.train(was)

    @torch.no_grad()
    def substitutes(self, ids: Sequence[int], position: int, k: int = 10,
                    exclude: Sequence[int] = ()) -> list[tuple[int, float]]:
        """The ``k`` words whose target vectors best fit the blank: ``(id, cosine)`` pairs."""
        c = self.context_vector(ids, position)
        sims = F.cosine_similarity(self.target.weight, c[None, :], dim=-1)
        for i in {self.bos_id, self.pad_id, *exclude}:
            sims[i] = -2.0
        top = sims.topk(k)
        return [(int(i), float(s)) for s, i in zip(top.values, top.indices)]


def sentence_batches(sentences: Sequence[Sequence[int]], batch_size: int, pad_id: int, seed: int = 0,
                     max_len: int = 40) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Shuffled ``(ids, lengths)`` batches of sentences (cut to ``max_len``, grouped by length)."""
    _check_pos_int("batch_size", batch_size)
    sents = [list(s[:max_len]) for s in sentences if len(s) >= 2]
    if not sents:
        raise ValueError("need at least one sentence of two or more words")
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(sents), generator=g).tolist()
    chunk = 50 * batch_size
    order = [i for s in range(0, len(order), chunk) for i in sorted(order[s:s + chunk], key=lambda i: len(sents[i]))]
    out = []
    for s in range(0, len(order), batch_size):
        b = [sents[i] for i in order[s:s + batch_size]]
        lengths = torch.tensor([len(x) for x in b])
        ids = torch.full((len(b), int(lengths.max())), pad_id, dtype=torch.long)
        for i, x in enumerate(b):
            ids[i, :len(x)] = torch.as_tensor(x)
        out.append((ids, lengths))
    perm = torch.randperm(len(out), generator=g).tolist()
    return [out[i] for i in perm]


def train_context2vec(model: Context2Vec, sentences: Sequence[Sequence[int]], *, epochs: int = 1,
                      batch_size: int = 64, lr: float = 1e-2, seed: int = 0, max_steps: int | None = None,
                      device: str | None = None, progress: bool = True) -> History:
    """Adam through :func:`companion.train.fit`, sentences reshuffled each epoch."""
    config = TrainConfig(epochs=epochs, lr=lr, seed=seed, device=device, max_steps=max_steps,
                         progress=progress, clip_grad_norm=5.0)
    return fit(model, lambda e: sentence_batches(sentences, batch_size, model.pad_id, seed + e),
               config=config, count_fn=lambda b: int(b[1].sum()))
