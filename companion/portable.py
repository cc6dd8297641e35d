"""Outputs that every machine reproduces: the book's rule for the digits a stored output shows.

CI runs every notebook under nbval, which compares each stored output with a fresh one *exactly*
(after the substitutions of ``tests/nbval_sanitize.cfg``), and readers' CPUs differ from the one
that stored the outputs. The BLAS and oneDNN kernels a CPU selects (AVX-512, AVX2, SSE) sum in
different orders, so the same computation agrees across machines only to a few units in the
last place: float64 results of BLAS-dependent computations to about 1e-12 relative, float32
reductions (torch's default) only to about 1e-6. One example: on a CPU with AVX2 but no AVX-512
a glued Zipf slope stored as ``-1.0842612027128136`` came out as ``-1.084261202712814``, and a
float32 difference printed as ``4.8e-07`` came out as ``3.6e-07``.

The rule, checked on every compared output and glue record by
``tests/test_notebook_float_digits.py``:

1. A compared output never shows a float with more than :data:`MAX_DIGITS` significant
   digits. Six keeps a wide margin for float64 results (stable to about twelve); a float32
   result should show fewer (four), which the test cannot tell apart, but
   ``make check-portable`` can: it re-runs the notebooks on other kernels.
2. A difference or error near machine precision is not a number worth printing: print it
   against a threshold (:func:`below`), ``"< 1e-05"``.

Glue values are rounded (:func:`round_digits`) before they are stored; the prose formats them
further. A value that is genuinely machine-dependent goes into a cell tagged
``nbval-ignore-output``, and a rounded form of it is also shown where a reader sees it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

#: the most significant digits a compared output may show in one float
MAX_DIGITS = 6

#: a float as it appears in output text: a decimal point or an exponent (an integer is exact),
#: with optional thousands separators; not part of a longer word, version string or name
FLOAT_PATTERN = re.compile(
    r"(?<![\w.])[-+]?"
    r"(?:\d{1,3}(?:,\d{3})+\.\d*|\d+\.\d*|\.\d+|\d+(?=[eE][-+]?\d))"
    r"(?:[eE][-+]?\d+)?"
    r"(?![\w.]|\.\d)"
)

#: words that say a number is a difference or an error between two computations
_DIFFERENCE_WORDS = re.compile(r"differ|diff\b|error|deviat|discrepan|mismatch|max abs", re.IGNORECASE)
#: below this magnitude a difference is rounding noise, not a result
NOISE_LEVEL = 1e-4


def significant_digits(token: str) -> int:
    """How many significant digits the float literal ``token`` shows.

    Leading zeros do not count; trailing zeros after the decimal point do (``1.000000`` claims
    seven digits), except Python's ``x.0`` for an integral float, whose digits count up to its
    last nonzero one (``200000.0`` shows one, ``13190.0`` four).

    >>> [significant_digits(t) for t in ("-1.0842612027128136", "4.8e-07", "1.000000", "200000.0")]
    [17, 2, 7, 1]
    """
    mantissa = re.split(r"[eE]", token.strip().lstrip("+-"))[0].replace(",", "")
    if re.fullmatch(r"\d+\.0", mantissa):
        mantissa = mantissa[:-2].rstrip("0")
    digits = mantissa.replace(".", "").lstrip("0")
    return max(len(digits), 1)


def excess_digits(text: str, max_digits: int = MAX_DIGITS) -> list[str]:
    """The float literals in ``text`` with more than ``max_digits`` significant digits."""
    return [m.group() for m in FLOAT_PATTERN.finditer(text) if significant_digits(m.group()) > max_digits]


def noisy_differences(text: str, level: float = NOISE_LEVEL) -> list[str]:
    """Lines of ``text`` that print a difference or an error as a nonzero number below ``level``
    (rounding noise that changes with the CPU), instead of against a threshold."""
    found = []
    for line in text.splitlines():
        if not _DIFFERENCE_WORDS.search(line):
            continue
        for m in FLOAT_PATTERN.finditer(line):
            before = line[: m.start()].rstrip()
            if before.endswith(("<", "≤", "<=", ">", "≥", ">=")) or re.search(r"\b[ar]?tol\W*$", before):
                continue  # a threshold, not a measurement
            value = float(m.group().replace(",", ""))
            if 0 < abs(value) < level:
                found.append(line.strip())
                break
    return found


def round_digits(x: float, digits: int = MAX_DIGITS) -> float:
    """``x`` rounded to ``digits`` significant digits (a glue value, a number in a table).

    >>> round_digits(-1.0842612027128136)
    -1.08426
    """
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits - 1}e}")


def short(x: float, digits: int = MAX_DIGITS) -> str:
    """``repr(x)`` when it shows at most ``digits`` significant digits, else ``x`` to ``digits``
    significant digits (``format(x, ".6g")``): a number in a message.

    >>> short(0.5), short(2 / 7)
    ('0.5', '0.285714')
    """
    x = float(x)
    text = repr(x)
    return text if significant_digits(text) <= digits else format(x, f".{digits}g")


def below(value: float, threshold: float) -> str:
    """A difference printed against a threshold: ``"< 1e-05"`` when ``|value| < threshold``,
    else the value itself to two digits with what it failed (so a stored output changes,
    and nbval fails, exactly when the difference outgrows the threshold).

    >>> below(3.6e-07, 1e-5), below(0.002, 1e-5)
    ('< 1e-05', '0.002 (not < 1e-05)')
    """
    value = float(value)
    if abs(value) < threshold:
        return f"< {threshold:.0e}"
    return f"{value:.2g} (not < {threshold:.0e})"


# --------------------------------------------------------------------------- another CPU's kernels

#: environment that makes this CPU pick the kernels of a lesser one: OpenBLAS (numpy's and
#: scipy's), torch's own vectorised ATen kernels, MKL (torch's BLAS), oneDNN (torch's LSTMs and
#: convolutions), and numpy's own SIMD loops (its ``log10``, ``exp``, sums)
KERNEL_LEVELS = {
    "avx2": {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "DNNL_MAX_CPU_ISA": "AVX2", "NPY_DISABLE_CPU_FEATURES": "X86_V4"},
    "sse": {"OPENBLAS_CORETYPE": "Nehalem", "ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
            "DNNL_MAX_CPU_ISA": "SSE41", "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4"},
}

_PROBE = r"""
import json, re, numpy as np, scipy.linalg, threadpoolctl, torch
a = torch.randn(64, 64); a @ a  # MKL says which instructions it uses (MKL_VERBOSE=1)
torch.nn.LSTM(8, 8)(torch.randn(3, 1, 8))  # so does oneDNN (ONEDNN_VERBOSE=1)
feats = np._core._multiarray_umath.__cpu_features__
print("PROBE" + json.dumps({
    "OpenBLAS": "/".join(sorted({d["architecture"] for d in threadpoolctl.threadpool_info()
                                 if d.get("internal_api") == "openblas"})),
    "torch ATen": torch.backends.cpu.get_cpu_capability(),
    "numpy SIMD": next((k for k in ("X86_V4", "X86_V3", "X86_V2") if feats.get(k)), "baseline"),
}))
"""


def kernels(env: dict[str, str] | None = None) -> dict[str, str]:
    """Which kernel family each numerical library picks on this CPU under ``env`` (added to this
    process's environment), as reported by the libraries themselves, in a fresh interpreter."""
    import os
    import subprocess
    import sys

    full = {**os.environ, **(env or {}), "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, capture_output=True, text=True, check=True).stdout
    import json

    found = json.loads(next(line[5:] for line in out.splitlines() if line.startswith("PROBE")))
    mkl = re.search(r"MKL_VERBOSE oneMKL.*?\(Intel\(R\) ([^)]+)\)", out)
    dnnl = re.search(r"onednn_verbose,.*?isa:([^,\n]+)", out)
    found["MKL"] = mkl.group(1) if mkl else "?"
    found["oneDNN"] = dnnl.group(1).strip() if dnnl else "?"
    return found


def _cut(text: str, width: int = 23) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def main(argv: list[str] | None = None) -> int:
    """``python -m companion.portable [--level auto|avx2|sse] [--jobs N] [notebooks...]``: the
    notebooks under nbval at ``BOOK_SCALE=ci`` with this CPU's kernels swapped for a lesser CPU's
    (``auto``: AVX2 on an AVX-512 machine, else SSE), after the stored-digits test. Stored outputs
    that pass here and under ``make test-notebooks`` do not depend on the CPU's kernels."""
    import argparse
    import os
    import subprocess
    import sys

    parser = argparse.ArgumentParser(prog="python -m companion.portable", description=main.__doc__)
    parser.add_argument("--level", choices=("auto", *KERNEL_LEVELS), default="auto")
    parser.add_argument("--jobs", "-n", default="2")
    parser.add_argument("notebooks", nargs="*", default=["notebooks"])
    args = parser.parse_args(argv)

    now = kernels()
    level = args.level if args.level != "auto" else ("avx2" if now["torch ATen"].upper().startswith("AVX512") else "sse")
    env = KERNEL_LEVELS[level]
    swapped = kernels(env)
    print(f"kernels: {'library':<12} {'this CPU':<24} under --level {level}")
    for lib in now:
        print(f"         {lib:<12} {_cut(now[lib]):<24} {_cut(swapped[lib])}")
    if swapped == now:
        print(f"--level {level} changes no library's kernels on this CPU: try another level", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parents[1]
    print("\n=== stored outputs show only stable digits (tests/test_notebook_float_digits.py)", flush=True)
    rc = subprocess.call([sys.executable, "-m", "pytest", "tests/test_notebook_float_digits.py", "-q", "-rfE",
                          "-p", "no:randomly", "-p", "no:cacheprovider"], cwd=root)
    print(f"\n=== nbval at BOOK_SCALE=ci with {' '.join(f'{k}={v}' for k, v in env.items())}", flush=True)
    rc_nb = subprocess.call(
        [sys.executable, "-m", "pytest", "--nbval", *args.notebooks, "--nbval-sanitize-with",
         "tests/nbval_sanitize.cfg", "--nbval-current-env", "--nbval-cell-timeout=600", "-q",
         "-p", "no:randomly", *(["-n", args.jobs, "--dist", "loadfile"] if args.jobs not in ("0", "1") else [])],
        cwd=root, env={**os.environ, "BOOK_SCALE": "ci", **env})
    return rc or rc_nb


if __name__ == "__main__":
    raise SystemExit(main())
