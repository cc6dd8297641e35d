"""Chapter 5's claim-check plumbing: paired differences between two encoders' probe scores, and
a bootstrap over test pairs for unsupervised similarity (cosine vs human scores).

Why paired: the SentEval-style harness (:mod:`companion.evaluate.senteval`) scores every encoder
on the same examples -- the same outer folds on the cross-validated tasks, the same bootstrap
resamples of the training set on the split tasks -- so run ``i`` of encoder A and run ``i`` of
encoder B differ only by the encoder. The spread of the paired differences is then the spread of
the comparison, much smaller than the two encoders' own spreads combined.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..evaluate.senteval import DISPLAY, SentEvalReport, _as_array
from ..evaluate.similarity import spearman

__all__ = [
    "STORED_SEEDS",
    "bootstrap_paired",
    "cosine_bootstrap",
    "load_stored_seeds",
    "nli_correct",
    "pair_cosines",
    "paired_table",
    "seed_spread",
    "task_loss_table",
    "timed",
    "verdict",
    "verdict_counts",
    "versus_table",
]


def verdict(diff: float, spread: float, *, k: float = 2.0) -> str:
    """``"A better"`` / ``"B better"`` when ``|diff| > k * spread``, else ``"within noise"``."""
    if not np.isfinite(diff) or not np.isfinite(spread):
        return "within noise"
    if abs(diff) <= k * spread:
        return "within noise"
    return "A better" if diff > 0 else "B better"


def paired_table(a: SentEvalReport, b: SentEvalReport, tasks: Sequence[str] | None = None,
                 *, k: float = 2.0) -> pd.DataFrame:
    """Per task: A's and B's score, ``A - B``, the sd of the paired run differences, a verdict.

    Args:
        a, b: two reports of :func:`companion.evaluate.senteval` run with the same config.
        tasks: task names (default: the tasks both reports hold).
        k: a difference counts when it exceeds ``k`` times its spread.
    """
    if not isinstance(a, SentEvalReport) or not isinstance(b, SentEvalReport):
        raise TypeError("paired_table needs two SentEvalReport objects (from senteval(...))")
    names = list(tasks) if tasks is not None else [t for t in a.results if t in b.results]
    if not names:
        raise ValueError("the two reports share no task")
    rows = []
    for t in names:
        if t not in a.results or t not in b.results:
            raise ValueError(f"task {t!r} is missing from {a.name if t not in a.results else b.name!r}")
        ra, rb = a.results[t], b.results[t]
        if len(ra.runs) != len(rb.runs):
            raise ValueError(f"task {t!r}: the reports have {len(ra.runs)} and {len(rb.runs)} runs; "
                             "run both with the same ProbeConfig")
        d = np.asarray(ra.runs) - np.asarray(rb.runs)
        sd = float(d.std(ddof=1)) if d.size > 1 else float("nan")
        diff = ra.mean - rb.mean
        rows.append({"task": DISPLAY.get(t, t), a.name: round(ra.mean, 2), b.name: round(rb.mean, 2),
                     "A - B": round(diff, 2), "sd of paired diff": round(sd, 2),
                     "verdict": verdict(diff, sd, k=k)})
    return pd.DataFrame(rows).set_index("task")


def pair_cosines(encode: Callable[[list[str]], Any], pairs: Sequence[Any]) -> np.ndarray:
    """Cosine of the two sentence vectors of each pair (``Example`` with ``text_b``); 0 where a
    vector is zero."""
    if not pairs:
        raise ValueError("pair_cosines needs at least one pair")
    a_txt = [p.text for p in pairs]
    b_txt = [p.text_b for p in pairs]
    if any(t is None for t in b_txt):
        raise ValueError("every example must be a pair (text_b is None somewhere)")
    u = _as_array(encode(a_txt), len(a_txt)).astype(np.float64)
    v = _as_array(encode(b_txt), len(b_txt)).astype(np.float64)
    norms = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1)
    return np.where(norms > 0, (u * v).sum(1) / np.maximum(norms, 1e-30), 0.0)


def cosine_bootstrap(cos_a: np.ndarray, cos_b: np.ndarray, gold: Sequence[float], *,
                     n_boot: int = 1000, seed: int = 0) -> dict[str, float]:
    """Spearman's rho (x 100) of two encoders' cosines against the human scores, their
    difference, and a 95% percentile interval of the difference from ``n_boot`` paired resamples
    of the test pairs."""
    cos_a, cos_b, y = (np.asarray(x, dtype=np.float64) for x in (cos_a, cos_b, gold))
    if not (cos_a.shape == cos_b.shape == y.shape) or cos_a.ndim != 1 or cos_a.size < 3:
        raise ValueError(f"need three equal 1-D arrays of >= 3 pairs, got {cos_a.shape}, {cos_b.shape}, {y.shape}")
    if not isinstance(n_boot, int) or n_boot < 10:
        raise ValueError(f"n_boot must be an int >= 10, got {n_boot!r}")
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_boot)
    for i in range(n_boot):
        idx = rng.integers(0, y.size, size=y.size)
        diffs[i] = spearman(cos_a[idx], y[idx]) - spearman(cos_b[idx], y[idx])
    lo, hi = np.percentile(100 * diffs, [2.5, 97.5])
    ra, rb = 100 * spearman(cos_a, y), 100 * spearman(cos_b, y)
    return {"A": float(ra), "B": float(rb), "A - B": float(ra - rb), "lo": float(lo), "hi": float(hi)}


def nli_correct(result: Any, examples: Sequence[Any]) -> np.ndarray:
    """1.0 / 0.0 per labelled pair: whether an :class:`~.infersent.NLIResult`'s classifier is right
    (for a bootstrap over the test pairs)."""
    import torch

    from .infersent import _pairs

    pairs = _pairs(examples)
    model = result.model
    model.eval()
    dev = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for s in range(0, len(pairs), 256):
            chunk = pairs[s:s + 256]
            a, al = result._ids([p[0] for p in chunk])
            b, bl = result._ids([p[1] for p in chunk])
            pred = model.logits({"a": a.to(dev), "a_len": al, "b": b.to(dev), "b_len": bl}).argmax(1).cpu()
            out.append((pred == torch.tensor([p[2] for p in chunk])).double().numpy())
    return np.concatenate(out)


def bootstrap_paired(a: np.ndarray, b: np.ndarray, *, n_boot: int = 2000, seed: int = 0) -> dict[str, float]:
    """Mean of ``a - b`` over paired items (e.g. per-example correctness, x 100) and a 95%
    percentile interval from ``n_boot`` resamples of the items."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"need two equal 1-D arrays of >= 2 items, got {a.shape} and {b.shape}")
    d = 100 * (a - b)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"A": 100 * float(a.mean()), "B": 100 * float(b.mean()), "A - B": float(d.mean()),
            "lo": float(lo), "hi": float(hi)}


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(fn(), CPU seconds, wall seconds)``: on a shared machine the CPU time is the fair one."""
    import time

    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def task_loss_table(runs: dict[str, dict[str, Sequence[float]]], last: int = 10) -> pd.DataFrame:
    """One row per run, one column per task: the mean training loss of the task's last ``last``
    steps (``NaN`` where a run did not train that task) -- e.g. GenSen-lite's ``task_losses``."""
    if not isinstance(last, int) or last < 1:
        raise ValueError(f"last must be a positive int, got {last!r}")
    rows = {}
    for run, losses in runs.items():
        if not losses:
            raise ValueError(f"run {run!r} has no task losses")
        rows[run] = {t: float(np.mean(v[-last:])) if len(v) else float("nan") for t, v in losses.items()}
    return pd.DataFrame(rows).T


def seed_spread(diffs: Sequence[float]) -> dict[str, float]:
    """Mean, smallest and largest of a difference measured once per training seed, and the
    number of seeds: the spread a reader should compare the difference with."""
    d = np.asarray(list(diffs), dtype=float)
    if d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"need one finite difference per seed, got {list(diffs)!r}")
    return {"mean": float(d.mean()), "min": float(d.min()), "max": float(d.max()), "n": int(d.size)}


def versus_table(a: SentEvalReport, others: dict[str, SentEvalReport], *, k: float = 2.0) -> pd.DataFrame:
    """A's score per task, each other encoder's, and the paired verdict of A against each
    (:func:`paired_table`): the multi-task-against-single-task comparison in one frame.

    Columns: ``a.name``, then per other ``name`` its score and ``"vs name"`` (the verdict)."""
    if not others:
        raise ValueError("versus_table needs at least one other report")
    out = None
    for name, rep in others.items():
        t = paired_table(a, rep, k=k)
        if out is None:
            out = t[[a.name]].copy()
        out[name] = t[rep.name]
        out[f"vs {name}"] = t["verdict"]
    return out


VERDICTS = ("A better", "B better", "within noise")
STORED_SEEDS = Path(__file__).with_name("stored_seeds.json")


def verdict_counts(table: pd.DataFrame | dict[str, dict[str, Any]]) -> dict[str, int]:
    """How many of each verdict a :func:`paired_table` or :func:`versus_table` holds (every
    ``verdict`` / ``"vs ..."`` cell), given as a frame or as its stored ``{task: {column: value}}``."""
    df = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table).T
    cols = [c for c in df.columns if c == "verdict" or str(c).startswith("vs ")]
    if not cols:
        raise ValueError(f"no verdict column in {list(df.columns)}; pass a paired_table or versus_table")
    cells = df[cols].to_numpy().ravel()
    return {v: int((cells == v).sum()) for v in VERDICTS}


def load_stored_seeds(path: str | Path | None = None) -> dict[str, Any]:
    """The stored results of ``benchmarks/ch05_seeds.py`` (other training seeds, InferSent on
    SICK-E + RTE), written at laptop scale outside the chapter's run; ``meta`` says how and when."""
    path = Path(path) if path is not None else STORED_SEEDS
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run BOOK_SCALE=laptop python benchmarks/ch05_seeds.py {path}")
    data = json.loads(path.read_text())
    for key in ("seeds", "infersent", "meta"):
        if key not in data:
            raise ValueError(f"{path} has no {key!r}: not a file written by benchmarks/ch05_seeds.py")
    return data
