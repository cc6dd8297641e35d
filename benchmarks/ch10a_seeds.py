"""Chapter 10a: AG News's second seed, stored, so that its claims get their own spread.

The notebook runs AG News with one seed (seed 0) to stay within five minutes; this script runs
the same five methods (frozen features, full fine-tuning, BitFit, adapters, LoRA) at ``laptop``
sizes with seeds 0 and 1: the same split, the rates chosen on the dev split
(``lr_choice.json``), the head at its own rate, torch on two threads as in the notebook. Seed 0
repeats the notebook's run, so the notebook can show that the stored run and its own agree.

    BOOK_SCALE=laptop python benchmarks/ch10a_seeds.py companion/transfer/stored_seeds.json

The notebook reads the result (``chapter10.stored_seeds``); it does not rerun it.
"""

from __future__ import annotations

import json
import platform
import sys
import time

import torch
from threadpoolctl import threadpool_limits

from companion.fileio import atomic_write_text
from companion.transfer import chapter10 as c10

METHODS = ["features", "full", "bitfit", "adapters", "lora"]
SEEDS = (0, 1)


def main(out: str) -> None:
    torch.set_num_threads(2)  # as notebook 10a at laptop scale: same threads, same sums
    threadpool_limits(1)
    s = c10.transfer_sizes("laptop")
    encoder, tokenize = c10.minilm(s.n_layer)
    choice, meta = c10.stored_lr_choice()
    lrs = c10.best_lrs(choice[choice.head_lr.notna()])
    train, test = c10.task_split("ag_news", s.n_train, s.n_test)
    t0, w0 = time.process_time(), time.perf_counter()
    runs = c10.transfer_runs(encoder, tokenize, train, test, s, METHODS, 4, lrs, meta["head_lr"], SEEDS)
    scores = {str(seed): {m: runs[m][i].score for m in METHODS} for i, seed in enumerate(SEEDS)}
    info = {k: getattr(s, k) for k in c10.STORED_SIZE_KEYS}
    info.update(seeds=list(SEEDS), lrs={m: lrs.get(m, c10.LR[m]) for m in METHODS}, head_lr=meta["head_lr"],
                command=f"BOOK_SCALE=laptop python benchmarks/ch10a_seeds.py {out}",
                cpu_s=round(time.process_time() - t0, 1), wall_s=round(time.perf_counter() - w0, 1),
                torch=torch.__version__, machine=platform.machine(), date=time.strftime("%Y-%m-%d"))
    atomic_write_text(out, json.dumps({"meta": info, "tasks": {"ag_news": scores}}, indent=1) + "\n")
    print(json.dumps(scores, indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: BOOK_SCALE=laptop python benchmarks/ch10a_seeds.py OUT.json")
    main(sys.argv[1])
