"""Using a pre-trained encoder on a task: frozen features, fine-tuning, and many tasks at once.

* **Feature extraction** (ELMo's way, Peters et al. 2018): the encoder stays frozen; every
  layer's mean-pooled states are computed once (:func:`layer_features`) and a task model -- a
  learned softmax-weighted mix of the layers plus a linear layer (:class:`ScalarMixClassifier`)
  -- trains on them.
* **Fine-tuning** (GPT's and BERT's way): every weight trains on the task (:func:`train`), with
  a linear learning-rate **warm-up** then decay (:func:`warmup_linear`), and optionally
  **layer-wise learning-rate decay** (:func:`layerwise_groups`: layer ``l`` of ``L`` gets
  ``lr * decay^(L - l)``, the embeddings the smallest, so the general lower layers move least;
  Howard & Ruder's discriminative rates, as used for BERT by Sun et al. 2019).
* **Parameter-efficient** variants reuse the same loop on an encoder adapted by
  :mod:`.peft`: only the parameters that require gradients are given to the optimizer.
* **Multi-task** (MT-DNN, Liu et al. 2019): one shared encoder, one head per task, batches of the
  tasks interleaved in proportion to their sizes (:class:`MultiTask`, :func:`multitask_batches`).

Texts become ids through a ``tokenize(str) -> list[int]`` callable, so the same code runs our
byte-level BPE (chapter 7's models) and the WordPiece of all-MiniLM-L6-v2.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..data.tasks import Example
from ..transformer.bert import BertForSequence, mean_pool, pad_batch, pair_inputs

Tokenize = Callable[[str], list[int]]


@dataclass
class FTConfig:
    """How one fine-tuning run trains. ``warmup`` is the share of the steps spent warming up
    (0: none); ``layer_decay`` 1.0 means one learning rate for all layers; ``head_lr`` is the
    new task head's own rate (None: ``lr``) -- a randomly initialised head has everything to
    learn, and with a few dozen steps at an encoder-sized rate it barely moves."""

    epochs: int = 3
    lr: float = 1e-4
    batch_size: int = 16
    warmup: float = 0.1
    layer_decay: float = 1.0
    weight_decay: float = 0.01
    max_len: int = 64
    clip: float = 1.0
    seed: int = 0
    device: str | None = None
    head_lr: float | None = None

    def __post_init__(self):
        if not isinstance(self.epochs, int) or self.epochs < 1:
            raise ValueError(f"epochs must be a positive int, got {self.epochs!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr!r}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup is a share of the steps in [0, 1), got {self.warmup!r}")
        if not 0 < self.layer_decay <= 1:
            raise ValueError(f"layer_decay must be in (0, 1], got {self.layer_decay!r}")
        if self.head_lr is not None and not self.head_lr > 0:
            raise ValueError(f"head_lr must be positive (or None: the same as lr), got {self.head_lr!r}")


# ------------------------------------------------------------------------------------ inputs


def encode(tokenize: Tokenize, examples: Sequence[Example], max_len: int) -> list[tuple[list[int], list[int] | None]]:
    """Ids of each example's text (and second text), cut so that ``[CLS] a [SEP] b [SEP]`` fits
    in ``max_len`` (the longer text is cut first)."""
    room = max_len - 3
    out = []
    for e in examples:
        a = tokenize(e.text)
        b = tokenize(e.text_b) if e.text_b is not None else None
        if b is None:
            out.append((a[: max_len - 2], None))
            continue
        while len(a) + len(b) > room:
            if len(a) >= len(b):
                a = a[:-1]
            else:
                b = b[:-1]
        out.append((a, b))
    return out


def batch(config, enc: Sequence[tuple[list[int], list[int] | None]], labels: Sequence | None = None) -> dict:
    """A padded BERT batch (``ids``, ``segments``, ``attention_mask``, ``labels``)."""
    out = pad_batch(config, [pair_inputs(config, a, b) for a, b in enc])
    if labels is not None:
        lab = list(labels)
        out["labels"] = torch.tensor(lab, dtype=torch.float if isinstance(lab[0], float) else torch.long)
    return out


def epoch_batches(config, enc, labels, batch_size: int, seed: int) -> Callable[[int], list[dict]]:
    """``epoch -> batches``, shuffled with a seed per epoch."""
    def make(e: int) -> list[dict]:
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
        return [batch(config, [enc[j] for j in order[i:i + batch_size]], [labels[j] for j in order[i:i + batch_size]])
                for i in range(0, len(order), batch_size)]
    return make


# --------------------------------------------------------------------------- learning rates


def warmup_linear(total_steps: int, warmup_steps: int) -> Callable[[int], float]:
    """The multiplier of the learning rate at each step: rises linearly from ``1/warmup`` to 1
    over ``warmup_steps``, then falls linearly to 0 at ``total_steps`` (BERT's schedule)."""
    if total_steps < 1 or not 0 <= warmup_steps < total_steps:
        raise ValueError(f"need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}")

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
    return factor


def encoder_layers(model: nn.Module) -> list[nn.Module]:
    """The encoder's depth order: ``[embeddings, block 0, ..., block L-1]`` (found inside any
    wrapper: a classifier, a PEFT wrapper)."""
    for m in model.modules():
        if hasattr(m, "embeddings") and hasattr(m, "blocks"):
            return [m.embeddings, *m.blocks]
    raise ValueError(f"{type(model).__name__} holds no encoder with .embeddings and .blocks")


def layerwise_groups(model: nn.Module, lr: float, decay: float = 1.0, weight_decay: float = 0.0,
                     head_lr: float | None = None) -> list[dict]:
    """Optimizer parameter groups: depth ``l`` of the encoder (0 = embeddings, L = last block)
    gets ``lr * decay^(L - l)``; everything outside the encoder (heads, poolers, prompts) gets
    ``lr``, except that with ``head_lr`` the task heads (sub-modules named ``head`` or
    ``heads``) get ``head_lr`` in a last group of their own. Only parameters that require
    gradients are included."""
    layers = encoder_layers(model)
    L = len(layers) - 1
    seen, groups = set(), []
    heads = []
    if head_lr is not None:
        for name, m in model.named_modules():
            if name.split(".")[-1] in ("head", "heads"):
                heads += [p for p in m.parameters() if p.requires_grad and id(p) not in seen]
                seen.update(id(p) for p in m.parameters())
    for depth, layer in enumerate(layers):
        ps = [p for p in layer.parameters() if p.requires_grad and id(p) not in seen]
        seen.update(id(p) for p in layer.parameters())
        if ps:
            groups.append({"params": ps, "lr": lr * decay ** (L - depth), "weight_decay": weight_decay, "depth": depth})
    rest = [p for p in model.parameters() if p.requires_grad and id(p) not in seen]
    if rest:
        groups.append({"params": rest, "lr": lr, "weight_decay": weight_decay, "depth": L + 1})
    if heads:
        groups.append({"params": heads, "lr": head_lr, "weight_decay": weight_decay, "depth": L + 2})
    if not groups:
        raise ValueError("the model has no trainable parameter")
    return groups


# ------------------------------------------------------------------------------------ training


@dataclass
class TrainResult:
    losses: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)   # the last group's learning rate per step
    steps: int = 0
    seconds: float = 0.0


def train(model: nn.Module, batches: Callable[[int], list[dict]], config: FTConfig,
          loss_fn: Callable[[nn.Module, dict], torch.Tensor] | None = None) -> TrainResult:
    """AdamW over the trainable parameters (layer-wise groups), warm-up + linear decay,
    gradient clipping; ``loss_fn(model, batch)`` defaults to ``model.loss(batch)``."""
    from ..device import get_device
    from ..train import seed_everything, to_device

    dev = get_device(config.device)
    seed_everything(config.seed)
    model.to(dev).train()
    n_per_epoch = len(batches(0))
    total = n_per_epoch * config.epochs
    groups = layerwise_groups(model, config.lr, config.layer_decay, config.weight_decay, config.head_lr)
    # the fused AdamW does the update in one pass per tensor: 4-5x faster on a CPU, which
    # matters for full fine-tuning (22.6 M parameters, half of them word embeddings)
    fused = dev.type in ("cpu", "cuda") and all(p.dtype == torch.float32 for g in groups for p in g["params"])
    opt = torch.optim.AdamW(groups, fused=fused or None)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_linear(total, int(config.warmup * total)))
    params = [p for g in opt.param_groups for p in g["params"]]
    out, t0 = TrainResult(), time.perf_counter()
    loss_fn = loss_fn or (lambda m, b: m.loss(b))
    for e in range(config.epochs):
        for b in batches(e):
            loss = loss_fn(model, to_device(b, dev))
            if not torch.isfinite(loss):
                raise ValueError(f"loss became {loss.item()} at step {out.steps}; lower the learning rate")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, config.clip)
            out.lrs.append(opt.param_groups[-1]["lr"])
            opt.step()
            sched.step()
            out.losses.append(float(loss.detach()))
            out.steps += 1
    out.seconds = time.perf_counter() - t0
    return out


@torch.no_grad()
def predict(model: nn.Module, config, enc, batch_size: int = 64) -> np.ndarray:
    """The model's outputs ``[n, n_out]`` on encoded examples (eval mode, no labels)."""
    model.eval()
    dev = next(model.parameters()).device
    outs = []
    for i in range(0, len(enc), batch_size):
        b = {k: v.to(dev) for k, v in batch(config, enc[i:i + batch_size]).items()}
        outs.append(model(b).float().cpu())
    return torch.cat(outs).numpy()


@dataclass
class RunResult:
    """One fine-tuning run on one task."""

    method: str
    preds: np.ndarray
    score: float              # accuracy x 100 (classification) or Spearman x 100 (regression)
    trainable: int
    seconds: float
    losses: list[float]
    stored: int | None = None  # parameters kept per task (None: the trainable ones)


def _score(gold: np.ndarray, out: np.ndarray, regression: bool) -> tuple[np.ndarray, float]:
    if regression:
        from ..evaluate.similarity import spearman

        p = out[:, 0]
        return p, 100 * float(spearman(p, gold))
    p = out.argmax(-1)
    return p, 100 * float((p == gold).mean())


def run_classifier(encoder: nn.Module, tokenize: Tokenize, train_set: Sequence[Example], test_set: Sequence[Example],
                   n_out: int, config: FTConfig, method: str = "full", pooling: str = "mean",
                   **method_kw) -> RunResult:
    """Adapt a copy of ``encoder`` by ``method`` (:data:`.peft.METHODS`), put a pooled linear
    head on it, train on ``train_set`` and score on ``test_set``."""
    from .peft import apply_method, count, stored_params

    cfg = encoder.config
    enc_model = apply_method(encoder, method, seed=config.seed, **method_kw)
    model = BertForSequence(enc_model, n_out, pooling=pooling, seed=config.seed)
    if pooling == "mean":  # the tanh pooler is unused: neither trained nor stored
        model.pooler.requires_grad_(False)
    regression = n_out == 1
    labels = [float(e.label) if regression else int(e.label) for e in train_set]
    tr = encode(tokenize, train_set, config.max_len)
    res = train(model, epoch_batches(cfg, tr, labels, config.batch_size, config.seed), config)
    out = predict(model, cfg, encode(tokenize, test_set, config.max_len))
    gold = np.array([float(e.label) for e in test_set])
    preds, score = _score(gold, out, regression)
    return RunResult(method, preds, score, count(model, trainable=True), res.seconds, res.losses,
                     stored_params(model))


# ----------------------------------------------------------------------- feature extraction


@torch.no_grad()
def layer_features(encoder: nn.Module, config, enc, batch_size: int = 64) -> torch.Tensor:
    """Mean-pooled states of every layer of a frozen encoder: ``[n, L + 1, d]`` (embeddings
    first). Computed once; the task model never runs the encoder again."""
    from ..transformer.attention import padding_mask

    encoder.eval()
    dev = next(encoder.parameters()).device
    out = []
    for i in range(0, len(enc), batch_size):
        b = {k: v.to(dev) for k, v in batch(config, enc[i:i + batch_size]).items()}
        m = b["attention_mask"]
        x = encoder.embeddings(b["ids"], b["segments"])
        mask = None if bool(m.all()) else padding_mask(m)
        states = [mean_pool(x, m)]
        for block in encoder.blocks:
            x = block(x, mask)
            states.append(mean_pool(x, m))
        out.append(torch.stack(states, 1).cpu())
    return torch.cat(out)


class ScalarMixClassifier(nn.Module):
    """ELMo's task model on frozen features: ``gamma * sum_l softmax(s)_l h_l`` then a linear
    layer. ``s`` starts at zero (an equal mix of the layers)."""

    def __init__(self, n_layers: int, d: int, n_out: int, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.s = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))
        self.head = nn.Linear(d, n_out)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        mix = (self.s.softmax(0)[None, :, None] * feats).sum(1)
        return self.head(self.gamma * mix)


def run_features(encoder: nn.Module, tokenize: Tokenize, train_set, test_set, n_out: int, config: FTConfig,
                 epochs: int = 30, lr: float = 1e-2,
                 features: tuple[torch.Tensor, torch.Tensor] | None = None) -> RunResult:
    """Feature extraction: cached layer features of the frozen encoder, a scalar mix and a
    linear head trained by Adam (full batch ``epochs`` times over shuffled mini-batches).
    ``features``: the ``(train, test)`` :func:`layer_features` computed earlier (the encoder
    is frozen, so every seed can share them)."""
    cfg = encoder.config
    t0 = time.perf_counter()
    if features is None:
        features = (layer_features(encoder, cfg, encode(tokenize, train_set, config.max_len)),
                    layer_features(encoder, cfg, encode(tokenize, test_set, config.max_len)))
    f_tr, f_te = features
    if len(f_tr) != len(train_set) or len(f_te) != len(test_set):
        raise ValueError(f"features hold {len(f_tr)} / {len(f_te)} rows for {len(train_set)} / "
                         f"{len(test_set)} examples: compute them on these train and test sets")
    regression = n_out == 1
    y = torch.tensor([float(e.label) if regression else int(e.label) for e in train_set])
    model = ScalarMixClassifier(f_tr.shape[1], f_tr.shape[2], n_out, seed=config.seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(config.seed)
    losses = []
    for _ in range(epochs):
        for idx in torch.randperm(len(y), generator=g).split(config.batch_size):
            out = model(f_tr[idx])
            loss = F.mse_loss(out[:, 0], y[idx]) if regression else F.cross_entropy(out, y[idx].long())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
    with torch.no_grad():
        out = model(f_te).numpy()
    gold = np.array([float(e.label) for e in test_set])
    preds, score = _score(gold, out, regression)
    n = sum(p.numel() for p in model.parameters())
    return RunResult("features", preds, score, n, time.perf_counter() - t0, losses)


# -------------------------------------------------------------------------------- multi-task


class MultiTask(nn.Module):
    """MT-DNN's shape: one shared encoder, a head per task (``heads``: task -> outputs, 1 for
    regression). ``forward(batch)`` reads ``batch["task"]`` to pick the head."""

    def __init__(self, encoder: nn.Module, heads: dict[str, int], seed: int = 0):
        super().__init__()
        self.encoder = encoder
        torch.manual_seed(seed)
        d = encoder.config.d_model
        self.heads = nn.ModuleDict({t: nn.Linear(d, n) for t, n in heads.items()})
        self.to(next(encoder.parameters()).device)

    def forward(self, batch: dict) -> torch.Tensor:
        task = batch["task"]
        if task not in self.heads:
            raise KeyError(f"no head for task {task!r}; heads: {sorted(self.heads)}")
        h = self.encoder(batch["ids"], batch.get("segments"), batch.get("attention_mask"))
        return self.heads[task](mean_pool(h, batch.get("attention_mask")))

    def loss(self, batch: dict) -> torch.Tensor:
        out, y = self(batch), batch["labels"]
        return F.mse_loss(out[:, 0], y.float()) if y.is_floating_point() else F.cross_entropy(out, y)


def multitask_batches(config, data: dict[str, tuple[list, list]], batch_size: int, seed: int) -> Callable[[int], list]:
    """``epoch -> batches`` of all tasks: each task's examples cut into shuffled batches, then
    all batches shuffled together (so a task appears in proportion to its size). ``data``:
    task -> (encoded examples, labels)."""
    per = {t: epoch_batches(config, enc, lab, batch_size, seed) for t, (enc, lab) in data.items()}

    def make(e: int) -> list[dict]:
        bs = [dict(b, task=t) for t, f in per.items() for b in f(e)]
        order = torch.randperm(len(bs), generator=torch.Generator().manual_seed(seed * 7919 + e)).tolist()
        return [bs[i] for i in order]
    return make


def _to_device_keep_task(batch: dict, dev) -> dict:
    return {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


@torch.no_grad()
def predict_task(model: MultiTask, config, task: str, enc, batch_size: int = 64) -> np.ndarray:
    """Outputs of ``model``'s head for ``task`` on encoded examples."""
    model.eval()
    dev = next(model.parameters()).device
    outs = [model(_to_device_keep_task(dict(batch(config, enc[i:i + batch_size]), task=task), dev)).cpu()
            for i in range(0, len(enc), batch_size)]
    return torch.cat(outs).numpy()
