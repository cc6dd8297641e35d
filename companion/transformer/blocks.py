"""The Transformer block and the position encodings, shared by :mod:`.gpt` and :mod:`.bert`.

A block is attention followed by a position-wise MLP, each wrapped in a residual connection
and a layer norm. Where the norm sits is the one real difference between the generations:

* **post-LN** (Vaswani et al. 2017, BERT, GPT-1): ``x = LN(x + Attn(x))``, then
  ``x = LN(x + MLP(x))``. The residual stream is normalised after every sub-layer.
* **pre-LN** (GPT-2 onwards): ``x = x + Attn(LN(x))``, ``x = x + MLP(LN(x))``, and one final
  LN after the last block. The residual path is an identity from input to output, which keeps
  gradients well scaled in deep stacks and lets training skip the learning-rate warm-up.

Positions: the Transformer has no notion of order, so each token gets a position vector added.
:class:`SinusoidalPositions` is the paper's fixed ``sin/cos`` table (it extends to any length);
learned positions (GPT, BERT) are just an ``nn.Embedding`` over position indices.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_finite, check_optional_size, check_rate
from .attention import KVCache, MultiHeadAttention

ACTIVATIONS = ("gelu", "gelu_tanh", "relu")
POSITIONS = ("learned", "sinusoidal")


def check_config(owner: str, c, sizes: tuple[str, ...], special: tuple[str, ...] = ()) -> None:
    """What a GPT, BERT or encoder-decoder config must hold: positive int ``sizes``, ``d_model``
    divisible by ``n_head``, ``d_ff`` (None = ``4 * d_model``; 0 or a negative size is refused),
    dropout rates in [0, 1], a known activation and position kind, a positive LayerNorm epsilon,
    and ``special`` ids inside the vocabulary. Raises ``ValueError`` naming ``owner.field``."""
    for name in sizes:
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{owner}.{name} must be a positive int, got {v!r}")
    if c.d_model % c.n_head:
        raise ValueError(f"d_model={c.d_model} must be divisible by n_head={c.n_head}")
    check_optional_size(c.d_ff, f"{owner}.d_ff", "4 * d_model")
    check_rate(c.dropout, f"{owner}.dropout")
    if getattr(c, "attn_dropout", None) is not None:
        check_rate(c.attn_dropout, f"{owner}.attn_dropout")
    if c.activation not in ACTIVATIONS:
        raise ValueError(f"{owner}.activation must be one of {ACTIVATIONS}, got {c.activation!r}")
    if c.positions not in POSITIONS:
        raise ValueError(f"{owner}.positions must be one of {POSITIONS}, got {c.positions!r}")
    if c.positions == "sinusoidal" and c.d_model % 2:
        raise ValueError(f"{owner}: sinusoidal positions need an even d_model, got d_model={c.d_model}")
    check_finite(c.ln_eps, f"{owner}.ln_eps")
    if c.ln_eps == 0:
        raise ValueError(f"{owner}.ln_eps must be > 0, got 0")
    for name in special:
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < c.vocab_size:
            raise ValueError(f"{owner}.{name}={v!r} is outside the vocabulary (size {c.vocab_size}); "
                             f"expected an int id in [0, {c.vocab_size})")


class MLP(nn.Module):
    """Position-wise feed-forward network ``W2 act(W1 x)`` with ``d_ff`` hidden units.

    ``gelu`` is the exact erf form (BERT); ``gelu_tanh`` its tanh approximation (GPT-1/2, computed
    by one fused kernel); ``relu`` the original Transformer's.
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "gelu", dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is unknown; use one of {ACTIVATIONS}")
        self.fc = nn.Linear(d_model, d_ff, bias=bias)
        self.proj = nn.Linear(d_ff, d_model, bias=bias)
        self.activation = activation
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(activate(self.fc(x), self.activation)))


def activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    """One of :data:`ACTIVATIONS` applied to ``h``: the MLP's and the heads' (BERT's MLM transform,
    ELECTRA's discriminator) so that a config's ``activation`` reaches every layer HF applies it in."""
    if activation == "relu":
        return F.relu(h)
    return F.gelu(h, approximate="tanh" if activation == "gelu_tanh" else "none")


class Activation(nn.Module):
    """:func:`activate` as a module (no parameters), for ``nn.Sequential`` heads."""

    def __init__(self, activation: str = "gelu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is unknown; use one of {ACTIVATIONS}")
        self.activation = activation

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return activate(h, self.activation)

    def extra_repr(self) -> str:
        return self.activation


class Block(nn.Module):
    """One Transformer layer: self-attention + MLP, post-LN (``pre_ln=False``) or pre-LN."""

    def __init__(self, d_model: int, n_head: int, d_ff: int, *, pre_ln: bool, dropout: float = 0.0,
                 attn_dropout: float = 0.0, activation: str = "gelu", ln_eps: float = 1e-5, bias: bool = True):
        super().__init__()
        self.pre_ln = pre_ln
        self.ln_1 = nn.LayerNorm(d_model, eps=ln_eps, bias=bias)
        self.attn = MultiHeadAttention(d_model, n_head, attn_dropout, bias)
        self.ln_2 = nn.LayerNorm(d_model, eps=ln_eps, bias=bias)
        self.mlp = MLP(d_model, d_ff, activation, dropout, bias)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        if self.pre_ln:
            x = x + self.drop(self.attn(self.ln_1(x), mask, causal, cache, layer))
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.drop(self.attn(x, mask, causal, cache, layer)))
        return self.ln_2(x + self.mlp(x))


class SinusoidalPositions(nn.Module):
    """Vaswani et al.'s fixed encodings: ``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(...)``.

    Each pair of dimensions is a rotation at its own frequency, so ``PE[p + k]`` is a linear
    function of ``PE[p]`` -- relative offsets are easy for attention to read. Called like an
    ``nn.Embedding`` on position indices.
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        if d_model % 2:
            raise ValueError(f"sinusoidal positions need an even d_model, got {d_model}")
        pos = torch.arange(max_len, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq)
        self.register_buffer("table", table, persistent=False)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.table[positions]


def position_embedding(kind: str, max_len: int, d_model: int) -> nn.Module:
    """``"learned"`` (an ``nn.Embedding``) or ``"sinusoidal"`` (:class:`SinusoidalPositions`)."""
    if kind == "learned":
        return nn.Embedding(max_len, d_model)
    if kind == "sinusoidal":
        return SinusoidalPositions(max_len, d_model)
    raise ValueError(f"positions must be 'learned' or 'sinusoidal', got {kind!r}")


def init_weights(module: nn.Module, std: float = 0.02) -> None:
    """GPT/BERT initialisation: N(0, 0.02) for linear and embedding weights, zero biases, unit LN."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, std)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


def count_parameters(module: nn.Module) -> int:
    """Distinct trainable parameters (a tied matrix counts once)."""
    return sum(p.numel() for p in {id(p): p for p in module.parameters() if p.requires_grad}.values())


@torch.no_grad()
def attention_weights(model: nn.Module, *args, **kwargs) -> list[torch.Tensor]:
    """Run ``model(*args, **kwargs)`` through our explicit attention and return every layer's
    weights, ``[B, n_head, T, T]`` each (for attention maps: which heads attend where)."""
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    if not layers:
        raise ValueError(f"{type(model).__name__} has no MultiHeadAttention layer")
    was_training = model.training
    model.eval()
    try:
        for m in layers:
            m.use_sdpa, m.last_weights = False, None
        model(*args, **kwargs)
        return [m.last_weights for m in layers]
    finally:
        for m in layers:
            m.use_sdpa = True
        model.train(was_training)
