"""``python -m companion.zoo list [--json] | verify [NAME ...] | train NAME [options]``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from . import corpus, store
from .specs import SPECS, get_spec


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False,
                             cwd=corpus.MODELS_DIR)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "companion/zoo", "companion/data/imdb.py"], capture_output=True,
                               text=True, timeout=30, check=False, cwd=corpus.MODELS_DIR).stdout.strip()
        return out.stdout.strip() + ("+uncommitted" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


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
    import torch

    from .trainer import train, unigram_loss

    spec = get_spec(args.name)
    budget = spec.budget[args.scale]
    torch.set_num_threads(args.threads)
    tok = corpus.book_tokenizer(build=True)
    t0 = time.perf_counter()
    train_stream, held = corpus.token_stream("train", progress=True), corpus.token_stream("heldout", progress=True)
    print(f"streams: {len(train_stream):,} train and {len(held):,} held-out tokens ({time.perf_counter() - t0:.0f} s)",
          flush=True)
    from ..data.fetching import data_dir

    key = spec.key(args.scale)
    init, version, parent = None, 1, None
    if args.warm_start:
        prev = store.provenance(spec.name)
        init = {k: v for k, v in store.load(spec.name).state_dict().items()}
        version, parent = prev["version"] + 1, prev["weights_sha256"]
        key += f"-warm-{parent[:8]}"
    state_dir = data_dir() / "zoo" / f"{spec.name}-{args.scale}-{key}"
    model, st, done = train(spec, budget, tok, train_stream, held, state_dir=state_dir, device=args.device,
                            init=init, deadline_s=args.deadline_min * 60 if args.deadline_min else None,
                            log=lambda m: print(m, flush=True))
    if not done:
        return 3
    uni = unigram_loss(spec, model, train_stream, held)
    from ..data.imdb import FILES

    prov = {
        "name": spec.name, "version": version, "warm_start_from": parent, "scale": args.scale, "spec_key": key,
        "command": "python -m companion.zoo " + " ".join(sys.argv[1:] if args.argv is None else args.argv),
        "commit": _commit(), "date": time.strftime("%Y-%m-%d"), "device": args.device, "threads": args.threads,
        "machine": _machine(),
        "data": {"tokenizer_sha256": corpus.tokenizer_sha256(), "train_tokens_available": len(train_stream),
                 "heldout_tokens": len(held), "imdb_jsonl_sha256": {k: v[2] for k, v in FILES.items()
                                                                         if k != "test"},
                 "sources": "Part II pre-training corpus (train split) + IMDb train + IMDb unlabelled "
                            f"(minus {corpus.IMDB_HELDOUT_PERCENT} % held out); IMDb test never read"},
        "seed": spec.seed, "steps": st.step, "tokens": st.tokens, "cpu_seconds": round(st.cpu_seconds),
        "wall_seconds": round(st.wall_seconds), "budget": budget.__dict__,
        "architecture": {"arch": spec.arch, "d_model": spec.d_model, "n_layer": spec.n_layer,
                         "n_head": spec.n_head, "block_size": spec.block_size, "vocab_size": len(tok) + 3},
        "parameters": sum(p.numel() for p in model.parameters()),
        "heldout_loss": round(st.curve[-1][2], 4), "unigram_loss": round(uni, 4),
        "curve": [[s, t, round(v, 4)] for s, t, v in st.curve],
        "train_loss": [[s, round(v, 4)] for s, v in st.train_loss],
    }
    if args.scale == "ci":
        print(json.dumps({k: prov[k] for k in ("heldout_loss", "unigram_loss", "steps")}))
        return 0
    folder = store.save(spec.name, model, prov)
    print(f"stored {spec.name} v{version} in {folder}: held-out {prov['heldout_loss']:.3f} nats, "
          f"unigram {uni:.3f} ({uni - prov['heldout_loss']:.2f} below)", flush=True)
    return 0


def _machine() -> str:
    import os
    import platform

    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = f.read()
        flags = "AVX-512" if "avx512f" in cpu else ("AVX2" if "avx2" in cpu else "")
    except OSError:
        pass
    return f"{platform.machine()} {os.cpu_count()} cores {flags}".strip()


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
