"""Reference solutions for chapter 6 (try the exercises first!). The top part answers 06a's
exercises; 06b's follow the ``# --- 06b ---`` marker."""

from __future__ import annotations

import torch

# =========================================================================== 06a


def gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    """The update gate z decides how much of the old state survives (the LSTM's forget and input
    gates tied: 1 - z writes, z keeps); there is no output gate, the whole state is exposed."""
    xr, xz, xn = (x @ w_ih.T + b_ih).chunk(3, dim=-1)
    hr, hz, hn = (h @ w_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return (1 - z) * n + z * h


def awd_lm_params(V: int, E: int, H: int, L: int) -> int:
    """Layer n_in -> n_out: 4 n_out (n_in + n_out) weights + 8 n_out biases. Layers: (E, H),
    (L - 2) x (H, H), (H, E); plus V E (embedding = softmax weights) and V (softmax bias).
    At the paper's size (60,000, 400, 1,150, 3) that is 24.06M in the embedding and softmax bias
    and 20.2M in the LSTMs (10.6M of them in the middle 1,150 x 1,150 layer): the vocabulary
    holds more than half of the model."""

    def layer(n_in: int, n_out: int) -> int:
        return 4 * n_out * (n_in + n_out) + 8 * n_out

    lstm = layer(E, H) + (L - 2) * layer(H, H) + layer(H, E)
    return V * E + V + lstm


def locked_dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    """The bug: the mask had x's full shape [B, T, D] (a new mask at every step). One mask per
    sequence is [B, 1, D], broadcast over time."""
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand((x.shape[0], 1, x.shape[2]), generator=g) >= p
    return x * keep.to(x.dtype) / (1 - p)


def tied_lm(scale: str = "ci", seeds=(0, 1)) -> dict[str, float]:
    """Worked answer to ch06.tied_lm: the same plan for both models, two seeds, validation
    perplexity averaged. Tying removes |V| x d_out parameters (13,190 x 128 = 1.7M at the laptop
    size, more than the LSTM itself) and gives rare words' output vectors the gradient their
    input vectors get. At ci scale both models are barely trained; at laptop scale expect the
    tied model to be a little better or level, with a seed spread of a few perplexity points --
    run it to see which."""
    from dataclasses import replace

    from companion.contextual.lstm_lm import (
        LSTMLM,
        sentence_stream,
        stream_perplexity,
        train_lstm_lm,
    )
    from companion.contextual.recipes import lstm_preset
    from companion.data import bengio_split

    split = bengio_split()
    v = split.vocab
    train, valid = sentence_stream(split.train, v), sentence_stream(split.valid, v)
    cfg, plan = lstm_preset(len(v), scale=scale)
    out: dict[str, float] = {}
    for name, tie in (("untied", False), ("tied", True)):
        ppl = []
        for seed in seeds:
            c = replace(cfg, output="full", tie_weights=tie)
            m = LSTMLM(c, seed=seed)
            train_lstm_lm(m, train, valid, replace(plan, seed=seed), progress=False)
            ppl.append(stream_perplexity(m, valid[: plan.eval_tokens + 1]))
            out[f"{name}_params"] = m.num_parameters()
        out[f"{name}_ppl"] = sum(ppl) / len(ppl)
    return out


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


def b_sentence_bleu(hypothesis, reference):
    """Add-one smoothing for n = 2..4 (Lin & Och 2004; sacrebleu's smooth_method="add-k" with
    k = 1, which tests/test_contextual_cove.py checks this against). Unigrams stay unsmoothed,
    so a hypothesis with no word of the reference still scores 0."""
    import math

    if not hypothesis:
        return 0.0
    log_p = 0.0
    for n in range(1, 5):
        hyp = _Counter(tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1))
        ref = _Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
        match, total = sum(min(c, ref[g]) for g, c in hyp.items()), sum(hyp.values())
        if n > 1:
            match, total = match + 1, total + 1
        if match == 0:
            return 0.0
        log_p += math.log(match / total) / 4
    bp = min(1.0, math.exp(1 - len(reference) / len(hypothesis)))
    return 100 * bp * math.exp(log_p)
