"""Chapter 6b's runs and bookkeeping (CoVe, ELMo, TagLM), so the notebook's cells stay short.

The models live in :mod:`.cove`, :mod:`.elmo` and :mod:`.taglm`; this module picks the sizes per
``BOOK_SCALE``, loads the data, trains, and computes the claim checks with their spread:

* :func:`sizes` -- every size of the run (ci / laptop / gpu);
* :func:`mt_data`, :func:`train_cove`, :func:`cove_bleu` -- CoVe's translation model;
* :func:`lm_sentences`, :func:`train_bilm` -- ELMo's biLM on Part II's corpus
  (these and the sizes are defined in :mod:`.trainers`, which the stored-model scripts
  :mod:`.small_cove` and :mod:`.small_elmo` share; :func:`get_cove` and :func:`get_bilm` load
  those models at ``laptop`` scale);
* :func:`probe_tasks`, :func:`pseudoword_probe` -- which layer knows what;
* :func:`tagging_runs` -- TagLM / ELMo in the BiLSTM tagger, with few and more labels;
* :func:`paired_runs_diff`, :func:`seed_diff` -- differences with their spread.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .cove import CoVe
from .elmo import BiLM, ElmoLayers
from .taglm import (
    LMFeatureCache,
    TaggerConfig,
    TaggerData,
    glove_rows_for,
    train_tagger,
)
from .trainers import (  # the chapter's sizes and pre-trainings, shared with small_cove and small_elmo
    LMData,
    MTData,
    Sizes,
    build_cove,
    cove_bleu,
    lm_sentences,
    mt_data,
    sizes,
    train_bilm,
    train_cove,
)


# --------------------------------------------------------------------------- CoVe
def get_cove(glove: np.ndarray, mt: MTData, S: Sizes, device: str | None = None) -> tuple[CoVe, list[float], str]:
    """``(model, training losses per step, where it came from)``: at ``laptop`` scale the stored
    checkpoint (:mod:`.small_cove`, trained by the same :func:`train_cove` for
    ``S.mt_steps_stored`` steps), else a model trained here for ``S.mt_steps`` steps. The stored
    German vocabulary must be the one :func:`mt_data` builds."""
    if S.stored:
        from .small_cove import load_small_cove

        model, tgt, meta = load_small_cove(glove, device=device)
        if tgt.itos != mt.tgt.itos:
            raise ValueError("the stored CoVe's German vocabulary differs from mt_data's; re-create "
                             "it with `python -m companion.contextual.small_cove`")
        return model, meta["step_loss"], f"stored checkpoint ({meta['cpu_seconds']:.0f} CPU-s to train)"
    model, hist = train_cove(glove, mt, S, device=device)
    return model, list(hist.step_loss), "trained in this notebook"


def attention_of(model: CoVe, mt: MTData, sentence: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """One greedy translation's attention ``[T_tgt, T_src]`` and its German words."""
    from .cove import encode_source

    model.eval()
    ids, lens = encode_source([list(sentence)], mt.src)
    out, alpha = model.translate(ids, lens)
    words = mt.tgt.decode(out[0].tolist())
    return alpha[0, : len(words)].numpy(), words


# --------------------------------------------------------------------------- ELMo
def get_bilm(data: LMData, S: Sizes, device: str | None = None):
    """``(model, vocab, training losses per step, heldout ppl, where it came from)``: at
    ``laptop`` scale the stored checkpoint (:mod:`.small_elmo`, trained by :func:`train_bilm` on
    the same sentences), else a biLM trained here."""
    if S.stored:
        from .small_elmo import load_small_elmo

        model, vocab, meta = load_small_elmo(device=device)
        if meta["lm_sentences"] != S.lm_sentences or meta["lm_steps"] != S.lm_steps:
            raise ValueError("the stored biLM was trained with other sizes; re-create it with "
                             "`python -m companion.contextual.small_elmo`")
        src = f"stored checkpoint ({meta['cpu_seconds']:.0f} CPU-s to train)"
        return model, vocab, meta["step_loss"], meta["heldout_ppl"], src
    model, vocab, hist, ppl = train_bilm(data, S, device=device)
    return model, vocab, list(hist.step_loss), ppl, "trained in this notebook"


# --------------------------------------------------------------------------- layer probes
def _subsample(sentences, max_tokens: int, seed: int):
    order = np.random.default_rng(seed).permutation(len(sentences))
    out, n = [], 0
    for i in order:
        if n >= max_tokens:
            break
        out.append(sentences[i])
        n += len(sentences[i].tokens)
    return out


def _fit_predict(x_tr, y_tr, x_te, c: float = 1.0):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    mu, sd = x_tr.mean(0), x_tr.std(0) + 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(C=c, max_iter=300).fit((x_tr - mu) / sd, y_tr)
    return clf.predict((x_te - mu) / sd)


def _sentence_stats(gold, pred, spans: bool) -> np.ndarray:
    """Per test sentence: (correct, predicted, true) spans, or (correct tokens, tokens, tokens)."""
    from ..evaluate.tagging import get_entities

    rows = []
    for g, p in zip(gold, pred):
        if spans:
            tg, tp = set(get_entities(list(g))), set(get_entities(list(p)))
            rows.append((len(tg & tp), len(tp), len(tg)))
        else:
            c = sum(a == b for a, b in zip(g, p))
            rows.append((c, len(g), len(g)))
    return np.array(rows, dtype=float)


def _score(stats: np.ndarray, spans: bool) -> float:
    c, p, t = stats.sum(0)
    if not spans:
        return 100 * c / p
    prec, rec = (c / p if p else 0.0), (c / t if t else 0.0)
    return 100 * 2 * prec * rec / (prec + rec) if prec + rec else 0.0


@dataclass
class LayerProbe:
    task: str
    metric: str
    scores: list[float]  # per layer
    stats: list[np.ndarray]  # per layer, per test sentence (for the bootstrap)
    spans: bool

    def diff(self, a: int, b: int, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
        """Layer ``a``'s score minus layer ``b``'s, with a paired bootstrap 95 % interval over
        test sentences."""
        rng = np.random.default_rng(seed)
        n = len(self.stats[a])
        boots = []
        for _ in range(n_boot):
            i = rng.integers(0, n, n)
            boots.append(_score(self.stats[a][i], self.spans) - _score(self.stats[b][i], self.spans))
        lo, hi = np.percentile(boots, [2.5, 97.5])
        return self.scores[a] - self.scores[b], float(lo), float(hi)


def _probe_job(shared: dict, job: tuple[str, int]) -> np.ndarray:
    """One layer's probe of :func:`probe_tasks` (a worker of :func:`companion.parallel.map_jobs`)."""
    task, layer = job
    x_tr, y_tr, x_te = shared[task]
    return _fit_predict(x_tr[layer], y_tr, x_te[layer])


def probe_tasks(extract: Callable, tasks: Sequence[str], S: Sizes, seed: int = 0,
                workers: int = 1) -> dict[str, LayerProbe]:
    """A linear probe (logistic regression, C = 1, standardised features) per biLM layer, from
    each token's vector to its tag, for each ``task`` (a :func:`companion.data.load_tagging`
    name). The probes are independent: ``workers`` processes fit them side by side, each with
    scikit-learn's BLAS on one thread; ``workers=1`` fits them here, where a notebook's
    ``threadpool_limits(1)`` may not reach scipy's BLAS (it loads later), so the last digits can
    differ (:mod:`companion.parallel`)."""
    from ..data.tasks import load_tagging
    from ..parallel import map_jobs

    shared, tests = {}, {}
    for task in tasks:
        data = load_tagging(task)
        tr = _subsample(data["train"], S.probe_train_tokens, seed)
        te = _subsample(data["test"], S.probe_eval_tokens, 0)
        f_tr, f_te = extract([list(s.tokens) for s in tr]), extract([list(s.tokens) for s in te])
        x_tr = [np.concatenate([f[k] for f in f_tr]).astype(np.float32) for k in range(f_tr[0].shape[0])]
        x_te = [np.concatenate([f[k] for f in f_te]).astype(np.float32) for k in range(f_te[0].shape[0])]
        shared[task] = (x_tr, np.array([t for s in tr for t in s.tags]), x_te)
        tests[task] = te
    jobs = [(t, k) for t in tasks for k in range(len(shared[t][0]))]
    # the probes with the most classes (Brown's fine tags) take longest: they go first
    jobs.sort(key=lambda j: -len(set(shared[j[0]][1])))
    flats = map_jobs(_probe_job, jobs, shared=shared, workers=workers)
    out = {}
    for task in tasks:
        spans = task != "brown_pos" and task != "ptb_pos"
        scores, stats = [], []
        for k in range(len(shared[task][0])):
            flat, pred, i = flats[jobs.index((task, k))], [], 0
            for s in tests[task]:
                pred.append(list(flat[i:i + len(s.tokens)]))
                i += len(s.tokens)
            st = _sentence_stats([s.tags for s in tests[task]], pred, spans)
            scores.append(_score(st, spans))
            stats.append(st)
        out[task] = LayerProbe(task, "span F1" if spans else "accuracy", scores, stats, spans)
    return out


def probe_layers(extract: Callable, task: str, S: Sizes, seed: int = 0, workers: int = 1) -> LayerProbe:
    """:func:`probe_tasks` for one task."""
    return probe_tasks(extract, [task], S, seed, workers)[task]


PSEUDO_PAIRS = (("money", "water"), ("city", "music"), ("war", "food"), ("house", "night"),
                ("land", "school"), ("sea", "day"))


def pseudoword_probe(extract: Callable, pool: Sequence[Sequence[str]], S: Sizes,
                     pairs: Sequence[tuple[str, str]] = PSEUDO_PAIRS, seed: int = 0) -> pd.DataFrame:
    """Pseudo-word disambiguation, our proxy for word-sense disambiguation (Gale, Church &
    Yarowsky 1992; Schuetze 1998): in sentences holding word a or word b, the word is replaced by
    one made-up token "a/b", so its spelling tells nothing; a linear probe on the token's vector
    at each layer must recover which word stood there from the context alone (5-fold
    cross-validated accuracy, balanced classes: chance is 50 %). One row per pair."""
    from sklearn.model_selection import StratifiedKFold

    wanted = {w for p in pairs for w in p}
    where: dict[str, list[tuple[list[str], int]]] = {w: [] for w in wanted}
    for s in pool:  # one pass over the pool
        for j, t in enumerate(s):
            lw = t.lower()
            if lw in wanted:
                where[lw].append((s, j))
    rows = []
    for a, b in pairs:
        sents, labels, pos = [], [], []
        for lab, w in enumerate((a, b)):
            found = where[w][: S.pseudo_per_word]
            for s, j in found:
                sents.append([*s[:j], f"{a}/{b}", *s[j + 1:]])
                labels.append(lab)
                pos.append(j)
        y = np.array(labels)
        if min(np.bincount(y, minlength=2)) < 5:
            raise ValueError(f"too few sentences with {a!r} or {b!r} in the pool; use more sentences")
        n = min(np.bincount(y))
        keep = np.concatenate([np.flatnonzero(y == k)[:n] for k in (0, 1)])
        feats = extract([sents[i] for i in keep])
        x = np.stack([f[:, pos[i]] for f, i in zip(feats, keep)], 1)  # [layers, n, d]
        y = y[keep]
        row = {"pair": f"{a}/{b}", "examples": len(y)}
        folds = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(x[0], y))
        for layer in range(x.shape[0]):
            acc = [np.mean(_fit_predict(x[layer][tr], y[tr], x[layer][te]) == y[te]) for tr, te in folds]
            row[f"layer {layer}"] = 100 * float(np.mean(acc))
        rows.append(row)
    return pd.DataFrame(rows).set_index("pair")


# --------------------------------------------------------------------------- tagging
TAG_TASKS = {"NER": "conll2003_ner", "chunk": "conll2000_chunk"}
VARIANTS = {
    "GloVe": TaggerConfig(),
    "TagLM (top layer)": TaggerConfig(lm_mix="top", lm_at="first"),
    "ELMo (scalar mix)": TaggerConfig(lm_mix="mix", lm_at="input"),
}


def _f1_score(pred, gold) -> float:
    from ..evaluate.tagging import span_scores

    return span_scores([list(s.tags) for s in gold], pred).f1


def _tagger_job(shared: dict, job: tuple) -> dict:
    """One tagger of :func:`tagging_runs` (a worker of :func:`companion.parallel.map_jobs`)."""
    short, n, name, seed, epochs, device = job
    train, dev, test, vocab, rows_ = shared[short]
    cfg = TaggerConfig(**{**VARIANTS[name].__dict__, "epochs": epochs})
    res = train_tagger(train[:n], dev, vocab, rows_, cfg, seed=seed, device=device, score=_f1_score)
    pred = res.predict([s.tokens for s in test])
    stats = _sentence_stats([s.tags for s in test], pred, spans=True)
    w = res.mix_weights()
    return {"task": short, "variant": name, "labelled": n, "seed": seed, "F1": _score(stats, True),
            "seconds": res.seconds, "stats": stats,
            "weights": None if w is None else [round(float(x), 4) for x in w]}


def tagging_runs(glove: np.ndarray, words: Sequence[str], lm: LMFeatureCache, S: Sizes,
                 device: str | None = None, workers: int = 1) -> pd.DataFrame:
    """Every (task, variant, labelled sentences, seed) tagger: test span F1 (percent), training
    seconds and, for the scalar mix, the learned layer weights. Few-label runs: GloVe and TagLM.

    The taggers are independent: ``workers`` processes train them side by side (one thread
    each; see :mod:`companion.parallel`), with the same numbers as ``workers=1``."""
    from ..data.tasks import load_tagging
    from ..parallel import map_jobs

    shared, jobs = {}, []
    for short, task in TAG_TASKS.items():
        data = load_tagging(task)
        train = data["train"][: S.tag_train]
        dev, test = data["dev"][: S.tag_dev], data["test"][: S.tag_test]
        rows_, index = glove_rows_for([s.tokens for s in train + dev + test], glove, words)
        tags = sorted({t for s in train for t in s.tags})
        # the biLM's features of every sentence, once, in one order: a job reads the same float16
        # arrays whichever process runs it and whatever ran before it
        lm([s.tokens for s in train + dev + test])
        shared[short] = (train, dev, test, TaggerData(index, tags, lm), rows_)
        for n in (S.tag_train, S.tag_few):
            for name in VARIANTS:
                if n == S.tag_few and name == "ELMo (scalar mix)":
                    continue
                jobs += [(short, n, name, seed, S.tag_epochs, device) for seed in S.seeds]
    runs = map_jobs(_tagger_job, jobs, shared=shared, workers=workers)
    return pd.DataFrame(runs)


def tagging_diff(runs: pd.DataFrame, task: str, labelled: int, a: str, b: str, n_boot: int = 1000,
                 seed: int = 0) -> tuple[float, float, float]:
    """Test F1 of variant ``a`` minus ``b`` (each averaged over its seeds), with a paired
    bootstrap 95 % interval over test sentences (one resample scores every run)."""
    sel = runs[(runs.task == task) & (runs.labelled == labelled)]
    sa, sb = list(sel[sel.variant == a].stats), list(sel[sel.variant == b].stats)
    if not sa or not sb:
        raise ValueError(f"no runs of {a!r} and {b!r} for {task} with {labelled} sentences")
    rng = np.random.default_rng(seed)
    n = len(sa[0])
    boots = []
    for _ in range(n_boot):
        i = rng.integers(0, n, n)
        boots.append(np.mean([_score(x[i], True) for x in sa]) - np.mean([_score(x[i], True) for x in sb]))
    diff = float(np.mean([_score(x, True) for x in sa]) - np.mean([_score(x, True) for x in sb]))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return diff, float(lo), float(hi)


def claim_row(name: str, diff: float, lo: float, hi: float) -> dict:
    from ..static.chapter4 import verdict

    return {"claim": name, "difference": round(diff, 2), "95% low": round(lo, 2), "95% high": round(hi, 2),
            "verdict": verdict(lo, hi)}


def tagging_claims(runs: pd.DataFrame, S: Sizes) -> pd.DataFrame:
    """TagLM - GloVe (NER and chunks, many and few labels) and ELMo - GloVe (many labels)."""
    rows = []
    for task in TAG_TASKS:
        for n in (S.tag_train, S.tag_few):
            rows.append(claim_row(f"{task}, {n} sentences: TagLM - GloVe",
                                  *tagging_diff(runs, task, n, "TagLM (top layer)", "GloVe")))
        rows.append(claim_row(f"{task}, {S.tag_train} sentences: ELMo mix - GloVe",
                              *tagging_diff(runs, task, S.tag_train, "ELMo (scalar mix)", "GloVe")))
    return pd.DataFrame(rows).set_index("claim")


def tagging_scores(runs: pd.DataFrame, S: Sizes) -> dict[str, dict[str, float]]:
    """One ``tagging`` table row per variant: mean test F1 and its sd over seeds, per task and
    number of labelled sentences (columns like ``"NER F1 (800 sent.)"``)."""
    summary = tagging_summary(runs)
    out: dict[str, dict[str, float]] = {}
    for variant in VARIANTS:
        scores = {}
        for task in TAG_TASKS:
            for n in (S.tag_train, S.tag_few):
                if (task, n, variant) in summary.index:
                    r = summary.loc[(task, n, variant)]
                    scores[f"{task} F1 ({n} sent.)"] = float(r["F1"])
                    scores[f"{task} F1 sd ({n} sent.)"] = float(r["sd"])
        out[variant] = scores
    return out


def mix_weights(runs: pd.DataFrame) -> dict[str, np.ndarray]:
    """The scalar mix's learned softmax(s) per task, averaged over seeds."""
    out = {}
    for task, sel in runs[runs.weights.notna()].groupby("task", sort=False):
        out[task] = np.mean([np.asarray(w) for w in sel.weights], axis=0)
    return out


def layer_table(probes: dict[str, LayerProbe], pseudo: pd.DataFrame) -> pd.DataFrame:
    """One line per biLM layer: each probe's score (percent) and the pseudo-word accuracy
    (mean and sd over the pairs)."""
    names = {"brown_pos": "POS acc (Brown)", "conll2000_chunk": "chunk F1 (CoNLL-2000)"}
    out = pd.DataFrame({names.get(t, t): p.scores for t, p in probes.items()})
    cols = [c for c in pseudo.columns if c.startswith("layer")]
    out["pseudo-word acc"] = [pseudo[c].mean() for c in cols]
    out["pseudo-word sd"] = [pseudo[c].std(ddof=1) for c in cols]
    out.index = [f"layer {i}" for i in range(len(out))]
    return out.round(2)


def layer_claims(probes: dict[str, LayerProbe], pseudo: pd.DataFrame) -> pd.DataFrame:
    """Lower vs upper layer: syntax probes (layer 1 - layer 2, bootstrap over test sentences)
    and the pseudo-word probe (layer 2 - layer 1, mean +- 1.96 standard errors over pairs)."""
    rows = [claim_row(f"{t}: layer 1 - layer 2", *p.diff(1, 2)) for t, p in probes.items()]
    d = pseudo["layer 2"] - pseudo["layer 1"]
    se = float(d.std(ddof=1) / np.sqrt(len(d)))
    rows.append(claim_row("pseudo-words: layer 2 - layer 1", float(d.mean()), float(d.mean()) - 1.96 * se,
                          float(d.mean()) + 1.96 * se))
    return pd.DataFrame(rows).set_index("claim")


COVE_TASKS = ("sst2", "trec", "sick_e")


def top_pc_shares(extract: Callable, sentences: Sequence[Sequence[str]]) -> pd.DataFrame:
    """Per biLM layer, the share of the tokens' centred variance on the first one, two and
    three principal directions: near 1 means the layer uses about one direction (a collapsed,
    badly conditioned model); spread out means it uses many."""
    feats = extract([list(s) for s in sentences if s])
    rows = {}
    for k in range(feats[0].shape[0]):
        x = np.concatenate([f[k] for f in feats]).astype(np.float64)
        sv = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
        share = np.cumsum(sv / sv.sum())
        rows[f"layer {k}"] = {"PC 1": share[0], "PCs 1-2": share[1], "PCs 1-3": share[2]}
    return pd.DataFrame(rows).T.round(3)


def cove_claims(reports: dict, pairs: dict[str, tuple[str, str]], tasks=COVE_TASKS) -> pd.DataFrame:
    """SentEval differences between encoders (see :func:`paired_runs_diff`)."""
    from ..evaluate.senteval import DISPLAY

    rows = [claim_row(f"{DISPLAY[t]}: {label}", *paired_runs_diff(reports[a], reports[b], t))
            for label, (a, b) in pairs.items() for t in tasks]
    return pd.DataFrame(rows).set_index("claim")


def tagging_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd (over seeds) of test F1 per task, variant and number of labelled sentences."""
    g = runs.groupby(["task", "labelled", "variant"], sort=False)["F1"]
    return pd.DataFrame({"F1": g.mean(), "sd": g.std(ddof=1).fillna(0.0), "seeds": g.size()}).round(2)


def seed_diff(runs: pd.DataFrame, task: str, labelled: int, a: str, b: str) -> tuple[float, float, int]:
    """Mean F1 difference a - b over seeds (paired by seed), its sd, and the number of seeds."""
    sel = runs[(runs.task == task) & (runs.labelled == labelled)]
    fa = sel[sel.variant == a].set_index("seed")["F1"]
    fb = sel[sel.variant == b].set_index("seed")["F1"]
    d = (fa - fb).dropna()
    return float(d.mean()), float(d.std(ddof=1)) if len(d) > 1 else float("nan"), len(d)


# --------------------------------------------------------------------------- sentence probes
def paired_runs_diff(rep_a, rep_b, task: str) -> tuple[float, float, float]:
    """SentEval task score of ``rep_a`` minus ``rep_b``: the full-training-set difference and a
    95 % interval from the bootstrap runs (both probes see the same resample per seed, so the
    runs pair up): difference +- 1.96 sd of the paired run differences."""
    ra, rb = rep_a.results[task], rep_b.results[task]
    d = np.array(ra.runs) - np.array(rb.runs)
    sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
    diff = ra.mean - rb.mean
    return diff, diff - 1.96 * sd, diff + 1.96 * sd


def timed(fn: Callable, *args, **kwargs):
    """``(result, wall seconds, CPU seconds of this process)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def elmo_extractor(model: BiLM) -> Callable[[list[list[str]]], list[np.ndarray]]:
    """``sentences -> [3, n, 2d]`` arrays (the biLM frozen, in eval mode)."""
    return ElmoLayers(model).tokens


__all__ = [
    "COVE_TASKS",
    "PSEUDO_PAIRS",
    "TAG_TASKS",
    "VARIANTS",
    "LMData",
    "LayerProbe",
    "MTData",
    "Sizes",
    "attention_of",
    "build_cove",
    "cove_bleu",
    "elmo_extractor",
    "get_bilm",
    "get_cove",
    "lm_sentences",
    "mt_data",
    "paired_runs_diff",
    "probe_layers",
    "probe_tasks",
    "pseudoword_probe",
    "seed_diff",
    "sizes",
    "tagging_runs",
    "tagging_summary",
    "timed",
    "top_pc_shares",
    "train_bilm",
    "train_cove",
]
