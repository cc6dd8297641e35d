"""Data-layer benchmark: how long each loader takes to read its dataset from the warm cache.

Issue 11 asks for under 2 s per loader. Every dataset is fetched (verified) first, outside the
timing; each loader is then timed once, cold in this process (nothing memoised). Brown's loader
(documented at about a second on a quiet 2-core machine) is the reference: ``*_vs_brown`` is a
loader's time over Brown's in the same run, which stays meaningful on a loaded machine where the
absolute seconds are not.

Run alone with ``python -m benchmarks.bench_data`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _loaders() -> dict[str, Callable[[], object]]:
    from companion.data import (load_brown, load_google_analogies, load_moby_dick, load_simlex999, load_sotu,
                                load_wordsim353)
    from companion.data import lm_corpora as L
    from companion.data import parallel as P
    from companion.data.tasks import TAGGING_NAMES, TASK_NAMES, load_tagging, load_task
    from companion.data.treebank import load_ptb_trees

    out: dict[str, Callable[[], object]] = {
        "brown": load_brown, "sotu": load_sotu, "moby_dick": load_moby_dick, "wordsim353": load_wordsim353,
        "simlex999": load_simlex999, "google_analogies": load_google_analogies,
        "ptb_lm": L.load_ptb_lm, "tiny_shakespeare": L.load_tiny_shakespeare, "shakespeare": L.load_shakespeare,
        "abc_news": L.load_abc, "webtext": L.load_webtext, "bbc_news": L.load_bbc_news,
        "enwiki_sample": L.load_enwiki_sample, "ptb_sample": load_ptb_trees,
        "multi30k": P.load_multi30k, "tatoeba_cmn_eng": P.load_tatoeba_cmn_eng,
        "pretraining_corpus": lambda: L.load_pretraining_corpus("all"),
    }
    for t in TASK_NAMES:
        out[f"task_{t}"] = (lambda n: lambda: load_task(n))(t)
    for t in TAGGING_NAMES:
        out[f"tagging_{t}"] = (lambda n: lambda: load_tagging(n))(t)
    return out


def run() -> dict:
    """Seconds per loader, each loader's ratio to Brown's, and the loaders over 2 s."""
    from companion.data import REGISTRY, ensure
    from companion.data.lm_corpora import load_pretraining_corpus

    for name in REGISTRY:  # fetch/verify outside the timing
        ensure(name, quiet=True)
    load_pretraining_corpus("all")  # builds the derived cache once, if missing
    from companion.data import lm_corpora

    lm_corpora._MEMO.clear()  # time the read from the cache file, not the memo
    res: dict[str, object] = {}
    for name, load in _loaders().items():
        t0 = time.perf_counter()
        load()
        res[f"{name}_s"] = time.perf_counter() - t0
    brown = res["brown_s"]
    for name in _loaders():
        res[f"{name}_vs_brown"] = res[f"{name}_s"] / brown
    slow = [k[:-2] for k, v in res.items() if k.endswith("_s") and v > 2.0]
    res["loaders_over_2s"] = ", ".join(slow) or "none"
    res["slowest_s"] = max(v for k, v in res.items() if k.endswith("_s"))
    return res


if __name__ == "__main__":
    from benchmarks.__main__ import report

    print(report("data", run()))
