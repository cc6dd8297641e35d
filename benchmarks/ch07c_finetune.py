"""Chapter 7c's claim check, all seeds: fine-tuning the stored ``gpt-book`` (or ``bert-book``)
against the same network randomly initialised, on SST-2 and an IMDb test sample.

Run from the repository root (one thread, low priority; a CPU-hour or so at laptop sizes):

    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch07c_finetune [--model bert-book]

Seeds can run in separate processes and be merged afterwards (each writes its own part):

    python -m benchmarks.ch07c_finetune --seeds 0 --part   # and 1, 2 alongside
    python -m benchmarks.ch07c_finetune --merge

or split by task (``--tasks sst2 --seeds 0,1,2 --part`` beside ``--tasks imdb ...``); every
finished (seed, task) is saved at once, and the merge takes, per task, the seeds that finished.

For every seed and task: the stored model + a linear head and its random twin + the same head
(:func:`companion.zoo.finetune.finetune_classifier`, the same config; BERT's head on the mean
of its final states), their test predictions and training-loss curves. Once: the majority class
and frozen-features probes (logistic regression on mean-pooled states of the stored model and
of the untrained twin), and for ``gpt-book`` the add-one unigram counts of its training stream
(for chapter 7c's unigram row on Brown). Writes ``companion/zoo/finetune_results.json``
(``gpt-book``) or ``companion/zoo/finetune_results_bert-book.json`` with the date, the machine
and this command.
"""

from __future__ import annotations

import argparse
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
from companion import zoo
from companion.fileio import atomic_write_text
from companion.zoo import finetune as ft

OUT = Path(ft.__file__).with_name("finetune_results.json")
MODELS = ("gpt-book", "bert-book")
COMMAND = "OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch07c_finetune"
# How the shared learning rate was chosen (2026-12-03, the same machine, seed 0): both arms
# fine-tuned on 2,000 SST-2 training phrases for 3 epochs (FinetuneConfig otherwise as in the
# laptop sizes) and scored on 600 sentences of the GLUE split's dev part (not its test set).
# 3e-4 is the better rate for both arms, the random one included.
LR_CHECK = {"data": "SST-2: 2,000 training phrases, 600 dev sentences (seeded samples), seed 0, 3 epochs",
            "dev accuracy %": {"1e-4": {"pre-trained": 74.3, "random init": 69.0},
                               "3e-4": {"pre-trained": 76.0, "random init": 69.7}},
            "final train loss": {"1e-4": {"pre-trained": 0.397, "random init": 0.425},
                                 "3e-4": {"pre-trained": 0.178, "random init": 0.284}},
            "chosen": 3e-4}


def _part_dir() -> Path:
    from companion.data.fetching import data_dir

    return data_dir() / "ch07c"


def _curve(losses: list[float], every: int = 10) -> list[float]:
    """The training loss averaged over consecutive blocks of ``every`` steps (4 digits)."""
    x = np.asarray(losses, dtype=float)
    return [float(f"{x[i:i + every].mean():.4g}") for i in range(0, len(x), every)]


def _prefix(model_name: str) -> str:
    """Part-file prefix: none for ``gpt-book`` (its parts came first), the name for the others."""
    return "" if model_name == "gpt-book" else f"{model_name}-"


TASKS = ("sst2", "imdb")


def run_seed(seed: int, s: ft.Sizes, data: dict, net, tok, tasks=TASKS, save=None) -> dict:
    """Both arms of ``seed`` on ``tasks``; ``save(task, runs)`` after each task (so that a
    stopped process keeps its finished tasks)."""
    out = {}
    for task in tasks:
        cfg = getattr(s, task)
        d = data[task]
        for arm, model in (("pre-trained", net), ("random init", ft.random_twin(net, seed))):
            c0 = time.process_time()
            r = ft.finetune_classifier(model, tok, d["train"], d["test"], cfg, seed=seed)
            acc = ft.accuracy(r.predictions, [e.label for e in d["test"]])
            out[f"{task}/{arm}"] = {"accuracy": acc, "predictions": r.predictions.tolist(),
                                    "train_loss_every10": _curve(r.step_loss), "final_train_loss": r.final_loss(),
                                    "steps": r.steps, "wall_seconds": round(r.seconds, 1),
                                    "cpu_seconds": round(time.process_time() - c0, 1)}
            print(f"seed {seed} {task} {arm}: {acc:.1f}% (final train loss {r.final_loss():.3f}, {r.steps} steps, "
                  f"{r.seconds:.0f} s)", flush=True)
        if save is not None:
            save(task, {k: v for k, v in out.items() if k.startswith(f"{task}/")})
    return out


def baselines(s: ft.Sizes, data: dict, net, tok, model_name: str = "gpt-book", tasks=TASKS) -> dict:
    out = {}
    twin = ft.random_twin(net, 0)
    for task in tasks:
        d, L = data[task], getattr(s, task).max_len
        ytr, yte = [e.label for e in d["train"]], [e.label for e in d["test"]]
        out[f"{task}/majority"] = ft.majority_accuracy(ytr, yte)
        for name, model in ((model_name, net), ("untrained twin", twin)):
            acc, _ = ft.probe_accuracy(ft.pooled_features(model, tok, d["train"], L), ytr,
                                       ft.pooled_features(model, tok, d["test"], L), yte)
            out[f"{task}/frozen probe, {name}"] = acc
            print(f"{task} frozen probe ({name}): {acc:.1f}%", flush=True)
    return out


def unigram_counts() -> list[int]:
    """Token counts of ``gpt-book``'s training stream (the unigram baseline's data)."""
    from companion.zoo.corpus import token_stream

    return np.bincount(token_stream("train"), minlength=len(zoo.tokenizer()) + 3).tolist()


def _load_part(parts: Path, pre: str, scale: str, seed: int, task: str) -> dict | None:
    """Seed ``seed``'s runs of ``task``: its own part file, else the seed's file of both tasks
    (the layout of the first ``gpt-book`` run); ``None`` if neither holds them."""
    for f in (parts / f"{pre}{scale}-{task}-seed{seed}.json", parts / f"{pre}{scale}-seed{seed}.json"):
        if f.is_file():
            runs = {k: v for k, v in json.loads(f.read_text()).items() if k.startswith(f"{task}/")}
            if runs:
                return runs
    return None


def main(seeds=(0, 1, 2), scale: str = "laptop", part: bool = False, merge: bool = False, out: Path | None = None,
         model: str = "gpt-book", limit: int | None = None, tasks=TASKS, do_baselines: bool | None = None) -> dict | None:
    """Run (``part``: only the given seeds and ``tasks``, to merge later) or ``merge`` chapter
    7c's check of ``model`` (one of :data:`MODELS`) at ``scale``; ``limit`` cuts every split to
    a seeded sample of ``limit`` examples (a cost estimate: its parts are never merged).
    ``do_baselines`` (default: when seed 0 is run) computes the majority and probe baselines of
    ``tasks`` first. The merge takes, per task, the seeds whose part is there."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if not tasks or any(t not in TASKS for t in tasks):
        raise ValueError(f"tasks must be a non-empty subset of {TASKS}, got {tasks!r}")
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    out = ft.results_path(model) if out is None else out
    s = ft.sizes(scale)
    parts = _part_dir()
    pre = _prefix(model) + (f"limit{limit}-" if limit else "")
    if not merge:
        net, tok = zoo.load(model), zoo.tokenizer()
        data = ft.chapter_data(s)
        if limit:
            data = {t: {k: ft.sample(v, limit) for k, v in d.items()} for t, d in data.items()}
        parts.mkdir(parents=True, exist_ok=True)
        extra_file = parts / f"{pre}{scale}-extra.json"
        if do_baselines if do_baselines is not None else 0 in seeds:  # the one-off work, first
            new = baselines(s, data, net, tok, model, tasks)  # read the file after: a task-split twin may write it
            extra = json.loads(extra_file.read_text()) if extra_file.is_file() else {"baselines": {}}
            extra["baselines"].update(new)
            if model == "gpt-book":
                extra["unigram_counts"] = unigram_counts()
            atomic_write_text(extra_file, json.dumps(extra) + "\n")
        for seed in seeds:
            def save(task, runs, seed=seed):
                atomic_write_text(parts / f"{pre}{scale}-{task}-seed{seed}.json", json.dumps(runs) + "\n")
            run_seed(seed, s, data, net, tok, tasks, save)
        if part or limit:
            return None
    runs: dict[str, dict] = {}
    for seed in seeds:
        for task in TASKS:
            got = _load_part(parts, pre, scale, seed, task)
            if got:
                runs.setdefault(str(seed), {}).update(got)
    extra = json.loads((parts / f"{pre}{scale}-extra.json").read_text())
    data = ft.chapter_data(s)
    summary = {}
    for task in TASKS:
        have = [k for k in runs if f"{task}/pre-trained" in runs[k] and f"{task}/random init" in runs[k]]
        if not have:
            print(f"{task}: no finished seed of {model} in {parts}; the stored run leaves it out", flush=True)
            continue
        gold = [e.label for e in data[task]["test"]]
        a = [np.array(runs[k][f"{task}/pre-trained"]["predictions"]) for k in have]
        b = [np.array(runs[k][f"{task}/random init"]["predictions"]) for k in have]
        iv = ft.paired_interval(a, b, gold, n_boot=s.n_boot)
        summary[task] = {"seeds": [int(k) for k in have],
                         "pre-trained": [runs[k][f"{task}/pre-trained"]["accuracy"] for k in have],
                         "random init": [runs[k][f"{task}/random init"]["accuracy"] for k in have],
                         "difference": {k: float(f"{v:.4g}") for k, v in iv.items()}}
        print(task, json.dumps(summary[task]))
    if not summary:
        raise FileNotFoundError(f"no finished seed of any task for {model} in {parts}")
    head = ("a linear head on the extract token" if model == "gpt-book"
            else "a linear head on the mean of the final states of [CLS] text [SEP]")
    result = {
        "what": f"chapter 7c: {model} fine-tuned vs the same network randomly initialised "
                f"(companion.zoo.finetune), one run per seed, task and arm; {head}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu_name()}, {os.cpu_count()} cores (shared, under load), one torch thread",
        "command": COMMAND + ("" if model == "gpt-book" else f" --model {model}")
                   + " --seeds N --part (one process per seed), then --merge",
        "python": sys.version.split()[0], "torch": torch.__version__,
        "model": {k: zoo.provenance(model)[k] for k in ("name", "version", "weights_sha256")},
        "scale": scale, "sizes": dataclasses.asdict(s), "seeds": sorted({int(k) for k in runs}),
        "lr_check": LR_CHECK if model == "gpt-book" else "the rate chosen for gpt-book (3e-4), unchanged",
        "summary": summary, "baselines": extra["baselines"], "runs": runs,
    }
    if "unigram_counts" in extra:
        result["unigram_counts"] = extra["unigram_counts"]
    atomic_write_text(out, json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--scale", default="laptop")
    p.add_argument("--part", action="store_true")
    p.add_argument("--merge", action="store_true")
    p.add_argument("--model", default="gpt-book", choices=MODELS)
    p.add_argument("--limit", type=int, default=None, help="a seeded sample of N examples of every split (a cost estimate)")
    p.add_argument("--tasks", default=",".join(TASKS), help="the tasks to run, comma-separated (default: both)")
    p.add_argument("--baselines", choices=("yes", "no"), default=None,
                   help="compute the baselines of --tasks first (default: when seed 0 is run)")
    a = p.parse_args()
    main(tuple(int(x) for x in a.seeds.split(",")), a.scale, part=a.part, merge=a.merge, model=a.model,
         limit=a.limit, tasks=tuple(a.tasks.split(",")),
         do_baselines=None if a.baselines is None else a.baselines == "yes")
