"""How fast do the output layers train as the vocabulary grows? (the softmax bottleneck)

The full softmax costs O(|V|) per token, the hierarchical softmax O(log |V|). These helpers
measure training throughput (tokens per second: forward, backward and optimizer step) on
synthetic Zipf-distributed text, so the chapter can plot the two curves. Timings depend on the
machine and on whatever else runs on it; compare the two layers within one run.
"""

from __future__ import annotations

import time

import pandas as pd
import torch

from .common import NeuralLM, iterate_minibatches
from .nnlm import NNLM, NNLMConfig

__all__ = ["zipf_stream", "training_throughput", "softmax_speed_table"]


def zipf_stream(vocab_size: int, n_tokens: int, *, exponent: float = 1.0, seed: int = 0) -> torch.Tensor:
    """``n_tokens`` ids drawn i.i.d. from a Zipf law over ``vocab_size`` words (id 0 most frequent)."""
    if vocab_size < 2 or n_tokens < 1:
        raise ValueError(f"need vocab_size >= 2 and n_tokens >= 1, got {vocab_size}, {n_tokens}")
    p = torch.arange(1, vocab_size + 1, dtype=torch.float64) ** -exponent
    return torch.multinomial(p / p.sum(), n_tokens, replacement=True, generator=torch.Generator().manual_seed(seed))


def training_throughput(
    model: NeuralLM,
    contexts: torch.Tensor,
    targets: torch.Tensor,
    *,
    batch_size: int = 512,
    steps: int = 10,
    warmup: int = 2,
    lr: float = 1e-3,
    optimizer: str = "adam",
    device: str | torch.device | None = None,
) -> float:
    """Training tokens per second of ``model`` on ``(contexts, targets)``: the median over
    ``steps`` timed steps (after ``warmup`` untimed ones) of batch tokens / step time.

    ``optimizer``: ``"adam"`` (what the chapter trains with; its step touches every parameter,
    O(|V|) per step whatever the output layer) or ``"sgd"`` (plain SGD; with a ``sparse=True``
    model a step touches only the rows the batch used, as in Bengio's and word2vec's code).
    """
    if steps < 1 or warmup < 0:
        raise ValueError(f"need steps >= 1 and warmup >= 0, got {steps}, {warmup}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    from ..device import get_device

    dev = get_device(device)
    model.to(dev).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr) if optimizer == "adam" else torch.optim.SGD(model.parameters(), lr=lr)
    batches = []
    it = iterate_minibatches(contexts, targets, batch_size=batch_size, seed=0)
    for _ in range(steps + warmup):
        try:
            b = next(it)
        except StopIteration:
            it = iterate_minibatches(contexts, targets, batch_size=batch_size, seed=len(batches))
            b = next(it)
        batches.append(tuple(t.to(dev) for t in b))

    def step(batch):
        loss = model.loss(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    for b in batches[:warmup]:
        step(b)
    sync()
    rates = []
    for b in batches[warmup:]:
        t0 = time.perf_counter()
        step(b)
        sync()
        rates.append(b[1].shape[0] / (time.perf_counter() - t0))
    # the median step: one step slowed down by another process on a shared machine does not count
    return float(torch.tensor(rates).median())


def softmax_speed_table(
    vocab_sizes: tuple[int, ...] = (1_000, 4_000, 16_000),
    *,
    n: int = 5,
    dim: int = 60,
    hidden: int = 100,
    batch_size: int = 512,
    steps: int = 10,
    n_tokens: int = 50_000,
    optimizer: str = "sgd",
    seed: int = 0,
    device: str | torch.device | None = None,
) -> pd.DataFrame:
    """Training tokens/s of the same NNLM with a full softmax and with a Huffman-tree
    hierarchical softmax, for each vocabulary size.

    Returns a DataFrame with columns ``vocab_size, full_tokens_per_s, hsoftmax_tokens_per_s,
    speedup, mean_depth`` (``mean_depth``: average path length of the tokens under the tree).

    With the default ``optimizer="sgd"`` the models use sparse gradients, so each step costs
    what the output layer costs (the full softmax's O(|V|) against the tree's O(log |V|));
    ``"adam"`` adds a dense O(|V|) update to both, which hides part of the tree's advantage.
    """
    if not vocab_sizes or any(v < 2 for v in vocab_sizes):
        raise ValueError(f"vocab_sizes must be a non-empty tuple of sizes >= 2, got {vocab_sizes}")
    rows = []
    # One throw-away measurement first: the process's first timed model (thread pools, allocator,
    # first-call dispatch) ran 2x slow on a quiet machine and made the smallest |V| look slow.
    warm = zipf_stream(vocab_sizes[0], 4 * batch_size * n, seed=seed).unfold(0, n, 1)
    warm_model = NNLM(NNLMConfig(vocab_size=vocab_sizes[0], n=n, dim=dim, hidden=hidden, direct=False,
                                 output="full", sparse=optimizer == "sgd"), seed=seed)
    training_throughput(warm_model, warm[:, :-1].contiguous(), warm[:, -1].contiguous(),
                        batch_size=batch_size, steps=2, device=device, optimizer=optimizer)
    for V in vocab_sizes:
        ids = zipf_stream(V, n_tokens, seed=seed)
        counts = torch.bincount(ids, minlength=V) + 1  # +1: words the sample missed still get a leaf
        w = ids.unfold(0, n, 1)
        ctx, tgt = w[:, :-1].contiguous(), w[:, -1].contiguous()
        speeds = {}
        for output in ("full", "hsoftmax"):
            cfg = NNLMConfig(
                vocab_size=V, n=n, dim=dim, hidden=hidden, direct=False, output=output,
                sparse=optimizer == "sgd",
            )
            model = NNLM(cfg, counts=counts.tolist(), seed=seed)
            speeds[output] = training_throughput(
                model, ctx, tgt, batch_size=batch_size, steps=steps, device=device, optimizer=optimizer,
                lr=0.1 if optimizer == "sgd" else 1e-3,
            )
            if output == "hsoftmax":
                lengths = model.out.mask.sum(1).double().cpu()
                depth = float((lengths[tgt]).mean())
        rows.append(
            {
                "vocab_size": V,
                "full_tokens_per_s": speeds["full"],
                "hsoftmax_tokens_per_s": speeds["hsoftmax"],
                "speedup": speeds["hsoftmax"] / speeds["full"],
                "mean_depth": depth,
            }
        )
    return pd.DataFrame(rows)
