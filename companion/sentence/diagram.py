"""Chapter 5's model diagram: the family of sentence encoders, drawn by code (matplotlib only).

Five panels, each a small graph of boxes and arrows: PV-DBOW, PV-DM, Skip-thoughts,
Quick-thoughts and InferSent (and :data:`GENSEN`, drawn alone in its section). Blue boxes are what the model keeps as the sentence vector, grey
boxes inputs, white boxes what it predicts.
"""

from __future__ import annotations

__all__ = ["GENSEN", "PANELS", "draw_family"]

KEEP, INPUT, OUT = "#cfe2f3", "#eeeeee", "#ffffff"

# each panel: title, boxes {name: (x, y, label, colour)}, arrows [(from, to)], a caption
PANELS: list[tuple[str, dict[str, tuple[float, float, str, str]], list[tuple[str, str]], str]] = [
    ("PV-DBOW (Le & Mikolov 2014)",
     {"d": (0.5, 0.2, "paragraph\nvector $D_d$", KEEP),
      "w1": (0.15, 0.8, "$w_1$", OUT), "w2": (0.5, 0.8, "$w_2$", OUT), "w3": (0.85, 0.8, "$w_3$", OUT)},
     [("d", "w1"), ("d", "w2"), ("d", "w3")],
     "the paragraph predicts\nits words (skip-gram)"),
    ("PV-DM",
     {"d": (0.15, 0.2, "$D_d$", KEEP), "a": (0.5, 0.2, "$w_{t-1}$", INPUT), "b": (0.85, 0.2, "$w_{t+1}$", INPUT),
      "h": (0.5, 0.5, "mean", INPUT), "t": (0.5, 0.82, "$w_t$", OUT)},
     [("d", "h"), ("a", "h"), ("b", "h"), ("h", "t")],
     "paragraph + context words\npredict the centre (CBOW)"),
    ("Skip-thoughts (Kiros et al. 2015)",
     {"s": (0.5, 0.15, "GRU encoder\n$s_i$", INPUT), "h": (0.5, 0.45, "thought $h_i$", KEEP),
      "p": (0.18, 0.82, "GRU decoder\n$s_{i-1}$", OUT), "n": (0.82, 0.82, "GRU decoder\n$s_{i+1}$", OUT)},
     [("s", "h"), ("h", "p"), ("h", "n")],
     "generate both neighbours\nword by word"),
    ("Quick-thoughts (Logeswaran & Lee 2018)",
     {"f": (0.2, 0.2, "$f(s_i)$", KEEP), "g1": (0.8, 0.2, "$g(s_{i+1})$", KEEP),
      "g2": (0.8, 0.5, "$g(s_j)$, other\nsentences", INPUT),
      "c": (0.35, 0.82, "softmax over\nthe batch", OUT)},
     [("f", "c"), ("g1", "c"), ("g2", "c")],
     "pick the true neighbour\namong the batch"),
    ("InferSent (Conneau et al. 2017)",
     {"u": (0.2, 0.15, "BiLSTM-max\n$u$ (premise)", KEEP), "v": (0.8, 0.15, "BiLSTM-max\n$v$ (hypothesis)", KEEP),
      "x": (0.5, 0.5, "$[u, v, |u-v|, u*v]$", INPUT), "y": (0.5, 0.84, "entail / neutral /\ncontradict", OUT)},
     [("u", "x"), ("v", "x"), ("x", "y")],
     "one encoder, both sides;\na supervised NLI label"),
]

# GenSen-lite (Subramanian et al. 2018): one shared encoder, three task heads taking turns
GENSEN = (
    "GenSen-lite (after Subramanian et al. 2018)",
    {"s": (0.5, 0.12, "English sentence $s_i$", INPUT), "h": (0.5, 0.42, "shared GRU\nencoder $h_i$", KEEP),
     "n": (0.15, 0.82, "GRU decoder\n$s_{i+1}$", OUT), "e": (0.5, 0.82, "NLI classifier\n(SICK-E)", OUT),
     "t": (0.85, 0.82, "GRU decoder\nGerman $s_i$", OUT)},
    [("s", "h"), ("h", "n"), ("h", "e"), ("h", "t")],
    "one encoder, three tasks,\none batch of each in turn",
)


def draw_family(panels=None):
    """Draw the panels side by side; returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    panels = PANELS if panels is None else panels
    if not panels:
        raise ValueError("draw_family needs at least one panel")
    fig, axes = plt.subplots(1, len(panels), figsize=(3.1 * len(panels), 3.4))
    axes = [axes] if len(panels) == 1 else list(axes)
    for ax, (title, boxes, arrows, caption) in zip(axes, panels):
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.12, 1.02)
        ax.axis("off")
        ax.set_title(title, fontsize=9)
        for a, b in arrows:
            (xa, ya, *_), (xb, yb, *_) = boxes[a], boxes[b]
            ax.annotate("", xy=(xb, yb - 0.07), xytext=(xa, ya + 0.07),
                        arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 1.0})
        for x, y, label, colour in boxes.values():
            ax.text(x, y, label, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.3", "facecolor": colour, "edgecolor": "#333333"})
        ax.text(0.5, -0.08, caption, ha="center", va="center", fontsize=8, style="italic")
    fig.tight_layout()
    return fig
