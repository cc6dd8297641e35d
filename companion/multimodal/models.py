"""Single-stream and two-stream vision-language Transformers (chapter 12b).

Both read the same inputs -- caption token ids ``text [B, T]`` and regions (features
``[B, R, F]``, boxes ``[B, R, 5]``, a mask ``[B, R]`` of real regions) -- and return the text
states ``[B, T, d]``, the region states ``[B, R, d]`` and a pooled vector ``[B, d]`` for
image-text matching. The heads of the three objectives are shared code (:class:`_Heads`).

* :class:`SingleStream` (VisualBERT, VL-BERT, UNITER): one Transformer over
  ``[words; regions]``; every layer lets a word attend to regions and words alike. The pooled
  vector is the ``[CLS]`` state.
* :class:`TwoStream` (ViLBERT, LXMERT): a text stream and a visual stream with their own
  weights; in every layer each stream first queries the other (co-attention: queries from one
  modality, keys and values from the other), then attends to itself. The pooled vector is the
  element-wise product of the ``[CLS]`` state and the mean region state, as in ViLBERT.

With ``n_visual_words > 0`` the regions are read as discrete **visual words** (VideoBERT):
``regions`` is then ``[B, R]`` integer ids, embedded by a table, instead of features.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from ..transformer.attention import scaled_dot_product_attention
from ..transformer.blocks import Block, count_parameters, init_weights
from . import scenes as sc

TEXT_TYPE, REGION_TYPE = 0, 1


@dataclass(frozen=True)
class MultimodalConfig:
    """Sizes of a single- or two-stream model.

    Attributes:
        d_model, n_head: width and heads (``d_model`` divisible by ``n_head``).
        n_layer: Transformer layers (single stream) or co-attention layers (two stream).
        d_ff: MLP width (``None``: ``4 * d_model``).
        vocab_size, text_len: caption vocabulary and length.
        feature_dim: numbers per region feature; max_regions: regions per scene.
        n_classes: region classes for masked region classification.
        n_visual_words: > 0 reads regions as visual-word ids (VideoBERT); 0 reads features.
        dropout: dropout rate.
    """

    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    d_ff: int | None = None
    vocab_size: int = len(sc.VOCAB)
    text_len: int = sc.TEXT_LEN
    feature_dim: int = 3 * 8 * 8
    max_regions: int = 3
    n_classes: int = sc.N_CLASSES
    n_visual_words: int = 0
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for name in ("d_model", "n_head", "n_layer", "vocab_size", "text_len", "feature_dim",
                     "max_regions", "n_classes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"MultimodalConfig.{name} must be a positive int, got {v!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"MultimodalConfig: d_model={self.d_model} must be divisible by "
                             f"n_head={self.n_head}")
        if self.d_ff is not None and (not isinstance(self.d_ff, int) or self.d_ff < 1):
            raise ValueError(f"MultimodalConfig.d_ff must be a positive int or None, got {self.d_ff!r}")
        if not isinstance(self.n_visual_words, int) or self.n_visual_words < 0:
            raise ValueError(f"MultimodalConfig.n_visual_words must be an int >= 0, got "
                             f"{self.n_visual_words!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"MultimodalConfig.dropout must be in [0, 1), got {self.dropout!r}")

    @property
    def ff(self) -> int:
        return 4 * self.d_model if self.d_ff is None else self.d_ff

    @property
    def visual_mask_id(self) -> int:
        """The id of a masked visual word (one past the last cluster)."""
        return self.n_visual_words


class _Embeddings(nn.Module):
    """Words: token + position + type 0. Regions: projected feature (or visual-word embedding)
    + projected box + type 1. Each followed by LayerNorm."""

    def __init__(self, c: MultimodalConfig):
        super().__init__()
        self.c = c
        d = c.d_model
        self.tok = nn.Embedding(c.vocab_size, d)
        self.pos = nn.Embedding(c.text_len, d)
        self.type_emb = nn.Embedding(2, d)
        if c.n_visual_words:
            self.visual = nn.Embedding(c.n_visual_words + 1, d)  # + the [MASK] visual word
        else:
            self.visual = nn.Linear(c.feature_dim, d)
        self.box = nn.Linear(sc.BOX_DIM, d)
        self.ln_text, self.ln_region = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, text, regions, boxes):
        T = text.shape[1]
        pos = torch.arange(T, device=text.device)
        t = self.tok(text) + self.pos(pos) + self.type_emb.weight[TEXT_TYPE]
        v = self.visual(regions) + self.box(boxes) + self.type_emb.weight[REGION_TYPE]
        return self.ln_text(t), self.ln_region(v)


class _Heads(nn.Module):
    """The objectives' heads and the input checks both models share."""

    def _build_heads(self, c: MultimodalConfig) -> None:
        d = c.d_model
        self.mlm_head = nn.Linear(d, c.vocab_size)
        n_out = c.n_visual_words if c.n_visual_words else c.n_classes
        self.region_cls_head = nn.Linear(d, n_out)  # masked region (or visual word) class
        self.region_feat_head = nn.Linear(d, c.feature_dim)  # masked region feature regression
        self.itm_head = nn.Linear(d, 2)

    def _check(self, text, regions, boxes, region_mask) -> None:
        c = self.config
        if not isinstance(text, torch.Tensor) or text.dim() != 2 or text.dtype != torch.long:
            raise ValueError(f"text must be a LongTensor [B, T], got "
                             f"{getattr(text, 'dtype', type(text))} {tuple(getattr(text, 'shape', ()))}")
        B, T = text.shape
        if T > c.text_len:
            raise ValueError(f"text has {T} tokens; the model reads at most text_len={c.text_len}")
        if int(text.min()) < 0 or int(text.max()) >= c.vocab_size:
            raise ValueError(f"text ids must be in [0, {c.vocab_size}), got {int(text.min())}..{int(text.max())}")
        want = (B, region_mask.shape[1]) if c.n_visual_words else (B, region_mask.shape[1], c.feature_dim)
        if not isinstance(regions, torch.Tensor) or tuple(regions.shape) != want:
            raise ValueError(f"regions must have shape {want} "
                             f"({'visual-word ids' if c.n_visual_words else 'features'}), "
                             f"got {tuple(getattr(regions, 'shape', ()))}")
        if c.n_visual_words and (regions.dtype != torch.long or int(regions.min()) < 0
                                 or int(regions.max()) > c.n_visual_words):
            raise ValueError(f"visual-word ids must be longs in [0, {c.n_visual_words}]")
        if tuple(boxes.shape) != (B, region_mask.shape[1], sc.BOX_DIM):
            raise ValueError(f"boxes must have shape {(B, region_mask.shape[1], sc.BOX_DIM)}, "
                             f"got {tuple(boxes.shape)}")
        if region_mask.dtype != torch.bool or region_mask.shape[0] != B:
            raise ValueError(f"region_mask must be a bool tensor [B={B}, R], got "
                             f"{region_mask.dtype} {tuple(region_mask.shape)}")
        if region_mask.shape[1] > c.max_regions:
            raise ValueError(f"{region_mask.shape[1]} regions; the model reads at most "
                             f"max_regions={c.max_regions}")

    def n_parameters(self) -> int:
        """Trainable parameters (the heads included)."""
        return count_parameters(self)


class SingleStream(_Heads):
    """One Transformer over ``[CLS] words [SEP]`` followed by the regions (VisualBERT-style).

    Attention is full between the two modalities from the first layer; padding regions are
    masked out as keys. Pre-LN blocks from :mod:`companion.transformer.blocks`."""

    def __init__(self, config: MultimodalConfig = MultimodalConfig(), device=None):
        super().__init__()
        self.config = c = config
        self.emb = _Embeddings(c)
        self.blocks = nn.ModuleList(Block(c.d_model, c.n_head, c.ff, pre_ln=True, dropout=c.dropout)
                                    for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.d_model)
        self._build_heads(c)
        init_weights(self)
        if device is not None:
            self.to(device)

    def forward(self, text, regions, boxes, region_mask):
        """Returns ``(text_states [B, T, d], region_states [B, R, d], pooled [B, d])``."""
        self._check(text, regions, boxes, region_mask)
        t, v = self.emb(text, regions, boxes)
        T = t.shape[1]
        x = torch.cat([t, v], dim=1)
        keys = torch.cat([torch.ones_like(text, dtype=torch.bool), region_mask], dim=1)
        mask = keys[:, None, :].expand(-1, x.shape[1], -1)
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln_f(x)
        return x[:, :T], x[:, T:], x[:, 0]


class CrossAttention(nn.Module):
    """Multi-head attention whose queries come from ``x`` and keys and values from ``y``: the
    co-attention of ViLBERT and the cross-modality attention of LXMERT. Keeps its last weights
    (``last_weights [B, H, Tx, Ty]``) for the chapter's maps."""

    def __init__(self, d_model: int, n_head: int):
        super().__init__()
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.last_weights: torch.Tensor | None = None

    def forward(self, x, y, key_mask=None):
        """``x [B, Tx, d]`` attends to ``y [B, Ty, d]``; ``key_mask [B, Ty]`` (True = real).
        A row with no real key gets a zero output."""
        B, Tx, C = x.shape
        Ty = y.shape[1]
        q = self.q(x).view(B, Tx, self.n_head, self.head_dim).transpose(1, 2)
        k, v = self.kv(y).view(B, Ty, 2, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4)
        mask = None if key_mask is None else key_mask[:, None, None, :]
        out, w = scaled_dot_product_attention(q, k, v, mask)
        if key_mask is not None:
            out = out * key_mask.any(dim=1).to(out.dtype)[:, None, None, None]
        self.last_weights = w.detach()
        return self.proj(torch.nan_to_num(out).transpose(1, 2).reshape(B, Tx, C))


class CoLayer(nn.Module):
    """One two-stream layer (LXMERT's order): cross-attention each way, from the states both
    streams had before it, then each stream's own self-attention + MLP block."""

    def __init__(self, c: MultimodalConfig):
        super().__init__()
        d = c.d_model
        self.ln_t, self.ln_v = nn.LayerNorm(d), nn.LayerNorm(d)
        self.text_from_vision = CrossAttention(d, c.n_head)
        self.vision_from_text = CrossAttention(d, c.n_head)
        self.text_block = Block(d, c.n_head, c.ff, pre_ln=True, dropout=c.dropout)
        self.vision_block = Block(d, c.n_head, c.ff, pre_ln=True, dropout=c.dropout)

    def forward(self, t, v, region_mask):
        tn, vn = self.ln_t(t), self.ln_v(v)
        t = t + self.text_from_vision(tn, vn, region_mask)
        v = v + self.vision_from_text(vn, tn)
        t = self.text_block(t)
        vmask = region_mask[:, None, :].expand(-1, v.shape[1], -1)
        vmask = vmask | ~region_mask.any(dim=1)[:, None, None]  # no region: no NaN rows
        return t, self.vision_block(v, vmask)


class TwoStream(_Heads):
    """A text stream and a visual stream joined by co-attention layers (ViLBERT/LXMERT-style).

    A word's state depends on the image only through ``text_from_vision`` (tested: zero its
    output projection and the text states no longer change with the regions)."""

    def __init__(self, config: MultimodalConfig = MultimodalConfig(), device=None):
        super().__init__()
        self.config = c = config
        self.emb = _Embeddings(c)
        self.layers = nn.ModuleList(CoLayer(c) for _ in range(c.n_layer))
        self.ln_t, self.ln_v = nn.LayerNorm(c.d_model), nn.LayerNorm(c.d_model)
        self._build_heads(c)
        init_weights(self)
        if device is not None:
            self.to(device)

    def forward(self, text, regions, boxes, region_mask):
        """Returns ``(text_states [B, T, d], region_states [B, R, d], pooled [B, d])``."""
        self._check(text, regions, boxes, region_mask)
        t, v = self.emb(text, regions, boxes)
        for layer in self.layers:
            t, v = layer(t, v, region_mask)
        t, v = self.ln_t(t), self.ln_v(v)
        m = region_mask.to(v.dtype)[..., None]
        v_mean = (v * m).sum(1) / m.sum(1).clamp(min=1.0)
        return t, v, t[:, 0] * v_mean


ARCHITECTURES = {"single": SingleStream, "two": TwoStream}


def build(kind: str, config: MultimodalConfig, device=None) -> _Heads:
    """``"single"`` or ``"two"`` stream model of ``config``, on ``device``."""
    if kind not in ARCHITECTURES:
        raise ValueError(f"kind must be one of {tuple(ARCHITECTURES)}, got {kind!r}")
    return ARCHITECTURES[kind](config, device=device)


def matched_single(two: MultimodalConfig, n_layer: int | None = None) -> MultimodalConfig:
    """A single-stream config with as many parameters as the two-stream ``two``: the same width,
    ``n_layer`` layers (default ``2 * two.n_layer + 1``) and the MLP width solved for the
    count (rounded; the counts then differ by well under 1 %)."""
    L = 2 * two.n_layer + 1 if n_layer is None else n_layer
    target = count_parameters(TwoStream(two))
    base = replace(two, n_layer=L, d_ff=1)
    n1 = count_parameters(SingleStream(base))
    per_ff = L * (2 * two.d_model + 1)  # each unit of d_ff: one row in, one column out, a bias
    d_ff = max(1, round((target - n1) / per_ff) + 1)
    return replace(two, n_layer=L, d_ff=d_ff)
