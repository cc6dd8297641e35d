"""Chapter 6a's PTB presets: the gpu preset is Zaremba et al.'s small model, and the gpu script's
PTB part runs end to end on the CPU at ci scale on a tiny generated corpus."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

from companion.contextual.recipes import ZAREMBA_SMALL_TEST_PPL, ptb_preset

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_preset_is_zaremba_small():
    cfg, plan = ptb_preset(10_000, "gpu")
    assert (cfg.emb_dim, cfg.hidden, cfg.n_layers, cfg.dropout, cfg.output) == (200, 200, 2, 0.0, "full")
    assert not cfg.tie_weights
    assert (plan.optimizer, plan.lr, plan.batch_size, plan.seq_len, plan.epochs) == ("sgd", 1.0, 20, 20, 13)
    assert (plan.clip, plan.halve_after, plan.decay, plan.max_steps) == (5.0, 4, 0.5, None)
    assert ZAREMBA_SMALL_TEST_PPL == 114.5
    lap, lap_plan = ptb_preset(10_000, "laptop")  # same shape, cut to fit a CPU
    assert (lap.emb_dim, lap.hidden, lap.n_layers, lap.dropout) == (200, 200, 2, 0.0)
    assert lap_plan.max_steps is not None


def _tiny_corpus(n: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(30)]
    return [[rng.choice(words) for _ in range(rng.randint(3, 9))] + ["<unk>"] for _ in range(n)]


def test_gpu_script_ptb_part_runs_on_cpu_at_ci_scale():
    spec = importlib.util.spec_from_file_location("ch06a_gpu", ROOT / "benchmarks/gpu/ch06a_gpu_scale.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    splits = {"train": _tiny_corpus(300, 0), "valid": _tiny_corpus(30, 1), "test": _tiny_corpus(30, 2)}
    out = script.run_ptb(splits, "cpu", scale="ci")
    assert out["published_test_ppl"] == 114.5
    assert out["config"]["n_layers"] == 2 and out["steps"] >= 1
    assert math.isfinite(out["test_ppl"]) and 1 < out["test_ppl"] < 40  # 32 words: below uniform-ish
    assert 0 < out["epochs_seen"] <= 1
