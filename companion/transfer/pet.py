"""Prompt-based fine-tuning, PET, and searching for label words.

* :class:`PromptClassifier` -- fine-tune a masked LM *through* a pattern and a verbalizer: the
  label logits are the MLM logits of the label words at the blank, so the "head" is the
  pre-trained output layer and nothing new starts from random (Schick & Schütze 2021; Gao et
  al. 2021's LM-BFF; the "prompt-based" curve of Le Scao & Rush 2021).
* **PET** (Schick & Schütze 2021): one :class:`PromptClassifier` per pattern-verbalizer pair
  (:class:`PVP`) trained on the few labelled examples; their ensemble labels an unlabelled set
  with soft labels (:func:`ensemble_soft_labels`: a weighted mean of the models' logits, then a
  softmax at temperature ``T = 2``); a plain classifier is distilled from those soft labels
  (:func:`distill`, a soft cross-entropy, :func:`soft_cross_entropy`).
* **iPET** (Schick & Schütze 2021, section 4): generations of PVP models, each model of
  generation ``j + 1`` trained on the labelled examples plus unlabelled ones that other models
  of generation ``j`` labelled, the training set growing by a factor ``d`` per generation with
  the labelled set's label proportions (:func:`ipet`, :func:`ipet_label_counts`); the last
  generation's ensemble is distilled as in PET.
* **Label-word search** (LM-BFF's first step): for each class, the vocabulary words the
  pre-trained MLM finds most likely at the blank on that class's training examples
  (:func:`search_label_words`).
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..data.tasks import Example
from .finetune import FTConfig, RunResult, train
from .prompts import ClozeModel, cloze_inputs, label_scores


@dataclass(frozen=True)
class PVP:
    """A pattern (with ``{text}`` and one ``[MASK]``) and one label word per class."""

    pattern: str
    words: tuple[str, ...]


class PromptClassifier(nn.Module):
    """A (copied, trainable) masked LM that classifies by its label words at the blank:
    ``logits_y = log P([MASK] = w_y | pattern(x))`` over the vocabulary (:func:`label_scores`),
    trained by cross-entropy over the labels (PET's loss without its auxiliary MLM term)."""

    def __init__(self, cloze: ClozeModel, pvp: PVP):
        super().__init__()
        self.cloze = copy.copy(cloze)
        self.encoder = copy.deepcopy(cloze.encoder)
        self.head = copy.deepcopy(cloze.head) if isinstance(cloze.head, nn.Module) else cloze.head
        if isinstance(self.head, nn.Module) and hasattr(self.head, "embedding"):
            self.head.embedding = self.encoder.embeddings.tok  # keep a tied head tied to the copy
        self.cloze.encoder, self.cloze.head = self.encoder, self.head
        self.pvp = pvp
        self.label_ids = cloze.word_ids(list(pvp.words))
        for p in self.parameters():
            p.requires_grad_(True)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return label_scores(self.cloze.logits(batch), self.label_ids)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return F.cross_entropy(self(batch), batch["labels"])

    def batches(self, examples: Sequence[Example], batch_size: int, seed: int, max_len: int):
        """``epoch -> batches`` of pattern-filled inputs with labels, shuffled per epoch."""
        def make(e: int) -> list[dict]:
            order = torch.randperm(len(examples), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
            out = []
            for i in range(0, len(order), batch_size):
                chunk = [examples[j] for j in order[i:i + batch_size]]
                b = cloze_inputs(self.cloze, self.pvp.pattern, chunk, max_len)
                b["labels"] = torch.tensor([int(x.label) for x in chunk])
                out.append(b)
            return out
        return make

    @torch.no_grad()
    def label_logits(self, examples: Sequence[Example], max_len: int, batch_size: int = 64) -> np.ndarray:
        """``[n, n_labels]`` label scores (eval mode)."""
        self.eval()
        dev = next(self.parameters()).device
        out = []
        for i in range(0, len(examples), batch_size):
            b = cloze_inputs(self.cloze, self.pvp.pattern, examples[i:i + batch_size], max_len)
            out.append(self({k: v.to(dev) for k, v in b.items()}).cpu())
        return torch.cat(out).numpy()


def run_prompt_classifier(cloze: ClozeModel, pvp: PVP, train_set: Sequence[Example], test_set: Sequence[Example],
                          config: FTConfig) -> tuple[RunResult, PromptClassifier]:
    """Prompt-based fine-tuning on ``train_set``; accuracy x 100 on ``test_set``."""
    clf = PromptClassifier(cloze, pvp)
    res = train(clf, clf.batches(train_set, config.batch_size, config.seed, config.max_len), config)
    out = clf.label_logits(test_set, config.max_len)
    gold = np.array([int(e.label) for e in test_set])
    preds = out.argmax(-1)
    n = sum(p.numel() for p in clf.parameters() if p.requires_grad)
    return RunResult("prompt-based", preds, 100 * float((preds == gold).mean()), n, res.seconds, res.losses), clf


# ------------------------------------------------------------------------------------- PET


def ensemble_soft_labels(logits: Sequence[np.ndarray], weights: Sequence[float] | None = None,
                         temperature: float = 2.0) -> np.ndarray:
    """PET's soft labels: ``softmax( sum_p w_p s_p(x) / (Z T) )`` with ``Z = sum_p w_p`` -- the
    weighted mean of the PVP models' label scores, softened by ``T`` (Schick & Schütze use
    ``T = 2`` and weight each model by its training-set accuracy before training)."""
    if not logits:
        raise ValueError("need the label scores of at least one PVP model")
    s = np.stack([np.asarray(x, dtype=np.float64) for x in logits])
    if len({x.shape for x in s}) != 1:
        raise ValueError("every PVP model must score the same examples and labels")
    w = np.ones(len(s)) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (len(s),) or (w < 0).any() or w.sum() == 0:
        raise ValueError(f"weights must be {len(s)} non-negative numbers, not all zero; got {weights!r}")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    mean = np.tensordot(w, s, axes=1) / w.sum()
    z = mean / temperature
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``-sum_y q(y) log softmax(logits)_y``, averaged over the batch (the distillation loss)."""
    return -(target * F.log_softmax(logits, -1)).sum(-1).mean()


def distill(encoder: nn.Module, tokenize, unlabelled: Sequence[Example], soft: np.ndarray, config: FTConfig,
            pooling: str = "mean") -> nn.Module:
    """PET's final step: a plain sequence classifier (``BertForSequence`` on a copy of
    ``encoder``) trained on ``unlabelled`` with the ensemble's soft labels ``soft [n, L]``."""
    from ..transformer.bert import BertForSequence
    from .finetune import batch, encode

    if len(unlabelled) != len(soft):
        raise ValueError(f"{len(unlabelled)} unlabelled examples but {len(soft)} soft labels")
    model = BertForSequence(copy.deepcopy(encoder), soft.shape[1], pooling=pooling, seed=config.seed)
    for p in model.parameters():
        p.requires_grad_(True)
    enc = encode(tokenize, unlabelled, config.max_len)
    q = torch.tensor(soft, dtype=torch.float32)

    def make(e: int) -> list[dict]:
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(config.seed * 1000 + e)).tolist()
        out = []
        for i in range(0, len(order), config.batch_size):
            idx = order[i:i + config.batch_size]
            b = batch(encoder.config, [enc[j] for j in idx])
            b["soft"] = q[idx]
            out.append(b)
        return out

    train(model, make, config, loss_fn=lambda m, b: soft_cross_entropy(m(b), b["soft"]))
    return model


# ------------------------------------------------------------------------------------ iPET


def ipet_label_counts(labels: Sequence[int], generation: int, growth: int = 5) -> dict[int, int]:
    """How many *new* (pseudo-labelled) examples of each label a model of ``generation``
    (1 = PET, trained on the labelled set ``T`` alone) is given: its training set has
    ``growth ** (generation - 1) * |T|`` examples, ``T`` included, and the new ones keep ``T``'s
    label proportions (rounded, so that the total is exact)."""
    if generation < 1 or growth < 1:
        raise ValueError(f"generation and growth must be >= 1, got {generation} and {growth}")
    counts = np.bincount(np.asarray(list(labels), dtype=int))
    extra = (growth ** (generation - 1) - 1) * int(counts.sum())
    share = counts / counts.sum() * extra
    out = np.floor(share).astype(int)
    for i in np.argsort(-(share - out), kind="stable")[: extra - int(out.sum())]:
        out[i] += 1  # largest remainders first
    return {c: int(n) for c, n in enumerate(out) if counts[c] > 0}


@dataclass
class IPETGeneration:
    """One generation: per model, its training-set size and its label scores on the
    unlabelled set (``[n_u, L]``); ``scorers`` score any examples (``examples -> [n, L]``)."""

    sizes: list[int]
    unlabelled_scores: list[np.ndarray]
    scorers: list


def ipet(pvps: Sequence[PVP], train_set: Sequence[Example], unlabelled: Sequence[Example], fit,
         generations: int = 3, growth: int = 5, fraction: float = 0.25, seed: int = 0) -> list[IPETGeneration]:
    """iPET: ``generations`` rounds of one model per PVP. ``fit(pvp, examples)`` trains a model
    and returns its scorer (``examples -> [n, L]`` label scores). Generation 1 is PET's (each
    model sees ``train_set``). A model of generation ``j + 1`` gets ``train_set`` plus new
    examples drawn from ``unlabelled``: an ensemble of a random ``fraction`` of the *other*
    models of generation ``j`` (at least one) labels them, and for each label
    :func:`ipet_label_counts` examples are sampled among those it assigns that label, with
    probability proportional to the ensemble's confidence (Schick & Schütze's λ = 0.25, d = 5)."""
    if generations < 1:
        raise ValueError(f"generations must be >= 1, got {generations}")
    labels = [int(e.label) for e in train_set]
    need = (growth ** (generations - 1) - 1) * len(train_set)
    if need > len(unlabelled):
        raise ValueError(f"{generations} generations with growth {growth} need {need} unlabelled examples, "
                         f"have {len(unlabelled)}; use fewer generations or more unlabelled data")
    rng = np.random.default_rng(seed)
    out: list[IPETGeneration] = []
    sets = [list(train_set) for _ in pvps]
    for gen in range(1, generations + 1):
        if gen > 1:
            prev = out[-1]
            counts = ipet_label_counts(labels, gen, growth)
            sets = []
            for i in range(len(pvps)):
                others = [j for j in range(len(pvps)) if j != i] or [i]
                m = max(1, round(fraction * len(others)))
                chosen = rng.choice(others, size=m, replace=False)
                probs = ensemble_soft_labels([prev.unlabelled_scores[j] for j in chosen], temperature=1.0)
                guess, conf = probs.argmax(1), probs.max(1)
                new, taken = [], np.zeros(len(unlabelled), dtype=bool)
                for c, n in counts.items():
                    pool = np.flatnonzero((guess == c) & ~taken)
                    if len(pool) < n:  # too few examples carry this label: the likeliest free ones
                        free = np.flatnonzero(~taken)
                        pool = free[np.argsort(-probs[free, c], kind="stable")[:n]]
                    w = conf[pool] / conf[pool].sum()
                    pick = rng.choice(pool, size=n, replace=False, p=w) if n else []
                    taken[pick] = True
                    new += [Example(unlabelled[k].text, c, unlabelled[k].text_b) for k in pick]
                sets.append(list(train_set) + new)
        scorers = [fit(pvp, s) for pvp, s in zip(pvps, sets)]
        out.append(IPETGeneration([len(s) for s in sets], [np.asarray(f(unlabelled)) for f in scorers], scorers))
    return out


# ---------------------------------------------------------------------------- label search


def search_label_words(logits: torch.Tensor, labels: Sequence[int], k: int = 5,
                       candidates: Sequence[int] | None = None) -> list[list[int]]:
    """LM-BFF's label-word candidates: for each class ``c``, the ``k`` token ids with the
    largest ``sum_{x in class c} log P([MASK] = w | pattern(x))`` (``logits [n, V]`` at the
    blank). ``candidates`` restricts the search (e.g. to whole, alphabetic words)."""
    logp = F.log_softmax(logits.float(), -1)
    y = torch.as_tensor(list(labels))
    if len(y) != len(logp):
        raise ValueError(f"{len(logp)} rows of logits but {len(y)} labels")
    cand = torch.arange(logp.shape[1]) if candidates is None else torch.as_tensor(list(candidates))
    out = []
    for c in sorted(set(y.tolist())):
        total = logp[y == c][:, cand].sum(0)
        out.append(cand[total.topk(min(k, len(cand))).indices].tolist())
    return out


def best_assignment(logits: torch.Tensor, labels: Sequence[int], candidates: list[list[int]]) -> tuple[list[int], float]:
    """The one word per class (from ``candidates``, distinct) whose verbalizer gives the highest
    zero-shot accuracy on the labelled examples: ``(ids, accuracy)``. LM-BFF re-ranks by
    fine-tuned dev accuracy; with a few examples we re-rank by zero-shot accuracy."""
    y = np.asarray(list(labels))
    best, best_acc = None, -1.0
    for combo in itertools.product(*candidates):
        if len(set(combo)) < len(combo):
            continue
        acc = float((label_scores(logits, [[w] for w in combo]).argmax(-1).numpy() == y).mean())
        if acc > best_acc:
            best, best_acc = list(combo), acc
    if best is None:
        raise ValueError("no assignment of distinct words: give more candidates per class")
    return best, best_acc


def timed(fn, *args, **kwargs):
    """``(result, seconds)`` of one call."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0
