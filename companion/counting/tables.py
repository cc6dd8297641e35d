"""The chapter's tables in one call each: test perplexity per method and order, the memory of
the count tables, build times."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .addk import AddK
from .kneser_ney import KneserNey, ModifiedKneserNey
from .lm import NGramLM
from .mle import MLE
from .ngram import NGramCounts
from .tune import tune_add_k, tune_jelinek_mercer

METHODS = ("MLE", "add-1", "add-k", "interpolated", "KN", "modified KN")
DEFAULT_METHODS = ("add-1", "add-k", "interpolated", "KN", "modified KN")


def build_model(method: str, counts: NGramCounts, order: int, valid=None) -> tuple[NGramLM, dict]:
    """One model by name (see :data:`METHODS`); add-k and interpolated are tuned on ``valid``.

    Returns:
        ``(model, params)`` where ``params`` are the tuned/estimated parameters.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if method in ("add-k", "interpolated") and valid is None:
        raise ValueError(f"{method} is tuned on validation text: pass valid=...")
    if method == "MLE":
        return MLE(counts, order=order), {}
    if method == "add-1":
        return AddK(counts, k=1.0, order=order), {"k": 1.0}
    if method == "add-k":
        res = tune_add_k(counts, valid, order=order)
        return res.model, res.params
    if method == "interpolated":
        res = tune_jelinek_mercer(counts, valid, order=order)
        return res.model, res.params
    if method == "KN":
        lm = KneserNey(counts, order=order)
        return lm, {"D": lm.discounts[:, 0].tolist()}
    lm = ModifiedKneserNey(counts, order=order)
    return lm, {"D1/D2/D3+": lm.discounts.tolist()}


def perplexity_table(train: Sequence[Sequence[str]] | NGramCounts, valid: Sequence[Sequence[str]],
                     test: Sequence[Sequence[str]], orders: Iterable[int] = (2, 3, 4, 5),
                     methods: Iterable[str] = DEFAULT_METHODS, *, vocab=None, return_params: bool = False):
    """Test perplexity of every method at every order, counting the corpus once.

    Args:
        train, valid, test: sentences (``train`` may be counts of order >= max(orders)).
        orders: n-gram orders (columns).
        methods: names from :data:`METHODS` (rows).
        vocab: the vocabulary (see :class:`NGramCounts`).
        return_params: also return ``{(method, n): params}`` (tuned k, EM weights, discounts).

    Returns:
        A DataFrame, methods x orders, of test perplexities (and the params, if asked).
    """
    orders = sorted(set(int(n) for n in orders))
    methods = list(methods)
    if not orders or min(orders) < 1:
        raise ValueError(f"orders must be a non-empty collection of ints >= 1, got {orders}")
    if not methods:
        raise ValueError(f"methods is empty; choose from {', '.join(METHODS)}")
    counts = train if isinstance(train, NGramCounts) else NGramCounts(train, max(orders), vocab)
    if counts.order < max(orders):
        raise ValueError(f"the counts stop at order {counts.order}; need {max(orders)}")
    valid_text, test_text = counts.encode(valid), counts.encode(test)
    table = pd.DataFrame(index=pd.Index(methods, name="method"), columns=pd.Index(orders, name="n"), dtype=float)
    params = {}
    for m in methods:
        for n in orders:
            lm, p = build_model(m, counts, n, valid_text)
            table.loc[m, n] = lm.perplexity(test_text)
            params[(m, n)] = p
    return (table, params) if return_params else table


def count_memory(counts: NGramCounts) -> pd.DataFrame:
    """Per order: distinct n-grams, bytes of our sorted count table, and what a dense array of
    all |V|^n possible n-grams (4-byte counts) would need."""
    v = len(counts.vocab)
    rows = []
    for t in counts.tables:
        rows.append({"n": t.order, "distinct n-grams": len(t), "table MB": t.nbytes / 2**20,
                     "dense |V|^n MB": 4.0 * float(v) ** t.order / 2**20,
                     "share of possible n-grams seen": len(t) / float(v) ** t.order})
    return pd.DataFrame(rows).set_index("n")


def time_build(cls, sentences: Sequence[Sequence[str]], order: int, repeats: int = 1, **params) -> tuple[NGramLM, float]:
    """Build ``cls.fit(sentences, order)`` and return ``(model, best wall time in seconds)``."""
    best = np.inf
    lm = None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        lm = cls.fit(sentences, order, **params)
        best = min(best, time.perf_counter() - t0)
    return lm, float(best)


def kenlm_table(train: Sequence[Sequence[str]], test: Sequence[Sequence[str]], orders: Iterable[int] = (3, 5),
                *, rare: str = "<rare>", discount_fallback: bool = False) -> pd.DataFrame:
    """Ours vs KenLM's ``lmplz``/``query`` (modified Kneser-Ney) on the same text: test perplexity
    and build time per order.

    KenLM reserves ``<unk>``; if the text uses it (Bengio's split does, for rare words), it is
    renamed ``rare`` in what *both* models see, so both have the same vocabulary.
    ``discount_fallback`` lets lmplz use 0.5/1/1.5 where the discounts are undefined (tiny or
    artificial text), as ours does.

    Raises:
        companion.peers.kenlm_build.KenLMUnavailable: if KenLM is not built and cannot be built.
    """
    import tempfile
    from pathlib import Path

    from companion.peers import kenlm_build as K

    K.ensure()

    def rename(sents):
        return [[rare if w == "<unk>" else w for w in s] for s in sents]

    train, test = rename(train), rename(test)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kenlm-table-") as tmp:
        text = K.write_sentences(train, Path(tmp) / "train.txt")
        for n in sorted(set(int(o) for o in orders)):
            run = K.lmplz(text, n, Path(tmp) / f"{n}.arpa", discount_fallback=discount_fallback)
            q = K.query(run.arpa, test)
            t0 = time.perf_counter()
            lm = ModifiedKneserNey(NGramCounts(train, n))
            build = time.perf_counter() - t0
            ours = lm.perplexity(test)
            rows.append({"n": n, "ours": ours, "KenLM": q.perplexity, "relative difference": ours / q.perplexity - 1,
                         "ours build s": build, "KenLM build s": run.seconds})
    return pd.DataFrame(rows).set_index("n")
