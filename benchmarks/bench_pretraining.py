"""Chapter 8 benchmark: what making a batch costs against a training step, per objective.

The issue's budget: masking, permutations and noising must cost at most 5 % of a training step,
or the comparison at equal FLOPs would be a comparison of data pipelines. For every encoder
objective of chapter 8a at the laptop size (d = 64, 2 layers, rows of 45 tokens, batches of 32,
a 2,048-token BPE vocabulary replaced here by random ids over the same vocabulary size, so no
corpus is needed), this prints the median CPU time of ``make_batch`` and of one training step
(forward, backward, AdamW) and their ratio. CPU time on one thread, medians of paired steps:
the machine is shared, and only the ratio travels.

Run alone with ``python -m benchmarks.bench_pretraining`` (or through ``python -m benchmarks``).

Measured while the book was built (1 thread, load average ~14 on 2 cores): see the report
printed by ``run()``; every objective stayed under 5 % except where the printout says otherwise.
"""

from __future__ import annotations

import statistics
import time

import torch

from companion.pretraining.albert import AlbertObjective
from companion.pretraining.electra import ElectraObjective
from companion.pretraining.harness import MaskedLM, ModelSize, Vocab
from companion.pretraining.mlm import (
    EntityMLM,
    MacBERTMLM,
    SpanMLM,
    StaticMLM,
    WholeWordMLM,
)
from companion.pretraining.sentence_tasks import SentenceTask
from companion.pretraining.xlnet import PermutationLM

SIZE = ModelSize(64, 2, 4, 256, 48)
V, B = 2048, 32


def bench_vocab() -> Vocab:
    """A 2,048-id vocabulary with the real tokenizer's proportions: ~55 % of the ids start a word,
    ~10 % are capitalised, a few end a sentence."""
    g = torch.Generator().manual_seed(0)
    ws = torch.rand(V, generator=g) < 0.55
    cap = torch.rand(V, generator=g) < 0.10
    end = torch.zeros(V, dtype=torch.bool)
    end[torch.randint(16, V, (6,), generator=g)] = True
    for t in (ws, cap, end):
        t[:22] = False
    return Vocab(V, pad=1, unk=2, cls=3, sep=4, mask=5, eos=0, sentinels=tuple(range(6, 22)),
                 word_start=ws, capital=cap, sentence_end=end)


def measure(obj, rows: torch.Tensor, repeats: int) -> tuple[float, float]:
    """Median CPU seconds of ``make_batch`` and of one training step (after 2 warm-up steps)."""
    torch.manual_seed(0)
    model = obj.build_model(SIZE, V)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)
    batch_t, step_t = [], []
    for i in range(repeats):
        t0 = time.process_time()
        batch = obj.make_batch(rows[i * B:(i + 1) * B], gen)
        t1 = time.process_time()
        opt.zero_grad()
        obj.loss(model, batch).backward()
        opt.step()
        t2 = time.process_time()
        batch_t.append(t1 - t0)
        step_t.append(t2 - t1)
    return statistics.median(batch_t[2:]), statistics.median(step_t[2:])


def run(repeats: int = 12) -> dict:
    torch.set_num_threads(1)
    v = bench_vocab()
    rows = torch.randint(22, V, (B * repeats, SIZE.row_len), generator=torch.Generator().manual_seed(1))
    similar = torch.randint(22, V, (V, 5), generator=torch.Generator().manual_seed(2))
    objs = [MaskedLM(v), StaticMLM(v), WholeWordMLM(v), EntityMLM(v), SpanMLM(v), MacBERTMLM(v, similar),
            SentenceTask(v, "nsp"), SentenceTask(v, "sop"), AlbertObjective(v, 16), PermutationLM(v),
            ElectraObjective(v)]
    out = {}
    for obj in objs:
        bt, st = measure(obj, rows, repeats)
        out[obj.name] = {"batch ms": 1000 * bt, "step ms": 1000 * st, "share %": 100 * bt / st}
        print(f"{obj.name:36s} batch {1000 * bt:6.2f} ms  step {1000 * st:7.1f} ms  share {100 * bt / st:5.2f} %"
              + ("" if bt / st <= 0.05 else "   OVER 5 %"), flush=True)
    return out


if __name__ == "__main__":
    run()
