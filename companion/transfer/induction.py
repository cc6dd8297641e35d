"""In-context learning where it is born: induction heads in a 2-layer attention-only Transformer.

Chapter 10b's positive anchor. Large language models do better on a token the more context they
have seen; Olsson et al. (2022, "In-context Learning and Induction Heads") traced most of that to
*induction heads*: a pair of attention heads in two layers that, at a token ``A``, find the
earlier occurrences of ``A`` and copy the token that followed them (``[A][B] ... [A] -> [B]``).
The first head (layer 1, a *previous-token head*) writes into every position which token came
before it; the second (layer 2) matches its query, the current token, against those keys
(K-composition, Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits") and
copies the value. The heads form abruptly, in a *phase change*, and the model's in-context
learning appears at the same step.

This file rebuilds the experiment small enough for a CPU:

* :class:`AttnOnly` -- token and position embeddings, ``n_layer`` attention-only layers (no MLP),
  an unembedding; every head's attention pattern can be read and any head ablated (zero or mean);
* data: :func:`repeated_segments` (a random segment repeated inside random filler, at a random
  offset, so no fixed-offset head can copy it), :func:`kv_sequences` (a new random key->value
  mapping per sequence, bursty or uniform, Chan et al. 2022, "Data Distributional Properties Drive
  Emergent In-Context Learning in Transformers") and :func:`kv_episodes` (``k`` shown pairs and a
  query key, for the few-shot curve);
* measurements: :func:`icl_score` (the loss late in the context minus the loss early in it,
  Olsson et al.'s definition scaled to our length), :func:`induction_scores` and
  :func:`previous_token_scores` of every head, :func:`ablation` and :func:`k_curve`;
* :func:`train` (the book's one loop, :func:`companion.train.fit`, with the scores tracked every
  few steps) and :func:`run_anchor` (the whole experiment at one scale);
* plots: :func:`draw_phase_change`, :func:`draw_heads`, :func:`draw_k_curve`.

Vocabulary layout: ids ``[0, n_keys)`` are keys, ``[n_keys, n_keys + n_values)`` values; random
segments draw from the whole vocabulary.

Two things in the design matter, and both were learned by getting them wrong. (1) The distance
between the copies of a repeated segment must vary widely: with a first copy near the start and a
second near the middle (offsets of 14-18 tokens in 32), layer-1 heads learned to look a fixed
distance back and scored as "induction heads" on a probe with a fixed offset; the probe of
:class:`EvalSet` now uses random offsets too. (2) A cheaper solution comes first: a layer-1 head
that spreads its attention over the context and copies any token seen there lowers the loss on a
repeated segment to about ``log L`` (the segment's ``L`` distinct tokens) and already makes the ICL
score strongly negative. Only an induction head takes the loss below that; the ablation of the
layer-2 heads, not the ICL score alone, says which of the two a model has learned.

At laptop size (``benchmarks/ch10b_induction.py``, seeds 0-2, stored in ``induction_results.json``)
the repeat loss falls from ~3.6 to ~0.48 nats, below the copying floor, in two stages: copying
down to the floor (the ICL score half-way by step 900-1,200), then the circuit's phase change
(the repeat loss below half the floor by step 2,300-2,400, :func:`circuit_step`). Because every period is at least ``seg_len // 2`` = 5 tokens, the circuit found
is a shifted one: the layer-1 heads look a fixed distance back (seed 0: 4 and 5 tokens, not 1),
and the layer-2 head attends to the position 4 after the token that followed the previous occurrence; there the
5-back head has written the current token (the key it matches) and the 4-back head the token to
copy (the value). :func:`induction_scores` (Olsson et al.'s exact target) does not credit that
shift, so the head scores stay low (~0.17) while the ablation of that layer-2 head costs 1.9-3.9
nats on repeats; :func:`attention_offsets` shows both offsets. Draw periods from 2 to make the
previous-token circuit the only one that works.

Chapter 10c reads the circuit with :func:`attention_offsets` / :func:`draw_offsets`,
:func:`ablation_grid` / :func:`carrier`, :func:`draw_circuit` (the model's diagram), and the
stored seeds with :func:`load_results` / :func:`seed_effects` / :func:`spread`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_ids, check_int
from ..device import get_device
from ..scale import pick
from ..train import TrainConfig, fit

ABLATIONS = ("zero", "mean")
KINDS = ("mix", "repeat", "bursty", "uniform")
ICL_EARLY, ICL_LATE = 0.1, 0.9  # Olsson et al.: token 50 and token 500 of 512, as fractions


# ------------------------------------------------------------------------------------ config


@dataclass
class InductionConfig:
    """Sizes of the model, the data and the run (defaults: the ``laptop`` anchor).

    ``seq_len`` counts the tokens of one training sequence (the model reads ``seq_len - 1`` and
    predicts the next of each). ``seg_len`` is the repeated segment's length; ``burst_keys`` the
    number of distinct keys in a bursty key->value sequence (uniform sequences draw from all
    ``n_keys``). ``mix`` is the fraction of repeated-segment sequences in a training batch (the
    rest are key->value sequences).
    """

    n_keys: int = 16
    n_values: int = 16
    seq_len: int = 32
    seg_len: int = 10
    burst_keys: int = 4
    d_model: int = 64
    n_head: int = 2
    n_layer: int = 2
    layer_norm: bool = True
    batch_size: int = 16
    steps: int = 4000
    arm_steps: int = 500
    lr: float = 1e-2
    warmup: int = 50
    weight_decay: float = 0.01
    eval_every: int = 100
    eval_size: int = 128
    mix: float = 0.75
    ks: tuple[int, ...] = (0, 1, 2, 4, 8)
    seed: int = 0

    @property
    def vocab_size(self) -> int:
        return self.n_keys + self.n_values

    def __post_init__(self):
        for name in ("n_keys", "n_values", "seq_len", "seg_len", "burst_keys", "d_model", "n_head", "n_layer",
                     "batch_size", "steps", "arm_steps", "eval_every", "eval_size"):
            check_int(getattr(self, name), f"InductionConfig.{name}")
        check_int(self.warmup, "InductionConfig.warmup", 0)
        check_int(self.seed, "InductionConfig.seed", 0)
        if self.d_model % self.n_head:
            raise ValueError(f"InductionConfig.d_model={self.d_model} must be divisible by n_head={self.n_head}")
        if 2 * self.seg_len + 1 > self.seq_len:
            raise ValueError(f"InductionConfig.seg_len={self.seg_len} is too long: two copies need "
                             f"seq_len >= 2 * seg_len + 1 = {2 * self.seg_len + 1}, got seq_len={self.seq_len}")
        if self.burst_keys > self.n_keys:
            raise ValueError(f"InductionConfig.burst_keys={self.burst_keys} exceeds n_keys={self.n_keys}")
        if not (isinstance(self.lr, numbers.Real) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"InductionConfig.lr must be a positive finite number, got {self.lr!r}")
        if not (isinstance(self.mix, numbers.Real) and 0 <= self.mix <= 1):
            raise ValueError(f"InductionConfig.mix must be a number in [0, 1], got {self.mix!r}")
        self.ks = tuple(self.ks)
        for k in self.ks:
            check_int(k, "InductionConfig.ks (each k)", 0)
        if max(self.ks, default=0) * 2 + 1 > self.seq_len:
            raise ValueError(f"InductionConfig.ks={self.ks}: k={max(self.ks)} pairs and a query need "
                             f"{2 * max(self.ks) + 1} positions, more than seq_len={self.seq_len}")


def config(scale: str | None = None, **overrides) -> InductionConfig:
    """The anchor's sizes at ``scale`` (``companion.scale.pick``), with ``overrides`` applied."""
    sizes = pick(ci={"steps": 400, "arm_steps": 150, "eval_every": 50, "eval_size": 64},
                 laptop={},
                 gpu={"d_model": 128, "n_head": 4, "seq_len": 64, "seg_len": 20, "steps": 10_000,
                      "arm_steps": 5000, "batch_size": 64, "lr": 3e-3, "eval_every": 100, "eval_size": 512},
                 scale=scale)
    return InductionConfig(**{**sizes, **overrides})


# ------------------------------------------------------------------------------------- model


class Attention(nn.Module):
    """Causal multi-head self-attention, written out so that each head can be read and removed.

    ``z^h = softmax(q^h k^hT / sqrt(d_h) + causal) v^h`` per head ``h``; the layer's output is
    ``sum_h z^h W_O^h + b_O`` (one ``out`` projection over the concatenated heads). An ablated
    head's ``z^h`` is replaced by zeros or by its mean over a reference batch before ``out``.
    """

    def __init__(self, d_model: int, n_head: int):
        super().__init__()
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def heads(self, x: torch.Tensor, patterns: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-head outputs ``z [B, H, T, d_h]`` and patterns ``[B, H, T, T]`` (rows: queries).
        ``patterns=False`` runs torch's fused attention (the same numbers, tested; faster to
        train) and returns ``None`` for the patterns."""
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4)
        if not patterns:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True), None
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        pattern = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        return pattern @ v, pattern

    def forward(self, x: torch.Tensor, ablate: dict[int, torch.Tensor | None] | None = None,
                patterns: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(output [B, T, d], z [B, H, T, d_h], pattern [B, H, T, T])``; ``ablate`` maps a head
        to ``None`` (zero it) or to the ``[d_h]`` (or ``[T, d_h]``) vector that replaces its ``z``."""
        z, pattern = self.heads(x, patterns)
        if ablate:
            z = z.clone()
            for h, value in ablate.items():
                z[:, h] = 0.0 if value is None else value
        B, H, T, d = z.shape
        return self.out(z.transpose(1, 2).reshape(B, T, H * d)), z, pattern


class AttnOnly(nn.Module):
    """A Transformer with attention layers only (no MLPs), as in Elhage et al. and Olsson et al.'s
    small models: ``x_0 = W_E[t] + W_P[p]``, ``x_{l+1} = x_l + Attn_l(LN(x_l))``, logits
    ``= W_U LN(x_L)``. Without MLPs every path from input to output is a product of embedding,
    attention and unembedding matrices, which is what makes the heads readable."""

    def __init__(self, config: InductionConfig, seed: int | None = None, device: str | torch.device | None = None):
        super().__init__()
        c = self.config = config
        torch.manual_seed(c.seed if seed is None else seed)
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = nn.Embedding(c.seq_len, c.d_model)
        norm = (lambda: nn.LayerNorm(c.d_model)) if c.layer_norm else nn.Identity
        self.norms = nn.ModuleList(norm() for _ in range(c.n_layer))
        self.layers = nn.ModuleList(Attention(c.d_model, c.n_head) for _ in range(c.n_layer))
        self.norm_f = norm()
        self.unembed = nn.Linear(c.d_model, c.vocab_size, bias=False)
        for p in (self.embed.weight, self.pos.weight):
            nn.init.normal_(p, 0.0, 0.02)
        if device is not None:
            self.to(get_device(device))

    def run(self, ids: torch.Tensor, ablate: dict[tuple[int, int], torch.Tensor | None] | None = None,
            patterns: bool = True) -> tuple[torch.Tensor, list[torch.Tensor | None], list[torch.Tensor]]:
        """``(logits [B, T, V], patterns, z)``: one ``[B, H, T, T]`` pattern and one ``[B, H, T, d_h]``
        head output per layer. ``ablate`` maps ``(layer, head)`` to ``None`` (zero ablation) or
        the vector that replaces the head's output (mean ablation, :func:`head_means`).
        ``patterns=False``: fused attention, no patterns (``None`` each)."""
        check_ids(ids, "ids", self.config.vocab_size)
        if ids.shape[1] > self.config.seq_len:
            raise ValueError(f"ids has {ids.shape[1]} positions; the model has {self.config.seq_len} (seq_len)")
        for layer, head in ablate or {}:
            check_head(self.config, layer, head)
        T = ids.shape[1]
        x = self.embed(ids) + self.pos(torch.arange(T, device=ids.device))
        want, patterns, zs = patterns, [], []
        for i, (norm, attn) in enumerate(zip(self.norms, self.layers)):
            mine = {h: v for (layer, h), v in (ablate or {}).items() if layer == i}
            out, z, pattern = attn(norm(x), mine, want)
            x = x + out
            patterns.append(pattern)
            zs.append(z)
        return self.unembed(self.norm_f(x)), patterns, zs

    def forward(self, ids: torch.Tensor, ablate=None) -> torch.Tensor:
        return self.run(ids, ablate, patterns=False)[0]

    def token_losses(self, ids: torch.Tensor, ablate=None) -> torch.Tensor:
        """``[B, T-1]``: the cross-entropy of predicting ``ids[:, t]`` from ``ids[:, :t]``, t >= 1."""
        logits = self(ids[:, :-1], ablate)
        return F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        """The language-model loss of a ``[B, T]`` batch (every next token)."""
        return self.token_losses(batch).mean()


def check_head(config: InductionConfig, layer, head) -> None:
    """``layer`` in ``[0, n_layer)`` and ``head`` in ``[0, n_head)``, else a ``ValueError`` naming it."""
    for name, v, n in (("layer", layer, config.n_layer), ("head", head, config.n_head)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < n:
            raise ValueError(f"{name} must be an int in [0, {n}), got {v!r}")


@torch.no_grad()
def head_means(model: AttnOnly, ids: torch.Tensor) -> dict[tuple[int, int], torch.Tensor]:
    """Each head's mean output ``[d_h]`` over a reference batch (all sequences and positions):
    what mean ablation puts in its place."""
    _, _, zs = model.run(ids[:, :-1])
    return {(layer, h): z[:, h].mean((0, 1)) for layer, z in enumerate(zs) for h in range(z.shape[1])}


# -------------------------------------------------------------------------------------- data


def _generator(seed: int | torch.Generator) -> torch.Generator:
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator().manual_seed(check_int(seed, "seed", 0))


def repeated_segments(n: int, seq_len: int, vocab_size: int, seg_len: int, seed: int | torch.Generator = 0
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of uniform random tokens: a random filler, then a random segment repeated
    until the sequence ends. Each sequence draws its own segment length ``L`` in
    ``[max(2, seg_len // 2), seg_len]`` and filler length in ``[0, seq_len - 2 L]``, so the
    distance between copies varies: no head that looks a fixed distance back can copy the
    segment, only one that finds the current token's previous occurrence (an induction head).

    Returns ``(ids [n, seq_len], repeat [n, seq_len])``: ``repeat`` marks the tokens that the
    earlier copy predicts (``ids[t] == ids[t - L]`` and ``ids[t - 1]`` occurred before, at
    ``t - 1 - L``), i.e. every position from ``filler + L + 1`` on.
    """
    for name, v in (("n", n), ("seq_len", seq_len), ("vocab_size", vocab_size), ("seg_len", seg_len)):
        check_int(v, name)
    if 2 * seg_len + 1 > seq_len:
        raise ValueError(f"seg_len={seg_len} is too long for seq_len={seq_len}: two copies need "
                         f"seq_len >= 2 * seg_len + 1 = {2 * seg_len + 1}")
    g = _generator(seed)
    ids = torch.randint(vocab_size, (n, seq_len), generator=g)
    repeat = torch.zeros(n, seq_len, dtype=torch.bool)
    lo = max(2, seg_len // 2)
    lengths = torch.randint(lo, seg_len + 1, (n,), generator=g)
    u = torch.rand(n, generator=g)
    pos = torch.arange(seq_len)
    for i in range(n):
        L = int(lengths[i])
        f = int(u[i] * (seq_len - 2 * L + 1))
        later = pos >= f + L
        ids[i, later] = ids[i, f + (pos[later] - f) % L]
        repeat[i, f + L + 1:] = True
    return ids, repeat


def _mappings(n: int, n_keys: int, n_values: int, g: torch.Generator) -> torch.Tensor:
    """``[n, n_keys]``: a fresh random function from keys to value ids per row."""
    return n_keys + torch.randint(n_values, (n, n_keys), generator=g)


def kv_sequences(n: int, seq_len: int, n_keys: int, n_values: int, *, bursty: bool = True, burst_keys: int = 4,
                 seed: int | torch.Generator = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Training sequences of ``(key, value)`` pairs, ``k1 v1 k2 v2 ...``, each under its own new
    random mapping (so nothing about a value can be stored in the weights: it must be read from
    the context). ``bursty``: a sequence's keys come from ``burst_keys`` keys of its own, so each
    recurs several times (Chan et al.'s burstiness); uniform: drawn i.i.d. from all ``n_keys``.

    Returns ``(ids [n, seq_len], mapping [n, n_keys])``.
    """
    for name, v in (("n", n), ("seq_len", seq_len), ("n_keys", n_keys), ("n_values", n_values),
                    ("burst_keys", burst_keys)):
        check_int(v, name)
    if bursty and burst_keys > n_keys:
        raise ValueError(f"burst_keys={burst_keys} exceeds n_keys={n_keys}")
    g = _generator(seed)
    mapping = _mappings(n, n_keys, n_values, g)
    pairs = (seq_len + 1) // 2
    if bursty:
        pool = torch.rand(n, n_keys, generator=g).argsort(1)[:, :burst_keys]  # each row's own keys
        keys = pool.gather(1, torch.randint(burst_keys, (n, pairs), generator=g))
    else:
        keys = torch.randint(n_keys, (n, pairs), generator=g)
    values = mapping.gather(1, keys)
    ids = torch.stack([keys, values], 2).reshape(n, 2 * pairs)[:, :seq_len]
    return ids, mapping


def kv_episodes(n: int, k: int, n_keys: int, n_values: int, seed: int | torch.Generator = 0
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Few-shot episodes on fresh mappings: ``k`` distinct keys with their values, then a query
    key, ``k1 v1 ... kk vk q``; the target is the query's value. For ``k > 0`` the query is one of
    the shown keys (the answer is in the context); for ``k = 0`` it is a random key (the answer is
    a guess: chance is ``1 / n_values``).

    Returns ``(ids [n, 2k+1], target [n], mapping [n, n_keys])``.

    Raises:
        ValueError: ``k`` larger than ``n_keys`` (the shown keys are distinct).
    """
    check_int(n, "n")
    check_int(k, "k", 0)
    check_int(n_keys, "n_keys")
    check_int(n_values, "n_values")
    if k > n_keys:
        raise ValueError(f"k={k} shown pairs need k distinct keys, but there are only n_keys={n_keys}; "
                         f"expected k <= {n_keys}")
    g = _generator(seed)
    mapping = _mappings(n, n_keys, n_values, g)
    order = torch.rand(n, n_keys, generator=g).argsort(1)
    if k == 0:
        query = order[:, 0]
        ids = query[:, None]
    else:
        shown = order[:, :k]
        query = shown.gather(1, torch.randint(k, (n, 1), generator=g))[:, 0]
        ids = torch.cat([torch.stack([shown, mapping.gather(1, shown)], 2).reshape(n, 2 * k), query[:, None]], 1)
    return ids, mapping.gather(1, query[:, None])[:, 0], mapping


def training_batch(config: InductionConfig, n: int, seed: int | torch.Generator, *, kind: str = "mix") -> torch.Tensor:
    """``[n, seq_len]``: ``kind`` = ``"mix"`` (a fraction ``config.mix`` of repeated segments, the
    rest bursty key->value sequences), ``"repeat"``, ``"bursty"`` or ``"uniform"``."""
    c = config
    g = _generator(seed)

    def rep(m: int) -> torch.Tensor:
        return repeated_segments(m, c.seq_len, c.vocab_size, c.seg_len, g)[0]

    def kv(m: int, bursty: bool) -> torch.Tensor:
        return kv_sequences(m, c.seq_len, c.n_keys, c.n_values, bursty=bursty, burst_keys=c.burst_keys, seed=g)[0]

    if kind == "repeat":
        return rep(n)
    if kind in ("bursty", "uniform"):
        return kv(n, kind == "bursty")
    if kind != "mix":
        raise ValueError(f"kind must be 'mix', 'repeat', 'bursty' or 'uniform', got {kind!r}")
    n_rep = round(c.mix * n)
    return torch.cat([rep(n_rep), kv(n - n_rep, True)]) if 0 < n_rep < n else rep(n) if n_rep else kv(n, True)


# ------------------------------------------------------------------------------ measurements


def icl_score(token_losses: torch.Tensor, early: float = ICL_EARLY, late: float = ICL_LATE) -> float:
    """Olsson et al.'s in-context learning score: the mean loss at a late position minus the
    mean loss at an early one (their token 500 minus token 50 of 512; here the positions at
    fractions ``late`` and ``early`` of the context, each averaged over a window of 5% of it).
    Negative: later tokens are predicted better, the context helps.

    ``token_losses`` is ``[B, T]`` (per-position losses) or ``[T]`` (already averaged).
    """
    if not isinstance(token_losses, torch.Tensor) or token_losses.dim() not in (1, 2):
        raise ValueError(f"token_losses must be a [batch, positions] or [positions] tensor, got "
                         f"{getattr(token_losses, 'shape', type(token_losses).__name__)}")
    if not 0 <= early < late <= 1:
        raise ValueError(f"early and late must be fractions with 0 <= early < late <= 1, got {early}, {late}")
    per_pos = token_losses.float().mean(0) if token_losses.dim() == 2 else token_losses.float()
    T = per_pos.shape[0]
    w = max(1, round(0.05 * T))

    def window(f: float) -> float:
        c = min(max(int(f * (T - 1)), 0), T - 1)
        lo = min(max(c - w // 2, 0), T - w)
        return float(per_pos[lo:lo + w].mean())

    return window(late) - window(early)


def _check_pattern(pattern: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(pattern, torch.Tensor) or pattern.dim() < 2 or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(f"pattern must be a [..., T, T] attention tensor, got "
                         f"{getattr(pattern, 'shape', type(pattern).__name__)}")
    ids = torch.as_tensor(ids)
    if ids.dim() == 1:
        ids = ids[None]
    if ids.shape[-1] != pattern.shape[-1]:
        raise ValueError(f"ids has {ids.shape[-1]} positions but pattern is {pattern.shape[-1]} x {pattern.shape[-1]}")
    return pattern, ids


def induction_scores(pattern: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Olsson et al.'s prefix-matching score: for every query position whose token occurred
    before, the attention it pays to the tokens *after* those earlier occurrences (the token an
    induction head copies), averaged over such positions.

    ``pattern`` is ``[B, H, T, T]`` (or ``[T, T]``, ``[H, T, T]`` for one sequence) with rows as
    queries; ``ids`` ``[B, T]`` (or ``[T]``). Returns one score per head (``[H]``, or a 0-d tensor
    for one ``[T, T]`` pattern): 1 for a perfect induction head, about ``1 / t`` for uniform
    attention.
    """
    pattern, ids = _check_pattern(pattern, ids)
    single = pattern.dim() == 2
    p = pattern.float()
    if p.dim() == 2:
        p = p[None, None]
    elif p.dim() == 3:
        p = p[None]
    T = ids.shape[-1]
    same = ids[:, :, None] == ids[:, None, :]                      # [B, Tq, Tk]: ids[q] == ids[k]
    earlier = torch.ones(T, T, dtype=torch.bool).tril(-1)          # k < q
    match = same & earlier                                          # previous occurrences of ids[q]
    target = torch.zeros_like(match)
    target[:, :, 1:] = match[:, :, :-1]                             # the token after each one
    has = match.any(-1)                                             # [B, Tq]
    if not has.any():
        raise ValueError("no token of ids occurs twice: the induction score needs repeated tokens")
    mass = (p * target[:, None].to(p.device, p.dtype)).sum(-1)     # [B, H, Tq]
    w = has[:, None].to(p.device, p.dtype)
    score = (mass * w).sum((0, 2)) / w.sum((0, 2))
    return score[0] if single else score


def previous_token_scores(pattern: torch.Tensor) -> torch.Tensor:
    """The mean attention from each position ``t >= 1`` to ``t - 1``, per head (``[..., T, T]`` in,
    one score per head out): 1 for a perfect previous-token head."""
    if not isinstance(pattern, torch.Tensor) or pattern.dim() < 2 or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(f"pattern must be a [..., T, T] attention tensor, got "
                         f"{getattr(pattern, 'shape', type(pattern).__name__)}")
    diag = pattern.float().diagonal(-1, -2, -1)  # [..., T-1]: row t, column t-1
    if pattern.dim() == 4:
        return diag.mean((0, 2))
    return diag.mean(-1)


def repeated_tokens(n: int, half: int, vocab_size: int, seed: int = 0) -> torch.Tensor:
    """``[n, 2 * half]``: ``half`` uniform random tokens, then the same tokens again: the probe
    Olsson et al. score induction heads on."""
    check_int(half, "half")
    x = torch.randint(vocab_size, (check_int(n, "n"), half), generator=_generator(seed))
    return torch.cat([x, x], 1)


@torch.no_grad()
def head_scores(model: AttnOnly, probe: torch.Tensor) -> dict[str, np.ndarray]:
    """Induction and previous-token scores of every head, ``[n_layer, n_head]`` each, on a
    ``probe`` of sequences with repeated tokens (:func:`repeated_segments`)."""
    was = model.training
    model.eval()
    _, patterns, _ = model.run(probe)
    model.train(was)
    return {"induction": torch.stack([induction_scores(p, probe.to(p.device)) for p in patterns]).cpu().numpy(),
            "previous": torch.stack([previous_token_scores(p) for p in patterns]).cpu().numpy()}


@dataclass
class EvalSet:
    """Fixed held-out batches: ``mix`` (the training distribution), ``repeat`` (repeated segments
    and their mask) and ``probe`` (more repeated segments, for the head scores: their random
    offsets keep a head that looks a fixed distance back from scoring as an induction head)."""

    mix: torch.Tensor
    repeat: torch.Tensor
    repeat_mask: torch.Tensor
    probe: torch.Tensor
    kind: str = "mix"

    @classmethod
    def make(cls, config: InductionConfig, seed: int = 10_000, kind: str = "mix") -> EvalSet:
        c = config
        g = torch.Generator().manual_seed(seed)
        mix = training_batch(c, c.eval_size, g, kind=kind)
        rep, mask = repeated_segments(c.eval_size, c.seq_len, c.vocab_size, c.seg_len, g)
        probe = repeated_segments(min(c.eval_size, 64), c.seq_len - 1, c.vocab_size, c.seg_len, seed + 1)[0]
        return cls(mix, rep, mask, probe, kind)

    def to(self, device) -> EvalSet:
        return dataclasses.replace(self, mix=self.mix.to(device), repeat=self.repeat.to(device),
                                   repeat_mask=self.repeat_mask.to(device), probe=self.probe.to(device))


@torch.no_grad()
def measure(model: AttnOnly, data: EvalSet, ablate=None) -> dict[str, float]:
    """Loss, ICL score, the loss on the second copy of repeated segments (``repeat_loss``) and on
    the other tokens of those sequences (``fresh_loss``), and the largest induction score."""
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    data = data.to(dev)
    mix = model.token_losses(data.mix, ablate)
    rep = model.token_losses(data.repeat, ablate)
    mask = data.repeat_mask[:, 1:]
    out = {"loss": float(mix.mean()), "icl_score": icl_score(mix),
           "repeat_loss": float(rep[mask].mean()), "fresh_loss": float(rep[~mask].mean())}
    if ablate is None:
        out["induction_max"] = float(head_scores(model, data.probe)["induction"].max())
    model.train(was)
    return out


@torch.no_grad()
def few_shot_accuracy(model: AttnOnly, k: int, n: int = 512, seed: int = 20_000, ablate=None) -> float:
    """Accuracy (0-1) of the value predicted after ``k`` shown pairs and a query key, on ``n``
    fresh mappings (never trained on); the prediction is the most likely value token."""
    c = model.config
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 0 or k > c.n_keys:
        raise ValueError(f"k must be an int in [0, n_keys={c.n_keys}], got {k!r}")
    if 2 * k + 1 > c.seq_len:
        raise ValueError(f"k={k} pairs and a query need {2 * k + 1} positions; the model has seq_len={c.seq_len}")
    ids, target, _ = kv_episodes(n, k, c.n_keys, c.n_values, seed)
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    logits = model(ids.to(dev), ablate)[:, -1, c.n_keys:]
    model.train(was)
    return float(((logits.argmax(-1) + c.n_keys).cpu() == target).float().mean())


def copy_baseline(k: int, n_values: int) -> float:
    """The expected few-shot accuracy of answering one of the ``k`` shown values at random,
    ignoring the query: ``(1 + (k - 1) / n_values) / k``. The values of an episode
    (:func:`kv_episodes`) are drawn independently, so another shown key shares the answer's value
    with probability ``1 / n_values`` each; with distinct values it would be ``1 / k``."""
    check_int(k, "k")
    check_int(n_values, "n_values")
    return (1 + (k - 1) / n_values) / k


def k_curve(model: AttnOnly, ks=None, n: int = 512, seed: int = 20_000, ablate=None) -> dict[int, float]:
    """:func:`few_shot_accuracy` for each ``k`` (default ``config.ks``)."""
    return {int(k): few_shot_accuracy(model, k, n, seed, ablate) for k in (model.config.ks if ks is None else ks)}


def top_heads(scores: np.ndarray, layer: int = -1) -> list[tuple[int, int]]:
    """The heads of ``layer`` (default the last) sorted by ``scores`` (``[n_layer, n_head]``), best first."""
    row = scores[layer]
    lay = layer % scores.shape[0]
    return [(lay, int(h)) for h in np.argsort(-row, kind="stable")]


def ablation(model: AttnOnly, data: EvalSet, heads: list[tuple[int, int]], mode: str = "zero") -> dict:
    """Remove each head of ``heads`` on its own (``mode`` = ``"zero"`` or ``"mean"``) and measure
    again; returns ``{"base": measure(...), (layer, head): {..., "d_repeat_loss": ...}}``."""
    if mode not in ABLATIONS:
        raise ValueError(f"mode must be one of {ABLATIONS}, got {mode!r}")
    base = measure(model, data)
    means = head_means(model, data.mix.to(next(model.parameters()).device)) if mode == "mean" else {}
    out: dict = {"base": base}
    for layer, head in heads:
        check_head(model.config, layer, head)
        m = measure(model, data, {(layer, head): means.get((layer, head))})
        m["d_repeat_loss"] = m["repeat_loss"] - base["repeat_loss"]
        m["d_icl_score"] = m["icl_score"] - base["icl_score"]
        m["d_fresh_loss"] = m["fresh_loss"] - base["fresh_loss"]
        out[(layer, head)] = m
    return out


# ---------------------------------------------------------------------------------- training


def _schedule(config: InductionConfig):
    """Linear warm-up to ``lr`` over ``warmup`` steps, then constant (a phase change is easiest
    to see when the rate does not decay under it)."""

    def set_lr(step: int, opt: torch.optim.Optimizer) -> None:
        f = min(1.0, (step + 1) / config.warmup) if config.warmup else 1.0
        for group in opt.param_groups:
            group["lr"] = config.lr * f

    return set_lr


@dataclass
class Run:
    """A trained model and what was tracked: ``curve`` (one dict per evaluation: step, loss,
    ICL score, repeat loss, largest induction score), the phase-change step and seconds."""

    model: AttnOnly
    curve: list[dict[str, float]]
    phase_step: int | None
    seconds: float
    kind: str = "mix"
    extra: dict = field(default_factory=dict)


def phase_change_step(curve: list[dict[str, float]], key: str = "icl_score") -> int | None:
    """The first evaluated step at which ``key`` has fallen half-way from its start to its end
    value (``None`` if it never falls, i.e. the end is not below the start by 0.1 nats)."""
    if not curve:
        return None
    start, end = curve[0][key], curve[-1][key]
    if not end < start - 0.1:
        return None
    half = (start + end) / 2
    return next(int(e["step"]) for e in curve if e[key] <= half)


def copy_floor(config: InductionConfig) -> float:
    """The loss on a repeated segment of a model that copies a token it has seen in the segment,
    uniformly among its ``L`` tokens: ``log L``, averaged over the segment lengths
    :func:`repeated_segments` draws (``max(2, seg_len // 2)`` to ``seg_len``). Only a model that
    knows which earlier token comes next goes below it."""
    lo = max(2, config.seg_len // 2)
    return float(np.mean([math.log(L) for L in range(lo, config.seg_len + 1)]))


def circuit_step(curve: list[dict[str, float]], floor: float, fraction: float = 0.5) -> int | None:
    """The first evaluated step at which the repeat loss is below ``fraction`` of the copying
    ``floor`` (:func:`copy_floor`): a loss that copying alone cannot reach (``None`` if never)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    return next((int(e["step"]) for e in curve if e["repeat_loss"] < fraction * floor), None)


def train(config: InductionConfig, *, kind: str = "mix", seed: int | None = None, steps: int | None = None,
          device: str | None = "cpu", progress: bool = False) -> Run:
    """Train an :class:`AttnOnly` on ``kind`` batches (see :func:`training_batch`) for ``steps``
    (default ``config.steps``) with the book's loop, :func:`companion.train.fit` (AdamW, warm-up,
    gradient clipping at 1), measuring on fixed held-out data every ``eval_every`` steps."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    c = config if seed is None else dataclasses.replace(config, seed=check_int(seed, "seed", 0))
    if steps is not None:
        c = dataclasses.replace(c, steps=check_int(steps, "steps"))
    model = AttnOnly(c, seed=c.seed)
    data = EvalSet.make(c, kind=kind)
    g = torch.Generator().manual_seed(c.seed + 1)

    def batches(epoch: int):
        for _ in range(c.steps):
            yield training_batch(c, c.batch_size, g, kind=kind)

    curve: list[dict[str, float]] = []

    def evaluate(m):
        r = measure(m, data)
        curve.append({"step": len(curve) * c.eval_every, **r})
        return r

    curve.append({"step": 0, **measure(model, data)})
    hist = fit(model, batches, config=TrainConfig(epochs=1, lr=c.lr, optimizer="adamw", weight_decay=c.weight_decay,
                                                 seed=c.seed, device=device, max_steps=c.steps,
                                                 eval_every=c.eval_every, monitor="loss", restore_best=False,
                                                 progress=progress),
               evaluate=evaluate, schedule=_schedule(c))
    for e, h in zip(curve[1:], hist.evals):
        e["step"] = int(h["step"])
    return Run(model.cpu(), curve, phase_change_step(curve), hist.seconds, kind)


# ------------------------------------------------------------------------------ the anchor


def anchor(config: InductionConfig, *, seed: int | None = None, device: str | None = "cpu",
           progress: bool = False, arms: bool = True) -> dict:
    """The whole experiment once: train on the mix (tracking the phase change), score every
    head, ablate each head in turn (``ablate_each``: the change in repeat loss, ``[n_layer,
    n_head]``), singling out the top induction head and a random other head of the same layer, the
    few-shot curve on unseen mappings, and (``arms``) Chan et al.'s bursty against uniform
    key->value training for ``arm_steps`` each. Returns plain numbers (and the runs under
    ``"runs"``)."""
    c = config if seed is None else dataclasses.replace(config, seed=check_int(seed, "seed", 0))
    run = train(c, device=device, progress=progress)
    model = run.model
    data = EvalSet.make(c)
    scores = head_scores(model, data.probe)
    last = c.n_layer - 1
    order = top_heads(scores["induction"], last)
    top = order[0]
    rng = np.random.default_rng(c.seed)
    other = order[1:][int(rng.integers(len(order) - 1))] if len(order) > 1 else None
    every = [(layer, h) for layer in range(c.n_layer) for h in range(c.n_head)]
    abl = ablation(model, data, every)
    before, after = run.curve[0], run.curve[-1]
    out = {
        "seed": c.seed, "steps": c.steps, "seconds": run.seconds,
        "curve": [{k: round(float(v), 4) for k, v in e.items()} for e in run.curve],
        "phase_step": run.phase_step,
        "icl_before": before["icl_score"], "icl_after": after["icl_score"],
        "repeat_loss_before": before["repeat_loss"], "repeat_loss_after": after["repeat_loss"],
        "induction": scores["induction"].round(4).tolist(), "previous": scores["previous"].round(4).tolist(),
        "top_head": list(top), "other_head": None if other is None else list(other),
        "ablate_top": {k: abl[top][k] for k in ("d_repeat_loss", "d_icl_score", "d_fresh_loss")},
        "ablate_other": None if other is None else {k: abl[other][k] for k in ("d_repeat_loss", "d_icl_score",
                                                                            "d_fresh_loss")},
        "ablate_each": [[round(abl[(layer, h)]["d_repeat_loss"], 4) for h in range(c.n_head)]
                        for layer in range(c.n_layer)],
        "k_curve": k_curve(model),
        "k_curve_top_ablated": k_curve(model, ablate={top: None}),
        "runs": {"mix": run},
    }
    if arms:
        for kind in ("bursty", "uniform"):
            r = train(c, kind=kind, steps=c.arm_steps, device=device, progress=progress)
            kv = EvalSet.make(c, kind=kind)
            out[kind] = {"icl_score": measure(r.model, EvalSet.make(c, kind="bursty"))["icl_score"],
                         "own_icl_score": measure(r.model, kv)["icl_score"],
                         "induction_max": float(head_scores(r.model, kv.probe)["induction"].max()),
                         "k_curve": k_curve(r.model)}
            out["runs"][kind] = r
    return out


# -------------------------------------------------------------------------------------- plots


def draw_phase_change(curve: list[dict[str, float]], phase_step: int | None = None, ax=None, *,
                      floor: float | None = None, circuit: int | None = None):
    """The ICL score and the loss on repeated segments (minus its start, so both begin at 0)
    against the training step, with the largest induction score on a second axis; a dashed line
    at ``phase_step`` (the ICL score's half-way step); optionally the copying ``floor``
    (:func:`copy_floor`, drawn on the repeat-loss curve's scale) and a dotted line at the
    ``circuit`` step (:func:`circuit_step`). Every line is named in the legend, below the axes."""
    from ..plot import _figure_and_axes

    fig, ax = _figure_and_axes(ax, (6.4, 4.2))
    steps = [e["step"] for e in curve]
    start = curve[0]["repeat_loss"]
    ax.plot(steps, [e["icl_score"] for e in curve], label="ICL score (late - early loss)")
    ax.plot(steps, [e["repeat_loss"] - start for e in curve], label="repeat loss - its start")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("training step")
    ax.set_ylabel("nats")
    if floor is not None:
        ax.axhline(floor - start, color="C1", ls=":", lw=1.0, label="copying floor (mean log L)")
    if phase_step is not None:
        ax.axvline(phase_step, color="k", ls="--", lw=0.8, label=f"ICL half-way (step {phase_step:,})")
    if circuit is not None:
        ax.axvline(circuit, color="C1", ls="-.", lw=1.0,
                   label=f"repeat loss < half the floor (step {circuit:,})")
    handles, labels = ax.get_legend_handles_labels()
    if "induction_max" in curve[0]:
        ax2 = ax.twinx()
        ax2.plot(steps, [e["induction_max"] for e in curve], color="C2", ls=":",
                 label="top induction score (right axis)")
        ax2.set_ylabel("induction score", color="C2")
        ax2.set_ylim(0, 1)
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
              frameon=False)
    ax.set_title("Two stages: copying, then the circuit", fontsize=10)
    return fig


def draw_heads(model: AttnOnly, probe: torch.Tensor, heads: list[tuple[int, int]], row: int = 0):
    """Attention heatmaps of ``heads`` (``(layer, head)`` pairs) on one sequence of ``probe`` (e.g.
    :func:`repeated_tokens`): an induction head draws a stripe parallel to the diagonal, one step
    right of the earlier copy (each token looks at the token after its previous occurrence); a
    previous-token head draws the sub-diagonal."""
    import matplotlib.pyplot as plt

    for layer, head in heads:
        check_head(model.config, layer, head)
    was = model.training
    model.eval()
    with torch.no_grad():
        _, patterns, _ = model.run(probe[row:row + 1].to(next(model.parameters()).device))
    model.train(was)
    fig, axes = plt.subplots(1, len(heads), figsize=(3.0 * len(heads), 3.0), squeeze=False)
    for ax, (layer, head) in zip(axes[0], heads):
        ax.imshow(patterns[layer][0, head].cpu().numpy(), cmap="Blues", vmin=0, vmax=1)
        ax.set_title(f"layer {layer + 1}, head {head}", fontsize=9)
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
    fig.tight_layout()
    return fig


def draw_k_curve(curves: dict[str, dict[int, float]], n_values: int, ax=None):
    """Few-shot accuracy against ``k`` for each labelled curve, with two baselines: chance
    (``1 / n_values``) and copying one of the ``k`` shown values at random
    (:func:`copy_baseline`)."""
    from ..plot import _figure_and_axes

    fig, ax = _figure_and_axes(ax, (4.8, 4.2))
    for label, curve in curves.items():
        ks = sorted(curve)
        ax.plot(ks, [curve[k] for k in ks], marker="o", label=label)
    ks = [k for k in (sorted(next(iter(curves.values()))) if curves else []) if k]
    ax.plot(ks, [copy_baseline(k, n_values) for k in ks], color="grey", ls="--",
            label="copy a shown value at random")
    ax.axhline(1 / n_values, color="grey", ls=":", label="chance")
    ax.set_xlabel("k (shown pairs)")
    ax.set_ylabel("accuracy on unseen mappings")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, frameon=False)
    return fig


# ------------------------------------------------------------------ reading the circuit (10c)


def periods(ids: torch.Tensor, repeat: torch.Tensor) -> torch.Tensor:
    """``[n]``: the period ``L`` of each sequence of :func:`repeated_segments` (the smallest
    ``L`` with ``ids[t] == ids[t - L]`` over the repeated part and the token before it; ``0`` for
    a row with no repeat)."""
    ids, repeat = torch.as_tensor(ids), torch.as_tensor(repeat)
    if ids.dim() != 2 or ids.shape != repeat.shape:
        raise ValueError(f"ids and repeat must be [n, T] of the same shape, got {tuple(ids.shape)} and "
                         f"{tuple(repeat.shape)}")
    out = torch.zeros(ids.shape[0], dtype=torch.long)
    for i, (row, mask) in enumerate(zip(ids, repeat)):
        if not mask.any():
            continue
        first = int(mask.nonzero()[0, 0]) - 1  # the first token whose successor the copy predicts
        out[i] = next(L for L in range(1, first + 1) if torch.equal(row[first:], row[first - L:len(row) - L]))
    return out


@torch.no_grad()
def attention_offsets(model: AttnOnly, ids: torch.Tensor, repeat: torch.Tensor, max_back: int = 11,
                      around: int = 6) -> dict[str, np.ndarray]:
    """Where each head looks, averaged over the predictable positions of repeated segments
    (:func:`repeated_segments` with ``seq_len - 1`` tokens, so the model reads them all).

    Returns ``"back"`` ``[n_layer, n_head, max_back + 1]``: the attention from position ``t`` to
    ``t - d``, for ``d = 0 .. max_back`` (a previous-token head puts its mass at ``d = 1``); and
    ``"target"`` ``[n_layer, n_head, 2 * around + 1]``: the attention to ``s + d`` for ``d =
    -around .. around``, where ``s = t - L + 1`` is the token after the previous occurrence of the
    current token (Olsson et al.'s induction head puts its mass at ``d = 0``); ``"d_back"`` and
    ``"d_target"`` hold the offsets."""
    check_int(max_back, "max_back", 0)
    check_int(around, "around", 0)
    L = periods(ids, repeat)
    was = model.training
    model.eval()
    _, patterns, _ = model.run(ids.to(next(model.parameters()).device))
    model.train(was)
    c = model.config
    back = np.zeros((c.n_layer, c.n_head, max_back + 1))
    target = np.zeros((c.n_layer, c.n_head, 2 * around + 1))
    n, T = 0, ids.shape[1]
    for i in range(ids.shape[0]):
        if not repeat[i].any():
            continue
        for t in range(int(repeat[i].nonzero()[0, 0]) - 1, T):
            n += 1
            for layer, p in enumerate(patterns):
                row = p[i, :, t].cpu().numpy()  # [H, T]
                for d in range(min(max_back, t) + 1):
                    back[layer, :, d] += row[:, t - d]
                s = t - int(L[i]) + 1
                for j, d in enumerate(range(-around, around + 1)):
                    if 0 <= s + d <= t:
                        target[layer, :, j] += row[:, s + d]
    if n == 0:
        raise ValueError("repeat marks no position: attention_offsets needs repeated segments")
    return {"back": back / n, "target": target / n, "d_back": np.arange(max_back + 1),
            "d_target": np.arange(-around, around + 1)}


def ablation_grid(result: dict, key: str = "d_repeat_loss") -> np.ndarray:
    """``[n_layer, n_head]``: ``result[(layer, head)][key]`` of :func:`ablation` (heads not
    ablated are NaN)."""
    heads = [k for k in result if isinstance(k, tuple)]
    if not heads:
        raise ValueError("result holds no ablated head: pass what ablation() returned")
    grid = np.full((max(h[0] for h in heads) + 1, max(h[1] for h in heads) + 1), np.nan)
    for layer, head in heads:
        grid[layer, head] = result[(layer, head)][key]
    return grid


def carrier(grid: np.ndarray, layer: int = -1) -> tuple[int, int]:
    """The head of ``layer`` (default the last) whose ablation costs most (``grid`` from
    :func:`ablation_grid`): the head that carries the circuit, found by removing it."""
    row = np.asarray(grid)[layer]
    return layer % np.asarray(grid).shape[0], int(np.nanargmax(row))


# ---------------------------------------------------------------------- the stored three seeds

RESULTS = Path(__file__).with_name("induction_results.json")


def load_results(path: str | Path = RESULTS) -> dict:
    """The stored anchor runs (``benchmarks/ch10b_induction.py``: laptop size, seeds 0-2)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `python -m benchmarks.ch10b_induction` to make it")
    return json.loads(path.read_text(encoding="utf-8"))


def seed_effects(results: dict) -> dict[str, list[float]]:
    """Per stored seed, the numbers the chapter's claim checks read:

    * ``icl_change``: the ICL score after training minus before (nats; negative: learned);
    * ``carrier_d_icl`` / ``other_d_icl``: the rise of the ICL score when the layer-2 head whose
      ablation costs most repeat loss is removed, and when the other layer-2 head is;
    * ``carrier_d_repeat``: that head's cost on the repeat loss (nats);
    * ``k4_minus_copy``: few-shot accuracy at k = 4 minus copying a shown value at random
      (:func:`copy_baseline`, 0.30 with 16 values: two keys may share a value);
    * ``bursty_minus_uniform``: accuracy of the bursty arm minus the uniform arm, mean over the
      k > 0 (few-shot episodes on unseen mappings).
    """
    out: dict[str, list[float]] = {k: [] for k in ("icl_change", "carrier_d_icl", "other_d_icl", "carrier_d_repeat",
                                                   "k4_minus_copy", "bursty_minus_uniform")}
    for r in results["runs"]:
        out["icl_change"].append(r["icl_after"] - r["icl_before"])
        two = {tuple(r["top_head"]): r["ablate_top"], tuple(r["other_head"]): r["ablate_other"]}
        best = max(two, key=lambda h: two[h]["d_repeat_loss"])
        rest = [h for h in two if h != best]
        out["carrier_d_icl"].append(two[best]["d_icl_score"])
        out["carrier_d_repeat"].append(two[best]["d_repeat_loss"])
        out["other_d_icl"].append(two[rest[0]]["d_icl_score"] if rest else float("nan"))
        out["k4_minus_copy"].append(r["k_curve"]["4"] - copy_baseline(4, results["config"]["n_values"]))
        ks = [k for k in r["bursty"]["k_curve"] if int(k) > 0]
        out["bursty_minus_uniform"].append(float(np.mean([r["bursty"]["k_curve"][k] - r["uniform"]["k_curve"][k]
                                                          for k in ks])))
    return out


def seed_rows(results: dict) -> list[dict]:
    """One row per stored seed, for a table: the step by which the ICL score had fallen half-way
    (:func:`phase_change_step`), the step the repeat loss fell below half the copying floor
    (:func:`circuit_step`), the ICL score and the repeat
    loss before and after training, the largest induction score, the layer-2 head whose removal
    costs most (and that cost on the repeat loss), and the few-shot accuracy at each k > 0."""
    rows = []
    for r in results["runs"]:
        two = {tuple(r["top_head"]): r["ablate_top"], tuple(r["other_head"]): r["ablate_other"]}
        best = max(two, key=lambda h: two[h]["d_repeat_loss"])
        floor = copy_floor(InductionConfig(**{k: tuple(v) if k == "ks" else v for k, v in results["config"].items()}))
        row = {"seed": r["seed"], "ICL half-way step": r["phase_step"],
               "circuit step": circuit_step(r["curve"], floor),
               "ICL before": r["icl_before"],
               "ICL after": r["icl_after"], "repeat loss before": r["repeat_loss_before"],
               "repeat loss after": r["repeat_loss_after"], "top induction score": max(map(max, r["induction"])),
               "carrier": f"layer {best[0] + 1}, head {best[1]}", "carrier removed: d repeat loss":
               two[best]["d_repeat_loss"]}
        row.update({f"k={k}": v for k, v in r["k_curve"].items() if int(k) > 0})
        rows.append({k: (float(f"{v:.4g}") + 0.0 if isinstance(v, float) else v) for k, v in row.items()})
    return rows


def spread(values) -> tuple[float, tuple[float, float]]:
    """``(mean, (min, max))`` of per-seed values, rounded to 4 significant digits."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0 or not np.isfinite(v).all():
        raise ValueError(f"spread needs finite values, got {v.tolist()}")
    r = lambda x: float(f"{x:.4g}") + 0.0
    return r(v.mean()), (r(v.min()), r(v.max()))


# ---------------------------------------------------------------------------- more plots (10c)


def draw_offsets(offsets: dict[str, np.ndarray], heads: list[tuple[int, int]] | None = None):
    """Two panels from :func:`attention_offsets`: attention against the distance back, and
    against the position relative to the induction target (``0``: the token after the previous
    occurrence), one line per head."""
    import matplotlib.pyplot as plt

    n_layer, n_head = offsets["back"].shape[:2]
    heads = heads or [(layer, h) for layer in range(n_layer) for h in range(n_head)]
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.0))
    for (layer, h), ls in zip(heads, ["-", "--", "-", "--", ":", "-."] * 4):
        label = f"layer {layer + 1}, head {h}"
        color = f"C{layer}"
        axes[0].plot(offsets["d_back"], offsets["back"][layer, h], ls=ls, color=color, marker=".", label=label)
        axes[1].plot(offsets["d_target"], offsets["target"][layer, h], ls=ls, color=color, marker=".", label=label)
    axes[0].set_xlabel("distance back, d (attention from t to t - d)")
    axes[1].set_xlabel("position - induction target (0: the token after the earlier copy)")
    axes[1].axvline(0, color="grey", lw=0.5)
    for ax in axes:
        ax.set_ylabel("mean attention")
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=7, handlelength=3.5)
    fig.tight_layout()
    return fig


def draw_circuit(ax=None):
    """The model and the textbook induction circuit on ``... A B ... A -> ?``: a layer-1
    previous-token head writes "A came before me" into B's position; the layer-2 head at the
    second A matches that (K-composition) and copies B into the prediction."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ..plot import _figure_and_axes

    fig, ax = _figure_and_axes(ax, (8.0, 3.6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6.2)
    ax.axis("off")
    tokens = ["C", "A", "B", "D", "...", "A"]
    xs = [1.0, 2.4, 3.8, 5.2, 6.6, 8.0]
    rows = [(0.6, r"token + position embedding  $x^{(0)}_t = C(w_t) + p_t$", "#eeeeee"),
            (2.1, "layer 1: attention only (previous-token head)", "#dbe9f6"),
            (3.6, "layer 2: attention only (induction head)", "#fde2c8"),
            (5.1, r"unembedding  $\mathrm{softmax}(W_U\,\mathrm{LN}(x^{(2)}_t))$  ->  next token", "#eeeeee")]
    for y, text, fc in rows:
        ax.add_patch(FancyBboxPatch((0.3, y - 0.35), 9.2, 0.7, boxstyle="round,pad=0.02", fc=fc, ec="0.6"))
        ax.text(0.4, y + 0.42, text, ha="left", va="bottom", fontsize=7.5, color="0.25")
    for x, t in zip(xs, tokens):
        ax.text(x, 0.6, t, ha="center", va="center", fontsize=11, weight="bold")
    arrow = {"arrowstyle": "->", "lw": 1.4, "mutation_scale": 10}
    ax.add_patch(FancyArrowPatch((xs[2], 2.0), (xs[1] + 0.15, 2.0), connectionstyle="arc3,rad=0.35",
                                 color="C0", **arrow))
    ax.text(xs[2] + 0.35, 2.1, "B looks at A:\n'A came before me'", ha="left", va="center", fontsize=7,
            color="C0")
    ax.add_patch(FancyArrowPatch((xs[5], 3.6), (xs[2] + 0.15, 3.6), connectionstyle="arc3,rad=0.25",
                                 color="C1", **arrow))
    ax.text((xs[2] + xs[5]) / 2 + 0.6, 4.3, "the second A finds the token after\nthe first A (B) and copies it",
            ha="center", fontsize=7, color="C1")
    ax.annotate("", (xs[5], 5.1), (xs[5], 3.95), arrowprops={"arrowstyle": "->", "color": "C1"})
    ax.text(xs[5] + 0.25, 5.1, "predict B", va="center", fontsize=9, color="C1", weight="bold")
    for x in xs:
        ax.plot([x, x], [0.95, 1.75], color="0.8", lw=0.8, zorder=0)
    ax.text(9.5, 5.95, r"residual stream: $x^{(l+1)} = x^{(l)} + \mathrm{Attn}_l(\mathrm{LN}(x^{(l)}))$; no MLPs",
            ha="right", fontsize=7.5, color="0.3")
    return fig
