"""A compiled copy of the ``sgd`` engine's step (numba), used when numba is installed.

The chapter teaches :meth:`~.model.Word2VecModel.sgd_step`: gather the rows of a batch, score
every (token, centre) combination of a block with one matrix product, mask, ``index_add_`` the
updates back. This module computes **the same update** -- the same batches, the same noise
words, the summed step from the parameters before the step, the same per-row cap
(:func:`~.heads.row_scale`) -- with loops over the real pairs only, compiled by numba and
run without the GIL, so that ``workers`` Hogwild threads really run at once. A test
(``tests/test_word2vec_compiled.py``) checks that both give equal vectors on a tiny corpus
(one thread, same seed) for skip-gram and CBOW with negative sampling and the hierarchical
softmax. The full softmax stays on the torch step.

Why (profiled with cProfile on CPU time, skip-gram + NEG, d=100, window 5, 5 noise words, batch
512, one worker, one epoch of Moby Dick alone: 209k tokens, |V| 4,050, 259 batches; a 2-core
machine shared with other jobs, load average 7-10, so wall-clock times were 3-7x the CPU times):

======================================================  ========  ========
share of the CPU time of one epoch                      torch     compiled
======================================================  ========  ========
the three block matrix products (``bmm``)                 18 %      --
``index_add_`` scatters (3 per step)                      10 %      --
elementwise work (sigmoid, log, masks) and dispatch       21 %      --
per-row cap (``row_scale``: ``index_add_`` + gather)       7 %      --
gathers (``index_select``) and dtype casts                 8 %      --
the compiled step (all of the arithmetic above)            --       71 %
noise words (``randint``, table lookup, slots)            10 %       8 %
batches (subsampling, windows, block masks)                8 %      10 %
Python per step, lr schedule, loop and thread hand-off     ~5 %      ~8 %
CPU seconds for the epoch                                 0.70      0.58
======================================================  ========  ========

In CPU time one thread gains less than one might expect (the torch step is a few large,
efficient operations; its waste is that ~2/3 of the scored combinations are masked away). The
rest of the gain is with ``workers=2``: the torch step needs the GIL to dispatch each of its ~40
small operations, so two Hogwild threads partly take turns; the compiled step releases the GIL
for the ~70 % of a step spent in it, and two threads run at once (``benchmarks/bench_word2vec.py``
prints the slice speeds of both with one and two workers).
The noise words are still drawn by torch's generator (so both engines see the same ones), and
the batches are still built by :func:`~.pairs.epoch_batches`. Building the unigram table
(once, ``repeat_interleave``) took 0.05-0.4 s, outside the timed loop.
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch

__all__ = ["AVAILABLE", "KERNELS", "compiled_sgd_step", "resolve_kernel", "warm_up"]

KERNELS = ("auto", "numba", "torch")

try:  # numba is a runtime dependency, but the torch step must work without it
    if os.environ.get("BOOK_NO_NUMBA"):
        raise ImportError("BOOK_NO_NUMBA is set")
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised by the fallback test
    numba = None
    AVAILABLE = False


def _jit(fn):
    if numba is None:
        return fn
    return numba.njit(nogil=True, fastmath=True, cache=True, error_model="numpy")(fn)


@_jit
def _logistic_pairs(hid, att, out_vec, rows, labels, weights, lr, E, dU):  # pragma: no cover - compiled
    """Phase 1 of a logistic step (NEG, HS): for every hidden vector ``q`` attached to centre
    ``i`` (``att[b, q, i]``) and every slot ``j`` of that centre, accumulate the input error
    ``E[b, q]`` and the output step ``dU[b, i, j]`` from the current parameters. ``hid`` holds
    the hidden vectors ``[nb, Q, d]``. Returns the summed loss. (Plain index loops, no row
    views: a view costs reference counting in every iteration.)"""
    nb, Q, g = att.shape
    J = rows.shape[2]
    d = hid.shape[2]
    loss = 0.0
    for b in range(nb):
        for i in range(g):
            for j in range(J):
                w = weights[b, i, j]
                if w == 0.0:
                    continue
                r = rows[b, i, j]
                y = labels[b, i, j]
                for q in range(Q):
                    a = att[b, q, i]
                    if a == 0.0:
                        continue
                    s = np.float32(0.0)
                    for k in range(d):
                        s += hid[b, q, k] * out_vec[r, k]
                    p = 1.0 / (1.0 + math.exp(-s))
                    pl = p if y > 0 else 1.0 - p
                    loss -= a * w * math.log(max(pl, 1e-30))
                    gc = np.float32(lr * a * w * (y - p))
                    for k in range(d):  # two loops vectorise better than one (measured)
                        E[b, q, k] += gc * out_vec[r, k]
                    for k in range(d):
                        dU[b, i, j, k] += gc * hid[b, q, k]
    return loss


@_jit
def _apply_out(out_vec, rows, weights, uses_c, dU, cap, counts):  # pragma: no cover - compiled
    """Phase 2 (output side): ``out_vec[rows] += scale * dU``; ``uses_c[b, i]`` pairs per centre."""
    nb, g, J = rows.shape
    d = out_vec.shape[1]
    if cap > 0:
        for b in range(nb):
            for i in range(g):
                for j in range(J):
                    counts[rows[b, i, j]] += uses_c[b, i] * weights[b, i, j]
    for b in range(nb):
        for i in range(g):
            if uses_c[b, i] == 0.0:
                continue
            for j in range(J):
                if weights[b, i, j] == 0.0:
                    continue
                r = rows[b, i, j]
                sc = np.float32(1.0)
                if cap > 0 and counts[r] > cap:
                    sc = np.float32(cap / counts[r])
                for k in range(d):
                    out_vec[r, k] += sc * dU[b, i, j, k]
    if cap > 0:
        for b in range(nb):
            for i in range(g):
                for j in range(J):
                    counts[rows[b, i, j]] = 0.0


@_jit
def _apply_in(in_vec, tokens, uses_t, E, cap, counts):  # pragma: no cover - compiled
    """Phase 2 (input side): ``in_vec[tokens] += scale * E``; ``uses_t[b, t]`` pairs per token."""
    nb, L = tokens.shape
    d = in_vec.shape[1]
    if cap > 0:
        for b in range(nb):
            for t in range(L):
                counts[tokens[b, t]] += uses_t[b, t]
    for b in range(nb):
        for t in range(L):
            if uses_t[b, t] == 0.0:
                continue
            r = tokens[b, t]
            sc = np.float32(1.0)
            if cap > 0 and counts[r] > cap:
                sc = np.float32(cap / counts[r])
            for k in range(d):
                in_vec[r, k] += sc * E[b, t, k]
    if cap > 0:
        for b in range(nb):
            for t in range(L):
                counts[tokens[b, t]] = 0.0


@_jit
def _sg_step(in_vec, out_vec, tokens, mask, rows, labels, weights, lr, cap, counts):  # pragma: no cover
    """Skip-gram: the hidden vectors are the block's tokens, attached by the window mask."""
    nb, L, g = mask.shape
    J = rows.shape[2]
    d = in_vec.shape[1]
    hid = np.empty((nb, L, d), dtype=np.float32)
    att = np.zeros((nb, L, g), dtype=np.float32)
    uses_t = np.zeros((nb, L), dtype=np.float32)
    uses_c = np.zeros((nb, g), dtype=np.float32)
    n = 0
    for b in range(nb):
        for t in range(L):
            r = tokens[b, t]
            for k in range(d):
                hid[b, t, k] = in_vec[r, k]
            for i in range(g):
                if mask[b, t, i]:
                    att[b, t, i] = 1.0
                    uses_t[b, t] += 1.0
                    uses_c[b, i] += 1.0
                    n += 1
    E = np.zeros((nb, L, d), dtype=np.float32)
    dU = np.zeros((nb, g, J, d), dtype=np.float32)
    loss = _logistic_pairs(hid, att, out_vec, rows, labels, weights, lr, E, dU)
    _apply_out(out_vec, rows, weights, uses_c, dU, cap, counts)
    _apply_in(in_vec, tokens, uses_t, E, cap, counts)
    return loss, n


@_jit
def _cbow_step(in_vec, out_vec, tokens, mask, rows, labels, weights, lr, cap, counts):  # pragma: no cover
    """CBOW: one hidden vector per centre (the mean of its window); the whole error of a centre
    goes to every word of its window (the C code's convention, see :mod:`.cbow`)."""
    nb, L, g = mask.shape
    J = rows.shape[2]
    d = in_vec.shape[1]
    hid = np.zeros((nb, g, d), dtype=np.float32)
    att = np.zeros((nb, g, g), dtype=np.float32)
    uses_t = np.zeros((nb, L), dtype=np.float32)
    uses_c = np.zeros((nb, g), dtype=np.float32)
    n = 0
    for b in range(nb):
        for i in range(g):
            c = 0
            for t in range(L):
                if mask[b, t, i]:
                    c += 1
                    r = tokens[b, t]
                    for k in range(d):
                        hid[b, i, k] += in_vec[r, k]
            if c > 0:
                inv = np.float32(1.0 / c)
                for k in range(d):
                    hid[b, i, k] *= inv
                att[b, i, i] = 1.0
                uses_c[b, i] = 1.0
                n += 1
        for t in range(L):
            for i in range(g):
                if mask[b, t, i]:
                    uses_t[b, t] += 1.0
    Ec = np.zeros((nb, g, d), dtype=np.float32)
    dU = np.zeros((nb, g, J, d), dtype=np.float32)
    loss = _logistic_pairs(hid, att, out_vec, rows, labels, weights, lr, Ec, dU)
    _apply_out(out_vec, rows, weights, uses_c, dU, cap, counts)
    E = np.zeros((nb, L, d), dtype=np.float32)
    for b in range(nb):
        for t in range(L):
            for i in range(g):
                if mask[b, t, i]:
                    for k in range(d):
                        E[b, t, k] += Ec[b, i, k]
    _apply_in(in_vec, tokens, uses_t, E, cap, counts)
    return loss, n


@_jit
def _neg_slots(targets, cells, table):  # pragma: no cover - compiled
    """:meth:`~.heads.NegativeSampling.slots` from the drawn cells ``[nb, g, k]`` of the noise table."""
    nb, g, k = cells.shape
    rows = np.empty((nb, g, k + 1), dtype=np.int64)
    labels = np.zeros((nb, g, k + 1), dtype=np.float32)
    weights = np.ones((nb, g, k + 1), dtype=np.float32)
    for b in range(nb):
        for i in range(g):
            t = targets[b, i]
            rows[b, i, 0] = t
            labels[b, i, 0] = 1.0
            for j in range(k):
                w = table[cells[b, i, j]]
                rows[b, i, j + 1] = w
                if w == t:
                    weights[b, i, j + 1] = 0.0
    return rows, labels, weights


def resolve_kernel(kernel: str, model: torch.nn.Module, device: torch.device) -> bool:
    """Whether to use the compiled step: ``"auto"`` when numba is installed and the model, its
    output layer and device allow it (CPU, float32, NEG or HS); ``"numba"`` insists (clear
    error otherwise); ``"torch"`` never."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel == "torch":
        return False
    why = None
    if not AVAILABLE:
        why = "numba is not installed (pip install numba)"
    elif device.type != "cpu":
        why = f"the compiled step runs on the CPU, the model is on {device}"
    elif getattr(model, "arch", None) not in ("sg", "cbow") or model.head.kind not in ("neg", "hs"):
        why = "the compiled step covers skip-gram and CBOW with output 'neg' or 'hs'"
    elif model.in_vectors.dtype != torch.float32:
        why = "the compiled step needs float32 vectors"
    if why and kernel == "numba":
        raise ValueError(f"kernel='numba' cannot be used: {why}; use kernel='auto' or 'torch'")
    return why is None


def compiled_sgd_step(model: torch.nn.Module, batch, lr: float, cap: float | None = None) -> tuple[float, int]:
    """:meth:`~.model.Word2VecModel.sgd_step` by the compiled kernels; the same arguments and result."""
    import threading

    head = model.head
    if head.kind == "neg":  # the same draw as NegativeSampling.slots, without ~8 small torch ops
        cells = head.sampler.cells(*batch.targets.shape, head.negative)
        rows, labels, weights = _neg_slots(batch.targets.numpy(), cells.numpy(), head.sampler.table.numpy())
    else:
        slots = head.slots(batch.targets)
        rows, labels, weights = (s.contiguous().numpy() for s in slots)
        rows = rows.astype(np.int64, copy=False)
    tid = threading.get_ident()
    store = model.__dict__.setdefault("_compiled_counts", {})
    counts = store.get(tid)
    n_rows = max(model.in_vectors.shape[0], model.head.weight.shape[0])
    if counts is None or counts.shape[0] < n_rows:  # per thread: the cap's row counts
        counts = store[tid] = np.zeros(n_rows, dtype=np.float32)
    fn = _sg_step if model.arch == "sg" else _cbow_step
    loss, n = fn(
        model.in_vectors.detach().numpy(), model.head.weight.detach().numpy(), batch.tokens.numpy(),
        batch.mask.numpy(), rows, labels, weights,
        float(lr), float(cap) if cap is not None else -1.0, counts,
    )
    return float(loss) / max(1, n), int(n)


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels before a timed run."""
    if not AVAILABLE:
        return
    V, d = 3, 2
    vin, vout = np.zeros((V, d), np.float32), np.zeros((V, d), np.float32)
    tokens = np.zeros((1, 3), np.int64)
    mask = np.zeros((1, 3, 1), np.bool_)
    rows = np.zeros((1, 1, 2), np.int64)
    lab = np.zeros((1, 1, 2), np.float32)
    counts = np.zeros(V, np.float32)
    _sg_step(vin, vout, tokens, mask, rows, lab, lab, 0.1, 1.0, counts)
    _cbow_step(vin, vout, tokens, mask, rows, lab, lab, 0.1, 1.0, counts)
    _neg_slots(tokens[:, :1], rows, np.zeros(4, np.int32))
