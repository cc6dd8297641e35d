"""Chapter 9's extended scaling sweep on a CPU, stored for the notebook to read.

The notebook trains five sizes over 15x in its laptop budget; this script trains the eight of
:func:`companion.efficiency.scaling.cpu_sweep_plan` -- three more, d80, d96 and d128 (60x in
non-embedding parameters), first, then the notebook's five -- with the notebook's code
(``train_grid``: one warm-up/stable/decay run per size, cooled-down branches at every smaller
budget), tokenizer, rows, budgets, batch size and seed, on one thread. It writes a JSON record
(sizes, held-out losses per budget, training curves, tokens, seed, command, date, CPU seconds)
that ``scaling.stored_sweep`` reads::

    nice -n 10 python benchmarks/ch09_scaling_sweep_cpu.py companion/efficiency/scaling_sweep_cpu.json

The record is rewritten after every size, so an interrupted run leaves what it finished
(``meta.complete`` is false until the last size). CI never runs this script.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from companion.data.lm_corpora import load_pretraining_corpus
from companion.efficiency import chapter9 as c9
from companion.efficiency import scaling as sc

SEED = 0
N_HELDOUT = 256  # held-out rows of 65 tokens, as the notebook


def _write(path: Path, record: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sweep.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(out: str, plan: sc.FamilyPlan | None = None, device: str = "cpu", n_heldout: int = N_HELDOUT) -> dict:
    torch.set_num_threads(1)
    plan = plan or sc.cpu_sweep_plan()
    path = Path(out)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    tok, rows, held = c9.tokenizer_and_rows(load_pretraining_corpus("train"), load_pretraining_corpus("heldout")[:20],
                                            plan.vocab_size, plan.corpus_chars, plan.block_size, plan.tokenizer_chars)
    if rows.shape[0] * plan.block_size < plan.tokens:
        raise ValueError(f"{plan.corpus_chars:,} characters give {rows.shape[0] * plan.block_size:,} tokens, fewer "
                         f"than the largest budget {plan.tokens:,}: raise corpus_chars (no token twice)")
    meta = {"command": " ".join(["python", *sys.argv]), "seed": SEED, "device": device,
            "threads": torch.get_num_threads(), "torch": torch.__version__, "machine": platform.processor()
            or platform.machine(), "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "train_tokens_available": int(rows.shape[0] * plan.block_size), "heldout_rows": int(min(n_heldout,
                                                                                                     len(held))),
            "note": "one thread, nice -n 10, on a machine shared with other jobs: CPU seconds, not wall, "
                    "measure the cost"}
    runs = []
    for spec in plan.specs:  # one size at a time (the same stream and seed as one train_grid call)
        runs += sc.train_grid([spec], rows, held[:n_heldout], len(tok), budgets=plan.budgets,
                              batch_size=plan.batch_size, seed=SEED, device=device)
        done = len(runs) == len(plan.specs)
        meta.update(cpu_s=round(time.process_time() - cpu0, 1), wall_s=round(time.perf_counter() - wall0, 1),
                    complete=done, finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        _write(path, sc.sweep_record(runs, plan, **meta))
        print(f"{spec.name}: N = {runs[-1].n_params:,}, loss {runs[-1].heldout_loss:.4f}, "
              f"{meta['cpu_s']:.0f} CPU-s so far", flush=True)
    return sc.sweep_record(runs, plan, **meta)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python benchmarks/ch09_scaling_sweep_cpu.py OUT.json")
    main(sys.argv[1])
