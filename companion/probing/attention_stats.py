"""What does BERT look at? Attention statistics per head (Clark, Khandelwal, Levy & Manning 2019).

For each layer and head, averaged over the query tokens of many sentences:

* the attention given to the **previous** / **next** token and to the token **itself**;
* the attention given to **[CLS]** and **[SEP]** (Clark et al. found heads that park most of
  their attention on [SEP], a "no-op" when the head's pattern does not apply);
* **syntactic heads**: how often the word a head attends to most is the word's head in the
  dependency tree -- compared with the best fixed offset (always attend to the word ``k``
  places away), the baseline Clark et al. use.

Attention between word pieces becomes attention between words as in the paper: attention *to*
a split word is the sum over its pieces, attention *from* it the mean over its pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

STATS = ("previous", "next", "self", "[CLS]", "[SEP]")


@dataclass
class Encoded:
    """One sentence through the model: ``weights`` ``[L, H, T, T]``; ``word_of_piece`` ``[T]``
    (``-1`` for [CLS]/[SEP]); ``n_words``."""

    weights: np.ndarray
    word_of_piece: list[int]
    n_words: int


@torch.no_grad()
def collect_attention(encoder, wordpiece, sentences: Sequence[Sequence[str]], max_len: int | None = None) -> list[Encoded]:
    """Attention weights of our BERT (``[CLS] pieces [SEP]``) for each sentence (a list of words),
    through the explicit attention (:func:`companion.transformer.blocks.attention_weights`)."""
    from ..transformer.blocks import attention_weights

    c = encoder.config
    max_len = max_len or c.max_len
    out = []
    for s in sentences:
        ids, wop = [c.cls_id], [-1]
        for i, w in enumerate(s):
            p = wordpiece.ids(w) or [c.unk_id]
            ids += p
            wop += [i] * len(p)
        ids.append(c.sep_id)
        wop.append(-1)
        if len(ids) > max_len:
            raise ValueError(f"a sentence of {len(s)} words has {len(ids)} pieces, more than max_len={max_len}; "
                             f"leave long sentences out")
        dev = next(encoder.parameters()).device
        w = attention_weights(encoder, torch.tensor([ids], device=dev))
        out.append(Encoded(torch.stack([x[0] for x in w]).cpu().numpy(), wop, len(s)))
    return out


def word_attention(weights: np.ndarray, word_of_piece: Sequence[int], n_words: int) -> np.ndarray:
    """``[..., T, T]`` piece attention -> ``[..., n_words, n_words]`` word attention (sum over the
    pieces attended to, mean over the pieces attending); special tokens (``-1``) are dropped."""
    wop = np.asarray(word_of_piece)
    if weights.shape[-1] != len(wop):
        raise ValueError(f"weights cover {weights.shape[-1]} pieces but word_of_piece has {len(wop)}")
    to = np.zeros((len(wop), n_words))
    to[np.arange(len(wop))[wop >= 0], wop[wop >= 0]] = 1.0       # piece -> word, summed
    frm = to.T / np.maximum(to.sum(0), 1)[:, None]               # word <- mean of its pieces
    return frm @ weights @ to


def head_statistics(encoded: Sequence[Encoded]) -> dict[str, np.ndarray]:
    """Mean attention ``[L, H]`` to the previous / next piece, itself, [CLS] and [SEP], over every
    query piece of every sentence (specials included as queries, as in Clark et al.)."""
    sums = {k: 0.0 for k in STATS}
    n = 0
    for e in encoded:
        w = e.weights
        T = w.shape[-1]
        idx = np.arange(T)
        sums["previous"] = sums["previous"] + w[..., idx[1:], idx[1:] - 1].sum(-1)
        sums["next"] = sums["next"] + w[..., idx[:-1], idx[:-1] + 1].sum(-1)
        sums["self"] = sums["self"] + w[..., idx, idx].sum(-1)
        sums["[CLS]"] = sums["[CLS]"] + w[..., :, 0].sum(-1)
        sums["[SEP]"] = sums["[SEP]"] + w[..., :, T - 1].sum(-1)
        n += T
    if n == 0:
        raise ValueError("no sentences to average over")
    return {k: v / n for k, v in sums.items()}


def syntactic_head_accuracy(encoded: Sequence[Encoded], heads: Sequence[Sequence[int]],
                            keep: Sequence[Sequence[bool]] | None = None) -> np.ndarray:
    """``[L, H]``: the share of words (with a head, and kept) whose most-attended *other* word
    is their dependency head."""
    right, total = 0.0, 0
    for k, (e, h) in enumerate(zip(encoded, heads)):
        if len(h) != e.n_words:
            raise ValueError(f"sentence {k}: {e.n_words} words but {len(h)} heads")
        wa = word_attention(e.weights, e.word_of_piece, e.n_words).copy()
        idx = np.arange(e.n_words)
        wa[..., idx, idx] = -np.inf                                # a word is not its own head
        guess = wa.argmax(-1)                                      # [L, H, n]
        h = np.asarray(h)
        ok = (h >= 0) if keep is None else (h >= 0) & np.asarray(keep[k], bool)
        right = right + (guess[..., ok] == h[ok]).sum(-1)
        total += int(ok.sum())
    return right / max(total, 1)


def best_offset_baseline(heads: Sequence[Sequence[int]], keep: Sequence[Sequence[bool]] | None = None,
                         offsets: range = range(-5, 6)) -> tuple[int, float]:
    """The fixed offset ``k`` (head = word ``i + k``) right most often, and its accuracy."""
    best = (0, -1.0)
    for k in offsets:
        if k == 0:
            continue
        right = total = 0
        for j, h in enumerate(heads):
            h = np.asarray(h)
            ok = (h >= 0) if keep is None else (h >= 0) & np.asarray(keep[j], bool)
            right += int((h[ok] == np.arange(len(h))[ok] + k).sum())
            total += int(ok.sum())
        acc = right / max(total, 1)
        if acc > best[1]:
            best = (k, acc)
    return best


def draw_head_maps(stats: dict[str, np.ndarray], axes=None, cmap: str = "viridis"):
    """One heatmap per statistic: rows are layers (1 at the top), columns heads."""
    import matplotlib.pyplot as plt

    names = list(stats)
    if axes is None:
        _, axes = plt.subplots(1, len(names), figsize=(2.6 * len(names), 2.8), constrained_layout=True)
    axes = np.atleast_1d(axes)
    for ax, name in zip(axes, names):
        m = np.asarray(stats[name])
        im = ax.imshow(m, vmin=0, vmax=max(float(m.max()), 1e-9), cmap=cmap, aspect="auto")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("head")
        ax.set_xticks(range(m.shape[1]))
        ax.set_yticks(range(m.shape[0]), [str(i + 1) for i in range(m.shape[0])])
        plt.colorbar(im, ax=ax, fraction=0.05)
    axes[0].set_ylabel("layer")
    return axes
