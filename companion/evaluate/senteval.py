"""A SentEval-style harness: how much does a sentence vector know? (Conneau & Kiela 2018)

Any ``encode(list[str]) -> [n, d]`` function (a torch tensor or a NumPy array) is frozen and
probed by simple models trained on top of its vectors, on the tasks SentEval made standard:

* **classification** (linear probe = logistic regression, L2 strength ``C`` chosen on held-out
  data): MR, CR, SUBJ, MPQA (no standard split: SentEval's 10-fold cross-validation, with an inner
  k-fold on each training part to choose ``C``), TREC (train/test: inner k-fold on train), SST-2
  and SICK-E (train/dev/test: ``C`` chosen on dev), MRPC (pairs, accuracy and F1);
* **relatedness** (STS Benchmark, SICK-R): unsupervised -- Spearman's ρ between the cosine of the
  two sentence vectors and the human score -- and trained: SentEval's probe, a softmax over the
  integer score bins trained on soft targets (a score 3.6 is 0.4 of bin 3 and 0.6 of bin 4) whose
  expected bin is the predicted score; ``C`` chosen on dev by Pearson's r, as SentEval does.

Pairs are represented as SentEval does, ``[|u - v|, u * v]`` (its MRPC and SICK code);
``pair_features="infersent"`` gives InferSent's ``[u, v, |u - v|, u * v]``. Features are
standardised on the training part (SentEval does not; it helps lbfgs converge, and a linear
probe's accuracy is unchanged by it up to the regulariser's scale). Scores are reported on
SentEval's scale: accuracy and F1 in percent, correlations times 100.

**Spread.** Logistic regression is convex, so a probe has no seed of its own; the spread we report
is that of the data. Cross-validated tasks: the score is the mean over the outer folds and the
spread their standard deviation (SentEval's protocol). Split tasks: the score is that of the probe
trained on the training set (subsampled at ``BOOK_SCALE`` ci and laptop), and the spread is the
standard deviation over ``seeds`` of probes trained on bootstrap resamples of it (at the ``C``
chosen for the whole set; relatedness likewise) -- how much the score depends on which training examples the probe saw. Dev and test subsamples are drawn once
(seed 0), so every encoder is scored on the same examples.

Every distinct sentence is encoded once per encoder (:class:`EncoderCache`), in batches of
similar length; SICK-R and SICK-E share their sentences.

Example::

    from companion.evaluate import senteval, ProbeConfig
    report = senteval(my_encode, name="mean GloVe", config=ProbeConfig.for_scale())
    report.frame()           # one line per task: mean, sd, n_train, n_test, ...
    report.scores()          # {"MR": 72.9, "MR sd": 1.4, ...}: a row of the "sentence" table
"""

from __future__ import annotations

import hashlib
import math
import re
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..data.tasks import Example, TaskData, cv_folds
from ..scale import pick
from .similarity import spearman

SENTEVAL_TASKS: tuple[str, ...] = ("mr", "cr", "subj", "mpqa", "trec", "sst2", "mrpc", "sick_e", "stsb", "sick_r")
DISPLAY: dict[str, str] = {
    "mr": "MR", "cr": "CR", "subj": "SUBJ", "mpqa": "MPQA", "trec": "TREC", "sst2": "SST-2",
    "mrpc": "MRPC", "sick_e": "SICK-E", "stsb": "STS-B", "sick_r": "SICK-R",
}
# SentEval's grid is 2^-2..2^3 on raw features. On standardised features, with ~1,000 training
# examples, the best C sat at that grid's lower edge for every encoder we tried (measured at
# laptop scale), so ours reaches further down: 2^-9 .. 2^3 in steps of 4x.
C_GRID: tuple[float, ...] = tuple(2.0**t for t in range(-9, 4, 2))
PAIR_FEATURES = ("senteval", "infersent")

EncodeFn = Callable[[list[str]], Any]


# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class ProbeConfig:
    """How the probes are trained and how much data they see.

    Attributes:
        c_grid: inverse L2 strengths tried (:data:`C_GRID`: 2^-9 .. 2^3; SentEval: 2^-2 .. 2^3).
        seeds: one bootstrap resample of the training set per seed on the split tasks (the
            spread); the cross-validated tasks use ``seeds[0]`` for their folds.
        inner_folds: k of the inner cross-validation that chooses ``C`` where there is no dev
            split (SentEval uses 10; fewer is faster).
        outer_folds: folds of the tasks without a split; ``None``: the task's ``cv_folds`` (10).
        max_train, max_dev, max_test, max_all: subsample sizes per split (``None``: all).
        pair_features: ``"senteval"`` ([|u-v|, u*v]) or ``"infersent"`` ([u, v, |u-v|, u*v]).
        standardize: standardise features on the training part before the probe.
        max_iter: lbfgs iterations per fit.
        batch_size: sentences per call of ``encode``.
    """

    c_grid: tuple[float, ...] = C_GRID
    seeds: tuple[int, ...] = (0, 1, 2)
    inner_folds: int = 5
    outer_folds: int | None = None
    max_train: int | None = None
    max_dev: int | None = None
    max_test: int | None = None
    max_all: int | None = None
    pair_features: str = "senteval"
    standardize: bool = True
    max_iter: int = 1000
    batch_size: int = 128

    def __post_init__(self) -> None:
        if not self.c_grid or any(not (isinstance(c, (int, float)) and c > 0) for c in self.c_grid):
            raise ValueError(f"c_grid must be a non-empty tuple of positive numbers, got {self.c_grid!r}")
        if not self.seeds or any(not isinstance(s, int) for s in self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of ints, got {self.seeds!r}")
        if not isinstance(self.inner_folds, int) or self.inner_folds < 2:
            raise ValueError(f"inner_folds must be an int >= 2, got {self.inner_folds!r}")
        if self.outer_folds is not None and (not isinstance(self.outer_folds, int) or self.outer_folds < 2):
            raise ValueError(f"outer_folds must be None or an int >= 2, got {self.outer_folds!r}")
        for name in ("max_train", "max_dev", "max_test", "max_all"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or v < 2):
                raise ValueError(f"{name} must be None or an int >= 2, got {v!r}")
        if self.pair_features not in PAIR_FEATURES:
            raise ValueError(f"pair_features must be one of {PAIR_FEATURES}, got {self.pair_features!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}")

    @classmethod
    def for_scale(cls, scale: str | None = None, **overrides: Any) -> ProbeConfig:
        """The book's settings for ``BOOK_SCALE`` (or ``scale``), with ``overrides`` on top.

        ci: a few hundred examples per split, inner 3-fold; laptop: up to 1,000 training and
        500 test examples (1,000 for the cross-validated tasks), inner 5-fold -- about 18,000
        distinct sentences over the ten tasks, a few minutes for a small Transformer on two CPU
        cores; gpu: every example and SentEval's inner 10-fold.
        """
        base = pick(
            ci={"max_train": 400, "max_dev": 200, "max_test": 300, "max_all": 500, "inner_folds": 3},
            laptop={"max_train": 1000, "max_dev": 300, "max_test": 500, "max_all": 1000, "inner_folds": 5},
            gpu={"max_train": None, "max_dev": None, "max_test": None, "max_all": None, "inner_folds": 10},
            scale=scale,
        )
        return cls(**{**base, **overrides})


# --------------------------------------------------------------------------- encoding
def _as_array(out: Any, n: int) -> np.ndarray:
    """An encoder's output as a float32 [n, d] array, or a clear error."""
    if isinstance(out, torch.Tensor):
        out = out.detach().to("cpu", torch.float32).numpy()
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise TypeError(f"encode must return a tensor or array [n, d]; got {type(out).__name__}") from err
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"encode returned shape {arr.shape} for {n} sentences; it must return [n, d]")
    if not np.isfinite(arr).all():
        raise ValueError("encode returned NaN or infinite values; check the encoder (an empty sentence?)")
    return arr


class EncoderCache:
    """Wraps ``encode`` so that each distinct sentence is encoded once, in batches.

    Calling the cache with sentences returns their vectors as a float32 [n, d] array; sentences it
    has not seen are encoded in batches of ``batch_size``, sorted by length so that a padded
    encoder wastes little work. ``n_encoded`` and ``seconds`` say what the encoder cost.
    """

    def __init__(self, encode: EncodeFn, batch_size: int = 128) -> None:
        if not callable(encode):
            raise TypeError(f"encode must be a function list[str] -> [n, d], got {type(encode).__name__}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.encode, self.batch_size = encode, batch_size
        self._rows: dict[str, np.ndarray] = {}
        self.dim: int | None = None
        self.n_encoded = 0
        self.seconds = 0.0

    def __len__(self) -> int:
        return len(self._rows)

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise TypeError(f"sentence {i} is a {type(s).__name__}, not a str: {s!r}")
        todo = sorted({s for s in sentences if s not in self._rows}, key=lambda s: (len(s), s))
        t0 = time.perf_counter()
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            arr = _as_array(self.encode(list(batch)), len(batch))
            if self.dim is None:
                self.dim = arr.shape[1]
            elif arr.shape[1] != self.dim:
                raise ValueError(f"encode returned {arr.shape[1]}-d vectors after {self.dim}-d ones")
            self._rows.update(zip(batch, arr))
        self.seconds += time.perf_counter() - t0
        self.n_encoded += len(todo)
        if not sentences:
            return np.zeros((0, self.dim or 0), np.float32)
        return np.stack([self._rows[s] for s in sentences])


def pair_features(u: np.ndarray, v: np.ndarray, kind: str = "senteval") -> np.ndarray:
    """Features of a sentence pair: ``[|u-v|, u*v]`` (SentEval) or ``[u, v, |u-v|, u*v]``."""
    if u.shape != v.shape:
        raise ValueError(f"pair vectors differ in shape: {u.shape} vs {v.shape}")
    if kind == "senteval":
        return np.concatenate([np.abs(u - v), u * v], axis=1)
    if kind == "infersent":
        return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)
    raise ValueError(f"pair feature kind must be one of {PAIR_FEATURES}, got {kind!r}")


# --------------------------------------------------------------------------- simple encoders
_TOKEN = re.compile(r"\w+|[^\w\s]")


def simple_tokens(text: str) -> list[str]:
    """Lower-cased words and punctuation marks (the tokenisation of the bag-of-words encoders)."""
    return _TOKEN.findall(text.lower())


class RandomBowEncoder:
    """A bag of random word vectors: each token gets a fixed Gaussian vector (seeded by a hash of
    the token), a sentence is their mean -- a random projection of its bag of words. It needs no
    data, so it is the harness's speed test and the floor every learned encoder should beat."""

    def __init__(self, dim: int = 300, seed: int = 0) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        self.dim, self.seed = dim, seed
        self._vectors: dict[str, np.ndarray] = {}

    def _vector(self, token: str) -> np.ndarray:
        vec = self._vectors.get(token)
        if vec is None:
            h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            vec = np.random.default_rng([self.seed, h]).standard_normal(self.dim).astype(np.float32)
            self._vectors[token] = vec
        return vec

    def __call__(self, sentences: list[str]) -> np.ndarray:
        out = np.zeros((len(sentences), self.dim), np.float32)
        for i, s in enumerate(sentences):
            toks = simple_tokens(s)
            if toks:
                out[i] = np.mean([self._vector(t) for t in toks], axis=0)
        return out


class MeanWordVectors:
    """The mean of a sentence's word vectors (words not in ``words`` are skipped; a sentence with
    no known word gets the zero vector) -- the bag-of-vectors baseline of SentEval's tables."""

    def __init__(self, vectors: np.ndarray | torch.Tensor, words: Sequence[str]) -> None:
        mat = vectors.detach().cpu().numpy() if isinstance(vectors, torch.Tensor) else np.asarray(vectors)
        if mat.ndim != 2 or mat.shape[0] != len(words):
            raise ValueError(f"vectors {mat.shape} must be [len(words)={len(words)}, d]")
        self.vectors = mat.astype(np.float32, copy=False)
        self.index = {}
        for i, w in enumerate(words):
            self.index.setdefault(w, i)

    def __call__(self, sentences: list[str]) -> np.ndarray:
        out = np.zeros((len(sentences), self.vectors.shape[1]), np.float32)
        for i, s in enumerate(sentences):
            rows = [self.index[t] for t in simple_tokens(s) if t in self.index]
            if rows:
                out[i] = self.vectors[rows].mean(axis=0)
        return out


# --------------------------------------------------------------------------- results
@dataclass
class TaskResult:
    """One task's score.

    Attributes:
        task: task name (``"mr"``...).
        metric: ``"accuracy"`` (percent) or ``"spearman"`` (ρ x 100, the trained probe).
        mean, sd: cross-validated tasks: mean and sd over the folds; split tasks: the score of
            the probe trained on the whole training set, and the sd over the bootstrap runs.
        runs: one score per outer fold (cross-validated tasks) or per bootstrap resample.
        n_train, n_test: examples the probe was trained and scored on (per run).
        extra: further scores, e.g. ``{"f1": ..., "f1 sd": ...}`` for MRPC, ``{"cosine": ...,
            "pearson": ...}`` for the relatedness tasks.
        c_chosen: the ``C`` picked: per outer fold (cross-validated tasks), else once (the
            bootstrap runs reuse it).
    """

    task: str
    metric: str
    mean: float
    sd: float
    runs: list[float]
    n_train: int
    n_test: int
    extra: dict[str, float] = field(default_factory=dict)
    c_chosen: list[float] = field(default_factory=list)


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(xs, dtype=np.float64)
    return float(arr.mean()), float(arr.std(ddof=1)) if arr.size > 1 else 0.0


@dataclass
class SentEvalReport:
    """All tasks of one encoder: :meth:`frame` for reading, :meth:`scores` for the running table."""

    name: str
    results: dict[str, TaskResult]
    config: ProbeConfig
    seconds: float
    encode_seconds: float
    n_sentences: int
    dim: int

    def frame(self) -> pd.DataFrame:
        """One line per task: metric, mean, sd, runs, sizes, chosen C and the extra scores."""
        rows = []
        for r in self.results.values():
            row = {"task": DISPLAY.get(r.task, r.task), "metric": r.metric, "mean": r.mean,
                   "sd": r.sd, "runs": len(r.runs), "n_train": r.n_train, "n_test": r.n_test,
                   "C": "/".join(f"{c:g}" for c in sorted(set(r.c_chosen)))}
            row.update(r.extra)
            rows.append(row)
        return pd.DataFrame(rows).set_index("task")

    def scores(self) -> dict[str, float]:
        """Flat scores for a table row: ``"MR"``, ``"MR sd"``, ..., ``"MRPC F1"``,
        ``"STS-B"`` (trained probe ρ), ``"STS-B cos"`` (unsupervised cosine ρ), ...; rounded to
        2 decimals."""
        out: dict[str, float] = {}
        for r in self.results.values():
            key = DISPLAY.get(r.task, r.task)
            out[key], out[f"{key} sd"] = r.mean, r.sd
            if "f1" in r.extra:
                out[f"{key} F1"], out[f"{key} F1 sd"] = r.extra["f1"], r.extra["f1 sd"]
            if "cosine" in r.extra:
                out[f"{key} cos"] = r.extra["cosine"]
        return {k: round(float(v), 2) for k, v in out.items()}


# --------------------------------------------------------------------------- probes
def _standardize(train: np.ndarray, *others: np.ndarray, on: bool = True) -> list[np.ndarray]:
    if not on:
        return [train, *others]
    mu = train.mean(axis=0)
    sd = train.std(axis=0)
    sd[sd < 1e-8] = 1.0  # a constant feature stays constant (zero) instead of dividing by 0
    return [(x - mu) / sd for x in (train, *others)]


def _c_path(x_tr, y_tr, cfg: ProbeConfig, sample_weight=None):
    """Fit logistic regression along ``cfg.c_grid`` (warm-started from the previous ``C``);
    yields ``(C, model)`` -- the caller scores each model on its own held-out data."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=cfg.max_iter, warm_start=True)
    for c in sorted(cfg.c_grid):
        model.set_params(C=c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x_tr, y_tr, sample_weight=sample_weight)
        yield c, model


def _fit_predict_classes(x_tr, y_tr, x_te, c: float, cfg: ProbeConfig) -> np.ndarray:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    x_tr, x_te = _standardize(x_tr, x_te, on=cfg.standardize)
    model = LogisticRegression(C=c, max_iter=cfg.max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_tr, y_tr)
    return model.predict(x_te)


def choose_c_on_split(x_tr, y_tr, x_dev, y_dev, cfg: ProbeConfig) -> float:
    """The ``C`` of the grid with the best dev accuracy (ties: the smallest ``C``)."""
    x_tr, x_dev = _standardize(x_tr, x_dev, on=cfg.standardize)
    best_c, best = None, -1.0
    for c, model in _c_path(x_tr, y_tr, cfg):
        acc = float((model.predict(x_dev) == y_dev).mean())
        if acc > best:
            best_c, best = c, acc
    return float(best_c)


def choose_c_kfold(x, y, cfg: ProbeConfig, seed: int = 0) -> float:
    """The ``C`` with the best mean accuracy over an inner stratified k-fold (SentEval's inner
    validation; ties: the smallest ``C``)."""
    from sklearn.model_selection import StratifiedKFold

    smallest = int(np.unique(y, return_counts=True)[1].min()) if y.size else 0
    k = min(cfg.inner_folds, smallest)
    if k < 2:
        raise ValueError(f"a class has only {smallest} training example(s): too few for inner "
                         "cross-validation; use more data (max_train / max_all)")
    grid = sorted(cfg.c_grid)
    acc = np.zeros(len(grid))
    for tr, ev in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(x, y):
        x_tr, x_ev = _standardize(x[tr], x[ev], on=cfg.standardize)
        for j, (_, model) in enumerate(_c_path(x_tr, y[tr], cfg)):
            acc[j] += float((model.predict(x_ev) == y[ev]).mean())
    return float(grid[int(np.argmax(acc))])


def _f1_binary(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    tp = int(((y_pred == 1) & (y_true == 1)).sum())
    fp = int(((y_pred == 1) & (y_true == 0)).sum())
    fn = int(((y_pred == 0) & (y_true == 1)).sum())
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def _bins_targets(y: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SentEval's soft targets as weighted hard rows: score y -> bins floor(y), floor(y)+1 with
    weights 1-frac, frac. Returns (row index, bin, weight) for the non-zero weights."""
    y = np.clip(y, lo, hi)
    fl = np.minimum(np.floor(y), hi).astype(int)
    frac = y - fl
    rows = np.r_[np.arange(y.size), np.arange(y.size)]
    bins = np.r_[fl, np.minimum(fl + 1, hi)]
    weights = np.r_[1.0 - frac, frac]
    keep = weights > 1e-12
    return rows[keep], bins[keep], weights[keep]


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = np.asarray(x, np.float64) - np.mean(x)
    y = np.asarray(y, np.float64) - np.mean(y)
    d = math.sqrt(float(x @ x) * float(y @ y))
    return float("nan") if d == 0 else float(x @ y / d)


def relatedness_probe(x_tr, y_tr, x_dev, y_dev, x_te, cfg: ProbeConfig,
                      c: float | None = None) -> tuple[np.ndarray, float]:
    """SentEval's relatedness probe: softmax over integer score bins, trained on soft targets;
    ``C`` chosen by Pearson's r on dev (or the given ``c``). Returns (test predictions, C)."""
    lo, hi = math.floor(y_tr.min()), math.ceil(y_tr.max())
    if hi <= lo:
        raise ValueError("the training scores are all equal; the relatedness probe needs a spread")
    x_tr, x_dev, x_te = _standardize(x_tr, x_dev, x_te, on=cfg.standardize)
    rows, bins, w = _bins_targets(y_tr, lo, hi)
    grid_cfg = cfg if c is None else ProbeConfig(c_grid=(c,), max_iter=cfg.max_iter)
    best = (-2.0, None, None)
    for c_try, model in _c_path(x_tr[rows], bins, grid_cfg, sample_weight=w):
        classes = model.classes_.astype(np.float64)
        r = _pearson(model.predict_proba(x_dev) @ classes, y_dev) if c is None else 0.0
        if r > best[0]:
            best = (r, c_try, model.predict_proba(x_te) @ classes)
    return best[2], float(best[1])


# --------------------------------------------------------------------------- toy tasks
_TOY_WORDS = tuple(f"w{i}" for i in range(200))
_TOY_CUES = (("dull", "bad", "awful", "boring"), ("great", "good", "superb", "fun"),
             ("when", "where", "who", "why"))


def toy_task(name: str = "toy", *, kind: str = "single", n_classes: int = 2, regression: bool = False,
             sizes: dict[str, int] | None = None, noise: float = 0.1, seed: int = 0) -> TaskData:
    """A small generated task with the shape of a real one (for tests, exercises, speed checks).

    Single-sentence classification: each sentence holds filler words and one cue word of its class
    (with probability ``noise`` the cue of another class). Pair tasks: sentence b shares a share of
    its words with a; the label (paraphrase or not) or the score (0-5, ``regression=True``) follows
    that share. ``sizes`` maps split -> examples, e.g. ``{"all": 500}`` (cross-validated, like MR)
    or ``{"train": 400, "dev": 100, "test": 200}``.
    """
    if kind not in ("single", "pair"):
        raise ValueError(f"kind must be 'single' or 'pair', got {kind!r}")
    if kind == "single" and regression:
        raise ValueError("a regression toy task must be a pair task")
    if not 2 <= n_classes <= len(_TOY_CUES):
        raise ValueError(f"n_classes must be 2..{len(_TOY_CUES)}, got {n_classes}")
    sizes = sizes or {"train": 300, "dev": 100, "test": 200}
    rng = np.random.default_rng(seed)

    def filler(k: int) -> list[str]:
        return [_TOY_WORDS[i] for i in rng.integers(0, len(_TOY_WORDS), size=k)]

    def example() -> Example:
        if kind == "single":
            label = int(rng.integers(n_classes))
            cue_class = label if rng.random() >= noise else int(rng.integers(n_classes))
            words = filler(int(rng.integers(4, 10)))
            words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(_TOY_CUES[cue_class])))
            return Example(" ".join(words), label)
        a = filler(int(rng.integers(6, 12)))
        share = float(rng.random())
        b = [w if rng.random() < share else filler(1)[0] for w in a]
        rng.shuffle(b)
        if regression:
            score = float(np.clip(5 * share + rng.normal(0, 5 * noise), 0, 5))
            return Example(" ".join(a), round(score, 2), " ".join(b))
        label = int(share > 0.5) if rng.random() >= noise else int(rng.integers(2))
        return Example(" ".join(a), label, " ".join(b))

    splits = {split: [example() for _ in range(n)] for split, n in sizes.items()}
    labels = None if regression else (tuple(f"class{i}" for i in range(n_classes)) if kind == "single"
                                      else ("different", "paraphrase"))
    metric = "spearman" if regression else "accuracy"
    return TaskData(name, splits, labels, kind, metric, cv_folds=10 if "all" in splits else None)


# --------------------------------------------------------------------------- the harness
def _subsample(examples: list[Example], n: int | None, seed: int) -> list[Example]:
    if n is None or len(examples) <= n:
        return list(examples)
    idx = np.sort(np.random.default_rng(seed).choice(len(examples), size=n, replace=False))
    return [examples[i] for i in idx]


def _check_task(task: TaskData) -> None:
    if not isinstance(task, TaskData):
        raise TypeError(f"expected a TaskData (or a task name), got {type(task).__name__}")
    if task.kind not in ("single", "pair"):
        raise ValueError(f"task {task.name!r}: kind must be 'single' or 'pair', got {task.kind!r}")
    if "all" not in task.splits and not {"train", "test"} <= set(task.splits):
        raise ValueError(f"task {task.name!r} needs the split 'all' or 'train' and 'test'; "
                         f"it has {sorted(task.splits)}")
    for split, exs in task.splits.items():
        if not exs:
            raise ValueError(f"task {task.name!r}: split {split!r} is empty")
        if task.kind == "pair" and any(e.text_b is None for e in exs):
            raise ValueError(f"task {task.name!r} is a pair task but split {split!r} has an example "
                             "without text_b")
    if task.label_names is None and "all" in task.splits:
        raise ValueError(f"regression task {task.name!r} needs train/dev/test splits, not 'all'")


def _features(task: TaskData, exs: list[Example], cache: EncoderCache, cfg: ProbeConfig):
    u = cache([e.text for e in exs])
    if task.kind == "single":
        return u, None, u
    v = cache([e.text_b for e in exs])
    return u, v, pair_features(u, v, cfg.pair_features)


def _labels(task: TaskData, exs: list[Example]) -> np.ndarray:
    if task.label_names is None:
        return np.array([float(e.label) for e in exs])
    y = np.array([int(e.label) for e in exs])
    if y.min() < 0 or y.max() >= len(task.label_names):
        raise ValueError(f"task {task.name!r}: a label is outside 0..{len(task.label_names) - 1}")
    return y


def _classify_cv(task: TaskData, cache: EncoderCache, cfg: ProbeConfig) -> TaskResult:
    exs = _subsample(task.splits["all"], cfg.max_all, 0)
    x = _features(task, exs, cache, cfg)[2]
    y = _labels(task, exs)
    k = cfg.outer_folds or task.cv_folds or 10
    accs, cs = [], []
    for fold, (tr, te) in enumerate(cv_folds(exs, k=k, seed=cfg.seeds[0])):
        tr, te = np.asarray(tr), np.asarray(te)
        c = choose_c_kfold(x[tr], y[tr], cfg, seed=cfg.seeds[0] + fold)
        pred = _fit_predict_classes(x[tr], y[tr], x[te], c, cfg)
        accs.append(100.0 * float((pred == y[te]).mean()))
        cs.append(c)
    mean, sd = _mean_sd(accs)
    return TaskResult(task.name, "accuracy", mean, sd, accs, len(exs) - len(exs) // k, len(exs) // k,
                      c_chosen=cs)


def _bootstrap(n: int, seed: int) -> np.ndarray:
    """Indices of a bootstrap resample (n draws with replacement), seeded."""
    return np.random.default_rng([seed, 7919]).integers(0, n, size=n)


def _classify_split(task: TaskData, cache: EncoderCache, cfg: ProbeConfig) -> TaskResult:
    test = _subsample(task.splits["test"], cfg.max_test, 0)
    x_te, y_te = _features(task, test, cache, cfg)[2], _labels(task, test)
    dev = _subsample(task.splits["dev"], cfg.max_dev, 0) if "dev" in task.splits else None
    if dev is not None:
        x_dev, y_dev = _features(task, dev, cache, cfg)[2], _labels(task, dev)
    train = _subsample(task.splits["train"], cfg.max_train, 0)
    x_all, y_all = _features(task, train, cache, cfg)[2], _labels(task, train)

    if dev is not None:
        c = choose_c_on_split(x_all, y_all, x_dev, y_dev, cfg)
    else:
        c = choose_c_kfold(x_all, y_all, cfg, seed=cfg.seeds[0])

    def run(idx: np.ndarray | None) -> tuple[float, float, float]:
        x_tr, y_tr = (x_all, y_all) if idx is None else (x_all[idx], y_all[idx])
        pred = _fit_predict_classes(x_tr, y_tr, x_te, c, cfg)
        return 100.0 * float((pred == y_te).mean()), 100.0 * _f1_binary(y_te, pred), c

    acc, f1, _ = run(None)
    boot = [run(_bootstrap(len(train), s)) for s in cfg.seeds]  # at the C chosen above
    extra = {}
    if task.name == "mrpc" or task.metric == "f1":
        extra["f1"], extra["f1 sd"] = f1, _mean_sd([b[1] for b in boot])[1]
    return TaskResult(task.name, "accuracy", acc, _mean_sd([b[0] for b in boot])[1], [b[0] for b in boot],
                      len(train), len(test), extra, [c])


def _relatedness(task: TaskData, cache: EncoderCache, cfg: ProbeConfig) -> TaskResult:
    if "dev" not in task.splits:
        raise ValueError(f"relatedness task {task.name!r} needs a dev split to choose C")
    if task.kind != "pair":
        raise ValueError(f"relatedness task {task.name!r} must be a pair task")
    test = _subsample(task.splits["test"], cfg.max_test, 0)
    dev = _subsample(task.splits["dev"], cfg.max_dev, 0)
    u_te, v_te, x_te = _features(task, test, cache, cfg)
    y_te = _labels(task, test)
    x_dev, y_dev = _features(task, dev, cache, cfg)[2], _labels(task, dev)
    # unsupervised: cosine of the two sentence vectors (a zero vector has cosine 0)
    norms = np.linalg.norm(u_te, axis=1) * np.linalg.norm(v_te, axis=1)
    cos = np.where(norms > 0, (u_te * v_te).sum(axis=1) / np.maximum(norms, 1e-30), 0.0)
    train = _subsample(task.splits["train"], cfg.max_train, 0)
    x_all, y_all = _features(task, train, cache, cfg)[2], _labels(task, train)

    def run(idx: np.ndarray | None, c: float | None) -> tuple[float, float, float]:
        x_tr, y_tr = (x_all, y_all) if idx is None else (x_all[idx], y_all[idx])
        pred, c = relatedness_probe(x_tr, y_tr, x_dev, y_dev, x_te, cfg, c)
        return 100.0 * spearman(pred, y_te), 100.0 * _pearson(pred, y_te), c

    rho, r, c = run(None, None)
    boot = [run(_bootstrap(len(train), s), c) for s in cfg.seeds]  # at the C chosen above
    extra = {"cosine": 100.0 * spearman(cos, y_te), "cosine pearson": 100.0 * _pearson(cos, y_te),
             "pearson": r}
    return TaskResult(task.name, "spearman", rho, _mean_sd([b[0] for b in boot])[1], [b[0] for b in boot],
                      len(train), len(test), extra, [c])


def evaluate_task(task: TaskData, cache: EncoderCache, config: ProbeConfig) -> TaskResult:
    """Probe one task with the vectors of ``cache`` (see the module docstring for the protocol)."""
    _check_task(task)
    if task.label_names is None:
        return _relatedness(task, cache, config)
    if "all" in task.splits:
        return _classify_cv(task, cache, config)
    return _classify_split(task, cache, config)


def _resolve(tasks: Iterable[str | TaskData]) -> list[TaskData]:
    out = []
    for t in tasks:
        if isinstance(t, str):
            from ..data.tasks import load_task

            t = load_task(t)
        if not isinstance(t, TaskData):
            raise TypeError(f"tasks must be task names or TaskData objects, got {type(t).__name__}")
        out.append(t)
    if not out:
        raise ValueError("no tasks given")
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise ValueError(f"a task is given twice: {names}")
    return out


def senteval(
    encode: EncodeFn | EncoderCache,
    tasks: Iterable[str | TaskData] = SENTEVAL_TASKS,
    *,
    name: str = "encoder",
    config: ProbeConfig | None = None,
    progress: bool = False,
) -> SentEvalReport:
    """Run the SentEval-style probes of ``tasks`` on the sentence vectors of ``encode``.

    Args:
        encode: ``encode(list[str]) -> [n, d]`` (tensor or array), or an :class:`EncoderCache`
            to share encodings between calls.
        tasks: task names (loaded with ``companion.data.load_task``) or ``TaskData`` objects.
        name: the encoder's name in the report.
        config: the probes' settings; default :meth:`ProbeConfig.for_scale` (``BOOK_SCALE``).
        progress: print one line per task as it finishes.

    Raises:
        TypeError / ValueError: for a bad encoder output, a malformed task, or a bad config.
    """
    config = ProbeConfig.for_scale() if config is None else config
    if not isinstance(config, ProbeConfig):
        raise TypeError(f"config must be a ProbeConfig, got {type(config).__name__}")
    cache = encode if isinstance(encode, EncoderCache) else EncoderCache(encode, config.batch_size)
    task_list = _resolve(tasks)
    t0 = time.perf_counter()
    results: dict[str, TaskResult] = {}
    for task in task_list:
        t1 = time.perf_counter()
        results[task.name] = res = evaluate_task(task, cache, config)
        if progress:
            print(f"{name}: {DISPLAY.get(task.name, task.name):7s} {res.mean:6.2f} ± {res.sd:4.2f} "
                  f"({time.perf_counter() - t1:.1f} s)", flush=True)
    return SentEvalReport(name, results, config, time.perf_counter() - t0, cache.seconds,
                          len(cache), cache.dim or 0)


def config_summary(config: ProbeConfig) -> dict[str, Any]:
    """The settings that decide a score, JSON-friendly (stored with a table row)."""
    d = {k: getattr(config, k) for k in ("seeds", "inner_folds", "outer_folds", "max_train", "max_dev",
                                         "max_test", "max_all", "pair_features", "standardize")}
    d["c_grid"] = [float(c) for c in config.c_grid]
    d["seeds"] = list(config.seeds)
    return d


__all__ = [
    "C_GRID", "DISPLAY", "PAIR_FEATURES", "SENTEVAL_TASKS", "EncoderCache", "MeanWordVectors",
    "ProbeConfig", "RandomBowEncoder", "SentEvalReport", "TaskResult", "choose_c_kfold",
    "choose_c_on_split", "config_summary", "evaluate_task", "pair_features", "relatedness_probe",
    "senteval", "simple_tokens", "toy_task",
]
