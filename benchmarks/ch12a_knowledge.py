"""Chapter 12a's multi-seed run at ``laptop`` sizes: every knowledge arm on several worlds.

For each seed: a synthetic world (people, cities, countries), TransE link prediction on a 90/10
split of its KG (with random-vector and frequency baselines), TransE on the whole KG for ERNIE,
then the arms of :mod:`companion.knowledge.chapter12a` (plain MLM, ERNIE, ERNIE with shuffled
vectors, KEPLER, K-BERT) from one BERT initialisation on the same batches, probed with
"X was born in [MASK] ." on the people whose birthplace is in the KG only.

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/ch12a_knowledge.py [--seeds 0,1,2] \\
        [--out companion/knowledge/ch12a_results.json]
    python benchmarks/ch12a_knowledge.py --merge part0.json part1.json ... --out ...

(one process per arm, ``--arms ARM``, each on one thread, the link prediction with the ``plain``
arm only (``--no-link`` for the others), then ``--merge``, is how the stored file was made).

The file is rewritten after each seed, so a partial run keeps what it has.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import shlex
import sys
import time

import torch

from benchmarks import cpu_name
from companion.fileio import atomic_write_text
from companion.knowledge import chapter12a as ch


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--arms", default=",".join(ch.ARMS))
    p.add_argument("--scale", default="laptop")
    p.add_argument("--no-link", action="store_true", help="skip TransE's link prediction")
    p.add_argument("--out", default=str(ch.RESULTS))
    p.add_argument("--merge", nargs="*", help="merge these result files (one seed each) into --out")
    a = p.parse_args(argv)
    if a.merge:
        parts = [json.loads(open(f, encoding="utf-8").read()) for f in a.merge]
        by_seed: dict[int, dict] = {}
        for q in parts:
            for r in q["runs"]:
                m = by_seed.setdefault(r["seed"], {"seed": r["seed"]})
                for k, v in r.items():
                    if isinstance(v, dict):
                        m.setdefault(k, {}).update(v)
        merged = dict(parts[0], runs=[by_seed[k] for k in sorted(by_seed)],
                      command=" ; ".join(q["command"] for q in parts), wall_s=max(q["wall_s"] for q in parts))
        atomic_write_text(a.out, json.dumps(merged, indent=1) + "\n")
        return
    torch.set_num_threads(1)
    s = ch.sizes(a.scale)
    result = {"command": "python -m benchmarks.ch12a_knowledge " + shlex.join(sys.argv[1:] if argv is None else argv),
              "date": datetime.date.today().isoformat(),
              "machine": f"{cpu_name()}, {platform.machine()}, one torch thread (shared 2-core machine)",
              "scale": a.scale, "sizes": {"world": vars(s.world), "transe": vars(s.transe), "arm": vars(s.arm)},
              "runs": []}
    t0 = time.perf_counter()
    for seed in [int(x) for x in a.seeds.split(",")]:
        result["runs"].append(ch.run_seed(seed, s, arms=tuple(a.arms.split(",")), log=print, link=not a.no_link))
        result["wall_s"] = round(time.perf_counter() - t0)
        atomic_write_text(a.out, json.dumps(result, indent=1) + "\n")
        print(f"seed {seed} stored ({result['wall_s']} s so far)", flush=True)


if __name__ == "__main__":
    main()
