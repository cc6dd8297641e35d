"""Doc2Vec's compiled step (numba): plain SGD, one (input, target) example at a time, as
gensim's and the C code's loops do.

The chapter teaches :meth:`~.doc2vec.Doc2VecModel.sgd_step`, the batched torch step: gather the
batch's rows, score every block with one matrix product, ``index_add_`` the summed updates back,
all computed from the parameters *before* the step. That is the readable form, and it is slow on
a CPU: many small tensor operations per step, and a per-row cap to keep the summed updates of
frequent rows from overshooting. This module computes **the same update for one example** and
applies it before the next example is read, in one compiled loop over a whole batch:

1. the hidden vector ``h`` from the current parameters (the paragraph vector; the mean of it and
   the window's word vectors; or their concatenation);
2. for every output slot (the target and its noise words, or the nodes of its Huffman path) the
   score, ``g = lr * w * (label - sigmoid(score))``, the input error ``e += g u`` and then the
   output steps ``u += g h`` (all slots scored before any moves: the torch step's rule);
3. ``e`` added to the inputs (the paragraph vector; with PV-DM the whole ``e`` to every context
   word, as the C code and gensim do; PV-DM concat: each input its slice).

So the compiled step on a batch equals the torch step applied to the batch's examples one by one
(``tests/test_sentence_doc2vec.py`` checks equal vectors, for training and for inference, in
every mode and both output layers). With one example per update no row collects many summed
steps, so ``update_cap`` plays no part. Inference uses the same loop with the word and output
vectors frozen. The noise words are drawn by the head's torch generator, as the torch step does.

Why a compiled loop (profiled, PV-DM mean, the benchmark's 60 Brown files, one thread): the
torch step spent its time in ~40 small operations per step (gathers, ``embedding_bag``,
``index_add_`` scatters, the cap), ~0.15x gensim's words/s; PV-DBOW through chapter 3's batched
skip-gram kernel reached ~0.5x, most of it filling and applying a per-step buffer of output
steps. Here each example touches only its own rows, like gensim's Cython loop.
"""

from __future__ import annotations

import math

import numpy as np

from ..word2vec._compiled import AVAILABLE, _jit

__all__ = ["AVAILABLE", "MODE_CODE", "sequential_step", "warm_up"]

MODE_CODE = {"dbow": 0, "dm_mean": 1, "dm_concat": 2}


@_jit
def _sequential(D, Wv, Out, src, is_word, ctx, targets, mask, rows, labels, weights, lr, mode,
                train_words, train_out):  # pragma: no cover - compiled
    """One SGD update per real (block, target) pair, in order; returns ``(summed loss, pairs)``.

    ``D [n_docs, d]`` paragraph vectors, ``Wv [V + 1, d]`` word vectors (row ``V``: the null
    word, never trained), ``Out [n_out, width]`` output vectors; ``src [nb]``, ``is_word [nb]``,
    ``ctx [nb, 2W]`` (PV-DM; ``[nb, 0]`` otherwise), ``targets``/``mask [nb, G]``, slots
    ``[nb, G, J]``."""
    nb, G = targets.shape
    J = rows.shape[2]
    d = D.shape[1]
    width = Out.shape[1]
    null = Wv.shape[0] - 1
    C = ctx.shape[1]
    h = np.empty(width, dtype=np.float32)
    e = np.empty(width, dtype=np.float32)
    gs = np.empty(J, dtype=np.float32)
    loss = 0.0
    n = 0
    for b in range(nb):
        s = src[b]
        for i in range(G):
            if mask[b, i] == 0.0:
                continue
            n += 1
            # 1. the hidden vector, from the parameters as they are now
            if mode == 0:
                if is_word[b]:
                    for k in range(d):
                        h[k] = Wv[s, k]
                else:
                    for k in range(d):
                        h[k] = D[s, k]
            elif mode == 1:
                for k in range(d):
                    h[k] = D[s, k]
                c = 1
                for j in range(C):
                    w = ctx[b, j]
                    if w != null:
                        c += 1
                        for k in range(d):
                            h[k] += Wv[w, k]
                inv = np.float32(1.0) / np.float32(c)
                for k in range(d):
                    h[k] = h[k] * inv
            else:
                for k in range(d):
                    h[k] = D[s, k]
                for j in range(C):
                    w = ctx[b, j]
                    for k in range(d):
                        h[(j + 1) * d + k] = Wv[w, k]
            # 2. score every slot, then step the output vectors
            for k in range(width):
                e[k] = 0.0
            for j in range(J):
                wt = weights[b, i, j]
                gs[j] = 0.0
                if wt == 0.0:
                    continue
                r = rows[b, i, j]
                sc = np.float32(0.0)
                for k in range(width):
                    sc += h[k] * Out[r, k]
                p = 1.0 / (1.0 + math.exp(-sc))
                pl = p if labels[b, i, j] > 0 else 1.0 - p
                loss -= wt * math.log(max(pl, 1e-30))
                g = np.float32(lr * wt * (labels[b, i, j] - p))
                gs[j] = g
                for k in range(width):
                    e[k] += g * Out[r, k]
            if train_out:
                for j in range(J):
                    g = gs[j]
                    if g == 0.0:
                        continue
                    r = rows[b, i, j]
                    for k in range(width):
                        Out[r, k] += g * h[k]
            # 3. the input error to the inputs
            if mode == 0 and is_word[b]:
                if train_words:
                    for k in range(d):
                        Wv[s, k] += e[k]
                continue
            for k in range(d):
                D[s, k] += e[k]
            if not train_words:
                continue
            for j in range(C):
                w = ctx[b, j]
                if w == null:
                    continue
                off = (j + 1) * d if mode == 2 else 0
                for k in range(d):
                    Wv[w, k] += e[off + k]
    return loss, n


def sequential_step(D, Wv, Out, batch, slots, lr: float, mode: str, *, train: bool = True) -> tuple[float, int]:
    """Run :func:`_sequential` on numpy views of the tensors (updated in place).

    Args:
        D, Wv, Out: float32 CPU tensors (paragraph, word and output vectors).
        batch: a dict from :func:`~.doc2vec.epoch_examples` (``src``, ``is_word``, ``targets``,
            ``mask``, and ``ctx`` for PV-DM).
        slots: ``(rows, labels, weights)`` numpy arrays ``[nb, G, J]``.
        train: ``False`` for inference: only ``D`` moves.
    """
    ctx = batch.get("ctx")
    ctx_np = ctx.numpy() if ctx is not None else np.zeros((batch["src"].shape[0], 0), dtype=np.int64)
    rows, labels, weights = slots
    return _sequential(
        D.detach().numpy(), Wv.detach().numpy(), Out.detach().numpy(), batch["src"].numpy(),
        batch["is_word"].numpy(), ctx_np, batch["targets"].numpy(), batch["mask"].numpy(),
        rows, labels, weights, float(lr), MODE_CODE[mode], bool(train), bool(train),
    )


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel before a timed run."""
    if not AVAILABLE:
        return
    f = np.zeros((3, 2), np.float32)
    i1 = np.zeros(1, np.int64)
    s3 = np.zeros((1, 1, 2), np.float32)
    for ctx in (np.zeros((1, 0), np.int64), np.zeros((1, 2), np.int64)):
        _sequential(f, f, f, i1, np.zeros(1, np.bool_), ctx, np.zeros((1, 1), np.int64),
                    np.zeros((1, 1), np.float32), np.zeros((1, 1, 2), np.int64), s3, s3, 0.1, 0, True, True)
