"""Reading ARPA files (the text format of n-gram models, written by KenLM, SRILM, ...) and
comparing one with our model, n-gram by n-gram.

An ARPA file lists, for every n-gram g it stores, ``log10 P(last word | the others)`` and, for
n-grams that are contexts, a back-off weight ``log10 γ(g)``; an n-gram it does not store is
scored by backing off: ``P(w | c) = γ(c) P(w | c')``. For an interpolated model (ours, KenLM's)
both numbers are exactly :meth:`~companion.counting.lm.InterpolatedLM.ngram_probs` and
:meth:`~companion.counting.lm.InterpolatedLM.backoffs`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .ngram import BOS


@dataclass
class ArpaOrder:
    """The n-grams of one order of an ARPA file."""

    ngrams: list[tuple[str, ...]]
    log10_prob: np.ndarray
    log10_backoff: np.ndarray  # 0 where the file gives none


def read_arpa(path: str | os.PathLike) -> dict[int, ArpaOrder]:
    """Parse an ARPA file into ``{order: ArpaOrder}``.

    Raises:
        ValueError: if the file does not look like ARPA (no ``\\data\\`` header, wrong counts).
    """
    declared: dict[int, int] = {}
    orders: dict[int, ArpaOrder] = {}
    with open(path, encoding="utf-8") as fh:
        line = fh.readline()
        while line and line.strip() != "\\data\\":
            line = fh.readline()
        if not line:
            raise ValueError(f"{path} is not an ARPA file: no \\data\\ line")
        for line in fh:
            line = line.strip()
            if line.startswith("ngram "):
                n, c = line[6:].split("=")
                declared[int(n)] = int(c)
            elif line.startswith("\\") and line.endswith("-grams:"):
                n = int(line[1:].split("-")[0])
                grams, probs, backs = [], [], []
                for row in fh:
                    row = row.rstrip("\n")
                    if not row.strip():
                        break
                    parts = row.split("\t")
                    grams.append(tuple(parts[1].split(" ")))
                    probs.append(float(parts[0]))
                    backs.append(float(parts[2]) if len(parts) > 2 else 0.0)
                orders[n] = ArpaOrder(grams, np.array(probs), np.array(backs))
            elif line == "\\end\\":
                break
    for n, c in declared.items():
        if n not in orders or len(orders[n].ngrams) != c:
            raise ValueError(f"{path}: the header declares {c} {n}-grams, found "
                             f"{len(orders[n].ngrams) if n in orders else 0}")
    return orders


@dataclass
class ArpaComparison:
    """How far our model is from an ARPA file, per order (absolute differences of log10 values)."""

    n_compared: dict[int, int]
    max_abs_log10_prob: dict[int, float]
    max_abs_log10_backoff: dict[int, float]
    missing_in_model: int  # ARPA n-grams whose words our vocabulary lacks

    @property
    def worst(self) -> float:
        """The largest difference of all (log10 units; 1e-6 is a relative 2.3e-6)."""
        vals = list(self.max_abs_log10_prob.values()) + list(self.max_abs_log10_backoff.values())
        return max(vals) if vals else 0.0


def compare_with_arpa(model, arpa: str | os.PathLike | dict[int, ArpaOrder]) -> ArpaComparison:
    """Score every n-gram of an ARPA file with ``model`` and report the largest differences.

    The unigram ``<s>`` is skipped (ARPA files give it a placeholder: it is never predicted).
    """
    orders = read_arpa(arpa) if not isinstance(arpa, dict) else arpa
    stoi = model.vocab.stoi
    n_cmp, dprob, dback, missing = {}, {}, {}, 0
    for n, od in sorted(orders.items()):
        if n > model.order:
            raise ValueError(f"the ARPA file has {n}-grams; the model stops at order {model.order}")
        keep = [i for i, g in enumerate(od.ngrams) if not (n == 1 and g[0] == BOS)]
        ids = np.array([[stoi[w] for w in od.ngrams[i]] for i in keep], dtype=np.int64).reshape(len(keep), n)
        ok = (ids >= 0).all(axis=1)
        missing += int((~ok).sum())
        ids = ids[ok]
        sel = np.array(keep, dtype=np.int64)[ok]
        ours = np.log10(model.ngram_probs(ids))
        dprob[n] = float(np.max(np.abs(ours - od.log10_prob[sel]))) if len(sel) else 0.0
        if n < model.order:
            back = np.log10(model.backoffs(ids))
            dback[n] = float(np.max(np.abs(back - od.log10_backoff[sel]))) if len(sel) else 0.0
        n_cmp[n] = int(len(sel))
    return ArpaComparison(n_cmp, dprob, dback, missing)
