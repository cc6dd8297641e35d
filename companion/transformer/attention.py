"""Attention, built up in the order the field found it, and the masks that say who sees whom.

1. :class:`AdditiveAttention` -- Bahdanau, Cho & Bengio (2015): a small MLP scores each
   (query, key) pair, ``v^T tanh(W q + U k)``.
2. :func:`dot_product_attention` -- Luong et al. (2015): the score is simply ``q . k``.
3. :func:`scaled_dot_product_attention` -- Vaswani et al. (2017): ``q . k / sqrt(d)``, so that
   the softmax does not saturate as the dimension grows.
4. :class:`MultiHeadAttention` -- several scaled dot-product attentions side by side, each in
   its own learned subspace; the one the GPT and BERT models use.

Masks are boolean matrices ``[..., T_query, T_key]``: ``True`` means "this query may attend to
this key" -- the convention of :func:`torch.nn.functional.scaled_dot_product_attention`
(SDPA), which a test proves our explicit code equals for every mask below. Training calls SDPA
(a fused kernel); the explicit code is there to read and to return the attention weights.

* :func:`causal_mask` (GPT), :func:`bidirectional_mask` (BERT), :func:`padding_mask` (batches
  of unequal lengths), :func:`prefix_lm_mask` (UniLM: bidirectional over a prefix, causal
  after it); :func:`draw_mask` draws one.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

# ---------------------------------------------------------------------------------------- masks


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``[T, T]``: position i sees positions ``0..i`` (a left-to-right language model)."""
    _check_len(T)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def bidirectional_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``[T, T]`` all ``True``: every position sees every position (BERT's encoder)."""
    _check_len(T)
    return torch.ones(T, T, dtype=torch.bool, device=device)


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """``[B, T, T]`` from a ``[B, T]`` 1/0 (or bool) mask of real tokens: no query sees a pad key.

    Rows of padding positions still see the real keys, so no row is empty (an empty row would
    make the softmax 0/0). Combine with another mask by ``&``.
    """
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must be [batch, length], got shape {tuple(attention_mask.shape)}")
    keys = attention_mask.bool()
    if not keys.any(dim=1).all():
        raise ValueError("a sequence in the batch has no real token (its attention_mask row is all 0)")
    T = keys.shape[1]
    return keys[:, None, :].expand(-1, T, -1)


def prefix_lm_mask(T: int, prefix_len: int | torch.Tensor, device: torch.device | str | None = None) -> torch.Tensor:
    """UniLM's sequence-to-sequence mask: the first ``prefix_len`` positions see each other
    (bidirectional), later positions see the prefix and their own past (causal).

    ``prefix_len`` is an int (``[T, T]`` result) or a ``[B]`` tensor (``[B, T, T]``).
    """
    _check_len(T)
    i = torch.arange(T, device=device)
    causal = i[None, :] <= i[:, None]
    if isinstance(prefix_len, torch.Tensor):
        p = prefix_len.to(device=device).view(-1, 1, 1)
        return causal[None] | (i[None, None, :] < p)
    if not isinstance(prefix_len, int) or not 0 <= prefix_len <= T:
        raise ValueError(f"prefix_len must be an int in [0, {T}], got {prefix_len!r}")
    return causal | (i[None, :] < prefix_len)


def draw_mask(mask: torch.Tensor, ax=None, title: str | None = None, labels: list[str] | None = None):
    """Draw a ``[T, T]`` boolean mask: rows are queries, columns keys, dark = may attend."""
    from ..plot import _figure_and_axes

    m = mask.detach().cpu()
    if m.dim() != 2:
        raise ValueError(f"draw_mask draws one [T, T] matrix, got shape {tuple(m.shape)}; index the batch first")
    fig, ax = _figure_and_axes(ax, (2.6, 2.6))
    ax.imshow(m.float().numpy(), cmap="Greys", vmin=0, vmax=1)
    T = m.shape[0]
    ticks = list(range(T))
    ax.set_xticks(ticks, labels or ticks, fontsize=7, rotation=90 if labels else 0)
    ax.set_yticks(ticks, labels or ticks, fontsize=7)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def _check_len(T: int) -> None:
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"sequence length must be a positive int, got {T!r}")


# ----------------------------------------------------------------------------- attention functions


def attend(scores: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None, dropout_p: float = 0.0,
           training: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax the ``[..., Tq, Tk]`` scores over the keys (masked keys get -inf) and average
    the values: ``(output [..., Tq, d_v], weights [..., Tq, Tk])``."""
    if mask is not None:
        if mask.dtype != torch.bool:
            raise TypeError(f"masks are boolean (True = may attend), got dtype {mask.dtype}")
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if dropout_p > 0 and training:
        weights = F.dropout(weights, dropout_p)
    return weights @ v, weights


def dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                          mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Luong's dot-product attention: ``softmax(q k^T) v``; returns ``(output, weights)``."""
    return attend(q @ k.transpose(-2, -1), v, mask)


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None, dropout_p: float = 0.0,
                                 training: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Vaswani et al.'s attention, ``softmax(q k^T / sqrt(d)) v``, written out.

    With q and k of unit-variance entries, ``q . k`` has variance d; dividing by ``sqrt(d)``
    keeps the scores at unit scale whatever the head size, so the softmax stays soft.
    Equals ``F.scaled_dot_product_attention(q, k, v, attn_mask=mask)`` (tested).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return attend(scores, v, mask, dropout_p, training)


class AdditiveAttention(nn.Module):
    """Bahdanau attention: ``score(q, k) = v^T tanh(W q + U k)``, a one-hidden-layer MLP.

    It was designed for an RNN decoder state (the query) reading encoder states (the keys,
    which are also the values). It costs a ``[Tq, Tk, hidden]`` tensor, where dot-product
    attention needs only ``[Tq, Tk]`` -- one reason the Transformer chose the dot product.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int):
        super().__init__()
        self.W = nn.Linear(d_query, d_hidden, bias=False)
        self.U = nn.Linear(d_key, d_hidden, bias=True)
        self.v = nn.Linear(d_hidden, 1, bias=False)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``q [..., Tq, d_query]``, ``k [..., Tk, d_key]``, ``v [..., Tk, d_v]``."""
        hidden = torch.tanh(self.W(q).unsqueeze(-2) + self.U(k).unsqueeze(-3))  # [..., Tq, Tk, h]
        return attend(self.v(hidden).squeeze(-1), v, mask)


# --------------------------------------------------------------------------------- multi-head


@dataclass
class KVCache:
    """Keys and values of the positions seen so far, one preallocated buffer per layer.

    Generation then feeds one new token per step: its query attends to the cached keys, so a
    step costs O(T) instead of re-running the whole O(T^2) prefix.
    """

    k: list[torch.Tensor]
    v: list[torch.Tensor]
    length: int = 0

    @classmethod
    def empty(cls, n_layer: int, batch: int, n_head: int, max_len: int, head_dim: int,
              device=None, dtype=torch.float32) -> KVCache:
        shape = (batch, n_head, max_len, head_dim)
        return cls([torch.zeros(shape, device=device, dtype=dtype) for _ in range(n_layer)],
                   [torch.zeros(shape, device=device, dtype=dtype) for _ in range(n_layer)])

    @property
    def max_len(self) -> int:
        return self.k[0].shape[2]

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new ``[B, H, t, hd]`` keys/values after the cached ones; return all so far.
        (The caller advances ``length`` once per forward pass, after the last layer.)"""
        start, end = self.length, self.length + k.shape[2]
        if end > self.max_len:
            raise ValueError(f"KV cache holds {self.max_len} positions; cannot add up to {end}")
        K, V = self.k[layer], self.v[layer]
        K.narrow(2, start, end - start).copy_(k)  # narrow: one view op where [:, :, a:b] is three
        V.narrow(2, start, end - start).copy_(v)
        return K.narrow(2, 0, end), V.narrow(2, 0, end)


def _fast_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
               dropout_p: float, causal: bool) -> torch.Tensor:
    """torch's fused attention (equal to ours, tested). On the CPU under bf16 autocast it attends
    in fp32: torch's CPU flash attention is ~3x slower in bf16 than in fp32 (measured in
    benchmarks/bench_transformer.py's step)."""
    low = q.device.type == "cpu" and q.dtype == torch.bfloat16
    with torch.autocast("cpu", enabled=False) if low else contextlib.nullcontext():
        if low:
            q, k, v = q.float(), k.float(), v.float()
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=causal)
    return y.to(torch.bfloat16) if low else y


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with one fused q/k/v projection (``qkv``) and an output
    projection (``proj``).

    ``forward(x, mask=None, causal=False, cache=None, layer=0)``: ``mask`` is a boolean
    ``[Tq, Tk]`` or ``[B, Tq, Tk]`` matrix (True = may attend); ``causal=True`` asks SDPA for its
    built-in causal mask (faster than passing the matrix). ``use_sdpa=False`` runs our explicit
    :func:`scaled_dot_product_attention` and keeps the weights in ``self.last_weights`` (for the
    chapter's attention maps).
    """

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model={d_model} must be divisible by n_head={n_head}")
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = dropout
        self.use_sdpa = True
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4)
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.update(layer, k, v)
        if causal and past > 0:  # new queries sit at positions past..past+T-1 of the keys
            # one new token may see everything cached: no mask to build (generation's hot loop)
            mask, causal = (None if T == 1 else causal_mask(past + T, x.device)[past:]), False
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]  # one mask for all heads
        p = self.dropout if self.training else 0.0
        if self.use_sdpa:
            y = _fast_sdpa(q, k, v, mask, p, causal)
        else:
            if causal:
                mask = causal_mask(T, x.device)
            y, w = scaled_dot_product_attention(q, k, v, mask, p, self.training)
            self.last_weights = w.detach()
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
