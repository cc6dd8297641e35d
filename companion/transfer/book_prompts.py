"""Prompting the book's stored models: ``bert-book`` (a masked LM with its MLM head) and
``gpt-book`` (a causal LM), against controls that cannot read a blank.

* :func:`book_cloze` / :func:`twin_cloze` -- ``bert-book`` as a :class:`~.prompts.ClozeModel`,
  and the same architecture freshly initialised (the untrained twin: a pattern on it measures
  what the pattern and the label words do without any pre-training);
* :func:`zero_shot_grid` -- every pattern x verbalizer x model on labelled examples: accuracy,
  calibrated accuracy, the positive word's mean probability, and the per-example predictions
  (for paired intervals);
* :func:`few_shot_draws` -- Zhao et al.'s setting on a causal LM: for each ``k`` and each draw, one
  fixed set of ``k`` demonstrations (balanced, random order) in front of every query; the
  content-free inputs get the *same* demonstrations, and :func:`~.prompts.calibrate` divides
  their label distribution out;
* :func:`head_vs_prompt` -- Le Scao & Rush's curve: head-based (``[CLS]`` + a new pooler and
  linear head) against prompt-based fine-tuning (the MLM head read through the verbalizer),
  the same initialisation, examples, batches, steps and encoder learning rate for both arms;
* :func:`paired_bootstrap` / :func:`majority` -- the spread of a difference of accuracies and
  the majority-class baseline.

Every function that runs a model takes ``device`` (default: the CPU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from ..data.tasks import Example
from . import prompts
from .finetune import FTConfig, run_classifier

PATTERNS = ("{text} It was [MASK].", "{text} All in all, it was [MASK].", "Just [MASK]! {text}",
            "{text} The movie is [MASK].")
VERBALIZERS = (("bad", "good"), ("terrible", "great"), ("boring", "fun"))


def book_cloze(device: str = "cpu") -> prompts.ClozeModel:
    """``bert-book`` (sha256-checked) with its own MLM head, over the book's BPE."""
    from .. import zoo

    bert = zoo.load("bert-book", device=device)
    return prompts.bert_cloze(bert, zoo.tokenizer(), name="bert-book")


def twin_cloze(seed: int = 0, device: str = "cpu") -> prompts.ClozeModel:
    """``bert-book``'s architecture and tokenizer, freshly initialised with ``seed``: no
    pre-training at all (its MLM head is random too)."""
    from .. import zoo
    from ..zoo.trainer import build_model

    tok = zoo.tokenizer()
    net = build_model(zoo.get_spec("bert-book"), tok, seed=seed).to(device).eval()
    return prompts.bert_cloze(net, tok, name="untrained twin")


def majority(train_labels: Sequence[int], test_labels: Sequence[int]) -> float:
    """Accuracy (%) of always answering the training labels' most common class."""
    v, c = np.unique(np.asarray(list(train_labels)), return_counts=True)
    return 100 * float((np.asarray(list(test_labels)) == v[np.argmax(c)]).mean())


def _check(examples, what: str) -> None:
    if isinstance(examples, (str, bytes)) or not isinstance(examples, Sequence) or not examples:
        raise ValueError(f"{what} must be a non-empty list of Examples, got {examples!r:.60}")


def zero_shot_grid(models: dict[str, prompts.ClozeModel], patterns: Sequence[str],
                   verbalizers: Sequence[Sequence[str]], examples: Sequence[Example], max_len: int = 64,
                   keep_predictions: bool = False) -> pd.DataFrame:
    """One row per model x pattern x verbalizer (label words in label order, negative first):
    accuracy and calibrated accuracy (%), P(positive word) averaged, the content-free P(positive);
    with ``keep_predictions`` also both prediction vectors (lists of 0/1)."""
    _check(examples, "examples")
    gold = np.array([int(e.label) for e in examples])
    cf = [Example(t, 0) for t in prompts.CONTENT_FREE]
    rows = []
    for name, m in models.items():
        for pat in patterns:
            logits = prompts.mask_logits(m, pat, examples, max_len=max_len)
            logits_cf = prompts.mask_logits(m, pat, cf, max_len=max_len)
            for words in verbalizers:
                ids = m.word_ids(list(words))
                p = prompts.label_distribution(logits, ids).numpy()
                p_cf = prompts.label_distribution(logits_cf, ids).numpy().mean(0)
                q = prompts.calibrate(p, p_cf)
                row = {"model": name, "pattern": pat, "words": "/".join(words),
                       "accuracy": 100 * float((p.argmax(1) == gold).mean()),
                       "calibrated": 100 * float((q.argmax(1) == gold).mean()),
                       "P(positive)": float(p[:, -1].mean()), "content-free P(positive)": float(p_cf[-1])}
                if keep_predictions:
                    row["pred"] = p.argmax(1).tolist()
                    row["pred_cal"] = q.argmax(1).tolist()
                rows.append(row)
    return pd.DataFrame(rows)


def few_shot_draws(gpt, tok, pool: Sequence[Example], queries: Sequence[Example], ks: Sequence[int], draws: int,
                   template: prompts.Template, words: Sequence[str], seed: int = 0, batch_size: int = 32,
                   device: str = "cpu") -> pd.DataFrame:
    """Few-shot prompts for a causal LM, Zhao et al.'s way: per ``k`` and draw, ``k``
    demonstrations drawn from ``pool`` (balanced when ``k`` is even; a fresh order per draw) are
    put in front of every query; the label words' next-token probabilities give ``p``; the same
    demonstrations with each content-free input ("N/A", "", "[MASK]") give ``p_cf`` (averaged),
    and ``calibrate(p, p_cf)`` the calibrated answer. One row per ``(k, draw)``: accuracy,
    calibrated accuracy (%), P(last word) and the content-free P(last word). ``k = 0`` has one
    draw (there is nothing to draw)."""
    _check(pool, "pool")
    _check(queries, "queries")
    gpt = gpt.to(device).eval()
    ids = []
    for w in words:
        t = tok.encode_ordinary(" " + w)
        if len(t) != 1:
            raise ValueError(f"label word {w!r} is {len(t)} tokens of the GPT's vocabulary, not one")
        ids.append(t[0])
    start = tok.special_tokens["<|endoftext|>"]
    B = gpt.config.block_size
    gold = np.array([int(q.label) for q in queries])
    by_label = {c: [i for i, e in enumerate(pool) if int(e.label) == c] for c in sorted({int(e.label) for e in pool})}
    rows = []
    for k in ks:
        for d in range(1 if k == 0 else draws):
            rng = np.random.default_rng(seed * 7919 + k * 101 + d)
            idx = []
            for j in range(k):  # alternate the labels, then shuffle the order
                c = list(by_label)[(j + d) % len(by_label)]
                idx.append(int(rng.choice([i for i in by_label[c] if i not in idx])))
            idx = [idx[i] for i in rng.permutation(len(idx))]
            demos = [pool[i] for i in idx]
            texts, kept = [], []
            for q in queries:
                text, n = prompts.build_prompt(template, demos, q, words, tok.encode_ordinary, B - 1)
                texts.append(text)
                kept.append(n)
            cf_texts = [prompts.build_prompt(template, demos, Example(t, 0), words, tok.encode_ordinary, B - 1)[0]
                        for t in prompts.CONTENT_FREE]
            lp = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, texts, ids, start, batch_size=batch_size)
            lp_cf = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, cf_texts, ids, start, batch_size=batch_size)
            p = np.exp(lp - lp.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            pc = np.exp(lp_cf - lp_cf.max(1, keepdims=True))
            p_cf = (pc / pc.sum(1, keepdims=True)).mean(0)
            q = prompts.calibrate(p, p_cf)
            rows.append({"k": int(k), "draw": d, "accuracy": 100 * float((p.argmax(1) == gold).mean()),
                         "calibrated": 100 * float((q.argmax(1) == gold).mean()),
                         "P(last word)": float(p[:, -1].mean()), "content-free P(last word)": float(p_cf[-1]),
                         "demos in context": float(np.mean(kept))})
    return pd.DataFrame(rows)


def curve_config(n: int, steps: int, lr: float, head_lr: float | None, batch_size: int, max_len: int, seed: int,
                 device: str = "cpu") -> FTConfig:
    """The shared configuration of both arms at ``n`` examples: ``batch_size`` (at most ``n``),
    as many epochs as ``steps`` optimizer steps need, warm-up over 10 % of them."""
    bs = min(batch_size, n)
    epochs = max(1, math.ceil(steps * bs / n))
    return FTConfig(epochs=epochs, lr=lr, batch_size=bs, warmup=0.1, max_len=max_len, seed=seed,
                    head_lr=head_lr, device=device)


def head_vs_prompt(cloze: prompts.ClozeModel, pvp, train: Sequence[Example], test: Sequence[Example],
                   config: FTConfig) -> dict:
    """Both arms on the same ``train`` examples with the same ``config`` (same seed: the same
    batches in the same order): head-based (``[CLS]``, a new tanh pooler and linear head; the
    new head's own rate is ``config.head_lr``) and prompt-based (:class:`~.pet.PromptClassifier`,
    no new parameter). Returns accuracies (%), test predictions, final training losses, steps."""
    from .pet import run_prompt_classifier

    _check(train, "train")
    _check(test, "test")
    head = run_classifier(cloze.encoder, cloze.tokenize, train, test, 2, config, method="full", pooling="cls")
    prompt, _ = run_prompt_classifier(cloze, pvp, train, test, config)
    out = {}
    for arm, r in (("head", head), ("prompt", prompt)):
        out[arm] = {"accuracy": float(r.score), "pred": np.asarray(r.preds).astype(int).tolist(),
                    "final_loss": float(np.mean(r.losses[-10:])), "steps": len(r.losses),
                    "seconds": round(float(r.seconds), 1)}
    return out


def paired_bootstrap(pred_a: Sequence[int], pred_b: Sequence[int], gold: Sequence[int], n_boot: int = 1000,
                     seed: int = 0) -> tuple[float, float, float]:
    """``(a - b, low, high)``: the difference of two classifiers' accuracies (points) on the same
    examples and its 95 % paired bootstrap interval."""
    a, b, g = (np.asarray(list(x)) for x in (pred_a, pred_b, gold))
    if not (a.shape == b.shape == g.shape) or not len(g):
        raise ValueError(f"pred_a, pred_b and gold must have one equal, non-zero length; got {a.shape}, "
                         f"{b.shape}, {g.shape}")
    d = (a == g).astype(float) - (b == g).astype(float)
    rng = np.random.default_rng(seed)
    boots = d[rng.integers(0, len(d), (n_boot, len(d)))].mean(1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return 100 * float(d.mean()), 100 * float(lo), 100 * float(hi)


# ------------------------------------------------------------------------------ the diagrams


def _arrow(ax, start, end, text: str = "", color: str = "0.35"):
    ax.annotate("", end, start, arrowprops={"arrowstyle": "->", "color": color, "lw": 1.2})
    if text:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.25, text, ha="center", va="bottom",
                fontsize=7.5, color="0.25")


def draw_pipeline(ax=None, text: str = "a witty film.", words: Sequence[str] = ("bad", "good"),
                  probs: Sequence[float] = (0.2, 0.8)):
    """Cloze prompting, left to right: the input, the pattern around it, the masked LM and its
    MLM head, the vocabulary distribution at the blank, the verbalizer's label words, and the
    label distribution (renormalised over the label words). ``probs`` are illustrative. Returns
    the axes."""
    import matplotlib.pyplot as plt

    from .chapter10 import _box

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 2.8))
    ax.set_xlim(0, 20)
    ax.set_ylim(0, 5)
    ax.axis("off")
    _box(ax, 1.6, 2.5, 2.8, 1.4, f"input x\n\"{text}\"", "#e8e8e8", fontsize=7.5)
    _box(ax, 5.6, 2.5, 3.6, 1.4, f"pattern P(x)\n\"{text} It was\n[MASK].\"", "#fde2c8", fontsize=7.5)
    _box(ax, 9.7, 2.5, 2.8, 2.2, "masked LM\n(bert-book:\nencoder +\nits MLM head)", "#dbe9f6", fontsize=7.5)
    _box(ax, 13.5, 2.5, 3.0, 2.2, "P(w | blank)\nover all 4,099\ntokens: 'the', ',',\n'good', 'bad', ...",
         "#e8e8e8", fontsize=7.5)
    _box(ax, 17.9, 2.5, 3.6, 2.2, "verbalizer v(y):\n" + "\n".join(f"{w}: {p:.2f}" for w, p in zip(words, probs))
         + "\n(renormalised)", "#d9f0d3", fontsize=7.5)
    _arrow(ax, (3.0, 2.5), (3.8, 2.5))
    _arrow(ax, (7.4, 2.5), (8.3, 2.5))
    _arrow(ax, (11.1, 2.5), (12.0, 2.5), "blank's\nstate")
    _arrow(ax, (15.0, 2.5), (16.1, 2.5), "label\nwords")
    ax.text(10.0, 4.6, "no new parameter: the pre-trained output layer answers the question", ha="center",
            fontsize=9)
    ax.text(10.0, 0.4, "head-based fine-tuning instead: [CLS]'s state -> a new, randomly initialised "
            "linear layer -> label", ha="center", fontsize=8, color="0.35")
    return ax


def draw_pet_loop(ax=None, n_pvps: int = 3):
    """PET and iPET as a loop: a few labelled examples train one prompt-based model per
    pattern-verbalizer pair; their ensemble soft-labels unlabelled text; iPET feeds the most
    confident pseudo-labels back (the training set grows d-fold per generation); PET distils the
    last ensemble into a plain classifier. Returns the axes."""
    import matplotlib.pyplot as plt

    from .chapter10 import _box

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    ax.set_xlim(0, 20)
    ax.set_ylim(0, 8)
    ax.axis("off")
    _box(ax, 2.0, 5.5, 3.2, 1.3, "labelled set T\n(16-32 examples)", "#d9f0d3", fontsize=8)
    ys = np.linspace(7.0, 4.0, n_pvps)
    for i, y in enumerate(ys):
        _box(ax, 7.2, y, 3.6, 0.8, f"PVP {i + 1}: pattern + words\nprompt-based fine-tuning", "#dbe9f6", fontsize=7)
        _arrow(ax, (3.6, 5.5), (5.4, y))
        _arrow(ax, (9.0, y), (10.6, 5.5))
    _box(ax, 12.4, 5.5, 3.6, 1.3, "ensemble:\nmean label scores,\nsoftmax at T = 2", "#fde2c8", fontsize=8)
    _box(ax, 12.4, 2.2, 3.4, 1.3, "unlabelled set D\n(soft labels)", "#e8e8e8", fontsize=8)
    _box(ax, 17.7, 5.5, 4.0, 1.3, "distilled classifier\n(no pattern\nat test time)", "#e5d4ef", fontsize=8)
    _arrow(ax, (12.4, 4.85), (12.4, 2.85), "label D")
    _arrow(ax, (14.2, 5.5), (15.7, 5.5), "PET")
    _arrow(ax, (14.1, 2.2), (17.0, 4.85), "train on D's soft labels")
    _arrow(ax, (10.7, 2.2), (2.0, 4.85), color="#c44e52")
    ax.text(5.4, 2.0, "iPET: the most confident pseudo-labels join T;\n"
            "each generation's models train on d times more", ha="center", fontsize=7.5, color="#c44e52")
    ax.text(10.0, 7.8, "PET / iPET (Schick & Schütze 2021)", ha="center", fontsize=9)
    return ax


# ------------------------------------------------------------------------- the stored run

RESULTS = __import__("pathlib").Path(__file__).with_name("prompting_results.json")


def stored_results(path=None) -> dict:
    """The stored run of ``benchmarks/ch10b_prompting.py`` (a clear error when it is missing)."""
    import json
    from pathlib import Path

    p = Path(path) if path is not None else RESULTS
    if not p.is_file():
        raise FileNotFoundError(f"{p} is missing; `python -m benchmarks.ch10b_prompting --merge` writes it "
                                "after its parts have run")
    return json.loads(p.read_text(encoding="utf-8"))


def zero_shot_table(res: dict, task: str, value: str = "calibrated") -> pd.DataFrame:
    """Stored zero-shot accuracies of ``task`` (``"sst2"`` or ``"imdb"``): one row per pattern
    and label words, one column per model (``value``: ``"accuracy"`` or ``"calibrated"``)."""
    if task not in res.get("zeroshot", {}):
        raise KeyError(f"the stored run has no zero-shot part for {task!r}")
    df = pd.DataFrame(res["zeroshot"][task]["rows"])
    t = df.pivot_table(index=["pattern", "words"], columns="model", values=value, sort=False)
    return t[[m for m in ("bert-book", "untrained twin", "all-MiniLM-L6-v2") if m in t.columns]]


def zero_shot_row(res: dict, task: str, pattern: str, words: str, model: str = "bert-book") -> dict:
    """One stored zero-shot row (with its paired differences to the controls, bert-book only)."""
    for r in res["zeroshot"][task]["rows"]:
        if r["model"] == model and r["pattern"] == pattern and r["words"] == words:
            return r
    raise KeyError(f"no stored row for {model}, {pattern!r}, {words!r} on {task}")


def calibration_table(res: dict) -> pd.DataFrame:
    """Stored few-shot accuracies of ``gpt-book`` per number of demonstrations ``k``: mean,
    lowest and highest over the draws, before and after calibration."""
    df = pd.DataFrame(res["calibration"]["rows"])
    g = df.groupby("k")
    out = pd.DataFrame({"draws": g.size(), "accuracy": g.accuracy.mean(), "lowest": g.accuracy.min(),
                        "highest": g.accuracy.max(), "calibrated": g.calibrated.mean(),
                        "calibrated lowest": g.calibrated.min(), "calibrated highest": g.calibrated.max(),
                        "P(good)": g["P(last word)"].mean()})
    return out


def t_interval(x: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: Student's t interval of the mean of ``x`` (at least two values)."""
    from scipy import stats

    a = np.asarray(list(x), dtype=float)
    if len(a) < 2:
        raise ValueError(f"a t interval needs at least two values, got {len(a)}")
    m, se = float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a)))
    h = float(stats.t.ppf(0.5 + level / 2, len(a) - 1)) * se
    return m, m - h, m + h


def curve_frame(res: dict) -> pd.DataFrame:
    """The stored data-points curve: one row per ``n``, seed and method (``head``, ``prompt``)."""
    return pd.DataFrame(res["curve"]["rows"])
