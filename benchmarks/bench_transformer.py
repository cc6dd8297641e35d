"""Chapter 7 benchmark: our GPT against Hugging Face's GPT2LMHeadModel, bf16 against fp32, and
generation with the KV cache against without -- every number a ratio measured in the same run.

* Train step (forward + backward + AdamW) tokens/s of our GPT and of ``GPT2LMHeadModel`` built
  from the same config with the same weights and batch, fp32 on the CPU; the model FLOP
  utilisation (MFU) of each against a matmul peak measured here, in this run, on the same threads.
* bf16 autocast against fp32 for our step, and the two loss curves over the same few steps.
* Greedy generation of 256 new tokens with and without the KV cache.

Run alone with ``python -m benchmarks.bench_transformer`` (or through ``python -m benchmarks``).
Each timing is the median of several steps after warm-up, the compared steps taking turns; the
ratios are medians of paired steps. On a shared machine run it twice.

Measured while the book was built (2 cores shared by several agents, load average 7-14, so the
absolute numbers are far below the machine's quiet speed; two runs, 2 threads / 1 thread):
train step vs HF GPT2LMHeadModel 1.06x / 1.10x and 1.31x / 1.03x (a third run: 1.31x at 2
threads); MFU of ours 13-18% (2 threads) and 42-54% (1 thread) of the matmul peak measured in
the same run (17-23 GFLOP/s fp32 at 2 threads, 30-69 at 1 thread: the load shows); bf16
autocast 0.98x / 0.65x and 0.69x / 0.68x of the fp32 step -- slower, because on this CPU a bf16
matmul is slower than an fp32 one (peak 15-42 vs 17-69 GFLOP/s measured side by side), while
the loss curves agree (9.0634 -> 6.2356 fp32, 9.0633 -> 6.2369 bf16, max difference 0.0017 over
10 steps); generation of 256 tokens with the KV cache 1.7x / 6.3x and 1.2x / 7.6x faster than
without (the same greedy tokens) -- on 2 threads under this load each tiny cached step waits
on OpenMP, so only the 1-thread figure reflects the code.
"""

from __future__ import annotations

import json
import os
import statistics
import time

import torch

from companion.device import describe, get_device
from companion.transformer import GPT, GPTConfig

SHAPE = {"vocab_size": 8192, "block_size": 512, "n_layer": 4, "n_head": 4, "d_model": 256}


def _median_seconds(fn, steps: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def matmul_peak(dtype=torch.float32, n: int = 1024, device=None) -> float:
    """FLOP/s of an ``n x n`` matmul (the best of a few), the ceiling MFU is measured against."""
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    best = min(_median_seconds(lambda: a @ b, 5, 2) for _ in range(3))
    return 2 * n**3 / best


def flops_per_token(c: GPTConfig, T: int) -> float:
    """Training FLOPs per token (Kaplan et al.; nanoGPT): 6 per weight touched (forward 2, backward
    4) plus the attention scores and sums, 12 L d T."""
    n = c.n_layer * (4 * c.d_model**2 + 2 * c.d_model * c.d_ff) + c.vocab_size * c.d_model
    return 6 * n + 12 * c.n_layer * c.d_model * T


def _step_fn(model, x, y, loss_of, autocast: bool = False):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []

    def step():
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = loss_of(model, x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    return step, losses


def _interleaved(fns: dict, steps: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call of each function, the functions taking turns (in a rotating order) so that
    load from other processes falls on all of them alike."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for i in range(steps):
        for name in names[i % len(names):] + names[:i % len(names)]:
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def _median_ratio(a: list[float], b: list[float]) -> float:
    """The median over paired calls of ``a[i] / b[i]``: robust to a slow moment hitting one pair."""
    return statistics.median(x / y for x, y in zip(a, b))


def train_step_comparison(batch: int = 8, T: int = 128, steps: int = 8, device=None) -> dict:
    """Ours vs HF GPT-2 (fp32) and ours in bf16 autocast, timed step by step in turns."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel

    from companion.transformer.hf import gpt_config_to_hf, gpt_state_to_hf

    dev = get_device(device)
    c = GPTConfig(**SHAPE)
    ours = GPT(c, seed=0).to(dev)
    hf_model = GPT2LMHeadModel(GPT2Config(**{k: v for k, v in gpt_config_to_hf(c).items() if k != "architectures"}))
    hf_model.load_state_dict(gpt_state_to_hf(ours.state_dict(), c.n_layer), strict=False)
    hf_model.to(dev).train()
    bf16 = GPT(c, seed=0).to(dev)
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, c.vocab_size - 3, (batch, T + 1), generator=g).to(dev)
    x, y = data[:, :-1], data[:, 1:]
    ours_step, ours_losses = _step_fn(ours, x, y, lambda m, x, y: m(x, y)[1])
    hf_step, _ = _step_fn(hf_model, data[:, :-1], None, lambda m, x, _: m(input_ids=x, labels=x).loss)
    bf16_step, bf16_losses = _step_fn(bf16, x, y, lambda m, x, y: m(x, y)[1], autocast=True)
    t = _interleaved({"ours": ours_step, "hf": hf_step, "bf16": bf16_step}, steps, warmup=2)
    tokens = batch * T
    out: dict = {
        "ours_train_tokens_per_s": tokens / statistics.median(t["ours"]),
        "hf_gpt2_train_tokens_per_s": tokens / statistics.median(t["hf"]),
        "bf16_train_tokens_per_s": tokens / statistics.median(t["bf16"]),
        "train_speedup_vs_hf": _median_ratio(t["hf"], t["ours"]),
        "bf16_speedup_vs_fp32": _median_ratio(t["ours"], t["bf16"]),
    }
    peak, peak16 = matmul_peak(device=dev), matmul_peak(torch.bfloat16, device=dev)
    fpt = flops_per_token(c, T)
    out["matmul_peak_gflops_fp32"] = peak / 1e9
    out["matmul_peak_gflops_bf16"] = peak16 / 1e9
    out["ours_mfu_fp32"] = out["ours_train_tokens_per_s"] * fpt / peak
    out["hf_mfu_fp32"] = out["hf_gpt2_train_tokens_per_s"] * fpt / peak
    out["ours_mfu_bf16"] = out["bf16_train_tokens_per_s"] * fpt / peak16
    # the same weights, batch and steps (lr 1e-3, so the loss moves): the two curves side by side
    out["bf16_loss_curve_max_abs_diff"] = max(abs(a - b) for a, b in zip(ours_losses, bf16_losses))
    out["fp32_loss_first_last"] = f"{ours_losses[0]:.4f} -> {ours_losses[-1]:.4f}"
    out["bf16_loss_first_last"] = f"{bf16_losses[0]:.4f} -> {bf16_losses[-1]:.4f}"
    return out


def generation_comparison(new_tokens: int = 256, prompt: int = 16, batch: int = 1, device=None) -> dict:
    dev = get_device(device)
    c = GPTConfig(**SHAPE)
    model = GPT(c, seed=0).to(dev).eval()
    ids = torch.randint(0, c.vocab_size - 3, (batch, prompt), generator=torch.Generator().manual_seed(0)).to(dev)
    out = {}
    res = {}
    for use_cache in (True, False):
        t0 = time.perf_counter()
        res[use_cache] = model.generate(ids, new_tokens, temperature=0, use_cache=use_cache)
        out[f"generate_{'cache' if use_cache else 'no_cache'}_tokens_per_s"] = new_tokens * batch / (time.perf_counter() - t0)
    out["kv_cache_speedup"] = out["generate_cache_tokens_per_s"] / out["generate_no_cache_tokens_per_s"]
    out["kv_cache_same_tokens"] = bool(torch.equal(res[True], res[False]))
    return out


def run(device: str | None = None) -> dict:
    """All three comparisons; a flat dict of throughputs, ratios and the machine.

    On the CPU everything is measured twice: on torch's threads and on one thread (keys ending
    ``_1thread``). On a CPU shared with other processes a second OpenMP thread that waits for a
    descheduled sibling slows every operation, most of all the many tiny ones of a cached
    generation step; one thread shows the code's own speed there.
    """
    dev = get_device(device)
    out: dict = {"device": describe(dev), "shape": json.dumps(SHAPE), "batch_x_tokens": "8 x 128"}
    out.update(train_step_comparison(device=dev))
    out.update(generation_comparison(device=dev))
    if dev.type == "cpu" and torch.get_num_threads() > 1:
        from companion.word2vec._loop import intra_op_threads

        with intra_op_threads(1):
            one = {**train_step_comparison(device=dev), **generation_comparison(device=dev)}
        out.update({f"{k}_1thread": v for k, v in one.items()})
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
