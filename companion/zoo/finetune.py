"""Fine-tuning a stored GPT or BERT on a classification task, against the same network from random weights.

Chapter 7c asks Radford et al.'s (2018) question of ``gpt-book``, and Devlin et al.'s (2019) of
``bert-book``: does pre-training (next-token or masked LM) make a better classifier than the
same network trained on the task alone? Everything here is built so that the two arms differ
in the starting weights of the Transformer and in nothing else, and one code path serves both
families:

* :func:`random_twin` -- the stored model's architecture, freshly initialised (seeded);
* :func:`finetune_classifier` -- a copy of the network plus one linear head, trained by
  :func:`companion.train.fit` with AdamW, a linear warm-up and decay, and the same batches in
  the same order for a given seed. It returns the test predictions and the per-step training
  loss (the task loss alone: ``lm_weight`` defaults to 0), so that a reader can check that
  neither arm is simply under-trained;
  GPT's head reads the extract token (:class:`~companion.transformer.gpt.GPTForTask`). BERT's
  head reads the mean of the final states of ``[CLS] text [SEP]``
  (:class:`~companion.transformer.bert.BertForSequence` with ``pooling="mean"``, the default):
  ``bert-book`` was pre-trained by masked LM alone, without next-sentence prediction, so
  neither its ``[CLS]`` state nor its tanh pooler was ever trained to summarise a text, while
  every token's final state was trained by the MLM loss. ``pooling="cls"`` (the tanh pooler on
  ``[CLS]``, BERT's own way) is there for a model that had NSP. In both families the head's
  initialisation depends only on ``seed``, so both arms start it identically;
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
from ..transformer.bert import BertEncoder, BertForPreTraining, BertForSequence, mean_pool
from ..transformer.chapter7b import _bert_batch, _bert_batches, _gpt_batches, encode_examples
from ..transformer.gpt import GPT, GPTForTask, task_batch

POOLINGS = ("mean", "cls")


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


def _family(model) -> str:
    """``"gpt"`` or ``"bert"``; a clear error for anything else."""
    if isinstance(model, GPT):
        return "gpt"
    if isinstance(model, (BertForPreTraining, BertEncoder)):
        return "bert"
    raise TypeError(f"model must be a GPT, a BertForPreTraining or a BertEncoder (zoo.load('gpt-book') or "
                    f"zoo.load('bert-book')), got {type(model).__name__}")


def _bert_encoder(model) -> BertEncoder:
    return model.encoder if isinstance(model, BertForPreTraining) else model


def _max_len(model) -> int:
    """The longest input the model takes (GPT's ``block_size``, BERT's ``max_len``)."""
    return model.config.block_size if _family(model) == "gpt" else model.config.max_len


def random_twin(model: GPT | BertForPreTraining | BertEncoder, seed: int = 0):
    """A network of ``model``'s class and configuration, freshly initialised with ``seed``."""
    family = _family(model)
    if family == "gpt":
        return GPT(model.config, seed=seed)
    return type(model)(model.config, seed=seed)


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


def _batch(model, enc, pad_id: int) -> dict[str, torch.Tensor]:
    """An unlabelled input batch of encoded texts for ``model``'s family."""
    if _family(model) == "gpt":
        return task_batch(model.config, "classification", [(a, 0) for a, _ in enc], pad_id)
    return _bert_batch(model.config, enc)


@torch.no_grad()
def _predict(net: GPTForTask | BertForSequence, body, enc, pad_id: int, batch_size: int = 64) -> np.ndarray:
    net.eval()
    dev = next(net.parameters()).device
    out = []
    for i in range(0, len(enc), batch_size):
        b = _batch(body, enc[i:i + batch_size], pad_id)
        out.append(net({k: v.to(dev) for k, v in b.items()}).argmax(-1).cpu())
    return torch.cat(out).numpy()


def _task_net(model, n_out: int, config: FinetuneConfig, pooling: str, seed: int):
    """A copy of ``model`` plus a linear head (initialised from ``seed`` alone)."""
    if _family(model) == "gpt":
        return GPTForTask(copy.deepcopy(model), "classification", n_out, lm_weight=config.lm_weight, seed=seed)
    return BertForSequence(copy.deepcopy(_bert_encoder(model)), n_out, pooling=pooling, seed=seed)


def finetune_classifier(model: GPT | BertForPreTraining | BertEncoder, tok, train: Sequence[Example],
                        test: Sequence[Example], config: FinetuneConfig = FinetuneConfig(), *, seed: int = 0,
                        n_classes: int | None = None, pooling: str = "mean",
                        device: str | None = "cpu") -> FinetuneResult:
    """Fine-tune a copy of ``model`` (a GPT or a BERT) plus a linear head on ``train``; predict
    ``test``'s classes.

    The head's initialisation, the batches and their order, dropout's draws and the optimizer
    depend only on ``seed`` and ``config``: called on a pre-trained network and on its
    :func:`random_twin`, the two runs differ in the Transformer's starting weights alone.
    ``model`` itself is not modified. ``pooling`` is BERT's sentence vector (``"mean"`` of the
    final states, or ``"cls"``: the tanh pooler on ``[CLS]``); GPT always reads its extract
    token. ``config.lm_weight`` is GPT's alone (BERT trains on the task loss only).
    """
    family = _family(model)
    _check_examples(train, "train")
    _check_examples(test, "test")
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    if family == "bert" and config.lm_weight:
        raise ValueError(f"lm_weight is GPT's auxiliary LM loss; a BERT fine-tunes on the task loss alone, "
                         f"got lm_weight={config.lm_weight}")
    n_out = _n_classes(train, n_classes)
    if config.max_len > _max_len(model):
        what = "block_size" if family == "gpt" else "max_len"
        raise ValueError(f"config.max_len={config.max_len} exceeds the model's longest input "
                         f"({what}={_max_len(model)} tokens)")
    pad = tok.special_tokens["[PAD]"]
    net = _task_net(model, n_out, config, pooling, seed)
    enc = encode_examples(tok, train, config.max_len)
    labels = [int(e.label) for e in train]
    if family == "gpt":
        batches = _gpt_batches(model.config, "classification", enc, labels, pad, config.batch_size, seed)
    else:
        batches = _bert_batches(model.config, enc, labels, config.batch_size, seed)
    steps = config.epochs * -(-len(enc) // config.batch_size)
    factor = warmup_linear(steps, int(config.warmup * steps)) if steps > 1 else (lambda s: 1.0)

    def schedule(step: int, opt: torch.optim.Optimizer) -> None:
        for g in opt.param_groups:
            g["lr"] = config.lr * factor(min(step, steps - 1))

    cfg = TrainConfig(epochs=config.epochs, lr=config.lr, optimizer="adamw", weight_decay=config.weight_decay,
                      seed=seed, device=device, progress=False)
    t0 = time.perf_counter()
    hist = fit(net, batches, config=cfg, schedule=schedule)
    preds = _predict(net, model, encode_examples(tok, test, config.max_len), pad)
    return FinetuneResult(preds, list(hist.step_loss), hist.steps, time.perf_counter() - t0)


@torch.no_grad()
def pooled_features(model: GPT | BertForPreTraining | BertEncoder, tok, examples: Sequence[Example],
                    max_len: int = 128, batch_size: int = 64, device: str | None = "cpu") -> np.ndarray:
    """``[n, d]``: the mean of the final hidden states, the text cut to ``max_len - 3`` tokens
    like the fine-tuned inputs. GPT: over the text's tokens (no task tokens); BERT: over
    ``[CLS] text [SEP]``, the vector its mean-pooling head starts from."""
    family = _family(model)
    _check_examples(examples, "examples")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 4 <= max_len <= _max_len(model):
        raise ValueError(f"max_len must be an int in [4, {_max_len(model)}], got {max_len!r}")
    if family == "bert":
        enc_model = _bert_encoder(model).to(device or "cpu").eval()
        pairs = encode_examples(tok, examples, max_len)
        out = []
        for i in range(0, len(pairs), batch_size):
            b = _bert_batch(enc_model.config, pairs[i:i + batch_size])
            b = {k: v.to(device or "cpu") for k, v in b.items()}
            out.append(mean_pool(enc_model(b["ids"], b["segments"], b["attention_mask"]), b["attention_mask"]).cpu())
        return torch.cat(out).numpy()
    model = model.to(device or "cpu").eval()
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
FAMILY_MODELS = ("gpt-book", "bert-book")


def results_path(model: str = "gpt-book") -> Path:
    """Where the stored run of ``model`` lives (``gpt-book``: :data:`RESULTS`; the others beside it)."""
    if model not in FAMILY_MODELS:
        raise ValueError(f"model must be one of {FAMILY_MODELS}, got {model!r}")
    return RESULTS if model == "gpt-book" else RESULTS.with_name(f"finetune_results_{model}.json")


def stored_results(path: Path | None = None, model: str = "gpt-book") -> dict:
    """The stored multi-seed run of ``model`` (``benchmarks/ch07c_finetune.py``), or the file at
    ``path``: a clear error if missing."""
    path = results_path(model) if path is None else Path(path)
    if not path.is_file():
        flag = "" if model == "gpt-book" else f" --model {model}"
        raise FileNotFoundError(f"{path} is missing; `OMP_NUM_THREADS=1 python -m benchmarks.ch07c_finetune{flag}` "
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
    model = results.get("model", {}).get("name", "gpt-book")
    for task, label in (("sst2", "SST-2"), ("imdb", "IMDb")):
        if task not in results.get("summary", {task: None}):
            continue  # a stored run of fewer tasks
        base = results["baselines"]
        rows.append({"task": label, "method": "majority class", "accuracy": base[f"{task}/majority"]})
        for name in ("untrained twin", model):
            rows.append({"task": label, "method": f"frozen probe, {name}",
                         "accuracy": base[f"{task}/frozen probe, {name}"]})
        for arm in ("random init", "pre-trained"):
            runs = [r[f"{task}/{arm}"] for r in results["runs"].values() if f"{task}/{arm}" in r]
            acc = [r["accuracy"] for r in runs]
            rows.append({"task": label, "method": f"fine-tuned, {arm}", "accuracy": float(np.mean(acc)),
                         "min": min(acc), "max": max(acc),
                         "final train loss": float(np.mean([r["final_train_loss"] for r in runs]))})
    return pd.DataFrame(rows).set_index(["task", "method"])


def side_by_side(results: dict[str, dict]) -> pd.DataFrame:
    """The stored runs of several models in one table: a line per task and method (the probe
    on the stored model is "frozen probe, pre-trained"), a column per model and statistic
    (test accuracy %, its min and max over seeds, the fine-tuned arms' final training loss)."""
    if not isinstance(results, dict) or not results:
        raise ValueError(f"results must be a non-empty dict of model name -> stored results, got {results!r:.80}")
    frames = {}
    for name, res in results.items():
        f = results_frame(res).rename(index={f"frozen probe, {res['model']['name']}": "frozen probe, pre-trained"},
                                      level="method")
        frames[name] = f
    out = pd.concat(frames, axis=1).reorder_levels([1, 0], axis=1)
    cols = [(stat, name) for stat in ("accuracy", "min", "max", "final train loss") for name in results]
    return out[[c for c in cols if c in out.columns]]


def arms_frame(runs: dict[str, FinetuneResult], gold: Sequence[int]) -> pd.DataFrame:
    """One line per arm: test accuracy %, final training loss, steps and wall seconds."""
    return pd.DataFrame({arm: {"test accuracy %": accuracy(r.predictions, gold), "final training loss": r.final_loss(),
                               "steps": r.steps, "wall s": r.seconds} for arm, r in runs.items()}).T
