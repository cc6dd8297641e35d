"""Chapter 3 benchmark: our skip-gram + negative sampling against gensim 4.4.0, one run.

Same tokens (the chapter corpus: Brown + State of the Union + Moby Dick through the book's
tokenizer), same hyperparameters (d=100, window 5, 5 noise words, min_count 5, sample 1e-3,
lr 0.025 decaying linearly to 0.025e-4, the same epochs), both on 2 CPU threads
(gensim ``workers=2``; ours ``workers=2`` Hogwild threads with one intra-op thread each). Both
sets of vectors are scored by the same code (:func:`companion.evaluate.compare_embeddings`):
WordSim-353 and SimLex-999 Spearman, Google analogies (3CosAdd, top 30k words).

Speed is corpus words per second of *training*, both counted as gensim counts them: every word of
the corpus, before ``min_count`` and subsampling (gensim's ``corpus_total_words`` over its
``total_train_time``; ours ``EncodedCorpus.corpus_words`` over ``History.seconds``), as a ratio to
gensim measured in the same run -- the machine is shared, so only ratios travel. The ratio is
measured on the chapter corpus and on Moby Dick alone (209k tokens, |V| 4,050: a small
vocabulary, where per-batch overhead weighs most), ``repeats`` times each (the median is
``*_speed_ratio``, every run in ``*_speed_ratio_runs``), then again with a process spinning on one
core (``busy_*``). The 1-minute load average at the start and the end says how quiet "quiet" was.
Also timed on a slice: the compiled and the torch step with 1 and 2 workers, and the book's
``train.fit`` loop (autograd, sparse gradients).

Our step is compiled with numba when it is installed (:mod:`companion.word2vec._compiled`, the
same update as the readable torch step, proven equal by ``tests/test_word2vec_compiled.py``);
its module docstring has the profile that motivated it. Before it (the torch step only), the
measured ratios were 1.11 on the chapter corpus on a quiet machine, 0.51 with the second core busy,
and 0.66-0.84 on Moby Dick alone (issue 19; measured before 2026-12-01 12:57 UTC). One run of this
benchmark with the compiled step (5 epochs, 2 repeats), recorded in commit e35cfd2 (2026-12-01
12:57 UTC; command not recorded), on a 2-core machine shared with seven other jobs (CPU flags not
recorded), load average 12 at the start and 15 at the end, so no part of it was quiet:

=========================================  ============  ============================
corpus                                     ratio (runs)  ours / gensim words/s (median)
=========================================  ============  ============================
chapter corpus (3.03M tokens, |V| 21,894)  1.46, 1.55    72k / 47k
Moby Dick alone                            1.49, 1.37    144k / 101k
Moby Dick, a spinning process added        1.41, 0.84    105k / 88k
chapter corpus, a spinning process added   1.47          42k / 29k
=========================================  ============  ============================

Quality in the same run: WS353 0.409 vs gensim 0.404, SimLex 0.157 vs 0.154, analogies 8.8 % vs
8.6 % (``quality_ok``). On the slice, the compiled step ran at 82k words/s with one worker
against 57k for the torch step (the load left no second core, so two workers gained nothing for
either). These ratios are for a heavily loaded machine; no quiet-machine run of the compiled
step has been recorded, and the torch step's ratios moved with the load in both directions.

Run alone with ``python -m benchmarks.bench_word2vec`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from companion.device import describe, get_device
from companion.word2vec import _compiled, encode_corpus, train_word2vec

HYPER = dict(dim=100, window=5, negative=5, min_count=5, sample=1e-3)


def _gensim(sentences, epochs: int, seed: int, workers: int = 2):
    from gensim.models import Word2Vec

    m = Word2Vec(
        sentences, vector_size=HYPER["dim"], window=HYPER["window"], min_count=HYPER["min_count"],
        sample=HYPER["sample"], sg=1, hs=0, negative=HYPER["negative"], alpha=0.025,
        min_alpha=0.025 * 1e-4, workers=workers, epochs=epochs, seed=seed,
    )
    words_per_s = m.corpus_total_words * epochs / m.total_train_time
    return m.wv.vectors.astype(np.float32), dict(m.wv.key_to_index), words_per_s, m.total_train_time


def _scores(named: dict) -> dict:
    from companion.data import load_google_analogies, load_simlex999, load_wordsim353
    from companion.evaluate import compare_embeddings

    table = compare_embeddings(
        named,
        similarity={"WS353": load_wordsim353(), "SimLex": load_simlex999()},
        analogies=load_google_analogies(),
        methods=("3cosadd",),
        restrict_vocab=30000,
    )
    return {name: {k: float(v) for k, v in row.items()} for name, row in table.iterrows()}


def _busy_core() -> subprocess.Popen:
    """A process that spins on one core until stopped: the "second core busy" condition."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _pair(sents, corpus, epochs: int, seed: int, dev, **kw) -> tuple[float, float, Any, Any]:
    """gensim and ours (``workers=2`` each) on the same tokens: words/s of each, and the runs."""
    g = _gensim(sents, epochs, seed)
    ours = train_word2vec(corpus, arch="sg", output="neg", epochs=epochs, seed=seed, workers=2,
                          device=str(dev), **kw, **HYPER)
    return ours.words_per_second, g[2], ours, g


def _ratios(prefix: str, runs: list[tuple[float, float]], out: dict) -> None:
    ratios = [o / g for o, g in runs]
    out[f"{prefix}_speed_ratio"] = float(np.median(ratios))
    out[f"{prefix}_speed_ratio_runs"] = " ".join(f"{r:.2f}" for r in ratios)
    out[f"{prefix}_ours_words_per_s"] = float(np.median([o for o, _ in runs]))
    out[f"{prefix}_gensim_words_per_s"] = float(np.median([g for _, g in runs]))


def run(*, epochs: int = 5, max_tokens: int | None = None, seed: int = 1, slice_tokens: int = 300_000,
        repeats: int = 2, busy: bool = True, device: str | None = "cpu") -> dict:
    """Train gensim and ours (skip-gram, NEG, ``workers=2`` each) on the chapter corpus and on
    Moby Dick alone, quiet and with a busy-looping process on the second core; return a flat
    dict of scores, speeds and ratios (``*_ratio`` = ours / gensim, the median of ``repeats``
    runs, each run's ratio in ``*_ratio_runs``; ``*_diff`` = ours - gensim). The load average
    before and after is printed with them: on a shared machine "quiet" is only as quiet as the
    machine was."""
    from companion.static.corpus import chapter_corpus

    dev = get_device(device)
    t0 = time.perf_counter()
    sents = chapter_corpus(max_tokens=max_tokens)
    corpus = encode_corpus(sents, min_count=HYPER["min_count"])
    moby = chapter_corpus(("moby_dick",))
    moby_corpus = encode_corpus(moby, min_count=HYPER["min_count"])
    out: dict = {
        "corpus_tokens": sum(len(s) for s in sents), "vocab_size": len(corpus.vocab), "epochs": epochs,
        "moby_tokens": sum(len(s) for s in moby), "moby_vocab_size": len(moby_corpus.vocab),
        "device": describe(dev), "kernel": "numba" if _compiled.AVAILABLE else "torch (numba missing)",
        "load_avg_1min_start": os.getloadavg()[0],
    }
    _compiled.warm_up()  # numba compiles (or loads its cache) once, outside every timing

    # quiet: the chapter corpus (also scored for quality), then Moby Dick alone
    chapter_runs, moby_runs = [], []
    for r in range(repeats):
        o_wps, g_wps, ours, g = _pair(sents, corpus, epochs, seed + r, dev)
        chapter_runs.append((o_wps, g_wps))
        if r == 0:
            g_vec, g_index, _, g_sec = g
            out["gensim_s_per_epoch"] = g_sec / epochs
            out["ours_s_per_epoch"] = ours.seconds_per_epoch
            scores = _scores({"gensim": (g_vec, g_index), "ours": (ours.vectors().numpy(), ours.index)})
        moby_runs.append(_pair(moby, moby_corpus, epochs, seed + r, dev)[:2])
    _ratios("chapter", chapter_runs, out)
    _ratios("moby", moby_runs, out)
    out["speed_ratio"] = out["chapter_speed_ratio"]
    for key in ("WS353 rho", "SimLex rho", "3cosadd", "3cosadd semantic", "3cosadd syntactic", "analogy coverage"):
        slug = key.replace(" ", "_").lower()
        out[f"gensim_{slug}"] = scores["gensim"][key]
        out[f"ours_{slug}"] = scores["ours"][key]
    out["ws353_diff"] = out["ours_ws353_rho"] - out["gensim_ws353_rho"]
    out["analogy_points_diff"] = 100 * (out["ours_3cosadd"] - out["gensim_3cosadd"])
    out["quality_ok"] = abs(out["ws353_diff"]) <= 0.03 and abs(out["analogy_points_diff"]) <= 2.0

    # the second core busy: a spinning process for the whole part, stopped after
    if busy:
        spinner = _busy_core()
        try:
            b_moby = [_pair(moby, moby_corpus, epochs, seed + r, dev)[:2] for r in range(repeats)]
            b_chapter = [_pair(sents, corpus, epochs, seed, dev)[:2]]
        finally:
            spinner.kill()
            spinner.wait()
        _ratios("busy_moby", b_moby, out)
        _ratios("busy_chapter", b_chapter, out)

    # engines and workers on a slice (one epoch each): the compiled and the torch step, the
    # book's train.fit loop (autograd, sparse gradients), 1 vs 2 workers
    part = encode_corpus(chapter_corpus(max_tokens=slice_tokens), min_count=HYPER["min_count"])
    for name, kw in (("numba_1worker", dict(workers=1, kernel="numba")),
                     ("numba_2workers", dict(workers=2, kernel="numba")),
                     ("torch_1worker", dict(workers=1, kernel="torch")),
                     ("torch_2workers", dict(workers=2, kernel="torch")),
                     ("autograd_fit", dict(engine="autograd"))):
        if "numba" in name and not _compiled.AVAILABLE:
            continue
        r = train_word2vec(part, arch="sg", output="neg", epochs=1, seed=seed, device=str(dev), **kw, **HYPER)
        out[f"slice_{name}_words_per_s"] = r.words_per_second
    if _compiled.AVAILABLE:
        out["slice_numba_over_torch_speedup"] = (out["slice_numba_2workers_words_per_s"]
                                                 / out["slice_torch_2workers_words_per_s"])
    out["slice_sgd_over_autograd"] = out["slice_torch_1worker_words_per_s"] / out["slice_autograd_fit_words_per_s"]
    out["load_avg_1min_end"] = os.getloadavg()[0]
    out["seconds"] = time.perf_counter() - t0
    return out


def run_variants(*, epochs: int = 1, max_tokens: int | None = None, seed: int = 1, workers: int = 2,
                 device: str | None = "cpu") -> list[dict]:
    """The chapter's table: {CBOW, SG} x {HS, NEG} x {subsampling 1e-3, off}, plus gensim's
    skip-gram NEG as a reference row: seconds per epoch, words/s and scores. Not part of
    :func:`run` (it takes ~8 trainings); used to size the notebook's laptop budget."""
    from companion.static.corpus import chapter_corpus

    sents = chapter_corpus(max_tokens=max_tokens)
    corpus = encode_corpus(sents, min_count=HYPER["min_count"])
    rows, named = [], {}
    g_vec, g_index, g_wps, g_sec = _gensim(sents, epochs, seed, workers=workers)
    rows.append({"name": "gensim sg/neg", "s/epoch": g_sec / epochs, "words/s": g_wps})
    named["gensim sg/neg"] = (g_vec, g_index)
    for arch in ("sg", "cbow"):
        for output in ("neg", "hs"):
            for sample in (1e-3, 0.0):
                name = f"{arch}/{output}/{'sub' if sample else 'nosub'}"
                r = train_word2vec(corpus, arch=arch, output=output, epochs=epochs, seed=seed, workers=workers,
                                   device=device, **{**HYPER, "sample": sample})
                rows.append({"name": name, "s/epoch": r.seconds_per_epoch, "words/s": r.words_per_second})
                named[name] = (r.vectors().numpy(), r.index)
    scores = _scores(named)
    for row in rows:
        row.update(scores[row["name"]])
    return rows


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
