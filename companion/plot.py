"""Small matplotlib helpers the chapters share.

Every function draws one small figure (dpi 80, so notebooks stay light), is deterministic, and
returns the :class:`~matplotlib.figure.Figure` (``zipf_plot`` also returns the fitted slope).
Pass ``ax=`` to draw into an existing axes instead. In a notebook, end the cell with ``;`` or
assign the result, so the figure is shown once.

* :func:`timeline` -- the book's running figure: the history strip, one chapter highlighted;
* :func:`loss_curves`, :func:`embedding_scatter` (2-D PCA by :func:`pca_2d`), :func:`zipf_plot`,
  :func:`heatmap`;
* :func:`mass_diagram`, :func:`span_corruption_diagram` -- token-level diagrams of chapter 8b's
  objectives.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

DPI = 80
HIGHLIGHT = "#d95f02"
MUTED = "#9e9e9e"
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


def _plt():
    import matplotlib.pyplot as plt  # imported lazily: importing companion never loads pyplot

    return plt


def _figure_and_axes(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    fig, ax = _plt().subplots(figsize=figsize, dpi=DPI, layout="constrained")
    return fig, ax


# ----------------------------------------------------------------------------- the timeline


@dataclass(frozen=True)
class Era:
    """One stop on the book's timeline."""

    chapter: int
    years: str
    title: str
    detail: str


# The order of the seeds' main post (000): SLM, NNLM, word2vec, GloVe, fastText, sentence
# embeddings, dynamic (contextual) embeddings, GPT/BERT, the PLM era, fine-tuning and prompting;
# the book closes with probing what the models learned.
TIMELINE: tuple[Era, ...] = (
    Era(1, "1970s–", "statistical LMs", "n-grams, smoothing, count vectors, LSA, pLSA, LDA, MinHash"),
    Era(2, "2003", "NNLM", "Bengio et al.: a neural LM learns word vectors"),
    Era(3, "2013", "word2vec", "CBOW, skip-gram, negative sampling"),
    Era(4, "2014", "GloVe", "global co-occurrence counts, log-bilinear"),
    Era(4, "2016", "fastText", "subword n-grams"),
    Era(5, "2014–18", "sentence embeddings", "doc2vec, skip-thought, InferSent, quick-thoughts"),
    Era(6, "2016–18", "contextual", "context2vec, CoVe, ELMo, ULMFiT"),
    Era(7, "2018", "GPT, BERT", "Transformers pre-trained as LMs / masked LMs"),
    Era(8, "2019–20", "PLM family", "XLNet, RoBERTa, ALBERT, ELECTRA, T5, BART"),
    Era(9, "2019–22", "compression & scale", "distillation, pruning, quantisation, scaling laws"),
    Era(10, "2019–21", "fine-tuning & prompting", "adapters, LoRA, GPT-3, PET, prompt tuning"),
    Era(11, "2019–", "probing", "what do the vectors know?"),
    Era(12, "2019–21", "knowledge", "ERNIE, KnowBERT, K-BERT, KEPLER: knowledge graphs in PLMs"),
    Era(12, "2019–20", "multimodal", "VideoBERT, ViLBERT, LXMERT, VisualBERT, UNITER"),
)
CHAPTERS = tuple(sorted({e.chapter for e in TIMELINE}))


def timeline(highlight: int | None = None, *, ax=None, show_detail: bool = False):
    """The book's running figure: the history as a strip of boxes, chapter ``highlight`` in colour.

    Args:
        highlight: a chapter number 1..12 (``None``: nothing highlighted).
        show_detail: print each era's models under its box.
    """
    if highlight is not None and (isinstance(highlight, bool) or highlight not in CHAPTERS):
        raise ValueError(f"highlight must be a chapter number in {CHAPTERS[0]}..{CHAPTERS[-1]} or None, got {highlight!r}")
    n = len(TIMELINE)
    fig, ax = _figure_and_axes(ax, (11.5, 2.5 if show_detail else 1.6))
    ax.set_xlim(-0.05, n - 0.05)
    ax.set_ylim(-1.3 if show_detail else -0.75, 0.75)
    ax.axis("off")
    ax.plot([0, n - 0.1], [0, 0], color=MUTED, lw=1, zorder=0)
    for i, era in enumerate(TIMELINE):
        on = era.chapter == highlight
        color = HIGHLIGHT if on else ("#eeeeee" if highlight is not None else "#e8f1fa")
        ax.add_patch(_plt().Rectangle((i, -0.33), 0.9, 0.66, facecolor=color,
                                      edgecolor="black" if on else MUTED, lw=1.5 if on else 0.8))
        ax.text(i + 0.45, 0.0, "\n".join(textwrap.wrap(era.title, 12)), ha="center", va="center",
                fontsize=8, weight="bold" if on else "normal", color="white" if on else "black")
        ax.text(i + 0.45, 0.5, era.years, ha="center", va="bottom", fontsize=8)
        ax.text(i + 0.45, -0.5, f"ch {era.chapter}", ha="center", va="top", fontsize=8,
                weight="bold" if on else "normal", color=HIGHLIGHT if on else "black")
        if show_detail:
            ax.text(i + 0.45, -0.75, "\n".join(textwrap.wrap(era.detail, 16)), ha="center", va="top",
                    fontsize=6, color="#444444")
    return fig


# ----------------------------------------------------------------------------- training


def loss_curves(histories: Any, *, metric: str = "val_loss", smooth: int = 1, log: bool = False,
                title: str | None = None, ax=None):
    """Training loss per step (and ``metric`` from the evaluations, dashed) for one or more runs.

    Args:
        histories: a ``History``, a list of losses, or a dict name -> either of those.
        metric: key of ``History.evals`` to draw at its step (skipped where absent).
        smooth: moving-average window over steps (1: raw).
        log: logarithmic y axis.
    """
    if not isinstance(smooth, int) or smooth < 1:
        raise ValueError(f"smooth must be a positive int, got {smooth!r}")
    if not isinstance(histories, Mapping):
        histories = {"": histories}
    if not histories:
        raise ValueError("loss_curves needs at least one history")
    fig, ax = _figure_and_axes(ax, (6, 3.2))
    for k, (name, h) in enumerate(histories.items()):
        color = PALETTE[k % len(PALETTE)]
        steps_loss = list(getattr(h, "step_loss", h))
        if not steps_loss or not all(isinstance(v, (int, float)) for v in steps_loss):
            raise ValueError(f"history {name!r} holds no step losses (a History or a list of floats)")
        y = np.asarray(steps_loss, dtype=float)
        if smooth > 1 and y.size >= smooth:
            y = np.convolve(y, np.ones(smooth) / smooth, mode="valid")
            x = np.arange(smooth, smooth + y.size)
        else:
            x = np.arange(1, y.size + 1)
        ax.plot(x, y, color=color, lw=1.2, label=f"{name} train".strip())
        evals = [e for e in getattr(h, "evals", []) if metric in e]
        if evals:
            ax.plot([e.get("step", i + 1) for i, e in enumerate(evals)], [e[metric] for e in evals],
                    color=color, ls="--", marker="o", ms=3, label=f"{name} {metric}".strip())
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    if log:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


# ----------------------------------------------------------------------------- embeddings


def pca_2d(vectors: Any) -> np.ndarray:
    """Project rows onto their first two principal components (exact SVD, deterministic signs).

    Each component's sign is fixed so that its largest-magnitude loading is positive; the same
    input therefore gives the same picture on every machine.
    """
    x = torch.as_tensor(np.asarray(vectors, dtype=np.float64) if not isinstance(vectors, torch.Tensor)
                        else vectors.detach().double().cpu())
    if x.dim() != 2 or x.shape[0] < 2:
        raise ValueError(f"pca_2d needs a [n >= 2, d] matrix, got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("pca_2d got NaN or inf")
    x = x - x.mean(dim=0, keepdim=True)
    _, _, vh = torch.linalg.svd(x, full_matrices=False)
    comps = vh[:2]
    if comps.shape[0] < 2:  # a single dimension: pad with zeros
        comps = torch.cat([comps, torch.zeros(1, x.shape[1], dtype=x.dtype)])
    idx = comps.abs().argmax(dim=1)
    signs = torch.sign(comps[torch.arange(comps.shape[0]), idx])
    signs[signs == 0] = 1
    return (x @ (comps * signs[:, None]).T).numpy()


def _rows_for(words: Sequence[str], index: Any) -> list[int]:
    stoi = index if isinstance(index, Mapping) else getattr(index, "stoi", None)
    if not isinstance(stoi, Mapping):
        raise TypeError("index must be a dict word -> row or a Vocab (with .stoi)")
    missing = [w for w in words if w not in stoi]
    if missing:
        raise KeyError(f"not in the index: {missing[:10]}")
    return [int(stoi[w]) for w in words]


def embedding_scatter(vectors: Any, words: Sequence[str], *, index: Any = None,
                      arrows: Sequence[tuple[str, str]] = (), highlight: Sequence[str] = (),
                      title: str | None = None, ax=None):
    """Scatter ``words`` in the 2-D PCA of their vectors, labelled, with optional arrows.

    Args:
        vectors: [len(words), d] -- or the full [V, d] matrix when ``index`` is given.
        words: the words to draw.
        index: a dict word -> row or a Vocab, to pick the words' rows out of ``vectors``.
        arrows: pairs ``(from_word, to_word)`` drawn as arrows, e.g. ``[("man", "woman"),
            ("king", "queen")]`` for an analogy.
        highlight: words drawn in the highlight colour.
    """
    words = list(words)
    if len(words) < 2:
        raise ValueError("embedding_scatter needs at least two words")
    mat = vectors.detach().cpu().numpy() if isinstance(vectors, torch.Tensor) else np.asarray(vectors)
    if index is not None:
        mat = mat[_rows_for(words, index)]
    if mat.ndim != 2 or mat.shape[0] != len(words):
        raise ValueError(f"got {len(words)} words but vectors of shape {mat.shape}; pass index= to pick rows")
    pts = pca_2d(mat)
    pos = {w: pts[i] for i, w in enumerate(words)}
    for a, b in arrows:
        if a not in pos or b not in pos:
            raise ValueError(f"arrow ({a!r}, {b!r}) names a word that is not among the words drawn")
    hl = set(highlight)
    fig, ax = _figure_and_axes(ax, (5.5, 4.5))
    colors = [HIGHLIGHT if w in hl else PALETTE[2] for w in words]
    ax.scatter(pts[:, 0], pts[:, 1], s=14, c=colors, zorder=2)
    for w, (x, y) in pos.items():
        ax.annotate(w, (x, y), xytext=(3, 3), textcoords="offset points", fontsize=8,
                    color=HIGHLIGHT if w in hl else "black")
    for a, b in arrows:
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="->", color=MUTED, lw=1.0, shrinkA=3, shrinkB=3))
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    return fig


# ----------------------------------------------------------------------------- corpora


def _frequencies(counts: Any) -> np.ndarray:
    if isinstance(counts, Mapping):
        values = list(counts.values())
    elif isinstance(counts, (Sequence, np.ndarray)) and not isinstance(counts, str):
        values = list(counts)
    else:
        raise TypeError("counts must be a Counter/dict word -> count or a sequence of counts")
    freq = np.asarray(values, dtype=float)
    if freq.size < 2 or (freq < 0).any() or not np.isfinite(freq).all():
        raise ValueError("counts must hold at least two finite, non-negative counts")
    freq = np.sort(freq[freq > 0])[::-1]
    if freq.size < 2:
        raise ValueError("counts must hold at least two positive counts")
    return freq


def zipf_slope(counts: Any, fit_range: tuple[int, int] | None = None) -> float:
    """Least-squares slope of log frequency against log rank (Zipf's law predicts about −1).

    Args:
        counts: a Counter/dict word -> count, or a sequence of counts.
        fit_range: ``(first_rank, last_rank)`` (1-based, inclusive) to fit; ``None``: all ranks.
    """
    freq = _frequencies(counts)
    ranks = np.arange(1, freq.size + 1)
    lo, hi = fit_range if fit_range is not None else (1, freq.size)
    if not (1 <= lo < hi):
        raise ValueError(f"fit_range must be (first, last) with 1 <= first < last, got {fit_range!r}")
    sel = slice(lo - 1, min(hi, freq.size))
    if freq[sel].size < 2:
        raise ValueError(f"fit_range {fit_range!r} selects fewer than two ranks of {freq.size}")
    slope, _ = np.polyfit(np.log10(ranks[sel]), np.log10(freq[sel]), 1)
    return float(slope)


def zipf_plot(counts: Any, *, fit_range: tuple[int, int] | None = None, title: str | None = None, ax=None):
    """Log-log rank/frequency plot with the fitted power law; returns ``(figure, slope)``."""
    freq = _frequencies(counts)
    slope = zipf_slope(freq, fit_range)
    ranks = np.arange(1, freq.size + 1)
    lo, hi = fit_range if fit_range is not None else (1, freq.size)
    hi = min(hi, freq.size)
    sel = slice(lo - 1, hi)
    intercept = float(np.mean(np.log10(freq[sel]) - slope * np.log10(ranks[sel])))
    fig, ax = _figure_and_axes(ax, (5, 3.6))
    ax.loglog(ranks, freq, ".", ms=3, color=PALETTE[2], label="words")
    fit_x = np.array([lo, hi], dtype=float)
    ax.loglog(fit_x, 10 ** (intercept + slope * np.log10(fit_x)), "-", color=HIGHLIGHT,
              label=f"fit: slope {slope:.2f}")
    ax.set_xlabel("rank")
    ax.set_ylabel("frequency")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig, slope


# ----------------------------------------------------------------------------- matrices


def heatmap(matrix: Any, row_labels: Sequence[str], col_labels: Sequence[str], *,
            annotate: bool | None = None, fmt: str = ".2f", cmap: str = "viridis",
            vmin: float | None = None, vmax: float | None = None, colorbar: bool = True,
            title: str | None = None, ax=None):
    """A labelled heatmap (similarity matrices, attention maps, confusion tables).

    Args:
        annotate: write each value in its cell (default: when the matrix is at most 12 x 12).
        fmt: format of the annotations.
    """
    m = matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    if len(row_labels) != m.shape[0] or len(col_labels) != m.shape[1]:
        raise ValueError(f"matrix is {m.shape[0]} x {m.shape[1]} but got {len(row_labels)} row and "
                         f"{len(col_labels)} column labels")
    if annotate is None:
        annotate = max(m.shape) <= 12
    fig, ax = _figure_and_axes(ax, (max(3.0, 0.45 * m.shape[1] + 1.6), max(2.5, 0.4 * m.shape[0] + 1.0)))
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(m.shape[1]), [str(c) for c in col_labels], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(m.shape[0]), [str(r) for r in row_labels], fontsize=8)
    if annotate:
        lo, hi = np.nanmin(m), np.nanmax(m)
        mid = (lo + hi) / 2
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                v = m[i, j]
                ax.text(j, i, "" if math.isnan(v) else format(v, fmt), ha="center", va="center", fontsize=7,
                        color="white" if v < mid else "black")
    if colorbar:
        fig.colorbar(im, ax=ax, shrink=0.8)
    if title:
        ax.set_title(title)
    return fig


# ----------------------------------------------------------------------------- token diagrams (ch. 8b)

_KEPT, _HIDDEN, _SPECIAL = "#f7f7f7", "#f4a582", "#d1e5f0"


def _token_row(ax, y: float, tokens: Sequence[str], colors: Sequence[str], label: str, x0: float = 0.0) -> None:
    """One labelled row of token boxes, left edge at ``x0``, centre line at ``y``."""
    for i, (tok, color) in enumerate(zip(tokens, colors)):
        ax.add_patch(_plt().Rectangle((x0 + i, y - 0.4), 0.94, 0.8, facecolor=color, edgecolor="0.6", lw=0.8))
        ax.text(x0 + i + 0.47, y, tok, ha="center", va="center", fontsize=8)
    ax.text(-0.3, y, label, ha="right", va="center", fontsize=8)


def mass_diagram(tokens: Sequence[str] = ("x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"),
                 start: int = 2, length: int = 4, *, mask: str = "[M]", ax=None):
    """MASS's input and output for one sentence (Song et al. 2019, their Figure 1).

    The encoder reads ``tokens`` with the fragment ``tokens[start:start + length]`` replaced by
    ``mask`` (the length kept); the decoder reads the fragment shifted right by one (a ``mask``
    first) and writes the fragment, so it predicts each fragment token from the fragment's
    earlier tokens and, through cross-attention, from what the encoder read.

    Args:
        tokens: the sentence, one string per token (at least 2).
        start: the fragment's first position, ``0 <= start``.
        length: the fragment's length, ``1 <= length`` and ``start + length <= len(tokens)``.
    """
    tokens = [str(t) for t in tokens]
    n = len(tokens)
    if n < 2:
        raise ValueError(f"mass_diagram needs at least 2 tokens, got {n}")
    if isinstance(start, bool) or not isinstance(start, int) or isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(f"start and length must be ints, got {start!r} and {length!r}")
    if start < 0 or length < 1 or start + length > n:
        raise ValueError(f"the fragment [start, start + length) = [{start}, {start + length}) must lie "
                         f"inside the {n} tokens, with length >= 1")
    frag = range(start, start + length)
    enc = [mask if i in frag else t for i, t in enumerate(tokens)]
    dec_in = [mask] + tokens[start:start + length - 1]
    fig, ax = _figure_and_axes(ax, (0.75 * n + 2.6, 2.6))
    _token_row(ax, 2.0, enc, [_HIDDEN if i in frag else _KEPT for i in range(n)], "encoder reads")
    _token_row(ax, 0.9, dec_in, [_SPECIAL] + [_KEPT] * (length - 1), "decoder reads", x0=start)
    _token_row(ax, -0.2, tokens[start:start + length], [_HIDDEN] * length, "decoder writes", x0=start)
    for i in range(length):  # each output under the input that predicts it
        ax.annotate("", (start + i + 0.47, 0.22), (start + i + 0.47, 0.48),
                    arrowprops={"arrowstyle": "->", "color": "0.4", "lw": 0.8})
    ax.annotate("cross-attention:\nthe decoder reads\nthe encoder's output", (start + length + 0.05, 0.9),
                (n + 0.2, 1.1), fontsize=8, color=HIGHLIGHT, ha="left", va="center",
                arrowprops={"arrowstyle": "->", "color": HIGHLIGHT, "lw": 1.5})
    ax.set_xlim(-3.2, n + 3.2)
    ax.set_ylim(-0.8, 2.6)
    ax.axis("off")
    ax.set_title(f"MASS: a fragment of {length} of {n} tokens is masked in the encoder and written by the decoder",
                 fontsize=9)
    return fig


T5_EXAMPLE = ("Thank", "you", "for", "inviting", "me", "to", "your", "party", "last", "week", ".")
T5_EXAMPLE_SPANS = ((2, 4), (8, 9))


def span_corruption_diagram(words: Sequence[str] = T5_EXAMPLE,
                            spans: Sequence[tuple[int, int]] = T5_EXAMPLE_SPANS, *,
                            sentinels: Sequence[str] = ("<X>", "<Y>", "<Z>", "<W>", "<V>"), ax=None):
    """T5's span corruption of one sentence (Raffel et al. 2020, their Figure 2).

    Each span ``(start, end)`` of ``words`` (end exclusive) becomes one sentinel in the input;
    the target lists each sentinel followed by the words it hides, and a last sentinel ends it.
    The default is the paper's example: "Thank you <X> me to your party <Y> week ." with the
    target "<X> for inviting <Y> last <Z>".

    Args:
        words: the sentence, one string per token.
        spans: sorted, non-overlapping, non-adjacent ``(start, end)`` pairs with ``start < end``.
        sentinels: at least ``len(spans) + 1`` distinct sentinel strings.
    """
    words = [str(w) for w in words]
    spans = [tuple(int(x) for x in s) for s in spans]
    if not spans:
        raise ValueError("span_corruption_diagram needs at least one span")
    last = -1
    for a, b in spans:
        if not 0 <= a < b <= len(words):
            raise ValueError(f"span ({a}, {b}) must satisfy 0 <= start < end <= {len(words)} (the number of words)")
        if a <= last:
            raise ValueError(f"spans must be sorted and separated by at least one kept word, got {spans}")
        last = b
    if len(sentinels) < len(spans) + 1:
        raise ValueError(f"{len(spans)} spans need {len(spans) + 1} sentinels, got {len(sentinels)}")
    hidden = {i for a, b in spans for i in range(a, b)}
    inp, inp_c, tgt, tgt_c, k = [], [], [], [], 0
    for i, w in enumerate(words):
        if i in hidden:
            if spans[k][0] == i:
                inp.append(sentinels[k])
                inp_c.append(_SPECIAL)
                tgt.append(sentinels[k])
                tgt_c.append(_SPECIAL)
            tgt.append(w)
            tgt_c.append(_HIDDEN)
            if spans[k][1] == i + 1:
                k += 1
        else:
            inp.append(w)
            inp_c.append(_KEPT)
    tgt.append(sentinels[len(spans)])
    tgt_c.append(_SPECIAL)
    width = max(len(words), len(tgt))
    fig, ax = _figure_and_axes(ax, (0.8 * width + 2.2, 2.5))
    _token_row(ax, 2.0, words, [_HIDDEN if i in hidden else _KEPT for i in range(len(words))], "original")
    _token_row(ax, 0.9, inp, inp_c, "input")
    _token_row(ax, -0.2, tgt, tgt_c, "target")
    ax.set_xlim(-2.2, width + 0.2)
    ax.set_ylim(-0.8, 2.6)
    ax.axis("off")
    ax.set_title("T5 span corruption: each dropped span becomes one sentinel; the target lists the spans",
                 fontsize=9)
    return fig


__all__ = ["T5_EXAMPLE", "T5_EXAMPLE_SPANS", "TIMELINE", "Era", "embedding_scatter", "heatmap", "loss_curves",
           "mass_diagram", "pca_2d", "span_corruption_diagram", "timeline", "zipf_plot", "zipf_slope"]
