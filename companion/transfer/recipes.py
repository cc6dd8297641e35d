"""How to fine-tune a pre-trained encoder: four recipes of 2017-2019, on the book's one loop.

* **Feature extraction or fine-tuning** (Peters, Ruder & Smith 2019, "To tune or not to
  tune"): :func:`freeze_encoder` freezes every encoder weight; the task model learns an
  ELMo-style scalar mix of the frozen layers and a linear layer on top
  (:func:`train_scalar_mix`), or every weight trains (:func:`finetune`).
* **Chain-thaw** (Felbo et al. 2017, DeepMoji): train the new head first, then each encoder
  layer *alone* from the bottom up, then everything (:func:`chain_thaw_stages`,
  :func:`chain_thaw`).
* **Staying near the pre-trained weights**: L2-SP (Li, Grandvalet & Davoine 2018) penalises
  ``alpha/2 ||w - w0||^2`` instead of plain weight decay's ``alpha/2 ||w||^2``
  (:class:`PullTowards`, anchor ``"pretrained"`` or ``"zero"``).
* **Born-again multi-task networks** (Clark et al. 2019, BAM!): single-task teachers are
  distilled into one multi-task student whose target moves from the teacher's output to the
  gold label during training (*teacher annealing*, :func:`teacher_annealing`,
  :func:`annealed_loss`).

Every run goes through :func:`companion.train.fit`; :func:`finetune` adds the parameter groups
(the task head at its own rate), BERT's warm-up then linear decay, and the pull of
:class:`PullTowards` through ``fit``'s ``schedule`` hook.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..train import History, TrainConfig, fit
from .finetune import (
    ScalarMixClassifier,
    batch,
    encoder_layers,
    layerwise_groups,
    warmup_linear,
)

ANCHORS = ("pretrained", "zero")


@dataclass
class RecipeConfig:
    """One fine-tuning run's settings.

    Attributes:
        epochs: passes over the training batches (ignored when ``max_steps`` is set).
        lr: the encoder's learning rate (AdamW).
        head_lr: the new task head's rate (``None``: ``lr``).
        warmup: share of the steps spent warming up, then a linear decay to 0.
        max_steps: a fixed number of optimizer steps instead of ``epochs``.
        clip: gradient-norm clipping.
        seed: seeds the head's initialisation, dropout and the batches' order.
        device: ``None`` picks cuda > mps > cpu.
        progress: a tqdm bar.
    """

    epochs: int = 3
    lr: float = 3e-4
    head_lr: float | None = 1e-2
    warmup: float = 0.1
    max_steps: int | None = None
    clip: float = 1.0
    seed: int = 0
    device: str | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.epochs, int) or self.epochs < 1:
            raise ValueError(f"epochs must be a positive int, got {self.epochs!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if self.head_lr is not None and not self.head_lr > 0:
            raise ValueError(f"head_lr must be positive or None, got {self.head_lr!r}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup is a share of the steps in [0, 1), got {self.warmup!r}")
        if self.max_steps is not None and (not isinstance(self.max_steps, int) or self.max_steps < 1):
            raise ValueError(f"max_steps must be a positive int or None, got {self.max_steps!r}")


# ------------------------------------------------------------------ staying near the start


class PullTowards:
    """A weight penalty ``strength/2 * ||w - anchor||^2`` on the encoder's weights, applied
    *decoupled* from the gradient (as AdamW applies weight decay): before each step every
    trainable encoder weight moves ``lr * strength`` of the way to its anchor.

    ``anchor="pretrained"`` is L2-SP (Li et al. 2018): the weights are pulled back to their
    values when the object was made (``w0``); ``anchor="zero"`` is plain weight decay, the L2
    prior towards zero. The new head has no pre-trained value; it is left unpenalised here in
    both cases (Li et al. give it a separate, small weight), so the two differ only in the
    anchor.

    Args:
        model: the model about to be fine-tuned (its encoder's current weights become ``w0``).
        strength: ``alpha``, the penalty's weight (>= 0).
        anchor: ``"pretrained"`` or ``"zero"``.
    """

    def __init__(self, model: nn.Module, strength: float, anchor: str = "pretrained"):
        if anchor not in ANCHORS:
            raise ValueError(f"anchor must be one of {ANCHORS}, got {anchor!r}")
        if not (isinstance(strength, (int, float)) and strength >= 0 and math.isfinite(strength)):
            raise ValueError(f"strength must be a finite number >= 0, got {strength!r}")
        self.strength, self.anchor = float(strength), anchor
        seen: set[int] = set()
        self.params = []
        for layer in encoder_layers(model):
            for p in layer.parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    self.params.append(p)
        self.targets = [p.detach().clone() if anchor == "pretrained" else torch.zeros_like(p)
                        for p in self.params]

    def penalty(self) -> torch.Tensor:
        """``strength/2 * sum ||w - anchor||^2`` over the weights (zero at the start of L2-SP)."""
        return 0.5 * self.strength * sum(((p - t) ** 2).sum() for p, t in zip(self.params, self.targets))

    def distance(self) -> float:
        """``||w - anchor||`` over the encoder's weights."""
        with torch.no_grad():
            return float(math.sqrt(sum(float(((p - t) ** 2).sum()) for p, t in zip(self.params, self.targets))))

    @torch.no_grad()
    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """Move every trainable weight ``lr * strength`` towards its anchor, at its group's
        current rate (the gradient of :meth:`penalty`, decoupled from Adam's scaling)."""
        if self.strength == 0:
            return
        target = {id(p): t for p, t in zip(self.params, self.targets)}
        for g in optimizer.param_groups:
            shrink = g["lr"] * self.strength
            for p in g["params"]:
                if p.requires_grad and id(p) in target:
                    t = target[id(p)]
                    if t.device != p.device:
                        t = target[id(p)] = t.to(p.device)
                    p.sub_(shrink * (p - t))


# ----------------------------------------------------------------------- fine-tuning, one loop


def finetune(model: nn.Module, batches: Callable[[int], list], config: RecipeConfig,
             loss_fn: Callable[[nn.Module, dict], torch.Tensor] | None = None,
             pull: PullTowards | None = None) -> History:
    """Train ``model``'s trainable parameters with :func:`companion.train.fit`: AdamW without
    built-in decay, the head (sub-modules named ``head``/``heads``) at ``config.head_lr``,
    warm-up then linear decay, and ``pull`` (L2-SP or weight decay) before every step.

    ``batches``: ``epoch -> list of batches``. Returns ``fit``'s :class:`History`.
    """
    groups = layerwise_groups(model, config.lr, 1.0, 0.0, config.head_lr)
    for g in groups:
        g["base_lr"] = g["lr"]
    per_epoch = len(batches(0))
    if per_epoch == 0:
        raise ValueError("batches(0) is empty: no training examples")
    total = config.max_steps or per_epoch * config.epochs
    epochs = math.ceil(total / per_epoch)
    factor = warmup_linear(total, int(config.warmup * total))
    dev = next(model.parameters()).device
    opt = torch.optim.AdamW(groups, weight_decay=0.0, fused=True if dev.type in ("cpu", "cuda") else None)

    def schedule(step: int, optimizer: torch.optim.Optimizer) -> None:
        f = factor(min(step, total - 1))
        for g in optimizer.param_groups:
            g["lr"] = g["base_lr"] * f
        if pull is not None:
            pull.step(optimizer)

    cfg = TrainConfig(epochs=epochs, lr=config.lr, seed=config.seed, device=config.device,
                      max_steps=total, clip_grad_norm=config.clip, progress=config.progress)
    return fit(model, batches, config=cfg, loss_fn=loss_fn, optimizer=opt, schedule=schedule)


# ------------------------------------------------------------------------- feature extraction


def freeze_encoder(model: nn.Module) -> int:
    """Freeze every parameter of the encoder inside ``model`` (embeddings and blocks) and put
    it in eval mode; return how many parameters were frozen. What stays trainable is the
    task model on top."""
    n = 0
    for layer in encoder_layers(model):
        layer.eval()
        for p in layer.parameters():
            p.requires_grad_(False)
            n += p.numel()
    return n


def train_scalar_mix(features: torch.Tensor, labels: Sequence, n_out: int, *, mix: bool = True,
                     epochs: int = 30, lr: float = 1e-2, batch_size: int = 16, seed: int = 0,
                     device: str | None = None) -> ScalarMixClassifier:
    """Feature extraction's task model on frozen layer features ``[n, L + 1, d]``
    (:func:`companion.transfer.finetune.layer_features`): ELMo's scalar mix
    ``gamma * sum_l softmax(s)_l h_l`` and a linear layer, trained with Adam by
    :func:`companion.train.fit`. ``mix=False`` uses the top layer only. ``n_out=1``:
    regression (MSE)."""
    if features.dim() != 3 or len(features) != len(labels):
        raise ValueError(f"features must be [n, layers, d] with one row per label, got "
                         f"{tuple(features.shape)} and {len(labels)} labels")
    feats = features if mix else features[:, -1:]
    regression = n_out == 1
    y = torch.tensor([float(v) for v in labels]) if regression else torch.tensor([int(v) for v in labels])
    model = ScalarMixClassifier(feats.shape[1], feats.shape[2], n_out, seed=seed)
    if not mix:
        model.s.requires_grad_(False)

    def make(e: int) -> list:
        order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed * 1000 + e))
        return [(feats[i], y[i]) for i in order.split(batch_size)]

    def loss_fn(m: nn.Module, b) -> torch.Tensor:
        out = m(b[0])
        return F.mse_loss(out[:, 0], b[1]) if regression else F.cross_entropy(out, b[1])

    fit(model, make, config=TrainConfig(epochs=epochs, lr=lr, seed=seed, device=device,
                                        clip_grad_norm=None, progress=False), loss_fn=loss_fn)
    model.mix_feats = mix  # remembered by predict_scalar_mix
    return model.cpu()


@torch.no_grad()
def predict_scalar_mix(model: ScalarMixClassifier, features: torch.Tensor) -> np.ndarray:
    """The task model's outputs on frozen features (the same layers it was trained on)."""
    model.eval()
    feats = features if getattr(model, "mix_feats", True) else features[:, -1:]
    return model(feats).numpy()


# --------------------------------------------------------------------------------- chain-thaw


@dataclass
class Stage:
    """One stage of chain-thaw: a name and the parameters that train in it."""

    name: str
    params: list[nn.Parameter]


def chain_thaw_stages(model: nn.Module) -> list[Stage]:
    """Felbo et al.'s order: the new layers (everything outside the encoder: the head), then
    the embeddings, then each block alone from the bottom up, then the whole model. Only
    parameters that the model trains at all (``requires_grad`` now) are included, so a frozen
    pooler stays frozen."""
    layers = encoder_layers(model)
    in_enc = {id(p) for layer in layers for p in layer.parameters()}
    live = [p for p in model.parameters() if p.requires_grad]
    if not live:
        raise ValueError("the model has no trainable parameter")
    new = [p for p in live if id(p) not in in_enc]
    if not new:
        raise ValueError("chain-thaw needs new layers outside the encoder (a task head); found none")
    live_ids = {id(p) for p in live}
    stages = [Stage("new layers", new)]
    for depth, layer in enumerate(layers):
        name = "embeddings" if depth == 0 else f"block {depth}"
        stages.append(Stage(name, [p for p in layer.parameters() if id(p) in live_ids]))
    stages.append(Stage("all", live))
    return stages


def thaw(model: nn.Module, stage: Stage) -> None:
    """Make exactly ``stage``'s parameters trainable."""
    ids = {id(p) for p in stage.params}
    for p in model.parameters():
        p.requires_grad_(id(p) in ids)


def stage_steps(total: int, n_stages: int) -> list[int]:
    """``total`` optimizer steps split as evenly as possible over ``n_stages`` (the first
    stages get the remainder), so chain-thaw costs the same number of steps as one run."""
    if n_stages < 1 or total < n_stages:
        raise ValueError(f"need total >= n_stages >= 1, got total={total}, n_stages={n_stages}")
    q, r = divmod(total, n_stages)
    return [q + (i < r) for i in range(n_stages)]


def chain_thaw(model: nn.Module, batches: Callable[[int], list], config: RecipeConfig,
               total_steps: int) -> list[tuple[str, History]]:
    """Chain-thaw ``model`` in ``total_steps`` optimizer steps in all: each stage of
    :func:`chain_thaw_stages` gets an equal share, its own warm-up and decay, the head's rate
    in the first stage and the encoder's rate after it. Returns ``(stage, history)`` pairs;
    the model ends with every stage's parameters trainable."""
    stages = chain_thaw_stages(model)
    steps = stage_steps(total_steps, len(stages))
    per_epoch = len(batches(0))
    out, done = [], 0
    for i, (stage, n) in enumerate(zip(stages, steps)):
        thaw(model, stage)
        lr = (config.head_lr or config.lr) if i == 0 else config.lr
        cfg = RecipeConfig(epochs=1, lr=lr, head_lr=config.head_lr if i == len(stages) - 1 else None,
                           warmup=config.warmup, max_steps=n, clip=config.clip, seed=config.seed + i,
                           device=config.device, progress=config.progress)
        offset = done // per_epoch + 1000 * (i + 1)
        out.append((stage.name, finetune(model, lambda e, o=offset: batches(e + o), cfg)))
        done += n
    thaw(model, stages[-1])
    return out


# ------------------------------------------------------------------------ born-again multi-task


def teacher_annealing(step: int, total: int) -> float:
    """Clark et al.'s lambda: the weight of the gold label in the student's target, rising
    linearly from 0 at the first step to 1 at the last (``total`` steps)."""
    if not isinstance(total, int) or total < 1:
        raise ValueError(f"total must be a positive int of steps, got {total!r}")
    if not 0 <= step < total:
        raise ValueError(f"step must be in [0, {total}), got {step!r}")
    return step / (total - 1) if total > 1 else 1.0


def annealed_loss(out: torch.Tensor, labels: torch.Tensor, teacher: torch.Tensor | None, lam: float) -> torch.Tensor:
    """The student's loss against ``lam * gold + (1 - lam) * teacher``: cross-entropy with
    soft targets (``teacher`` holds the teacher's probabilities) for classification, MSE
    against the mixed score for regression (float ``labels``, ``out`` ``[B, 1]``).
    ``teacher=None`` or ``lam=1``: the plain multi-task loss on gold labels."""
    if not 0 <= lam <= 1:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    if labels.is_floating_point():
        target = labels if teacher is None else lam * labels + (1 - lam) * teacher.reshape(labels.shape)
        return F.mse_loss(out[:, 0], target)
    gold = F.one_hot(labels, out.shape[-1]).to(out.dtype)
    target = gold if teacher is None else lam * gold + (1 - lam) * teacher
    return -(target * out.log_softmax(-1)).sum(-1).mean()


def multitask_teacher_batches(config, data: dict[str, tuple[list, list, torch.Tensor | None]], batch_size: int,
                              seed: int) -> Callable[[int], list[dict]]:
    """``epoch -> batches`` of several tasks, shuffled together (each task in proportion to
    its size); each batch carries ``task`` and, when given, its examples' ``teacher`` outputs.
    ``data``: task -> (encoded examples, labels, teacher outputs ``[n, ...]`` or None)."""
    for t, (enc, lab, teach) in data.items():
        if len(enc) != len(lab) or (teach is not None and len(teach) != len(lab)):
            raise ValueError(f"task {t!r}: {len(enc)} examples, {len(lab)} labels, "
                             f"{None if teach is None else len(teach)} teacher outputs; need one each")

    def make(e: int) -> list[dict]:
        out = []
        for k, (t, (enc, lab, teach)) in enumerate(sorted(data.items())):
            g = torch.Generator().manual_seed(seed * 1000 + e * 31 + k)
            for idx in torch.randperm(len(enc), generator=g).split(batch_size):
                idx = idx.tolist()
                b = batch(config, [enc[j] for j in idx], [lab[j] for j in idx])
                b["task"] = t
                if teach is not None:
                    b["teacher"] = teach[idx]
                out.append(b)
        order = torch.randperm(len(out), generator=torch.Generator().manual_seed(seed * 7919 + e)).tolist()
        return [out[i] for i in order]
    return make


def bam_loss(total_steps: int, anneal: bool = True) -> Callable[[nn.Module, dict], torch.Tensor]:
    """A ``loss_fn`` for :func:`finetune` on a :class:`companion.transfer.finetune.MultiTask`
    student: teacher annealing over ``total_steps`` (``anneal=False``: a constant lambda of
    0, pure distillation). Batches without ``teacher`` train on gold labels only (plain
    multi-task learning)."""
    step = [0]

    def loss_fn(model: nn.Module, b: dict) -> torch.Tensor:
        lam = teacher_annealing(min(step[0], total_steps - 1), total_steps) if anneal else 0.0
        if model.training:
            step[0] += 1
        return annealed_loss(model(b), b["labels"], b.get("teacher"), lam)
    return loss_fn
