"""Chapter 12a's model diagram: where each arm puts the knowledge graph into the BERT."""

from __future__ import annotations


def draw_arms(words: tuple[str, ...] = ("X", "was", "born", "in", "[MASK]")):
    """One sentence through the 2-layer BERT, with ERNIE's entity vector fused at X (left of the
    blocks), K-BERT's branch hanging from X (below it) and KEPLER's KE loss on X's own encoding
    (right). Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    if not words:
        raise ValueError("draw_arms needs at least one word")
    fig, ax = plt.subplots(figsize=(9.5, 4.2), dpi=80)
    ax.set_xlim(-3.2, len(words) + 3.4)
    ax.set_ylim(-1.6, 5.2)
    ax.axis("off")

    def box(x, y, w, h, text, color, size=9):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.04", facecolor=color,
                                    edgecolor="#555555", lw=0.8))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)

    def arrow(x0, y0, x1, y1, color="#555555"):
        ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="->", color=color, lw=1.2))

    n = len(words)
    for i, w in enumerate(words):
        box(i + 0.1, 0, 0.8, 0.5, w, "#f2f2f2")
        arrow(i + 0.5, 0.5, i + 0.5, 0.9)
    box(0.1, 0.9, n - 0.2, 0.6, "fusion (ERNIE): w' = LN(w + W_o GELU(W_t w + W_e e))", "#fde0c5", 8)
    box(0.1, 1.9, n - 0.2, 0.6, "Transformer block 1", "#dbe9f6")
    box(0.1, 2.9, n - 0.2, 0.6, "Transformer block 2", "#dbe9f6")
    box(n - 0.9, 3.9, 0.8, 0.5, "city?", "#e5f5e0")
    arrow(n / 2, 1.5, n / 2, 1.9)
    arrow(n / 2, 2.5, n / 2, 2.9)
    arrow(n - 0.5, 3.5, n - 0.5, 3.9)
    ax.text(n / 2 - 0.5, 4.15, "masked-LM (+ dEA for ERNIE)", ha="center", va="center", fontsize=8)
    box(-3.0, 0.95, 2.2, 0.5, "TransE vector e_X\n(frozen)", "#fde0c5", 8)
    arrow(-0.8, 1.2, 0.1, 1.2, "#d9822b")
    box(-0.2, -1.3, 2.0, 0.55, "K-BERT branch:\nborn_in C (sees X only)", "#e8e0f5", 8)
    arrow(0.5, -0.75, 0.5, 0.0, "#7b5ea7")
    box(n + 0.3, 1.6, 2.9, 1.3, "KEPLER: encode\n[CLS] X [SEP] with the\nsame BERT; KE loss\nE(X) + r = E(C)", "#e5f5e0", 8)
    arrow(n + 0.3, 2.2, n - 0.1, 2.2, "#3a8a3a")
    fig.tight_layout()
    return fig
