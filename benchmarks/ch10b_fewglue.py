"""Chapter 10b: FewGLUE's RTE, CB and BoolQ with 32 labelled examples (Schick & Schütze 2021).

all-MiniLM-L6-v2, the same recipe as the chapter's data-points curve (learning rate 1e-4,
batches of 16, a fixed number of optimizer steps, warm-up over 10 %), three ways:

* head-based fine-tuning (a new linear head on the mean-pooled encoder);
* prompt-based fine-tuning with one pattern-verbalizer pair (PET's single-pattern model);
* PET's ensemble: two pattern-verbalizer pairs, each fine-tuned, their label logits averaged
  (PET's distillation into a classifier is left out: CB and BoolQ have no unlabelled set here).

Evaluation sets. RTE: the first ``N_RTE`` pairs of PASCAL RTE-3's test set (the book's ``rte``),
without any pair that is also among FewGLUE's 32, with seeds 0 and 1. CB and BoolQ: the book
stores only FewGLUE's 32 training examples of each, no labelled evaluation set, so they are
scored by 4-fold cross-validation over the 32 (train on 24, score the other 8; every example
scored once; the folds are the spread): 24-shot, not 32-shot, and said so.

    OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.ch10b_fewglue companion/transfer/fewglue_rows.json

or one process per task (``... OUT RTE``, ``... OUT CB``, ``... OUT BoolQ``, each writing
``OUT.RTE`` etc.), then ``python -m benchmarks.ch10b_fewglue --merge OUT`` joins the parts.
The notebook reads the result; it does not rerun it.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from companion.data import load_task
from companion.data.tasks import Example
from companion.transfer import chapter10 as c10
from companion.transfer import pet, prompts
from companion.transfer.finetune import FTConfig, run_classifier

MAX_LEN = 64
STEPS = 16       # optimizer steps per run (the chapter's curve_steps at laptop scale)
BATCH = 16
N_RTE = 200
FOLDS = 4
PVPS = {  # the last {slot} is cut first when an input is too long: the premise / passage
    "RTE": (pet.PVP("{text_b} ? [MASK] , {text}", ("yes", "no")),
            pet.PVP("{text_b} ? [MASK] . {text}", ("yes", "no"))),
    "CB": (pet.PVP("{text_b} ? [MASK] , {text}", ("yes", "maybe", "no")),
           pet.PVP("{text_b} ? [MASK] . {text}", ("yes", "maybe", "no"))),
    "BoolQ": (pet.PVP("{text} ? [MASK] . {text_b}", ("no", "yes")),
              pet.PVP("question : {text} ? answer : [MASK] . {text_b}", ("no", "yes"))),
}


def config(n: int, seed: int) -> FTConfig:
    bs = min(BATCH, n)
    return FTConfig(epochs=max(1, math.ceil(STEPS * bs / n)), lr=c10.LR["full"], batch_size=bs, warmup=0.1,
                    max_len=MAX_LEN, seed=seed)


def three_ways(encoder, tokenize, cloze, task: str, train: list[Example], test: list[Example], n_out: int,
               seed: int) -> dict[str, float]:
    cfg = config(len(train), seed)
    gold = np.array([int(e.label) for e in test])
    head = run_classifier(encoder, tokenize, train, test, n_out, cfg, method="full")
    logits = []
    for pvp in PVPS[task]:
        _, clf = pet.run_prompt_classifier(cloze, pvp, train, test, cfg)
        logits.append(clf.label_logits(test, MAX_LEN))
    acc = lambda z: 100 * float((np.asarray(z).argmax(-1) == gold).mean())
    return {"head-based fine-tuning": head.score, "prompt-based fine-tuning": acc(logits[0]),
            "PET ensemble (2 PVPs)": acc(np.mean(logits, 0))}


def main(out: str, tasks: tuple[str, ...] = ("RTE", "CB", "BoolQ")) -> None:
    torch.set_num_threads(1)
    encoder, tokenize = c10.minilm(None)
    cloze = prompts.minilm_cloze()
    t0 = time.process_time()
    rows = []
    few = {t: load_task(f"fewglue_{t.lower()}").splits["train"] for t in PVPS}
    seen = {(e.text, e.text_b) for e in few["RTE"]}
    rte_test = [e for e in load_task("rte").splits["test"] if (e.text, e.text_b) not in seen][:N_RTE]
    for seed in (0, 1) if "RTE" in tasks else ():
        for method, score in three_ways(encoder, tokenize, cloze, "RTE", few["RTE"], rte_test, 2, seed).items():
            rows.append({"task": "RTE", "method": method, "unit": f"seed {seed}", "n_train": 32,
                         "n_test": len(rte_test), "accuracy": score})
        print(rows[-3:], flush=True)
    for task, n_out in (("CB", 3), ("BoolQ", 2)):
        if task not in tasks:
            continue
        exs = few[task]
        order = np.random.default_rng(0).permutation(len(exs))
        for f in range(FOLDS):
            test_idx = set(order[f::FOLDS].tolist())
            train = [e for i, e in enumerate(exs) if i not in test_idx]
            test = [exs[i] for i in sorted(test_idx)]
            for method, score in three_ways(encoder, tokenize, cloze, task, train, test, n_out, 0).items():
                rows.append({"task": task, "method": method, "unit": f"fold {f}", "n_train": len(train),
                             "n_test": len(test), "accuracy": score})
            print(rows[-3:], flush=True)
    majority = {"RTE": 100 * max(np.bincount([int(e.label) for e in rte_test])) / len(rte_test)}
    for t in ("CB", "BoolQ"):
        majority[t] = 100 * max(np.bincount([int(e.label) for e in few[t]])) / len(few[t])
    meta = {"model": "all-MiniLM-L6-v2", "max_len": MAX_LEN, "steps": STEPS, "batch_size": BATCH,
            "lr": c10.LR["full"], "folds": FOLDS, "n_rte_test": len(rte_test),
            "rte_test": "PASCAL RTE-3 test (the book's rte), FewGLUE's pairs removed",
            "majority %": majority,
            "pvps": {t: [[p.pattern, list(p.words)] for p in v] for t, v in PVPS.items()},
            "command": "OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.ch10b_fewglue "
                       "companion/transfer/fewglue_rows.json",
            "cpu_s": round(time.process_time() - t0, 1), "tasks": list(tasks), "torch": torch.__version__,
            "machine": platform.machine(), "date": time.strftime("%Y-%m-%d")}
    with open(out + ".tmp", "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    import os

    os.replace(out + ".tmp", out)
    print(json.dumps(meta, indent=1))


def merge(out: str, tasks: tuple[str, ...] = ("RTE", "CB", "BoolQ")) -> None:
    """Join the per-task parts ``OUT.<task>`` into ``OUT`` (rows concatenated, CPU seconds added)."""
    import os

    parts = [json.loads(Path(f"{out}.{t}").read_text()) for t in tasks]
    meta = dict(parts[0]["meta"])
    meta["cpu_s"] = round(sum(p["meta"]["cpu_s"] for p in parts), 1)
    meta["tasks"] = list(tasks)
    meta["note"] = "run as one process per task, CPU seconds added"
    with open(out + ".tmp", "w") as fh:
        json.dump({"meta": meta, "rows": [r for p in parts for r in p["rows"]]}, fh, indent=1)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    if sys.argv[1] == "--merge":
        merge(sys.argv[2])
    else:
        main(sys.argv[1] if len(sys.argv[2:]) == 0 else f"{sys.argv[1]}.{sys.argv[2]}",
             tuple(sys.argv[2:]) or ("RTE", "CB", "BoolQ"))
