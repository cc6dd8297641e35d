"""Speed and quality against peers, printed as ratios in one run.

``python -m benchmarks`` runs every ``benchmarks/bench_*.py`` (each has ``run() -> dict``);
``python -m benchmarks counting`` runs ``bench_counting`` only. The machine is shared and noisy:
only ratios measured in the same run travel between machines.
"""

import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), for the machine line of a stored result."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
