"""GLUE-lite: the fine-tuning yardstick of chapters 7-10.

Five tasks with their standard metrics -- SST-2 (GLUE's re-split, ``sst2_glue``; accuracy), MRPC
(F1 and accuracy), STS-B (Pearson and Spearman x 100), RTE (accuracy), SICK-E (accuracy) -- on
the **same examples for every model**: :func:`load_glue` subsamples each split to the sizes of
:data:`GLUE_SIZES` for the scale with a fixed seed, and the :class:`GlueSpec` it returns records
the indices chosen and a fingerprint (sha256) of the examples, so two chapters can check that
they trained and tested on the same data. A task without a dev split gets one carved from its
training set (seeded, disjoint). The summary score is GLUE's: the mean over tasks of each task's
main score, where MRPC counts as the mean of F1 and accuracy and STS-B as the mean of Pearson and
Spearman.

A fine-tuned model enters as ``predict(task_name, examples) -> predictions`` (class indices, or
real scores for STS-B). Example::

    from companion.evaluate.glue import GLUE_TASKS, load_glue, evaluate_glue
    data = {t: load_glue(t) for t in GLUE_TASKS}        # .train / .dev / .test / .spec
    ...fine-tune on data[t].train, choose on data[t].dev...
    report = evaluate_glue(my_predict, data)
    RunningTable("glue_lite").add("BERT-mini fine-tuned", chapter="07b", scores=report.scores())
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.tasks import Example, TaskData
from ..fileio import umask_mode
from ..scale import SCALES, get_scale
from .similarity import spearman

GLUE_TASKS: tuple[str, ...] = ("sst2_glue", "mrpc", "stsb", "rte", "sick_e")
DISPLAY: dict[str, str] = {"sst2_glue": "SST-2", "mrpc": "MRPC", "stsb": "STS-B", "rte": "RTE", "sick_e": "SICK-E"}
GLUE_SIZES: dict[str, dict[str, int] | None] = {  # examples per split; None: every example
    "ci": {"train": 200, "dev": 100, "test": 200},
    "laptop": {"train": 2000, "dev": 500, "test": 1000},
    "gpu": None,
}
SPECS_FILE = Path(__file__).resolve().parent / "rows" / "glue_lite_specs.json"
CARVED_DEV = 500  # a task without a dev split: this many training examples become dev (gpu scale)
SEED = 0

Predict = Callable[[str, list[Example]], Sequence[float]]


# --------------------------------------------------------------------------- metrics
def _arrays(gold: Sequence[float], pred: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    g, p = np.asarray(gold, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    if g.ndim != 1 or g.shape != p.shape:
        raise ValueError(f"gold and predictions must be 1-D and equally long, got {g.shape} and {p.shape}")
    if g.size == 0:
        raise ValueError("nothing to score: no examples")
    if not (np.isfinite(g).all() and np.isfinite(p).all()):
        raise ValueError("gold or predictions hold NaN or infinite values")
    return g, p


def accuracy(gold: Sequence[int], pred: Sequence[int]) -> float:
    """Share of exact matches (sklearn's ``accuracy_score``)."""
    g, p = _arrays(gold, pred)
    return float((g == p).mean())


def f1_binary(gold: Sequence[int], pred: Sequence[int], positive: int = 1) -> float:
    """F1 of the positive class (sklearn's ``f1_score``; 0 when there is no true positive)."""
    g, p = _arrays(gold, pred)
    tp = float(((p == positive) & (g == positive)).sum())
    fp = float(((p == positive) & (g != positive)).sum())
    fn = float(((p != positive) & (g == positive)).sum())
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def pearson(gold: Sequence[float], pred: Sequence[float]) -> float:
    """Pearson's r (scipy's ``pearsonr``); NaN if either side is constant."""
    g, p = _arrays(gold, pred)
    g, p = g - g.mean(), p - p.mean()
    d = math.sqrt(float(g @ g) * float(p @ p))
    return float("nan") if d == 0 else float(np.clip(g @ p / d, -1, 1))


def task_metrics(task: str, gold: Sequence[float], pred: Sequence[float]) -> dict[str, float]:
    """The task's standard metrics, x 100: ``acc``; MRPC ``F1`` and ``acc``; STS-B ``pearson``
    and ``spearman``."""
    if task == "stsb":
        g, p = _arrays(gold, pred)
        return {"pearson": 100 * pearson(g, p), "spearman": 100 * spearman(p, g)}
    out = {"acc": 100 * accuracy(gold, pred)}
    if task == "mrpc":
        out = {"F1": 100 * f1_binary(gold, pred), **out}
    return out


def main_score(task: str, metrics: Mapping[str, float]) -> float:
    """GLUE's single number per task: the mean of its metrics (one metric: that one)."""
    return float(np.mean(list(metrics.values())))


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class GlueSpec:
    """Which examples a GLUE-lite task uses at a scale: enough to check two runs used the same.

    Attributes:
        task, scale, seed: what was asked.
        sizes: examples per split after subsampling.
        indices: per split, the chosen indices into the source split (sorted).
        sources: per split, the split of the loaded task the examples come from (``dev`` may
            come from ``train`` when the task has no dev split).
        fingerprint: sha256 over the chosen examples (texts, labels), split by split.
    """

    task: str
    scale: str
    seed: int
    sizes: dict[str, int]
    indices: dict[str, tuple[int, ...]] = field(repr=False)
    sources: dict[str, str]
    fingerprint: str


@dataclass
class GlueTask:
    """A GLUE-lite task at one scale: the examples of each split, the label set and the spec."""

    name: str
    train: list[Example]
    dev: list[Example]
    test: list[Example]
    label_names: tuple[str, ...] | None
    spec: GlueSpec

    @property
    def regression(self) -> bool:
        return self.label_names is None

    def split(self, name: str) -> list[Example]:
        if name not in ("train", "dev", "test"):
            raise ValueError(f"split must be 'train', 'dev' or 'test', got {name!r}")
        return getattr(self, name)


def _fingerprint(splits: Mapping[str, list[Example]]) -> str:
    h = hashlib.sha256()
    for name in ("train", "dev", "test"):
        h.update(name.encode())
        for e in splits[name]:
            h.update(json.dumps([e.text, e.text_b, e.label], ensure_ascii=False).encode())
    return h.hexdigest()


def _choose(n_total: int, n: int | None, rng: np.random.Generator) -> np.ndarray:
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(rng.choice(n_total, size=n, replace=False))


def load_glue(task: str | TaskData, scale: str | None = None, *, seed: int = SEED) -> GlueTask:
    """A GLUE-lite task's examples at ``scale`` (default ``BOOK_SCALE``): the same for every model.

    Args:
        task: one of :data:`GLUE_TASKS` (loaded with ``companion.data.load_task``) or a
            ``TaskData`` with ``train`` and ``test`` splits (``dev`` optional).
        scale: ``ci`` / ``laptop`` / ``gpu`` (sizes: :data:`GLUE_SIZES`).
        seed: the subsampling seed; keep the default so chapters agree.

    Raises:
        ValueError: for an unknown task or scale, or a task without ``train`` and ``test``.
    """
    scale = get_scale() if scale is None else scale
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if isinstance(task, str):
        if task not in GLUE_TASKS:
            raise ValueError(f"{task!r} is not a GLUE-lite task; use one of {GLUE_TASKS}")
        from ..data.tasks import load_task

        task = load_task(task)
    if not isinstance(task, TaskData):
        raise TypeError(f"task must be a name or a TaskData, got {type(task).__name__}")
    if not {"train", "test"} <= set(task.splits):
        raise ValueError(f"task {task.name!r} needs 'train' and 'test' splits, it has {sorted(task.splits)}")
    sizes = GLUE_SIZES[scale] or {}
    rng = np.random.default_rng([seed, int.from_bytes(task.name.encode()[:8].ljust(8, b"\0"), "little")])
    train_all = task.splits["train"]
    sources = {"train": "train", "dev": "dev", "test": "test"}
    train_pool = np.arange(len(train_all))
    if "dev" in task.splits:
        dev_idx = _choose(len(task.splits["dev"]), sizes.get("dev"), rng)
        dev = [task.splits["dev"][i] for i in dev_idx]
    else:  # carve a dev set out of train, disjoint from the training examples
        n_dev = min(sizes.get("dev", CARVED_DEV), len(train_all) // 5)
        perm = rng.permutation(len(train_all))
        dev_idx, train_pool = np.sort(perm[:n_dev]), np.sort(perm[n_dev:])
        dev = [train_all[i] for i in dev_idx]
        sources["dev"] = "train"
    train_idx = train_pool[_choose(len(train_pool), sizes.get("train"), rng)]
    test_idx = _choose(len(task.splits["test"]), sizes.get("test"), rng)
    splits = {"train": [train_all[i] for i in train_idx], "dev": dev,
              "test": [task.splits["test"][i] for i in test_idx]}
    for name, exs in splits.items():
        if not exs:
            raise ValueError(f"task {task.name!r}: the {name} split is empty")
    spec = GlueSpec(task.name, scale, seed, {k: len(v) for k, v in splits.items()},
                    {"train": tuple(map(int, train_idx)), "dev": tuple(map(int, dev_idx)),
                     "test": tuple(map(int, test_idx))}, sources, _fingerprint(splits))
    return GlueTask(task.name, splits["train"], splits["dev"], splits["test"], task.label_names, spec)


def store_specs(scales: Sequence[str] = ("ci", "laptop"), path: Path = SPECS_FILE) -> dict:
    """Record every task's fingerprint and sizes per scale (``glue_lite_specs.json``), so a later
    change of the data or the loaders that would change the examples is caught by a test."""
    out = {scale: {} for scale in scales}
    for scale in scales:
        for t in GLUE_TASKS:
            spec = load_glue(t, scale).spec
            out[scale][t] = {"fingerprint": spec.fingerprint, "sizes": spec.sizes, "sources": spec.sources,
                             "seed": spec.seed}
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".glue_specs.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, umask_mode())  # mkstemp made it 0600
    os.replace(tmp, path)
    return out


def stored_specs(path: Path = SPECS_FILE) -> dict:
    """The recorded fingerprints: ``{scale: {task: {"fingerprint", "sizes", "sources", "seed"}}}``."""
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- evaluation
def _check_predictions(task: GlueTask, pred: Sequence[float], n: int) -> np.ndarray:
    try:
        arr = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{task.name}: predictions must be numbers (class indices or scores)") from None
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"{task.name}: got predictions of shape {arr.shape} for {n} examples; "
                         "return one class index (or score) per example")
    if not np.isfinite(arr).all():
        raise ValueError(f"{task.name}: predictions hold NaN or infinite values")
    if not task.regression:
        k = len(task.label_names)
        if (arr != np.round(arr)).any() or arr.min() < 0 or arr.max() >= k:
            raise ValueError(f"{task.name}: predictions must be class indices 0..{k - 1} "
                             f"({', '.join(task.label_names)}); take the argmax of the logits")
    return arr


@dataclass
class GlueReport:
    """One model's GLUE-lite scores: per task metrics (x 100) and the GLUE-style average."""

    name: str
    metrics: dict[str, dict[str, float]]
    specs: dict[str, GlueSpec]
    split: str

    @property
    def average(self) -> float:
        return float(np.mean([main_score(t, m) for t, m in self.metrics.items()]))

    def scores(self) -> dict[str, float]:
        """Flat scores for the ``glue_lite`` table: ``"SST-2 acc"``, ``"MRPC F1"``, ...,
        ``"avg"`` (rounded to 2 decimals)."""
        out = {f"{DISPLAY.get(t, t)} {k}": round(v, 2) for t, m in self.metrics.items() for k, v in m.items()}
        out["avg"] = round(self.average, 2)
        return out

    def frame(self) -> pd.DataFrame:
        """One line per task: its metrics, its main score, the examples scored."""
        rows = [{"task": DISPLAY.get(t, t), **m, "score": main_score(t, m), "n": self.specs[t].sizes[self.split]}
                for t, m in self.metrics.items()]
        return pd.DataFrame(rows).set_index("task")


def evaluate_glue(
    predict: Predict,
    tasks: Mapping[str, GlueTask] | Iterable[str | GlueTask] = GLUE_TASKS,
    *,
    split: str = "test",
    name: str = "model",
    scale: str | None = None,
) -> GlueReport:
    """Score ``predict(task_name, examples) -> predictions`` on every task's ``split``.

    Args:
        predict: the fine-tuned model(s): class indices for the classification tasks, real
            scores for STS-B.
        tasks: task names (loaded by :func:`load_glue` at ``scale``), ``GlueTask`` objects, or a
            dict name -> ``GlueTask`` as returned by ``{t: load_glue(t) for t in GLUE_TASKS}``.
        split: ``"test"`` (the table) or ``"dev"`` (model selection).

    Raises:
        ValueError / TypeError: for predictions of the wrong length, type or range.
    """
    if not callable(predict):
        raise TypeError(f"predict must be a function (task name, examples) -> predictions, got "
                        f"{type(predict).__name__}; evaluate_glue(predict, tasks)")
    if isinstance(tasks, str):
        tasks = [tasks]  # one task name, not its characters
    items = tasks.values() if isinstance(tasks, Mapping) else tasks
    loaded = [load_glue(t, scale) if isinstance(t, (str, TaskData)) else t for t in items]
    if not loaded:
        raise ValueError("no tasks given")
    metrics, specs = {}, {}
    for task in loaded:
        if not isinstance(task, GlueTask):
            raise TypeError(f"tasks must be names or GlueTask objects, got {type(task).__name__}")
        exs = task.split(split)
        pred = _check_predictions(task, predict(task.name, list(exs)), len(exs))
        metrics[task.name] = task_metrics(task.name, [float(e.label) for e in exs], pred)
        specs[task.name] = task.spec
    return GlueReport(name, metrics, specs, split)


def majority_baseline(tasks: Mapping[str, GlueTask]) -> Predict:
    """The floor of the classification tasks: always the training set's majority class.

    (A constant has no correlation with STS-B's scores, so this baseline refuses STS-B: leave it
    out of ``tasks`` when you evaluate it.)
    """
    def predict(task_name: str, examples: list[Example]) -> list[int]:
        task = tasks[task_name]
        if task.regression:
            raise ValueError(f"{task_name} is a regression task: a constant prediction has no correlation")
        labels = np.asarray([e.label for e in task.train], dtype=int)
        return [int(np.bincount(labels).argmax())] * len(examples)

    return predict


__all__ = [
    "DISPLAY", "GLUE_SIZES", "GLUE_TASKS", "GlueReport", "GlueSpec", "GlueTask", "accuracy",
    "evaluate_glue", "f1_binary", "load_glue", "main_score", "majority_baseline", "pearson",
    "store_specs", "stored_specs", "task_metrics",
]
