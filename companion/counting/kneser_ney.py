"""Interpolated Kneser-Ney and modified Kneser-Ney (Chen & Goodman 1998), as KenLM builds them.

Two ideas. (1) *Absolute discounting*: take a fixed amount D off every seen count and give the
freed mass to the lower order: ``P(w | c) = (a(c w) - D) / Σ_v a(c v) + γ(c) P(w | c')`` with
``γ(c) = D · N1+(c ·) / Σ_v a(c v)``. (2) *Continuation counts*: a lower-order distribution is
only used when the longer context failed, so it should say how many different contexts a word
completes, not how often it occurs: for every order below n, ``a(g)`` is the number of distinct
words seen just before ``g`` (N1+(· g)), except for n-grams that start with ``<s>`` (nothing
can precede ``<s>``), which keep their counts. The n-th order uses plain counts.

*Interpolated KN* uses one discount per order, ``D = n1 / (n1 + 2 n2)`` (n_r: how many n-grams of
that order have adjusted count r). *Modified KN* uses three, for adjusted counts 1, 2 and 3+
(Chen & Goodman's eq. 26): ``D_r = r - (r + 1) Y n_{r+1} / n_r`` with ``Y = n1 / (n1 + 2 n2)``.
The unigram level is interpolated with the uniform distribution over every predicted symbol,
so the unknown symbol gets ``γ / |V'|`` even if never seen: exactly KenLM's ``lmplz`` (the peer
tests reproduce its ARPA probabilities and its perplexities).

Why NLTK's ``KneserNeyInterpolated`` (nltk 3.10) gives other numbers: it uses one fixed
discount (0.1 unless told otherwise) for every order and count instead of estimating D1, D2,
D3+ from the data; its lowest order is the continuation distribution with no uniform floor, so
a word unseen in training (``<UNK>`` included) gets probability 0 and the perplexity of any text
with one is infinite; it pads with ``n - 1`` copies of both ``<s>`` and ``</s>``
(``padded_everygram_pipeline``) and predicts the padding; and it recomputes each continuation
count by scanning all n-grams of the next order at every query -- about 10 ms per token on a
2,000-sentence sample of Brown, tens of ms on all of it, where ours scores a token in well
under a microsecond.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .lm import InterpolatedLM
from .ngram import BOS_ID, EOS_ID, UNK_ID, NGramCounts

FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)  # KenLM's --discount_fallback defaults for D1, D2, D3+


def adjusted_counts(counts: NGramCounts, k: int) -> np.ndarray:
    """Kneser-Ney's counts for the table of order ``k``: raw counts for the highest order and
    for n-grams starting with ``<s>``; otherwise the number of distinct words seen before."""
    table = counts.tables[k - 1]
    if k == counts.order:
        return table.counts.copy()
    a = np.bincount(counts.tables[k].suffix, minlength=len(table)).astype(np.int64)
    starts = table.first == BOS_ID
    a[starts] = table.counts[starts]
    return a


def count_of_counts(a: np.ndarray, up_to: int = 4) -> np.ndarray:
    """``n[r]`` = how many n-grams have adjusted count r, for r = 0..up_to (n[0] unused)."""
    return np.bincount(np.minimum(a, up_to + 1), minlength=up_to + 2)[: up_to + 1]


def kenlm_last_suffixes(counts: NGramCounts) -> dict[int, int]:
    """The rows (per order below n) that KenLM's ``lmplz`` counts with their *raw* count when it
    collects the count-of-counts for the discounts.

    ``lmplz`` (adjust_counts.cc, as of kenlm 0.3.0) walks the n-grams in suffix order and, at
    the very end, flushes the pending lower-order n-grams -- the suffixes of the last n-gram --
    into the statistics with their actual counts instead of their adjusted ones. That shifts
    one n-gram per order between the n_r's (on Brown: the unigram "iliad", adjusted count 1,
    raw count 5, so KenLM's unigram n1 is one lower). Its vocabulary ids follow first appearance.
    """
    n = counts.order
    if n < 2:
        return {}
    v = len(counts.vocab)
    rank = counts.first_seen_rank()
    kid = np.where(np.arange(v) == BOS_ID, 1, np.where(np.arange(v) == EOS_ID, 2, rank + 3))
    kid[UNK_ID] = 0
    table = counts.tables[n - 1]
    # words of every n-gram of the highest order, last word first (lexsort's primary key is its last)
    cols = []
    rows = np.arange(len(table))
    for k in range(n, 0, -1):
        t = counts.tables[k - 1]
        cols.append(kid[t.keys[rows] % v])
        rows = t.keys[rows] // v
    last = int(np.lexsort(tuple(reversed(cols)))[-1])
    out = {}
    row = last
    for k in range(n - 1, 0, -1):
        row = int(counts.tables[k].suffix[row])
        out[k] = row
    return out


def modified_discounts(n: Sequence[int]) -> tuple[float, float, float] | None:
    """Chen & Goodman's D1, D2, D3+ from count-of-counts ``n[1..4]``; None if undefined/out of range."""
    n1, n2, n3, n4 = (float(x) for x in n[1:5])
    if min(n1, n2, n3) <= 0:  # as KenLM: n4 may be 0 (then D3+ = 3)
        return None
    y = n1 / (n1 + 2 * n2)
    d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    if any(not 0 <= x <= r for r, x in enumerate(d, start=1)):
        return None
    return d


def single_discount(n: Sequence[int]) -> float | None:
    """Ney's ``D = n1 / (n1 + 2 n2)``; None if there are no singletons."""
    n1, n2 = float(n[1]), float(n[2])
    return None if n1 <= 0 else n1 / (n1 + 2 * n2)


class KneserNey(InterpolatedLM):
    """Interpolated Kneser-Ney: one discount per order (estimated, or given).

    Args:
        counts: n-gram counts.
        discount: ``None`` to estimate ``D = n1 / (n1 + 2 n2)`` per order, or one number in (0, 1]
            for every order, or one per order (unigrams first).
        order: use orders 1..order of ``counts`` only.
    """

    name = "KN"

    def __init__(self, counts: NGramCounts, discount: float | Sequence[float] | None = None,
                 order: int | None = None) -> None:
        super().__init__(counts, order)
        self.discounts = self._discounts(discount)
        self._setup()

    # one row of (D1, D2, D3+) per order
    def _discounts(self, discount) -> np.ndarray:
        out = np.zeros((self.order, 3))
        fallback = []
        for k in range(1, self.order + 1):
            if discount is None:
                d = single_discount(count_of_counts(adjusted_counts(self.counts, k)))
                if d is None:
                    d = FALLBACK_DISCOUNTS[0]
                    fallback.append(k)
            else:
                d = discount if np.ndim(discount) == 0 else _per_order(discount, self.order)[k - 1]
                if isinstance(d, bool) or not np.isfinite(d) or not 0 < d <= 1:
                    raise ValueError(f"a Kneser-Ney discount must be in (0, 1], got {d!r}")
            out[k - 1] = d
        _warn_fallback(fallback)
        return out

    def _level(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        a = adjusted_counts(self.counts, k).astype(np.float64)
        d = np.concatenate([[0.0], self.discounts[k - 1]])[np.minimum(a, 3).astype(np.int64)]
        denom = self._context_sums(k, a)
        taken = self._context_sums(k, d)
        table = self.counts.tables[k - 1]
        ctx = np.zeros(len(table), dtype=np.int64) if k == 1 else table.context
        with np.errstate(invalid="ignore", divide="ignore"):
            num = np.where(a > 0, (a - d) / denom[ctx], 0.0)
            gamma = np.where(denom > 0, taken / denom, 1.0)
        return num, gamma

    def __repr__(self) -> str:
        d = ", ".join(f"{x:.3f}" for x in self.discounts[:, 0])
        return f"{type(self).__name__}(order={self.order}, D=[{d}], |V|={len(self.vocab):,})"


class ModifiedKneserNey(KneserNey):
    """Modified Kneser-Ney (Chen & Goodman): discounts D1, D2, D3+ per order, as KenLM's lmplz.

    Args:
        counts: n-gram counts.
        discounts: ``None`` to estimate them (Chen & Goodman's eq. 26; if the data make them
            undefined, e.g. no n-gram seen exactly 3 times, KenLM's fallback 0.5/1/1.5 is used
            with a warning), or ``(D1, D2, D3+)`` for every order, or one triple per order.
        order: use orders 1..order of ``counts`` only.
        kenlm_compat: estimate the discounts with lmplz's end-of-stream quirk (see
            :func:`kenlm_last_suffixes`): the discounts, hence every probability, then equal
            KenLM's to float precision. Off by default; the difference is one n-gram per order.
    """

    name = "modified KN"

    def __init__(self, counts: NGramCounts, discounts: Sequence[float] | Sequence[Sequence[float]] | None = None,
                 order: int | None = None, *, kenlm_compat: bool = False) -> None:
        InterpolatedLM.__init__(self, counts, order)
        self.kenlm_compat = bool(kenlm_compat)
        self.discounts = self._modified(discounts)
        self._setup()

    def _modified(self, discounts) -> np.ndarray:
        out = np.zeros((self.order, 3))
        fallback = []
        given = None
        if discounts is not None:
            arr = np.asarray(discounts, dtype=np.float64)
            if arr.shape == (3,):
                given = np.tile(arr, (self.order, 1))
            elif arr.shape == (self.order, 3):
                given = arr
            else:
                raise ValueError(f"discounts must be (D1, D2, D3+) or one such triple per order "
                                 f"(shape ({self.order}, 3)), got shape {arr.shape}")
            for k, row in enumerate(given, start=1):
                if not all(np.isfinite(x) and 0 <= x <= r for r, x in enumerate(row, start=1)):
                    raise ValueError(f"order {k}: need 0 <= D1 <= 1, 0 <= D2 <= 2, 0 <= D3+ <= 3, got {row.tolist()}")
        raw_rows = kenlm_last_suffixes(self.counts) if self.kenlm_compat and given is None else {}
        for k in range(1, self.order + 1):
            if given is not None:
                out[k - 1] = given[k - 1]
                continue
            a = adjusted_counts(self.counts, k)
            if k in raw_rows:
                a[raw_rows[k]] = self.counts.tables[k - 1].counts[raw_rows[k]]
            d = modified_discounts(count_of_counts(a))
            if d is None:
                d = FALLBACK_DISCOUNTS
                fallback.append(k)
            out[k - 1] = d
        _warn_fallback(fallback)
        return out

    def __repr__(self) -> str:
        d = "; ".join("/".join(f"{x:.3f}" for x in row) for row in self.discounts)
        return f"ModifiedKneserNey(order={self.order}, D1/D2/D3+=[{d}], |V|={len(self.vocab):,})"


def _per_order(values, order: int) -> list[float]:
    vals = [float(x) for x in values]
    if len(vals) != order:
        raise ValueError(f"give one discount per order (unigrams first): expected {order}, got {len(vals)}")
    return vals


def _warn_fallback(orders: list[int]) -> None:
    if orders:
        warnings.warn(f"Kneser-Ney discounts are undefined for orders {orders} on this data (too few "
                      f"n-grams seen once, twice, three or four times); using {FALLBACK_DISCOUNTS} as "
                      "KenLM's --discount_fallback does. Is the corpus tiny or artificial?",
                      stacklevel=3)
