"""Chapter 6b's laptop-scale CoVe translation model, trained once by a script and stored.

Training the MT-LSTM long enough to translate (a few passes over Multi30k) costs more than the
chapter's whole laptop budget, so at ``laptop`` scale the notebook loads this checkpoint instead;
``ci`` and ``gpu`` train in the notebook. It is trained exactly as
:func:`companion.contextual.trainers.train_cove` trains (Multi30k en -> de, frozen GloVe 6B 50d,
``laptop`` sizes) and kept as bf16 safetensors *without* the frozen GloVe table (which the loader
takes from ``load_glove_6b_50d``), with the German vocabulary, config, training losses, test
BLEU and each file's sha256 (``checkpoints/ch06_cove_laptop/meta.json``).

Re-create it with ``python -m companion.contextual.small_cove``; :func:`load_small_cove` refuses a
file whose sha256 does not match.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from ..fileio import atomic_write_text, sha256_file, umask_mode, verified_meta

CKPT_DIR = Path(__file__).resolve().parent / "checkpoints" / "ch06_cove_laptop"
FILES = ("cove.safetensors", "tgt_vocab.json")
FROZEN = "src_emb.weight"  # GloVe, stored elsewhere


def train_and_save(directory: str | os.PathLike = CKPT_DIR, scale: str = "laptop", seed: int = 0) -> dict:
    """Train chapter 6b's CoVe at ``scale`` and store it in ``directory``; returns the meta."""
    from safetensors.torch import save_file

    from ..data import load_glove_6b_50d
    from . import trainers as c6

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    s = c6.sizes(scale)
    glove, words = load_glove_6b_50d()
    mt = c6.mt_data(words, s)
    t0, c0 = time.perf_counter(), time.process_time()
    model, hist = c6.train_cove(glove, mt, s, seed=seed, steps=s.mt_steps_stored)
    cpu = time.process_time() - c0
    bleu, _ = c6.cove_bleu(model, mt)
    state = {k: v.detach().to(torch.bfloat16).contiguous().clone()
             for k, v in model.state_dict().items() if k != FROZEN}
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cove.")
    os.close(fd)
    save_file(state, tmp, metadata={"format": "pt"})
    os.chmod(tmp, umask_mode())
    os.replace(tmp, directory / "cove.safetensors")
    atomic_write_text(directory / "tgt_vocab.json", json.dumps(mt.tgt.itos, ensure_ascii=False) + "\n")
    meta = {
        "what": "chapter 6b's CoVe MT-LSTM (Multi30k en->de) trained at BOOK_SCALE=" + scale,
        "script": "python -m companion.contextual.small_cove",
        "seed": seed, "mt_pairs": s.mt_pairs, "steps": hist.steps, "batch": 64,
        "config": dataclasses.asdict(model.config),
        "test_bleu": round(bleu.score, 2), "bleu_sentences": len(mt.test), "bleu": str(bleu),
        "step_loss": [round(float(x), 4) for x in hist.step_loss],
        "cpu_seconds": round(cpu, 1), "wall_seconds": round(time.perf_counter() - t0, 1),
        "sha256": {f: sha256_file(directory / f) for f in FILES},
    }
    atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1) + "\n")
    return meta


def load_small_cove(glove: np.ndarray, directory: str | os.PathLike = CKPT_DIR, device: str | None = None):
    """``(cove, tgt_vocab, meta)``: the stored model in float32 (eval mode) around ``glove``
    (the GloVe 6B 50d matrix of ``load_glove_6b_50d``) and its German vocabulary.
    Raises if a file is missing or its sha256 differs from ``meta.json``."""
    from safetensors.torch import load_file

    from .cove import CoVe, CoVeConfig, TargetVocab

    directory = Path(directory)
    meta = verified_meta(directory, FILES, create="python -m companion.contextual.small_cove")
    model = CoVe(CoVeConfig(**meta["config"]), glove, seed=0)
    state = {k: v.float() for k, v in load_file(str(directory / "cove.safetensors")).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) != {FROZEN}:
        raise ValueError(f"{directory} does not fit CoVe: missing {missing}, unexpected {unexpected}")
    if device is not None:
        model.to(device)
    model.eval()
    tgt = TargetVocab(json.loads((directory / "tgt_vocab.json").read_text(encoding="utf-8")))
    return model, tgt, meta


if __name__ == "__main__":  # pragma: no cover - a one-off training run
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    m = train_and_save(scale=sys.argv[1] if len(sys.argv) > 1 else "laptop")
    print(json.dumps({k: v for k, v in m.items() if k != "step_loss"}, indent=1))
