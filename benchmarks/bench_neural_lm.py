"""Chapter 2 benchmark: NNLM training throughput and the hierarchical-softmax speed-up.

Synthetic Zipf-distributed text with Brown's vocabulary size under Bengio's split
(|V| = 13,190), the chapter's laptop-scale model shape, full softmax vs Huffman tree. Both
layers are timed in the same run, so the *ratio* is the number to compare across machines.

Run alone with ``python -m benchmarks.bench_neural_lm`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json
import time

import torch

from companion.device import describe, get_device
from companion.neural_lm import NNLM, NNLMConfig, training_throughput, zipf_stream

VOCAB = 13_190  # len(bengio_split().vocab) on NLTK's Brown, lower-cased


def run(*, steps: int = 8, batch_size: int = 1024, device: str | None = None) -> dict:
    """Time training steps of the laptop NNLM shape (n=5, d=60, d_h=100) with each output layer.

    Returns a flat dict: tokens/s (median step) with Adam -- what the chapter trains with --
    for the full softmax and the hierarchical softmax, with and without direct connections,
    and with sparse SGD; their ratios (``hs_speedup*``); and what it was measured on.
    """
    dev = get_device(device)
    ids = zipf_stream(VOCAB, 200_000, seed=0)
    counts = (torch.bincount(ids, minlength=VOCAB) + 1).tolist()
    w = ids.unfold(0, 5, 1)
    ctx, tgt = w[:, :-1].contiguous(), w[:, -1].contiguous()
    out: dict = {"vocab_size": VOCAB, "batch_size": batch_size, "device": describe(dev)}
    t0 = time.perf_counter()
    for output in ("full", "hsoftmax"):
        for direct in (False, True):
            cfg = NNLMConfig(vocab_size=VOCAB, n=5, dim=60, hidden=100, direct=direct, output=output)
            model = NNLM(cfg, counts=counts, seed=0)
            key = f"nnlm_{output}{'_direct' if direct else ''}_tokens_per_s"
            out[key] = training_throughput(model, ctx, tgt, batch_size=batch_size, steps=steps, warmup=2, device=dev)
    out["hs_speedup"] = out["nnlm_hsoftmax_tokens_per_s"] / out["nnlm_full_tokens_per_s"]
    out["hs_speedup_direct"] = out["nnlm_hsoftmax_direct_tokens_per_s"] / out["nnlm_full_direct_tokens_per_s"]
    # plain SGD with sparse gradients: a step touches only the rows the batch used (word2vec's way)
    for output in ("full", "hsoftmax"):
        cfg = NNLMConfig(vocab_size=VOCAB, n=5, dim=60, hidden=100, direct=False, output=output, sparse=True)
        model = NNLM(cfg, counts=counts, seed=0)
        out[f"nnlm_{output}_sgd_sparse_tokens_per_s"] = training_throughput(
            model, ctx, tgt, batch_size=batch_size, steps=steps, warmup=2, lr=0.1, optimizer="sgd", device=dev
        )
    out["hs_speedup_sgd_sparse"] = out["nnlm_hsoftmax_sgd_sparse_tokens_per_s"] / out["nnlm_full_sgd_sparse_tokens_per_s"]
    out["seconds"] = time.perf_counter() - t0
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
