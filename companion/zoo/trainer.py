"""Train one stored model: resumable, seeded, the same code on a CPU or a GPU.

Batch ``t`` is a function of ``(seed, t)`` alone -- random 128-token windows of the token stream
(and, for BERT, its masks) -- so a run stopped and resumed from its last state takes exactly the
steps an uninterrupted run takes. The state (weights, optimizer, step, curve) is written to
``$BOOK_DATA_DIR/zoo/<name>-<key>/state.pt`` every few minutes and at the end.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..transformer.bert import BertConfig, BertForPreTraining, mask_tokens
from ..transformer.gpt import GPT, GPTConfig
from .specs import Budget, ModelSpec

EVAL_ROWS = 256
EVAL_SEED = 1234


def build_model(spec: ModelSpec, tok, seed: int | None = None):
    """A freshly initialised network of ``spec`` over ``tok``'s ids (vocabulary + 3 task ids)."""
    seed = spec.seed if seed is None else seed
    if spec.arch == "gpt":
        return GPT(GPTConfig(vocab_size=len(tok) + 3, block_size=spec.block_size, n_layer=spec.n_layer,
                             n_head=spec.n_head, d_model=spec.d_model), seed=seed)
    sp = tok.special_tokens
    cfg = BertConfig(vocab_size=len(tok) + 3, max_len=spec.block_size, n_layer=spec.n_layer, n_head=spec.n_head,
                     d_model=spec.d_model, pad_id=sp["[PAD]"], unk_id=sp["[UNK]"], cls_id=sp["[CLS]"],
                     sep_id=sp["[SEP]"], mask_id=sp["[MASK]"])
    return BertForPreTraining(cfg, seed=seed)


def windows(stream: np.ndarray, n: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """``n`` random windows of ``length`` ids from ``stream`` (start offsets drawn from ``generator``)."""
    if len(stream) <= length:
        raise ValueError(f"a stream of {len(stream)} ids is too short for windows of {length}")
    starts = torch.randint(0, len(stream) - length, (n,), generator=generator)
    idx = starts[:, None] + torch.arange(length)[None, :]
    return torch.as_tensor(stream[idx.numpy()].astype(np.int64))


def make_batch(spec: ModelSpec, model, stream: np.ndarray, n: int, seed: int, step: int) -> dict | torch.Tensor:
    """Batch ``step`` of a run seeded ``seed``: GPT rows of ``block_size + 1`` ids, or BERT rows
    ``[CLS] window [SEP]`` with fresh masks (dynamic masking)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    if spec.arch == "gpt":
        return windows(stream, n, spec.block_size + 1, g)
    cfg = model.config
    body = windows(stream, n, spec.block_size - 2, g)
    ids = torch.cat([torch.full((n, 1), cfg.cls_id), body, torch.full((n, 1), cfg.sep_id)], dim=1)
    am = torch.ones_like(ids)
    inputs, labels = mask_tokens(ids, cfg, attention_mask=am, p=spec.mask_p, generator=g)
    return {"ids": inputs, "attention_mask": am, "labels": labels}


def _to(batch, device):
    return {k: v.to(device) for k, v in batch.items()} if isinstance(batch, dict) else batch.to(device)


@torch.no_grad()
def heldout_loss(spec: ModelSpec, model, held: np.ndarray, rows: int = EVAL_ROWS, batch: int = 32) -> float:
    """Mean loss (nats per predicted token) on ``rows`` fixed held-out windows (fixed masks)."""
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for i in range(0, rows, batch):
        b = _to(make_batch(spec, model, held, min(batch, rows - i), EVAL_SEED, i), device)
        n = int((b["labels"] != -100).sum()) if isinstance(b, dict) else b[:, 1:].numel()
        total += float(model.loss(b)) * n
        count += n
    model.train(was)
    return total / count


def unigram_loss(spec: ModelSpec, model, train: np.ndarray, held: np.ndarray, rows: int = EVAL_ROWS) -> float:
    """The loss of the add-one unigram distribution of ``train`` on the same held-out targets as
    :func:`heldout_loss`: the plateau a model that ignores context would reach."""
    counts = np.bincount(train, minlength=model.config.vocab_size).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    targets = []
    for i in range(0, rows, 32):
        b = make_batch(spec, model, held, min(32, rows - i), EVAL_SEED, i)
        t = b["labels"][b["labels"] != -100] if isinstance(b, dict) else b[:, 1:].reshape(-1)
        targets.append(t.numpy())
    return float(-logp[np.concatenate(targets)].mean())


def lr_at(budget: Budget, step: int) -> float:
    """Linear warm-up, then cosine decay to ``final_lr_fraction`` of the peak at the last step."""
    if step < budget.warmup:
        return budget.lr * (step + 1) / budget.warmup
    frac = (step - budget.warmup) / max(1, budget.steps - budget.warmup)
    lo = budget.final_lr_fraction
    return budget.lr * (lo + (1 - lo) * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


@dataclass
class RunState:
    step: int = 0
    tokens: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    curve: list[tuple[int, int, float]] = field(default_factory=list)  # (step, tokens, held-out loss)
    train_loss: list[tuple[int, float]] = field(default_factory=list)  # (step, mean of the last steps)


def train(spec: ModelSpec, budget: Budget, tok, train_stream: np.ndarray, held: np.ndarray, *,
          state_dir: Path, device: str = "cpu", init: dict | None = None, save_every_s: float = 300.0,
          deadline_s: float | None = None, eval_rows: int = EVAL_ROWS, data_seed: int | None = None, log=print):
    """Train (or resume) ``spec`` under ``budget``; returns ``(model, RunState, finished)``.

    ``init``: a state dict to start from (a warm restart from stored weights) instead of the seeded
    initialisation. ``deadline_s``: stop (saving the state) after this many wall seconds of this
    call; ``finished`` is ``False`` then and a later call resumes. ``eval_rows``: held-out windows
    per evaluation (tests use few). ``data_seed``: the seed of the batches and masks (default the
    spec's seed; a warm restart passes another, so it does not see the same windows again).
    """
    data_seed = spec.seed if data_seed is None else data_seed
    model = build_model(spec, tok).to(device)
    if init is not None:
        model.load_state_dict(init)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": budget.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=budget.lr, betas=(0.9, 0.98))
    st = RunState()
    path = state_dir / "state.pt"
    if path.is_file():
        saved = torch.load(path, map_location=device, weights_only=False)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        st = RunState(**saved["run"])
        log(f"resumed {spec.name} at step {st.step}")

    def save() -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = state_dir / "state.tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "run": st.__dict__}, tmp)
        os.replace(tmp, path)

    t_start, t_saved = time.perf_counter(), time.perf_counter()
    c0, w0 = time.process_time(), time.perf_counter()
    recent: list[float] = []
    model.train()
    while st.step < budget.steps:
        if st.step % budget.eval_every == 0 and (not st.curve or st.curve[-1][0] != st.step):
            st.curve.append((st.step, st.tokens, heldout_loss(spec, model, held, eval_rows)))
            log(f"{spec.name} step {st.step}/{budget.steps} tokens {st.tokens:,} held-out {st.curve[-1][2]:.3f}")
        for g in opt.param_groups:
            g["lr"] = lr_at(budget, st.step)
        b = _to(make_batch(spec, model, train_stream, budget.batch_size, data_seed, st.step), device)
        loss = model.loss(b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), budget.clip)
        opt.step()
        recent.append(float(loss.detach()))
        st.step += 1
        st.tokens += budget.batch_size * spec.block_size
        if len(recent) == 50:
            st.train_loss.append((st.step, sum(recent) / 50))
            recent = []
        now = time.perf_counter()
        st.cpu_seconds += time.process_time() - c0
        st.wall_seconds += now - w0
        c0, w0 = time.process_time(), now
        if now - t_saved > save_every_s:
            save()
            t_saved = now
        if deadline_s is not None and now - t_start > deadline_s and st.step < budget.steps:
            save()
            log(f"{spec.name}: deadline reached at step {st.step}; state saved, run again to resume")
            return model, st, False
    if not st.curve or st.curve[-1][0] != st.step:
        st.curve.append((st.step, st.tokens, heldout_loss(spec, model, held, eval_rows)))
        log(f"{spec.name} step {st.step}/{budget.steps} tokens {st.tokens:,} held-out {st.curve[-1][2]:.3f}")
    save()
    return model, st, True
