"""Figures of chapter 12b: the two architectures side by side, and a few scenes with captions."""

from __future__ import annotations

import textwrap

from ..plot import DPI, HIGHLIGHT, PALETTE
from . import scenes as sc

TEXT_C, VIS_C, JOINT_C = PALETTE[0], PALETTE[2], "#f3e3d3"


def _box(ax, x, y, w, h, label, color, fontsize=8, text_color="black"):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=color,
                                edgecolor="#555555", lw=0.8))
    ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fontsize, color=text_color)


def _arrow(ax, x0, y0, x1, y1, color="#555555", style="-|>"):
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                arrowprops={"arrowstyle": style, "color": color, "lw": 1.0, "shrinkA": 0, "shrinkB": 0})


def draw_streams(axes=None):
    """Single stream (left): words and regions enter one Transformer. Two stream (right): each
    modality has its own layers, and co-attention layers exchange keys and values."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=DPI, layout="constrained")
    else:
        fig = axes[0].figure
    words = ["[CLS]", "a", "red", "circle", "…"]
    regs = ["r1", "r2", "r3"]
    ax = axes[0]
    for i, w in enumerate(words):
        _box(ax, 0.3 + i * 0.9, 0.2, 0.8, 0.5, w, TEXT_C, 7, "white")
    for i, r in enumerate(regs):
        _box(ax, 5.0 + i * 0.9, 0.2, 0.8, 0.5, r, VIS_C, 7, "white")
    for k in range(3):
        _box(ax, 0.3, 1.2 + k * 1.0, 7.4, 0.7, f"Transformer layer {k + 1}: every token attends "
             "to words and regions", JOINT_C, 7)
        _arrow(ax, 4.0, 0.9 + k * 1.0 if k else 0.75, 4.0, 1.2 + k * 1.0)
    ax.text(4.0, 4.45, "single stream (VisualBERT, VL-BERT, UNITER)", ha="center", fontsize=9,
            weight="bold")
    ax.text(4.0, 4.15, "heads: MLM on words, MRM on regions, ITM on [CLS]", ha="center", fontsize=7)
    ax.set_xlim(0, 8.0), ax.set_ylim(0, 4.7), ax.axis("off")

    ax = axes[1]
    for i, w in enumerate(words[:4]):
        _box(ax, 0.2 + i * 0.85, 0.2, 0.75, 0.5, w, TEXT_C, 7, "white")
    for i, r in enumerate(regs):
        _box(ax, 4.7 + i * 0.9, 0.2, 0.8, 0.5, r, VIS_C, 7, "white")
    for k in range(2):
        y = 1.1 + k * 1.5
        _box(ax, 0.2, y, 3.3, 0.5, "co-attention: Q text, K V image", "#d7ece4", 7)
        _box(ax, 4.7, y, 2.6, 0.5, "co-attention: Q image, K V text", "#e0dfef", 7)
        _box(ax, 0.2, y + 0.7, 3.3, 0.5, "self-attention + MLP (text)", "#d7ece4", 7)
        _box(ax, 4.7, y + 0.7, 2.6, 0.5, "self-attention + MLP (image)", "#e0dfef", 7)
        _arrow(ax, 3.6, y + 0.1, 4.6, y + 0.35, HIGHLIGHT, "<|-|>")
        ax.text(4.15, y - 0.1, "K, V", ha="center", fontsize=7, color=HIGHLIGHT)
        for x in (1.85, 6.0):
            _arrow(ax, x, y - 0.4 if k == 0 else y - 0.3, x, y)
            _arrow(ax, x, y + 0.5, x, y + 0.7)
    ax.text(3.9, 4.45, "two stream (ViLBERT, LXMERT)", ha="center", fontsize=9, weight="bold")
    ax.text(3.9, 4.15, "ITM on [CLS] ⊙ mean(regions)", ha="center", fontsize=7)
    ax.set_xlim(0, 7.8), ax.set_ylim(0, 4.7), ax.axis("off")
    return fig


def draw_scenes(batch: sc.SceneBatch, n: int = 4, axes=None):
    """The first ``n`` scenes of ``batch`` with their captions under them."""
    import matplotlib.pyplot as plt

    if not isinstance(n, int) or not 1 <= n <= len(batch):
        raise ValueError(f"n must be an int in 1..{len(batch)}, got {n!r}")
    if axes is None:
        fig, axes = plt.subplots(1, n, figsize=(2.4 * n, 2.9), dpi=DPI, layout="constrained")
    fig = axes[0].figure
    for i, ax in enumerate(axes):
        ax.imshow(batch.images[i].numpy(), interpolation="nearest")
        ax.set_title("\n".join(textwrap.wrap(batch.captions[i], 24)), fontsize=8)
        ax.set_xticks([]), ax.set_yticks([])
    return fig
