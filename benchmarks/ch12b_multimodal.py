"""Chapter 12b's multi-seed comparison: single- vs two-stream at equal parameters and steps,
the masked-region-loss ablation, the text-only model and the visual-word (VideoBERT) model.

    OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch12b_multimodal --seeds 0 --part
    ... (one process per seed) ...
    python -m benchmarks.ch12b_multimodal --merge

Each ``--part`` writes ``companion/multimodal/results/part_seed<N>.json`` after every arm;
``--merge`` joins them into ``companion/multimodal/results/ch12b_laptop.json`` with the date,
the machine and the command, which the chapter reads at the laptop scale (``--scale ci``: the
``ch12b_ci.json`` the chapter reads at the ci scale).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

import torch

from benchmarks import cpu_name
from companion.fileio import atomic_write_text
from companion.multimodal import chapter12b as c12

RESULTS = Path("companion/multimodal/results")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--arms", nargs="+", default=list(c12.ARMS), choices=c12.ARMS)
    ap.add_argument("--scale", default="laptop", choices=("ci", "laptop"))
    ap.add_argument("--part", action="store_true", help="write one part file per seed")
    ap.add_argument("--merge", action="store_true", help="join the part files")
    ap.add_argument("--tag", default="", help="name a part (several processes per seed)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.merge:
        parts = sorted(RESULTS.glob(_part_name(args.scale, "*").replace("*.json", "*")))
        if not parts:
            raise SystemExit(f"no part files in {RESULTS}")
        rows, meta = [], []
        for p in parts:
            d = json.loads(p.read_text())
            rows += d["rows"]
            meta.append({k: d[k] for k in ("date", "machine", "command", "threads")})
        out = {"scale": args.scale, "sizes": c12.sizes(args.scale).__dict__, "parts": meta,
               "rows": rows}
        atomic_write_text(RESULTS / f"ch12b_{args.scale}.json", json.dumps(out) + "\n")
        print(f"merged {len(rows)} rows from {len(parts)} parts")
        return
    S = c12.sizes(args.scale)
    data = c12.make_data(S)
    for seed in args.seeds:
        rows = []
        for arm in args.arms:
            r = c12.run_and_evaluate(arm, seed, data, S)
            print(arm, seed, {k: round(sum(v) / len(v), 3) for k, v in r["items"].items()},
                  f"{r['cpu_s']:.0f} CPU-s", flush=True)
            rows.append(r)
            if args.part:  # after every arm: a long run keeps what it finished
                write(seed, rows, args.scale, args.tag)


def _part_name(scale: str, seed, tag: str = "") -> str:
    tag = f"_{tag}" if tag else ""
    return f"part_seed{seed}{tag}.json" if scale == "laptop" else f"part_{scale}_seed{seed}{tag}.json"


def write(seed: int, rows: list[dict], scale: str, tag: str = "") -> None:
    """Store the rows of one seed so far, with the date, the machine and the command."""
    out = {"date": datetime.date.today().isoformat(),
           "machine": f"{cpu_name()}, {platform.machine()}, shared 2-core",
           "command": "OMP_NUM_THREADS=1 nice -n 5 python -m benchmarks.ch12b_multimodal "
                      + " ".join(sys.argv[1:]),
           "threads": torch.get_num_threads(), "rows": rows}
    atomic_write_text(RESULTS / _part_name(scale, seed, tag), json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
