"""Chapter 10b's positive anchor at laptop size, three seeds: induction heads and in-context learning.

Run from the repository root (one thread, low priority; a few CPU-minutes):

    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_induction

Each seed runs :func:`companion.transfer.induction.anchor` at ``laptop`` size: a 2-layer
attention-only Transformer trained on repeated random segments and bursty key->value sequences
(the ICL score tracked every 25 steps), the heads' induction and previous-token scores, the top
induction head and a random other head of the same layer ablated, few-shot accuracy on unseen
mappings for k = 0, 1, 2, 4, 8, and Chan et al.'s bursty against uniform key->value training.
Writes ``companion/transfer/induction_results.json``: every seed's numbers and curve, and a
summary (mean and min-max over the seeds), with the date, the machine and this command.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

from benchmarks import cpu_name
from companion.fileio import atomic_write_text
from companion.transfer import induction as ind

OUT = Path(ind.__file__).with_name("induction_results.json")
SEEDS = (0, 1, 2)
COMMAND = "OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_induction"


def spread(values) -> dict[str, float]:
    """Mean and min-max of per-seed values (rounded to 4 significant digits)."""
    v = np.asarray(list(values), dtype=float)
    return {"mean": float(f"{v.mean():.4g}"), "min": float(f"{v.min():.4g}"), "max": float(f"{v.max():.4g}")}


def _plain(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k != "runs"}
    for key in ("k_curve", "k_curve_top_ablated"):
        out[key] = {str(k): v for k, v in out[key].items()}
    for arm in ("bursty", "uniform"):
        if arm in out:
            out[arm] = {**out[arm], "k_curve": {str(k): v for k, v in out[arm]["k_curve"].items()}}
    return out


def summarise(runs: list[dict], ks) -> dict:
    s = {
        "phase_step": spread(r["phase_step"] if r["phase_step"] is not None else np.nan for r in runs),
        "icl_before": spread(r["icl_before"] for r in runs),
        "icl_after": spread(r["icl_after"] for r in runs),
        "repeat_loss_before": spread(r["repeat_loss_before"] for r in runs),
        "repeat_loss_after": spread(r["repeat_loss_after"] for r in runs),
        "top_induction_score": spread(max(map(max, r["induction"])) for r in runs),
        "top_previous_token_score_layer1": spread(max(r["previous"][0]) for r in runs),
    }
    for which in ("ablate_top", "ablate_other"):
        for key in ("d_repeat_loss", "d_icl_score", "d_fresh_loss"):
            s[f"{which}.{key}"] = spread(r[which][key] for r in runs)
    s["ablation_gap_repeat_loss"] = spread(r["ablate_top"]["d_repeat_loss"] - r["ablate_other"]["d_repeat_loss"]
                                           for r in runs)
    s["k_curve"] = {str(k): spread(r["k_curve"][str(k)] for r in runs) for k in ks}
    s["k_curve_top_ablated"] = {str(k): spread(r["k_curve_top_ablated"][str(k)] for r in runs) for k in ks}
    s["copy_a_shown_value_baseline"] = {str(k): round(1 / k, 4) for k in ks if k}
    for arm in ("bursty", "uniform"):
        if all(arm in r for r in runs):
            s[arm] = {"icl_score_on_bursty_kv": spread(r[arm]["icl_score"] for r in runs),
                      "induction_max": spread(r[arm]["induction_max"] for r in runs),
                      "k_curve": {str(k): spread(r[arm]["k_curve"][str(k)] for r in runs) for k in ks}}
    return s


def main(seeds=SEEDS, scale: str = "laptop", out: Path = OUT, **overrides) -> dict:
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    config = ind.config(scale, **overrides)
    runs = []
    for seed in seeds:
        start = time.process_time()
        r = ind.anchor(config, seed=seed)
        r = _plain(r)
        r["cpu_seconds"] = round(time.process_time() - start, 1)
        runs.append(r)
        print(f"seed {seed}: phase step {r['phase_step']}, ICL score {r['icl_before']:+.2f} -> {r['icl_after']:+.2f}, "
              f"top head {r['top_head']} (induction {max(map(max, r['induction'])):.2f}), ablating it "
              f"{r['ablate_top']['d_repeat_loss']:+.2f} nats on repeats (other head {r['other_head']}: "
              f"{r['ablate_other']['d_repeat_loss']:+.2f}), k-curve {r['k_curve']}, "
              f"bursty {r['bursty']['k_curve']}, uniform {r['uniform']['k_curve']}; {r['cpu_seconds']} CPU-s",
              flush=True)
    result = {
        "what": "chapter 10b's induction-head anchor (companion.transfer.induction.anchor), one run per seed",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu_name()}, {os.cpu_count()} cores (shared, under load), one torch thread",
        "command": COMMAND,
        "python": sys.version.split()[0], "torch": torch.__version__,
        "scale": scale, "config": dataclasses.asdict(config), "seeds": list(seeds),
        "summary": summarise(runs, config.ks),
        "runs": runs,
    }
    atomic_write_text(out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))
    return result


if __name__ == "__main__":
    main()
