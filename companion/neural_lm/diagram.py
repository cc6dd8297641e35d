"""Chapter 2's two model diagrams, drawn by code.

* :func:`nnlm_diagram` -- Bengio et al. (2003)'s Figure 1 redrawn in the book's notation: the
  context words' ids, the shared look-up table ``C``, the concatenation ``x``, the tanh hidden
  layer, the softmax over ``|V|`` words, and (dashed) the optional direct connections ``W``.
* :func:`tree_path_diagram` -- a Huffman tree over a few words, with the root-to-leaf path of
  one word highlighted and each decision labelled ``sigma(+-(u_v . h + beta_v))``.

Both return a matplotlib Figure and draw nothing that depends on training (so nbval compares
their cells exactly only through the absence of text output).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..plot import DPI, HIGHLIGHT, MUTED, PALETTE, _figure_and_axes
from .tree import huffman_tree

__all__ = ["nnlm_diagram", "tree_path_diagram"]


def _box(ax, xy, w, h, text, *, color="white", edge="black", fontsize=9, style="-"):
    from matplotlib.patches import FancyBboxPatch

    x, y = xy
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                facecolor=color, edgecolor=edge, linestyle=style, linewidth=1.2))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, *, color="black", style="-", lw=1.0):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=color, linestyle=style, lw=lw,
                                shrinkA=2, shrinkB=2))


def nnlm_diagram(*, direct: bool = True, ax=None):
    """Bengio et al.'s Figure 1 in the book's notation (n = 4: three context words shown)."""
    fig, ax = _figure_and_axes(ax, (7.5, 5.2))
    ax.set(xlim=(0, 10), ylim=(0, 10))
    ax.axis("off")
    words = ["$w_{t-n+1}$", "$w_{t-2}$", "$w_{t-1}$"]
    xs = [2.0, 5.0, 8.0]
    for x, w in zip(xs, words):
        ax.text(x, 0.5, f"index of {w}", ha="center", va="center", fontsize=9)
        _box(ax, (x, 2.3), 2.2, 0.9, "look up row\nof $C$", color="#e8f4f0", edge=PALETTE[0])
        _arrow(ax, (x, 0.8), (x, 1.8))
        _box(ax, (x, 4.0), 2.2, 0.8, f"$C({w[1:-1]})$", color="#e8f4f0", edge=PALETTE[0])
        _arrow(ax, (x, 2.75), (x, 3.6))
    ax.text(3.5, 2.3, "shared\n$C$", ha="center", va="center", fontsize=8, color=PALETTE[0])
    ax.text(6.5, 2.3, "shared\n$C$", ha="center", va="center", fontsize=8, color=PALETTE[0])
    ax.text(9.9, 5.0, "$x$: the three rows\nconcatenated,\n$(n-1)d$ numbers", ha="right",
            va="center", fontsize=8)
    _box(ax, (5.0, 6.2), 5.5, 0.9, r"hidden layer: $\tanh(b_h + Hx)$, $d_h$ units",
         color="#efeefa", edge=PALETTE[2])
    for x in xs:
        _arrow(ax, (x, 4.4), (5.0 + (x - 5.0) * 0.45, 5.75))
    _box(ax, (5.0, 8.4), 5.5, 0.9, r"softmax over $|V|$ scores $y = b + Wx + U\tanh(\cdot)$",
         color="#fdeee3", edge=PALETTE[1])
    _arrow(ax, (5.0, 6.65), (5.0, 7.95))
    ax.text(5.0, 9.6, r"$P(w_t = i \mid w_{t-n+1:t-1})$ for every word $i$", ha="center",
            fontsize=9)
    ax.text(5.6, 7.3, "most of the work:\n$|V| \\times d_h$ per token", fontsize=8,
            color=PALETTE[1], va="center")
    if direct:
        for x in (xs[0], xs[-1]):
            side = -1 if x < 5 else 1
            ax.annotate("", xy=(5.0 + side * 2.6, 8.0), xytext=(x + side * 0.9, 4.4),
                        arrowprops=dict(arrowstyle="-|>", color=MUTED, linestyle="--", lw=1.0,
                                        connectionstyle=f"arc3,rad={-0.25 * side}"))
        ax.text(0.3, 6.9, "optional direct\nconnections $W$", fontsize=8, color=MUTED)
    return fig


def _layout(tree, n_leaves: int) -> tuple[dict, dict, dict]:
    """Positions of leaves (in-order) and internal nodes (mean of children), and child lists."""
    children: dict[int, list[tuple[str, int, int]]] = {}
    for w in range(n_leaves):
        path = tree.paths[w, : int(tree.lengths[w])].tolist()
        codes = [int(c) for c in tree.codes[w, : int(tree.lengths[w])].tolist()]
        for j, (node, code) in enumerate(zip(path, codes)):
            child = ("leaf", w) if j == len(path) - 1 else ("node", path[j + 1])
            entry = (*child, code)
            children.setdefault(node, [])
            if entry not in children[node]:
                children[node].append(entry)
    pos_leaf, pos_node, depth = {}, {}, {}
    order = [0]

    def place(node: int, level: int) -> float:
        xs = []
        for kind, ident, _ in sorted(children[node], key=lambda e: e[2]):
            if kind == "leaf":
                pos_leaf[ident] = (order[0], -(level + 1))
                order[0] += 1
                xs.append(pos_leaf[ident][0])
            else:
                xs.append(place(ident, level + 1))
        pos_node[node] = (sum(xs) / len(xs), -level)
        depth[node] = level
        return pos_node[node][0]

    place(tree.root, 0)
    return pos_leaf, pos_node, children


def tree_path_diagram(counts: Sequence[int], words: Sequence[str], target: int, *, ax=None):
    """A Huffman tree over ``words`` (built from ``counts``), the path to ``words[target]``
    highlighted, each decision on it labelled with the sigmoid that scores it."""
    if len(counts) != len(words) or len(words) < 2:
        raise ValueError("give at least two words and one count per word")
    if not 0 <= target < len(words):
        raise ValueError(f"target must index words (0..{len(words) - 1}), got {target}")
    tree = huffman_tree(list(counts))
    pos_leaf, pos_node, children = _layout(tree, len(words))
    on_path = set(tree.paths[target, : int(tree.lengths[target])].tolist())
    fig, ax = _figure_and_axes(ax, (7.5, 4.2))
    ax.axis("off")
    for node, kids in children.items():
        x0, y0 = pos_node[node]
        for kind, ident, code in kids:
            x1, y1 = pos_leaf[ident] if kind == "leaf" else pos_node[ident]
            hot = node in on_path and (
                (kind == "leaf" and ident == target) or (kind == "node" and ident in on_path))
            ax.plot([x0, x1], [y0, y1], color=HIGHLIGHT if hot else MUTED, lw=2.2 if hot else 1)
            ax.text((x0 + x1) / 2 + (0.12 if code else -0.12), (y0 + y1) / 2, str(code),
                    fontsize=8, ha="center", color="black" if hot else MUTED)
            if hot:
                sign = "+" if code else "-"
                ax.text((x0 + x1) / 2 + (0.2 if code else -0.2), (y0 + y1) / 2 - 0.22,
                        rf"$\sigma({sign}(u_v^\top h + \beta_v))$", fontsize=8,
                        ha="left" if code else "right", color=HIGHLIGHT)
    for node, (x, y) in pos_node.items():
        ax.scatter([x], [y], s=90, color=HIGHLIGHT if node in on_path else "white",
                   edgecolor="black", zorder=3)
    for w, (x, y) in pos_leaf.items():
        ax.text(x, y - 0.15, f"{words[w]}\n({counts[w]})", ha="center", va="top", fontsize=8,
                fontweight="bold" if w == target else "normal")
    code = tree.code_string(target)
    ax.set_title(f"Huffman tree: P({words[target]} | h) is a product of {len(code)} sigmoids "
                 f"(code {code})", fontsize=10)
    ymin = min(y for _, y in pos_leaf.values())
    ax.set(xlim=(-0.7, len(words) - 0.3), ylim=(ymin - 0.9, 0.4))
    fig.set_dpi(DPI)
    return fig
