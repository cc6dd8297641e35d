"""Chapter 10b's experiments (prompting), so that the notebook's cells stay short.

* :func:`zero_shot` -- a cloze pattern and label words on labelled examples: accuracy before and
  after contextual calibration;
* :func:`in_context` -- our GPT with ``k`` demonstrations (random or nearest by MiniLM's
  sentence vectors) in front of each query, before and after calibration;
* :func:`pet_runs` -- PET in miniature: one prompt-based model per pattern-verbalizer pair, their
  ensemble's soft labels on unlabelled examples, a distilled classifier;
* :func:`label_search` -- LM-BFF's automatic label words for a pattern;
* :func:`draw_calibration` -- accuracy before and after calibration, one pair of bars per setting.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ..data.tasks import Example
from . import pet, prompts
from .finetune import FTConfig, encode, predict, run_classifier


def _acc(p: np.ndarray, gold: np.ndarray) -> float:
    return 100 * float((np.asarray(p).argmax(-1) == gold).mean())


def zero_shot(cloze: prompts.ClozeModel, pattern: str, words: Sequence[str], examples: Sequence[Example],
              max_len: int = 64) -> dict:
    """Accuracy (x 100) of ``pattern`` + ``words`` with no training, before and after contextual
    calibration (the content-free inputs of :data:`.prompts.CONTENT_FREE`, averaged), the mean
    probability of the last label (its bias) and the content-free distribution."""
    ids = cloze.word_ids(list(words))
    p = prompts.label_distribution(prompts.mask_logits(cloze, pattern, examples, max_len=max_len), ids).numpy()
    cf_examples = [Example(t, 0) for t in prompts.CONTENT_FREE]
    p_cf = prompts.label_distribution(prompts.mask_logits(cloze, pattern, cf_examples, max_len=max_len),
                                      ids).numpy().mean(0)
    gold = np.array([int(e.label) for e in examples])
    return {"accuracy": _acc(p, gold), "calibrated": _acc(prompts.calibrate(p, p_cf), gold),
            "P(last label)": float(p[:, -1].mean()), "p_cf": p_cf}


def in_context(gpt, tok, pool: Sequence[Example], queries: Sequence[Example], k: int, how: str,
               template: prompts.Template, words: Sequence[str], pool_vecs=None, query_vecs=None,
               seed: int = 0) -> dict:
    """In-context classification of ``queries`` by our GPT: ``k`` demonstrations from ``pool``
    per query (``how`` = "random" or "similar"), the label words' next-token probabilities,
    renormalised. Calibration uses the same demonstrations with the content-free query "N/A"
    (per query, since each query has its own demonstrations). Returns accuracies (x 100), the
    mean number of demonstrations that fitted the context, and the bias P(last label)."""
    ids = [tok.encode_ordinary(" " + w)[0] for w in words]
    start = gpt.config.start_id
    B = gpt.config.block_size
    texts, cf_texts, kept = [], [], []
    for i, q in enumerate(queries):
        idx = prompts.choose_demos(len(pool), k, how, seed=seed * 100_003 + i, pool_vectors=pool_vecs,
                                   query_vector=None if query_vecs is None else query_vecs[i])
        demos = [pool[j] for j in idx]
        text, n = prompts.build_prompt(template, demos, q, words, tok.encode_ordinary, B - 1)
        cf, _ = prompts.build_prompt(template, demos[len(demos) - n:], Example("N/A", 0), words,
                                     tok.encode_ordinary, B - 1)
        texts.append(text)
        cf_texts.append(cf)
        kept.append(n)
    lp = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, texts, ids, start)
    lp_cf = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, cf_texts, ids, start)
    p = np.exp(lp) / np.exp(lp).sum(1, keepdims=True)
    p_cf = np.exp(lp_cf) / np.exp(lp_cf).sum(1, keepdims=True)
    gold = np.array([int(q.label) for q in queries])
    cal = np.stack([prompts.calibrate(p[i], p_cf[i]) for i in range(len(p))])
    return {"accuracy": _acc(p, gold), "calibrated": _acc(cal, gold), "demos in context": float(np.mean(kept)),
            "P(last label)": float(p[:, -1].mean())}


def pet_runs(cloze: prompts.ClozeModel, tokenize, pvps: Sequence[pet.PVP], train: Sequence[Example],
             unlabelled: Sequence[Example], test: Sequence[Example], config: FTConfig,
             distill_epochs: int = 2) -> dict[str, float]:
    """PET: each PVP fine-tuned on ``train`` (test accuracy x 100), the ensemble's accuracy on
    ``test``, and the distilled classifier's after training on the ensemble's soft labels for
    ``unlabelled``; plus head-based fine-tuning on ``train`` alone, for comparison."""
    gold = np.array([int(e.label) for e in test])
    out, soft_u, test_logits = {}, [], []
    for i, pvp in enumerate(pvps):
        res, clf = pet.run_prompt_classifier(cloze, pvp, train, test, config)
        out[f"PVP {i + 1}: {pvp.pattern} ({'/'.join(pvp.words)})"] = res.score
        soft_u.append(clf.label_logits(unlabelled, config.max_len))
        test_logits.append(clf.label_logits(test, config.max_len))
    out["PET ensemble of the PVPs"] = _acc(pet.ensemble_soft_labels(test_logits), gold)
    soft = pet.ensemble_soft_labels(soft_u)
    dcfg = FTConfig(epochs=distill_epochs, lr=config.lr, batch_size=config.batch_size, max_len=config.max_len,
                    seed=config.seed)
    student = pet.distill(cloze.encoder, tokenize, unlabelled, soft, dcfg)
    out["PET distilled classifier"] = _acc(predict(student, cloze.config, encode(tokenize, test, config.max_len)),
                                           gold)
    out["head-based fine-tuning (same labels)"] = run_classifier(cloze.encoder, tokenize, train, test, 2,
                                                                config).score
    return out


def label_search(cloze: prompts.ClozeModel, pattern: str, train: Sequence[Example], k: int = 5,
                 max_len: int = 64) -> tuple[list[list[str]], list[str], float]:
    """LM-BFF's label words for ``pattern``: ``k`` candidates per class (whole lower-case words
    only), the best distinct assignment by zero-shot training accuracy, and that accuracy."""
    logits = prompts.mask_logits(cloze, pattern, train, max_len=max_len)
    vocab = _id_to_token(cloze)
    cand = [i for i, t in vocab.items() if t.isalpha() and t.islower() and len(t) > 2]
    labels = [int(e.label) for e in train]
    ids = pet.search_label_words(logits, labels, k=k, candidates=cand)
    best, acc = pet.best_assignment(logits, labels, ids)
    return [[vocab[i] for i in row] for row in ids], [vocab[i] for i in best], 100 * acc


def _id_to_token(cloze: prompts.ClozeModel) -> dict[int, str]:
    from ..transformer.hf import minilm_dir

    lines = (minilm_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    if len(lines) != cloze.config.vocab_size:
        raise ValueError("label_search reads MiniLM's vocab.txt; this cloze model has another vocabulary")
    return dict(enumerate(lines))


def draw_calibration(frame: pd.DataFrame, ax=None):
    """Bars of accuracy before and after calibration for each row of ``frame`` (columns
    ``accuracy`` and ``calibrated``), with the 50 % chance line."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.4))
    x = np.arange(len(frame))
    ax.bar(x - 0.2, frame["accuracy"], 0.4, label="as is", color="#4c72b0")
    ax.bar(x + 0.2, frame["calibrated"], 0.4, label="calibrated", color="#dd8452")
    ax.axhline(50, color="0.5", ls=":", lw=1)
    ax.set_xticks(x, frame.index, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("accuracy (%)")
    ax.legend(fontsize=8)
    return ax


@torch.no_grad()
def top_fills(cloze: prompts.ClozeModel, sentences: Sequence[str], k: int = 5, decode=None) -> pd.DataFrame:
    """LAMA-style probes: the ``k`` most likely fillers of each sentence's ``[MASK]``."""
    rows = {}
    for s in sentences:
        logits = prompts.mask_logits(cloze, "{text}" + s, [Example("", 0)])[0]
        top = logits.topk(k).indices.tolist()
        rows[s] = [decode(i) if decode else i for i in top]
    return pd.DataFrame(rows, index=[f"#{i + 1}" for i in range(k)]).T


def short(examples: Sequence[Example], tokenize, max_tokens: int) -> list[Example]:
    """The examples whose text is at most ``max_tokens`` tokens (so that a query and a
    demonstration or two fit in a small GPT's context)."""
    return [e for e in examples if len(tokenize(e.text)) <= max_tokens]
