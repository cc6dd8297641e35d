"""Chapter 10a: choose each method's learning rate on a dev split (never the test set).

all-MiniLM-L6-v2, SST-2 (GLUE-lite at ``laptop`` scale): the first 128 training examples,
scored on the first 300 of GLUE-lite's dev split (held out from training; phrases, like the
training set), 3 epochs of 16 (24 steps), one seed, the new head at its own rate 1e-2. The
grid follows the papers' ranges: full fine-tuning 3e-5 to 3e-4 (BERT's 2e-5 to 5e-5 is meant
for thousands of steps), BitFit 1e-4 to 1e-2 (Ben Zaken et al. swept 1e-4 to 1e-3), adapters
and LoRA 1e-3 to 1e-2 (Houlsby et al. swept 3e-5 to 1e-3; Hu et al. used 4e-4 to 5e-4 for
RoBERTa over tens of epochs). A row per method with the old setting (the head at the
method's rate, ``head_lr`` None) shows what the head's own rate changes.

    BOOK_SCALE=laptop python benchmarks/ch10a_lr_choice.py companion/transfer/lr_choice.json

197 CPU-seconds on one thread when it was last run (2026-12-02, after the adapters' start was
seeded; only the adapters' rows changed). The notebook reads the result; it does not rerun it.
"""

from __future__ import annotations

import json
import platform
import sys
import time

import pandas as pd
import torch

from companion.evaluate.glue import load_glue
from companion.transfer import chapter10 as c10

GRID = {"full": (3e-5, 1e-4, 3e-4), "bitfit": (1e-3, 3e-3, 1e-2), "adapters": (1e-3, 3e-3, 1e-2),
        "lora": (1e-3, 3e-3, 1e-2)}
OLD = {"full": (1e-4,), "bitfit": (1e-3,), "adapters": (1e-3,), "lora": (1e-3,)}  # head at the method's rate
HEAD_LR = 1e-2
N_TRAIN, N_DEV = 128, 300


def main(out: str, methods: list[str] | None = None) -> None:
    torch.set_num_threads(1)
    s = c10.transfer_sizes("laptop")
    encoder, tokenize = c10.minilm(s.n_layer)
    sst = load_glue("sst2_glue", "laptop")
    train, dev = sst.train[:N_TRAIN], sst.dev[:N_DEV]
    methods = methods or list(GRID)
    t0 = time.process_time()
    parts = [c10.lr_choice(encoder, tokenize, train, dev, s, {m: GRID[m]}, head_lr=HEAD_LR) for m in methods]
    parts += [c10.lr_choice(encoder, tokenize, train, dev, s, {m: OLD[m]}, head_lr=None) for m in methods]
    rows = pd.concat(parts, ignore_index=True)
    meta = {"task": "sst2_glue", "n_train": N_TRAIN, "n_dev": N_DEV, "epochs": s.epochs,
            "batch_size": s.batch_size, "max_len": s.max_len, "seed": 0, "head_lr": HEAD_LR,
            "cpu_s": round(time.process_time() - t0, 1), "torch": torch.__version__,
            "machine": platform.machine(), "date": time.strftime("%Y-%m-%d")}
    with open(out, "w") as fh:
        json.dump({"meta": meta, "rows": rows.to_dict(orient="records")}, fh, indent=1)
    print(rows.to_string())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or None)
