"""Chapter 5: a second training seed for the encoders the chapter trains once, and InferSent's
second run on SICK-E + RTE -- at the chapter's ``laptop`` sizes, outside its laptop budget.

The notebook trains Doc2Vec, Skip-thoughts, Quick-thoughts and GenSen-lite with seed 0 only (its
five-minute budget); its claim checks 2, 3 and 6 compare those rows. This script retrains every
encoder of those comparisons with other seeds (the same data, sizes and probe settings as the
notebook: ``companion.sentence.chapter.SIZES["laptop"]``) and stores, per seed, each comparison's
paired verdicts; the notebook reads the file, labels it stored, and puts its seed-0 verdicts
beside them. It also trains InferSent's BiLSTM-max on SICK-E + RTE (the issue's second run; RTE's
*not_entailment* becomes SICK's *neutral*, RTE-3's test set is untouched) for every seed and
stores its SICK-E test accuracy and probe scores next to the same encoder trained on SICK-E alone.

    BOOK_SCALE=laptop python benchmarks/ch05_seeds.py companion/sentence/stored_seeds.json [seeds]

(``seeds``: comma-separated, default ``1``; InferSent runs seeds ``0,1``.) CI never runs it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
import time

import torch

from companion.data import load_multi30k, load_pretraining_corpus, tokenize
from companion.data.tasks import load_task
from companion.evaluate.senteval import ProbeConfig, config_summary, senteval
from companion.scale import get_scale, pick
from companion.sentence import (
    Doc2VecConfig,
    GenSenConfig,
    InferSentConfig,
    QuickThoughtsConfig,
    SkipThoughtsConfig,
    train_doc2vec,
    train_gensen,
    train_infersent,
    train_quickthoughts,
    train_skipthoughts,
)
from companion.sentence.chapter import SIZES
from companion.sentence.report import paired_table, timed, versus_table
from companion.word2vec import train_word2vec

TASKS = ("mr", "subj", "trec", "sick_e", "sick_r", "stsb")


def probe_config() -> ProbeConfig:
    """The notebook's probe settings (section 1)."""
    sizes = {"max_train": 200, "max_dev": 80, "max_test": 150, "max_all": 150}
    small = {**sizes, "seeds": (0, 1), "c_grid": (2**-7, 2**-3, 2.0), "inner_folds": 2}
    folds = {"inner_folds": 3, "outer_folds": 5}
    lean = {**folds, "inner_folds": 2, "c_grid": (2**-9, 2**-5, 2**-1, 8.0)}
    return ProbeConfig.for_scale(**pick(ci={**small, "outer_folds": 3}, laptop=lean, gpu=folds))


def verdicts(table) -> dict:
    """A paired table as JSON: per task A, B, A - B and the verdict."""
    return {task: {k: (v if isinstance(v, str) else float(v)) for k, v in row.items()}
            for task, row in table.to_dict(orient="index").items()}


def rte_as_nli() -> list[tuple[str, str, int]]:
    """RTE's training pairs with SICK-E's labels: entailment -> 0, not_entailment -> 1 (neutral)."""
    rte = load_task("rte")
    to_sick = {"entailment": 0, "not_entailment": 1}
    return [(e.text, e.text_b, to_sick[rte.label_names[e.label]]) for e in rte.splits["train"]]


def run(seeds: list[int]) -> dict:
    torch.set_num_threads(1)
    S = pick(**SIZES)
    probe = probe_config()
    docs = load_pretraining_corpus("train")[: S["docs"]]
    token_lists = [tokenize(s) for d in docs for s in d]
    rnn_docs = docs[: S["rnn_docs"]]
    size = {"emb_dim": S["emb"], "hidden": S["hidden"], "max_vocab": S["vocab"]}
    rnn = {**size, "batch_size": 64}
    sick = load_task("sick_e").splits
    nli_train = sick["train"][: S["nli_train"]]
    nli_test = sick["test"][: pick(ci=800, laptop=None, gpu=None)]
    out: dict = {"seeds": {}, "infersent": {}}
    cpu: dict[str, float] = {}

    def probe_run(name, encode):
        return senteval(encode, TASKS, name=name, config=probe)

    for seed in seeds:
        r: dict = {}
        # claim check 2: paragraph vectors against the skip-gram average
        sg, cpu[f"skip-gram {seed}"], _ = timed(
            lambda s=seed: train_word2vec(token_lists, arch="sg", epochs=S["w2v_epochs"], min_count=2, seed=s))
        from companion.sentence import AveragedVectors

        avg = probe_run("mean skip-gram", AveragedVectors(sg.vectors(), sg.vocab.itos))
        for mode in ("dbow", "dm_mean"):
            cfg = Doc2VecConfig(mode=mode, dim=100, epochs=S["d2v_epochs"], min_count=2, seed=seed)
            d2v, cpu[f"{mode} {seed}"], _ = timed(lambda c=cfg: train_doc2vec(token_lists, c))
            r[f"{mode} vs mean skip-gram"] = verdicts(paired_table(probe_run(mode, d2v.encode), avg))
        # claim check 3: Quick-thoughts against Skip-thoughts, speed and probes
        st, st_cpu, _ = timed(lambda s=seed: train_skipthoughts(rnn_docs, SkipThoughtsConfig(**rnn, lr=1e-3, seed=s)))
        qt, qt_cpu, _ = timed(lambda s=seed: train_quickthoughts(rnn_docs, QuickThoughtsConfig(**rnn, lr=5e-4, seed=s)))
        cpu[f"skip-thoughts {seed}"], cpu[f"quick-thoughts {seed}"] = st_cpu, qt_cpu
        r["qt_speedup"] = (qt.history.items / qt_cpu) / (st.history.items / st_cpu)
        r["QT vs ST"] = verdicts(paired_table(probe_run("QT", qt.encode), probe_run("ST", st.encode)))
        # claim check 6: GenSen-lite on three tasks against each task alone
        task_data = {
            "next": {"documents": rnn_docs},
            "NLI": {"nli": nli_train},
            "translation": {"translation": load_multi30k()["train"][: S["m30k"]]},
        }
        task_data = {"3 tasks": {k: v for d in task_data.values() for k, v in d.items()}, **task_data}
        reps = {}
        for name, data in task_data.items():
            res, cpu[f"gensen {name} {seed}"], _ = timed(
                lambda d=data, s=seed: train_gensen(**d, config=GenSenConfig(**size, seed=s)))
            reps[name] = probe_run(f"GenSen-lite ({name})", res.encode)
        vs = versus_table(reps.pop("3 tasks"), reps)
        r["GenSen vs single"] = {task: {k: (v if isinstance(v, str) else float(v)) for k, v in row.items()}
                                 for task, row in vs.to_dict(orient="index").items()}
        out["seeds"][str(seed)] = r
    # InferSent's second run: SICK-E + RTE, against SICK-E alone (BiLSTM-max), seeds 0 and 1
    rte = rte_as_nli()
    nli_size = {"emb_dim": S["emb"], "hidden": S["nli_hidden"], "epochs": S["nli_epochs"]}
    for seed in S["seeds"]:
        cfg = InferSentConfig(**nli_size, mlp=128, pooling="max", seed=seed)
        reps = {}
        for name, data in (("SICK-E", list(nli_train)), ("SICK-E + RTE", list(nli_train) + rte)):
            res, cpu[f"infersent {name} {seed}"], _ = timed(lambda d=data, c=cfg: train_infersent(d, c))
            reps[name] = rep = probe_run(f"InferSent BiLSTM-max ({name})", res.encode)
            out["infersent"][f"{name} {seed}"] = {"sick_e_test_acc": 100 * res.accuracy(nli_test),
                                                  "scores": rep.scores(), "train_pairs": len(data)}
        out["infersent"][f"RTE vs alone {seed}"] = verdicts(paired_table(reps["SICK-E + RTE"], reps["SICK-E"]))
    out["meta"] = {
        "command": "BOOK_SCALE=" + get_scale() + " python benchmarks/ch05_seeds.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "scale": get_scale(), "sizes": {k: list(v) if isinstance(v, tuple) else v for k, v in S.items()},
        "probe": config_summary(probe), "train_cpu_s": {k: round(v, 1) for k, v in cpu.items()},
        "cpu_s_total": round(time.process_time(), 1), "threads": 1, "machine": platform.machine(),
        "load_avg": round(os.getloadavg()[0], 1), "rte_pairs": len(rte),
    }
    return out


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "companion/sentence/stored_seeds.json"
    seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [1]
    result = run(seeds)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(result, fh, indent=1)
    os.replace(tmp, path)  # atomic: a reader never sees half a file
    print(json.dumps(result["meta"], indent=1))
