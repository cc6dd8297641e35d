"""Speed of the SentEval-style harness (issue 11: a 300-d encoder over all its tasks at ci
scale in under a minute).

A 300-d random-projection bag of words (:class:`RandomBowEncoder`, no learned parameters, so the
time is the harness's: loading, encoding, probes) over the ten tasks of
:data:`SENTEVAL_TASKS` with ``ProbeConfig.for_scale("ci")``. Wall and CPU seconds are printed:
on a shared machine the wall time is several times the CPU time. ``tests/test_evaluate_senteval``
checks the same bound on generated tasks of the same sizes.

Run with ``python -m benchmarks senteval_speed``.
"""

from __future__ import annotations

import time

from companion.data.tasks import load_task
from companion.evaluate.senteval import (
    SENTEVAL_TASKS,
    ProbeConfig,
    RandomBowEncoder,
    senteval,
)


def run() -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    tasks = [load_task(name) for name in SENTEVAL_TASKS]
    load_s = time.perf_counter() - t0
    report = senteval(RandomBowEncoder(300), tasks, config=ProbeConfig.for_scale("ci"), progress=True)
    wall = time.perf_counter() - t0
    return {"tasks": len(tasks), "load_seconds": round(load_s, 2), "encode_seconds": round(report.encode_seconds, 2),
            "harness_seconds": round(report.seconds, 2), "wall_seconds": round(wall, 2),
            "cpu_seconds": round(time.process_time() - c0, 2), "under_a_minute": wall < 60,
            "sentences_encoded": report.n_sentences}


if __name__ == "__main__":
    from benchmarks.__main__ import report

    print(report("senteval_speed", run()))
