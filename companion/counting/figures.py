"""Chapter 1's diagrams, drawn by code: the interpolated n-gram model as a chain of levels, and a
subtree of Brown clustering's merge tree with each class's bit string."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from companion import plot

from .brown_clusters import BrownClusters


def interpolation_diagram(ax=None):
    """The interpolated form every smoothed model of the chapter shares, for a trigram:
    ``p3(w | u v) = num3(u v w) + γ(u v) p2(w | v)``, down to the uniform distribution."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 3.2), dpi=plot.DPI, layout="constrained")
    levels = [("trigram", "p₃(w | u v)", "num₃(u v w): discounted count of u v w"),
              ("bigram", "p₂(w | v)", "num₂(v w): discounted (continuation) count"),
              ("unigram", "p₁(w)", "num₁(w): discounted (continuation) count"),
              ("uniform", "1 / |V|", "every symbol but <s>")]
    gammas = ["γ(u v)", "γ(v)", "γ(·)"]
    for i, (name, formula, note) in enumerate(levels):
        y = -i
        color = plot.HIGHLIGHT if i == 0 else plot.PALETTE[i % len(plot.PALETTE)]
        ax.add_patch(plt.Rectangle((0, y - 0.32), 3.0, 0.64, fc="white", ec=color, lw=1.8))
        ax.text(1.5, y, formula, ha="center", va="center", fontsize=11)
        ax.text(-0.15, y, name, ha="right", va="center", fontsize=9, color=plot.MUTED)
        ax.text(3.3, y, ("= " if i < 3 else "") + note, ha="left", va="center", fontsize=9)
        if i < 3:
            ax.annotate("", xy=(1.5, y - 0.68), xytext=(1.5, y - 0.32),
                        arrowprops={"arrowstyle": "<-", "color": plot.MUTED, "lw": 1.3})
            ax.text(1.62, y - 0.5, f"+ {gammas[i]} ×", ha="left", va="center", fontsize=9,
                    color=plot.MUTED)
    ax.set_xlim(-1.4, 9.2)
    ax.set_ylim(-3.5, 0.5)
    ax.axis("off")
    ax.set_title("Interpolation: each level adds its own evidence and passes γ of its mass down",
                 fontsize=10)
    return ax.figure


def _phase2_tree(res: BrownClusters) -> tuple[dict[int, tuple[int, int]], int]:
    base = len(res.words)
    children = {base + i: (a, b) for i, (phase, a, b, _) in enumerate(res.merges) if phase == 2}
    root = base + len(res.merges) - 1 if children else res.class_node[0]
    return children, root


def merge_tree(res: BrownClusters, counts: np.ndarray, prefix: str = "", *, max_leaves: int = 24,
               words_per_leaf: int = 3, ax=None):
    """Draw the subtree of the classes whose bit strings start with ``prefix`` (at most
    ``max_leaves`` leaves: deeper subtrees are cut and shown as one leaf). Leaves show each class's
    most frequent words (``counts`` per vocabulary id) and its bit string."""
    children, root = _phase2_tree(res)
    class_of_node = {n: k for k, n in enumerate(res.class_node)}
    node = root
    for bit in prefix:
        if node not in children:
            raise ValueError(f"no subtree with prefix {prefix!r}: the path ends earlier")
        node = children[node][int(bit)]
    # grow the shown tree breadth-first until it has max_leaves leaves
    shown = {node: prefix}
    frontier = [node]
    while frontier:
        n = frontier.pop(0)
        if n in children and len([m for m in shown if m not in children or
                                  children[m][0] not in shown]) + 1 <= max_leaves:
            a, b = children[n]
            shown[a], shown[b] = shown[n] + "0", shown[n] + "1"
            frontier += [a, b]
    leaves, pos, height = [], {}, {}

    def place(n: int) -> None:
        kids = children.get(n)
        if kids is None or kids[0] not in shown:
            pos[n], height[n] = len(leaves), 0
            leaves.append(n)
            return
        place(kids[0])
        place(kids[1])
        pos[n] = (pos[kids[0]] + pos[kids[1]]) / 2
        height[n] = max(height[kids[0]], height[kids[1]]) + 1

    place(node)
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 0.32 * len(leaves) + 0.8), dpi=plot.DPI, layout="constrained")
    for n, (a, b) in children.items():
        if n in shown and a in shown:
            for kid in (a, b):
                ax.plot([-height[n], -height[n], -height[kid]], [pos[n], pos[kid], pos[kid]],
                        color=plot.MUTED, lw=1.1)
    for n in leaves:
        if n in class_of_node:
            k = class_of_node[n]
            words = res.members(k, counts, words_per_leaf)
        else:  # a cut subtree: its classes' most frequent words
            words = _subtree_words(n, children, class_of_node, res, counts, words_per_leaf)
        ax.text(0.15, pos[n], f"{shown[n] or '(root)'}  {', '.join(words)}", va="center", fontsize=8)
    ax.set_xlim(-max(height.values()) - 0.5, 7)
    ax.set_ylim(len(leaves) - 0.5, -0.5)
    ax.axis("off")
    ax.set_title(f"Brown clustering: the merge tree below prefix {prefix or '(root)'!s}"
                 " (left = earlier split; bit 0 up, 1 down)", fontsize=10)
    return ax.figure


def _subtree_words(n, children, class_of_node, res, counts, k):
    stack, classes = [n], []
    while stack:
        m = stack.pop()
        if m in class_of_node:
            classes.append(class_of_node[m])
        else:
            stack += list(children[m])
    ids = np.flatnonzero(np.isin(res.cluster, classes))
    ids = ids[np.argsort(-counts[ids], kind="stable")][:k]
    return [res.itos[i] for i in ids] + ["…"]
