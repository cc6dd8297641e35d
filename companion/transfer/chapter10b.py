"""Chapter 10b's experiments (prompting), so that the notebook's cells stay short.

* :func:`zero_shot` -- a cloze pattern and label words on labelled examples: accuracy before and
  after contextual calibration;
* :func:`in_context` -- our GPT with ``k`` demonstrations (random or nearest by MiniLM's
  sentence vectors) in front of each query, before and after calibration;
* :func:`icl_by_size` / :func:`draw_icl_sizes` -- in-context accuracy across a family of GPT
  sizes, ``k`` demonstrations, several draws;
* :func:`stored_fewglue` / :func:`fewglue_summary` -- FewGLUE's RTE, CB and BoolQ rows, measured
  by ``benchmarks/ch10b_fewglue.py`` and stored;
* :func:`pet_runs` -- PET in miniature: one prompt-based model per pattern-verbalizer pair, their
  ensemble's soft labels on unlabelled examples, a distilled classifier;
* :func:`label_search` -- LM-BFF's automatic label words for a pattern;
* :func:`draw_calibration` -- accuracy before and after calibration, one pair of bars per setting;
* :func:`sizes` -- chapter 10's sizes with 10b's own (iPET, AutoPrompt, instruction tuning);
* :func:`ipet_runs` -- iPET's generations, each generation's ensemble and distilled classifier;
* :func:`autoprompt_run` -- AutoPrompt's triggers against the hand-written pattern;
* :func:`instruction_runs` -- FLAN/T0 in miniature: prompted multitask fine-tuning, a held-out
  task scored zero-shot.
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
import torch

from ..data.tasks import Example
from ..scale import pick
from . import autoprompt, instruct, pet, prompts
from .chapter10 import Sizes as Sizes10
from .chapter10 import sizes as sizes10
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
    lp = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, texts, ids, start, batch_size=32)
    lp_cf = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, cf_texts, ids, start, batch_size=32)
    p = np.exp(lp) / np.exp(lp).sum(1, keepdims=True)
    p_cf = np.exp(lp_cf) / np.exp(lp_cf).sum(1, keepdims=True)
    gold = np.array([int(q.label) for q in queries])
    cal = np.stack([prompts.calibrate(p[i], p_cf[i]) for i in range(len(p))])
    return {"accuracy": _acc(p, gold), "calibrated": _acc(cal, gold), "demos in context": float(np.mean(kept)),
            "P(last label)": float(p[:, -1].mean())}


def icl_by_size(models: dict, tok, pool: Sequence[Example], queries: Sequence[Example], ks: Sequence[int],
                draws: int, template: prompts.Template, words: Sequence[str], start_id: int,
                batch_size: int = 32) -> pd.DataFrame:
    """In-context accuracy of every model in ``models`` (``{name: GPT}``, one tokenizer) for
    each number of demonstrations ``k``: one row per model, ``k`` and draw. A *draw* is one
    random set of ``k`` demonstrations from ``pool`` in a random order, placed in front of every
    query (as in Zhao et al. 2021, whose spread over draws is the point), and the same draw for
    every model, so that the sizes are compared on identical prompts. ``k = 0`` has one draw.
    Calibration divides by the label distribution of the same demonstrations with the
    content-free query "N/A". Accuracies are x 100."""
    ids = [tok.encode_ordinary(" " + w)[0] for w in words]
    gold = np.array([int(q.label) for q in queries])
    rows = []
    for k in ks:
        for d in range(draws if k else 1):
            demos = [pool[j] for j in prompts.choose_demos(len(pool), k, "random", seed=7919 * k + d)]
            for name, gpt in models.items():
                B = gpt.config.block_size
                kept = [prompts.build_prompt(template, demos, q, words, tok.encode_ordinary, B - 1)
                        for q in [*queries, Example("N/A", 0)]]
                texts = [t for t, _ in kept]
                lp = prompts.gpt_label_logprobs(gpt, tok.encode_ordinary, texts, ids, start_id, batch_size)
                p = np.exp(lp) / np.exp(lp).sum(1, keepdims=True)
                cal = prompts.calibrate(p[:-1], p[-1])
                rows.append({"model": name, "k": k, "draw": d, "accuracy": _acc(p[:-1], gold),
                             "calibrated": _acc(cal, gold), "P(last label)": float(p[:-1, -1].mean()),
                             "demos in context": float(np.mean([n for _, n in kept[:-1]])),
                             "tokens": float(np.mean([len(tok.encode_ordinary(t)) for t in texts[:-1]]))})
    return pd.DataFrame(rows)


def icl_size_summary(df: pd.DataFrame, order: Sequence[str], n_queries: int) -> dict[str, float]:
    """The numbers the chapter quotes from :func:`icl_by_size`'s rows: the lowest and highest
    mean (over draws) of accuracy, calibrated accuracy and P(last label) x 100 over sizes and
    ``k``; the lowest and highest single calibrated draw; the largest minus the smallest model
    (``order``: smallest first) in calibrated accuracy at the largest ``k``; and the binomial
    standard error of one accuracy near 50 % on ``n_queries`` queries."""
    cols = {"accuracy": "acc", "calibrated": "cal", "P(last label)": "plast"}
    means = df.groupby(["model", "k"])[list(cols)].mean()
    means["P(last label)"] *= 100
    out = {}
    for col, key in cols.items():
        out[f"{key}_lo"], out[f"{key}_hi"] = float(means[col].min()), float(means[col].max())
    out["draw_lo"], out["draw_hi"] = float(df["calibrated"].min()), float(df["calibrated"].max())
    k = max(df["k"])
    out["trend"] = float(means.loc[(order[-1], k), "calibrated"] - means.loc[(order[0], k), "calibrated"])
    out["se"] = 100 * math.sqrt(0.25 / n_queries)
    return {key: round(v, 1) for key, v in out.items()}


def draw_icl_sizes(df: pd.DataFrame, params: dict[str, int], value: str = "accuracy", chance: float = 50.0,
                   ax=None):
    """``value`` (accuracy or calibrated accuracy) against non-embedding parameters, one line
    per ``k`` (mean over draws, the bars their standard deviation), the chance level dashed."""
    ax = ax or plt.gca()
    for k, g in df.groupby("k"):
        stats = g.groupby("model", sort=False)[value].agg(["mean", "std"]).fillna(0.0)
        n = [params[m] for m in stats.index]
        ax.errorbar(n, stats["mean"], yerr=stats["std"], marker="o", capsize=3, label=f"k = {k}")
    ax.axhline(chance, color="0.5", ls="--", lw=1, label="chance")
    ax.set_xscale("log")
    ax.set_xlabel("non-embedding parameters")
    ax.set_ylabel(("calibrated " if value == "calibrated" else "") + "accuracy (%)")
    ax.legend(fontsize=8)
    return ax


FEWGLUE_FILE = Path(__file__).with_name("fewglue_rows.json")


def stored_fewglue(path: Path | None = None) -> tuple[pd.DataFrame, dict]:
    """FewGLUE's RTE, CB and BoolQ rows as ``benchmarks/ch10b_fewglue.py`` measured and stored
    them: one row per task, method and seed (RTE) or fold (CB, BoolQ), and the run's meta."""
    import json

    path = Path(path or FEWGLUE_FILE)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python -m benchmarks.ch10b_fewglue {path}`")
    data = json.loads(path.read_text())
    return pd.DataFrame(data["rows"]), data["meta"]


def fewglue_summary(rows: pd.DataFrame, majority: dict[str, float]) -> pd.DataFrame:
    """Mean accuracy, its standard deviation over seeds or folds, the number of runs, and the
    majority-class accuracy of the same test examples, per task (rows) and method."""
    g = rows.groupby(["task", "method"], sort=False)["accuracy"]
    out = pd.DataFrame({"accuracy": g.mean(), "sd": g.std(ddof=1), "runs": g.size()})
    out["majority class"] = [majority[t] for t, _ in out.index]
    return out.round(1)


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
                 max_len: int = 64, vocab: dict[int, str] | None = None) -> tuple[list[list[str]], list[str], float]:
    """LM-BFF's label words for ``pattern``: ``k`` candidates per class (whole lower-case words
    of at least three letters only; for a byte-level BPE, ``cloze.space``, words with their
    leading space), the best distinct assignment by zero-shot training accuracy, and that
    accuracy. ``vocab`` maps ids to tokens (default: MiniLM's ``vocab.txt``)."""
    logits = prompts.mask_logits(cloze, pattern, train, max_len=max_len)
    vocab = _id_to_token(cloze) if vocab is None else vocab
    cand = [i for i, t in vocab.items() if t.strip().isalpha() and t.strip().islower() and len(t.strip()) > 2
            and (t.startswith(" ") or not cloze.space)]
    labels = [int(e.label) for e in train]
    ids = pet.search_label_words(logits, labels, k=k, candidates=cand)
    best, acc = pet.best_assignment(logits, labels, ids)
    return [[vocab[i].strip() for i in row] for row in ids], [vocab[i].strip() for i in best], 100 * acc


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


# --------------------------------------------------------------------------- 10b's own sizes


@dataclass(frozen=True)
class Sizes(Sizes10):
    """Chapter 10's sizes (some made smaller for 10b's budget) and 10b's own."""

    generations: int = 2          # iPET generations (1 = PET)
    ap_train: int = 64            # AutoPrompt's search examples
    ap_steps: int = 20            # its steps (one trigger slot each)
    ap_k: int = 10                # candidates scored per step
    it_per_task: int = 256        # instruction tuning: examples per prompted task
    it_epochs: int = 2
    it_eval: int = 400            # held-out examples scored
    it_seeds: tuple[int, ...] = (0, 1)
    fam_queries: int = 200         # ICL vs model size: balanced SST-2 queries
    fam_pool: int = 300            # demonstrations are drawn from this many short examples
    fam_ks: tuple[int, ...] = (0, 4, 8)
    fam_draws: int = 4             # random demonstration sets (and orders) per k


def sizes(scale: str | None = None) -> Sizes:
    """The sizes of notebook 10b at ``scale`` (default ``BOOK_SCALE``)."""
    base = dataclasses.asdict(sizes10(scale))
    own = pick(
        ci={"n_test": 20, "n_icl": 8, "generations": 2, "ap_train": 8, "ap_steps": 1, "ap_k": 3,
            "it_per_task": 16, "it_epochs": 1, "it_eval": 24, "it_seeds": (0,), "fam_queries": 8,
            "fam_pool": 40, "fam_ks": (0, 4), "fam_draws": 2},
        laptop={"max_len": 32, "n_test": 200, "n_icl": 100, "n_unlabelled": 128, "generations": 2, "ap_train": 32,
                "ap_steps": 6, "ap_k": 8, "it_per_task": 128, "it_epochs": 2, "it_eval": 300, "it_seeds": (0, 1)},
        gpu={"generations": 3, "ap_train": 256, "ap_steps": 80, "ap_k": 20, "it_per_task": 4000, "it_epochs": 3,
             "it_eval": 2000, "it_seeds": (0, 1, 2), "fam_queries": 400, "fam_draws": 10},
        scale=scale)
    return Sizes(**{**base, **own})


# ------------------------------------------------------------------------------------ iPET


def fixed_steps_config(config: FTConfig, n: int, steps: int) -> FTConfig:
    """``config`` with as many epochs as ``steps`` optimizer steps take on ``n`` examples."""
    bs = min(config.batch_size, n)
    return dataclasses.replace(config, batch_size=bs, epochs=max(1, math.ceil(steps * bs / n)))


def ipet_runs(cloze: prompts.ClozeModel, tokenize, pvps: Sequence[pet.PVP], train: Sequence[Example],
              unlabelled: Sequence[Example], test: Sequence[Example], config: FTConfig, steps: int,
              generations: int = 2, distill_epochs: int = 2, distill_all: bool = False) -> pd.DataFrame:
    """iPET on ``cloze``: per generation (1 = PET), the training-set size, each PVP model's test
    accuracy, their ensemble's, and the classifier distilled from the ensemble's soft labels on
    ``unlabelled`` (accuracies x 100; only the last generation is distilled, as iPET does,
    unless ``distill_all``). Every PVP model trains for ``steps`` optimizer steps."""
    gold = np.array([int(e.label) for e in test])

    def fit(pvp: pet.PVP, examples: Sequence[Example]):
        clf = pet.PromptClassifier(cloze, pvp)
        from .finetune import train as train_model

        train_model(clf, clf.batches(examples, min(config.batch_size, len(examples)), config.seed, config.max_len),
                    fixed_steps_config(config, len(examples), steps))
        return lambda exs: clf.label_logits(exs, config.max_len)

    gens = pet.ipet(pvps, train, unlabelled, fit, generations=generations, seed=config.seed)
    rows = []
    dcfg = FTConfig(epochs=distill_epochs, lr=config.lr, batch_size=config.batch_size, max_len=config.max_len,
                    seed=config.seed)
    for j, g in enumerate(gens, 1):
        scores = [f(test) for f in g.scorers]
        row = {"generation": j, "training set": g.sizes[0]}
        for i, sc in enumerate(scores):
            row[f"PVP {i + 1}"] = _acc(sc, gold)
        row["ensemble"] = _acc(pet.ensemble_soft_labels(scores), gold)
        row["distilled"] = float("nan")
        if distill_all or j == len(gens):
            soft = pet.ensemble_soft_labels(g.unlabelled_scores)
            student = pet.distill(cloze.encoder, tokenize, unlabelled, soft, dcfg)
            row["distilled"] = _acc(predict(student, cloze.config, encode(tokenize, test, config.max_len)), gold)
        rows.append(row)
    return pd.DataFrame(rows).set_index("generation")


def pet_rows(gens: pd.DataFrame, pvps: Sequence[pet.PVP], head: float) -> dict[str, float]:
    """The transfer table's rows from :func:`ipet_runs`: generation 1's PVP models, ensemble and
    distilled classifier (PET), the last generation's (iPET), and head-based fine-tuning."""
    g1, last = gens.iloc[0], gens.iloc[-1]
    out = {f"PVP {i + 1}: {p.pattern} ({'/'.join(p.words)})": float(g1[f"PVP {i + 1}"]) for i, p in enumerate(pvps)}
    out["PET ensemble of the PVPs"] = float(g1["ensemble"])
    if np.isfinite(g1["distilled"]):
        out["PET distilled classifier"] = float(g1["distilled"])
    if len(gens) > 1:
        out[f"iPET generation {gens.index[-1]}: ensemble"] = float(last["ensemble"])
        out[f"iPET generation {gens.index[-1]}: distilled classifier"] = float(last["distilled"])
    out["head-based fine-tuning (same labels)"] = float(head)
    return out


# ------------------------------------------------------------------------------- AutoPrompt


def autoprompt_run(cloze: prompts.ClozeModel, pattern: str, words: Sequence[str], search_set: Sequence[Example],
                   test: Sequence[Example], s: Sizes, hand: str | None = None, decode=None) -> dict:
    """AutoPrompt's triggers for ``pattern`` (``s.ap_steps`` steps, ``s.ap_k`` candidates, 3
    slots) on ``search_set``; test accuracy (x 100) of the hand-written pattern ``hand``, the
    bare ``pattern`` and the pattern with the triggers, before and after calibration."""
    allowed = None
    if decode is not None:  # whole words only: AutoPrompt's candidate filter
        toks = [_safe(decode, i) for i in range(cloze.config.vocab_size)]
        allowed = torch.tensor([t.strip().isalpha() and t.startswith(" ") for t in toks]) if cloze.space else \
            torch.tensor([t.isalpha() for t in toks])
    res = autoprompt.search(cloze, pattern, words, search_set, n_triggers=3, steps=s.ap_steps, k=s.ap_k,
                            allowed=allowed, init=cloze.word_id("the"), max_len=s.max_len)
    gold = np.array([int(e.label) for e in test])
    out = {"triggers": [decode(i) if decode else i for i in res.triggers], "search loss": res.losses}
    cf = [Example(t, 0) for t in prompts.CONTENT_FREE]
    for name, pat, trig in (("hand-written", hand, []), ("bare pattern", pattern, []),
                            ("AutoPrompt", pattern, res.triggers)):
        if pat is None:
            continue
        p = autoprompt.trigger_label_scores(cloze, pat, words, trig, test, s.max_len).softmax(-1).numpy()
        p_cf = autoprompt.trigger_label_scores(cloze, pat, words, trig, cf, s.max_len).softmax(-1).numpy().mean(0)
        out[name] = {"accuracy": _acc(p, gold), "calibrated": _acc(prompts.calibrate(p, p_cf), gold)}
    return out


def _safe(decode, i: int) -> str:
    try:
        return decode(i) or ""
    except (ValueError, KeyError):  # a special token outside the tokenizer's own vocabulary
        return ""


# ------------------------------------------------------------------------ instruction tuning


def bpe_tasks(s: Sizes, seed: int = 0) -> tuple[dict[str, instruct.PromptedTask], instruct.PromptedTask]:
    """The prompted tasks for our BPE BERT: SST-2, AG News and TREC to tune on, each with its
    pattern and single-token answer words, and MR (movie reviews, a new pattern) held out."""
    from ..data import load_task
    from ..evaluate.glue import load_glue
    from .chapter10 import balanced_sample

    n = s.it_per_task
    sst2 = load_glue("sst2_glue").train
    ag = load_task("ag_news").splits["train"]
    trec = load_task("trec").splits["train"]
    mr = load_task("mr").splits["all"]
    tasks = {
        "SST-2": instruct.PromptedTask("SST-2", tuple(balanced_sample(sst2, n, seed)), "{text} It was [MASK].",
                                       ("bad", "good")),
        "AG News": instruct.PromptedTask("AG News", tuple(balanced_sample(ag, n, seed)), "[MASK] news: {text}",
                                         ("world", "play", "economy", "science")),
        "TREC": instruct.PromptedTask("TREC", tuple(balanced_sample(trec, n, seed)),
                                      "{text} The answer is a [MASK].",
                                      ("word", "what", "thing", "person", "place", "number")),
    }
    held = instruct.PromptedTask("MR", tuple(balanced_sample(mr, s.it_eval, 1000 + seed)),
                                 "{text} All in all, the film is [MASK].", ("bad", "good"))
    return tasks, held


def instruction_runs(cloze: prompts.ClozeModel, tasks: dict[str, instruct.PromptedTask],
                     held: instruct.PromptedTask, mixtures: dict[str, Sequence[str]], s: Sizes,
                     seen: instruct.PromptedTask | None = None, lr: float = 1e-3) -> pd.DataFrame:
    """Zero-shot accuracy (x 100) on ``held`` of ``cloze`` as it is and after prompted multitask
    fine-tuning on each mixture of ``tasks`` (one row per mixture and seed); ``seen``, if given,
    is a test set of one tuned task in its own pattern (did the tuning teach that task?)."""
    def scores(model) -> dict:
        out = {f"{held.name} (held out)": instruct.zero_shot_accuracy(model, held, s.max_len)}
        if seen is not None:
            out[seen.name] = instruct.zero_shot_accuracy(model, seen, s.max_len)
        return out

    rows = [{"tuned on": "nothing (the pre-trained model)", "seed": 0, **scores(cloze)}]
    for name, names in mixtures.items():
        for seed in s.it_seeds:
            cfg = FTConfig(epochs=s.it_epochs, lr=lr, batch_size=s.batch_size, max_len=s.max_len, seed=seed)
            tuned = instruct.instruction_tune(cloze, [tasks[t] for t in names], cfg)
            rows.append({"tuned on": name, "seed": seed, **scores(tuned)})
    return pd.DataFrame(rows)
