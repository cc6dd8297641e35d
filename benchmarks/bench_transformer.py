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

Measurements, on 2-core machines; each date is that of the commit that recorded the numbers
(the run came shortly before). The loaded machine's CPU has AVX-512 with bf16 instructions
(oneDNN picked its avx512_core_bf16 kernel) and no AMX; ``_1thread`` is the one-thread section.

* 2026-12-01, before 19:06 UTC (commit 728b946), ``python -m benchmarks transformer``; load
  average 9.4 at the start, 5.3 at the end (other jobs on both cores):

  - train step vs HF ``GPT2LMHeadModel`` at 8 x 128, fp32: one thread 1.26x by wall time (paired
    steps 1.00-1.65) and 1.30x by process CPU time (1.19-1.50); MFU per CPU second 54 % ours vs
    39 % HF against the 1024^3 matmul's 158 GFLOP/CPU-s. On 2 threads 1.10x wall (0.77-1.30),
    1.12x CPU (0.84-1.30): under this load each OpenMP barrier waits for a descheduled sibling,
    and both models' steps are mostly that wait. With the loss computed from the full
    ``[B, T, V]`` logits (before the fused loss of :mod:`companion.transformer.loss`, which
    ``GPT.loss`` now uses) the same one-thread CPU-time ratio was 1.12x.
  - bf16 autocast vs fp32: 0.64x by CPU time (0.54-0.70), the loss curves equal to 0.002 over 8
    steps. Not fixable here: a bf16 matmul runs at 0.52-0.55x the fp32 speed on this CPU (72-81
    vs 131-158 GFLOP per CPU-second at n = 256, 1024, 2048), so no bf16 step can be faster, at any
    d_model tried. The profile shows it: the matrix products take 721 ms of a bf16 step vs 413 ms
    of an fp32 one (profiler wall time), copies and casts 60 vs 15 ms; attention, which torch's
    CPU kernel ran ~3x slower in bf16, now runs in fp32 inside autocast (bf16 step 0.61x -> 0.66x).
  - KV cache at 256 new tokens (prompt 16), the same greedy tokens: one thread 6.0x by wall time
    (5.7-6.2 over 3 repeats), 6.2x by CPU time. On 2 threads 24x -- not a number to quote: a
    small cached step runs on one thread (``GPT.generate``) while the uncached baseline kept its
    two, whose barriers stalled under the load (1.2 tokens/s). With both on 2 threads: 4.5x at
    load 17 (62 s cached, 280 s uncached; the one-thread decode ran the same 256 tokens in 4 s),
    and 1.2-1.7x in two runs at load 7-14 before 2026-12-01 13:03 UTC (commit ab07922).

* 2026-12-01, before 19:08 UTC (commit 0758320), the same shared machine, 2 threads, command not
  recorded, load average 2.3-3.0 (still no idle core): train step 1.12x wall (0.82-1.61 over 10
  paired steps), 1.12x CPU; ours 429 tokens/s there against 1,214 on one thread in the loaded run
  -- two threads on two busy cores are slower than one; KV cache 4.3x wall (4.1-4.5 over 2
  repeats), 8.6x CPU.
* 2026-12-01, before 19:12 UTC (commit 1bc4494), the same shared machine, 2 threads, command not
  recorded, load average 2.1-3.6: train 1.03x wall (0.83-1.45), 1.00x CPU, 640 tokens/s each; bf16
  0.59x; KV cache 20x. On two busy cores both steps are dominated by the same barrier waits,
  which hides the difference the one-thread run shows.
* 2026-12-01, before 20:01 UTC (commit 5b2d390), a quiet 2-core machine (load average 0.6 at the
  start and 1.0 at the end, nothing else running; CPU flags not recorded, its bf16 matmul peak
  below its fp32 one), command not recorded, 2 threads: train step 1.24x HF by wall time (1.04-1.47
  over 8 paired steps), 1.23x by CPU time (1.06-1.33); MFU 35 % ours vs 27 % HF against the
  2-thread matmul peak (289 GFLOP/s fp32, 155 bf16); bf16 0.67x fp32 (0.59-0.82), loss curves equal
  to 0.002; KV cache 6.2x by wall time (same tokens). One thread: train MFU 59 % vs 48 %, KV cache
  6.5x (5.6-6.9).
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


def _interleaved(fns: dict, steps: int, warmup: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and process-CPU seconds per call of each function, the functions taking turns (in a
    rotating order) so that load from other processes falls on all of them alike."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for i in range(steps):
        for name in names[i % len(names):] + names[:i % len(names)]:
            c0, t0 = time.process_time(), time.perf_counter()
            fns[name]()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return wall, cpu


def _ratios(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Median, lowest and highest over paired calls of ``a[i] / b[i]`` (a slow moment hits one
    pair, not the median)."""
    r = sorted(x / y for x, y in zip(a, b))
    return statistics.median(r), r[0], r[-1]


def _put_ratio(out: dict, key: str, a: list[float], b: list[float]) -> None:
    med, lo, hi = _ratios(a, b)
    out[key] = med
    out[key.replace("speedup", "spread")] = f"{lo:.2f}-{hi:.2f} over {len(a)} paired steps"


def _models(device):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging as hf_logging

    from companion.transformer.hf import gpt_config_to_hf, gpt_state_to_hf

    hf_logging.set_verbosity_error()
    c = GPTConfig(**SHAPE)
    ours = GPT(c, seed=0).to(device)
    hf_model = GPT2LMHeadModel(GPT2Config(**{k: v for k, v in gpt_config_to_hf(c).items() if k != "architectures"}))
    hf_model.load_state_dict(gpt_state_to_hf(ours.state_dict(), c.n_layer), strict=False)
    return c, ours, hf_model.to(device).train(), GPT(c, seed=0).to(device)


def train_step_comparison(batch: int = 8, T: int = 128, steps: int = 8, device=None) -> dict:
    """Ours vs HF GPT-2 (fp32) and ours in bf16 autocast, timed step by step in turns.

    Each model's own training loss: ours is ``GPT.loss`` (what ``companion.train.fit`` calls: the
    fused output layer + cross-entropy of :mod:`companion.transformer.loss`), HF's is
    ``GPT2LMHeadModel(input_ids, labels=...).loss``. Same weights, batch, AdamW.
    """
    dev = get_device(device)
    c, ours, hf_model, bf16 = _models(dev)
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, c.vocab_size - 3, (batch, T + 1), generator=g).to(dev)
    x, y = data[:, :-1], data[:, 1:]
    ours_step, ours_losses = _step_fn(ours, x, y, lambda m, x, y: m.loss((x, y)))
    hf_step, _ = _step_fn(hf_model, data[:, :-1], None, lambda m, x, _: m(input_ids=x, labels=x).loss)
    bf16_step, bf16_losses = _step_fn(bf16, x, y, lambda m, x, y: m.loss((x, y)), autocast=True)
    wall, cpu = _interleaved({"ours": ours_step, "hf": hf_step, "bf16": bf16_step}, steps, warmup=2)
    tokens = batch * T
    out: dict = {
        "ours_train_tokens_per_cpu_s": tokens / statistics.median(cpu["ours"]),
        "hf_gpt2_train_tokens_per_cpu_s": tokens / statistics.median(cpu["hf"]),
        "ours_train_tokens_per_s": tokens / statistics.median(wall["ours"]),
        "hf_gpt2_train_tokens_per_s": tokens / statistics.median(wall["hf"]),
        "bf16_train_tokens_per_s": tokens / statistics.median(wall["bf16"]),
    }
    _put_ratio(out, "train_speedup_vs_hf", wall["hf"], wall["ours"])
    _put_ratio(out, "train_cpu_time_speedup_vs_hf", cpu["hf"], cpu["ours"])
    _put_ratio(out, "bf16_speedup_vs_fp32", wall["ours"], wall["bf16"])
    _put_ratio(out, "bf16_cpu_time_speedup_vs_fp32", cpu["ours"], cpu["bf16"])
    peak, peak16 = matmul_peak(device=dev), matmul_peak(torch.bfloat16, device=dev)
    fpt = flops_per_token(c, T)
    out["matmul_peak_gflops_fp32"] = peak / 1e9
    out["matmul_peak_gflops_bf16"] = peak16 / 1e9
    out["ours_mfu_fp32"] = out["ours_train_tokens_per_s"] * fpt / peak
    out["hf_mfu_fp32"] = out["hf_gpt2_train_tokens_per_s"] * fpt / peak
    out["ours_mfu_bf16"] = out["bf16_train_tokens_per_s"] * fpt / peak16
    out["flops_per_token"] = fpt
    # the same weights, batch and steps (lr 1e-3, so the loss moves): the two curves side by side
    out["bf16_loss_curve_max_abs_diff"] = max(abs(a - b) for a, b in zip(ours_losses, bf16_losses))
    out["fp32_loss_first_last"] = f"{ours_losses[0]:.4f} -> {ours_losses[-1]:.4f}"
    out["bf16_loss_first_last"] = f"{bf16_losses[0]:.4f} -> {bf16_losses[-1]:.4f}"
    return out


def gemm_dtype_speeds(sizes=(256, 1024, 2048), device=None) -> dict:
    """bf16 over fp32 speed of an ``n x n`` matmul at several n, timed by process CPU time (on
    the current threads): bf16 training can only gain what its matrix products gain."""
    dev = get_device(device)
    out = {}
    for n in sizes:
        t = {}
        for dt in (torch.float32, torch.bfloat16):
            a = torch.randn(n, n, device=dev).to(dt)
            b = torch.randn(n, n, device=dev).to(dt)
            reps = max(1, (1024 // n) ** 3)
            best = float("inf")
            for i in range(6):  # the first call warms up
                c0 = time.process_time()
                for _ in range(reps):
                    a @ b
                best = min(best, time.process_time() - c0) if i else best
            t[dt] = 2 * n**3 * reps / best / 1e9
        out[f"gemm_{n}_gflops_per_cpu_s_fp32"] = t[torch.float32]
        out[f"gemm_{n}_gflops_per_cpu_s_bf16"] = t[torch.bfloat16]
        out[f"gemm_{n}_bf16_speedup_vs_fp32"] = t[torch.bfloat16] / t[torch.float32]
    return out


OP_GROUPS = {"matmul": ("mm", "addmm", "bmm", "matmul", "linear"), "copy_cast": ("_to_copy", "copy_", "to"),
             "attention": ("flash_attention",), "softmax_loss": ("softmax", "exp", "gather", "scatter")}


def step_profile(batch: int = 8, T: int = 128, device=None) -> dict:
    """Where an fp32 and a bf16-autocast step of ours spend their time: the profiler's self time
    grouped into matrix products, copies and dtype casts, attention, the loss's softmax, and the
    rest (optimizer, layer norm, GELU, ...), in ms per step (wall time inside the profiler: on a
    loaded machine compare the groups, not the absolute numbers)."""
    from torch.profiler import ProfilerActivity, profile

    dev = get_device(device)
    c, ours, _, bf16 = _models(dev)
    data = torch.randint(0, c.vocab_size - 3, (batch, T + 1), generator=torch.Generator().manual_seed(0)).to(dev)
    x, y = data[:, :-1], data[:, 1:]
    out = {}
    for name, model, ac in (("fp32", ours, False), ("bf16", bf16, True)):
        step, _ = _step_fn(model, x, y, lambda m, x, y: m.loss((x, y)), autocast=ac)
        step()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(2):
                step()
        groups = dict.fromkeys([*OP_GROUPS, "rest"], 0.0)
        for ev in prof.key_averages():
            op = ev.key.removeprefix("aten::")
            if not ev.key.startswith("aten::"):
                continue
            group = next((g for g, names in OP_GROUPS.items()
                          if op in names or any(n in op for n in names if len(n) > 4)), "rest")
            groups[group] += ev.self_cpu_time_total / 1e3 / 2
        for g, ms in groups.items():
            out[f"profile_{name}_{g}_ms"] = ms
    return out


def generation_comparison(new_tokens: int = 256, prompt: int = 16, batch: int = 1, rounds: int = 3,
                          device=None) -> dict:
    """Greedy generation with and without the KV cache, ``rounds`` alternating repeats; the same
    tokens checked. Ratios of wall and of process CPU time (median, spread)."""
    dev = get_device(device)
    c = GPTConfig(**SHAPE)
    model = GPT(c, seed=0).to(dev).eval()
    ids = torch.randint(0, c.vocab_size - 3, (batch, prompt), generator=torch.Generator().manual_seed(0)).to(dev)
    res = {}
    fns = {"cache": lambda: res.__setitem__(True, model.generate(ids, new_tokens, temperature=0)),
           "no_cache": lambda: res.__setitem__(False, model.generate(ids, new_tokens, temperature=0,
                                                                     use_cache=False))}
    model.generate(ids, 8, temperature=0)
    wall, cpu = _interleaved(fns, rounds, warmup=0)
    out = {f"generate_{k}_tokens_per_s": new_tokens * batch / statistics.median(v) for k, v in wall.items()}
    _put_ratio(out, "kv_cache_speedup", wall["no_cache"], wall["cache"])
    _put_ratio(out, "kv_cache_cpu_time_speedup", cpu["no_cache"], cpu["cache"])
    out["kv_cache_same_tokens"] = bool(torch.equal(res[True], res[False]))
    return out


def _cpu_time_mfu(out: dict, sfx: str) -> None:
    """MFU per CPU second (one thread): tokens per CPU-second x FLOPs per token over the 1024^3
    matmul's FLOPs per CPU-second -- what the load on a shared machine does not move much. And
    whether bf16 can reach the issue's 1.5x here: not when its matmuls are slower than fp32's."""
    peak = out.get(f"gemm_1024_gflops_per_cpu_s_fp32{sfx}")
    if not peak:
        return
    fpt = out[f"flops_per_token{sfx}"]
    out[f"ours_mfu_fp32_per_cpu_s{sfx}"] = out[f"ours_train_tokens_per_cpu_s{sfx}"] * fpt / (peak * 1e9)
    out[f"hf_mfu_fp32_per_cpu_s{sfx}"] = out[f"hf_gpt2_train_tokens_per_cpu_s{sfx}"] * fpt / (peak * 1e9)
    g = max(out[f"gemm_{n}_bf16_speedup_vs_fp32{sfx}"] for n in (256, 1024, 2048))
    out["bf16_verdict"] = (f"bf16 matmuls run at most {g:.2f}x fp32's speed here, so no bf16 step can be "
                           "1.5x faster on this CPU" if g < 1.5 else
                           f"bf16 matmuls run up to {g:.2f}x fp32's speed here")


def run(device: str | None = None) -> dict:
    """All comparisons; a flat dict of throughputs, ratios and the machine.

    On the CPU everything is measured twice: on torch's threads and on one thread (keys ending
    ``_1thread``). On a CPU shared with other processes a second OpenMP thread that waits for a
    descheduled sibling slows every operation; on one thread the process CPU time (the
    ``cpu_time`` ratios) is what the code itself costs, whatever the load.
    """
    dev = get_device(device)
    out: dict = {"device": describe(dev), "shape": json.dumps(SHAPE), "batch_x_tokens": "8 x 128",
                 "threads": torch.get_num_threads(), "load_average_at_start": os.getloadavg()[0]}
    out.update(train_step_comparison(device=dev))
    out.update(generation_comparison(device=dev, rounds=1 if dev.type == "cpu" else 3))
    if dev.type == "cpu" and torch.get_num_threads() > 1:
        from companion.word2vec._loop import intra_op_threads

        with intra_op_threads(1):
            one = {**train_step_comparison(device=dev), **generation_comparison(device=dev),
                   **gemm_dtype_speeds(device=dev), **step_profile(device=dev)}
        out.update({f"{k}_1thread": v for k, v in one.items()})
        _cpu_time_mfu(out, "_1thread")
    else:
        out.update({**gemm_dtype_speeds(device=dev), **step_profile(device=dev)})
        _cpu_time_mfu(out, "")
    out["load_average_at_end"] = os.getloadavg()[0]
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
