"""Chapter 6b's laptop-scale ELMo biLM, trained once and stored for chapter 11's probes.

Chapter 11 probes the layers of every representation the book built; re-training the biLM in
its notebook would cost most of its time budget. This module trains the biLM exactly as chapter
6b does at ``laptop`` scale (:func:`companion.contextual.trainers.train_bilm`: Part II's
corpus, char-CNN token layer with its LayerNorm, two LSTM layers of 128 cells projected to d=64,
the softmax bias started at the log unigram frequencies, 350 steps) and
keeps it as bf16 safetensors with its softmax vocabulary, config, measured held-out perplexity
and each file's sha256 (``checkpoints/ch06_elmo_laptop/meta.json``).

The checkpoint stored before the LayerNorm (held-out perplexity 164.1) had nearly
one-dimensional layers (top principal direction 78 %, 67 %, 67 % of the variance on 800 Brown
sentences); this one: 127.2 and 35 %, 39 %, 35 %. A ``meta.json`` without ``token_norm`` loads
as the old, unnormalised model.

Re-create it with ``python -m companion.contextual.small_elmo``; :func:`load_small_elmo` refuses
a file whose sha256 does not match; :func:`probe_extractor` gives chapter 11's probes its three
layers.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..fileio import atomic_write_text, sha256_file, verified_meta

CKPT_DIR = Path(__file__).resolve().parent / "checkpoints" / "ch06_elmo_laptop"
FILES = ("bilm.safetensors", "vocab.json")


def train_and_save(directory: str | os.PathLike = CKPT_DIR, scale: str = "laptop", seed: int = 0) -> dict:
    """Train chapter 6b's biLM at ``scale`` and store it in ``directory``; returns the meta."""
    from safetensors.torch import save_file

    from . import trainers as c6

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    s = c6.sizes(scale)
    t0, c0 = time.perf_counter(), time.process_time()
    data = c6.lm_sentences(s, seed=seed)
    model, vocab, hist, ppl = c6.train_bilm(data, s, seed=seed)
    cpu = time.process_time() - c0
    state = {k: v.detach().to(torch.bfloat16).contiguous().clone() for k, v in model.state_dict().items()}
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".bilm.")
    os.close(fd)
    save_file(state, tmp, metadata={"format": "pt"})
    os.chmod(tmp, 0o644)
    os.replace(tmp, directory / "bilm.safetensors")
    atomic_write_text(directory / "vocab.json", json.dumps(vocab.itos, ensure_ascii=False) + "\n")
    meta = {
        "what": "chapter 6b's ELMo biLM trained at BOOK_SCALE=" + scale,
        "script": "python -m companion.contextual.small_elmo",
        "seed": seed, "lm_sentences": s.lm_sentences, "lm_steps": s.lm_steps, "lm_batch": s.lm_batch,
        "config": dataclasses.asdict(model.config),
        "heldout_ppl": round(float(ppl), 2),
        "final_train_loss": round(float(np.mean(hist.step_loss[-10:])), 4),
        "step_loss": [round(float(x), 4) for x in hist.step_loss],
        "cpu_seconds": round(cpu, 1), "wall_seconds": round(time.perf_counter() - t0, 1),
        "sha256": {f: sha256_file(directory / f) for f in FILES},
    }
    atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1) + "\n")
    return meta


def load_small_elmo(directory: str | os.PathLike = CKPT_DIR, device: str | None = None):
    """``(bilm, vocab, meta)``: the stored biLM in float32 (eval mode) and its softmax vocabulary.
    Raises if a file is missing or its sha256 differs from ``meta.json``."""
    from safetensors.torch import load_file

    from .elmo import BiLM, BiLMConfig, WordVocab

    directory = Path(directory)
    meta = verified_meta(directory, FILES, create="python -m companion.contextual.small_elmo")
    cfg = dict(meta["config"])
    cfg["filters"] = tuple(tuple(x) for x in cfg["filters"])
    cfg.setdefault("token_norm", False)  # checkpoints from before the token LayerNorm
    model = BiLM(BiLMConfig(**cfg), seed=0)
    model.load_state_dict({k: v.float() for k, v in load_file(str(directory / "bilm.safetensors")).items()})
    if device is not None:
        model.to(device)
    model.eval()
    vocab = WordVocab(json.loads((directory / "vocab.json").read_text(encoding="utf-8")))
    return model, vocab, meta


def probe_extractor(model, batch_size: int = 64):
    """Chapter 11's extractor: sentences (token lists) -> ELMo's three layers, each ``[n_tokens, 2d]``
    (layer 0: the char-CNN token layer, copied for both directions; 1, 2: the LSTM layers)."""
    from .elmo import ElmoLayers

    layers = ElmoLayers(model, batch_size=batch_size)

    def run(sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        per = layers.tokens([list(s) for s in sentences])
        per = [p for p, s in zip(per, sentences) if len(s)]  # an empty sentence has no tokens
        return [np.concatenate([p[k] for p in per]) for k in range(3)] if per else []

    return run


if __name__ == "__main__":  # pragma: no cover - a one-off training run
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    print(json.dumps(train_and_save(scale=sys.argv[1] if len(sys.argv) > 1 else "laptop"), indent=1))
