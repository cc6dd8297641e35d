"""Chapter 10d: the fine-tuning recipes over several seeds, stored for the notebook.

Two parts, which can run at the same time in separate processes (each writes its own key of
the results file, under a lock; the MiniLM seeds can also be given one per process, and its
arms split as ``minilm:tune,l2sp,chain`` and ``minilm:multitask``):

* ``minilm``: all-MiniLM-L6-v2 on SST-2 and STS-B -- feature extraction (scalar mix, top
  layer), fine-tuning, chain-thaw, plain and born-again multi-task students, and L2-SP /
  weight decay / no penalty at a small n -- one seed after another;
* ``seqae``: Dai & Le's sequence autoencoder pre-trained on unlabelled IMDb reviews, then the
  classifier fine-tuned from it and from random weights, per seed; a bag-of-words baseline.

    BOOK_SCALE=laptop OMP_NUM_THREADS=1 python -m benchmarks.ch10d_recipes minilm companion/transfer/recipes_results.json [SEED ...]
    BOOK_SCALE=laptop OMP_NUM_THREADS=1 python -m benchmarks.ch10d_recipes seqae companion/transfer/recipes_results.json

The notebook reads the file (``companion.transfer.chapter10d.load_results``).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch
from threadpoolctl import threadpool_limits

from benchmarks import cpu_name
from companion.fileio import atomic_write_text
from companion.scale import get_scale
from companion.transfer import chapter10d as c10d


def _store(out: str, key: str, value: dict) -> None:
    """Write ``value`` under ``key`` of the JSON file ``out`` (other keys kept; the per-seed
    ``runs`` of the same key are merged, so seeds can run in separate processes), under a lock."""
    path = Path(out)
    with open(str(path) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(path.read_text()) if path.is_file() else {}
        runs = data.get(key, {}).get("runs", {})
        for seed, new in value["runs"].items():  # merge arm by arm: parts of a seed run apart
            old = runs.setdefault(seed, {})
            for field, v in new.items():
                if isinstance(v, dict):
                    for k, x in v.items():
                        if isinstance(x, dict):
                            old.setdefault(field, {}).setdefault(k, {}).update(x)
                        else:
                            old.setdefault(field, {})[k] = x
                else:
                    old[field] = v
        value = {**value, "runs": runs}
        value["meta"]["seeds done"] = sorted(value["runs"], key=int)
        data[key] = value
        atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def _meta(part: str, out: str, t0: float, w0: float) -> dict:
    return {"command": f"BOOK_SCALE={get_scale()} OMP_NUM_THREADS=1 python -m benchmarks.ch10d_recipes {part} {out}"
            " (MiniLM: one process per seed and group of arms)",
            "date": time.strftime("%Y-%m-%d"), "machine": f"{cpu_name()} ({platform.machine()}), "
            f"{os.cpu_count()} cores, shared; torch on 1 thread", "torch": torch.__version__,
            "cpu_s": round(time.process_time() - t0, 1), "wall_s": round(time.perf_counter() - w0, 1)}


def main(part: str, out: str, seeds: list[int] | None = None) -> None:
    torch.set_num_threads(1)
    threadpool_limits(1)
    s = c10d.sizes()
    t0, w0 = time.process_time(), time.perf_counter()
    log = lambda m: print(f"[{time.perf_counter() - w0:7.0f} s] {m}", flush=True)
    part, _, arms = part.partition(":")
    if part == "minilm":
        encoder, tokenize = c10d.minilm(s.n_layer)
        data = c10d.load_data(s)
        runs = {}
        base = c10d.baselines(data)
        for seed in seeds or s.seeds:
            def store(partial: dict, seed: int = seed) -> None:  # after every arm
                _store(out, "minilm", {"meta": {**_meta(part, out, t0, w0), "sizes": c10d.sizes_dict(s)},
                                       "baselines": base, "runs": {str(seed): partial}})
            c10d.minilm_runs(encoder, tokenize, data, s, seed, log=log, store=store,
                            parts=arms.split(",") if arms else c10d.PARTS)
    elif part == "seqae":
        d = c10d.imdb_data(s)
        ae, info = c10d.pretrain_autoencoder(d, s, seed=0)
        log(f"pre-trained: {info['loss first']} -> {info['loss last']} nats, token accuracy "
            f"{info['token accuracy']}, {info['seconds']} s")
        from companion.transfer.seqae import bag_of_words_baseline

        (xtr, ytr), (xte, yte) = d["train"], d["test"]
        bow = bag_of_words_baseline(xtr, ytr, xte, yte, len(d["vocab"]))
        runs = {}
        for seed in s.seeds:
            runs[str(seed)] = c10d.seqae_runs(d, ae, s, seed)
            log(f"seed {seed}: {runs[str(seed)]}")
            major = 100.0 * max(sum(yte), len(yte) - sum(yte)) / len(yte)
            _store(out, "seqae", {"meta": {**_meta(part, out, t0, w0), "sizes": c10d.sizes_dict(s),
                                           "seeds done": list(runs)},
                                  "pretraining": info, "bag of words": round(bow, 4),
                                  "majority": round(major, 4), "runs": runs})
    else:
        raise SystemExit(f"part must be 'minilm' or 'seqae', got {part!r}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: BOOK_SCALE=laptop python -m benchmarks.ch10d_recipes minilm|seqae OUT.json [SEED ...]")
    main(sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]] or None)
