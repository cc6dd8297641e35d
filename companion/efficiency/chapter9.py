"""Chapter 9's experiments, so that the notebook's cells stay short.

* :class:`Sizes` / :func:`sizes` -- every size of the run per ``BOOK_SCALE``;
* :func:`tokenizer_and_rows` -- chapter 7b's byte-level BPE on the Part II corpus, and the
  packed GPT rows the scaling study trains on;
* :func:`encode_task` / :func:`train_classifier` / :func:`accuracy` -- a BERT classifier on one
  GLUE-lite task (chapter 7's :class:`~companion.transformer.bert.BertForSequence`);
* :func:`distil_students` -- half-depth students copied from the teacher, trained alone or
  distilled (soft targets; soft targets + TinyBERT's intermediate losses);
* :func:`distil_glue` / :func:`kept_table` -- DistilBERT's teacher and students fine-tuned on
  more GLUE-lite tasks, and the share of the teacher's score each keeps (bootstrap, seeds);
* :func:`paired_ratio` -- a bootstrap interval for ``accuracy(a) / accuracy(b)`` on the same
  test examples; :func:`paired_diff` -- for a difference;
* :func:`magnitude_curve`, :func:`head_curve` -- accuracy as weights or heads are removed;
* :func:`quantization_row`, :func:`latency_table` -- int8 and bf16 accuracy, size and speed;
* :func:`size_accuracy_plot` -- accuracy against bytes for every method on one plot;
* :func:`draw_distillation` -- the teacher, the student and the losses between them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ..device import get_device
from ..evaluate.glue import DISPLAY, GlueTask, task_metrics
from ..scale import pick
from ..train import TrainConfig, fit
from ..transformer import chapter7b as c7
from ..transformer.bert import (
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    pad_batch,
    pair_inputs,
)
from ..transformer.pretrain import mlm_batches, pack_lm, pack_mlm
from ..transformer.tokenizers import ByteLevelBPE
from .distill import (
    DistillConfig,
    distilbert_loss,
    distill_classifier,
    every_other_layer,
)
from .prune import (
    apply_masks,
    head_importance,
    head_pruning_curve,
    magnitude_masks,
    prunable_weights,
)
from .quantize import (
    latency,
    linear_weight_bytes,
    quantize_linears,
    state_dict_bytes,
    to_bf16,
    torch_dynamic_int8,
)


@dataclass(frozen=True)
class Sizes:
    """Everything the compression half of the chapter changes with ``BOOK_SCALE``."""

    task: str                # the GLUE-lite task
    d_model: int
    n_layer: int             # the teacher's; students get half
    n_head: int
    max_len: int
    epochs: int
    lr: float
    batch_size: int
    temperature: float
    alpha: float
    n_boot: int
    fractions: tuple[float, ...]   # pruned fractions of weights / heads
    latency_d: int                 # width of the Linear-heavy model timed for int8
    n_train: int | None = None     # training examples of the task (None: all)
    n_test: int | None = None      # test examples (None: all)


def sizes(scale: str | None = None) -> Sizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``); ``gpu`` is a preset, not run here."""
    fr = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9)
    return pick(
        ci=Sizes("sst2_glue", 32, 2, 4, 48, 1, 2e-3, 32, 2.0, 0.5, 100, (0.0, 0.5), 32, 128, 100),
        laptop=Sizes("sst2_glue", 64, 4, 4, 64, 3, 1e-3, 32, 2.0, 0.5, 1000, fr, 512),
        gpu=Sizes("sst2_glue", 256, 8, 8, 128, 5, 3e-4, 32, 2.0, 0.5, 2000, fr, 1024),
        scale=scale)


def tokenizer_and_rows(docs: list[list[str]], heldout_docs: list[list[str]], vocab_size: int, corpus_chars: int,
                       block_size: int, tokenizer_chars: int | None = None
                       ) -> tuple[ByteLevelBPE, torch.Tensor, torch.Tensor]:
    """Chapter 7b's byte-level BPE (``vocab_size``, trained on the first ``tokenizer_chars``
    characters of the slice, default ``corpus_chars // 3``) and the GPT rows of ``block_size + 1``
    ids of ``corpus_chars`` characters: ``(tok, train, heldout)``."""
    texts = c7.corpus_slice(docs, corpus_chars)
    tok = c7.train_tokenizer(c7.corpus_slice(docs, tokenizer_chars or max(corpus_chars // 3, 50_000)), vocab_size)
    eos = tok.special_tokens[c7.EOT]
    train = pack_lm([tok.encode_ordinary(t) for t in texts], block_size, eos)
    held = pack_lm([tok.encode_ordinary(" ".join(d)) for d in heldout_docs], block_size, eos)
    return tok, train, held


# ------------------------------------------------------------------------------ classifiers


@dataclass
class Encoded:
    """A task's examples as token ids (truncated to fit ``[CLS] a [SEP] (b [SEP])``)."""

    train: list[tuple[list[int], list[int] | None]]
    train_y: list[int]
    test: list[tuple[list[int], list[int] | None]]
    test_y: np.ndarray
    n_classes: int = 2


def encode_task(tok: ByteLevelBPE, task: GlueTask, max_len: int, n_train: int | None = None,
                n_test: int | None = None) -> Encoded:
    """The task's first ``n_train`` training and ``n_test`` test examples (None: all), as ids."""
    if task.regression:
        raise ValueError(f"{task.name} is a regression task; chapter 9 distils classifiers")
    train, test = task.train[:n_train], task.test[:n_test]
    return Encoded(c7.encode_examples(tok, train, max_len), [int(e.label) for e in train],
                   c7.encode_examples(tok, test, max_len), np.array([int(e.label) for e in test]),
                   len(task.label_names))


def bert_config(tok: ByteLevelBPE, s: Sizes, n_layer: int | None = None) -> BertConfig:
    sp = tok.special_tokens
    return BertConfig(vocab_size=len(tok), max_len=s.max_len, n_layer=n_layer or s.n_layer, n_head=s.n_head,
                      d_model=s.d_model, pad_id=sp["[PAD]"], unk_id=sp["[UNK]"], cls_id=sp["[CLS]"],
                      sep_id=sp["[SEP]"], mask_id=sp["[MASK]"])


def _batch(cfg: BertConfig, enc, labels=None) -> dict[str, torch.Tensor]:
    b = pad_batch(cfg, [pair_inputs(cfg, a, bb) for a, bb in enc])
    if labels is not None:
        b["labels"] = torch.tensor(labels, dtype=torch.long)
    return b


def batches(cfg: BertConfig, data: Encoded, batch_size: int, seed: int = 0):
    """``epoch -> shuffled training batches`` (seeded by ``seed`` and the epoch)."""
    def epoch(e: int) -> list[dict]:
        order = torch.randperm(len(data.train), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
        return [_batch(cfg, [data.train[j] for j in order[i:i + batch_size]],
                       [data.train_y[j] for j in order[i:i + batch_size]])
                for i in range(0, len(order), batch_size)]
    return epoch


def _train_config(s: Sizes, seed: int, device: str | None) -> TrainConfig:
    return TrainConfig(epochs=s.epochs, lr=s.lr, optimizer="adamw", weight_decay=0.01, seed=seed, device=device,
                       progress=False)


def train_classifier(net: BertForSequence, data: Encoded, s: Sizes, seed: int = 0,
                     device: str | None = None) -> BertForSequence:
    """Fine-tune ``net`` in place on the task's training examples; returns it in eval mode."""
    fit(net, batches(net.encoder.config, data, s.batch_size, seed), config=_train_config(s, seed, device))
    return net.eval()


@torch.no_grad()
def predict(net: torch.nn.Module, cfg: BertConfig, enc, batch_size: int = 128) -> np.ndarray:
    """Class predictions of ``net`` (fp32, bf16 or int8 alike) on encoded examples."""
    net.eval()
    dev = next((p.device for p in net.parameters()), torch.device("cpu"))
    out = [net({k: v.to(dev) for k, v in _batch(cfg, enc[i:i + batch_size]).items()}).float().argmax(-1).cpu()
           for i in range(0, len(enc), batch_size)]
    return torch.cat(out).numpy()


def accuracy(net: torch.nn.Module, cfg: BertConfig, data: Encoded) -> float:
    """Test accuracy x 100."""
    return float(100 * (predict(net, cfg, data.test) == data.test_y).mean())


def distil_students(teacher: BertForSequence, data: Encoded, s: Sizes, seed: int = 0,
                    device: str | None = None) -> dict[str, BertForSequence]:
    """Three half-depth students, each initialised from the teacher's every other layer (and
    its pooler and head): trained on the labels alone, distilled with soft targets
    (``alpha``, ``T``), and distilled with soft targets plus TinyBERT's hidden-state and
    attention losses."""
    cfg = teacher.encoder.config
    out = {}
    for name, dcfg in (("student, labels only", None),
                       ("student, soft targets", DistillConfig(s.temperature, s.alpha)),
                       ("student, soft + TinyBERT", DistillConfig(s.temperature, s.alpha, tinybert=True))):
        student = copy.deepcopy(teacher)
        student.encoder = every_other_layer(teacher.encoder)
        if dcfg is None:
            train_classifier(student, data, s, seed, device)
        else:
            distill_classifier(student, teacher, batches(cfg, data, s.batch_size, seed), dcfg,
                               _train_config(s, seed, device))
        out[name] = student.eval()
    return out


def n_params(net: torch.nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


# ------------------------------------------------------------------------------ DistilBERT's recipe


@dataclass(frozen=True)
class DistilSizes:
    """DistilBERT's pre-training distillation of chapter 7b's stored BERT, per ``BOOK_SCALE``."""

    steps: int          # distillation steps (MLM batches of the Part II corpus)
    batch_size: int
    lr: float
    corpus_chars: int   # characters of the corpus the MLM rows come from
    ft_epochs: int      # fine-tuning on the GLUE-lite task, teacher and students alike
    ft_lr: float
    ft_train: int       # training examples of the task used for fine-tuning
    heldout_rows: int   # MLM rows of held-out documents scored before and after
    glue_tasks: tuple[str, ...] = ("mrpc", "sick_e")  # GLUE-lite tasks beyond SST-2
    glue_train: int = 2000      # their fine-tuning examples (as SST-2's ft_train)
    glue_test: int | None = None  # their test examples (None: all of GLUE-lite's split)


def distil_sizes(scale: str | None = None) -> DistilSizes:
    return pick(ci=DistilSizes(3, 16, 5e-4, 10_000, 1, 1e-3, 8, 8, ("mrpc",), glue_train=8, glue_test=32),
                laptop=DistilSizes(150, 32, 5e-4, 600_000, 2, 1e-3, 2000, 128),
                gpu=DistilSizes(3000, 64, 5e-4, 20_000_000, 3, 5e-4, 2000, 512, glue_train=2000), scale=scale)


def mlm_rows(tok: ByteLevelBPE, docs: list[list[str]], cfg: BertConfig, chars: int) -> torch.Tensor:
    """``[CLS] ... [SEP]`` rows of ``cfg.max_len`` ids from the first ``chars`` characters."""
    return pack_mlm([tok.encode_ordinary(t) for t in c7.corpus_slice(docs, chars)], cfg)


@torch.no_grad()
def mlm_loss(model: BertForPreTraining, rows: torch.Tensor, seed: int = 0, batch_size: int = 64) -> float:
    """Masked-LM loss on ``rows``, masked with a fixed seed (the same positions for every model)."""
    model.eval()
    batches = mlm_batches(rows, model.config, batch_size, seed)(0)
    return float(np.mean([float(model.loss(b)) for b in batches]))


def distil_pretrained(teacher: BertForPreTraining, rows: torch.Tensor, ds: DistilSizes, seed: int = 0,
                      device: str | None = None) -> tuple[BertForPreTraining, pd.DataFrame]:
    """DistilBERT's recipe: a student of every other layer of ``teacher`` (embeddings and MLM
    head copied), trained on MLM batches of ``rows`` with the triple loss (soft targets at
    ``T = 2``, MLM, cosine of the last hidden states; weights 5, 2, 1). Returns the student
    and the losses of every step."""
    dev = get_device(device)
    teacher.to(dev).eval()
    student = every_other_layer(teacher).to(dev).train()
    opt = torch.optim.AdamW(student.parameters(), lr=ds.lr, weight_decay=0.01)
    make, stream, epoch = mlm_batches(rows, teacher.config, ds.batch_size, seed), [], 0
    while len(stream) < ds.steps:
        stream += make(epoch)
        epoch += 1
    hist = []
    for b in stream[:ds.steps]:
        out = distilbert_loss(student, teacher, {k: v.to(dev) for k, v in b.items()})
        opt.zero_grad(set_to_none=True)
        out["total"].backward()
        opt.step()
        hist.append({k: v.detach().item() for k, v in out.items()})
    return student.eval(), pd.DataFrame(hist)


def finetune_encoders(encoders: dict[str, BertEncoder], data: Encoded, s: Sizes, ds: DistilSizes, seed: int = 0,
                      device: str | None = None) -> dict[str, BertForSequence]:
    """Each encoder (a copy) under a new classifier head, fine-tuned on the task with the same
    recipe (``ds.ft_epochs``, ``ds.ft_lr``, the batches of ``seed``)."""
    ft = dataclasses.replace(s, epochs=ds.ft_epochs, lr=ds.ft_lr)
    data = dataclasses.replace(data, train=data.train[:ds.ft_train], train_y=data.train_y[:ds.ft_train])
    return {name: train_classifier(BertForSequence(copy.deepcopy(enc), data.n_classes, seed=seed), data, ft, seed,
                                   device)
            for name, enc in encoders.items()}


def distil_glue(encoders: dict[str, BertEncoder], tok: ByteLevelBPE, tasks: dict[str, GlueTask], s: Sizes,
                ds: DistilSizes, seeds: Sequence[int] = (0,), device: str | None = None) -> dict[str, dict]:
    """Every encoder fine-tuned on every task (``ds.glue_train`` examples, the same recipe as
    :func:`finetune_encoders`) once per seed, and scored on the task's test split (its first
    ``ds.glue_test``). Returns per task ``{"gold": labels, "majority": the training set's
    majority class, "preds": {encoder: [n_seeds, n_test] class predictions}}``."""
    out = {}
    small = dataclasses.replace(ds, ft_train=ds.glue_train)
    for name, task in tasks.items():
        data = encode_task(tok, task, next(iter(encoders.values())).config.max_len, n_test=ds.glue_test)
        preds: dict[str, list[np.ndarray]] = {k: [] for k in encoders}
        for seed in seeds:
            for k, m in finetune_encoders(encoders, data, s, small, seed, device).items():
                preds[k].append(predict(m, m.encoder.config, data.test))
        out[name] = task_result(data, {k: np.stack(v) for k, v in preds.items()}, ds.glue_train)
    return out


def task_result(data: Encoded, preds: dict[str, np.ndarray], n_train: int | None = None) -> dict:
    """One task's entry of :func:`distil_glue`'s result from test predictions already made
    (``preds``: model -> ``[n_test]`` or ``[n_seeds, n_test]``); the majority class is that of
    the first ``n_train`` training labels (the ones the models were fine-tuned on)."""
    majority = int(np.bincount(data.train_y[:n_train], minlength=data.n_classes).argmax())
    return {"gold": np.asarray(data.test_y), "majority": majority,
            "preds": {k: np.atleast_2d(np.asarray(v)) for k, v in preds.items()}}


def glue_scores(results: dict[str, dict], model: str) -> dict[str, float]:
    """A model's GLUE-lite table scores from :func:`distil_glue`'s result (seed 0): ``"SST-2
    acc"``, ``"MRPC F1"``, ``"MRPC acc"``, ... (x 100, 2 decimals), as ``GlueReport.scores``."""
    out = {}
    for task, r in results.items():
        metrics = task_metrics(task, r["gold"].astype(float), r["preds"][model][0].astype(float))
        out.update({f"{DISPLAY.get(task, task)} {k}": round(v, 2) for k, v in metrics.items()})
    return out


def boot_scores(task: str, gold: np.ndarray, preds: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """GLUE's main score x 100 (accuracy; MRPC: the mean of F1 and accuracy) of ``preds``
    (``[n]`` or ``[n_seeds, n]``, averaged over seeds) on each bootstrap resample ``idx``
    (``[n_boot, n]`` indices into the test examples). Equal to
    ``glue.main_score(task, glue.task_metrics(...))`` on each resample (tested)."""
    if task == "stsb":
        raise ValueError("stsb is a regression task; chapter 9 distils classifiers")
    p = np.atleast_2d(np.asarray(preds))
    g = np.asarray(gold)[idx]                       # [n_boot, n]
    scores = []
    for row in p:
        q = row[idx]
        acc = (q == g).mean(1)
        if task == "mrpc":
            tp = ((q == 1) & (g == 1)).sum(1)
            fp = ((q == 1) & (g != 1)).sum(1)
            fn = ((q != 1) & (g == 1)).sum(1)
            f1 = np.where(tp == 0, 0.0, 2 * tp / np.maximum(2 * tp + fp + fn, 1))
            acc = (acc + f1) / 2
        scores.append(100 * acc)
    return np.mean(scores, 0)


def kept_table(results: dict[str, dict], teacher: str = "teacher", n_boot: int = 1000, seed: int = 0
               ) -> pd.DataFrame:
    """Per task and model: GLUE's main score (mean over seeds), the share of the teacher's
    score it keeps (% kept) with a 95 % paired bootstrap over test examples (the same resamples
    for every model and seed), the spread of % kept over seeds, and the same for a model that
    always predicts the training set's majority class (the floor a ratio must beat)."""
    rows, boots, fulls = [], {}, {}
    rng = np.random.default_rng(seed)

    def row(task_name, name, score, t_score, ratio, by_seed):
        lo, hi = np.percentile(ratio, [2.5, 97.5])
        rows.append({"task": task_name, "model": name, "score": score, "% kept": 100 * score / t_score,
                     "low": 100 * float(lo), "high": 100 * float(hi), "seed min": 100 * min(by_seed),
                     "seed max": 100 * max(by_seed)})

    for task, r in results.items():
        gold, preds = r["gold"], dict(r["preds"])
        n = len(gold)
        preds["majority class"] = np.full((1, n), r["majority"])
        idx = rng.integers(0, n, (n_boot, n))
        full = np.arange(n)[None]
        t_seed = [float(boot_scores(task, gold, q, full)[0]) for q in preds[teacher]]
        for name, p in preds.items():
            boots.setdefault(name, []).append(boot_scores(task, gold, p, idx))
            fulls.setdefault(name, []).append(float(boot_scores(task, gold, p, full)[0]))
            per_seed = [float(boot_scores(task, gold, q, full)[0]) for q in p]
            by_seed = ([a / b for a, b in zip(per_seed, t_seed)] if len(per_seed) == len(t_seed)
                       else [fulls[name][-1] / fulls[teacher][-1]])
            row(DISPLAY.get(task, task), name, fulls[name][-1], fulls[teacher][-1],
                boots[name][-1] / np.maximum(boots[teacher][-1], 1e-12), by_seed)
    if len(results) > 1:  # GLUE's average over the tasks, resampled task by task
        t_avg, t_boot = np.mean(fulls[teacher]), np.mean(boots[teacher], 0)
        for name, b in boots.items():
            avg = float(np.mean(fulls[name]))
            row("average", name, avg, t_avg, np.mean(b, 0) / t_boot, [avg / t_avg])
    return pd.DataFrame(rows).set_index(["task", "model"])


# ------------------------------------------------------------------------------ spreads


def paired_ratio(pred_a: np.ndarray, pred_b: np.ndarray, gold: np.ndarray, n_boot: int = 1000,
                 seed: int = 0) -> dict[str, float]:
    """``acc(a) / acc(b)`` on the same test examples, with a 95 % paired-bootstrap interval."""
    ca, cb = (np.asarray(pred_a) == gold), (np.asarray(pred_b) == gold)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(gold), (n_boot, len(gold)))
    ratios = ca[idx].mean(1) / np.maximum(cb[idx].mean(1), 1e-12)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return {"ratio": float(ca.mean() / max(cb.mean(), 1e-12)), "low": float(lo), "high": float(hi)}


def paired_diff(pred_a: np.ndarray, pred_b: np.ndarray, gold: np.ndarray, n_boot: int = 1000,
                seed: int = 0) -> dict[str, float]:
    """``acc(a) - acc(b)`` in points, with a 95 % paired-bootstrap interval."""
    ca, cb = (np.asarray(pred_a) == gold).astype(float), (np.asarray(pred_b) == gold).astype(float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(gold), (n_boot, len(gold)))
    d = 100 * (ca[idx].mean(1) - cb[idx].mean(1))
    lo, hi = np.percentile(d, [2.5, 97.5])
    return {"diff": float(100 * (ca.mean() - cb.mean())), "low": float(lo), "high": float(hi)}


# ------------------------------------------------------------------------------ pruning and quantization


def magnitude_curve(net: BertForSequence, data: Encoded, fractions: Sequence[float]) -> pd.DataFrame:
    """Accuracy after global magnitude pruning of the encoder's and head's Linear weights."""
    cfg = net.encoder.config
    rows = []
    for f in fractions:
        pruned = copy.deepcopy(net)
        apply_masks(pruned, magnitude_masks(pruned, f, scope="global"))
        nz = n_params(pruned) - sum(int((w == 0).sum()) for w in prunable_weights(pruned).values())
        rows.append({"method": "magnitude pruning", "fraction": f, "accuracy": accuracy(pruned, cfg, data),
                     "bytes": 4 * nz})
    return pd.DataFrame(rows)


def head_curve(net: BertForSequence, data: Encoded, fractions: Sequence[float], n_importance: int = 256
               ) -> tuple[pd.DataFrame, torch.Tensor]:
    """Michel et al.'s head importance on ``n_importance`` training examples, then accuracy
    with the least important heads gated off. ``bytes`` counts what removing the heads would
    save (their q/k/v rows and output-projection columns)."""
    cfg = net.encoder.config
    sub = Encoded(data.train[:n_importance], data.train_y[:n_importance], data.test, data.test_y)
    imp = head_importance(net, batches(cfg, sub, 64)(0), lambda m, b: m.loss(b))
    curve = head_pruning_curve(net, imp, lambda m: accuracy(m, cfg, data), fractions)
    hd = cfg.d_model // cfg.n_head
    per_head = 4 * hd * cfg.d_model + 3 * hd  # q, k, v rows (+ biases) and proj columns
    total = n_params(net)
    frame = pd.DataFrame([{"method": "head pruning", "fraction": c["fraction"], "heads_pruned": c["heads_pruned"],
                           "accuracy": c["score"], "bytes": 4 * (total - c["heads_pruned"] * per_head)}
                          for c in curve])
    return frame, imp


def quantization_rows(net: BertForSequence, data: Encoded) -> pd.DataFrame:
    """Accuracy and size of the fp32 model, our int8, PyTorch's int8 and bf16."""
    cfg = net.encoder.config
    fp32_bytes = 4 * n_params(net)
    lin = linear_weight_bytes(net)
    variants = {"fp32": (net, fp32_bytes), "int8 (ours)": (quantize_linears(net), fp32_bytes - lin * 3 // 4),
                "int8 (torch)": (torch_dynamic_int8(net), fp32_bytes - lin * 3 // 4),
                "bf16": (to_bf16(net), fp32_bytes // 2)}
    rows = [{"method": k, "accuracy": accuracy(m, cfg, data), "bytes": b, "state_dict bytes": state_dict_bytes(m)}
            for k, (m, b) in variants.items()]
    return pd.DataFrame(rows).set_index("method")


def latency_table(d_model: int, n_layer: int = 4, batch: int = 32, length: int = 64, repeats: int = 3) -> pd.DataFrame:
    """Seconds per forward pass of a Linear-heavy BERT encoder + classifier of width
    ``d_model`` (random weights: speed does not depend on training) in fp32, our int8 (the
    readable kernel, and our weights in PyTorch's fused kernel), PyTorch's int8 and bf16,
    timed in alternation; ratios to fp32."""
    cfg = BertConfig(vocab_size=1000, max_len=length, n_layer=n_layer, n_head=max(1, d_model // 64),
                     d_model=d_model)
    net = BertForSequence(BertEncoder(cfg, seed=0), 2, seed=0).eval()
    x = {"ids": torch.randint(5, 1000, (batch, length), generator=torch.Generator().manual_seed(0))}
    models = {"fp32": net, "int8 (ours)": quantize_linears(net),
              "int8 (ours, fused kernel)": quantize_linears(net, kernel="fbgemm"),
              "int8 (torch)": torch_dynamic_int8(net), "bf16": to_bf16(net)}
    t = latency({k: (lambda m=m: m(x)) for k, m in models.items()}, repeats=repeats, inner=1)
    frame = pd.DataFrame({"seconds": t})
    frame["speed-up vs fp32"] = frame["seconds"]["fp32"] / frame["seconds"]
    frame["Linear weight MB"] = [linear_weight_bytes(m) / 1e6 if k != "int8 (torch)" else np.nan
                                 for k, m in models.items()]
    return frame


# ------------------------------------------------------------------------------ figures


def size_accuracy_plot(points: pd.DataFrame, teacher_acc: float, chance: float, ax=None):
    """Accuracy against model bytes, one marker and line per method (``points`` has columns
    ``method``, ``bytes``, ``accuracy``)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.2))
    markers = dict(zip(sorted(points["method"].unique()), "osD^vP*X"))
    for method, g in points.groupby("method", sort=True):
        g = g.sort_values("bytes")
        ax.plot(g["bytes"] / 1e6, g["accuracy"], marker=markers[method], label=method, lw=1)
    ax.axhline(teacher_acc, color="0.3", ls="--", lw=0.8, label="teacher (fp32)")
    ax.axhline(chance, color="0.6", ls=":", lw=0.8, label="majority class")
    ax.set(xscale="log", xlabel="model size (MB: fp32 = 4 B per non-zero parameter)", ylabel="test accuracy (%)")
    ax.legend(fontsize=7)
    return ax


def draw_distillation(ax=None):
    """Teacher and student side by side: which student layer copies and learns from which
    teacher layer, and the three kinds of loss between them."""
    from ..transformer.chapter7b import _box

    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.8))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    ax.text(2.2, 9.5, "teacher (N layers)", ha="center", fontsize=11, weight="bold")
    ax.text(7.8, 9.5, "student (N / 2 layers)", ha="center", fontsize=11, weight="bold")
    _box(ax, 2.2, 0.8, 3.0, 0.7, "embeddings", "#dbe9f6")
    _box(ax, 7.8, 0.8, 3.0, 0.7, "embeddings (copied)", "#dbe9f6")
    ys_t = [2.0 + 1.3 * i for i in range(4)]
    for i, y in enumerate(ys_t):
        _box(ax, 2.2, y, 3.0, 0.8, f"layer {i + 1}", "#fde2c8")
    ys_s = [ys_t[0], ys_t[2]]
    for j, y in enumerate(ys_s):
        _box(ax, 7.8, y + 0.65, 3.0, 0.8, f"layer {j + 1} = teacher's {2 * j + 1}", "#fde2c8")
    _box(ax, 2.2, 7.6, 3.0, 0.8, "logits z_t", "#d9f0d3")
    _box(ax, 7.8, 7.6, 3.0, 0.8, "logits z_s", "#d9f0d3")
    arrow = {"arrowstyle": "->", "color": "C3", "lw": 1.2, "ls": "--"}
    for j, t in enumerate((1, 3)):  # TinyBERT: student layer j+1 <- teacher layer 2(j+1)
        ax.annotate("", (6.3, ys_s[j] + 0.65), (3.7, ys_t[t]), arrowprops=arrow)
    ax.text(5.0, 4.75, "hidden states + attention\n(TinyBERT, MSE)", ha="center", fontsize=8, color="C3")
    ax.annotate("", (6.3, 7.6), (3.7, 7.6), arrowprops={"arrowstyle": "->", "color": "C0", "lw": 1.5})
    ax.text(5.0, 8.35, "soft targets: α T² KL(softmax(z_t/T) || softmax(z_s/T))", ha="center", fontsize=8,
            color="C0")
    ax.text(7.8, 8.85, "+ (1 - α) CE with the true labels", ha="center", fontsize=8)
    return ax


__all__ = [
    "DistilSizes",
    "Encoded",
    "Sizes",
    "accuracy",
    "batches",
    "bert_config",
    "boot_scores",
    "distil_glue",
    "distil_pretrained",
    "distil_sizes",
    "distil_students",
    "draw_distillation",
    "encode_task",
    "finetune_encoders",
    "glue_scores",
    "head_curve",
    "kept_table",
    "latency_table",
    "magnitude_curve",
    "mlm_loss",
    "mlm_rows",
    "n_params",
    "paired_diff",
    "paired_ratio",
    "predict",
    "quantization_rows",
    "size_accuracy_plot",
    "sizes",
    "task_result",
    "tokenizer_and_rows",
    "train_classifier",
]
