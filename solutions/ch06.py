# --- 06b ---
# Chapter 6b (CoVe, ELMo, TagLM): reference solutions of the ch06.b_* exercises. This block is
# appended below 06a's part of the file; it imports what it needs itself (no __future__ import,
# which would have to be the file's first statement).
from collections import Counter as _Counter

import numpy as _np
import torch as _torch


def b_scalar_mix(layers, s, gamma):
    """gamma * sum_j softmax(s)_j layers[j]; torch.softmax subtracts the maximum score first, so
    scores of +-40 do not overflow."""
    w = _torch.softmax(s, dim=0)
    return gamma * (w.view(-1, *([1] * (layers.dim() - 1))) * layers).sum(0)


def b_ngram_precision(hypothesis, reference, n):
    """The fix: each n-gram is credited at most as often as it occurs in the reference
    (clipping), so 'the' x 7 against 'the cat is on the mat' scores 2/7, not 7/7."""
    hyp = _Counter(tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1))
    ref = _Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
    total = sum(hyp.values())
    if total == 0:
        return 0.0
    return sum(min(c, ref[g]) for g, c in hyp.items()) / total


def b_lstmp_params(d, cells):
    """Gates: 4 cells x (d inputs + d recurrent) weights and 2 x 4 cells biases; projection
    d x cells. ELMo's d = 512, cells = 4096: 4096 * (8 * 512 + 8) + 512 * 4096 = 18,907,136 per
    layer and direction; a plain LSTM with a 4096-wide state would need
    4 * 4096 * (512 + 4096) + 8 * 4096 = 75,530,240, four times as many."""
    return 4 * cells * (d + d) + 8 * cells + d * cells


def b_self_similarity(vectors):
    """Mean cosine over the pairs i < j of rows. Worked answer (laptop scale, our tiny biLM): see
    the chapter's text; layer 0 is 1.0 by construction, and a random-pairs baseline at the same
    layer is needed because every layer of a small LM is anisotropic -- all its vectors share a
    common direction, so even unrelated words have a clearly positive mean cosine."""
    v = _np.asarray(vectors, dtype=_np.float64)
    v = v / _np.linalg.norm(v, axis=1, keepdims=True)
    g = v @ v.T
    i, j = _np.triu_indices(len(v), k=1)
    return float(g[i, j].mean())
