"""Chapter 5 benchmark: Quick-thoughts vs Skip-thoughts, training speed on the same sentences.

Logeswaran & Lee (2018) claim Quick-thoughts trains "an order of magnitude faster" than
Skip-thoughts (hours vs weeks) because it classifies the context sentence among the batch
instead of generating it word by word through a softmax over the vocabulary. Here both train on
the same ordered sentences (the first documents of the Part II pre-training corpus), with the
same word-vector and GRU sizes, vocabulary and batch size, for the same number of steps, in one
run; speed is training sentences per second (``History.items_per_second``) and the printed
ratio is Quick-thoughts / Skip-thoughts. The machine is shared: only the ratio travels.

Measured (2-core machine under a load average of ~12, one run each, so noisy): ci (GRU 128,
vocabulary 3,465, 10 steps of 64 sentences) 5.2x; laptop (GRU 300, vocabulary 10,739, 40 steps)
7.8x. The gap grows with the vocabulary: Skip-thoughts pays a softmax over it for every word of
two decoded sentences, Quick-thoughts one B x B score matrix per batch. Speed per step only --
whether the faster model also probes as well is the chapter's question, not this benchmark's.

Run alone with ``python -m benchmarks.bench_sentence`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json

import torch

from companion.data import load_pretraining_corpus
from companion.scale import pick
from companion.sentence import (
    QuickThoughtsConfig,
    SkipThoughtsConfig,
    train_quickthoughts,
    train_skipthoughts,
)
from companion.train import TrainConfig


def run() -> dict:
    n_docs = pick(ci=20, laptop=100, gpu=1000)
    size = pick(ci={"emb_dim": 64, "hidden": 128}, laptop={"emb_dim": 100, "hidden": 300},
                gpu={"emb_dim": 300, "hidden": 1200})
    steps = pick(ci=10, laptop=40, gpu=300)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    docs = load_pretraining_corpus("train")[:n_docs]
    common = {"batch_size": 64, "max_len": 30, "min_count": 2, "max_vocab": 20_000, "seed": 0, "device": device, **size}
    out: dict = {"documents": n_docs, "steps": steps, "device": device, **size}
    with_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the shared 2-core machine: one thread each, as the other benches
    try:
        for name, train, cfg in (("quickthoughts", train_quickthoughts, QuickThoughtsConfig(lr=5e-4, **common)),
                                 ("skipthoughts", train_skipthoughts, SkipThoughtsConfig(lr=1e-3, **common))):
            res = train(docs, cfg, TrainConfig(epochs=1, max_steps=steps, lr=cfg.lr, device=device, progress=False))
            out[f"{name}_sentences_per_s"] = res.history.items_per_second
            out[f"{name}_final_loss"] = res.history.step_loss[-1]
            out[f"{name}_vocab"] = len(res.vocab)
    finally:
        torch.set_num_threads(with_threads)
    out["quick_over_skip_speed_ratio"] = out["quickthoughts_sentences_per_s"] / out["skipthoughts_sentences_per_s"]
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
