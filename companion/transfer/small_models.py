"""Chapter 7b's laptop-scale GPT and BERT, pre-trained once and stored for chapter 10.

Chapter 10 adapts and prompts pre-trained models; pre-training them again in every run would
take most of a notebook's five minutes. This module trains the pair exactly as chapter 7b does
at ``laptop`` scale (:func:`companion.transformer.chapter7b.pretrain_pair`: our byte-level BPE
with 4,096 tokens, d=128, 2 layers, 150 steps) and keeps the result in the repository as
bf16 safetensors (about 4 MB in all) with the tokenizer, the configs, the measured held-out
losses and each file's sha256 (``checkpoints/ch07_laptop/meta.json``).

Re-create it with ``python -m companion.transfer.small_models``; :func:`load_small` loads it
at every scale and refuses a file whose sha256 does not match.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from ..fileio import atomic_write_text, sha256_file, verified_meta

CKPT_DIR = Path(__file__).resolve().parent / "checkpoints" / "ch07_laptop"
FILES = ("gpt.safetensors", "bert.safetensors", "encoder.json", "vocab.bpe")


def train_and_save(directory: str | os.PathLike = CKPT_DIR, scale: str = "laptop", seed: int = 0) -> dict:
    """Pre-train chapter 7b's pair at ``scale`` and store it in ``directory``; returns the meta."""
    from safetensors.torch import save_file

    from ..data.lm_corpora import load_pretraining_corpus
    from ..transformer import chapter7b as c7

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    s = c7.sizes(scale)
    t0 = time.perf_counter()
    docs = load_pretraining_corpus("train")
    tok = c7.train_tokenizer(c7.corpus_slice(docs, s.tokenizer_chars), s.vocab_size)
    ids = [tok.encode_ordinary(t) for t in c7.corpus_slice(docs, s.corpus_chars)]
    pre = c7.pretrain_pair(tok, ids, s, seed=seed)
    held_docs = [tok.encode_ordinary(" ".join(d)) for d in load_pretraining_corpus("heldout")[:40]]
    held = c7.heldout_losses(pre, held_docs, tok.special_tokens[c7.EOT])
    for name, model in (("gpt", pre.gpt), ("bert", pre.bert)):
        state = {k: v.detach().to(torch.bfloat16).contiguous().clone() for k, v in model.state_dict().items()
                 if not (name == "gpt" and k == "lm_head.weight") and k != "mlm.decoder.weight"}  # tied
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        os.close(fd)
        save_file(state, tmp, metadata={"format": "pt"})
        os.replace(tmp, directory / f"{name}.safetensors")
    with tempfile.TemporaryDirectory(dir=directory) as tmpdir:
        enc_json, merges = tok.save(tmpdir)
        os.replace(enc_json, directory / "encoder.json")
        os.replace(merges, directory / "vocab.bpe")
    meta = {
        "what": "chapter 7b's GPT and BERT pre-trained at BOOK_SCALE=" + scale,
        "script": "python -m companion.transfer.small_models",
        "sizes": dataclasses.asdict(s), "seed": seed,
        "gpt_config": dataclasses.asdict(pre.gpt.config), "bert_config": dataclasses.asdict(pre.bert.config),
        "special_tokens": dict(tok.special_tokens),
        "heldout_loss": {k: round(float(v), 4) for k, v in held.items()},
        "final_train_loss": {k: round(float(sum(h.step_loss[-10:]) / 10), 4) for k, h in pre.history.items()},
        "tokens_seen": {k: int(v) for k, v in pre.tokens.items()},
        "cpu_seconds": {k: round(v, 1) for k, v in pre.cpu_seconds.items()},
        "wall_seconds_total": round(time.perf_counter() - t0, 1),
        "sha256": {f: sha256_file(directory / f) for f in FILES},
    }
    atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1) + "\n")
    return meta


def load_small(directory: str | os.PathLike = CKPT_DIR, device: str | None = None):
    """``(gpt, bert, tok, meta)``: the stored pair in float32 (eval mode) and its tokenizer.
    Raises if a file is missing or its sha256 differs from ``meta.json``."""
    from safetensors.torch import load_file

    from ..transformer.bert import BertConfig, BertForPreTraining
    from ..transformer.gpt import GPT, GPTConfig
    from ..transformer.tokenizers import ByteLevelBPE

    directory = Path(directory)
    meta = verified_meta(directory, FILES, create="python -m companion.transfer.small_models")
    tok = ByteLevelBPE.from_files(directory / "encoder.json", directory / "vocab.bpe",
                                  special_tokens=meta["special_tokens"])
    gpt = GPT(GPTConfig(**meta["gpt_config"]), seed=None)
    bert = BertForPreTraining(BertConfig(**meta["bert_config"]), seed=None)
    for name, model in (("gpt", gpt), ("bert", bert)):
        state = {k: v.float() for k, v in load_file(str(directory / f"{name}.safetensors")).items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        tied = {"lm_head.weight", "mlm.decoder.weight"}
        if unexpected or set(missing) - tied:
            raise ValueError(f"{name}: checkpoint does not fit the model (missing {missing}, unexpected {unexpected})")
        if device is not None:
            model.to(device)
        model.eval()
    return gpt, bert, tok, meta


if __name__ == "__main__":  # pragma: no cover - a one-off training run
    torch.set_num_threads(int(os.environ.get("BOOK_THREADS", "2")))
    print(json.dumps(train_and_save(scale=sys.argv[1] if len(sys.argv) > 1 else "laptop"), indent=1))
