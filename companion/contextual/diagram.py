"""Chapter 6a's figures, drawn by code: the LSTM cell, the AWD-LSTM/ULMFiT stack, the STLR
schedule and the learning curve. Each returns a matplotlib Figure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..neural_lm.diagram import _arrow, _box
from ..plot import MUTED, PALETTE, _figure_and_axes
from .ulmfit import discriminative_lrs, stlr, unfreeze_schedule

__all__ = ["learning_curve_plot", "lstm_cell_diagram", "stlr_plot", "ulmfit_diagram"]


def lstm_cell_diagram(*, ax=None):
    """One LSTM step: the cell line ``c`` running across the top (only a multiply and an add
    touch it), the four gates computed from ``[x_t, h_{t-1}]`` below it."""
    fig, ax = _figure_and_axes(ax, (8.0, 4.6))
    ax.set(xlim=(0, 12), ylim=(0, 7))
    ax.axis("off")
    # the memory line
    _arrow(ax, (0.3, 5.8), (11.7, 5.8), color=PALETTE[0], lw=2.2)
    ax.text(0.3, 6.2, "$c_{t-1}$", fontsize=10, color=PALETTE[0])
    ax.text(11.3, 6.2, "$c_t$", fontsize=10, color=PALETTE[0])
    _box(ax, (3.5, 5.8), 0.8, 0.7, r"$\times$", color="white", edge=PALETTE[0])
    _box(ax, (6.5, 5.8), 0.8, 0.7, "+", color="white", edge=PALETTE[0])
    # gates
    gates = [(3.5, r"$f_t=\sigma$", "forget"), (5.5, r"$i_t=\sigma$", "input"),
             (7.5, r"$g_t=\tanh$", "candidate"), (9.5, r"$o_t=\sigma$", "output")]
    for x, label, name in gates:
        _box(ax, (x, 2.6), 1.6, 0.8, label, color="#efeefa", edge=PALETTE[2])
        ax.text(x, 1.95, name, ha="center", fontsize=8, color=MUTED)
        _arrow(ax, (x, 1.0), (x, 2.2), color=MUTED)
    ax.plot([1.0, 10.5], [1.0, 1.0], color=MUTED, lw=1.0)
    ax.text(0.2, 0.5, r"$[x_t,\ h_{t-1}]$: each gate is $W x_t + U h_{t-1} + b$", fontsize=9)
    _arrow(ax, (3.5, 3.0), (3.5, 5.45))  # f multiplies the old memory
    _box(ax, (6.5, 4.2), 0.8, 0.7, r"$\times$")
    _arrow(ax, (5.5, 3.0), (6.2, 3.95))
    _arrow(ax, (7.5, 3.0), (6.8, 3.95))
    _arrow(ax, (6.5, 4.55), (6.5, 5.45))  # i * g is written into the memory
    _box(ax, (9.5, 4.6), 1.0, 0.6, "tanh")
    _arrow(ax, (9.5, 5.8), (9.5, 4.9))
    _box(ax, (10.7, 3.6), 0.8, 0.7, r"$\times$")
    _arrow(ax, (9.5, 4.3), (10.4, 3.8))
    _arrow(ax, (9.5, 3.0), (10.4, 3.4))
    _arrow(ax, (11.1, 3.6), (11.8, 3.6))
    ax.text(11.3, 3.0, "$h_t$", fontsize=10)
    ax.text(4.6, 6.55, r"$c_t = f_t \odot c_{t-1} + i_t \odot g_t$", fontsize=9, color=PALETTE[0])
    return fig


def ulmfit_diagram(*, n_layers: int = 3, ax=None):
    """The AWD-LSTM stack with where each dropout acts, and ULMFiT's three stages."""
    fig, ax = _figure_and_axes(ax, (9.0, 5.0))
    ax.set(xlim=(0, 14), ylim=(0, 8.6))
    ax.axis("off")
    y = 0.8
    _box(ax, (3.0, y), 4.2, 0.7, "embedding  (embedding dropout:\nwhole words zeroed)",
         color="#e8f4f0", edge=PALETTE[0], fontsize=8)
    lrs = discriminative_lrs(n_layers + 2, 1.0)
    ax.text(5.6, y, f"lr x {lrs[0]:.3f}", fontsize=8, color=MUTED, va="center")
    for k in range(n_layers):
        y0, y = y, 2.2 + 1.5 * k
        _arrow(ax, (3.0, y0 + 0.4), (3.0, y - 0.4))
        ax.text(3.15, (y0 + y) / 2, "locked dropout (one mask for all steps)", fontsize=7, color=MUTED)
        _box(ax, (3.0, y), 4.2, 0.7, f"LSTM {k + 1}  (weight drop on $W_{{hh}}$)",
             color="#efeefa", edge=PALETTE[2], fontsize=8)
        ax.text(5.6, y, f"lr x {lrs[k + 1]:.3f}", fontsize=8, color=MUTED, va="center")
    y0, y = y, y + 1.5
    _arrow(ax, (3.0, y0 + 0.4), (3.0, y - 0.4))
    _box(ax, (3.0, y), 4.2, 0.7, r"head: $[h_T, \max_t h_t, \mathrm{mean}_t h_t]$ -> MLP",
         color="#fdeee3", edge=PALETTE[1], fontsize=8)
    ax.text(5.6, y, "lr x 1", fontsize=8, color=MUTED, va="center")
    stages = ["1. LM pre-training\n(general corpus)", "2. LM fine-tuning\n(task text; STLR,\ndiscriminative lr)",
              "3. classifier\n(+ gradual unfreezing:\nhead first, then down)"]
    for i, text in enumerate(stages):
        _box(ax, (10.5, 7.0 - 2.4 * i), 4.6, 1.5, text, color="white", edge=PALETTE[i], fontsize=8)
        if i:
            _arrow(ax, (10.5, 7.0 - 2.4 * (i - 1) - 0.75), (10.5, 7.0 - 2.4 * i + 0.75))
    order = unfreeze_schedule(n_layers + 2, n_layers + 2)
    ax.text(8.2, 0.2, "trainable groups per epoch: " + ", ".join(map(str, order)), fontsize=8, color=MUTED)
    return fig


def stlr_plot(total: int = 1000, lr_max: float = 0.01, *, cut_frac: float = 0.1, ratio: float = 32,
              ax=None):
    """The slanted triangular schedule for ``total`` steps (``stlr``'s values, not a sketch)."""
    fig, ax = _figure_and_axes(ax, (6.0, 3.0))
    t = np.arange(total + 1)
    ax.plot(t, [stlr(int(s), total, lr_max, cut_frac, ratio) for s in t], color=PALETTE[0])
    ax.axvline(int(total * cut_frac), color=MUTED, ls=":", lw=1)
    ax.set(xlabel="step t", ylabel="learning rate",
           title=f"STLR: cut_frac = {cut_frac}, ratio = {ratio:g}, lr_max = {lr_max:g}")
    return fig


def learning_curve_plot(frame: pd.DataFrame, *, methods: Sequence[str] = ("ULMFiT", "from scratch"),
                        ax=None):
    """Mean test accuracy (and one standard deviation over seeds) against labelled examples."""
    fig, ax = _figure_and_axes(ax, (6.0, 3.6))
    for i, m in enumerate(methods):
        g = frame[frame.method == m].groupby("labels").accuracy
        mean, sd = g.mean(), g.std().fillna(0.0)
        ax.errorbar(mean.index, 100 * mean.values, yerr=100 * sd.values, marker="o", capsize=3,
                    color=PALETTE[i], label=m)
    ax.set_xscale("log")
    ax.set(xlabel="labelled training examples (log scale)", ylabel="test accuracy (%)")
    ax.legend()
    return fig
