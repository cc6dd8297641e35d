"""Chapter 6b's figures, drawn by code: the biLM's architecture, the scalar-mix weights each task
learned, a "same word, different contexts" map, and CoVe's attention.

    draw_bilm(ax)                                   # ELMo's biLM, bottom to top
    plot_mix_weights(ax, {"NER": w1, "chunks": w2}) # softmax(s) per task
    occurrences(sentences, ["bank", "play"])        # (sentence, position, word) triples
    plot_context_map(ax, points, labels)            # 2-D PCA of contextual vectors
    plot_attention(ax, alpha, source, target)       # one translation's attention
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..plot import _figure_and_axes, _plt

COLORS = {"token": "#e8f1fa", "lstm": "#fde0c5", "mix": "#d9f0d3", "out": "#e7d4e8"}


def _box(ax, x, y, w, h, text, kind, fontsize=8):
    plt = _plt()
    ax.add_patch(plt.Rectangle((x - w / 2, y - h / 2), w, h, facecolor=COLORS[kind], edgecolor="#444444",
                               linewidth=0.8))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, x0, y0, x1, y1, **kw):
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                arrowprops={"arrowstyle": "->", "color": kw.get("color", "#444444"), "lw": 0.8,
                            "connectionstyle": kw.get("conn", "arc3")})


def draw_bilm(ax=None, words: Sequence[str] = ("<S>", "the", "bank", "rose", "</S>")):
    """ELMo's biLM for one sentence: characters -> char-CNN + highway + projection (layer 0) ->
    two LSTM layers per direction (the second with a residual connection, dashed) -> one softmax
    shared by both directions; and the task's scalar mix of layers 0-2 at one position."""
    fig, ax = _figure_and_axes(ax, (9.0, 5.4))
    n = len(words)
    xs = np.arange(n) * 1.7
    ax.set_xlim(-1.2, xs[-1] + 4.2)
    ax.set_ylim(-0.7, 6.1)
    ax.axis("off")
    for x, w in zip(xs, words):
        ax.text(x, -0.35, w, ha="center", va="center", fontsize=9, family="monospace")
        _box(ax, x, 0.6, 1.35, 0.75, "char-CNN\nhighway, proj", "token", 7)
        _arrow(ax, x, -0.15, x, 0.22)
        for row, y in enumerate((1.9, 3.2)):
            _box(ax, x - 0.33, y, 0.6, 0.6, f"→{row + 1}", "lstm")
            _box(ax, x + 0.33, y, 0.6, 0.6, f"←{row + 1}", "lstm")
            below = 0.98 if row == 0 else 2.5
            for dx in (-0.33, 0.33):
                _arrow(ax, x + dx, below, x + dx, y - 0.3)
        ax.plot([x - 0.33, x - 0.72, x - 0.72, x - 0.62], [2.2, 2.45, 3.52, 3.52], color="#888888", lw=0.8)
        _arrow(ax, x - 0.72, 3.52, x - 0.36, 3.52, color="#888888")  # residual: h2 = LSTM(h1) + h1
        _box(ax, x, 4.55, 1.35, 0.6, "softmax\n(shared)", "out", 7)
        _arrow(ax, x, 3.5, x, 4.25)
    for i in range(n - 1):  # the recurrences
        for y in (1.9, 3.2):
            _arrow(ax, xs[i] - 0.03, y + 0.12, xs[i + 1] - 0.63, y + 0.12, color="#c0504d")
            _arrow(ax, xs[i + 1] + 0.03, y - 0.12, xs[i] + 0.63, y - 0.12, color="#4f81bd")
    k = 2 if n > 2 else 0
    mx = xs[-1] + 2.6
    _box(ax, mx, 2.6, 1.9, 1.3, "ELMo$_k$ = γ Σ$_j$ s$_j$ h$_{k,j}$\n(softmax-normalised s,\nlearned by the task)",
         "mix", 7)
    for y, label in ((0.6, "h$_{k,0}$"), (1.9, "h$_{k,1}$"), (3.2, "h$_{k,2}$")):
        _arrow(ax, xs[k] + 0.7, y, mx - 0.95, 2.6, color="#6a9f58", conn="arc3,rad=-0.1")
        ax.text(xs[k] + 0.8, y + 0.22, label, fontsize=7, color="#3d6b33")
    ax.text(xs[0] - 1.1, 5.7, "forward LM (red, →) predicts the next word; backward LM (blue, ←) the previous "
            "one;\ngrey: the residual connection around the second layer", fontsize=8, va="top")
    return fig


def plot_mix_weights(ax, weights: Mapping[str, np.ndarray], layer_names: Sequence[str] = ("0: char-CNN",
                     "1: LSTM 1", "2: LSTM 2")):
    """Grouped bars: each task's softmax-normalised layer weights."""
    fig, ax = _figure_and_axes(ax, (6.0, 3.2))
    if not weights:
        raise ValueError("no weights to plot: give {task: softmax(s)}")
    width = 0.8 / len(weights)
    for i, (task, w) in enumerate(weights.items()):
        w = np.asarray(w, dtype=float)
        ax.bar(np.arange(len(w)) + (i - (len(weights) - 1) / 2) * width, w, width, label=task)
    ax.axhline(1 / len(layer_names), color="#888888", lw=0.8, ls="--")
    ax.set_xticks(range(len(layer_names)), layer_names)
    ax.set_ylabel("softmax(s)$_j$")
    ax.legend(fontsize=8)
    return fig


def occurrences(sentences: Sequence[Sequence[str]], targets: Sequence[str], per_word: int,
                seed: int = 0) -> list[tuple[int, int, str]]:
    """Up to ``per_word`` ``(sentence index, position, word)`` occurrences of each target
    (lower-cased match), drawn at random with ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for t in targets:
        found = [(i, j, t) for i, s in enumerate(sentences) for j, w in enumerate(s) if w.lower() == t]
        if not found:
            raise ValueError(f"{t!r} does not occur in the sentences; pick another word or more text")
        keep = rng.permutation(len(found))[:per_word]
        out += [found[k] for k in sorted(keep)]
    return out


def context_notes(sentences: Sequence[Sequence[str]], occ: Sequence[tuple[int, int, str]], every: int = 6,
                  width: int = 2) -> list[str]:
    """A short context ("... w ...") for every ``every``-th occurrence, "" for the others."""
    return [" ".join(sentences[i][max(0, j - width): j + width]) if k % every == 0 else ""
            for k, (i, j, _) in enumerate(occ)]


def pca_2d(x: np.ndarray) -> np.ndarray:
    """The first two principal components of the rows of ``x`` (centred; sign fixed)."""
    x = np.asarray(x, dtype=np.float64)
    x = x - x.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    vt = vt[:2]
    signs = np.sign(vt[np.arange(2), np.abs(vt).argmax(1)])  # largest loading positive
    return x @ (vt * signs[:, None]).T


def plot_context_map(ax, points: np.ndarray, words: Sequence[str], notes: Sequence[str] = (), title: str = ""):
    """Scatter 2-D points coloured by word, with a few short context notes."""
    fig, ax = _figure_and_axes(ax, (6.0, 4.6))
    words = list(words)
    for w in dict.fromkeys(words):
        idx = [i for i, x in enumerate(words) if x == w]
        ax.scatter(points[idx, 0], points[idx, 1], s=22, label=w, alpha=0.8)
    for i, note in enumerate(notes):
        if note:
            ax.annotate(note, points[i], fontsize=6.5, alpha=0.85, xytext=(3, 3), textcoords="offset points")
    ax.set(xlabel="PC 1", ylabel="PC 2", title=title)
    ax.legend(fontsize=8)
    return fig


def plot_attention(ax, alpha: np.ndarray, source: Sequence[str], target: Sequence[str]):
    """A heat map of one translation's attention (rows: target words, columns: source words)."""
    fig, ax = _figure_and_axes(ax, (6.0, 4.6))
    alpha = np.asarray(alpha)[: len(target), : len(source)]
    ax.imshow(alpha, cmap="Greys", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(source)), source, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(target)), target, fontsize=8)
    ax.set_xlabel("English (encoder states)")
    ax.set_ylabel("German (decoder steps)")
    return fig


__all__ = ["context_notes", "draw_bilm", "occurrences", "pca_2d", "plot_attention", "plot_context_map", "plot_mix_weights"]
