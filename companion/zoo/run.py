"""Train one model of the zoo and store it with its provenance (the CLI's and the GPU script's
one code path)."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

from . import corpus, store
from .specs import get_spec
from .trainer import EVAL_ROWS, train, unigram_loss


def _commit() -> str:
    """The repository's commit, marked ``+uncommitted`` when the zoo's code differs from it."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             check=False, cwd=corpus.MODELS_DIR)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "companion/zoo", "companion/data/imdb.py"],
                               capture_output=True, text=True, timeout=30, check=False,
                               cwd=corpus.MODELS_DIR).stdout.strip()
        return out.stdout.strip() + ("+uncommitted" if dirty else "") or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> str:
    """Architecture, cores and the widest x86 vector extension (or the GPU's name)."""
    if torch.cuda.is_available():
        return f"{torch.cuda.get_device_name(0)} (torch {torch.__version__})"
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = f.read()
        flags = "AVX-512" if "avx512f" in cpu else ("AVX2" if "avx2" in cpu else "")
    except OSError:
        pass
    return f"{platform.machine()} {os.cpu_count()} cores {flags} (torch {torch.__version__})".replace("  ", " ")


def train_and_store(name: str, scale: str, *, device: str = "cpu", threads: int = 1,
                    deadline_min: float | None = None, warm_start: bool = False, command: str = "",
                    streams: tuple[np.ndarray, np.ndarray] | None = None, store_it: bool = True,
                    eval_rows: int = EVAL_ROWS,
                    log=lambda m: print(m, flush=True)) -> dict | None:
    """Train ``name`` at ``scale`` (resuming its saved state if any) and, with ``store_it``, store
    the weights and provenance in ``models/<name>/``. Returns the provenance, or ``None`` when the
    deadline stopped the run first (run again to resume). ``streams``: ``(train, held-out)`` id
    arrays to use instead of the book's (the GPU script passes precomputed ones); ``eval_rows``:
    held-out windows per evaluation (tests use few)."""
    from ..data.fetching import data_dir
    from ..data.imdb import FILES

    spec = get_spec(name)
    budget = spec.budget[scale]
    commit = _commit()  # the code that trains is the code at the start (HEAD may move during hours)
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    torch.set_num_threads(threads)
    tok = corpus.book_tokenizer(build=True)
    t0 = time.perf_counter()
    train_stream, held = streams if streams is not None else (corpus.token_stream("train", progress=True),
                                                              corpus.token_stream("heldout", progress=True))
    log(f"streams: {len(train_stream):,} train and {len(held):,} held-out tokens ({time.perf_counter() - t0:.0f} s)")
    key = spec.key(scale)
    init, version, parent, prev = None, 1, None, None
    if warm_start:
        prev = store.provenance(name)
        init = dict(store.load(name).state_dict())
        version, parent = prev["version"] + 1, prev["weights_sha256"]
        key += f"-warm-{parent[:8]}"
    # a warm restart draws other windows and masks: version v uses seed + 1000 (v - 1)
    data_seed = spec.seed + 1000 * (version - 1)
    state_dir = Path(data_dir()) / "zoo" / f"{name}-{scale}-{key}"
    model, st, done = train(spec, budget, tok, train_stream, held, state_dir=state_dir, device=device,
                            init=init, deadline_s=deadline_min * 60 if deadline_min else None,
                            eval_rows=eval_rows, data_seed=data_seed, log=log)
    if not done:
        return None
    uni = unigram_loss(spec, model.cpu(), train_stream, held, eval_rows)
    prov = {
        "name": name, "version": version, "warm_start_from": parent, "scale": scale, "spec_key": key,
        "command": command, "commit": commit, "date": time.strftime("%Y-%m-%d"), "device": device,
        "threads": threads, "machine": machine(),
        "data": {"tokenizer_sha256": corpus.tokenizer_sha256(), "train_tokens_available": len(train_stream),
                 "heldout_tokens": len(held),
                 "imdb_jsonl_sha256": {k: v[2] for k, v in FILES.items() if k != "test"},
                 "sources": "Part II pre-training corpus (train split) + IMDb train + IMDb unlabelled "
                            f"(minus {corpus.IMDB_HELDOUT_PERCENT} % held out); IMDb test never read"},
        "seed": spec.seed, "data_seed": data_seed, "steps": st.step,
        # tokens and CPU time since random initialisation (this run's plus every earlier version's)
        "tokens": st.tokens + (prev["tokens"] if prev else 0),
        "cpu_seconds": round(st.cpu_seconds) + (prev["cpu_seconds"] if prev else 0),
        "this_run": {"tokens": st.tokens, "cpu_seconds": round(st.cpu_seconds)},
        "parent": ({k: prev[k] for k in ("version", "weights_sha256", "steps", "tokens", "cpu_seconds",
                                         "heldout_loss", "commit", "command", "date")} if prev else None),
        "wall_seconds": round(st.wall_seconds), "budget": budget.__dict__,
        "architecture": {"arch": spec.arch, "d_model": spec.d_model, "n_layer": spec.n_layer,
                         "n_head": spec.n_head, "block_size": spec.block_size, "vocab_size": len(tok) + 3},
        "parameters": sum(p.numel() for p in model.parameters()),
        "heldout_loss": round(st.curve[-1][2], 4), "unigram_loss": round(uni, 4),
        "curve": [[s, t, round(v, 4)] for s, t, v in st.curve],
        "train_loss": [[s, round(v, 4)] for s, v in st.train_loss],
    }
    if store_it:
        folder = store.save(name, model, prov)
        log(f"stored {name} v{version} in {folder}: held-out {prov['heldout_loss']:.3f} nats, "
            f"unigram {uni:.3f} ({uni - prov['heldout_loss']:.2f} below)")
    return prov
