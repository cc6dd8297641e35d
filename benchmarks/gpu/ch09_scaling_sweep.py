"""Chapter 9's scaling study at BOOK_SCALE=gpu (eight GPTs up to ~25M non-embedding parameters,
a grid of token budgets up to 10M each): the same code as the notebook, results as JSON for the
chapter to read.

    BOOK_SCALE=gpu python benchmarks/gpu/ch09_scaling_sweep.py OUT.json

Not run yet: no GPU was lent while chapter 9 was written (its stored outputs are laptop scale)."""

from __future__ import annotations

import json
import sys

import numpy as np

from companion.data.lm_corpora import load_pretraining_corpus
from companion.device import describe, get_device
from companion.efficiency import chapter9 as c9
from companion.efficiency import scaling as sc
from companion.scale import get_scale


def main(out: str) -> dict:
    P = sc.family_plan()
    dev = str(get_device())
    tok, rows, held = c9.tokenizer_and_rows(load_pretraining_corpus("train"), load_pretraining_corpus("heldout")[:20],
                                            P.vocab_size, P.corpus_chars, P.block_size,
                                            P.tokenizer_chars)
    runs = sc.train_grid(P.specs, rows, held[:1024], len(tok), budgets=P.budgets, batch_size=P.batch_size,
                         device=dev)
    N = np.array([r.n_params for r in runs], dtype=float)
    L = np.array([r.heldout_loss for r in runs])
    law = sc.fit_power_law(N, L)
    frontier = sc.compute_frontier(runs)
    alloc = sc.fit_allocation(frontier)
    laws_d = sc.d_laws(runs)
    NN, DD, LL = zip(*[(r.n_params, d, v) for r in runs for d, v in r.budget_losses.items()])
    joint = sc.fit_joint(NN, DD, LL)
    res = {"scale": get_scale(), "device": describe(), "grid": sc.grid_frame(runs).reset_index().to_dict("records"),
           "alpha_N": law.alpha, "alpha_N_se": law.alpha_se, "N_c": law.x_c,
           "leave_one_out": sc.leave_one_out(N, L).tolist(), "alpha_C": alloc.loss_law.alpha, "a": alloc.a,
           "k": alloc.k, "alpha_D": {k: [v.alpha, v.alpha_se] for k, v in laws_d.items()},
           "joint": {"alpha_N": joint.alpha_n, "alpha_N_se": joint.alpha_n_se, "alpha_D": joint.alpha_d,
                     "alpha_D_se": joint.alpha_d_se},
           "converged": sc.converged(runs).tolist(), "curves": {r.spec.name: r.step_loss for r in runs}}
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k not in ("curves", "grid")}, indent=1))
    return res


if __name__ == "__main__":
    main(sys.argv[1])
