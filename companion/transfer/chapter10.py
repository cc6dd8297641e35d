"""Chapter 10's experiments, so that the notebooks' cells stay short.

* :class:`Sizes` / :func:`sizes` -- every size of both notebooks per ``BOOK_SCALE``;
* :func:`minilm` -- all-MiniLM-L6-v2 in our encoder (optionally its bottom layers only) and its
  WordPiece ``tokenize``;
* :func:`transfer_runs` / :func:`transfer_frame` -- the transfer table: every method on one
  task, seeds, trainable parameters, storage per task, time;
* :class:`TransferSizes` / :func:`transfer_sizes` -- notebook 10a's sizes (10b keeps
  :class:`Sizes`); :func:`task_split` -- seeded subsets of TREC, AG News, ...;
* :func:`lr_choice` / :func:`best_lrs` / :func:`stored_lr_choice` -- each method's learning
  rate chosen on a dev split (run once by ``benchmarks/ch10a_lr_choice.py`` and stored);
* :func:`stored_seeds` / :func:`add_stored_seeds` -- AG News's second seed, run once by
  ``benchmarks/ch10a_seeds.py`` and stored, joined to the live seed when the sizes agree;
* :func:`claim_close` -- "within ``margin`` points of full fine-tuning", with the spread;
* :func:`schedule_runs` / :func:`multitask_runs` -- warm-up and layer-wise decay variants,
  MT-DNN's shared encoder, reusing the table's runs where the settings agree;
* :func:`curve_runs` / :func:`data_advantage` -- Le Scao & Rush's data-points curve and the
  horizontal distance between two curves;
* :func:`draw_peft` -- where each method puts its parameters in a Transformer block.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import FancyBboxPatch

from ..scale import pick
from .finetune import FTConfig, RunResult, run_classifier, run_features
from .peft import count

# learning rates per method: a few hundred steps would want less; ours are a few dozen
LR = {"full": 1e-4, "features": 1e-2, "bitfit": 1e-3, "adapters": 1e-3, "lora": 1e-3, "prefix": 3e-3,
      "prompt": 3e-2, "ptuning": 3e-3}
NAMES = {"features": "feature extraction (frozen)", "full": "full fine-tuning", "bitfit": "BitFit",
         "adapters": "adapters (m=16)", "lora": "LoRA (r=4, q & v)", "prefix": "prefix tuning (8)",
         "prompt": "prompt tuning (8)", "ptuning": "P-tuning (8, LSTM)"}


@dataclass(frozen=True)
class Sizes:
    """Everything that changes with ``BOOK_SCALE``."""

    n_layer: int | None          # MiniLM layers kept (None: all 6)
    max_len: int                 # tokens per input
    n_train: int                 # labelled SST-2 examples for the transfer table
    n_test: int                  # test examples scored
    epochs: int
    batch_size: int
    seeds: tuple[int, ...]
    curve_ns: tuple[int, ...]    # labelled examples along the data-points curve
    curve_steps: int             # optimizer steps per point of the curve (fixed, as in LM-BFF)
    n_unlabelled: int            # PET's unlabelled set
    n_icl: int                   # queries scored in context


def sizes(scale: str | None = None) -> Sizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``); ``gpu`` is written but unrun."""
    return pick(
        ci=Sizes(1, 32, 32, 64, 1, 16, (0,), (8, 32), 2, 32, 24),
        laptop=Sizes(None, 40, 128, 400, 3, 16, (0, 1), (16, 64, 256), 16, 256, 200),
        gpu=Sizes(None, 64, 2000, 872, 3, 32, (0, 1, 2), (16, 32, 64, 128, 256, 512, 1024), 200, 2000, 872),
        scale=scale)


def minilm(n_layer: int | None = None):
    """``(encoder, tokenize)``: all-MiniLM-L6-v2 in our :class:`BertEncoder` (its bottom
    ``n_layer`` blocks when given) and its WordPiece tokenizer."""
    from ..transformer.hf import load_minilm, minilm_dir
    from ..transformer.tokenizers import WordPiece

    enc = load_minilm()
    if n_layer is not None:
        enc.blocks = enc.blocks[:n_layer]
        enc.config = dataclasses.replace(enc.config, n_layer=n_layer)
    wp = WordPiece.from_file(minilm_dir() / "vocab.txt")
    return enc, wp.ids


@dataclass(frozen=True)
class TransferSizes:
    """Notebook 10a's sizes per ``BOOK_SCALE`` (10b keeps :class:`Sizes`)."""

    n_layer: int | None          # MiniLM layers kept (None: all 6)
    max_len: int                 # tokens per input
    n_train: int                 # labelled examples per task
    n_test: int                  # test examples scored per task
    epochs: int
    batch_size: int
    seeds: tuple[int, ...]       # seeds of feature extraction, full FT, BitFit, adapters, LoRA
    seeds_side: tuple[int, ...]   # seeds of the side runs: prefix, prompt and P-tuning, AG News


def transfer_sizes(scale: str | None = None) -> TransferSizes:
    """10a's sizes at ``scale`` (default ``BOOK_SCALE``); ``gpu`` is written but unrun."""
    return pick(
        ci=TransferSizes(1, 32, 32, 32, 1, 16, (0,), (0,)),
        laptop=TransferSizes(None, 40, 128, 200, 3, 16, (0, 1), (0,)),
        gpu=TransferSizes(None, 64, 2000, 872, 3, 32, (0, 1, 2), (0, 1, 2)),
        scale=scale)


def ft_config(method: str, s: Sizes, seed: int, **kw) -> FTConfig:
    """One run's settings: the sizes of ``s``, the method's learning rate, warm-up over 10 % of
    the steps unless ``kw`` says otherwise."""
    base = {"epochs": s.epochs, "lr": LR[method], "batch_size": s.batch_size, "max_len": s.max_len, "warmup": 0.1}
    return FTConfig(seed=seed, **{**base, **kw})


def transfer_runs(encoder, tokenize, train, test, s: Sizes | TransferSizes, methods: Sequence[str], n_out: int = 2,
                  lrs: dict[str, float] | None = None, head_lr: float | None = None,
                  seeds: Sequence[int] | None = None) -> dict[str, list[RunResult]]:
    """Every method on ``train``/``test`` (an ``n_out``-class task), once per seed: ``s.seeds``
    for feature extraction, full fine-tuning, BitFit, adapters and LoRA, ``s.seeds_side``
    (when ``s`` has it) for the prompt-like methods. ``lrs`` overrides :data:`LR` per method;
    ``head_lr`` is the task head's rate (None: the method's); ``seeds`` overrides the seeds
    of every method. The frozen encoder's features are computed once and shared by the seeds."""
    from .finetune import encode, layer_features

    lrs = {**LR, **(lrs or {})}
    out: dict[str, list[RunResult]] = {}
    feats = None
    for m in methods:
        out[m] = []
        side = getattr(s, "seeds_side", s.seeds) if m in ("prefix", "prompt", "ptuning") else s.seeds
        for seed in side if seeds is None else seeds:
            cfg = ft_config(m, s, seed, lr=lrs[m], head_lr=head_lr)
            if m == "features":
                if feats is None:
                    feats = tuple(layer_features(encoder, encoder.config, encode(tokenize, d, s.max_len))
                                  for d in (train, test))
                out[m].append(run_features(encoder, tokenize, train, test, n_out, cfg, epochs=20, features=feats))
            else:
                out[m].append(run_classifier(encoder, tokenize, train, test, n_out, cfg, method=m))
    return out


def lr_choice(encoder, tokenize, train, dev, s: Sizes | TransferSizes, grid: dict[str, Sequence[float]],
              head_lr: float | None = None, seed: int = 0) -> pd.DataFrame:
    """Dev accuracy of each method at each learning rate of ``grid`` (one seed): the data for
    choosing a rate per method without looking at the test set."""
    rows = []
    for m, rates in grid.items():
        for lr in rates:
            r = run_classifier(encoder, tokenize, train, dev, 2, ft_config(m, s, seed, lr=lr, head_lr=head_lr),
                               method=m)
            rows.append({"method": m, "lr": lr, "head_lr": head_lr, "dev accuracy": r.score,
                         "final loss": float(np.mean(r.losses[-4:]))})
    return pd.DataFrame(rows)


def best_lrs(choice: pd.DataFrame) -> dict[str, float]:
    """The rate with the best dev accuracy per method (ties: the smaller rate)."""
    best = choice.sort_values(["method", "dev accuracy", "lr"], ascending=[True, False, True])
    return {m: float(d.lr.iloc[0]) for m, d in best.groupby("method")}


LR_CHOICE_FILE = Path(__file__).with_name("lr_choice.json")


def stored_lr_choice(path: Path | None = None) -> tuple[pd.DataFrame, dict]:
    """The stored dev-split learning-rate choice (``benchmarks/ch10a_lr_choice.py`` wrote it):
    the grid's dev accuracies and the run's description."""
    import json

    path = Path(path or LR_CHOICE_FILE)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python benchmarks/ch10a_lr_choice.py {path}`")
    data = json.loads(path.read_text())
    return pd.DataFrame(data["rows"]), data["meta"]


SEEDS_FILE = Path(__file__).with_name("stored_seeds.json")
STORED_SIZE_KEYS = ("n_layer", "max_len", "n_train", "n_test", "epochs", "batch_size")


def stored_seeds(path: Path | None = None) -> dict:
    """Extra seeds of 10a's side runs, stored by ``benchmarks/ch10a_seeds.py``: ``{"meta": the
    run's sizes, rates, command, date and CPU time, "tasks": {task: {seed: {method: accuracy}}}}``."""
    import json

    path = Path(path or SEEDS_FILE)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `BOOK_SCALE=laptop python benchmarks/ch10a_seeds.py {path}`")
    return json.loads(path.read_text())


def add_stored_seeds(runs: dict[str, list[RunResult]], stored: dict, task: str, s: TransferSizes,
                     live: Sequence[int]) -> tuple[dict[str, list[RunResult]], list[int]]:
    """``runs`` (one result per seed in ``live``) plus the stored seeds of ``task`` that are not
    live, as results without predictions, when the stored run used ``s``'s sizes (else ``runs``
    unchanged: a ``ci`` run never mixes with stored ``laptop`` numbers). Returns the runs and the
    seeds added."""
    meta = stored["meta"]
    if any(meta[k] != getattr(s, k) for k in STORED_SIZE_KEYS):
        return runs, []
    extra = sorted(int(k) for k in stored["tasks"][task] if int(k) not in live)
    out = {m: list(rs) for m, rs in runs.items()}
    for seed in extra:
        scores = stored["tasks"][task][str(seed)]
        for m, rs in out.items():
            if m not in scores:
                raise KeyError(f"the stored {task} seed {seed} has no {m!r} run; rerun benchmarks/ch10a_seeds.py")
            rs.append(RunResult(m, np.empty(0), float(scores[m]), rs[0].trainable, float("nan"), [], rs[0].stored))
    return out, extra


def task_split(name: str, n_train: int, n_test: int, seed: int = 0) -> tuple[list, list]:
    """Seeded random subsets of a registered task's train and test splits (``trec``,
    ``ag_news``, ...): ``n_train`` and ``n_test`` examples."""
    from ..data.tasks import load_task

    task = load_task(name)
    rng = np.random.default_rng(seed)
    train, test = task.splits["train"], task.splits["test"]
    if n_train > len(train) or n_test > len(test):
        raise ValueError(f"{name} has {len(train)} train and {len(test)} test examples; asked for {n_train} and "
                         f"{n_test}")
    return ([train[i] for i in rng.permutation(len(train))[:n_train]],
            [test[i] for i in rng.permutation(len(test))[:n_test]])


def transfer_frame(runs: dict[str, list[RunResult]], pretrained_params: int) -> pd.DataFrame:
    """The transfer table: accuracy (mean, sd over seeds), trainable parameters (the head
    included), their share of the pre-trained model, megabytes to keep per task (fp32; a
    prompt encoder or prefix MLP counts as the vectors it makes, :func:`.peft.stored_params`)
    and seconds per run."""
    rows = {}
    for m, rs in runs.items():
        acc = [r.score for r in rs]
        n = rs[0].trainable
        kept = rs[0].stored if rs[0].stored is not None else n
        rows[NAMES.get(m, m)] = {
            "accuracy": round(float(np.mean(acc)), 1),
            "sd": round(float(np.std(acc, ddof=1)), 1) if len(acc) > 1 else float("nan"),
            "trainable": n, "% of model": round(100 * n / pretrained_params, 3),
            "MB per task": round(4 * kept / 1e6, 3), "s per run": round(float(np.mean([r.seconds for r in rs])), 1)}
    return pd.DataFrame.from_dict(rows, orient="index")


def claim_close(runs: dict[str, list[RunResult]], method: str, margin: float = 2.0, ref: str = "full",
                sd: float | None = None) -> dict:
    """Is ``method`` within ``margin`` accuracy points of ``ref``? The gap (mean over seeds), its
    spread (the sd of the per-seed gaps, seeds paired; or ``sd``, a spread measured elsewhere,
    for a run with one seed) and the verdict the spread supports."""
    a = np.array([r.score for r in runs[method]])
    b = np.array([r.score for r in runs[ref]])
    if len(a) != len(b):
        raise ValueError(f"{method} has {len(a)} runs and {ref} {len(b)}: the seeds must be paired")
    gap = a - b
    if sd is None:
        sd = float(np.std(gap, ddof=1)) if len(gap) > 1 else float("nan")
    s2 = 0.0 if math.isnan(sd) else 2 * sd
    verdict = "holds" if gap.mean() - s2 > -margin else ("fails" if gap.mean() + s2 < -margin
                                                          else "inside the noise")
    return {"gap": float(gap.mean()), "sd": float(sd), "verdict": verdict}


def multitask_runs(encoder, tokenize, tasks: dict[str, tuple[list, list]], s: Sizes | TransferSizes,
                   seeds: Sequence[int] | None = None, single: dict[str, dict[int, float]] | None = None,
                   lr: float | None = None, head_lr: float | None = None) -> pd.DataFrame:
    """Accuracy per task and seed of single-task fine-tuning (one model per task) and of one
    multi-task model (shared encoder, a head per task, batches of all tasks interleaved).
    ``single``: task -> {seed: accuracy} of single-task runs made earlier with the same
    settings (reused, not rerun); ``lr`` defaults to ``LR["full"]``."""
    import copy

    from .finetune import MultiTask, encode, multitask_batches, predict_task, train

    n_out = {t: 1 + max(int(e.label) for e in tr + te) for t, (tr, te) in tasks.items()}
    lr = LR["full"] if lr is None else lr
    rows = []
    for seed in (s.seeds if seeds is None else seeds):
        cfg = ft_config("full", s, seed, lr=lr, head_lr=head_lr)
        for t, (tr, te) in tasks.items():
            acc = (single or {}).get(t, {}).get(seed)
            if acc is None:
                acc = run_classifier(encoder, tokenize, tr, te, n_out[t], cfg).score
            rows.append({"task": t, "seed": seed, "setup": "single-task", "accuracy": acc})
        enc = copy.deepcopy(encoder).requires_grad_(True)
        mt = MultiTask(enc, n_out, seed=seed)
        data = {t: (encode(tokenize, tr, s.max_len), [int(e.label) for e in tr]) for t, (tr, _) in tasks.items()}
        train(mt, multitask_batches(encoder.config, data, s.batch_size, seed), cfg)
        for t, (_, te) in tasks.items():
            pred = predict_task(mt, encoder.config, t, encode(tokenize, te, s.max_len)).argmax(1)
            acc = 100 * float((pred == np.array([int(e.label) for e in te])).mean())
            rows.append({"task": t, "seed": seed, "setup": "multi-task", "accuracy": acc})
    return pd.DataFrame(rows)


def schedule_runs(encoder, tokenize, train, test, n_out: int, s: Sizes | TransferSizes,
                  variants: dict[str, dict], seeds: Sequence[int], lr: float, head_lr: float | None = None,
                  base: dict[int, float] | None = None) -> pd.DataFrame:
    """Full fine-tuning under each schedule of ``variants`` (name -> :class:`FTConfig`
    overrides, e.g. ``{"warmup": 0.0}``) for each seed: one row per run. ``base``: ``{seed:
    accuracy}`` of the default schedule's runs made earlier, added as "warm-up 10 %"."""
    rows = [{"schedule": "warm-up 10 %", "seed": sd, "accuracy": a} for sd, a in (base or {}).items()]
    for name, kw in variants.items():
        for seed in seeds:
            cfg = ft_config("full", s, seed, lr=lr, head_lr=head_lr, **kw)
            r = run_classifier(encoder, tokenize, train, test, n_out, cfg)
            rows.append({"schedule": name, "seed": seed, "accuracy": r.score})
    return pd.DataFrame(rows)


def seed_scores(runs: list[RunResult], seeds: Sequence[int]) -> dict[int, float]:
    """``{seed: score}`` of runs made once per seed of ``seeds`` (in that order)."""
    if len(runs) != len(seeds):
        raise ValueError(f"{len(runs)} runs for {len(seeds)} seeds")
    return {int(sd): r.score for sd, r in zip(seeds, runs)}


# ------------------------------------------------------------------------ data-points curve


def _interp_log_n(ns: np.ndarray, acc: np.ndarray, level: float) -> float:
    """The (log-interpolated) number of examples at which a curve first reaches ``level``."""
    acc = np.maximum.accumulate(acc)  # a curve that dips is read at its best so far
    if level <= acc[0]:
        return float(ns[0])
    i = int(np.searchsorted(acc, level))
    if i >= len(acc):
        return float("nan")
    a0, a1 = acc[i - 1], acc[i]
    t = (level - a0) / (a1 - a0) if a1 > a0 else 0.0
    return float(np.exp(np.log(ns[i - 1]) + t * (np.log(ns[i]) - np.log(ns[i - 1]))))


def data_advantage(ns: Sequence[int], head: Sequence[float], prompt: Sequence[float], n_levels: int = 50) -> float:
    """Le Scao & Rush's "how many data points is a prompt worth": the mean, over the accuracy
    levels both curves reach, of ``n_head(level) - n_prompt(level)`` -- the horizontal distance
    between the curves (positive: the prompt saves examples). NaN if the curves share no
    accuracy range."""
    ns, h, p = np.asarray(ns, float), np.asarray(head, float), np.asarray(prompt, float)
    lo = max(np.maximum.accumulate(h)[0], np.maximum.accumulate(p)[0])
    hi = min(h.max(), p.max())
    if not hi > lo:
        return float("nan")
    levels = np.linspace(lo, hi, n_levels)
    d = [_interp_log_n(ns, h, a) - _interp_log_n(ns, p, a) for a in levels]
    return float(np.nanmean(d))


def curve_runs(encoder, tokenize, cloze, pvp, pool, test, s: Sizes) -> pd.DataFrame:
    """Head-based vs prompt-based fine-tuning of ``encoder`` for each size in ``s.curve_ns``
    and seed: ``n`` balanced examples drawn from ``pool`` (seeded), ``s.curve_steps`` steps."""
    from .pet import run_prompt_classifier

    rows = []
    for n in s.curve_ns:
        for seed in s.seeds:
            train = balanced_sample(pool, n, seed)
            epochs = max(1, math.ceil(s.curve_steps * min(s.batch_size, n) / n))
            cfg = FTConfig(epochs=epochs, lr=LR["full"], batch_size=min(s.batch_size, n), warmup=0.1,
                           max_len=s.max_len, seed=seed)
            head = run_classifier(encoder, tokenize, train, test, 2, cfg, method="full")
            prompt, _ = run_prompt_classifier(cloze, pvp, train, test, cfg)
            rows += [{"n": n, "seed": seed, "method": "head", "accuracy": head.score},
                     {"n": n, "seed": seed, "method": "prompt", "accuracy": prompt.score}]
    return pd.DataFrame(rows)


def balanced_sample(pool, n: int, seed: int) -> list:
    """``n`` examples of ``pool``, as many of each label as possible (seeded)."""
    rng = np.random.default_rng(seed)
    labels = sorted({int(e.label) for e in pool})
    per = {c: rng.permutation([i for i, e in enumerate(pool) if int(e.label) == c]).tolist() for c in labels}
    idx = [per[labels[k % len(labels)]][k // len(labels)] for k in range(n)]
    return [pool[i] for i in rng.permutation(idx)]


def draw_curve(df: pd.DataFrame, ax=None):
    """Accuracy against labelled examples (log scale), mean and each seed, per method."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for m, color in (("head", "#4c72b0"), ("prompt", "#dd8452")):
        d = df[df.method == m]
        mean = d.groupby("n").accuracy.mean()
        ax.plot(mean.index, mean.values, "-o", color=color, label=f"{m}-based fine-tuning")
        ax.scatter(d.n, d.accuracy, color=color, alpha=0.35, s=12)
    ax.set_xscale("log", base=2)
    ax.set(xlabel="labelled training examples", ylabel="test accuracy (%)")
    ax.axhline(50, color="0.6", ls=":", lw=1)
    ax.legend()
    return ax


# ------------------------------------------------------------------------------- the figure


def _box(ax, x, y, w, h, text, fc, fontsize=8, ec="0.3"):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=fc, ec=ec))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def draw_peft(ax=None):
    """A post-LN Transformer block (BERT's) bottom to top, with each method's new or trained
    parameters in colour beside the part they touch. Returns the axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    frozen = "#e8e8e8"
    parts = [(0.8, "input embeddings (token + position + segment)"), (2.4, "multi-head attention: W_q W_k W_v, W_o"),
             (4.0, "add & layer norm"), (5.6, "feed-forward: W_1, GELU, W_2"), (7.2, "add & layer norm"),
             (8.6, "task head (always trained)")]
    for y, text in parts:
        _box(ax, 4.0, y, 4.4, 0.8, text, "#d9f0d3" if text.startswith("task") else frozen)
    for y1, y2 in ((1.2, 2.0), (2.8, 3.05), (3.35, 3.6), (4.4, 5.2), (6.0, 6.25), (6.55, 6.8), (7.6, 8.2)):
        ax.annotate("", (4.0, y2), (4.0, y1), arrowprops={"arrowstyle": "->", "color": "0.4"})
    for y in (3.2, 6.4):  # the adapters sit between a sub-layer and its residual add
        _box(ax, 4.0, y, 1.0, 0.32, "adapter", "#fff2b3", fontsize=7)
    notes = [(0.8, 0.8, "prompt tuning / P-tuning:\nn learned vectors after [CLS]", "#fde2c8"),
             (1.7, 2.3, "prefix tuning: n learned\nkeys and values per layer", "#f9d5e5"),
             (2.7, 2.6, "LoRA: W_q + BA, W_v + BA\n(rank r, merged after training)", "#dbe9f6"),
             (3.7, 3.2, "adapter after attention\n(bottleneck m, starts as identity)", "#fff2b3"),
             (6.3, 6.4, "adapter after the FFN", "#fff2b3"),
             (7.5, 7.1, "BitFit: every bias term\n(q/k/v, W_o, FFN, layer norms)", "#e5d4ef")]
    for y, target, text, fc in notes:
        _box(ax, 8.3, y, 3.2, 0.8, text, fc, fontsize=7.5)
        x_to = 4.5 if target in (3.2, 6.4) else 6.25
        ax.annotate("", (x_to, target), (6.7, y), arrowprops={"arrowstyle": "->", "color": "0.5"})
    ax.text(4.0, 9.6, "one Transformer block (x L) — grey: frozen; coloured: what each method trains",
            ha="center", fontsize=9)
    ax.text(0.2, 5.0, "full fine-tuning:\nevery parameter", fontsize=8, color="0.3")
    return ax


def trainable_count(model) -> int:
    return count(model, trainable=True)
