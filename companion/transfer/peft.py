"""Parameter-efficient transfer: train a few parameters, keep the pre-trained network frozen.

Every method here takes a pre-trained encoder (our :class:`~companion.transformer.bert.BertEncoder`,
or anything built from :class:`~companion.transformer.blocks.Block`), copies it, freezes the
copy and adds (or unfreezes) a small set of parameters. Only those, plus the task head, are
stored per task:

* :func:`bitfit` -- Ben Zaken et al. (2022): train only the bias terms.
* :class:`Adapter` / :func:`add_adapters` -- Houlsby et al. (2019): a bottleneck MLP with a
  residual connection after the attention and after the feed-forward sub-layer of every block;
  the up-projection starts at zero, so the adapted network starts as the pre-trained one.
* :class:`LoRALinear` / :func:`add_lora` -- Hu et al. (2021): a low-rank update
  ``W + (alpha / r) B A`` of the query and value projections, ``B`` starting at zero;
  :meth:`LoRALinear.merged` folds it into one ``nn.Linear`` with the same outputs.
* :class:`PrefixAttention` / :func:`add_prefix` -- Li & Liang (2021): learned key and value
  vectors prepended in every layer's attention (optionally produced by an MLP during training,
  their reparameterisation).
* :class:`SoftPromptEncoder` -- prompt tuning (Lester et al. 2021: learned input vectors after
  ``[CLS]``) and P-tuning (Liu et al. 2021: the same vectors produced by a prompt encoder, an
  LSTM + MLP over learned embeddings).

:func:`apply_method` dispatches by name; :func:`param_report` counts what trains and what a
task costs to store.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_finite, check_ids, check_int, check_like, check_optional_size
from ..transformer.attention import MultiHeadAttention, causal_mask
from ..transformer.blocks import Block

METHODS = ("full", "bitfit", "adapters", "lora", "prefix", "prompt", "ptuning")


def freeze(model: nn.Module) -> nn.Module:
    """Turn off gradients for every parameter of ``model`` (returned for chaining)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch nn.Module (a GPT, a BERT encoder...), got {type(model).__name__}")
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _blocks(model: nn.Module) -> list[Block]:
    blocks = [m for m in model.modules() if isinstance(m, Block)]
    if not blocks:
        raise ValueError(f"{type(model).__name__} has no Transformer Block to adapt")
    return blocks


def _d_model(model: nn.Module) -> int:
    return _blocks(model)[0].ln_1.normalized_shape[0]


# ------------------------------------------------------------------------------------ BitFit


def bitfit(model: nn.Module) -> nn.Module:
    """Freeze ``model`` except its bias terms (linear layers' and layer norms'), in place."""
    freeze(model)
    n = 0
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            p.requires_grad_(True)
            n += 1
    if n == 0:
        raise ValueError(f"{type(model).__name__} has no bias parameter: BitFit has nothing to train")
    return model


# ---------------------------------------------------------------------------------- adapters


class Adapter(nn.Module):
    """``h + W_up f(W_down h)``: a bottleneck of ``m`` units with a skip connection.

    ``W_up`` starts at zero, so a new adapter is the identity and the adapted network computes
    exactly what the pre-trained one did (Houlsby et al. initialise near zero for the same
    reason)."""

    def __init__(self, d_model: int, bottleneck: int, generator: torch.Generator | None = None):
        super().__init__()
        check_int(bottleneck, "bottleneck")
        self.down = nn.Linear(d_model, bottleneck)
        self.up = nn.Linear(bottleneck, d_model)
        nn.init.normal_(self.down.weight, std=0.02, generator=generator)
        nn.init.zeros_(self.down.bias)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.up(F.gelu(self.down(h)))


class Adapted(nn.Module):
    """A sub-layer followed by an adapter: ``adapter(sublayer(*args))`` -- the adapter sits
    before the block's residual addition and layer norm, as in Houlsby et al.'s Figure 2."""

    def __init__(self, sublayer: nn.Module, adapter: Adapter):
        super().__init__()
        self.sublayer, self.adapter = sublayer, adapter

    def forward(self, *args, **kwargs) -> torch.Tensor:
        return self.adapter(self.sublayer(*args, **kwargs))


def add_adapters(model: nn.Module, bottleneck: int = 16, train_layer_norms: bool = True,
                 seed: int = 0) -> nn.Module:
    """Freeze ``model`` and put an :class:`Adapter` after the attention and the MLP of every
    block, in place. Houlsby et al. also train the layer norms (``train_layer_norms``). The
    adapters' random start comes from ``seed`` alone, not from whatever ran before."""
    freeze(model)
    d, g = _d_model(model), torch.Generator().manual_seed(seed)
    for block in _blocks(model):
        block.attn = Adapted(block.attn, Adapter(d, bottleneck, g))
        block.mlp = Adapted(block.mlp, Adapter(d, bottleneck, g))
        if train_layer_norms:
            for ln in (block.ln_1, block.ln_2):
                for p in ln.parameters():
                    p.requires_grad_(True)
    return model


# -------------------------------------------------------------------------------------- LoRA


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus low-rank updates of some of its output rows.

    ``parts`` lists ``(start, end)`` row ranges of the weight, each with its own ``B A``
    (``B: [end-start, r]`` zero at first, ``A: [r, in]`` Gaussian). For BERT's fused q/k/v
    projection ``parts=[(0, d), (2d, 3d)]`` adapts ``W_q`` and ``W_v`` as Hu et al. do.
    ``y = W x + b + (alpha / r) [B_1 A_1 x; 0; B_2 A_2 x]``.
    """

    def __init__(self, base: nn.Linear, r: int = 4, alpha: float = 8.0,
                 parts: list[tuple[int, int]] | None = None, seed: int = 0):
        super().__init__()
        if not isinstance(r, int) or r < 1:
            raise ValueError(f"LoRA rank r must be a positive int, got {r!r}")
        out_f, in_f = base.weight.shape
        self.parts = [tuple(p) for p in (parts or [(0, out_f)])]
        for s, e in self.parts:
            if not 0 <= s < e <= out_f:
                raise ValueError(f"LoRA part {(s, e)} is outside the layer's {out_f} output rows")
        self.base = freeze(base)
        self.r, self.scale = r, alpha / r
        g = torch.Generator().manual_seed(seed)
        dev = base.weight.device
        self.A = nn.ParameterList(
            nn.Parameter((torch.randn(r, in_f, generator=g) / math.sqrt(in_f)).to(dev)) for _ in self.parts)
        self.B = nn.ParameterList(nn.Parameter(torch.zeros(e - s, r, device=dev)) for s, e in self.parts)

    def delta(self) -> torch.Tensor:
        """The update ``(alpha / r) B A`` as a full ``[out, in]`` matrix (zero outside the parts)."""
        d = torch.zeros_like(self.base.weight)
        for (s, e), A, B in zip(self.parts, self.A, self.B):
            d[s:e] = self.scale * (B @ A)
        return d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        if len(self.parts) == 1 and self.parts[0] == (0, y.shape[-1]):
            return y + self.scale * (x @ self.A[0].t()) @ self.B[0].t()
        updates = [self.scale * (x @ A.t()) @ B.t() for A, B in zip(self.A, self.B)]
        pad = torch.zeros_like(y)
        for (s, e), u in zip(self.parts, updates):
            pad[..., s:e] = u
        return y + pad

    @torch.no_grad()
    def merged(self) -> nn.Linear:
        """One ``nn.Linear`` with weight ``W + (alpha / r) B A``: the same outputs, no extra cost
        at inference (the reason LoRA adds no latency)."""
        out_f, in_f = self.base.weight.shape
        lin = nn.Linear(in_f, out_f, bias=self.base.bias is not None).to(self.base.weight.device)
        lin.weight.copy_(self.base.weight + self.delta())
        if self.base.bias is not None:
            lin.bias.copy_(self.base.bias)
        return lin


def add_lora(model: nn.Module, r: int = 4, alpha: float = 8.0, targets: str = "qv", seed: int = 0) -> nn.Module:
    """Freeze ``model`` and add LoRA to every block's attention, in place. ``targets`` picks the
    projections among ``q``, ``k``, ``v`` (fused ``qkv``) and ``o`` (the output ``proj``)."""
    if not isinstance(targets, str) or not targets or set(targets) - set("qkvo"):
        raise ValueError(f"targets must be letters among 'qkvo', got {targets!r}")
    check_finite(alpha, "alpha")
    freeze(model)
    if any(isinstance(m, LoRALinear) for m in model.modules()):
        raise ValueError(f"{type(model).__name__} already has LoRA layers; merge_lora(model) first, or adapt a "
                         "fresh copy of the pre-trained model")
    for i, block in enumerate(_blocks(model)):
        attn = block.attn.sublayer if isinstance(block.attn, Adapted) else block.attn
        d = attn.proj.in_features
        parts = [(j * d, (j + 1) * d) for j, t in enumerate("qkv") if t in targets]
        if parts:
            attn.qkv = LoRALinear(attn.qkv, r, alpha, parts, seed=seed + i)
        if "o" in targets:
            attn.proj = LoRALinear(attn.proj, r, alpha, seed=seed + 1000 + i)
    return model


def merge_lora(model: nn.Module) -> nn.Module:
    """Replace every :class:`LoRALinear` in ``model`` by its merged ``nn.Linear``, in place."""
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, LoRALinear):
                setattr(module, name, child.merged())
    return model


# ----------------------------------------------------------------------------- prefix tuning


class PrefixGenerator(nn.Module):
    """Keys and values for ``n_prefix`` virtual tokens in each of ``n_layer`` layers:
    ``[n_layer, 2, n_prefix, d]``. With ``hidden`` they come from an MLP over a smaller
    ``[n_prefix, d]`` table (Li & Liang's reparameterisation, which they found trains more
    stably); without it they are the parameters themselves."""

    def __init__(self, n_layer: int, n_prefix: int, d_model: int, hidden: int | None = None, seed: int = 0):
        super().__init__()
        check_int(n_prefix, "n_prefix")
        check_optional_size(hidden, "hidden", "no reparameterisation MLP")
        torch.manual_seed(seed)
        self.shape = (n_layer, 2, n_prefix, d_model)
        if hidden:
            self.table = nn.Parameter(torch.randn(n_prefix, d_model) * 0.02)
            self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.Tanh(), nn.Linear(hidden, n_layer * 2 * d_model))
        else:
            self.table = nn.Parameter(torch.randn(*self.shape) * 0.02)
            self.mlp = None

    def forward(self) -> torch.Tensor:
        if self.mlp is None:
            return self.table
        L, _, P, d = self.shape
        return self.mlp(self.table).view(P, L, 2, d).permute(1, 2, 0, 3)


class PrefixAttention(nn.Module):
    """A frozen :class:`MultiHeadAttention` whose keys and values start with ``n_prefix``
    learned vectors: every query may attend to them, they attend to nothing (they are not
    positions of the sequence)."""

    def __init__(self, attn: MultiHeadAttention, generator: PrefixGenerator, layer: int):
        super().__init__()
        self.attn, self.layer = attn, layer
        self._generator = [generator]  # a reference, not a sub-module: the model owns it once

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False,
                cache=None, layer: int = 0) -> torch.Tensor:
        if cache is not None:
            raise ValueError("prefix tuning does not support a KV cache; generate without it")
        a = self.attn
        B, T, C = x.shape
        q, k, v = a.qkv(x).view(B, T, 3, a.n_head, a.head_dim).permute(2, 0, 3, 1, 4)
        pk, pv = self._generator[0]()[self.layer]  # [P, d] each
        P = pk.shape[0]
        pk = pk.view(P, a.n_head, a.head_dim).transpose(0, 1).expand(B, -1, -1, -1)
        pv = pv.view(P, a.n_head, a.head_dim).transpose(0, 1).expand(B, -1, -1, -1)
        k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
        if causal:
            mask = causal_mask(T, x.device)
        if mask is not None:
            mask = mask if mask.dim() == 3 else mask[None].expand(B, -1, -1)
            mask = torch.cat([torch.ones(B, T, P, dtype=torch.bool, device=x.device), mask], -1)[:, None]
        p = a.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return a.proj(y.transpose(1, 2).reshape(B, T, C))


class _WithPrefix(nn.Module):
    """The adapted encoder: owns the :class:`PrefixGenerator` and calls the encoder."""

    def __init__(self, encoder: nn.Module, generator: PrefixGenerator):
        super().__init__()
        self.encoder, self.prefix = encoder, generator
        self.config = getattr(encoder, "config", None)

    def forward(self, *args, **kwargs):
        return self.encoder(*args, **kwargs)


def add_prefix(model: nn.Module, n_prefix: int = 8, hidden: int | None = None, seed: int = 0) -> nn.Module:
    """Freeze ``model``, give every block's attention a learned prefix and return a wrapper
    that calls ``model`` and owns the prefix parameters."""
    freeze(model)
    blocks = _blocks(model)
    gen = PrefixGenerator(len(blocks), n_prefix, _d_model(model), hidden, seed).to(
        next(model.parameters()).device)
    for i, block in enumerate(blocks):
        block.attn = PrefixAttention(block.attn, gen, i)
    return _WithPrefix(model, gen)


# ----------------------------------------------------------------- prompt tuning and P-tuning


class PromptEncoder(nn.Module):
    """P-tuning's prompt encoder: a bidirectional LSTM and an MLP over ``n`` learned
    embeddings, so that the prompt vectors depend on each other (Liu et al. 2021)."""

    def __init__(self, n: int, d_model: int, hidden: int | None = None):
        super().__init__()
        h = hidden or d_model // 2
        self.embed = nn.Parameter(torch.randn(n, d_model) * 0.02)
        self.lstm = nn.LSTM(d_model, h, batch_first=True, bidirectional=True)
        self.mlp = nn.Sequential(nn.Linear(2 * h, d_model), nn.ReLU(), nn.Linear(d_model, d_model))

    def forward(self) -> torch.Tensor:
        return self.mlp(self.lstm(self.embed[None])[0])[0]


class SoftPromptEncoder(nn.Module):
    """A frozen BERT-style encoder with ``n_prompt`` trainable vectors inserted after ``[CLS]``
    at the embedding output. ``reparam=None`` is prompt tuning (the vectors are parameters,
    initialised from ``init_ids``' embeddings when given, Lester et al.'s "class label"
    initialisation); ``reparam="lstm"`` is P-tuning (a :class:`PromptEncoder` makes them).

    The output drops the prompt positions again, so a head reading ``[CLS]``, a ``[MASK]`` or the
    mean of the real tokens works unchanged. The real tokens keep their position ids.
    """

    def __init__(self, encoder: nn.Module, n_prompt: int = 8, reparam: str | None = None,
                 init_ids: list[int] | None = None, seed: int = 0):
        super().__init__()
        check_int(n_prompt, "n_prompt")
        if reparam not in (None, "lstm"):
            raise ValueError(f"reparam must be None (prompt tuning) or 'lstm' (P-tuning), got {reparam!r}")
        self.encoder, self.config, self.n_prompt = freeze(encoder), encoder.config, n_prompt
        d = encoder.config.d_model
        torch.manual_seed(seed)
        dev = next(encoder.parameters()).device
        if reparam == "lstm":
            self.prompt_encoder = PromptEncoder(n_prompt, d).to(dev)
        else:
            tok = encoder.embeddings.tok.weight
            if init_ids:
                check_ids(torch.as_tensor(init_ids), "init_ids", tok.shape[0], dim=1)
            init = tok[torch.tensor(init_ids)][:n_prompt] if init_ids else None
            if init is None or len(init) < n_prompt:  # the rest from random vocabulary rows
                idx = torch.randint(0, tok.shape[0], (n_prompt,))
                init = tok[idx] if init is None else torch.cat([init, tok[idx[len(init):]]])
            self.prompt = nn.Parameter(init.detach().clone())

    def prompts(self) -> torch.Tensor:
        """The ``[n_prompt, d]`` vectors (P-tuning: computed by the prompt encoder)."""
        return self.prompt_encoder() if hasattr(self, "prompt_encoder") else self.prompt

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        enc, P = self.encoder, self.n_prompt
        x = enc.embeddings(ids, segments)  # checks ids and segments
        check_like(attention_mask, "attention_mask", ids)
        B, T, _ = x.shape
        x = torch.cat([x[:, :1], self.prompts()[None].expand(B, -1, -1), x[:, 1:]], 1)
        m = torch.ones(B, T, dtype=torch.long, device=ids.device) if attention_mask is None else attention_mask
        m = torch.cat([m[:, :1], torch.ones(B, P, dtype=m.dtype, device=m.device), m[:, 1:]], 1)
        from ..transformer.attention import padding_mask

        mask = None if bool(m.all()) else padding_mask(m)
        for block in enc.blocks:
            x = block(x, mask)
        return torch.cat([x[:, :1], x[:, 1 + P:]], 1)


# ---------------------------------------------------------------------------- the dispatcher


def apply_method(encoder: nn.Module, method: str, *, seed: int = 0, **kw) -> nn.Module:
    """A **copy** of ``encoder`` adapted by ``method`` (one of :data:`METHODS`); ``"full"``
    leaves every parameter trainable. Keyword options: ``bottleneck`` (adapters), ``r``,
    ``alpha`` (LoRA), ``n_prefix``, ``hidden`` (prefix), ``n_prompt``, ``init_ids`` (prompt)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} is unknown; use one of {METHODS}")
    enc = copy.deepcopy(encoder)
    if method == "full":
        for p in enc.parameters():
            p.requires_grad_(True)
        return enc
    if method == "bitfit":
        return bitfit(enc)
    if method == "adapters":
        return add_adapters(enc, kw.get("bottleneck", 16), seed=seed)
    if method == "lora":
        return add_lora(enc, kw.get("r", 4), kw.get("alpha", 8.0), kw.get("targets", "qv"), seed=seed)
    if method == "prefix":
        return add_prefix(enc, kw.get("n_prefix", 8), kw.get("hidden"), seed=seed)
    if method == "prompt":
        return SoftPromptEncoder(enc, kw.get("n_prompt", 8), None, kw.get("init_ids"), seed=seed)
    return SoftPromptEncoder(enc, kw.get("n_prompt", 8), "lstm", seed=seed)


def count(model: nn.Module, trainable: bool | None = None) -> int:
    """Distinct parameters of ``model`` (``trainable=True``/``False``: only those that do / do not
    require gradients)."""
    ps = {id(p): p for p in model.parameters()}.values()
    return sum(p.numel() for p in ps if trainable is None or p.requires_grad == trainable)


def stored_params(model: nn.Module) -> int:
    """Parameters one task must keep after training: the trainable ones, except that a prompt
    encoder (P-tuning) or a prefix MLP (Li & Liang's reparameterisation) is replaced by the
    vectors it produces -- those are all inference needs."""
    n = count(model, trainable=True)
    for m in model.modules():
        if isinstance(m, PromptEncoder):
            n += m.embed.numel() - count(m, trainable=True)
        if isinstance(m, PrefixGenerator) and m.mlp is not None:
            n += math.prod(m.shape) - count(m, trainable=True)
    return n


def param_report(model: nn.Module, pretrained_params: int, bytes_per_param: int = 4) -> dict[str, float]:
    """What a task costs: trainable parameters, their share of the pre-trained model's
    ``pretrained_params``, and the bytes to store one task (only the trainable parameters --
    for full fine-tuning that is a whole copy of the model)."""
    n = count(model, trainable=True)
    return {"trainable": n, "share %": 100 * n / pretrained_params, "storage MB": n * bytes_per_param / 1e6}
