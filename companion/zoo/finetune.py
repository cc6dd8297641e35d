"""Fine-tuning a stored GPT on a classification task, against the same network from random weights.

Chapter 7c asks Radford et al.'s (2018) question of ``gpt-book``: does generative pre-training
make a better classifier than the same network trained on the task alone? Everything here is
built so that the two arms differ in the starting weights of the Transformer and in nothing else:

* :func:`random_twin` -- the stored model's architecture, freshly initialised (seeded);
* :func:`finetune_classifier` -- a copy of a :class:`~companion.transformer.gpt.GPT` plus one
  linear head on the extract token (:class:`~companion.transformer.gpt.GPTForTask`; the head's
  initialisation depends only on ``seed``, so both arms start it identically), trained by
  :func:`companion.train.fit` with AdamW, a linear warm-up and decay, and the same batches in
  the same order for a given seed. It returns the test predictions and the per-step training
  loss (the task loss alone: ``lm_weight`` defaults to 0), so that a reader can check that
  neither arm is simply under-trained;
* :func:`pooled_features` / :func:`probe_accuracy` -- the frozen-features baseline: mean-pooled
  final hidden states and a logistic regression on them (no weight of the network moves);
* :func:`majority_accuracy` and :func:`paired_interval` -- the majority-class baseline and the
  spread of a difference of accuracies (paired bootstrap over test examples, widened to the
  range over seeds).

Every function takes a ``device`` (default: the CPU).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..data.tasks import Example
from ..train import TrainConfig, fit
from ..transfer.finetune import warmup_linear
from ..transformer.chapter7b import _gpt_batches, encode_examples
from ..transformer.gpt import GPT, GPTForTask, task_batch


@dataclass(frozen=True)
class FinetuneConfig:
    """How one arm trains: ``epochs`` passes over the training examples in batches of
    ``batch_size``, AdamW at peak ``lr`` (weight decay ``weight_decay``), a linear warm-up over
    ``warmup`` of the steps then a linear decay to 0, gradient norm clipped at 1;
    ``lm_weight`` is GPT's auxiliary LM weight (0: the task loss alone); ``max_len`` the tokens
    per input, the three task tokens included."""

    epochs: int = 3
    lr: float = 2e-4
    batch_size: int = 32
    warmup: float = 0.1
    weight_decay: float = 0.01
    lm_weight: float = 0.0
    max_len: int = 128

    def __post_init__(self) -> None:
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, int) or self.epochs < 1:
            raise ValueError(f"epochs must be a positive int, got {self.epochs!r}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}")
        if not self.lr > 0 or not 0 <= self.warmup < 1 or self.lm_weight < 0:
            raise ValueError(f"need lr > 0, 0 <= warmup < 1 and lm_weight >= 0, got {self}")
        if isinstance(self.max_len, bool) or not isinstance(self.max_len, int) or self.max_len < 4:
            raise ValueError(f"max_len must be an int >= 4 (three task tokens and one of text), got {self.max_len!r}")


@dataclass
class FinetuneResult:
    """One fine-tuning run: test predictions, training loss per step, steps and wall seconds."""

    predictions: np.ndarray
    step_loss: list[float] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0

    def final_loss(self, last: int = 20) -> float:
        """Mean training loss over the last ``last`` steps."""
        return float(np.mean(self.step_loss[-last:]))


def random_twin(gpt: GPT, seed: int = 0) -> GPT:
    """A :class:`GPT` with ``gpt``'s configuration, freshly initialised with ``seed``."""
    return GPT(gpt.config, seed=seed)


def _check_examples(examples: Sequence[Example], what: str) -> None:
    if isinstance(examples, (str, bytes)) or not isinstance(examples, Sequence) or not examples:
        raise ValueError(f"{what} must be a non-empty list of Examples, got {examples!r:.80}")


def _n_classes(train: Sequence[Example], n_classes: int | None) -> int:
    labels = {int(e.label) for e in train}
    n = max(labels) + 1 if n_classes is None else n_classes
    if min(labels) < 0 or max(labels) >= n or n < 2:
        raise ValueError(f"labels must be 0..n_classes-1 with n_classes >= 2, got labels {sorted(labels)} "
                         f"and n_classes={n_classes}")
    return n


@torch.no_grad()
def _predict(net: GPTForTask, enc, pad_id: int, batch_size: int = 64) -> np.ndarray:
    net.eval()
    dev = next(net.parameters()).device
    out = []
    for i in range(0, len(enc), batch_size):
        b = task_batch(net.gpt.config, "classification", [(a, 0) for a, _ in enc[i:i + batch_size]], pad_id)
        out.append(net({k: v.to(dev) for k, v in b.items()}).argmax(-1).cpu())
    return torch.cat(out).numpy()


def finetune_classifier(gpt: GPT, tok, train: Sequence[Example], test: Sequence[Example],
                        config: FinetuneConfig = FinetuneConfig(), *, seed: int = 0,
                        n_classes: int | None = None, device: str | None = "cpu") -> FinetuneResult:
    """Fine-tune a copy of ``gpt`` plus a linear head on ``train``; predict ``test``'s classes.

    The head's initialisation, the batches and their order, dropout's draws and the optimizer
    depend only on ``seed`` and ``config``: called on a pre-trained GPT and on its
    :func:`random_twin`, the two runs differ in the Transformer's starting weights alone.
    ``gpt`` itself is not modified.
    """
    _check_examples(train, "train")
    _check_examples(test, "test")
    n_out = _n_classes(train, n_classes)
    if config.max_len > gpt.config.block_size:
        raise ValueError(f"max_len={config.max_len} exceeds the model's block_size={gpt.config.block_size}")
    pad = tok.special_tokens["[PAD]"]
    net = GPTForTask(copy.deepcopy(gpt), "classification", n_out, lm_weight=config.lm_weight, seed=seed)
    enc = encode_examples(tok, train, config.max_len)
    labels = [int(e.label) for e in train]
    batches = _gpt_batches(gpt.config, "classification", enc, labels, pad, config.batch_size, seed)
    steps = config.epochs * -(-len(enc) // config.batch_size)
    factor = warmup_linear(steps, int(config.warmup * steps)) if steps > 1 else (lambda s: 1.0)

    def schedule(step: int, opt: torch.optim.Optimizer) -> None:
        for g in opt.param_groups:
            g["lr"] = config.lr * factor(min(step, steps - 1))

    cfg = TrainConfig(epochs=config.epochs, lr=config.lr, optimizer="adamw", weight_decay=config.weight_decay,
                      seed=seed, device=device, progress=False)
    t0 = time.perf_counter()
    hist = fit(net, batches, config=cfg, schedule=schedule)
    preds = _predict(net, encode_examples(tok, test, config.max_len), pad)
    return FinetuneResult(preds, list(hist.step_loss), hist.steps, time.perf_counter() - t0)


@torch.no_grad()
def pooled_features(gpt: GPT, tok, examples: Sequence[Example], max_len: int = 128, batch_size: int = 64,
                    device: str | None = "cpu") -> np.ndarray:
    """``[n, d]``: the mean of the final hidden states over each text's tokens (no task tokens),
    the text cut to ``max_len - 3`` tokens like the fine-tuned inputs."""
    _check_examples(examples, "examples")
    model = gpt.to(device or "cpu").eval()
    pad = tok.special_tokens["[PAD]"]
    enc = [a for a, _ in encode_examples(tok, examples, max_len)]
    out = []
    for i in range(0, len(enc), batch_size):
        chunk = [a if a else [pad] for a in enc[i:i + batch_size]]
        T = max(len(a) for a in chunk)
        ids = torch.full((len(chunk), T), pad, dtype=torch.long)
        mask = torch.zeros(len(chunk), T)
        for j, a in enumerate(chunk):
            ids[j, :len(a)] = torch.tensor(a)
            mask[j, :len(a)] = 1.0
        h = model.hidden(ids.to(model.device)).cpu()  # causal: padding on the right is never seen
        out.append((h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
    return torch.cat(out).numpy()


def probe_accuracy(x_train: np.ndarray, y_train: Sequence[int], x_test: np.ndarray, y_test: Sequence[int],
                   C: float = 1.0) -> tuple[float, np.ndarray]:
    """A logistic regression on standardised frozen features: ``(test accuracy %, predictions)``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))
    clf.fit(np.asarray(x_train), np.asarray(y_train))
    pred = clf.predict(np.asarray(x_test))
    return accuracy(pred, y_test), pred


def accuracy(pred: Sequence[int], gold: Sequence[int]) -> float:
    """Accuracy in % of ``pred`` against ``gold`` (same length)."""
    p, g = np.asarray(pred), np.asarray(gold)
    if p.shape != g.shape or not len(g):
        raise ValueError(f"pred and gold must have the same non-zero length, got {p.shape} and {g.shape}")
    return float((p == g).mean() * 100)


def majority_accuracy(train_labels: Sequence[int], test_labels: Sequence[int]) -> float:
    """Accuracy in % of always predicting the training set's most common class."""
    values, counts = np.unique(np.asarray(train_labels), return_counts=True)
    return accuracy(np.full(len(test_labels), values[np.argmax(counts)]), test_labels)


def paired_interval(a: Sequence[np.ndarray], b: Sequence[np.ndarray], gold: Sequence[int], n_boot: int = 1000,
                    seed: int = 0) -> dict[str, float]:
    """The difference of accuracies ``a - b`` (points; ``a[k]`` and ``b[k]`` are seed ``k``'s
    predictions of the two arms) and its interval: a paired bootstrap over the test examples
    (each replicate resamples the examples once for every seed and both arms; 95 %), widened
    to include each seed's own difference. Returns ``effect, low, high, boot_low, boot_high,
    seed_min, seed_max``."""
    if len(a) != len(b) or not len(a):
        raise ValueError(f"need the same non-zero number of seeds in both arms, got {len(a)} and {len(b)}")
    g = np.asarray(gold)
    ca = np.stack([np.asarray(p) == g for p in a]).astype(float)  # [seeds, n]
    cb = np.stack([np.asarray(p) == g for p in b]).astype(float)
    if ca.shape[1] != len(g) or cb.shape != ca.shape:
        raise ValueError("every prediction array must have one entry per test example")
    d = (ca - cb).mean(0) * 100  # per example, mean over seeds
    rng = np.random.default_rng(seed)
    boots = np.array([d[rng.integers(0, len(d), len(d))].mean() for _ in range(n_boot)])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    per_seed = (ca - cb).mean(1) * 100
    effect = float(d.mean())
    return {"effect": effect, "low": float(min(lo, per_seed.min(), effect)),
            "high": float(max(hi, per_seed.max(), effect)), "boot_low": float(lo), "boot_high": float(hi),
            "seed_min": float(per_seed.min()), "seed_max": float(per_seed.max())}


# ------------------------------------------------------------------------------ chapter 7c's data


@dataclass(frozen=True)
class Sizes:
    """Chapter 7c's run per ``BOOK_SCALE``: training examples per task (a seeded sample of the
    training split), test examples (``None``: the whole split; IMDb's test reviews are a seeded
    sample), the fine-tuning config per task, and the seeds of the stored multi-seed run."""

    sst2_train: int
    sst2_test: int | None
    imdb_train: int
    imdb_test: int
    sst2: FinetuneConfig
    imdb: FinetuneConfig
    seeds: tuple[int, ...]
    n_boot: int
    brown_words: int | None


def sizes(scale: str | None = None) -> Sizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``)."""
    from ..scale import pick

    return pick(
        ci=Sizes(96, 200, 64, 100, FinetuneConfig(epochs=1, lr=3e-4, max_len=64),
                 FinetuneConfig(epochs=1, lr=3e-4, max_len=64), (0,), 200, 3_000),
        laptop=Sizes(2000, None, 1000, 1000, FinetuneConfig(epochs=3, lr=3e-4, max_len=64),
                     FinetuneConfig(epochs=3, lr=3e-4, max_len=128), (0, 1, 2), 1000, None),
        scale=scale)


def sample(examples: Sequence[Example], n: int | None, seed: int = 0) -> list[Example]:
    """``n`` examples drawn without replacement with ``seed`` (``None`` or ``n >= len``: all, in order)."""
    if n is None or n >= len(examples):
        return list(examples)
    rng = np.random.default_rng(seed)
    return [examples[i] for i in sorted(rng.choice(len(examples), n, replace=False))]


def chapter_data(s: Sizes) -> dict[str, dict[str, list[Example]]]:
    """``{"sst2": {"train", "test"}, "imdb": {"train", "test"}}`` at sizes ``s``: SST-2 from the
    book's GLUE split (its test is GLUE's 872-sentence dev set), IMDb's labelled train and test
    reviews (the test reviews were never read in pre-training)."""
    from ..data import load_task

    sst, imdb = load_task("sst2_glue").splits, load_task("imdb").splits
    return {"sst2": {"train": sample(sst["train"], s.sst2_train), "test": sample(sst["test"], s.sst2_test)},
            "imdb": {"train": sample(imdb["train"], s.imdb_train), "test": sample(imdb["test"], s.imdb_test, 1)}}


# ------------------------------------------------------------------------------ stored results

RESULTS = Path(__file__).with_name("finetune_results.json")


def stored_results(path: Path | None = None) -> dict:
    """The stored multi-seed run (``benchmarks/ch07c_finetune.py``): a clear error if missing."""
    path = RESULTS if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; `OMP_NUM_THREADS=1 python -m benchmarks.ch07c_finetune` "
                                "writes it")
    return json.loads(path.read_text(encoding="utf-8"))


def unigram_nll(counts: Sequence[int], ids: Sequence[int]) -> float:
    """Summed NLL (nats) of token ``ids`` under the add-one unigram distribution of ``counts``
    (token counts of a training stream; the plateau a model that ignores context reaches)."""
    c = np.asarray(counts, dtype=np.float64) + 1.0
    idx = np.asarray(ids, dtype=np.int64)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= len(c):
        raise ValueError(f"ids must be non-empty and in [0, {len(c)}), got {idx.size} ids")
    return float(-(np.log(c[idx]) - np.log(c.sum())).sum())


def results_frame(results: dict) -> pd.DataFrame:
    """One line per task and method: test accuracy (mean, min, max over seeds where there are
    seeds) and the fine-tuned arms' final training loss (mean over seeds)."""
    rows = []
    for task, label in (("sst2", "SST-2"), ("imdb", "IMDb")):
        base = results["baselines"]
        rows.append({"task": label, "method": "majority class", "accuracy": base[f"{task}/majority"]})
        for name in ("untrained twin", "gpt-book"):
            rows.append({"task": label, "method": f"frozen probe, {name}",
                         "accuracy": base[f"{task}/frozen probe, {name}"]})
        for arm in ("random init", "pre-trained"):
            runs = [r[f"{task}/{arm}"] for r in results["runs"].values()]
            acc = [r["accuracy"] for r in runs]
            rows.append({"task": label, "method": f"fine-tuned, {arm}", "accuracy": float(np.mean(acc)),
                         "min": min(acc), "max": max(acc),
                         "final train loss": float(np.mean([r["final_train_loss"] for r in runs]))})
    return pd.DataFrame(rows).set_index(["task", "method"])


def arms_frame(runs: dict[str, FinetuneResult], gold: Sequence[int]) -> pd.DataFrame:
    """One line per arm: test accuracy %, final training loss, steps and wall seconds."""
    return pd.DataFrame({arm: {"test accuracy %": accuracy(r.predictions, gold), "final training loss": r.final_loss(),
                               "steps": r.steps, "wall s": r.seconds} for arm, r in runs.items()}).T
