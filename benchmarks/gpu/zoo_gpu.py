"""Train the zoo's ``gpu`` versions on a lent GPU, with their provenance, for the repository.

On the CPU machine first (the GPU machine has no data), write the token streams it will read::

    python benchmarks/gpu/zoo_gpu.py --write-streams zoo_streams --max-train-tokens 25000000

then on the GPU machine, with ``zoo_streams`` carried along::

    python benchmarks/gpu/zoo_gpu.py --streams zoo_streams --out $OUT/zoo --minutes 4

Each model trains at ``BOOK_SCALE=gpu``'s budget (``companion.zoo.specs``: 6,000 steps of 128 x
128 tokens) on ``cuda`` with TF32 matrix products, stops (saving its state) after ``--minutes``,
and is written as ``OUT/<name>/model.safetensors`` + ``provenance.json``; copy those into
``companion/zoo/models/`` when they beat the CPU versions. A test runs this script at ``ci`` scale
on the CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch


def write_streams(folder: Path, max_train_tokens: int) -> None:
    from companion.zoo import corpus

    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "train.npy", corpus.token_stream("train")[:max_train_tokens])
    np.save(folder / "heldout.npy", corpus.token_stream("heldout"))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write-streams", type=Path, help="write the streams here and stop (CPU machine)")
    ap.add_argument("--max-train-tokens", type=int, default=25_000_000)
    ap.add_argument("--streams", type=Path, help="a folder with train.npy and heldout.npy")
    ap.add_argument("--out", type=Path, help="where the trained models are written")
    ap.add_argument("--names", nargs="*", default=["gpt-book", "bert-book"])
    ap.add_argument("--minutes", type=float, default=4.0, help="per model")
    ap.add_argument("--scale", default="gpu")
    ap.add_argument("--eval-rows", type=int, default=256, help="held-out windows per evaluation")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args(argv)
    if args.write_streams:
        write_streams(args.write_streams, args.max_train_tokens)
        return {}
    if not (args.streams and args.out):
        ap.error("--streams and --out are needed to train")
    from companion.zoo import run, store

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    streams = (np.load(args.streams / "train.npy"), np.load(args.streams / "heldout.npy"))
    store.MODELS_DIR = args.out  # the trained models go to OUT, never over the stored CPU versions
    results = {}
    for name in args.names:
        prov = run.train_and_store(name, args.scale, device=args.device, deadline_min=args.minutes,
                                   streams=streams, eval_rows=args.eval_rows, command="python benchmarks/gpu/zoo_gpu.py "
                                   + " ".join(sys.argv[1:] if argv is None else argv))
        results[name] = None if prov is None else {k: prov[k] for k in ("steps", "tokens", "heldout_loss",
                                                                         "unigram_loss", "wall_seconds")}
        print(json.dumps({name: results[name]}), flush=True)
    return results


if __name__ == "__main__":
    main()
