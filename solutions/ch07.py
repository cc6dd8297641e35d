"""Reference solutions for chapter 7 (try the exercises first!). The top part answers 07a's
exercises; 07b's follow the ``# --- 07b ---`` marker, 07c's the ``# --- 07c ---`` one."""

from __future__ import annotations

import math

import torch

# =========================================================================== 07a


def score_std(d: int, sigma_q: float, sigma_k: float) -> float:
    """E[q . k] = 0; each product q_i k_i has variance E[q_i^2] E[k_i^2] = sigma_q^2 sigma_k^2,
    and the d products are independent, so Var(q . k) = d sigma_q^2 sigma_k^2. Dividing the score
    by sqrt(d) therefore gives unit variance whatever the head size (when sigma_q = sigma_k = 1)."""
    return math.sqrt(d) * sigma_q * sigma_k


def block_params(d_model: int, d_ff: int) -> int:
    """Attention 3d^2+3d (q/k/v) + d^2+d (output); MLP d*d_ff+d_ff + d_ff*d+d; two norms 2*2d.
    The heads only split the d columns into groups, so their number does not change the count.
    With d_ff = 4d the total is 12 d^2 + 13 d: 7,087,872 for BERT-base's d = 768."""
    attention = 4 * d_model * d_model + 4 * d_model
    mlp = 2 * d_model * d_ff + d_ff + d_model
    norms = 4 * d_model
    return attention + mlp + norms


def wordpiece(word: str, vocab: set[str]) -> list[str]:
    """Greedy longest match, left to right; one unmatched position makes the word [UNK]."""
    out: list[str] = []
    start = 0
    while start < len(word):
        for end in range(len(word), start, -1):
            candidate = ("##" if start else "") + word[start:end]
            if candidate in vocab:
                out.append(candidate)
                start = end
                break
        else:
            return ["[UNK]"]
    return out


def bpe_segment(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """The fix: a word of n symbols has n - 1 adjacent pairs, so the loop runs while
    i < len(symbols) - 1; the bug (``- 2``) never looked at the last pair."""
    symbols = list(word)
    for a, b in merges:
        i = 0
        while i < len(symbols) - 1:
            if symbols[i] == a and symbols[i + 1] == b:
                symbols[i : i + 2] = [a + b]
            i += 1
    return symbols


def alibi_bias(T: int, n_head: int) -> torch.Tensor:
    """ALiBi (Press, Smith & Lewis 2022): bias[h, i, j] = -m_h (i - j) for j <= i, -inf above,
    with m_h = 2^(-8 (h + 1) / n_head).

    Worked answer to step 2 (measured when this was written: max difference 6e-8)::

        import torch, torch.nn.functional as F
        from companion.transformer import scaled_dot_product_attention as ours
        q, k, v = torch.randn(3, 1, 4, 10, 16).unbind(0)
        bias = alibi_bias(10, 4)
        fused = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        scores = q @ k.transpose(-2, -1) / 16 ** 0.5 + bias
        explicit = scores.softmax(-1) @ v
        print((fused - explicit).abs().max())

    Step 3: the bias depends only on the distance i - j, which is defined for any length, and
    the penalty keeps far-away keys small, so nothing in the model is indexed by an absolute
    position it never saw; a learned table has no row for position 513 of a 512-position model.
    """
    i = torch.arange(T)
    dist = (i[:, None] - i[None, :]).float()
    slopes = 2.0 ** (-8.0 * torch.arange(1, n_head + 1) / n_head)
    bias = -slopes[:, None, None] * dist
    return bias.masked_fill(dist < 0, float("-inf"))


# --- 07b ---

import torch.nn.functional as F


def per_word_ppl(token_nll: float, n_tokens: int, n_words: int) -> float:
    """``exp(token_nll * n_tokens / n_words)``: the text's total NLL divided by its words."""
    return math.exp(token_nll * n_tokens / n_words)


def lm_shift(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """Position t predicts token t + 1: drop the last logits and the first target."""
    V = logits.shape[-1]
    return float(F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)))


def mlm_replace(ids, chosen, r, random_ids, mask_id):
    """One pass: [MASK] below 0.8, the random id below 0.9, else the token itself."""
    return [mask_id if c and u < 0.8 else (x if c and u < 0.9 else t)
            for t, c, u, x in zip(ids, chosen, r, random_ids)]



def kv_cache_bytes(n_layer, batch, T, d_model, bytes_per_value):
    """A key and a value of ``d_model`` numbers per layer, sequence and position."""
    return 2 * n_layer * batch * T * d_model * bytes_per_value

@torch.no_grad()
def sliding_ppl(gpt, ids, start_id, stride):
    """Windows of ``block_size`` ending at ``stride``, ``2 * stride``, ...; each scores its last
    ``stride`` targets. Measured on chapter 7b's laptop GPT (block 64, stride 16) this lowers the
    per-token NLL by a few percent at four times the forward passes."""
    B = gpt.config.block_size
    stream = [start_id, *ids]
    total, n = 0.0, 0
    for end in range(0, len(ids), stride):
        stop = min(end + stride, len(ids))
        lo = max(0, stop - B)
        x = torch.tensor(stream[lo:stop])[None]
        y = torch.tensor(stream[lo + 1:stop + 1])
        logits = gpt(x)[0]
        k = stop - end  # the new targets of this window
        total += float(F.cross_entropy(logits[-k:], y[-k:], reduction="sum"))
        n += k
    return total, n


# --- 07c ---


def c_paired_effect(a, b, gold) -> float:
    """Per seed and example, correct(a) - correct(b); the mean over both, in points."""
    import numpy as np

    g = np.asarray(gold)
    return float(np.mean([(np.asarray(x) == g).astype(float) - (np.asarray(y) == g) for x, y in zip(a, b)]) * 100)


def c_majority_accuracy(train_labels, test_labels) -> float:
    """The class is chosen from the training labels; the test labels only score it."""
    import numpy as np

    values, counts = np.unique(np.asarray(train_labels), return_counts=True)
    return float((np.asarray(test_labels) == values[np.argmax(counts)]).mean() * 100)


def c_unpaired_halfwidth(p: float = 0.7, n: int = 872) -> float:
    """1.96 standard errors of a difference of two independent accuracies ``p`` on ``n`` examples,
    in points: 1.96 * sqrt(2 p (1 - p) / n) * 100."""
    return round(1.96 * math.sqrt(2 * p * (1 - p) / n) * 100, 2)
