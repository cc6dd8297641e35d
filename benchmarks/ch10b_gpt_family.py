"""Train chapter 10b's family of GPT sizes once, with chapter 9's code, and store it.

Run from the repository root (one thread, low priority; about 4 CPU-minutes):

    OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.ch10b_gpt_family

``meta.json`` is rewritten after each member, and a run that stops part-way resumes after the
last member it stored (when the settings below are unchanged).

Every member sees the same token stream from the book's Part II corpus, tokenised by chapter
7b's stored byte-level BPE (4,096 tokens), for the same number of tokens, with a cosine
schedule and Kaplan et al.'s learning rate for its size
(:func:`companion.efficiency.scaling.train_family` and :func:`~companion.efficiency.scaling.kaplan_lr`).
Writes ``companion/transfer/checkpoints/ch09_family``: one bf16 safetensors file per member
and ``meta.json`` (configs, non-embedding parameters, held-out loss, CPU seconds, this command,
each file's sha256). :func:`companion.transfer.gpt_family.load_family` reads it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

import torch

from companion.data.lm_corpora import load_pretraining_corpus
from companion.efficiency import scaling
from companion.fileio import atomic_write_text, sha256_file
from companion.transfer.gpt_family import FAMILY_DIR, member_file
from companion.transfer.small_models import load_small
from companion.transformer import chapter7b as c7
from companion.transformer.gpt import GPT
from companion.transformer.pretrain import pack_lm

SPECS = (scaling.ModelSpec(16, 2, 2), scaling.ModelSpec(32, 2, 2), scaling.ModelSpec(64, 2, 4),
         scaling.ModelSpec(128, 2, 4))  # chapter 9's laptop shapes (2 layers), 60x in N
BLOCK = 128        # room for 8 short demonstrations and a query
BATCH = 16
TOKENS = 600_000  # per member (one epoch of the slice below, no repeats)
CORPUS_CHARS = 2_400_000
SEED = 0


def main(directory: Path = FAMILY_DIR) -> dict:
    from safetensors.torch import save_file

    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "1")))
    directory.mkdir(parents=True, exist_ok=True)
    _, _, tok, _ = load_small()
    eot = tok.special_tokens[c7.EOT]
    vocab = len(tok) + 3  # chapter 7b's GPT vocabulary: the BPE plus start/delimiter/extract
    docs = load_pretraining_corpus("train")
    train = pack_lm([tok.encode_ordinary(t) for t in c7.corpus_slice(docs, CORPUS_CHARS)], BLOCK, eot)
    held = pack_lm([tok.encode_ordinary(" ".join(d)) for d in load_pretraining_corpus("heldout")[:40]], BLOCK, eot)
    members = _done(directory)  # a run that stopped part-way resumes after its last member
    for spec in SPECS:
        if any(m["name"] == spec.name for m in members):
            continue
        c0 = time.process_time()
        model_n = scaling.non_embedding_params(GPT(spec.config(vocab, BLOCK), seed=SEED))
        lr = scaling.kaplan_lr(model_n)
        (run,) = scaling.train_family([spec], train, held, vocab, tokens=TOKENS, batch_size=BATCH, lr=lr,
                                      seed=SEED, schedule="cosine", keep_models=True)
        state = {k: v.detach().to(torch.bfloat16).contiguous().clone() for k, v in run.model.state_dict().items()
                 if k != "lm_head.weight"}  # tied to the token embeddings
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{spec.name}.")
        os.close(fd)
        save_file(state, tmp, metadata={"format": "pt"})
        os.chmod(tmp, 0o644)
        os.replace(tmp, directory / member_file(spec.name))
        members.append({"name": spec.name, "config": dataclasses.asdict(run.model.config),
                        "non_embedding_params": run.n_params, "lr": lr,
                        "heldout_loss": round(run.heldout_loss, 4),
                        "final_train_loss": round(sum(run.step_loss[-20:]) / 20, 4),
                        "steps": len(run.step_loss), "cpu_seconds": round(time.process_time() - c0, 1)})
        print(json.dumps(members[-1]), flush=True)
        _write_meta(directory, members, train, held)  # after every member: progress survives a stop
    return _write_meta(directory, members, train, held)


def _done(directory: Path) -> list[dict]:
    """The members an earlier run of the same settings stored (none if the settings differ)."""
    path = directory / "meta.json"
    if not path.exists():
        return []
    meta = json.loads(path.read_text())
    same = (meta.get("tokens"), meta.get("block_size"), meta.get("batch_size"), meta.get("corpus_chars"),
            meta.get("seed")) == (TOKENS, BLOCK, BATCH, CORPUS_CHARS, SEED)
    return [m for m in meta["members"] if (directory / member_file(m["name"])).exists()] if same else []


def _write_meta(directory: Path, members: list[dict], train: torch.Tensor, held: torch.Tensor) -> dict:
    members = sorted(members, key=lambda m: m["non_embedding_params"])
    meta = {
        "what": "a family of GPT sizes trained with chapter 9's train_family on chapter 7b's tokenizer",
        "script": "OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.ch10b_gpt_family",
        "corpus_chars": CORPUS_CHARS, "tokens": TOKENS, "block_size": BLOCK, "batch_size": BATCH,
        "schedule": "cosine (5 % warm-up, to 0.1 lr)", "seed": SEED,
        "train_tokens_available": int(train[:, 1:].numel()), "heldout_tokens": int(held[:, 1:].numel()),
        "members": members,
        "sha256": {member_file(m["name"]): sha256_file(directory / member_file(m["name"])) for m in members},
    }
    atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1) + "\n")
    return meta


if __name__ == "__main__":  # pragma: no cover - a one-off training run
    print(json.dumps(main(), indent=1))
