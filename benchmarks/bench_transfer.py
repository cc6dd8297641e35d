"""Chapter 10 benchmark: a training step of LoRA, adapters and BitFit against full fine-tuning.

The model is all-MiniLM-L6-v2's shape (6 blocks, d=384, 30,522-token vocabulary; random
weights: the cost does not depend on them) with a mean-pooled 2-way head, a batch of 16
sequences of 64 tokens, AdamW. For each method:

* **step time**: forward + backward + optimizer step, the median of several steps after warm-up,
  the methods taking turns so that a change in the machine's load hits all of them; reported as
  a ratio to full fine-tuning's step in the same run;
* **training memory beyond the weights**: the bytes of the gradients and of AdamW's two moment
  buffers actually allocated after one step (activations are not counted: every method here
  back-propagates through the whole network, so they are nearly the same for all).

Run alone with ``python -m benchmarks.bench_transfer`` (or through ``python -m benchmarks``).

Measured before 2026-12-01 15:25 UTC (commit 704c509), command not recorded, on 2 cores shared with
other jobs (load average 15-18; CPU flags not recorded), 1 thread, one run, so noisy: full step
4.62 s; LoRA 0.61x, adapters 0.55x, BitFit 0.58x of it. The frozen methods skip the weight
gradients of the big matrices (and the word-embedding gradient) and most of AdamW's work, not the
backward pass through the activations, so the step is faster but far from the ratio of their
parameter counts. Gradients + AdamW moments: full 269 MB; LoRA 0.45 MB (0.0017x), adapters 1.9 MB
(0.0072x), BitFit 0.32 MB (0.0012x).
"""

from __future__ import annotations

import os
import statistics
import time

import torch

from companion.transfer.peft import apply_method, count
from companion.transformer.bert import BertConfig, BertEncoder, BertForSequence

METHODS = ("full", "lora", "adapters", "bitfit")


def _model(method: str) -> tuple[BertForSequence, torch.optim.Optimizer]:
    cfg = BertConfig(vocab_size=30522, max_len=128, n_layer=6, n_head=12, d_model=384, d_ff=1536,
                     pad_id=0, unk_id=100, cls_id=101, sep_id=102, mask_id=103)
    enc = apply_method(BertEncoder(cfg, seed=0), method)
    model = BertForSequence(enc, 2, pooling="mean")
    model.pooler.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    return model.train(), opt


def _step(model, opt, batch) -> None:
    opt.zero_grad(set_to_none=True)
    model.loss(batch).backward()
    opt.step()


def _extra_bytes(model, opt) -> int:
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    state = sum(t.numel() * t.element_size() for s in opt.state.values() for t in s.values()
                if isinstance(t, torch.Tensor) and t.dim() > 0)
    return grads + state


def run(steps: int = 5, warmup: int = 2, batch: int = 16, length: int = 64) -> dict:
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))
    g = torch.Generator().manual_seed(0)
    b = {"ids": torch.randint(1000, 30000, (batch, length), generator=g),
         "attention_mask": torch.ones(batch, length, dtype=torch.long),
         "labels": torch.randint(0, 2, (batch,), generator=g)}
    models = {m: _model(m) for m in METHODS}
    for m, (model, opt) in models.items():
        for _ in range(warmup):
            _step(model, opt, b)
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    for _ in range(steps):  # the methods take turns
        for m, (model, opt) in models.items():
            t0 = time.perf_counter()
            _step(model, opt, b)
            times[m].append(time.perf_counter() - t0)
    med = {m: statistics.median(ts) for m, ts in times.items()}
    out: dict[str, float | int | str] = {"threads": torch.get_num_threads(), "batch": f"{batch}x{length}"}
    for m in METHODS:
        model, opt = models[m]
        out[f"{m}_step_s"] = round(med[m], 4)
        out[f"{m}_trainable"] = count(model, trainable=True)
        out[f"{m}_grad_and_adam_MB"] = round(_extra_bytes(model, opt) / 1e6, 3)
        if m != "full":
            out[f"{m}_step_vs_full_x"] = round(med[m] / med["full"], 3)
            out[f"{m}_memory_vs_full_x"] = round(_extra_bytes(model, opt) / _extra_bytes(*models["full"]), 5)
    return out


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run(), indent=1))
