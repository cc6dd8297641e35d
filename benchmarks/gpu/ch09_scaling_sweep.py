"""Chapter 9's scaling study at BOOK_SCALE=gpu (eight GPTs up to ~25M non-embedding parameters,
a grid of token budgets up to 10M each): the same code as the notebook, results as JSON for the
chapter to read (the record of ``scaling.sweep_record``, which ``scaling.stored_sweep`` reads,
plus the fits under ``"fits"``).

    python benchmarks/gpu/ch09_scaling_sweep.py OUT.json --device cuda [--scale gpu]

Not run yet: no GPU was lent while chapter 9 was written (its stored outputs are laptop scale,
the extended CPU sweep is ``benchmarks/ch09_scaling_sweep_cpu.py``). A test runs ``main`` at a
tiny size on the CPU."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone

import numpy as np
import torch

from companion.device import describe, get_device
from companion.efficiency import chapter9 as c9
from companion.efficiency import scaling as sc


def fits(runs: list[sc.FamilyRun]) -> dict:
    """alpha_N (and its spread), alpha_D per size, the joint law and the compute allocation."""
    N = np.array([r.n_params for r in runs], dtype=float)
    L = np.array([r.heldout_loss for r in runs])
    law = sc.fit_power_law(N, L)
    out = {"alpha_N": law.alpha, "alpha_N_se": law.alpha_se, "N_c": law.x_c,
           "leave_one_out": sc.leave_one_out(N, L).tolist() if len(runs) >= 3 else [],
           "converged": sc.converged(runs).tolist()}
    if len(runs[0].budget_losses) >= 3:
        out["alpha_D"] = {k: [v.alpha, v.alpha_se] for k, v in sc.d_laws(runs).items()}
    try:
        alloc = sc.fit_allocation(sc.compute_frontier(runs))
        out.update(alpha_C=alloc.loss_law.alpha, a=alloc.a, k=alloc.k)
        NN, DD, LL = zip(*[(r.n_params, d, v) for r in runs for d, v in r.budget_losses.items()])
        joint = sc.fit_joint(NN, DD, LL)
        out["joint"] = {"alpha_N": joint.alpha_n, "alpha_N_se": joint.alpha_n_se, "alpha_D": joint.alpha_d,
                        "alpha_D_se": joint.alpha_d_se}
    except ValueError as err:  # a tiny test grid has no frontier to fit
        out["not_fitted"] = str(err)
    return out


def main(out: str, device: str | None = None, scale: str | None = None, plan: sc.FamilyPlan | None = None,
         docs: list[list[str]] | None = None, heldout_docs: list[list[str]] | None = None,
         n_heldout: int = 1024) -> dict:
    """Train ``plan`` (default: ``family_plan(scale)``) on ``device`` and write ``out``."""
    dev = get_device(device)
    plan = plan or sc.family_plan(scale)
    if docs is None:
        from companion.data.lm_corpora import load_pretraining_corpus

        docs, heldout_docs = load_pretraining_corpus("train"), load_pretraining_corpus("heldout")[:20]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    tok, rows, held = c9.tokenizer_and_rows(docs, heldout_docs, plan.vocab_size, plan.corpus_chars, plan.block_size,
                                            plan.tokenizer_chars)
    runs = sc.train_grid(plan.specs, rows, held[:n_heldout], len(tok), budgets=plan.budgets,
                         batch_size=plan.batch_size, device=str(dev))
    record = sc.sweep_record(runs, plan, command=" ".join(["python", *sys.argv]), seed=0, device=describe(dev),
                             torch=torch.__version__, cpu_s=round(time.process_time() - cpu0, 1),
                             wall_s=round(time.perf_counter() - wall0, 1), complete=True,
                             finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    record["fits"] = fits(runs)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=None, separators=(",", ":"))
    print(json.dumps(record["fits"], indent=1))
    return record


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--device", default=None, help="cuda, cuda:1, cpu, ... (default: $BOOK_DEVICE, else the best)")
    ap.add_argument("--scale", default="gpu", choices=("ci", "laptop", "gpu"))
    a = ap.parse_args()
    main(a.out, a.device, a.scale)
