# --- 08b ---
"""Reference solutions of chapter 8b's exercises (``companion/exercises/ch08b.py``)."""

import torch


def b_seq2seq_mask(T, src_len):
    """Causal, plus every query may see the whole source."""
    return torch.ones(T, T, dtype=torch.bool).tril() | (torch.arange(T) < src_len)


def b_infilled_length(n, ratio, lam):
    """Kept tokens plus one [MASK] per span; the spans (mean length lam) cover ratio * n tokens."""
    masked = round(ratio * n)
    return n - masked + masked / lam


def b_unrotate(rotated, k):
    """ids[0] sits at index len(rotated) - k of the rotated text."""
    n = len(rotated)
    return rotated[n - k:] + rotated[:n - k] if k else list(rotated)


def b_drop_corruption(ids, density, seed):
    """T5's span layout (companion.pretraining.t5), without sentinels: the noise spans leave the
    input and form the target, in order. (Wrapping it as an objective and comparing translation
    loss is left as the open part of the exercise; it was not measured here.)"""
    from companion.pretraining.t5 import random_segmentation, span_layout

    g = torch.Generator().manual_seed(seed)
    n_noise, n_spans = span_layout(len(ids), density)
    noise = random_segmentation(n_noise, n_spans, g)
    keep = random_segmentation(len(ids) - n_noise, n_spans, g)
    inp, tgt, pos = [], [], 0
    for a, b in zip(keep, noise):
        inp += ids[pos:pos + a]
        tgt += ids[pos + a:pos + a + b]
        pos += a + b
    return inp, tgt
