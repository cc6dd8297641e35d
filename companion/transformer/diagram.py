"""The chapter's diagram of the Transformer, drawn by code: one block stack per panel, boxes and
arrows in matplotlib, so the figure follows the package (post-LN vs pre-LN, causal vs
bidirectional attention) instead of being a pasted picture.

    fig = draw_transformers()                       # BERT's post-LN encoder next to GPT-2's pre-LN decoder
    fig = draw_stack(pre_ln=True, causal=True)      # one panel
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ..plot import _figure_and_axes, _plt

COLORS = {"embed": "#e8f1fa", "attn": "#fde0c5", "mlp": "#d9f0d3", "norm": "#eeeeee",
          "add": "#ffffff", "head": "#e7d4e8"}


@dataclass(frozen=True)
class Box:
    """One box of the diagram: its label, kind (a key of :data:`COLORS`) and vertical centre."""

    label: str
    kind: str
    y: float


def stack_boxes(pre_ln: bool, causal: bool) -> list[Box]:
    """The boxes of one block stack from the input (bottom) to the output (top).

    post-LN (Vaswani et al., BERT): attention -> add -> LN -> MLP -> add -> LN.
    pre-LN (GPT-2): LN -> attention -> add -> LN -> MLP -> add, and one LN after the last block.
    """
    attn = "masked multi-head\nattention (causal)" if causal else "multi-head attention\n(bidirectional)"
    inside = (["LayerNorm", attn, "add", "LayerNorm", "MLP (d_ff = 4d)", "add"] if pre_ln
              else [attn, "add", "LayerNorm", "MLP (d_ff = 4d)", "add", "LayerNorm"])
    kinds = {"LayerNorm": "norm", "add": "add", "MLP (d_ff = 4d)": "mlp"}
    labels = ["token + position\nembeddings", *inside]
    if pre_ln:
        labels.append("final LayerNorm")
    labels.append("LM head (tied)" if causal else "MLM / task head")
    boxes = []
    for i, lab in enumerate(labels):
        kind = "embed" if i == 0 else kinds.get(lab, "attn" if "attention" in lab else "norm")
        if i == len(labels) - 1:
            kind = "head"
        boxes.append(Box(lab, kind, float(i)))
    return boxes


def draw_stack(pre_ln: bool, causal: bool, *, title: str | None = None, ax=None):
    """Draw one stack: boxes bottom to top, the residual connections as arrows that skip each
    sub-layer, and a bracket marking the ``N x`` repeated block."""
    boxes = stack_boxes(pre_ln, causal)
    fig, ax = _figure_and_axes(ax, (3.4, 6.0))
    plt = _plt()
    ax.set_xlim(-1.6, 1.9)
    ax.set_ylim(-0.7, len(boxes) - 0.3)
    ax.axis("off")
    for b in boxes:
        h = 0.62 if "\n" in b.label else 0.42
        w = 0.5 if b.kind == "add" else 2.0
        ax.add_patch(plt.Rectangle((-w / 2, b.y - h / 2), w, h, facecolor=COLORS[b.kind],
                                   edgecolor="black", lw=0.8))
        ax.text(0, b.y, "+" if b.kind == "add" else b.label, ha="center", va="center",
                fontsize=11 if b.kind == "add" else 7)
    for lo, hi in pairwise(boxes):
        ax.annotate("", xy=(0, hi.y - 0.33), xytext=(0, lo.y + 0.33),
                    arrowprops={"arrowstyle": "->", "lw": 0.8})
    adds = [i for i, b in enumerate(boxes) if b.kind == "add"]
    for a in adds:  # the residual: from below the sub-layer it skips to the "+" box
        start = a - 2 if pre_ln else a - 1
        y0, y1 = boxes[start].y - 0.45, boxes[a].y
        ax.plot([0, 1.25, 1.25], [y0, y0, y1], color="#1b6ca8", lw=1)
        ax.annotate("", xy=(0.27, y1), xytext=(1.25, y1),
                    arrowprops={"arrowstyle": "->", "color": "#1b6ca8", "lw": 1})
    first, last = 1, (adds[-1] if pre_ln else adds[-1] + 1)
    ax.plot([-1.15, -1.3, -1.3, -1.15], [boxes[first].y - 0.4, boxes[first].y - 0.4,
                                         boxes[last].y + 0.4, boxes[last].y + 0.4], color="black", lw=1)
    ax.text(-1.4, (boxes[first].y + boxes[last].y) / 2, "N ×", ha="right", va="center", fontsize=10)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def draw_transformers():
    """The chapter's figure: BERT's post-LN bidirectional encoder next to GPT-2's pre-LN causal
    decoder (the original Transformer's decoder adds cross-attention; 07b uses these two)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 6.2), dpi=80)
    draw_stack(False, False, title="BERT: post-LN encoder", ax=axes[0])
    draw_stack(True, True, title="GPT-2: pre-LN decoder", ax=axes[1])
    fig.tight_layout()
    return fig


__all__ = ["COLORS", "Box", "draw_stack", "draw_transformers", "stack_boxes"]
