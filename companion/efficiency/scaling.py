"""Scaling laws in miniature: a family of GPTs, their losses, power-law fits, compute allocation.

* FLOPs: a training step costs about ``6 N`` floating-point operations per token, where ``N``
  is the number of parameters the token passes through (2 per multiply-add in the forward pass,
  twice that in the backward pass). :func:`flops_per_token` splits a GPT's cost into the
  non-embedding matrices (Kaplan et al.'s ``6 N``), the output layer and the attention scores;
  :func:`step_flops` counts one real step with PyTorch's ``FlopCounterMode`` (tested equal).
* The family: :class:`ModelSpec` sizes, :func:`train_family` trains each one on the same rows
  with the same batches (the runner chapter 10 can reuse) and records its learning curve.
* Fits: :func:`fit_power_law` fits ``L = (x_c / x)^alpha`` by least squares in log-log space
  (Kaplan et al. 2020's form for ``L(N)``, ``L(D)`` and ``L(C)``); :func:`compute_frontier` takes
  the lower envelope of all learning curves against compute; :func:`fit_allocation` fits the
  compute-optimal size ``N_opt = k C^a`` along it (Hoffmann et al. 2022's approach 1) and
  :func:`allocate` turns a budget into a size and a number of tokens -- the widget's callback.
"""

from __future__ import annotations

import copy
import html
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..device import get_device
from ..scale import pick
from ..train import TrainConfig, fit, make_optimizer
from ..transformer.blocks import count_parameters
from ..transformer.gpt import GPT, GPTConfig
from ..transformer.pretrain import lm_batches

KAPLAN_ALPHA_N = 0.076   # Kaplan et al. (2020), L(N) = (N_c / N)^alpha_N
KAPLAN_N_C = 8.8e13      # their N_c (non-embedding parameters)
KAPLAN_ALPHA_D = 0.095   # Kaplan et al. (2020), L(D) = (D_c / D)^alpha_D
CHINCHILLA_TOKENS_PER_PARAM = 20.0  # Hoffmann et al. (2022): D_opt ~ 20 N_opt


# ------------------------------------------------------------------------------ counting


def non_embedding_params(model: GPT) -> int:
    """Kaplan et al.'s ``N``: every parameter except the token and position embeddings (a tied
    output layer is the token embedding, so it is not counted either)."""
    n = count_parameters(model) - model.wte.weight.numel()
    if isinstance(model.wpe, torch.nn.Embedding):
        n -= model.wpe.weight.numel()
    if not model.config.tie_weights:
        n -= model.lm_head.weight.numel()
    return n


def matmul_params(config: GPTConfig) -> int:
    """Weights of the blocks' matrix products: ``n_layer (4 d^2 + 2 d d_ff)`` (``12 n_layer d^2``
    when ``d_ff = 4 d``): the ``N`` of ``6 N D`` (biases and norms add no multiply-adds)."""
    d = config.d_model
    return config.n_layer * (4 * d * d + 2 * d * config.d_ff)


def flops_per_token(config: GPTConfig, context: int | None = None) -> dict[str, float]:
    """Training FLOPs per token of a GPT, by part: ``{"6N", "output layer", "attention",
    "total"}``. ``6N`` uses :func:`matmul_params`; the output layer is ``6 V d``; attention
    scores and weighted sums cost ``6 n_layer n_ctx d`` (Kaplan et al.'s ``2 n_layer n_ctx d``
    forward: a causal query sees ``n_ctx / 2`` keys on average, 2 products of ``2 d`` FLOPs each)."""
    T = context or config.block_size
    out = {"6N": 6.0 * matmul_params(config), "output layer": 6.0 * config.vocab_size * config.d_model,
           "attention": 6.0 * config.n_layer * T * config.d_model}
    out["total"] = sum(out.values())
    return out


def step_flops(model: GPT, batch: torch.Tensor) -> int:
    """FLOPs of one forward and backward pass of ``model.loss(batch)`` as counted by
    ``torch.utils.flop_counter.FlopCounterMode`` (matrix products only; on a CPU it does not
    count the fused attention kernel)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model.loss(batch).backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


# ------------------------------------------------------------------------------ the family


@dataclass(frozen=True)
class ModelSpec:
    """One member of the family."""

    d_model: int
    n_layer: int
    n_head: int

    @property
    def name(self) -> str:
        return f"d{self.d_model}-L{self.n_layer}"

    def config(self, vocab_size: int, block_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=block_size, n_layer=self.n_layer, n_head=self.n_head,
                         d_model=self.d_model)


@dataclass(frozen=True)
class FamilyPlan:
    """Everything the scaling study changes with ``BOOK_SCALE``."""

    specs: tuple[ModelSpec, ...]
    budgets: tuple[int, ...]  # token budgets of the grid (the largest: every model's main run)
    batch_size: int
    block_size: int
    vocab_size: int      # byte-level BPE tokens
    corpus_chars: int    # characters of the Part II corpus tokenised
    tokenizer_chars: int  # characters the byte-level BPE is trained on

    @property
    def tokens(self) -> int:
        return max(self.budgets)


def family_plan(scale: str | None = None) -> FamilyPlan:
    """The family per scale. ``laptop``: five sizes of 2-layer models (non-embedding parameters
    from ~6.6 thousand to ~0.1 million), each trained once to 400 thousand tokens with
    cooled-down branches at 50, 100 and 200 thousand, in batches of 8 x 64 tokens (twice the
    steps of batches of 16 cost 20 % more CPU and took every size further: 4.86 against 5.04
    nats for the largest, measured); ``gpu``: eight sizes up to ~25 million
    and up to 10 million tokens (a preset, not run in this book's stored outputs)."""
    m = ModelSpec
    return pick(
        ci=FamilyPlan((m(8, 1, 2), m(16, 1, 2), m(24, 1, 2)), (1_536, 3_072, 6_144), 16, 32, 512, 120_000,
                      40_000),
        laptop=FamilyPlan((m(16, 2, 2), m(24, 2, 2), m(32, 2, 4), m(48, 2, 4), m(64, 2, 4)),
                          (51_200, 102_400, 204_800, 409_600), 8, 64, 1024, 2_000_000, 333_333),
        gpu=FamilyPlan((m(32, 2, 4), m(64, 2, 4), m(96, 3, 4), m(128, 4, 4), m(192, 4, 6), m(256, 6, 8),
                        m(384, 6, 8), m(512, 8, 8)), (1_250_000, 2_500_000, 5_000_000, 10_000_000), 64, 128,
                       8192, 100_000_000, 5_000_000),
        scale=scale)


@dataclass
class FamilyRun:
    """One trained member: its size, learning curve and held-out loss."""

    spec: ModelSpec
    n_params: int                    # non-embedding (Kaplan's N)
    tokens_per_step: int
    step_loss: list[float]
    heldout_loss: float
    wall_s: float
    flops_per_token: float           # 6 N (matmul parameters)
    model: GPT | None = field(default=None, repr=False)
    budget_losses: dict[int, float] = field(default_factory=dict)  # tokens -> held-out loss after a cool-down
    lr: float = float("nan")

    @property
    def tokens(self) -> np.ndarray:
        """Tokens seen after each step."""
        return self.tokens_per_step * np.arange(1, len(self.step_loss) + 1)

    @property
    def compute(self) -> np.ndarray:
        """Training compute ``6 N D`` after each step."""
        return self.flops_per_token * self.tokens


@torch.no_grad()
def heldout_loss(model: GPT, rows: torch.Tensor, batch_size: int = 64) -> float:
    """Mean next-token loss over ``[n, block + 1]`` held-out rows."""
    model.eval()
    dev = model.device
    total, n = 0.0, 0
    for i in range(0, len(rows), batch_size):
        b = rows[i:i + batch_size].to(dev)
        total += float(model.loss(b)) * b[:, 1:].numel()
        n += b[:, 1:].numel()
    model.train()
    return total / n


def scheduled_loss(optimizer: torch.optim.Optimizer, steps: int, lr: float, warmup: float = 0.05,
                   floor: float = 0.1):
    """A ``loss_fn`` for :func:`companion.train.fit` that first sets the learning rate of the
    step it is about to take: linear warm-up over ``warmup`` of the steps, then a cosine decay
    to ``floor * lr`` at the last step (Kaplan et al.'s and Chinchilla's schedule shape)."""
    state = {"step": 0}
    n_warm = max(1, int(warmup * steps))

    def loss_fn(model, batch):
        t = state["step"]
        if t < n_warm:
            f = (t + 1) / n_warm
        else:
            f = floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, (t - n_warm) / max(1, steps - 1 - n_warm))))
        for g in optimizer.param_groups:
            g["lr"] = lr * f
        state["step"] += 1
        return model.loss(batch)

    return loss_fn


def train_family(specs: Sequence[ModelSpec], train_rows: torch.Tensor, heldout_rows: torch.Tensor, vocab_size: int,
                 *, tokens: int, batch_size: int, lr: float, seed: int = 0, device: str | None = None,
                 schedule: str = "constant", keep_models: bool = False, progress: bool = False) -> list[FamilyRun]:
    """Train one GPT per spec on ``train_rows`` (``[n, block + 1]`` token ids, from
    :func:`~companion.transformer.pretrain.pack_lm`) for ``tokens`` tokens each, with the same
    seed, batches and constant learning rate (AdamW), then score ``heldout_rows``.

    ``schedule="constant"`` keeps the learning rate at ``lr``, so every point of a learning
    curve is a fair "what this much compute buys" (the frontier needs that); ``"cosine"`` warms
    it up and decays it to a tenth by the last step (:func:`scaling.scheduled_loss`). Every model sees exactly the
    same token stream, so the sizes differ in nothing else. When
    ``tokens`` exceeds the rows, the stream repeats (a second epoch) -- avoid that for a clean
    ``L(N)``: the training loss then stops estimating the held-out loss."""
    if train_rows.dim() != 2 or heldout_rows.dim() != 2:
        raise ValueError("train_rows and heldout_rows must be [n, block + 1] token-id tensors (use pack_lm)")
    block = train_rows.shape[1] - 1
    if int(train_rows.max()) >= vocab_size:
        raise ValueError(f"token id {int(train_rows.max())} is outside the vocabulary of {vocab_size}")
    per_step = batch_size * block
    steps = tokens // per_step
    if steps < 1:
        raise ValueError(f"{tokens} tokens do not fill one batch of {batch_size} x {block}; train on more tokens")
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    runs = []
    for spec in specs:
        model = GPT(spec.config(vocab_size, block), seed=seed)
        cfg = TrainConfig(epochs=10_000, max_steps=steps, lr=lr, optimizer="adamw", weight_decay=0.0, seed=seed,
                          device=device, progress=progress)
        model.to(get_device(device))
        opt = make_optimizer(model.parameters(), cfg)
        loss_fn = scheduled_loss(opt, steps, lr) if schedule == "cosine" else None
        t0 = time.perf_counter()
        hist = fit(model, lm_batches(train_rows, batch_size, seed), config=cfg, optimizer=opt, loss_fn=loss_fn)
        wall = time.perf_counter() - t0
        runs.append(FamilyRun(spec, non_embedding_params(model), per_step, list(hist.step_loss),
                              heldout_loss(model, heldout_rows), wall, 6.0 * matmul_params(model.config),
                              model if keep_models else None))
    return runs


def kaplan_lr(n_params: int) -> float:
    """Kaplan et al.'s learning rate for a model of ``N`` non-embedding parameters (their
    appendix D.6): ``0.003239 - 0.0001395 log N`` -- larger models take smaller steps."""
    if n_params < 1:
        raise ValueError(f"n_params must be positive, got {n_params}")
    return 0.003239 - 0.0001395 * math.log(n_params)


def wsd_factor(t: int, n_warm: int, decay_start: int, end: int) -> float:
    """The learning-rate factor of step ``t`` (0-based) of a warm-up/stable/decay schedule:
    linear warm-up over ``n_warm`` steps, constant, then linear decay from ``decay_start`` to
    (almost) 0 at step ``end``."""
    f = min(1.0, (t + 1) / max(1, n_warm))
    if t >= decay_start:
        f *= (end - t) / max(1, end - decay_start)
    return f


@dataclass
class _WSD:
    """One model's steps under :func:`wsd_factor` (``train_grid``'s inner loop)."""

    model: GPT
    opt: torch.optim.Optimizer
    stream: list[torch.Tensor]
    lr: float
    n_warm: int
    dev: torch.device

    def run(self, t0: int, t1: int, decay_start: int, end: int, losses: list[float] | None) -> None:
        self.model.train()
        for t in range(t0, t1):
            for g in self.opt.param_groups:
                g["lr"] = self.lr * wsd_factor(t, self.n_warm, decay_start, end)
            loss = self.model.loss(self.stream[t].to(self.dev))
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            if losses is not None:
                losses.append(loss.detach().item())


def train_grid(specs: Sequence[ModelSpec], train_rows: torch.Tensor, heldout_rows: torch.Tensor, vocab_size: int,
               *, budgets: Sequence[int], batch_size: int, lr: float | None = None, lr_scale: float = 1.0,
               cooldown: float = 0.2,
               warmup: float = 0.05, seed: int = 0, device: str | None = None) -> list[FamilyRun]:
    """A grid of sizes x token budgets for the price of one run per size.

    Each model trains once for the largest budget at a constant learning rate (after a
    warm-up; ``lr=None``: :func:`kaplan_lr` per size, times ``lr_scale``). At each smaller budget ``D`` a *branch*
    copies the model and its optimizer ``cooldown * D`` tokens before ``D``, decays the learning
    rate linearly to zero by ``D``, scores the held-out rows and is thrown away; the main run
    ends with the same cool-down (the warm-up/stable/decay schedule of Hägele et al. 2024: a
    decayed model at every budget, nearly as good as a cosine schedule fitted to that budget,
    without training from scratch for each). ``budget_losses`` maps tokens to held-out loss;
    ``step_loss`` is the main run's training loss (constant rate until its own cool-down)."""
    if train_rows.dim() != 2 or heldout_rows.dim() != 2:
        raise ValueError("train_rows and heldout_rows must be [n, block + 1] token-id tensors (use pack_lm)")
    if int(train_rows.max()) >= vocab_size:
        raise ValueError(f"token id {int(train_rows.max())} is outside the vocabulary of {vocab_size}")
    if not 0 < cooldown < 1:
        raise ValueError(f"cooldown is a fraction of each budget in (0, 1), got {cooldown}")
    block = train_rows.shape[1] - 1
    per_step = batch_size * block
    steps = sorted({int(D) // per_step for D in budgets})
    if not steps or steps[0] < 2:
        raise ValueError(f"every budget must fill at least 2 batches of {batch_size} x {block} tokens, got {budgets}")
    s_max, dev = steps[-1], get_device(device)
    make = lm_batches(train_rows, batch_size, seed)
    stream: list[torch.Tensor] = []
    epoch = 0
    while len(stream) < s_max:  # a second epoch only if the budget exceeds the rows
        stream += make(epoch)
        epoch += 1
    n_warm = max(1, int(warmup * s_max))
    runs = []
    for spec in specs:
        model = GPT(spec.config(vocab_size, block), seed=seed).to(dev)
        n = non_embedding_params(model)
        lr_s = lr_scale * kaplan_lr(n) if lr is None else lr
        opt = torch.optim.AdamW(model.parameters(), lr=lr_s, weight_decay=0.0)
        losses: list[float] = []
        budget_losses: dict[int, float] = {}

        t_start, t = time.perf_counter(), 0
        sched = _WSD(model, opt, stream, lr_s, n_warm, dev)
        for s in steps:
            start = s - max(1, round(cooldown * s))
            sched.run(t, start, s_max + 1, s_max + 1, losses)  # stable phase of the main run
            t = start
            if s == s_max:
                sched.run(start, s, start, s, losses)
            else:
                snap = copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict())
                sched.run(start, s, start, s, None)
                budget_losses[s * per_step] = heldout_loss(model, heldout_rows)
                model.load_state_dict(snap[0])
                opt.load_state_dict(snap[1])
        budget_losses[s_max * per_step] = heldout_loss(model, heldout_rows)
        runs.append(FamilyRun(spec, n, per_step, losses, budget_losses[s_max * per_step],
                              time.perf_counter() - t_start, 6.0 * matmul_params(model.config), None,
                              budget_losses, lr_s))
    return runs


def grid_frame(runs: Sequence[FamilyRun]) -> pd.DataFrame:
    """Held-out loss per model (rows, with ``N``) and token budget (columns)."""
    frame = pd.DataFrame({r.spec.name: r.budget_losses for r in runs}).T
    frame.columns = [f"D={c:,}" for c in frame.columns]
    frame.insert(0, "N (non-emb.)", [r.n_params for r in runs])
    frame.insert(1, "lr", [round(r.lr, 5) for r in runs])
    return frame


def converged(runs: Sequence[FamilyRun], tol: float = 0.02) -> np.ndarray:
    """Per model: did the last doubling (or whatever the last step of the budgets is) of the
    tokens lower the held-out loss by less than ``tol`` (relative)? A model that still gains
    has not reached its ``L(N)``."""
    out = []
    for r in runs:
        ds = sorted(r.budget_losses)
        if len(ds) < 2:
            raise ValueError("converged() needs at least two budgets per model (train_grid)")
        a, b = r.budget_losses[ds[-2]], r.budget_losses[ds[-1]]
        out.append((a - b) / a < tol)
    return np.array(out)


@dataclass(frozen=True)
class JointLaw:
    """Kaplan et al.'s eq. 1.5, ``L(N, D) = ((N_c / N)^(alpha_N / alpha_D) + D_c / D)^alpha_D``:
    ``L(N)`` is its limit of unlimited data, ``L(D)`` of an unlimited model."""

    n_c: float
    d_c: float
    alpha_n: float
    alpha_d: float
    alpha_n_se: float
    alpha_d_se: float

    def __call__(self, N, D) -> np.ndarray:
        N, D = np.asarray(N, dtype=float), np.asarray(D, dtype=float)
        return ((self.n_c / N) ** (self.alpha_n / self.alpha_d) + self.d_c / D) ** self.alpha_d


def fit_joint(N, D, L) -> JointLaw:
    """Least squares of ``log L`` under :class:`JointLaw` (parameters ``log N_c``, ``log D_c``,
    ``alpha_N``, ``alpha_D``); standard errors from the Jacobian at the optimum."""
    from scipy.optimize import least_squares

    N, D, L = (np.asarray(v, dtype=float) for v in (N, D, L))
    if not (N.shape == D.shape == L.shape) or N.ndim != 1 or len(N) < 5:
        raise ValueError(f"N, D and L must be 1-D of the same length >= 5, got {N.shape}, {D.shape}, {L.shape}")
    if np.unique(N).size < 2 or np.unique(D).size < 2:
        raise ValueError("the joint law needs at least two sizes and two token budgets")
    lN, lD, lL = np.log(N), np.log(D), np.log(L)

    def resid(p):
        lnc, ldc, an, ad = p
        return ad * np.logaddexp((an / ad) * (lnc - lN), ldc - lD) - lL

    guess = fit_power_law(N, L).alpha or 0.05
    best = None
    for ad0 in (0.05, 0.1, 0.3):
        p0 = [np.log(N.max()) + 5.0, np.log(D.max()) + 2.0, max(guess, 0.01), ad0]
        r = least_squares(resid, p0, bounds=([-50, -50, 1e-4, 1e-4], [200, 200, 5, 5]))
        if best is None or r.cost < best.cost:
            best = r
    J, dof = best.jac, max(1, len(L) - 4)
    sigma2 = 2 * best.cost / dof
    try:
        cov = np.linalg.inv(J.T @ J) * sigma2
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        se = np.full(4, np.nan)
    lnc, ldc, an, ad = best.x
    return JointLaw(float(np.exp(lnc)), float(np.exp(ldc)), float(an), float(ad), float(se[2]), float(se[3]))


def family_frame(runs: Sequence[FamilyRun]) -> pd.DataFrame:
    """One row per model: sizes, N, tokens, compute, held-out loss, wall seconds."""
    return pd.DataFrame([{"model": r.spec.name, "d_model": r.spec.d_model, "n_layer": r.spec.n_layer,
                          "N (non-emb.)": r.n_params, "tokens": int(r.tokens[-1]), "C = 6ND": float(r.compute[-1]),
                          "held-out loss": round(r.heldout_loss, 4), "wall s": round(r.wall_s, 1)}
                         for r in runs]).set_index("model")


# ------------------------------------------------------------------------------ fits


@dataclass(frozen=True)
class PowerLaw:
    """``y = (x_c / x)^alpha``; ``alpha_se`` is the least-squares standard error of alpha."""

    x_c: float
    alpha: float
    alpha_se: float = float("nan")

    def __call__(self, x) -> np.ndarray | float:
        return (self.x_c / np.asarray(x, dtype=float)) ** self.alpha

    def inverse(self, y) -> np.ndarray | float:
        """The ``x`` at which the law reaches ``y``."""
        return self.x_c / np.asarray(y, dtype=float) ** (1 / self.alpha)


def _check_xy(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError(f"x and y must be 1-D of the same length >= 2, got shapes {x.shape} and {y.shape}")
    if not (np.all(x > 0) and np.all(y > 0) and np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a power law is fitted in log-log space: x and y must be positive and finite")
    if np.ptp(np.log(x)) == 0:
        raise ValueError("all x are equal: a slope cannot be fitted")
    return x, y


def fit_power_law(x, y) -> PowerLaw:
    """Least squares of ``log y = alpha log x_c - alpha log x``: slope ``-alpha``."""
    x, y = _check_xy(x, y)
    lx, ly = np.log(x), np.log(y)
    A = np.stack([np.ones_like(lx), lx], 1)
    (b0, b1), *_ = np.linalg.lstsq(A, ly, rcond=None)
    alpha = -b1
    se = float("nan")
    if len(x) > 2:
        resid = ly - A @ np.array([b0, b1])
        se = float(np.sqrt(resid @ resid / (len(x) - 2) / ((lx - lx.mean()) ** 2).sum()))
    with np.errstate(over="ignore"):  # a nearly flat fit puts x_c beyond float range: inf, said quietly
        x_c = float(np.exp(b0 / alpha)) if alpha != 0 else float("inf")
    return PowerLaw(x_c, float(alpha), se)


def leave_one_out(x, y) -> np.ndarray:
    """The exponent refitted with each point left out in turn (a spread that needs no reruns)."""
    x, y = _check_xy(x, y)
    if len(x) < 3:
        raise ValueError("leave-one-out needs at least 3 points")
    keep = ~np.eye(len(x), dtype=bool)
    return np.array([fit_power_law(x[k], y[k]).alpha for k in keep])


def smooth_curve(values: Sequence[float], k: int) -> np.ndarray:
    """Trailing running mean over ``k`` steps (the first ``k - 1`` points average what exists)."""
    v = np.asarray(values, dtype=float)
    c = np.cumsum(np.insert(v, 0, 0.0))
    i = np.arange(1, len(v) + 1)
    lo = np.maximum(i - k, 0)
    return (c[i] - c[lo]) / (i - lo)


def compute_frontier(runs: Sequence[FamilyRun], n_points: int = 40, smooth: int = 20,
                     skip_steps: int = 10) -> pd.DataFrame:
    """The lower envelope of the smoothed learning curves against compute ``C = 6 N D``:
    at each of ``n_points`` log-spaced budgets, the lowest loss any model reached with that
    much compute, and which model (``N``) it was. The budgets start at the smallest model's
    ``skip_steps``-th step (the first steps are noise) and end at the largest budget any model
    spent; a budget beyond a model's last step is out of that model's reach (so where a small
    model still wins at its last step, the frontier jumps up: train longer)."""
    if not runs:
        raise ValueError("no runs: train a family first")
    curves = [(r, r.compute, smooth_curve(r.step_loss, smooth)) for r in runs]
    lo = min(c[min(skip_steps, len(c) - 1)] for _, c, _ in curves)
    hi = max(c[-1] for _, c, _ in curves)
    if not hi > lo:
        raise ValueError("the learning curves do not span a range of compute; train for more steps")
    rows = []
    for C in np.geomspace(lo, hi, n_points):
        best = None
        for r, c, L in curves:
            if c[0] <= C <= c[-1]:
                loss = float(np.interp(np.log(C), np.log(c), L))
                if best is None or loss < best[0]:
                    best = (loss, r)
        if best is not None:
            rows.append({"C": float(C), "loss": best[0], "N": best[1].n_params, "model": best[1].spec.name})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Allocation:
    """Compute-optimal allocation fitted on our frontier: ``N_opt = k C^a`` and
    ``L(C) = (C_c / C)^alpha_C`` (``C`` in FLOPs)."""

    k: float
    a: float
    loss_law: PowerLaw
    c_range: tuple[float, float]

    def n_opt(self, C) -> np.ndarray | float:
        return self.k * np.asarray(C, dtype=float) ** self.a


def fit_allocation(frontier: pd.DataFrame) -> Allocation:
    """Fit ``log N_opt = log k + a log C`` and the frontier's ``L(C)`` power law."""
    if len(frontier) < 3 or frontier["N"].nunique() < 2:
        raise ValueError("the frontier needs at least 3 budgets and 2 different winning sizes to fit N_opt(C)")
    C, N = frontier["C"].to_numpy(), frontier["N"].to_numpy(dtype=float)
    a, logk = np.polyfit(np.log(C), np.log(N), 1)
    return Allocation(float(np.exp(logk)), float(a), fit_power_law(C, frontier["loss"].to_numpy()),
                      (float(C.min()), float(C.max())))


def allocate(C: float, alloc: Allocation) -> dict[str, float]:
    """For a compute budget ``C`` (FLOPs): the fitted best size ``N``, tokens ``D = C / 6N``,
    tokens per parameter, the predicted loss, and Chinchilla's rule-of-thumb split
    (``D = 20 N``) beside it. ``extrapolated`` is 1.0 when ``C`` is outside the fitted range."""
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) or not math.isfinite(C) or C <= 0:
        raise ValueError(f"the compute budget must be a positive number of FLOPs, got {C!r}")
    N = float(alloc.n_opt(C))
    D = C / (6 * N)
    n_ch = math.sqrt(C / (6 * CHINCHILLA_TOKENS_PER_PARAM))
    lo, hi = alloc.c_range
    return {"C": float(C), "N": N, "D": D, "tokens_per_param": D / N, "loss": float(alloc.loss_law(C)),
            "chinchilla_N": n_ch, "chinchilla_D": CHINCHILLA_TOKENS_PER_PARAM * n_ch,
            "extrapolated": float(not lo <= C <= hi)}


def allocation_html(alloc: Allocation, log10_C: float) -> str:
    """The widget's text for a budget of ``10**log10_C`` FLOPs, or the error message."""
    try:
        if not isinstance(log10_C, (int, float)) or not math.isfinite(log10_C):
            raise ValueError(f"log10 of the budget must be a finite number, got {log10_C!r}")
        r = allocate(10.0 ** log10_C, alloc)
    except (ValueError, TypeError, OverflowError) as err:
        return f"<p><b>Cannot allocate:</b> {html.escape(str(err))}</p>"
    note = " <i>(outside the fitted range: an extrapolation)</i>" if r["extrapolated"] else ""
    return (f"<p>Budget C = {r['C']:.2e} FLOPs{note}<br>"
            f"our fit: <b>N = {r['N']:,.0f}</b> non-embedding parameters, <b>D = {r['D']:,.0f}</b> tokens "
            f"({r['tokens_per_param']:.1f} tokens per parameter), predicted loss {r['loss']:.3f}<br>"
            f"Chinchilla's rule (20 tokens per parameter): N = {r['chinchilla_N']:,.0f}, "
            f"D = {r['chinchilla_D']:,.0f}</p>")


@dataclass
class BudgetWidget:
    """A log-scale budget slider and the allocation it implies (display the object itself)."""

    alloc: Allocation
    budget: object
    output: object
    box: object
    calls: int = 0

    def update(self, *_: object) -> None:
        self.calls += 1
        self.output.value = allocation_html(self.alloc, float(self.budget.value))

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def budget_widget(alloc: Allocation, log10_C: float | None = None) -> BudgetWidget:
    """Pick ``log10`` of a compute budget; see the predicted best size and tokens from our fit."""
    import ipywidgets as w

    lo, hi = (math.log10(c) for c in alloc.c_range)
    start = (lo + hi) / 2 if log10_C is None else log10_C
    slider = w.FloatSlider(value=start, min=math.floor(lo) - 2, max=math.ceil(hi) + 4, step=0.1,
                           description="log10 C", continuous_update=False)
    out = w.HTML()
    bw = BudgetWidget(alloc, slider, out, w.VBox([slider, out]))
    slider.observe(bw.update, names="value")
    bw.update()
    return bw


# ------------------------------------------------------------------------------ stored sweeps


SWEEP_FILE = Path(__file__).resolve().parent / "scaling_sweep_cpu.json"


def cpu_sweep_plan() -> FamilyPlan:
    """The extended sweep run once on this book's CPU by ``benchmarks/ch09_scaling_sweep_cpu.py``
    and stored (the notebook reads it; it never reruns it): ``laptop``'s plan -- the same
    tokenizer, rows, batches, budgets and seed -- with three more 2-layer sizes, d80, d96 and
    d128, trained first (non-embedding parameters ~6.6 thousand to ~0.4 million: 60x). Training
    is deterministic on one CPU thread, so the five sizes it shares with ``laptop`` must come
    out as the notebook's live run does (the notebook checks). About 140 CPU-seconds."""
    p = family_plan("laptop")
    m = ModelSpec
    return FamilyPlan((m(80, 2, 4), m(96, 2, 4), m(128, 2, 4), *p.specs), p.budgets, p.batch_size, p.block_size,
                      p.vocab_size, p.corpus_chars, p.tokenizer_chars)


def sweep_record(runs: Sequence[FamilyRun], plan: FamilyPlan, **meta: object) -> dict:
    """A JSON-able record of a grid run: the plan, ``meta`` (command, date, seed, CPU seconds,
    device, ...) and per size its ``N``, rate, held-out loss per budget and training curve
    (rounded to 4 decimals). :func:`runs_from_record` reads it back."""
    return {"meta": dict(meta),
            "plan": {"budgets": list(plan.budgets), "batch_size": plan.batch_size, "block_size": plan.block_size,
                     "vocab_size": plan.vocab_size, "corpus_chars": plan.corpus_chars,
                     "tokenizer_chars": plan.tokenizer_chars},
            "runs": [{"d_model": r.spec.d_model, "n_layer": r.spec.n_layer, "n_head": r.spec.n_head,
                      "n_params": r.n_params, "lr": r.lr, "tokens_per_step": r.tokens_per_step,
                      "flops_per_token": r.flops_per_token, "wall_s": round(r.wall_s, 2),
                      "budget_losses": {str(k): v for k, v in r.budget_losses.items()},
                      "step_loss": [round(x, 4) for x in r.step_loss]} for r in runs]}


def runs_from_record(record: dict) -> list[FamilyRun]:
    """The :class:`FamilyRun` list of a :func:`sweep_record` (models not included), for the fits,
    smallest ``N`` first (whatever order they were trained in)."""
    try:
        out = []
        for r in record["runs"]:
            bl = {int(k): float(v) for k, v in r["budget_losses"].items()}
            out.append(FamilyRun(ModelSpec(r["d_model"], r["n_layer"], r["n_head"]), int(r["n_params"]),
                                 int(r["tokens_per_step"]), list(r["step_loss"]), bl[max(bl)], float(r["wall_s"]),
                                 float(r["flops_per_token"]), None, bl, float(r["lr"])))
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not a sweep record (see scaling.sweep_record): {err!r}") from None
    if not out:
        raise ValueError("the sweep record holds no runs")
    return sorted(out, key=lambda r: r.n_params)


def stored_sweep(path=None) -> tuple[list[FamilyRun], dict]:
    """The stored CPU sweep (:data:`SWEEP_FILE`): its runs and its ``meta`` (how it was made)."""
    p = Path(path) if path is not None else SWEEP_FILE
    if not p.exists():
        raise FileNotFoundError(f"{p} is missing: run `python benchmarks/ch09_scaling_sweep_cpu.py {p}` to make it")
    record = json.loads(p.read_text(encoding="utf-8"))
    return runs_from_record(record), {**record["meta"], "plan": record["plan"]}


def compare_fits(families: dict[str, Sequence[FamilyRun]]) -> pd.DataFrame:
    """One row per family (e.g. the live run and the stored sweep): sizes, their span, tokens,
    ``alpha_N`` at the largest budget with its standard error and leave-one-out range, and how
    many sizes converged (:func:`converged`)."""
    rows = []
    for name, runs in families.items():
        N = np.array([r.n_params for r in runs], dtype=float)
        L = np.array([r.heldout_loss for r in runs])
        law, loo = fit_power_law(N, L), leave_one_out(N, L)
        rows.append({"family": name, "sizes": len(runs), "N min": int(N.min()), "N max": int(N.max()),
                     "span": float(N.max() / N.min()), "tokens D": int(max(runs[0].budget_losses)),
                     "alpha_N": law.alpha, "SE": law.alpha_se, "LOO min": float(loo.min()),
                     "LOO max": float(loo.max()), "converged": int(converged(runs).sum())})
    return pd.DataFrame(rows).set_index("family")


def shared_differences(runs: Sequence[FamilyRun], other: Sequence[FamilyRun]) -> list[float]:
    """``|loss - loss'|`` at the largest budget for every size (by name) that both families
    trained: zero up to rounding when they ran the same code, data and seed."""
    theirs = {r.spec.name: r.heldout_loss for r in other}
    return [abs(theirs[r.spec.name] - r.heldout_loss) for r in runs if r.spec.name in theirs]


def plot_sweeps(families: dict[str, Sequence[FamilyRun]]):
    """Two log-log panels: ``L(N)`` at the largest budget for each family with its fitted line
    (and Kaplan's slope through the largest model), and ``alpha_N`` fitted at each budget with
    two standard errors (still rising with ``D``: not converged)."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10.4, 3.8))
    for i, (name, runs) in enumerate(families.items()):
        N = np.array([r.n_params for r in runs], dtype=float)
        L = np.array([r.heldout_loss for r in runs])
        law = fit_power_law(N, L)
        xs = np.geomspace(N.min() / 1.3, N.max() * 1.3, 50)
        a1.loglog(N, L, "os"[i % 2], mfc="none" if i else None, color=f"C{i}", ms=6 + 2 * i, label=name)
        a1.loglog(xs, law(xs), "-", color=f"C{i}", lw=1, label=f"fit: alpha_N = {law.alpha:.3f}")
        by = alpha_by_budget(runs)
        a2.errorbar(by.index * (1.03 if i else 1), by["alpha_N"], yerr=2 * by["SE"], fmt="os"[i % 2] + "-",
                    color=f"C{i}", capsize=3, label=name)
    N, L = max((r.n_params, r.heldout_loss) for runs in families.values() for r in runs)
    a1.loglog(xs, L * (N / xs) ** KAPLAN_ALPHA_N, "--", color="0.5", label=f"Kaplan's slope {KAPLAN_ALPHA_N}")
    a1.set(xlabel="non-embedding parameters N", ylabel="held-out loss (nats per token)", title="L(N)")
    a2.axhline(KAPLAN_ALPHA_N, color="0.5", ls="--", lw=1, label="Kaplan et al.")
    a2.set(xscale="log", xlabel="training tokens D", ylabel="fitted alpha_N (± 2 SE)", title="alpha_N by budget")
    a1.legend(fontsize=7)
    a2.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ figure


def d_laws(runs: Sequence[FamilyRun]) -> dict[str, PowerLaw]:
    """``L(D)`` per model: a power law through its held-out losses at the grid's budgets."""
    out = {}
    for r in runs:
        ds = sorted(r.budget_losses)
        if len(ds) < 3:
            raise ValueError("an L(D) fit with a spread needs at least three budgets per model (train_grid)")
        out[r.spec.name] = fit_power_law(ds, [r.budget_losses[d] for d in ds])
    return out


def alpha_by_budget(runs: Sequence[FamilyRun]) -> pd.DataFrame:
    """``alpha_N`` (and its standard error) of ``L(N)`` fitted at each token budget of the grid:
    if the exponent still grows with ``D``, the largest budget has not reached ``L(N)``."""
    budgets = sorted(runs[0].budget_losses)
    N = [r.n_params for r in runs]
    rows = []
    for d in budgets:
        f = fit_power_law(N, [r.budget_losses[d] for r in runs])
        rows.append({"tokens D": d, "alpha_N": round(f.alpha, 4), "SE": round(f.alpha_se, 4)})
    return pd.DataFrame(rows).set_index("tokens D")


def plot_scaling(runs: Sequence[FamilyRun], law: PowerLaw, frontier: pd.DataFrame, alloc: Allocation,
                 smooth: int = 20, laws_d: dict[str, PowerLaw] | None = None):
    """Log-log panels: held-out loss against N with the fitted line (Kaplan's slope for
    comparison); with ``laws_d`` (and a grid of budgets) the loss against tokens D per model
    with its fit; every learning curve against compute with the frontier and its fit."""
    import matplotlib.pyplot as plt

    n_pan = 3 if laws_d else 2
    fig, axes = plt.subplots(1, n_pan, figsize=(5.2 * n_pan, 4))
    a1, a2 = axes[0], axes[-1]
    N = np.array([r.n_params for r in runs], dtype=float)
    L = np.array([r.heldout_loss for r in runs])
    budgets = sorted(runs[0].budget_losses) if laws_d else []
    for j, d in enumerate(budgets[:-1]):
        a1.loglog(N, [r.budget_losses[d] for r in runs], "o", mfc="none", color=plt.cm.Greys(0.3 + 0.5 * j / len(budgets)),
                  ms=4, label=f"D = {d:,}" if j in (0, len(budgets) - 2) else None)
    a1.loglog(N, L, "o", color="C0", label=f"our models, D = {int(runs[0].tokens[-1]):,}")
    xs = np.geomspace(N.min() / 1.5, N.max() * 1.5, 50)
    a1.loglog(xs, law(xs), "-", color="C0", label=f"fit: alpha_N = {law.alpha:.3f}")
    kap = L[-1] * (N[-1] / xs) ** KAPLAN_ALPHA_N
    a1.loglog(xs, kap, "--", color="0.5", label=f"Kaplan's slope {KAPLAN_ALPHA_N} (through our largest)")
    a1.set(xlabel="non-embedding parameters N", ylabel="held-out loss (nats per token)", title="L(N)")
    a1.legend(fontsize=7)
    if laws_d:
        a3 = axes[1]
        for i, r in enumerate(runs):
            c = plt.cm.viridis(i / max(1, len(runs) - 1))
            ds = np.array(sorted(r.budget_losses), dtype=float)
            a3.loglog(ds, [r.budget_losses[int(d)] for d in ds], "o", color=c, ms=4)
            lw = laws_d[r.spec.name]
            a3.loglog(ds, lw(ds), "-", color=c, lw=1, label=f"{r.spec.name}: alpha_D = {lw.alpha:.3f}")
        a3.set(xlabel="training tokens D (cooled down at each)", ylabel="held-out loss", title="L(D) per size")
        a3.legend(fontsize=7)
    for i, r in enumerate(runs):
        a2.loglog(r.compute, smooth_curve(r.step_loss, smooth), color=plt.cm.viridis(i / max(1, len(runs) - 1)),
                  lw=1, label=r.spec.name)
    a2.loglog(frontier["C"], frontier["loss"], "k-", lw=3, alpha=0.35, label="frontier")
    cs = np.geomspace(frontier["C"].min(), frontier["C"].max(), 50)
    a2.loglog(cs, alloc.loss_law(cs), "r--", lw=1, label=f"L(C) fit, alpha_C = {alloc.loss_law.alpha:.3f}")
    a2.set(xlabel="training compute C = 6ND (FLOPs)", ylabel="training loss (smoothed)",
           title="learning curves and the compute frontier")
    a2.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


__all__ = [
    "CHINCHILLA_TOKENS_PER_PARAM",
    "KAPLAN_ALPHA_D",
    "KAPLAN_ALPHA_N",
    "Allocation",
    "BudgetWidget",
    "FamilyPlan",
    "FamilyRun",
    "JointLaw",
    "ModelSpec",
    "PowerLaw",
    "allocate",
    "allocation_html",
    "alpha_by_budget",
    "budget_widget",
    "compare_fits",
    "compute_frontier",
    "converged",
    "cpu_sweep_plan",
    "d_laws",
    "family_frame",
    "family_plan",
    "fit_allocation",
    "fit_joint",
    "fit_power_law",
    "flops_per_token",
    "grid_frame",
    "heldout_loss",
    "kaplan_lr",
    "leave_one_out",
    "matmul_params",
    "non_embedding_params",
    "plot_scaling",
    "plot_sweeps",
    "runs_from_record",
    "shared_differences",
    "smooth_curve",
    "step_flops",
    "stored_sweep",
    "sweep_record",
    "train_family",
    "train_grid",
    "wsd_factor",
]
