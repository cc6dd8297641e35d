"""The one training loop every model in the book uses (in the spirit of makemore).

A model plugs in through a *loss function* ``loss_fn(model, batch) -> scalar tensor``; by
default the loop calls ``model.loss(batch)``. Batches are whatever the model understands
(tensors, tuples or dicts of tensors); the loop moves them to the device.

Example::

    history = fit(model, lambda epoch: make_batches(train, seed=epoch),
                  config=TrainConfig(epochs=3, lr=1e-3),
                  evaluate=lambda m: {"val_loss": mean_loss(m, valid)})

What the loop does for you: seeding, device placement, the optimizer, gradient clipping,
a tqdm progress bar, periodic evaluation, early stopping on a monitored metric, keeping the
best weights (optionally in a safetensors checkpoint), and timing (items per second).
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import torch
from torch import nn

from .device import get_device
from .fileio import umask_mode

Batch = Any
LossFn = Callable[[nn.Module, Batch], torch.Tensor]
EvalFn = Callable[[nn.Module], Mapping[str, float]]
ScheduleFn = Callable[[int, torch.optim.Optimizer], None]

OPTIMIZERS = ("adam", "adamw", "sgd", "adagrad")


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) so that runs repeat exactly on the CPU."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def to_device(batch: Batch, device: torch.device) -> Batch:
    """Move every tensor inside a (nested) tuple, list or dict to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, Mapping):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # namedtuple
        return type(batch)(*(to_device(v, device) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch


@dataclass
class TrainConfig:
    """Everything the loop needs to know, with defaults that suit small CPU runs.

    Attributes:
        epochs: passes over the batches.
        lr: learning rate.
        optimizer: one of ``adam``, ``adamw``, ``sgd``, ``adagrad``.
        weight_decay: L2 penalty passed to the optimizer.
        momentum: for ``sgd`` only.
        clip_grad_norm: clip the global gradient norm to this value (``None``: no clipping).
        seed: seeds everything before the model's first step.
        device: ``None`` picks cuda > mps > cpu (see :mod:`companion.device`).
        max_steps: stop after this many optimizer steps in total (``None``: no limit).
        eval_every: evaluate every this many steps; ``None`` evaluates at the end of each epoch.
        monitor: the key of the evaluation dict used for early stopping and the best weights.
        mode: ``min`` or ``max``: whether a smaller or larger ``monitor`` value is better.
        patience: stop after this many evaluations without improvement (``None``: never).
        restore_best: load the best weights back into the model at the end.
        checkpoint: path of a ``.safetensors`` file to keep the best weights in.
        progress: show a tqdm progress bar.
    """

    epochs: int = 1
    lr: float = 1e-3
    optimizer: str = "adam"
    weight_decay: float = 0.0
    momentum: float = 0.0
    clip_grad_norm: float | None = 1.0
    seed: int = 0
    device: str | None = None
    max_steps: int | None = None
    eval_every: int | None = None
    monitor: str = "val_loss"
    mode: str = "min"
    patience: int | None = None
    restore_best: bool = True
    checkpoint: str | None = None
    progress: bool = True

    def validate(self) -> None:
        if not isinstance(self.epochs, int) or self.epochs < 1:
            raise ValueError(f"epochs must be a positive int, got {self.epochs!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive finite number, got {self.lr!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer {self.optimizer!r} is unknown; use one of {OPTIMIZERS}")
        if self.mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {self.mode!r}")
        if self.clip_grad_norm is not None and self.clip_grad_norm <= 0:
            raise ValueError("clip_grad_norm must be positive or None")
        for name in ("max_steps", "eval_every", "patience"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or v < 1):
                raise ValueError(f"{name} must be a positive int or None, got {v!r}")


@dataclass
class History:
    """What happened during :func:`fit`: losses per step, evaluations, timing."""

    step_loss: list[float] = field(default_factory=list)
    epoch_loss: list[float] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)
    best: dict[str, float] | None = None
    steps: int = 0
    items: int = 0
    seconds: float = 0.0
    stopped_early: bool = False

    @property
    def items_per_second(self) -> float:
        """Throughput over the whole run (items as counted by ``fit``'s ``count_fn``)."""
        return self.items / self.seconds if self.seconds > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_optimizer(params: Iterable[torch.nn.Parameter], config: TrainConfig) -> torch.optim.Optimizer:
    """The optimizer named by ``config.optimizer``."""
    params = [p for p in params if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters")
    if config.optimizer == "adam":
        return torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay)
    if config.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    if config.optimizer == "adagrad":
        return torch.optim.Adagrad(params, lr=config.lr, weight_decay=config.weight_decay)
    return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)


def _default_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    if not hasattr(model, "loss"):
        raise TypeError(
            f"{type(model).__name__} has no .loss(batch) method; pass loss_fn=... to fit()"
        )
    return model.loss(batch)


def _default_count(batch: Batch) -> int:
    """Items in a batch: the first dimension of its first tensor."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() else 1
    if isinstance(batch, Mapping):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        for v in batch:
            if isinstance(v, torch.Tensor):
                return _default_count(v)
    return 1


def fit(
    model: nn.Module,
    batches: Iterable[Batch] | Callable[[int], Iterable[Batch]],
    *,
    config: TrainConfig | None = None,
    loss_fn: LossFn | None = None,
    evaluate: EvalFn | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    count_fn: Callable[[Batch], int] = _default_count,
    schedule: ScheduleFn | None = None,
) -> History:
    """Train ``model`` and return its :class:`History`.

    Args:
        model: any ``nn.Module``; it is moved to ``config.device``.
        batches: either a re-iterable of batches (a list, a DataLoader) or a function
            ``epoch -> iterable`` so that each epoch can be shuffled with its own seed.
        config: a :class:`TrainConfig` (defaults if ``None``).
        loss_fn: ``loss_fn(model, batch) -> scalar``; default ``model.loss(batch)``.
        evaluate: ``evaluate(model) -> {"val_loss": ..., ...}``, called in eval mode under
            ``torch.no_grad()``; its ``config.monitor`` key drives early stopping.
        optimizer: use this optimizer instead of building one from the config.
        count_fn: how many items (examples, tokens) a batch holds, for the throughput.
        schedule: ``schedule(step, optimizer)`` is called before every optimizer step with the
            number of steps taken so far in this call (0, 1, ...), and sets the rates it wants
            in ``optimizer.param_groups`` (a warm-up, slanted triangular rates, one rate per
            group). ``None``: the rates stay as the optimizer was built.

    Raises:
        ValueError: for a bad config, an empty epoch, a non-finite loss or a missing monitor key.
    """
    config = config or TrainConfig()
    config.validate()
    loss_fn = loss_fn or _default_loss
    device = get_device(config.device)
    seed_everything(config.seed)
    model.to(device)
    opt = optimizer or make_optimizer(model.parameters(), config)
    hist = History()
    sign = 1.0 if config.mode == "min" else -1.0
    best_score = math.inf
    best_state: dict[str, torch.Tensor] | None = None
    bad_evals = 0

    def run_eval() -> bool:
        """Evaluate; return True when training should stop early."""
        nonlocal best_score, best_state, bad_evals
        if evaluate is None:
            return False
        model.eval()
        with torch.no_grad():
            result = {k: float(v) for k, v in evaluate(model).items()}
        model.train()
        result["step"] = float(hist.steps)
        hist.evals.append(result)
        if config.monitor not in result:
            raise ValueError(
                f"evaluate() returned keys {sorted(result)} but config.monitor is "
                f"{config.monitor!r}; return that key or set TrainConfig(monitor=...)"
            )
        score = sign * result[config.monitor]
        if score < best_score:
            best_score, bad_evals = score, 0
            hist.best = dict(result)
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if config.checkpoint:
                save_checkpoint(model, config.checkpoint, metadata={k: str(v) for k, v in result.items()})
        else:
            bad_evals += 1
        return config.patience is not None and bad_evals >= config.patience

    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None

    start = time.perf_counter()
    stop = False
    model.train()
    for epoch in range(config.epochs):
        epoch_batches = batches(epoch) if callable(batches) else batches
        total = len(epoch_batches) if hasattr(epoch_batches, "__len__") else None
        bar = None
        if config.progress and tqdm is not None:
            bar = tqdm(total=total, desc=f"epoch {epoch + 1}/{config.epochs}", leave=False)
        running, n_batches = 0.0, 0
        for batch in epoch_batches:
            batch = to_device(batch, device)
            loss = loss_fn(model, batch)
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                raise ValueError(
                    f"loss_fn must return a scalar tensor, got {type(loss).__name__}"
                    f"{tuple(loss.shape) if isinstance(loss, torch.Tensor) else ''}; reduce it with .mean() or .sum()"
                )
            if not torch.isfinite(loss):
                raise ValueError(
                    f"loss became {loss.item()} at step {hist.steps}; lower the learning rate "
                    "or check the inputs"
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if schedule is not None:
                schedule(hist.steps, opt)
            if config.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_grad_norm)
            opt.step()
            value = float(loss.detach())
            hist.step_loss.append(value)
            hist.steps += 1
            hist.items += count_fn(batch)
            running += value
            n_batches += 1
            if bar is not None:
                bar.update(1)
                if hist.steps % 20 == 0:
                    bar.set_postfix(loss=f"{running / n_batches:.4f}")
            if config.eval_every and hist.steps % config.eval_every == 0 and run_eval():
                stop = hist.stopped_early = True
            if config.max_steps is not None and hist.steps >= config.max_steps:
                stop = True
            if stop:
                break
        if bar is not None:
            bar.close()
        if n_batches == 0:
            raise ValueError(f"epoch {epoch} produced no batches; is the training data empty?")
        hist.epoch_loss.append(running / n_batches)
        if stop:
            break
        if not config.eval_every and run_eval():
            hist.stopped_early = True
            break
    # The final weights are always evaluated: max_steps can stop mid-epoch, and eval_every need
    # not divide the number of steps; otherwise restore_best could never pick them (or nothing).
    if evaluate is not None and not hist.stopped_early and (not hist.evals or hist.evals[-1]["step"] != hist.steps):
        run_eval()
    hist.seconds = time.perf_counter() - start
    if config.restore_best and best_state is not None:
        model.load_state_dict(best_state)
    return hist


def save_checkpoint(model: nn.Module, path: str | os.PathLike, metadata: Mapping[str, str] | None = None) -> Path:
    """Save the model's weights as safetensors, atomically (a crash never leaves half a file)."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state, seen = {}, set()
    for k, v in model.state_dict().items():
        v = v.detach().cpu().contiguous()
        # tied weights (GPT's output layer = its embeddings) share storage, which safetensors
        # refuses; a copy is stored under each name and load_state_dict ties them again
        state[k] = v.clone() if v.data_ptr() in seen else v
        seen.add(v.data_ptr())
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        save_file(state, tmp, metadata={"companion": json.dumps(dict(metadata or {}))})
        os.chmod(tmp, umask_mode())  # mkstemp made it 0600: give it the mode of any new file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(model: nn.Module, path: str | os.PathLike, device: str | torch.device | None = None) -> dict[str, str]:
    """Load weights saved by :func:`save_checkpoint` into ``model``; return the metadata.

    Safetensors holds tensors only, so loading can never execute code.

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: if the file is not a safetensors checkpoint or does not fit the model.
    """
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    dev = str(get_device(device)) if device is not None else "cpu"
    try:
        state = load_file(str(path), device=dev)
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
    except Exception as err:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a readable safetensors checkpoint: {err}") from err
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise ValueError(f"checkpoint {path} does not fit {type(model).__name__}: {err}") from err
    return json.loads(meta.get("companion", "{}"))
