"""Pre-training GPT and BERT on token-id documents, on one process or many (DDP).

* :func:`pack_lm` / :func:`pack_mlm` -- documents (lists of token ids) into fixed-size rows:
  GPT rows of ``block_size + 1`` ids (inputs and shifted targets), BERT rows ``[CLS] ... [SEP]``.
* :func:`lm_batches` / :func:`mlm_batches` -- seeded, shuffled batches per epoch (BERT's masks
  are drawn anew each epoch: RoBERTa's "dynamic masking").
* :func:`pretrain` -- all of that through ``companion.train.fit``.
* ``python -m companion.transformer.pretrain`` -- the same under ``torchrun`` with PyTorch's
  ``DistributedDataParallel`` (gloo on CPUs, nccl on GPUs): each process takes its share of every
  global batch and DDP averages the gradients, so N processes take the step one process would
  take on the whole batch (a test checks the gradients). For example, on 4 GPUs::

      torchrun --standalone --nproc_per_node=4 -m companion.transformer.pretrain \\
          --model gpt --data ids.npy --d-model 256 --n-layer 4 --batch-size 64 --steps 2000 --out gpt_dir

:func:`distributed_gradients` runs one DDP backward pass in spawned processes (the test's tool).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from ..checks import check_int
from ..train import History, TrainConfig, fit
from .bert import BertConfig, BertForPreTraining, mask_tokens
from .gpt import GPT, GPTConfig


def _check_docs(docs) -> None:
    if not docs or not all(isinstance(d, (list, tuple)) for d in docs):
        raise ValueError("docs must be a non-empty list of token-id lists (one per document)")


def pack_lm(docs: list[list[int]], block_size: int, eos_id: int | None = None) -> torch.Tensor:
    """Concatenate the documents (``eos_id`` between them, if given) and cut the stream into rows
    of ``block_size + 1`` ids, consecutive rows overlapping by one id so that every token is a
    target exactly once. The incomplete tail is dropped."""
    _check_docs(docs)
    check_int(block_size, "block_size")
    stream = [t for d in docs for t in ([*d, eos_id] if eos_id is not None else d)]
    n = (len(stream) - 1) // block_size
    if n < 1:
        raise ValueError(f"{len(stream)} tokens do not fill one block of {block_size} + 1; use more text or a smaller block")
    ids = torch.tensor(stream[: n * block_size + 1], dtype=torch.long)
    return ids.unfold(0, block_size + 1, block_size).contiguous()


def pack_mlm(docs: list[list[int]], config: BertConfig, max_len: int | None = None) -> torch.Tensor:
    """Cut each document into pieces of ``max_len - 2`` ids and frame them as ``[CLS] piece [SEP]``,
    right-padded with ``[PAD]`` (a document's short last piece is kept)."""
    _check_docs(docs)
    L = max_len or config.max_len
    if not 3 <= L <= config.max_len:
        raise ValueError(f"max_len must be in [3, {config.max_len}], got {L}")
    rows = []
    for d in docs:
        for i in range(0, len(d), L - 2):
            row = [config.cls_id, *d[i:i + L - 2], config.sep_id]
            rows.append(row + [config.pad_id] * (L - len(row)))
    return torch.tensor(rows, dtype=torch.long)


def lm_batches(rows: torch.Tensor, batch_size: int, seed: int = 0) -> Callable[[int], list[torch.Tensor]]:
    """``epoch -> list of [B, block+1] batches``, shuffled by ``seed + epoch``."""
    check_int(batch_size, "batch_size")

    def epoch_batches(epoch: int) -> list[torch.Tensor]:
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(seed + epoch))
        return [rows[order[i:i + batch_size]] for i in range(0, len(rows), batch_size)]
    return epoch_batches


def mlm_batches(rows: torch.Tensor, config: BertConfig, batch_size: int, seed: int = 0,
                p: float = 0.15) -> Callable[[int], list[dict[str, torch.Tensor]]]:
    """``epoch -> list of MLM batches`` (``ids``, ``attention_mask``, ``labels``), shuffled and
    masked afresh each epoch from ``seed + epoch``."""
    check_int(batch_size, "batch_size")

    def epoch_batches(epoch: int) -> list[dict[str, torch.Tensor]]:
        g = torch.Generator().manual_seed(seed + epoch)
        order = torch.randperm(len(rows), generator=g)
        out = []
        for i in range(0, len(rows), batch_size):
            ids = rows[order[i:i + batch_size]]
            am = (ids != config.pad_id).long()
            inputs, labels = mask_tokens(ids, config, attention_mask=am, p=p, generator=g)
            if (labels != -100).any():  # a batch with nothing chosen has no MLM loss
                out.append({"ids": inputs, "attention_mask": am, "labels": labels})
        return out
    return epoch_batches


def nsp_examples(docs: list[list[list[int]]], config: BertConfig, max_len: int | None = None,
                 seed: int = 0) -> list[tuple[list[int], list[int], int]]:
    """Next-sentence-prediction pairs from documents given as lists of sentences (token-id lists):
    for each sentence ``a`` followed by another in its document, ``(a, next, 1)`` half the time
    and ``(a, random sentence of another document, 0)`` otherwise, both cut (longest first) to fit
    ``[CLS] a [SEP] b [SEP]`` in ``max_len``. Seeded; frame them with :func:`.bert.pair_inputs`."""
    import random

    if len(docs) < 2 or not all(isinstance(d, (list, tuple)) and d and isinstance(d[0], (list, tuple)) for d in docs):
        raise ValueError("docs must be at least two documents, each a non-empty list of sentences (token-id lists)")
    L = (max_len or config.max_len) - 3
    rng = random.Random(seed)
    out = []
    for i, doc in enumerate(docs):
        for j in range(len(doc) - 1):
            a, label = list(doc[j]), 1
            b = list(doc[j + 1])
            if rng.random() < 0.5:
                other = rng.choice([k for k in range(len(docs)) if k != i])
                b, label = list(rng.choice(docs[other])), 0
            while len(a) + len(b) > L:  # BERT trims the longer sentence first
                (a if len(a) >= len(b) else b).pop()
            out.append((a, b, label))
    return out


def pretrain(model: GPT | BertForPreTraining, docs: list[list[int]], *, batch_size: int = 16,
             config: TrainConfig | None = None, eos_id: int | None = None, evaluate=None) -> History:
    """Pre-train ``model`` on ``docs`` with :func:`companion.train.fit` (seeded by ``config.seed``):
    a GPT on :func:`pack_lm` blocks of its ``block_size``, a BERT by masked LM on :func:`pack_mlm`
    rows. Counts tokens per second in the history."""
    config = config or TrainConfig(optimizer="adamw", lr=3e-4)
    if isinstance(model, GPT):
        batches = lm_batches(pack_lm(docs, model.config.block_size, eos_id), batch_size, config.seed)
        return fit(model, batches, config=config, evaluate=evaluate, count_fn=lambda b: b[:, 1:].numel())
    if isinstance(model, BertForPreTraining):
        batches = mlm_batches(pack_mlm(docs, model.config), model.config, batch_size, config.seed)
        return fit(model, batches, config=config, evaluate=evaluate,
                   count_fn=lambda b: int(b["attention_mask"].sum()))
    raise TypeError(f"pretrain takes a GPT or a BertForPreTraining, got {type(model).__name__}")


# ------------------------------------------------------------------------------- distributed


class LossModule(nn.Module):
    """``forward(batch) = model.loss(batch)``: DDP synchronises gradients in ``backward`` of what
    its ``forward`` returned, so the loss itself must come out of the wrapped forward."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, batch):
        return self.model.loss(batch)


def shard(batch, rank: int, world: int):
    """This process's contiguous share of a global batch (a tensor or a dict of tensors)."""
    if isinstance(batch, dict):
        return {k: shard(v, rank, world) for k, v in batch.items()}
    if len(batch) % world:
        raise ValueError(f"a global batch of {len(batch)} does not split evenly over {world} processes")
    n = len(batch) // world
    return batch[rank * n:(rank + 1) * n]


def _grad_worker(rank: int, world: int, init: str, model: nn.Module, batch, out: str) -> None:
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        torch.set_num_threads(1)
        # find_unused_parameters: an MLM-only batch leaves BERT's pooler and NSP head without gradients
        ddp = nn.parallel.DistributedDataParallel(LossModule(model), find_unused_parameters=True)
        ddp(shard(batch, rank, world)).backward()
        if rank == 0:
            torch.save({k: p.grad for k, p in model.named_parameters()}, out)
        del ddp  # free the reducer before its process group goes (its destructor joins gloo's threads)
    finally:
        dist.destroy_process_group()


def distributed_gradients(model: nn.Module, batch, world_size: int = 2,
                          timeout_s: float = 300.0) -> dict[str, torch.Tensor]:
    """The gradients DDP computes when ``world_size`` CPU processes (gloo) each take their share of
    ``batch``: one forward and backward pass, averaged across processes. ``model`` is not changed."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        init, out = f"file://{tmp}/rendezvous", f"{tmp}/grads.pt"
        # spawn, not fork: a child forked from a process that already runs threads (pytest-xdist,
        # OpenMP, a Jupyter kernel) deadlocked here in gloo's teardown (seen under `pytest -n 2`).
        ctx = mp.start_processes(_grad_worker, args=(world_size, init, model, batch, out),
                                 nprocs=world_size, join=False, start_method="spawn")
        deadline = time.monotonic() + timeout_s
        while not ctx.join(timeout=1.0):
            if time.monotonic() > deadline:
                for proc in ctx.processes:
                    proc.kill()
                raise TimeoutError(f"the {world_size} DDP processes did not finish in {timeout_s:.0f} s")
        return torch.load(out, weights_only=True)


def _synthetic_docs(vocab: int, n_tokens: int, seed: int) -> list[list[int]]:
    """Zipf-distributed ids in documents of 200 tokens: enough to smoke-test the loop."""
    g = torch.Generator().manual_seed(seed)
    weights = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float)
    ids = torch.multinomial(weights, n_tokens, replacement=True, generator=g).tolist()
    return [ids[i:i + 200] for i in range(0, n_tokens, 200)]


def main(argv: list[str] | None = None) -> dict:
    """Pre-train from the command line; under ``torchrun`` every process runs this."""
    ap = argparse.ArgumentParser(prog="python -m companion.transformer.pretrain", description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=("gpt", "bert"), default="gpt")
    ap.add_argument("--data", help="a .npy or .pt file of token ids (1-D); default: synthetic Zipf ids")
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=16, help="global batch (split over processes)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="save the final model here, as a Hugging Face directory (save_pretrained)")
    args = ap.parse_args(argv)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local}") if torch.cuda.is_available() else torch.device("cpu")
    if world > 1:
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    if args.data:
        path = Path(args.data)
        ids = torch.from_numpy(np.load(path)) if path.suffix == ".npy" else torch.load(path, weights_only=True)
        docs, vocab = [ids.long().tolist()], int(ids.max()) + 1
    else:
        vocab = args.vocab_size
        docs = _synthetic_docs(vocab, 40 * args.block_size * args.batch_size, args.seed)
    if args.model == "gpt":
        model = GPT(GPTConfig(vocab_size=vocab + 3, block_size=args.block_size, n_layer=args.n_layer,
                              n_head=args.n_head, d_model=args.d_model), seed=args.seed)
        batches = lm_batches(pack_lm(docs, args.block_size), args.batch_size, args.seed)
    else:
        cfg = BertConfig(vocab_size=vocab + 5, max_len=args.block_size, n_layer=args.n_layer, n_head=args.n_head,
                         d_model=args.d_model, pad_id=vocab, unk_id=vocab + 1, cls_id=vocab + 2,
                         sep_id=vocab + 3, mask_id=vocab + 4)
        model = BertForPreTraining(cfg, seed=args.seed)
        batches = mlm_batches(pack_mlm(docs, cfg), cfg, args.batch_size, args.seed)
    model.to(device)
    net = LossModule(model)
    if world > 1:
        # MLM-only pre-training leaves the pooler and NSP head without gradients
        net = nn.parallel.DistributedDataParallel(net, device_ids=[local] if device.type == "cuda" else None,
                                                  find_unused_parameters=args.model == "bert")

    def my_batches(epoch: int) -> list:
        """Every process sees the same shuffled global batches and keeps its own share of each."""
        full = [b for b in batches(epoch) if len(b["ids"] if isinstance(b, dict) else b) == args.batch_size]
        return [shard(b, rank, world) for b in full]

    config = TrainConfig(epochs=1000, max_steps=args.steps, lr=args.lr, optimizer="adamw", seed=args.seed,
                         device=str(device), progress=rank == 0)
    hist = fit(net, my_batches, config=config, loss_fn=lambda m, b: m(b), count_fn=lambda b: b["ids"].numel() if isinstance(b, dict) else b.numel())
    if rank == 0:
        print(f"world {world} on {device}: {hist.steps} steps, loss {hist.step_loss[0]:.3f} -> "
              f"{hist.step_loss[-1]:.3f}, {hist.items_per_second * world:,.0f} tokens/s in all", flush=True)
        if args.out:
            from .hf import save_pretrained

            save_pretrained(model, args.out)
    if world > 1:
        dist.destroy_process_group()
    return {"steps": hist.steps, "first_loss": hist.step_loss[0], "last_loss": hist.step_loss[-1]}


if __name__ == "__main__":
    main()
