"""Speed and quality against peers, printed as ratios in one run.

``python -m benchmarks`` runs every ``benchmarks/bench_*.py`` (each has ``run() -> dict``);
``python -m benchmarks counting`` runs ``bench_counting`` only. The machine is shared and noisy:
only ratios measured in the same run travel between machines.
"""
