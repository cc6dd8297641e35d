"""ELMo (Peters et al. 2018): a character-aware bidirectional language model whose layers, mixed
with task-specific weights, are the contextual word vectors.

The pieces, bottom to top (``d`` is the model width):

1. **Character CNN** (Kim et al. 2016): every token is its UTF-8 bytes between begin- and
   end-of-word marks; byte embeddings go through 1-D convolutions of several widths, each
   max-pooled over the word, so any string -- misspelt, unseen -- gets a vector.
2. **Highway layers** (Srivastava et al. 2015): ``y = g * x + (1 - g) * relu(W x)`` with a gate
   ``g = sigmoid(W_g x + b_g)`` that decides, per dimension, how much of the input to carry.
3. A linear **projection** to ``d`` and a **LayerNorm**: the context-independent token vector
   ``x_k``. The norm is ours, not the paper's (ELMo clipped its LSTM cells and projections at
   +-3 instead): without it, Adam grew a few highway units' outputs ~200-fold within 350 steps,
   the token vectors reached a standard deviation of ~7 per dimension, 85 % of the first LSTM's
   gate inputs sat beyond +-3 (saturated), and every layer of the biLM became nearly
   one-dimensional (the first principal direction held ~70-90 % of the variance).
4. **Two LSTM layers per direction** (LSTMs with a projection back to ``d``, as ELMo's), the
   second with a **residual connection**; the forward LM reads left to right and predicts the
   next word, the backward LM reads right to left and predicts the previous one.
5. One **softmax** over the word vocabulary, **tied** between the two directions (and so is the
   token layer): the paper ties both; only the LSTMs are direction-specific.

The ELMo vector of token k for a task is a **scalar mix** of the three layers
``h_{k,0} = [x_k; x_k]``, ``h_{k,1}``, ``h_{k,2}`` (forward and backward states concatenated):

    ELMo_k = gamma * sum_j softmax(s)_j h_{k,j},

with ``s`` and ``gamma`` learned by the task (:class:`ScalarMix`).

Example::

    words = WordVocab.build(sentences, max_size=8000)
    model = BiLM(BiLMConfig(vocab_size=len(words)))
    fit(model, lambda e: lm_batches(sentences, words, 32, seed=e), config=TrainConfig(...))
    layers = model.layers(char_ids(batch_tokens))     # [3, B, T, 2d]
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# torch warns once per process that its oneDNN path has no LSTM projections and falls back to
# its default kernels (correct, as fast as an LSTM of `cells` units here): not the reader's concern.
warnings.filterwarnings("ignore", message="LSTM with projections is not supported with oneDNN")

# character ids: 0 padding, then the word and sentence marks, then 256 bytes
CHAR_PAD, BOW, EOW, BOS_CHAR, EOS_CHAR = 0, 1, 2, 3, 4
N_CHARS = 5 + 256
BOS, EOS, UNK = "<S>", "</S>", "<unk>"
_TOKEN = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")


def word_tokens(text: str) -> list[str]:
    """Words (with inner hyphens, apostrophes and dots) and punctuation marks, case kept: the
    character CNN sees capitals, which matter for names."""
    if not isinstance(text, str):
        raise TypeError(f"word_tokens takes a string, got {type(text).__name__}")
    return _TOKEN.findall(text)


def char_ids(sentences: Sequence[Sequence[str]], max_chars: int = 16) -> torch.Tensor:
    """``[B, T + 2, max_chars]`` character ids of tokenized sentences, with ``<S>`` and ``</S>``
    added around each sentence (their own one-character words) and right padding.

    A token is ``BOW, bytes..., EOW``; longer tokens keep their first ``max_chars - 2`` bytes.

    Raises:
        TypeError: for a string where a list of tokens belongs.
        ValueError: for an empty batch or ``max_chars < 3``.
    """
    if isinstance(sentences, str) or (sentences and isinstance(sentences[0], str)):
        raise TypeError("char_ids takes a list of token lists, e.g. [['The', 'bank', '.']]; "
                        "wrap a single sentence in a list")
    if not sentences:
        raise ValueError("char_ids: no sentences")
    if max_chars < 3:
        raise ValueError(f"max_chars must be at least 3 (marks plus one byte), got {max_chars}")
    out = torch.zeros(len(sentences), max(map(len, sentences)) + 2, max_chars, dtype=torch.long)
    for i, sent in enumerate(sentences):
        out[i, 0, :3] = torch.tensor([BOW, BOS_CHAR, EOW])
        for j, tok in enumerate(sent, start=1):
            b = list(tok.encode("utf-8"))[: max_chars - 2]
            out[i, j, : len(b) + 2] = torch.tensor([BOW, *(5 + x for x in b), EOW])
        out[i, len(sent) + 1, :3] = torch.tensor([BOW, EOS_CHAR, EOW])
    return out


@dataclass
class WordVocab:
    """The softmax's words: ``<unk>``, ``<S>``, ``</S>``, then the most frequent (case kept)."""

    itos: list[str]
    stoi: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        if self.itos[:3] != [UNK, BOS, EOS]:
            raise ValueError(f"a word vocabulary starts with {[UNK, BOS, EOS]}, got {self.itos[:3]}")
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Sequence[Sequence[str]], max_size: int) -> WordVocab:
        if not isinstance(max_size, int) or max_size < 1:
            raise ValueError(f"max_size must be a positive int, got {max_size!r}")
        counts = Counter(w for s in sentences for w in s)
        words = sorted(counts, key=lambda w: (-counts[w], w))[:max_size]
        return cls([UNK, BOS, EOS, *words])

    def __len__(self) -> int:
        return len(self.itos)

    def ids(self, sentences: Sequence[Sequence[str]]) -> torch.Tensor:
        """``[B, T + 2]`` word ids with ``<S>``/``</S>`` (padding is -100: ignored by the loss)."""
        out = torch.full((len(sentences), max(map(len, sentences)) + 2), -100, dtype=torch.long)
        for i, s in enumerate(sentences):
            out[i, : len(s) + 2] = torch.tensor([1, *(self.stoi.get(w, 0) for w in s), 2])
        return out


# --------------------------------------------------------------------------- token layer
class Highway(nn.Module):
    """``y = g * x + (1 - g) * relu(W_h x + b_h)``, ``g = sigmoid(W_g x + b_g)``, per layer.

    The gate's bias starts at +1 (as in ELMo's code), so a fresh layer mostly carries its input.
    """

    def __init__(self, dim: int, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(n_layers))
        for layer in self.layers:
            nn.init.zeros_(layer.bias)
            layer.bias.data[dim:] = 1.0  # the gate half

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            h, g = layer(x).chunk(2, dim=-1)
            g = torch.sigmoid(g)
            x = g * x + (1 - g) * F.relu(h)
        return x


class CharCNN(nn.Module):
    """Token vectors from characters: byte embeddings, convolutions of several widths max-pooled
    over the word, highway layers, a projection to ``d``. Input ``[..., n_chars]`` ids, output
    ``[..., d]``."""

    def __init__(self, d: int, char_dim: int = 16, filters: Sequence[tuple[int, int]] = ((1, 32), (2, 32),
                 (3, 64), (4, 128)), n_highway: int = 2, norm: bool = True) -> None:
        super().__init__()
        self.embed = nn.Embedding(N_CHARS, char_dim, padding_idx=CHAR_PAD)
        self.convs = nn.ModuleList(nn.Conv1d(char_dim, n, w) for w, n in filters)
        width = sum(n for _, n in filters)
        self.highway = Highway(width, n_highway)
        self.proj = nn.Linear(width, d)
        # keeps the token vectors at unit scale whatever the highway units grow to (see above)
        self.norm = nn.LayerNorm(d) if norm else nn.Identity()
        self.min_chars = max(w for w, _ in filters)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        if chars.dtype != torch.long:
            raise TypeError(f"CharCNN takes long character ids, got {chars.dtype}")
        if chars.shape[-1] < self.min_chars:
            raise ValueError(f"tokens need at least {self.min_chars} character slots (the widest "
                             f"filter), got {chars.shape[-1]}")
        lead = chars.shape[:-1]
        x = self.embed(chars.reshape(-1, chars.shape[-1])).transpose(1, 2)  # [N, char_dim, n_chars]
        pooled = torch.cat([F.relu(conv(x)).max(-1).values for conv in self.convs], -1)
        return self.norm(self.proj(self.highway(pooled))).reshape(*lead, -1)


# --------------------------------------------------------------------------- the biLM
@dataclass
class BiLMConfig:
    """Sizes. ELMo (original): 4096 LSTM cells projected to d = 512, 2 layers, filters of widths
    1-7 with 2,048 channels, 2 highway layers, 793k-word softmax. Ours are laptop-sized."""

    vocab_size: int
    d: int = 128
    cells: int = 256  # LSTM cells per direction and layer, projected back to d
    char_dim: int = 16
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128))
    n_highway: int = 2
    max_chars: int = 16
    dropout: float = 0.1
    token_norm: bool = True  # LayerNorm on the token vectors (False: the unnormalised old biLM)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d", "cells", "char_dim", "n_highway", "max_chars"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"BiLMConfig.{name} must be a positive int, got {v!r}")
        if self.cells <= self.d:
            raise ValueError(f"BiLMConfig.cells ({self.cells}) must exceed d ({self.d}): the LSTM "
                             "projects its cells down to d")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"BiLMConfig.dropout must be in [0, 1), got {self.dropout!r}")


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of ``x [B, T, ...]`` within its length, padding left in place."""
    T = x.shape[1]
    pos = torch.arange(T, device=x.device)[None].expand(len(x), T)
    lengths = lengths.to(x.device)[:, None]
    idx = torch.where(pos < lengths, lengths - 1 - pos, pos)
    return x.gather(1, idx.view(*idx.shape, *([1] * (x.dim() - 2))).expand_as(x))


class BiLM(nn.Module):
    """The bidirectional LM: ``layers`` gives ELMo's three layers, ``loss`` the LM objective."""

    def __init__(self, config: BiLMConfig, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.config = c = config
        self.chars = CharCNN(c.d, c.char_dim, c.filters, c.n_highway, norm=c.token_norm)
        self.fwd = nn.ModuleList(nn.LSTM(c.d, c.cells, batch_first=True, proj_size=c.d) for _ in range(2))
        self.bwd = nn.ModuleList(nn.LSTM(c.d, c.cells, batch_first=True, proj_size=c.d) for _ in range(2))
        self.softmax = nn.Linear(c.d, c.vocab_size)  # one softmax for both directions
        self.drop = nn.Dropout(c.dropout)

    @torch.no_grad()
    def init_unigram_bias(self, words: WordVocab, sentences: Sequence[Sequence[str]]) -> None:
        """Start the softmax's bias at the log unigram frequencies (add-one smoothed), so the
        LSTM states need not spend a direction on how frequent the next word is."""
        counts = torch.ones(len(words))
        for s in sentences:
            for w in s:
                counts[words.stoi.get(w, 0)] += 1
            counts[2] += 1  # </S> (and <S> for the backward LM)
        counts[1] = counts[2]
        if len(words) != self.softmax.out_features:
            raise ValueError(f"the vocabulary has {len(words)} words, the softmax {self.softmax.out_features}")
        self.softmax.bias.copy_((counts / counts.sum()).log().to(self.softmax.bias.device))

    @staticmethod
    def _stack(lstms: nn.ModuleList, x: torch.Tensor, drop: nn.Module) -> list[torch.Tensor]:
        h1, _ = lstms[0](drop(x))
        h2, _ = lstms[1](drop(h1))
        return [h1, h2 + h1]  # the residual connection around the second layer

    def directions(self, chars: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """``(x [B, T, d], forward states [h1, h2], backward states [h1, h2])`` for char ids
        ``[B, T, n_chars]`` (``<S>``/``</S>`` included; a token of all-padding is padding)."""
        if chars.ndim != 3:
            raise ValueError(f"chars must be [B, T, n_chars] (see char_ids), got shape {tuple(chars.shape)}")
        lengths = (chars[..., 0] != CHAR_PAD).sum(1)
        x = self.chars(chars)
        fwd = self._stack(self.fwd, x, self.drop)
        bwd = [reverse_padded(h, lengths) for h in self._stack(self.bwd, reverse_padded(x, lengths), self.drop)]
        return x, fwd, bwd

    def layers(self, chars: torch.Tensor, strip: bool = True) -> torch.Tensor:
        """ELMo's layers ``[3, B, T, 2d]``: ``[x; x]``, ``[f1; b1]``, ``[f2; b2]``. With ``strip``
        the ``<S>``/``</S>`` positions are dropped (``T`` = the longest sentence's tokens)."""
        x, f, b = self.directions(chars)
        out = torch.stack([torch.cat([x, x], -1), torch.cat([f[0], b[0]], -1), torch.cat([f[1], b[1]], -1)])
        if not strip:
            return out
        lengths = (chars[..., 0] != CHAR_PAD).sum(1)
        out = out[:, :, 1:-1]  # <S> is position 0; every sentence's </S> is moved out below
        mask = torch.arange(out.shape[2], device=out.device)[None] < (lengths - 2)[:, None].to(out.device)
        return out * mask[None, :, :, None]

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The mean of the forward and backward LMs' cross-entropies per predicted word."""
        _, f, b = self.directions(batch["chars"])
        y = batch["words"]
        fwd = F.cross_entropy(self.softmax(self.drop(f[1][:, :-1])).flatten(0, 1), y[:, 1:].flatten())
        prev = y[:, :-1].masked_fill(y[:, 1:] == -100, -100)  # padding predicts nothing
        bwd = F.cross_entropy(self.softmax(self.drop(b[1][:, 1:])).flatten(0, 1), prev.flatten())
        return (fwd + bwd) / 2

    def perplexity(self, batches: Sequence[dict[str, torch.Tensor]]) -> float:
        """exp of the mean (over batches) loss, in eval mode."""
        was = self.training
        self.eval()
        device = next(self.parameters()).device
        with torch.no_grad():
            loss = np.mean([float(self.loss({k: v.to(device) for k, v in b.items()})) for b in batches])
        self.train(was)
        return float(np.exp(loss))


def lm_batches(sentences: Sequence[Sequence[str]], words: WordVocab, batch_size: int, seed: int = 0,
               max_chars: int = 16) -> list[dict[str, torch.Tensor]]:
    """Batches of similar-length sentences (sorted, chunked, then the chunks shuffled)."""
    sentences = [s for s in sentences if s]
    if not sentences:
        raise ValueError("lm_batches: no non-empty sentences")
    order = np.random.default_rng(seed).permutation(len(sentences))
    order = sorted(order, key=lambda i: len(sentences[i]))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    out = []
    for k in np.random.default_rng(seed + 1).permutation(len(chunks)):
        sents = [sentences[i] for i in chunks[k]]
        out.append({"chars": char_ids(sents, max_chars), "words": words.ids(sents)})
    return out


# --------------------------------------------------------------------------- scalar mix
class ScalarMix(nn.Module):
    """``gamma * sum_j softmax(s)_j h_j``: the task's weighting of the biLM's layers.

    ``s`` starts at zero (equal weights) and ``gamma`` at one. Input ``[n_layers, ..., dim]`` (a
    stacked tensor) or a list of equal-shaped tensors.
    """

    def __init__(self, n_layers: int = 3) -> None:
        super().__init__()
        if isinstance(n_layers, bool) or not isinstance(n_layers, int) or n_layers < 1:
            raise ValueError(f"n_layers must be a positive int, got {n_layers!r}")
        self.s = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    @property
    def weights(self) -> torch.Tensor:
        """The normalised layer weights softmax(s)."""
        return self.s.softmax(0)

    def forward(self, layers: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        if not isinstance(layers, torch.Tensor):
            layers = torch.stack(list(layers))
        if layers.shape[0] != len(self.s):
            raise ValueError(f"ScalarMix was built for {len(self.s)} layers but got {layers.shape[0]} "
                             "(the layers go along the first dimension)")
        w = self.weights.view(-1, *([1] * (layers.dim() - 1)))
        return self.gamma * (w * layers).sum(0)


# --------------------------------------------------------------------------- features
class ElmoLayers:
    """A frozen biLM as a feature extractor: ``tokens(sentences)`` gives one ``[3, n, 2d]``
    array per tokenized sentence; ``layer`` (0, 1, 2 or ``"mean"``) picks one ``[n, 2d]`` view
    for probes and the SentEval harness."""

    def __init__(self, model: BiLM, batch_size: int = 64) -> None:
        self.model, self.batch_size = model, batch_size

    @torch.no_grad()
    def tokens(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        if isinstance(sentences, str) or (sentences and isinstance(sentences[0], str)):
            raise TypeError("ElmoLayers.tokens takes a list of token lists; wrap one sentence in a list")
        self.model.eval()
        device = next(self.model.parameters()).device
        out: list[np.ndarray] = [None] * len(sentences)  # type: ignore[list-item]
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))  # similar lengths
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            batch = [list(sentences[i]) or ["."] for i in idx]
            lay = self.model.layers(char_ids(batch, self.model.config.max_chars).to(device)).cpu().numpy()
            for k, i in enumerate(idx):
                out[i] = lay[:, k, : len(batch[k])]
        return out

    def layer(self, which: int | str):
        """``encode(list of token tuples) -> list of [n, 2d]`` for one layer (or the mean)."""
        if which not in (0, 1, 2, "mean"):
            raise ValueError(f"layer must be 0, 1, 2 or 'mean', got {which!r}")

        def encode(sentences):
            return [t.mean(0) if which == "mean" else t[which] for t in self.tokens(sentences)]

        return encode

    def sentence_encoder(self, which: int | str = "mean"):
        """``encode(list[str]) -> [n, 4d]`` for the SentEval harness: mean and max over tokens."""
        enc = self.layer(which)

        def encode(texts: list[str]) -> np.ndarray:
            vecs = enc([word_tokens(t) or ["."] for t in texts])
            return np.stack([np.concatenate([v.mean(0), v.max(0)]) for v in vecs]).astype(np.float32)

        return encode


__all__ = [
    "BiLM", "BiLMConfig", "CharCNN", "ElmoLayers", "Highway", "ScalarMix", "WordVocab", "char_ids",
    "lm_batches", "reverse_padded", "word_tokens",
]
