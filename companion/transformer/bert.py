"""BERT: a bidirectional Transformer encoder pre-trained by masked-LM and next-sentence
prediction (Devlin et al. 2018), with its fine-tuning heads.

* Input: ``[CLS] a [SEP] b [SEP]``; each token's vector is token + segment (0 for ``a``, 1 for
  ``b``) + position embedding, layer-normalised (:class:`BertEmbeddings`).
* Encoder: post-LN blocks (as in Vaswani et al.), every position sees every other real token
  (padding is masked out) -- :class:`BertEncoder`.
* Pre-training (:class:`BertForPreTraining`): masked LM -- 15% of the tokens are chosen, 80% of
  those replaced by ``[MASK]``, 10% by a random token, 10% left alone, and the model predicts the
  originals (:func:`mask_tokens`) -- plus NSP, a 2-way classifier on the tanh-pooled ``[CLS]``.
* Fine-tuning: :class:`BertForSequence` (one sentence or a pair; ``[CLS]`` or mean pooling;
  classification or regression) and :class:`BertForTokens` (a label per token).

Layout and names follow Hugging Face's ``BertForMaskedLM`` closely enough that :mod:`.hf`
converts weights both ways exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_ids, check_int, check_like
from ..device import get_device
from .attention import padding_mask
from .blocks import (
    Block,
    activate,
    check_config,
    count_parameters,
    init_weights,
    position_embedding,
)


@dataclass
class BertConfig:
    """Sizes and special ids of a BERT. The defaults are a tiny test model; our WordPiece
    vocabularies put ``[PAD] [UNK] [CLS] [SEP] [MASK]`` at ids 0-4 (bert-base-uncased's real
    vocabulary has 0, 100, 101, 102, 103: :func:`.hf.bert_config_from_hf` reads them)."""

    vocab_size: int = 100
    max_len: int = 64
    type_vocab_size: int = 2
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 32
    d_ff: int | None = None
    dropout: float = 0.0
    attn_dropout: float | None = None
    positions: str = "learned"
    activation: str = "gelu"
    ln_eps: float = 1e-12
    pad_id: int = 0
    unk_id: int = 1
    cls_id: int = 2
    sep_id: int = 3
    mask_id: int = 4

    def __post_init__(self):
        check_config("BertConfig", self, ("vocab_size", "max_len", "type_vocab_size", "n_layer", "n_head", "d_model"),
                     ("pad_id", "unk_id", "cls_id", "sep_id", "mask_id"))
        self.d_ff = 4 * self.d_model if self.d_ff is None else self.d_ff
        self.attn_dropout = self.dropout if self.attn_dropout is None else self.attn_dropout

    @property
    def special_ids(self) -> tuple[int, ...]:
        return (self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id)


class BertEmbeddings(nn.Module):
    """token + segment + position embeddings, then LayerNorm and dropout."""

    def __init__(self, c: BertConfig):
        super().__init__()
        # padding_idx as in Hugging Face's BERT: the lookup sends the [PAD] row no gradient, even
        # where a [PAD] id stands at a position the attention mask keeps (the tied output layer still does)
        self.tok = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.pos = position_embedding(c.positions, c.max_len, c.d_model)
        self.seg = nn.Embedding(c.type_vocab_size, c.d_model)
        self.ln = nn.LayerNorm(c.d_model, eps=c.ln_eps)
        self.drop = nn.Dropout(c.dropout)
        self.config = c

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None) -> torch.Tensor:
        c = self.config
        check_ids(ids, "ids", c.vocab_size)
        if ids.shape[1] > c.max_len:
            raise ValueError(f"sequence of {ids.shape[1]} tokens exceeds max_len={c.max_len}; truncate it")
        if segments is not None:
            check_like(segments, "segments", ids)
            check_ids(segments, "segments", c.type_vocab_size, "type_vocab_size")
        segments = torch.zeros_like(ids) if segments is None else segments
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.drop(self.ln(self.tok(ids) + self.seg(segments) + self.pos(pos)))


class BertEncoder(nn.Module):
    """Embeddings + ``n_layer`` post-LN bidirectional blocks: hidden states ``[B, T, d]``."""

    def __init__(self, config: BertConfig, seed: int | None = 0, device: str | torch.device | None = None):
        super().__init__()
        self.config = c = config
        self.embeddings = BertEmbeddings(c)
        self.blocks = nn.ModuleList(
            Block(c.d_model, c.n_head, c.d_ff, pre_ln=False, dropout=c.dropout, attn_dropout=c.attn_dropout,
                  activation=c.activation, ln_eps=c.ln_eps)
            for _ in range(c.n_layer))
        if seed is not None:
            torch.manual_seed(seed)
            init_weights(self)
        if device is not None:
            self.to(get_device(device))

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``ids [B, T]``; ``segments`` 0/1 per token; ``attention_mask`` 1 = real token, 0 = pad."""
        x = self.embeddings(ids, segments)  # checks ids and segments
        check_like(attention_mask, "attention_mask", ids)
        mask = None if attention_mask is None or bool(attention_mask.all()) else padding_mask(attention_mask)
        for block in self.blocks:
            x = block(x, mask)
        return x


class Pooler(nn.Module):
    """BERT's sentence vector: ``tanh(W h_[CLS] + b)`` (trained by NSP)."""

    def __init__(self, d_model: int):
        super().__init__()
        self.dense = nn.Linear(d_model, d_model)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """The average of the real tokens' vectors (Sentence-BERT's pooling): ``[B, d]``."""
    if hidden.dim() != 3:
        raise ValueError(f"hidden must be [batch, length, d], got shape {tuple(hidden.shape)}")
    check_like(attention_mask, "attention_mask", hidden[..., 0], "hidden[..., 0]")
    if attention_mask is None:
        return hidden.mean(1)
    m = attention_mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


class MLMHead(nn.Module):
    """dense + the config's activation (GELU for BERT) + LayerNorm, then the output layer tied to
    the token embeddings (+ a bias): HF's ``BertPredictionHeadTransform`` applies ``hidden_act``."""

    def __init__(self, c: BertConfig, embedding: nn.Embedding):
        super().__init__()
        self.dense = nn.Linear(c.d_model, c.d_model)
        self.ln = nn.LayerNorm(c.d_model, eps=c.ln_eps)
        self.activation = c.activation
        self.decoder = nn.Linear(c.d_model, c.vocab_size)
        self.decoder.weight = embedding.weight

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.ln(activate(self.dense(hidden), self.activation)))


def mask_tokens(ids: torch.Tensor, config: BertConfig, *, attention_mask: torch.Tensor | None = None,
                p: float = 0.15, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masked-LM corruption: ``(inputs, labels)``.

    Each ordinary token is chosen with probability ``p``; special tokens (``[CLS]``, ``[SEP]``,
    ``[PAD]``...) and padding never are. A chosen token becomes ``[MASK]`` with probability 0.8,
    a uniformly random ordinary token with 0.1, and stays itself with 0.1 -- so the model
    cannot tell which inputs it will be asked about, and the fine-tuning inputs (no ``[MASK]``)
    are not out of distribution. ``labels`` holds the original id where chosen, -100 elsewhere.
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    check_ids(ids, "ids", config.vocab_size, dim=None)
    check_like(attention_mask, "attention_mask", ids)
    dev = ids.device
    candidate = ~torch.isin(ids, torch.tensor(config.special_ids, device=dev))
    if attention_mask is not None:
        candidate &= attention_mask.bool()
    gdev = generator.device if generator is not None else dev  # draw where the generator lives
    u = torch.rand(ids.shape, generator=generator, device=gdev).to(dev)
    chosen = candidate & (u < p)
    r = torch.rand(ids.shape, generator=generator, device=gdev).to(dev)
    labels = ids.masked_fill(~chosen, -100)
    inputs = ids.masked_fill(chosen & (r < 0.8), config.mask_id)
    # random replacements are ordinary tokens: draw from the vocabulary without the specials
    ordinary = torch.tensor([i for i in range(config.vocab_size) if i not in config.special_ids], device=dev)
    rand_ids = ordinary[torch.randint(len(ordinary), ids.shape, generator=generator, device=gdev).to(dev)]
    swap = chosen & (r >= 0.8) & (r < 0.9)
    return torch.where(swap, rand_ids, inputs), labels


def pair_inputs(config: BertConfig, a: list[int], b: list[int] | None = None) -> tuple[list[int], list[int]]:
    """``[CLS] a [SEP] (b [SEP])`` and its segment ids (0 for the first part, 1 for ``b``)."""
    ids = [config.cls_id, *a, config.sep_id]
    segs = [0] * len(ids)
    if b is not None:
        ids += [*b, config.sep_id]
        segs += [1] * (len(b) + 1)
    return ids, segs


def pad_batch(config: BertConfig, pairs: list[tuple[list[int], list[int]]]) -> dict[str, torch.Tensor]:
    """Right-pad ``(ids, segments)`` pairs: ``{"ids", "segments", "attention_mask"}``, each ``[B, T]``."""
    if isinstance(pairs, (str, torch.Tensor)) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError(f"pairs must be a non-empty list of (ids, segments) pairs, got "
                         f"{pairs!r}" if not isinstance(pairs, torch.Tensor) else "a tensor")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or len(pair[0]) != len(pair[1]):
            raise ValueError(f"pairs[{i}] must be (ids, segments) of equal lengths, as pair_inputs returns; "
                             f"got {pair!r:.80}")
    T = max(len(ids) for ids, _ in pairs)
    if T > config.max_len:
        raise ValueError(f"an input of {T} tokens exceeds max_len={config.max_len}; truncate the texts")
    out = {k: torch.zeros(len(pairs), T, dtype=torch.long) for k in ("ids", "segments", "attention_mask")}
    out["ids"].fill_(config.pad_id)
    for i, (ids, segs) in enumerate(pairs):
        out["ids"][i, :len(ids)] = torch.tensor(ids)
        out["segments"][i, :len(ids)] = torch.tensor(segs)
        out["attention_mask"][i, :len(ids)] = 1
    return out


class BertForPreTraining(nn.Module):
    """Encoder + MLM head + pooler + NSP head. ``loss(batch)`` = MLM loss (+ NSP loss when the
    batch has ``"nsp_labels"``, 1 = b follows a, 0 = random b). Without NSP this is
    Hugging Face's ``BertForMaskedLM``."""

    def __init__(self, config: BertConfig, seed: int | None = 0, device: str | torch.device | None = None):
        super().__init__()
        self.config = config
        self.encoder = BertEncoder(config, seed=None)
        self.mlm = MLMHead(config, self.encoder.embeddings.tok)
        self.pooler = Pooler(config.d_model)
        self.nsp = nn.Linear(config.d_model, 2)
        if seed is not None:
            torch.manual_seed(seed)
            init_weights(self)
            nn.init.zeros_(self.mlm.decoder.bias)
        if device is not None:
            self.to(get_device(device))

    def num_parameters(self) -> int:
        return count_parameters(self)

    def forward(self, ids, segments=None, attention_mask=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(MLM logits [B, T, V], NSP logits [B, 2])``."""
        h = self.encoder(ids, segments, attention_mask)
        return self.mlm(h), self.nsp(self.pooler(h))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        h = self.encoder(batch["ids"], batch.get("segments"), batch.get("attention_mask"))
        labels = batch["labels"]
        check_like(labels, "labels", batch["ids"])
        chosen = labels != -100  # only the chosen positions go through the output layer
        if not chosen.any():
            raise ValueError("no position of the batch is chosen for MLM (labels all -100); use longer or more rows")
        loss = F.cross_entropy(self.mlm(h[chosen]), labels[chosen])
        if "nsp_labels" in batch:
            loss = loss + F.cross_entropy(self.nsp(self.pooler(h)), batch["nsp_labels"])
        return loss


class BertForSequence(nn.Module):
    """A label (or a score) per sentence or sentence pair from a pooled encoder vector.

    ``pooling="cls"`` uses the tanh pooler on ``[CLS]`` (BERT's way), ``"mean"`` the mean of the
    real tokens. ``n_out=1`` with float labels is regression (MSE), else cross-entropy.
    """

    def __init__(self, encoder: BertEncoder, n_out: int, pooling: str = "cls", pooler: Pooler | None = None,
                 seed: int = 0):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', got {pooling!r}")
        check_int(n_out, "n_out")
        self.encoder, self.pooling = encoder, pooling
        d = encoder.config.d_model
        torch.manual_seed(seed)
        self.pooler = pooler if pooler is not None else Pooler(d)
        self.drop = nn.Dropout(encoder.config.dropout)
        self.head = nn.Linear(d, n_out)
        init_weights(self.head)
        if pooler is None:
            init_weights(self.pooler)
        self.to(next(encoder.parameters()).device)  # beside the pre-trained encoder

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        h = self.encoder(batch["ids"], batch.get("segments"), batch.get("attention_mask"))
        v = self.pooler(h) if self.pooling == "cls" else mean_pool(h, batch.get("attention_mask"))
        return self.head(self.drop(v))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        out, y = self(batch), batch["labels"]
        return F.mse_loss(out.squeeze(-1), y.float()) if y.is_floating_point() else F.cross_entropy(out, y)


class BertForTokens(nn.Module):
    """A label per token (tagging: POS, chunks, NER); labels of -100 (padding, ``[CLS]``,
    word-piece continuations) are ignored."""

    def __init__(self, encoder: BertEncoder, n_labels: int, seed: int = 0):
        super().__init__()
        check_int(n_labels, "n_labels")
        self.encoder = encoder
        self.drop = nn.Dropout(encoder.config.dropout)
        torch.manual_seed(seed)
        self.head = nn.Linear(encoder.config.d_model, n_labels)
        init_weights(self.head)
        self.head.to(next(encoder.parameters()).device)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.drop(self.encoder(batch["ids"], batch.get("segments"), batch.get("attention_mask"))))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        check_like(batch["labels"], "labels", batch["ids"])  # one label per token (-100: ignored)
        out = self(batch)
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), batch["labels"].reshape(-1), ignore_index=-100)
