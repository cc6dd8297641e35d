"""``python -m companion.zoo list [--json] | verify [NAME ...] | train NAME [options]``."""

from __future__ import annotations

import argparse
import json
import sys

from . import store
from .specs import SPECS


def rows() -> list[dict]:
    """One dict per model of the zoo: its spec and, when stored, its provenance's key numbers."""
    out = []
    for name, spec in SPECS.items():
        row = {"name": name, "arch": spec.arch, "description": spec.description, "stored": False}
        try:
            p = store.provenance(name)
        except FileNotFoundError:
            out.append(row)
            continue
        row.update(stored=True, parameters=p["parameters"], tokens_seen=p["tokens"],
                   cpu_seconds=p["cpu_seconds"], heldout_loss=p["heldout_loss"],
                   unigram_loss=p["unigram_loss"], below_unigram=round(p["unigram_loss"] - p["heldout_loss"], 3),
                   sha256=p["weights_sha256"], version=p["version"])
        out.append(row)
    return out


def cmd_train(args) -> int:
    from .run import train_and_store

    command = "python -m companion.zoo " + " ".join(sys.argv[1:] if args.argv is None else args.argv)
    prov = train_and_store(args.name, args.scale, device=args.device, threads=args.threads,
                           deadline_min=args.deadline_min, warm_start=args.warm_start, command=command,
                           store_it=args.scale != "ci")
    if prov is None:
        return 3
    if args.scale == "ci":
        print(json.dumps({k: prov[k] for k in ("heldout_loss", "unigram_loss", "steps")}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.zoo", description="The book's own pre-trained models")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help="the models, stored or not, with their provenance")
    ls.add_argument("--json", action="store_true")
    vf = sub.add_parser("verify", help="check the stored weights' sha256 (all models by default)")
    vf.add_argument("names", nargs="*")
    tr = sub.add_parser("train", help="train (or resume) one model and store it")
    tr.add_argument("name", choices=sorted(SPECS))
    tr.add_argument("--scale", choices=("ci", "laptop", "gpu"), default="laptop")
    tr.add_argument("--device", default="cpu")
    tr.add_argument("--threads", type=int, default=1)
    tr.add_argument("--deadline-min", type=float, default=None,
                    help="stop after this many minutes, saving the state (run again to resume)")
    tr.add_argument("--warm-start", action="store_true",
                    help="start from the stored weights (a new version, recorded as a warm restart)")
    args = ap.parse_args(argv)
    args.argv = argv
    if args.cmd == "list":
        table = rows()
        if args.json:
            print(json.dumps(table, indent=1))
        else:
            for r in table:
                extra = (f"{r['parameters']:,} params, {r['tokens_seen']:,} tokens, held-out {r['heldout_loss']:.3f} "
                         f"vs unigram {r['unigram_loss']:.3f}" if r["stored"] else "not stored")
                print(f"{r['name']:12s} {r['arch']:5s} {extra}")
        return 0
    if args.cmd == "verify":
        names = args.names or [r["name"] for r in rows() if r["stored"]]
        for name in names:
            p = store.verify(name)
            print(f"{name}: ok ({p['weights_sha256'][:12]}..., {p['weights_bytes']:,} bytes)")
        return 0
    return cmd_train(args)


if __name__ == "__main__":
    sys.exit(main())
