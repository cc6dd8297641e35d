"""Draw the static figures of the book's front matter (run from the repository root).

    .venv/bin/python book/figures/make_figures.py

Writes book/figures/timeline.svg. The output is deterministic (fixed SVG hash salt, no date
metadata), so re-running it does not change the file unless this script changes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent

# (year, label, chapter) -- the steps the chapters rebuild, in historical order.
EVENTS: list[tuple[str, str, int]] = [
    ("1954-57", "distributional\nhypothesis", 1),
    ("1990", "LSA", 1),
    ("1995-98", "Kneser-Ney\nsmoothing", 1),
    ("2003", "neural LM", 2),
    ("2013", "word2vec", 3),
    ("2014", "GloVe", 4),
    ("2015", "skip-thoughts", 5),
    ("2016", "fastText", 4),
    ("2017", "CoVe", 6),
    ("2017", "Transformer", 7),
    ("2018", "ELMo,\nULMFiT", 6),
    ("2018", "quick-thoughts", 5),
    ("2018-19", "GPT, BERT", 7),
    ("2019-20", "new pre-training\nobjectives", 8),
    ("2020-21", "GPT-3,\nprompting", 9),
]


def timeline(path: Path) -> None:
    """Draw the history strip (one evenly spaced slot per step) as an SVG file at ``path``."""
    plt.rcParams["svg.hashsalt"] = "embeddings-book"
    fig, ax = plt.subplots(figsize=(11, 2.4), dpi=80)
    cmap = plt.get_cmap("viridis")
    ax.axhline(0, color="0.3", lw=1)
    for i, (year, label, chapter) in enumerate(EVENTS):
        up = 1 if i % 2 == 0 else -1
        color = cmap(chapter / 10)
        ax.plot([i, i], [0, 0.45 * up], color=color, lw=1.5)
        ax.plot(i, 0, "o", color=color, ms=7)
        ax.text(i, 0.5 * up, f"{label}\n{year} \u00b7 ch. {chapter}", ha="center",
                va="bottom" if up > 0 else "top", fontsize=8.5)
    ax.set_xlim(-0.8, len(EVENTS) - 0.2)
    ax.set_ylim(-1.5, 1.5)
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    fig.savefig(path, format=path.suffix.lstrip("."), metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)


if __name__ == "__main__":
    timeline(HERE / "timeline.svg")
    print(f"wrote {HERE / 'timeline.svg'}")
