"""Chapter 10d's experiments (fine-tuning recipes), so that the notebook's cells stay short.

* :class:`RecipeSizes` / :func:`sizes` -- every size per ``BOOK_SCALE``;
* :func:`minilm_runs` -- one seed of every MiniLM arm: feature extraction (scalar mix and top
  layer only) and fine-tuning on SST-2 and STS-B, chain-thaw, plain and BAM multi-task
  students, and L2-SP / weight decay / nothing at a small n;
* :func:`seqae_runs` -- Dai & Le's sequence autoencoder pre-trained on unlabelled IMDb, then
  fine-tuned against the same classifier from random weights (and a bag-of-words baseline);
* :func:`baselines` -- the majority class on SST-2 and word overlap on STS-B;
* :func:`load_results` / :func:`paired` -- the stored multi-seed runs and paired differences.

The stored runs are made by the book's benchmark script for this chapter (see "Reproducing
the book"); the notebook reads them and runs one small seed live.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ..scale import pick
from . import recipes as R
from . import seqae as S
from .finetune import (
    MultiTask,
    _score,
    encode,
    epoch_batches,
    layer_features,
    predict,
    predict_task,
)

RESULTS = Path(__file__).resolve().parent / "recipes_results.json"
TASKS = {"sst2": 2, "stsb": 1}   # task -> outputs (1: regression)
TASK_NAMES = {"sst2": "SST-2", "stsb": "STS-B"}


@dataclass(frozen=True)
class RecipeSizes:
    """Everything that changes with ``BOOK_SCALE``."""

    n_layer: int | None      # MiniLM blocks kept (None: all 6)
    max_len: int             # word pieces per input (a pair shares them)
    n_train: int             # labelled examples per task (tune-or-not, chain-thaw, BAM)
    n_test: int              # test examples per task
    epochs: int              # fine-tuning epochs (every arm gets the same number of steps)
    batch_size: int
    lr: float                # encoder learning rate
    head_lr: float           # the new head's rate
    n_small: int             # labelled SST-2 examples for the L2-SP comparison
    small_epochs: int
    pull: float              # strength of L2-SP and of weight decay (same for both)
    seeds: tuple[int, ...]
    ae_vocab: int            # SeqAE: vocabulary
    ae_len: int              # tokens per review (its last ones)
    n_unlabelled: int        # unlabelled reviews for pre-training
    ae_steps: int            # pre-training steps
    ae_hidden: int
    n_labelled: int          # labelled IMDb reviews for fine-tuning
    n_imdb_test: int
    clf_epochs: int


def sizes(scale: str | None = None) -> RecipeSizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``); ``laptop`` is the stored runs' size."""
    return pick(
        ci=RecipeSizes(2, 32, 32, 48, 3, 16, 3e-4, 1e-2, 32, 2, 100.0, (0,),
                       2000, 24, 400, 30, 64, 64, 100, 2),
        laptop=RecipeSizes(3, 40, 64, 150, 3, 16, 3e-4, 1e-2, 48, 4, 100.0, (0, 1, 2),
                           2000, 32, 2000, 100, 64, 200, 400, 4),
        scale=scale)


def live_sizes(scale: str | None = None) -> RecipeSizes:
    """The notebook's own live run: one seed, smaller than the stored runs at ``laptop``."""
    import dataclasses

    lap = dataclasses.replace(sizes("laptop"), n_train=32, n_test=100, seeds=(0,))
    return pick(ci=sizes("ci"), laptop=lap, scale=scale)


def minilm(n_layer: int | None = None):
    """``(encoder, tokenize)``: all-MiniLM-L6-v2 (chapter 10a's loader)."""
    from .chapter10 import minilm as _m

    return _m(n_layer)


def task_split(name: str, n_train: int, n_test: int):
    """A fixed seeded subset of a task's train and test splits (the same for every seed)."""
    from .chapter10 import task_split as _t

    return _t(name, n_train, n_test, seed=0)


def _classifier(encoder, n_out: int, seed: int):
    from ..transformer.bert import BertForSequence

    model = BertForSequence(copy.deepcopy(encoder), n_out, pooling="mean", seed=seed)
    model.pooler.requires_grad_(False)  # mean pooling: the tanh pooler is unused
    return model


def _labels(examples, regression: bool) -> list:
    return [float(e.label) if regression else int(e.label) for e in examples]


def baselines(data: dict) -> dict[str, float]:
    """Shortcut baselines on the test sets: the majority class of SST-2's training labels, and
    word overlap (Jaccard of the lower-cased word sets) for STS-B (Spearman x 100)."""
    from ..data.text import tokenize
    from ..evaluate.similarity import spearman

    out = {}
    if "sst2" in data:
        tr, te = data["sst2"]
        major = int(np.bincount([int(e.label) for e in tr]).argmax())
        out["sst2"] = 100.0 * float(np.mean([int(e.label) == major for e in te]))
    if "stsb" in data:
        _, te = data["stsb"]
        jac = [len(set(tokenize(e.text)) & set(tokenize(e.text_b))) /
               max(1, len(set(tokenize(e.text)) | set(tokenize(e.text_b)))) for e in te]
        out["stsb"] = 100.0 * float(spearman(np.array(jac), np.array([float(e.label) for e in te])))
    return out


def load_data(s: RecipeSizes) -> dict:
    """task -> (train, test) examples, plus ``"small"``: SST-2's first ``n_small`` training
    examples (the L2-SP comparison)."""
    data = {t: task_split(t, s.n_train, s.n_test) for t in TASKS}
    data["small"] = (data["sst2"][0][:s.n_small], data["sst2"][1])
    return data


PARTS = ("tune", "l2sp", "chain", "multitask", "bam")


def minilm_runs(encoder, tokenize, data: dict, s: RecipeSizes, seed: int, device: str | None = None,
                log=print, store=None, parts: Sequence[str] = PARTS) -> dict:
    """One seed of every MiniLM arm; returns ``arm -> task -> score`` (accuracy x 100 on SST-2,
    Spearman x 100 on STS-B) and the seconds each arm took. Every fine-tuning arm of a task
    starts from the same pre-trained weights and the same head initialisation (``seed``) and
    takes the same number of optimizer steps. ``store(out)`` is called after every arm (a stopped
    run keeps what it did). ``parts`` (of :data:`PARTS`) runs only some arms, so that they can
    run in separate processes: ``tune`` (features and fine-tuning), ``l2sp``, ``chain``,
    ``multitask`` (the plain student) and ``bam`` (which fine-tunes its own single-task
    teachers, the same runs as ``tune``'s)."""
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise ValueError(f"parts must be among {PARTS}, got {bad}")
    cfg = encoder.config
    out: dict = {"scores": {}, "seconds": {}, "steps": {}}

    def put(arm, task, score, t0):
        out["scores"].setdefault(arm, {})[task] = round(float(score), 4)
        out["seconds"][f"{arm}/{task}"] = round(time.perf_counter() - t0, 1)
        log(f"seed {seed} {arm:>22s} {task}: {score:.2f} ({time.perf_counter() - t0:.0f} s)")
        if store is not None:
            store(out)

    rc = R.RecipeConfig(epochs=s.epochs, lr=s.lr, head_lr=s.head_lr, seed=seed, device=device)
    enc_tr, teachers = {}, {}
    for task, n_out in TASKS.items():
        tr, te = data[task]
        reg = n_out == 1
        gold = np.array([float(e.label) for e in te])
        e_tr, e_te = encode(tokenize, tr, s.max_len), encode(tokenize, te, s.max_len)
        enc_tr[task] = (e_tr, _labels(tr, reg))
        batches = epoch_batches(cfg, e_tr, _labels(tr, reg), s.batch_size, seed)
        out["steps"][task] = len(batches(0)) * s.epochs
        if "tune" not in parts and "bam" not in parts:
            continue
        # feature extraction: frozen encoder, cached layer features
        t0 = time.perf_counter()
        frozen = copy.deepcopy(encoder)
        R.freeze_encoder(frozen)
        if "tune" in parts:
            f_tr, f_te = layer_features(frozen, cfg, e_tr), layer_features(frozen, cfg, e_te)
        for arm, mix in (("features, scalar mix", True), ("features, top layer", False)):
            if "tune" not in parts:
                break
            t1 = time.perf_counter()
            head = R.train_scalar_mix(f_tr, _labels(tr, reg), n_out, mix=mix, seed=seed,
                                      batch_size=s.batch_size)
            put(arm, task, _score(gold, R.predict_scalar_mix(head, f_te), reg)[1], t1 if arm.endswith("layer") else t0)
            if mix:
                out.setdefault("mix weights", {})[task] = [round(float(w), 4) for w in head.s.detach().softmax(0)]
        # fine-tuning
        t0 = time.perf_counter()
        model = _classifier(encoder, n_out, seed)
        R.finetune(model, batches, rc)
        put("fine-tuning", task, _score(gold, predict(model, cfg, e_te), reg)[1], t0)
        raw = torch.tensor(predict(model, cfg, e_tr))
        teachers[task] = raw[:, 0] if reg else raw.softmax(-1)
        del model
    # staying near the pre-trained weights, at a small n
    tr, te = data["small"] if "l2sp" in parts else ([], [])
    gold = np.array([float(e.label) for e in te])
    e_tr, e_te = encode(tokenize, tr, s.max_len), encode(tokenize, te, s.max_len)
    small = R.RecipeConfig(epochs=s.small_epochs, lr=s.lr, head_lr=s.head_lr, seed=seed, device=device)
    for arm, anchor in (("no penalty", None), ("weight decay (L2 to 0)", "zero"), ("L2-SP", "pretrained"))[
            :3 if "l2sp" in parts else 0]:
        t0 = time.perf_counter()
        model = _classifier(encoder, 2, seed)
        pull = None if anchor is None else R.PullTowards(model, s.pull, anchor)
        w0 = R.PullTowards(model, 0.0, "pretrained")  # measures the distance moved
        R.finetune(model, epoch_batches(cfg, e_tr, _labels(tr, False), s.batch_size, seed), small, pull=pull)
        out.setdefault("distance", {})[arm] = round(w0.distance(), 4)
        put(arm, "small", _score(gold, predict(model, cfg, e_te), False)[1], t0)
        del model
    # chain-thaw on SST-2, in as many steps as fine-tuning took
    if "chain" not in parts:
        return _multitask(encoder, tokenize, data, s, seed, rc, enc_tr, teachers, put, out, parts)
    tr, te = data["sst2"]
    gold = np.array([float(e.label) for e in te])
    t0 = time.perf_counter()
    model = _classifier(encoder, 2, seed)
    R.chain_thaw(model, epoch_batches(cfg, enc_tr["sst2"][0], enc_tr["sst2"][1], s.batch_size, seed), rc,
                 out["steps"]["sst2"])
    put("chain-thaw", "sst2", _score(gold, predict(model, cfg, encode(tokenize, te, s.max_len)), False)[1], t0)
    del model
    return _multitask(encoder, tokenize, data, s, seed, rc, enc_tr, teachers, put, out, parts)


def _multitask(encoder, tokenize, data, s, seed, rc, enc_tr, teachers, put, out, parts) -> dict:
    """Plain and born-again (teacher annealing) multi-task students: the same batches and steps."""
    cfg = encoder.config
    for arm, with_teacher in (("multi-task", False), ("BAM! (teacher annealing)", True)):
        if ("bam" if with_teacher else "multitask") not in parts:
            continue
        t0 = time.perf_counter()
        mt = MultiTask(copy.deepcopy(encoder), dict(TASKS), seed=seed)
        mdata = {t: (e, lab, teachers[t] if with_teacher else None) for t, (e, lab) in enc_tr.items()}
        mb = R.multitask_teacher_batches(cfg, mdata, s.batch_size, seed)
        total = len(mb(0)) * s.epochs
        R.finetune(mt, mb, rc, loss_fn=R.bam_loss(total))
        for task, n_out in TASKS.items():
            _, te = data[task]
            gold = np.array([float(e.label) for e in te])
            o = predict_task(mt, cfg, task, encode(tokenize, te, s.max_len))
            put(arm, task, _score(gold, o, n_out == 1)[1], t0)
        del mt
    return out


# -------------------------------------------------------------------------------- SeqAE


def imdb_data(s: RecipeSizes) -> dict:
    """Unlabelled reviews for pre-training, a balanced labelled training set and a test set,
    all as ids (the last ``ae_len`` tokens of each review) over a vocabulary of the unlabelled
    reviews. Seeded: the same for every seed."""
    from ..data.imdb import clean_review, load_imdb
    from ..data.tasks import load_task

    rng = np.random.default_rng(0)
    unsup = load_imdb("unsup")
    texts = [clean_review(unsup[i].text) for i in rng.permutation(len(unsup))[:s.n_unlabelled]]
    vocab = S.build_vocab(texts, s.ae_vocab)
    task = load_task("imdb")
    tr, te = task.splits["train"], task.splits["test"]
    pos = [i for i in rng.permutation(len(tr)) if tr[i].label == 1][: s.n_labelled // 2]
    neg = [i for i in rng.permutation(len(tr)) if tr[i].label == 0][: s.n_labelled - len(pos)]
    lab = [tr[i] for i in sorted(pos + neg)]
    test = [te[i] for i in rng.permutation(len(te))[: s.n_imdb_test]]
    enc = lambda xs: S.encode_texts(vocab, xs, s.ae_len)
    return {"vocab": vocab, "unlabelled": enc(texts),
            "train": (enc([e.text for e in lab]), [int(e.label) for e in lab]),
            "test": (enc([e.text for e in test]), [int(e.label) for e in test])}


def pretrain_autoencoder(d: dict, s: RecipeSizes, seed: int = 0, device: str | None = None,
                         progress: bool = False) -> tuple[S.SeqAutoencoder, dict]:
    """Pre-train the sequence autoencoder on the unlabelled reviews; returns it and its loss
    before and after (nats per token) and reconstruction token accuracy on 200 of them."""
    c = S.SeqAEConfig(len(d["vocab"]), d_hidden=s.ae_hidden, pad_id=d["vocab"][S.PAD], go_id=d["vocab"][S.GO])
    ae = S.SeqAutoencoder(c, seed=seed)
    t0 = time.perf_counter()
    hist = S.pretrain(ae, d["unlabelled"], steps=s.ae_steps, seed=seed, device=device, progress=progress)
    held = d["unlabelled"][:200]
    k = max(1, len(hist.step_loss) // 20)
    info = {"loss first": round(float(np.mean(hist.step_loss[:k])), 4),
            "loss last": round(float(np.mean(hist.step_loss[-k:])), 4),
            "token accuracy": round(S.token_accuracy(ae, held), 4),
            "seconds": round(time.perf_counter() - t0, 1), "curve": [round(x, 3) for x in hist.step_loss[::10]]}
    return ae, info


def seqae_runs(d: dict, ae: S.SeqAutoencoder, s: RecipeSizes, seed: int, device: str | None = None) -> dict:
    """The classifier fine-tuned from the autoencoder's weights and from random weights (the
    same head initialisation, data order and epochs); accuracy x 100 on the test reviews."""
    (xtr, ytr), (xte, yte) = d["train"], d["test"]
    out = {}
    for arm in ("random init", "SeqAE init"):
        clf = S.LSTMClassifier(ae.config, 2, seed=seed)
        if arm == "SeqAE init":
            S.init_from_autoencoder(clf, ae)
        S.train_classifier(clf, xtr, ytr, epochs=s.clf_epochs, seed=seed, device=device)
        out[arm] = round(S.accuracy(clf, xte, yte), 4)
    return out


# ------------------------------------------------------------------------------ stored runs


def load_results(path: Path | None = None) -> dict:
    """The stored multi-seed runs (meta, per-seed scores)."""
    path = Path(path or RESULTS)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: run the chapter's benchmark script first")
    return json.loads(path.read_text(encoding="utf-8"))


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """Mean of the per-seed differences ``a - b`` and their min-to-max interval."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if d.size == 0 or len(a) != len(b):
        raise ValueError(f"need equal, non-empty lists of per-seed scores, got {len(a)} and {len(b)}")
    return float(d.mean()), (float(d.min()), float(d.max()))


def arm_scores(results: dict, arm: str, task: str) -> list[float]:
    """One arm's score on one task, per stored seed (in seed order)."""
    runs = results["minilm"]
    return [runs[k]["scores"][arm][task] for k in sorted(runs, key=int)]


def sizes_dict(s: RecipeSizes) -> dict:
    return asdict(s)


def complete_seeds(results: dict, arms: Sequence[tuple[str, str]]) -> list[str]:
    """The stored seeds that have every ``(arm, task)`` of ``arms``."""
    runs = results["minilm"]["runs"]
    return [k for k in sorted(runs, key=int)
            if all(task in runs[k]["scores"].get(arm, {}) for arm, task in arms)]


def pair(results: dict, a: tuple[str, str], b: tuple[str, str]) -> tuple[list[float], list[float]]:
    """Per-seed scores of two ``(arm, task)`` pairs over the seeds that have both."""
    runs = results["minilm"]["runs"]
    seeds = complete_seeds(results, [a, b])
    return ([runs[k]["scores"][a[0]][a[1]] for k in seeds], [runs[k]["scores"][b[0]][b[1]] for k in seeds])


def arm_frame(results: dict, arms: Sequence[str], tasks: Sequence[str]):
    """A table of stored arms: per task, the mean over seeds and the lowest and highest seed."""
    import pandas as pd

    runs = results["minilm"]["runs"]
    rows = {}
    for arm in arms:
        row = {}
        for task in tasks:
            v = [runs[k]["scores"][arm][task] for k in sorted(runs, key=int)
                 if task in runs[k]["scores"].get(arm, {})]
            name = TASK_NAMES.get(task, f"SST-2, n = {results['minilm']['meta']['sizes']['n_small']}")
            if v:
                row[name] = float(np.mean(v))
                row[f"{name} range"] = f"{min(v):.1f}-{max(v):.1f}"
                row[f"{name} seeds"] = len(v)
        rows[arm] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def seqae_frame(results: dict):
    """The SeqAE runs: per arm, accuracy per seed, the mean, and the baselines."""
    import pandas as pd

    r = results["seqae"]
    runs = r["runs"]
    seeds = sorted(runs, key=int)
    rows = {arm: {**{f"seed {k}": runs[k][arm] for k in seeds},
                  "mean": float(np.mean([runs[k][arm] for k in seeds]))}
            for arm in ("random init", "SeqAE init")}
    rows["bag of words (logistic regression)"] = {"mean": r["bag of words"]}
    rows["majority class"] = {"mean": r["majority"]}
    return pd.DataFrame.from_dict(rows, orient="index")


def tune_or_not(encoder, tokenize, split: tuple[list, list], task: str, s: RecipeSizes, seed: int = 0,
                device: str | None = None) -> dict[str, float]:
    """Feature extraction (top layer, scalar mix) and fine-tuning on one task, as
    :func:`minilm_runs` does them for the stored seeds: ``arm -> score``."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    cfg, n_out = encoder.config, TASKS[task]
    reg = n_out == 1
    tr, te = split
    gold = np.array([float(e.label) for e in te])
    e_tr, e_te = encode(tokenize, tr, s.max_len), encode(tokenize, te, s.max_len)
    frozen = copy.deepcopy(encoder)
    R.freeze_encoder(frozen)
    f_tr, f_te = layer_features(frozen, cfg, e_tr), layer_features(frozen, cfg, e_te)
    out = {}
    for arm, mix in (("features, scalar mix", True), ("features, top layer", False)):
        head = R.train_scalar_mix(f_tr, _labels(tr, reg), n_out, mix=mix, seed=seed, batch_size=s.batch_size)
        out[arm] = _score(gold, R.predict_scalar_mix(head, f_te), reg)[1]
    model = _classifier(encoder, n_out, seed)
    rc = R.RecipeConfig(epochs=s.epochs, lr=s.lr, head_lr=s.head_lr, seed=seed, device=device)
    R.finetune(model, epoch_batches(cfg, e_tr, _labels(tr, reg), s.batch_size, seed), rc)
    out["fine-tuning"] = _score(gold, predict(model, cfg, e_te), reg)[1]
    return out


TRANSFER_ARMS = {"features, scalar mix": "feature extraction, scalar mix (frozen)",
                 "fine-tuning": "full fine-tuning (10d)", "chain-thaw": "chain-thaw",
                 "multi-task": "multi-task (SST-2 + STS-B)",
                 "BAM! (teacher annealing)": "BAM! multi-task student (teacher annealing)",
                 "no penalty": "fine-tuning, small n, no penalty",
                 "weight decay (L2 to 0)": "fine-tuning, small n, weight decay",
                 "L2-SP": "fine-tuning, small n, L2-SP"}


def add_transfer_rows(table, results: dict, source: str = "notebooks/10d_finetuning_recipes.ipynb") -> None:
    """Add the stored recipes to the running ``transfer`` table: the mean over the stored
    seeds, in columns of their own (``SST-2, 10d`` / ``STS-B, 10d`` / ``SST-2 small n, 10d``: a
    different sample and encoder depth from chapter 10a's). Rows are stored as ``laptop`` (the runs' scale)."""
    m = results["minilm"]
    sz = m["meta"]["sizes"]
    depth = f"bottom {sz['n_layer']} blocks" if sz["n_layer"] else "6 blocks"
    for arm, name in TRANSFER_ARMS.items():
        scores = {}
        for task, col in (("sst2", "SST-2, 10d"), ("stsb", "STS-B, 10d"), ("small", "SST-2 small n, 10d")):
            v = [r["scores"][arm][task] for r in m["runs"].values() if task in r["scores"].get(arm, {})]
            if v:
                scores[col] = round(float(np.mean(v)), 2)
        if not scores:
            continue
        n = sz["n_small"] if arm in ("no penalty", "weight decay (L2 to 0)", "L2-SP") else sz["n_train"]
        table.add(f"all-MiniLM-L6-v2 ({depth}), {name}", chapter="10d", scores=scores, scale="laptop",
                  source=source, meta={"seeds": len(m["runs"]), "n_train": n, "max_len": sz["max_len"],
                                       "lr": sz["lr"], "head_lr": sz["head_lr"]})


def effect(results: dict, a: tuple[str, str], b: tuple[str, str]) -> tuple[float, tuple[float, float], int] | None:
    """``(mean, (min, max), seeds)`` of the per-seed differences ``a - b`` over the stored seeds
    that have both ``(arm, task)`` pairs; ``None`` when none has."""
    x, y = pair(results, a, b)
    if not x:
        return None
    m, iv = paired(x, y)
    return m, iv, len(x)


def claim(key: str, measured: tuple[float, tuple[float, float], int] | None, **kw) -> str:
    """:func:`companion.evaluate.claims.claim_check` on a measured ``(effect, interval,
    seeds)``; without a measurement (no stored seed has both arms) the claim is recorded as
    not testable here."""
    from ..evaluate.claims import claim_check

    method = kw.pop("method", "stored seeds (laptop sizes): mean of the paired differences, min to max")
    if measured is None:
        return claim_check(key, effect=None, interval=None, valid=False, method=method,
                           why="no stored seed holds both arms of the comparison", **kw)
    eff, iv, n = measured
    return claim_check(key, effect=eff, interval=iv, method=f"{method}; {n} seeds", **kw)


def gap_difference(results: dict) -> tuple[float, tuple[float, float], int] | None:
    """Per seed, (fine-tuning - scalar-mix features) on STS-B minus the same on SST-2: its mean,
    min to max and seeds (``None`` without a seed that has all four runs)."""
    arms = [("fine-tuning", "stsb"), ("features, scalar mix", "stsb"), ("fine-tuning", "sst2"),
            ("features, scalar mix", "sst2")]
    seeds = complete_seeds(results, arms)
    if not seeds:
        return None
    runs = results["minilm"]["runs"]
    v = [runs[k]["scores"]
         for k in seeds]
    d = [(x["fine-tuning"]["stsb"] - x["features, scalar mix"]["stsb"])
         - (x["fine-tuning"]["sst2"] - x["features, scalar mix"]["sst2"]) for x in v]
    return float(np.mean(d)), (float(min(d)), float(max(d))), len(d)


def pooled_effect(results: dict, a: str, b: str) -> tuple[float, tuple[float, float], int] | None:
    """Arm ``a`` minus arm ``b`` averaged over the tasks of :data:`TASKS`: per task the mean of
    the per-seed differences with half-width the larger distance to its min or max, pooled by
    :func:`companion.evaluate.claims.pooled`; the fewest seeds of a task. ``None`` when a task
    has no seed with both arms."""
    from ..evaluate.claims import pooled

    d, h, n = [], [], []
    for t in TASKS:
        e = effect(results, (a, t), (b, t))
        if e is None:
            return None
        d.append(e[0])
        h.append(max(e[0] - e[1][0], e[1][1] - e[0]))
        n.append(e[2])
    m, iv = pooled(d, h)
    return m, iv, min(n)


def beats_baseline(results: dict, arms: Sequence[str], task: str, baseline: float) -> bool:
    """Whether some arm beats ``baseline`` in every stored seed it has (a comparison between
    arms that all sit at a shortcut's level says nothing about the recipes)."""
    runs = results["minilm"]["runs"]
    for arm in arms:
        v = [r["scores"][arm][task] for r in runs.values() if task in r["scores"].get(arm, {})]
        if v and min(v) > baseline:
            return True
    return False
