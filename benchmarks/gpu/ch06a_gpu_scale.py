"""Chapter 6a at ``BOOK_SCALE=gpu`` (written, not yet run on a GPU: no results are stored).
Trains the Brown LSTM LM, Zaremba et al. (2014)'s small LSTM on Mikolov's PTB (their
recipe: :func:`companion.contextual.recipes.ptb_preset`, published test perplexity 114.5), then
ULMFiT's learning curve on SST-2, and writes every number to a JSON file.

    BOOK_SCALE=gpu python benchmarks/gpu/ch06a_gpu_scale.py out.json [part ...]

``part`` is any of ``brown``, ``ptb``, ``ulmfit`` (default: all three; ``ptb`` alone is the
short one). ``tests/test_contextual_recipes.py`` runs :func:`run_ptb` at ``ci`` scale on a tiny
corpus on the CPU.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import torch

from companion.contextual.lstm_lm import (
    LSTMLM,
    sentence_stream,
    stream_perplexity,
    train_lstm_lm,
)
from companion.contextual.recipes import (
    ZAREMBA_SMALL_TEST_PPL,
    lstm_preset,
    ptb_run,
    run_grid,
    ulmfit_data,
    ulmfit_preset,
)
from companion.contextual.ulmfit import AWDLSTMLM, finetune_lm
from companion.data import bengio_split
from companion.data.lm_corpora import load_ptb_lm
from companion.device import describe, get_device


def run_brown(dev: str, scale: str = "gpu") -> dict:
    split = bengio_split()
    ids = {s: sentence_stream(getattr(split, s), split.vocab) for s in ("train", "valid", "test")}
    cfg, plan = lstm_preset(len(split.vocab), scale=scale)
    lm = LSTMLM(cfg, counts=split.vocab.id_counts(), seed=0)
    hist = train_lstm_lm(lm, ids["train"], ids["valid"], plan, device=dev)
    return {"config": cfg.__dict__, "test_ppl": stream_perplexity(lm, ids["test"]),
            "valid_ppl": stream_perplexity(lm, ids["valid"]), "seconds": hist.seconds,
            "tokens_per_s": hist.items_per_second}


def run_ptb(splits: dict, dev: str | None, scale: str = "gpu") -> dict:
    """Zaremba et al.'s small model on ``splits`` (Mikolov's PTB in the real run)."""
    r = ptb_run(splits, scale, device=dev)
    keep = ("test_ppl", "valid_ppl", "seconds", "steps", "tokens", "tokens_per_s", "epochs_seen")
    return {"config": r["config"].__dict__, "plan": r["plan"].__dict__,
            "published_test_ppl": ZAREMBA_SMALL_TEST_PPL, **{k: r[k] for k in keep}}


def run_ulmfit(dev: str, scale: str = "gpu") -> dict:
    out: dict = {}
    pre = ulmfit_preset(scale)
    data = ulmfit_data(pre, "sst2")
    enc_cfg = replace(pre.encoder, vocab_size=len(data.vocab), pad_id=data.pad_id)
    awd = AWDLSTMLM(enc_cfg, seed=0)
    t0 = time.perf_counter()
    train_lstm_lm(awd, data.pretrain_ids, data.heldout_ids, pre.pretrain, device=dev)
    finetune_lm(awd, data.task_lm_ids, pre.lm_finetune, device=dev)
    out["ulmfit_lm_seconds"] = time.perf_counter() - t0
    state = {k: v.detach().cpu().clone() for k, v in awd.encoder.state_dict().items()}
    args = (state, enc_cfg, len(data.label_names), data.train, data.test, pre.classifier)
    out["curve"] = run_grid(*args, sizes=pre.sizes, seeds=pre.seeds, methods=["ULMFiT", "from scratch"],
                            pad_id=data.pad_id, device=dev)
    out["ablation"] = run_grid(*args, sizes=[pre.ablation_size], seeds=pre.seeds,
                               methods=["ULMFiT, no discriminative lr", "ULMFiT, no STLR",
                                        "ULMFiT, no gradual unfreezing"], pad_id=data.pad_id, device=dev)
    return out


def main(path: str, parts: tuple[str, ...] = ("brown", "ptb", "ulmfit")) -> None:
    unknown = set(parts) - {"brown", "ptb", "ulmfit"}
    if unknown:
        raise SystemExit(f"unknown part(s) {sorted(unknown)}; use brown, ptb or ulmfit")
    dev = str(get_device())
    out: dict = {"device": describe(get_device()), "torch": torch.__version__}
    if "brown" in parts:
        out["brown"] = run_brown(dev)
    if "ptb" in parts:
        out["ptb"] = run_ptb(load_ptb_lm(), dev)
    if "ulmfit" in parts:
        out.update(run_ulmfit(dev))
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ch06a_gpu_scale.json", tuple(sys.argv[2:]) or
         ("brown", "ptb", "ulmfit"))
