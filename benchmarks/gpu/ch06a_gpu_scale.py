"""Chapter 6a at ``BOOK_SCALE=gpu`` (written, not yet run: no GPU was lent to the session that
wrote it). Trains the Brown LSTM LM and the PTB LSTM with the gpu presets, then ULMFiT's
learning curve on SST-2, and writes every number to a JSON file.

    BOOK_SCALE=gpu python benchmarks/gpu/ch06a_gpu_scale.py out.json
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
    lstm_preset,
    ptb_plan,
    run_grid,
    ulmfit_data,
    ulmfit_preset,
)
from companion.contextual.ulmfit import AWDLSTMLM, finetune_lm
from companion.data import Vocab, bengio_split
from companion.data.lm_corpora import load_ptb_lm
from companion.device import describe, get_device


def main(path: str) -> None:
    dev = str(get_device())
    out: dict = {"device": describe(get_device()), "torch": torch.__version__}
    split = bengio_split()
    ids = {s: sentence_stream(getattr(split, s), split.vocab) for s in ("train", "valid", "test")}
    cfg, plan = lstm_preset(len(split.vocab), scale="gpu")
    lm = LSTMLM(cfg, counts=split.vocab.id_counts(), seed=0)
    hist = train_lstm_lm(lm, ids["train"], ids["valid"], plan, device=dev)
    out["brown"] = {"config": cfg.__dict__, "test_ppl": stream_perplexity(lm, ids["test"]),
                    "valid_ppl": stream_perplexity(lm, ids["valid"]), "seconds": hist.seconds,
                    "tokens_per_s": hist.items_per_second}
    ptb = load_ptb_lm()
    pv = Vocab(ptb["train"], specials=("</s>",))
    pids = {s: sentence_stream(ptb[s], pv) for s in ("train", "valid", "test")}
    plm = LSTMLM(replace(cfg, vocab_size=len(pv)), counts=pv.id_counts(), seed=0)
    phist = train_lstm_lm(plm, pids["train"], pids["valid"], ptb_plan("gpu"), device=dev)
    out["ptb"] = {"test_ppl": stream_perplexity(plm, pids["test"]), "seconds": phist.seconds}
    pre = ulmfit_preset("gpu")
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
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ch06a_gpu_scale.json")
