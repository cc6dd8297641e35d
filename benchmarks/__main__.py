"""Run the benchmarks: ``python -m benchmarks [name ...] [--json FILE]``.

Each ``benchmarks/bench_<name>.py`` exposes ``run() -> dict`` (flat, JSON-friendly). This runner
imports each one, runs it, prints its numbers with the ratios first, and says which failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import pkgutil
import sys
import time
import traceback
from pathlib import Path

RATIO_WORDS = ("ratio", "speedup", "faster", "slower", "_x")


def available() -> list[str]:
    """Names of the benchmarks (``bench_<name>.py`` -> ``name``), sorted."""
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return f"{value:,.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    return str(value)


def report(name: str, result: dict) -> str:
    """The result as aligned lines, ratio-like keys first."""
    keys = sorted(result, key=lambda k: (not any(w in k for w in RATIO_WORDS), list(result).index(k)))
    width = max((len(k) for k in keys), default=0)
    lines = [f"== {name} =="]
    lines += [f"  {k.ljust(width)}  {_fmt(result[k])}" for k in keys]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the named benchmarks (all by default); exit status 1 if any failed."""
    names = available()
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help=f"which to run (default all): {', '.join(names)}")
    ap.add_argument("--json", help="also write every result to this JSON file")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in names]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; available: {names}")
    results, failed = {}, []
    for name in args.names or names:
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(f"benchmarks.bench_{name}")
            res = mod.run()
        except Exception:  # one broken benchmark must not hide the others
            failed.append(name)
            print(f"== {name} == FAILED after {time.perf_counter() - t0:.0f} s", flush=True)
            traceback.print_exc()
            continue
        res = dict(res)
        res.setdefault("bench_seconds", time.perf_counter() - t0)
        results[name] = res
        print(report(name, res), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
