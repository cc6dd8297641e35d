"""Chapter 10b's stored runs: prompting the book's own ``bert-book`` and ``gpt-book``.

Run from the repository root (one thread each, low priority):

    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_prompting --part zeroshot --task sst2   # and --task imdb
    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_prompting --part calibration
    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_prompting --part curve --seeds S --ns N   # one process per seed S and size N
    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_prompting --part pet
    python -m benchmarks.ch10b_prompting --merge

Parts (each writes its own file under ``$BOOK_DATA_DIR/ch10b/``; ``--merge`` joins the finished
ones into ``companion/transfer/prompting_results.json`` with the date, the machine, the command
and the weights' sha256):

* ``zeroshot`` -- every pattern x verbalizer of :mod:`companion.transfer.book_prompts` on all
  872 SST-2 dev sentences and a 1,000-review IMDb test sample (each review cut from its end to fit 64 tokens with the pattern),
  for ``bert-book``, its untrained twin and all-MiniLM-L6-v2 (read through its token embeddings);
* ``calibration`` -- ``gpt-book`` with k = 0, 1, 2, 4 demonstrations (several draws), before
  and after contextual calibration, on all 872 SST-2 dev sentences;
* ``curve`` -- head-based against prompt-based fine-tuning of ``bert-book`` at 16 ... 256 SST-2
  training phrases, the same steps, batches and encoder learning rate for both arms;
* ``pet`` -- PET's ensemble of three pattern-verbalizer pairs at 32 examples, its distillation,
  and one iPET generation.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from benchmarks import cpu_name
from companion import zoo
from companion.fileio import atomic_write_text
from companion.transfer import book_prompts as bp
from companion.transfer import prompts
from companion.transfer.chapter10 import balanced_sample

OUT = Path(bp.__file__).with_name("prompting_results.json")
COMMAND = "OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch10b_prompting --part P (one process per part and curve seed), then --merge"
SIZES = {
    "laptop": {"sst2_test": None, "imdb_test": 1000, "sst2_max_len": 64, "imdb_max_len": 64,
               "ks": [0, 2, 4], "draws": 3, "demo_max_tokens": 12,
               "curve_ns": [16, 32, 64, 128, 256], "steps": 40, "lr": 3e-4, "head_lr": 1e-3, "batch_size": 16,
               "pet_n": 32, "pet_unlabelled": 400, "generations": 2, "n_boot": 1000},
    "ci": {"sst2_test": 24, "imdb_test": 8, "sst2_max_len": 32, "imdb_max_len": 48, "ks": [0, 1], "draws": 2,
           "demo_max_tokens": 12, "curve_ns": [8, 16], "steps": 2, "lr": 3e-4, "head_lr": 1e-3, "batch_size": 8,
           "pet_n": 8, "pet_unlabelled": 40, "generations": 2, "n_boot": 100},
}
PVPS = (("{text} It was [MASK].", ("terrible", "great")), ("{text} All in all, it was [MASK].", ("bad", "good")),
        ("Just [MASK]! {text}", ("boring", "fun")))


def _parts() -> Path:
    from companion.data.fetching import data_dir

    p = data_dir() / "ch10b"
    p.mkdir(parents=True, exist_ok=True)
    return p


def data(s: dict, imdb: bool = False) -> dict:
    """SST-2 (the GLUE split: its test is GLUE's 872-sentence dev set) and an IMDb test sample."""
    from companion.data import load_task
    from companion.zoo.finetune import sample

    sst = load_task("sst2_glue").splits
    out = {"sst2_train": sst["train"], "sst2_test": sample(sst["test"], s["sst2_test"])}
    if imdb:  # 50,000 reviews to parse: only the part that reads them
        rev = load_task("imdb").splits
        out.update(imdb_train=rev["train"], imdb_test=sample(rev["test"], s["imdb_test"], 1))
    return out


# MiniLM (22M parameters, the costliest) reads the first patterns only: the grid's cost on a shared CPU
MINILM_PATTERNS = {"sst2": 2, "imdb": 1}
BOOK_PATTERNS = {"sst2": 4, "imdb": 2}  # bert-book and its twin; IMDb's reviews are longer


def part_zeroshot(s: dict, d: dict, task: str) -> dict:
    models = {"bert-book": bp.book_cloze(), "untrained twin": bp.twin_cloze(0), "all-MiniLM-L6-v2": prompts.minilm_cloze()}
    t0 = time.perf_counter()
    frames = []
    for name, m in models.items():
        pats = bp.PATTERNS[: (MINILM_PATTERNS if name == "all-MiniLM-L6-v2" else BOOK_PATTERNS)[task]]
        frames.append(bp.zero_shot_grid({name: m}, pats, bp.VERBALIZERS, d[f"{task}_test"],
                                        max_len=s[f"{task}_max_len"], keep_predictions=True))
        print(frames[-1].drop(columns=["pred", "pred_cal"]).round(1).to_string(), flush=True)
    df = pd.concat(frames, ignore_index=True)
    return {"rows": df.to_dict("records"), "gold": [int(e.label) for e in d[f"{task}_test"]],
            "majority": bp.majority([e.label for e in d[f"{task}_train"]], [e.label for e in d[f"{task}_test"]]),
            "seconds": round(time.perf_counter() - t0, 1)}


def part_calibration(s: dict, d: dict, n_queries: int | None = None) -> dict:
    gpt, tok = zoo.load("gpt-book"), zoo.tokenizer()
    if n_queries:  # the first n dev sentences: a cheaper run
        d = dict(d, sst2_test=d["sst2_test"][:n_queries])
    pool = [e for e in d["sst2_train"] if len(tok.encode_ordinary(e.text)) <= s["demo_max_tokens"]]
    template = prompts.Template("Review: {text}\nSentiment:", sep="\n\n")
    t0 = time.perf_counter()
    df = bp.few_shot_draws(gpt, tok, pool, d["sst2_test"], s["ks"], s["draws"], template, ["bad", "good"])
    print(df.round(1).to_string(), flush=True)
    return {"rows": df.to_dict("records"), "queries": len(d["sst2_test"]), "template": template.query,
            "sep": template.sep, "words": ["bad", "good"],
            "pool": len(pool), "seconds": round(time.perf_counter() - t0, 1)}


def part_curve(s: dict, d: dict, seed: int, ns: list[int] | None = None) -> dict:
    from companion.transfer.pet import PVP

    cloze = bp.book_cloze()
    pvp = PVP(*PVPS[0])
    out = {}
    for n in ns or s["curve_ns"]:
        train = balanced_sample(d["sst2_train"], n, seed)
        cfg = bp.curve_config(n, s["steps"], s["lr"], s["head_lr"], s["batch_size"], s["sst2_max_len"], seed)
        r = bp.head_vs_prompt(cloze, pvp, train, d["sst2_test"], cfg)
        out[str(n)] = r
        print(f"seed {seed} n {n}: head {r['head']['accuracy']:.1f} prompt {r['prompt']['accuracy']:.1f} "
              f"({r['head']['seconds']:.0f} + {r['prompt']['seconds']:.0f} s)", flush=True)
    return out


def part_pet(s: dict, d: dict) -> dict:
    from companion.transfer import chapter10b as c10b
    from companion.transfer.pet import PVP

    cloze = bp.book_cloze()
    pvps = [PVP(p, w) for p, w in PVPS]
    train = balanced_sample(d["sst2_train"], s["pet_n"], 0)
    used = {e.text for e in train}
    unl = [e for e in d["sst2_train"][::-1] if e.text not in used][: s["pet_unlabelled"]]
    cfg = bp.curve_config(s["pet_n"], s["steps"], s["lr"], None, s["batch_size"], s["sst2_max_len"], 0)
    t0 = time.perf_counter()
    gens = c10b.ipet_runs(cloze, cloze.tokenize, pvps, train, unl, d["sst2_test"], cfg, s["steps"],
                          generations=s["generations"], distill_all=True)
    print(gens.round(1).to_string(), flush=True)
    return {"generations": gens.reset_index().to_dict("records"), "pvps": [[p, list(w)] for p, w in PVPS],
            "labelled": len(train), "unlabelled": len(unl), "seconds": round(time.perf_counter() - t0, 1)}


def merge(scale: str, out: Path) -> dict:
    from companion.zoo.finetune import paired_interval

    parts, s = _parts(), SIZES[scale]
    got = {}
    for name in ("calibration", "pet"):
        f = parts / f"{scale}-{name}.json"
        if f.is_file():
            got[name] = json.loads(f.read_text())
    if "calibration" not in got:  # else the largest cheaper run (--n-queries)
        small = sorted(parts.glob(f"{scale}-calibration-q*.json"), key=lambda f: int(f.stem.split("-q")[-1]))
        if small:
            got["calibration"] = json.loads(small[-1].read_text())
    for task in ("sst2", "imdb"):
        f = parts / f"{scale}-zeroshot-{task}.json"
        if f.is_file():
            got.setdefault("zeroshot", {})[task] = json.loads(f.read_text())
    curve = {}
    for f in sorted(parts.glob(f"{scale}-curve-seed*.json")):  # one file per seed, or per seed and n
        seed = re.search(r"seed(\d+)", f.stem).group(1)
        curve.setdefault(seed, {}).update(json.loads(f.read_text()))
    result = {"what": "chapter 10b: prompting bert-book and gpt-book (companion.transfer.book_prompts)",
              "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"{cpu_name()}, {os.cpu_count()} cores (shared, under load), one torch thread per process",
              "command": COMMAND, "scale": scale, "sizes": s,
              "models": {m: {"weights_sha256": zoo.provenance(m)["weights_sha256"],
                             "version": zoo.provenance(m).get("version")} for m in ("bert-book", "gpt-book")},
              "torch": torch.__version__}
    if "zeroshot" in got:
        z = got["zeroshot"]
        for task, t in z.items():
            gold = t["gold"]
            rows = {(r["model"], r["pattern"], r["words"]): r for r in t["rows"]}
            for r in t["rows"]:
                if r["model"] == "bert-book":
                    for ctrl in ("untrained twin", "all-MiniLM-L6-v2"):
                        c = rows.get((ctrl, r["pattern"], r["words"]))
                        if c is None:
                            continue
                        for key, pk in (("accuracy", "pred"), ("calibrated", "pred_cal")):
                            e, lo, hi = bp.paired_bootstrap(r[pk], c[pk], gold, s["n_boot"])
                            r[f"{key} - {ctrl}"] = [round(e, 2), round(lo, 2), round(hi, 2)]
                    maj = np.full(len(gold), int(np.argmax(np.bincount(gold))))
                    for key, pk in (("accuracy", "pred"), ("calibrated", "pred_cal")):
                        e, lo, hi = bp.paired_bootstrap(r[pk], maj, gold, s["n_boot"])
                        r[f"{key} - majority of test"] = [round(e, 2), round(lo, 2), round(hi, 2)]
            for r in t["rows"]:
                r.pop("pred", None)
                r.pop("pred_cal", None)
            t.pop("gold")
        result["zeroshot"] = z
    if "calibration" in got:
        result["calibration"] = got["calibration"]
    if curve:
        gold = [int(e.label) for e in data(s)["sst2_test"]]
        rows, diffs = [], {}
        for seed, c in curve.items():
            for n, r in c.items():
                for arm in ("head", "prompt"):
                    rows.append({"n": int(n), "seed": int(seed), "method": arm, "accuracy": r[arm]["accuracy"],
                                 "final_loss": r[arm]["final_loss"], "steps": r[arm]["steps"],
                                 "seconds": r[arm]["seconds"]})
        for n in s["curve_ns"]:
            have = [sd for sd in curve if str(n) in curve[sd]]
            if have:
                iv = paired_interval([np.array(curve[sd][str(n)]["prompt"]["pred"]) for sd in have],
                                     [np.array(curve[sd][str(n)]["head"]["pred"]) for sd in have], gold,
                                     n_boot=s["n_boot"])
                diffs[str(n)] = {"seeds": [int(x) for x in have], **{k: round(v, 2) for k, v in iv.items()}}
        shrink = None
        lo_n, hi_n = str(s["curve_ns"][0]), str(s["curve_ns"][-1])
        both = [sd for sd in curve if lo_n in curve[sd] and hi_n in curve[sd]]
        if both:
            g = np.asarray(gold)

            def gap(sd, n):  # per example: prompt correct - head correct
                r = curve[sd][n]
                return (np.asarray(r["prompt"]["pred"]) == g).astype(float) - (np.asarray(r["head"]["pred"]) == g)

            per = np.stack([gap(sd, lo_n) - gap(sd, hi_n) for sd in both]) * 100  # [seeds, n]
            d = per.mean(0)
            rng = np.random.default_rng(0)
            boots = np.array([d[rng.integers(0, len(d), len(d))].mean() for _ in range(s["n_boot"])])
            blo, bhi = np.percentile(boots, [2.5, 97.5])
            seed_fx = per.mean(1)
            eff = float(d.mean())
            shrink = {"n_small": int(lo_n), "n_large": int(hi_n), "seeds": [int(x) for x in both],
                      "effect": round(eff, 2), "low": round(float(min(blo, seed_fx.min(), eff)), 2),
                      "high": round(float(max(bhi, seed_fx.max(), eff)), 2)}
        result["curve"] = {"rows": rows, "prompt - head": diffs, "shrink": shrink,
                           "pvp": [PVPS[0][0], list(PVPS[0][1])]}
    if "pet" in got:
        result["pet"] = got["pet"]
    atomic_write_text(out, json.dumps(result, indent=1) + "\n")
    print("wrote", out)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("zeroshot", "calibration", "curve", "pet"))
    ap.add_argument("--task", choices=("sst2", "imdb"), default="sst2", help="the zero-shot part's data set")
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--n-queries", type=int, default=None,
                    help="the calibration part on the first N dev sentences only (a cheaper run)")
    ap.add_argument("--ns", type=int, nargs="*", default=None, help="the curve part's sizes (default: all)")
    ap.add_argument("--scale", default="laptop", choices=sorted(SIZES))
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    s = SIZES[a.scale]
    out = a.out or (OUT if a.scale == "laptop" else _parts() / f"{a.scale}-results.json")
    if a.merge:
        merge(a.scale, out)
        return
    if a.part is None:
        ap.error("give --part or --merge")
    d = data(s, imdb=a.part == "zeroshot" and a.task == "imdb")
    parts = _parts()
    c0, t0 = time.process_time(), time.perf_counter()
    if a.part == "curve":
        for seed in a.seeds:
            r = part_curve(s, d, seed, a.ns)
            name = f"{a.scale}-curve-seed{seed}" + ("-n" + "-".join(map(str, a.ns)) if a.ns else "")
            atomic_write_text(parts / f"{name}.json", json.dumps(r) + "\n")
    elif a.part == "zeroshot":
        r = part_zeroshot(s, d, a.task)
        r["cpu_seconds"] = round(time.process_time() - c0, 1)
        atomic_write_text(parts / f"{a.scale}-zeroshot-{a.task}.json", json.dumps(r) + "\n")
    else:
        r = part_calibration(s, d, a.n_queries) if a.part == "calibration" else part_pet(s, d)
        r = {**r, "cpu_seconds": round(time.process_time() - c0, 1), "wall_seconds": round(time.perf_counter() - t0, 1)}
        name = a.part + (f"-q{a.n_queries}" if a.part == "calibration" and a.n_queries else "")
        atomic_write_text(parts / f"{a.scale}-{name}.json", json.dumps(r) + "\n")
    print(f"done: {time.process_time() - c0:.0f} CPU-s, {time.perf_counter() - t0:.0f} s wall", flush=True)


if __name__ == "__main__":
    main()
