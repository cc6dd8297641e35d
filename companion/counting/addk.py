"""Add-k (Lidstone) smoothing, and add-one (Laplace) as its k = 1 case.

``P(w | c) = (C(c w) + k) / (C(c) + k |V'|)`` where ``|V'|`` counts every symbol the model
predicts (the words, ``</s>`` and the unknown symbol; not ``<s>``). The context is the last
``n - 1`` tokens of the sentence so far; a context never seen in training gives the uniform
distribution (add-k never looks at shorter contexts). This is NLTK's ``nltk.lm.Lidstone`` /
``Laplace`` (the peer tests check it to 1e-9), given the same n-grams and vocabulary: NLTK's
own ``padded_everygram_pipeline`` pads with ``n - 1`` copies of ``<s>`` *and* ``</s>`` and puts
``<s>`` in the vocabulary, so its numbers on raw text differ slightly.
"""

from __future__ import annotations

import math

import numpy as np

from .lm import NGramLM, take
from .ngram import BOS_ID, EncodedText, NGramCounts


class AddK(NGramLM):
    """Add-k smoothed n-gram model.

    Args:
        counts: n-gram counts.
        k: the pseudo-count added to every n-gram (> 0); k = 1 is Laplace's add-one.
        order: use orders 1..order of ``counts`` only.

    Example:
        >>> lm = AddK.fit([["a", "b"]], order=2, k=1.0)   # |V'| = 4: </s>, <unk>, a, b
        >>> lm.prob("b", ["a"])                          # (1 + 1) / (1 + 4)
        0.4
    """

    name = "add-k"

    def __init__(self, counts: NGramCounts, k: float = 1.0, order: int | None = None) -> None:
        super().__init__(counts, order)
        if isinstance(k, bool) or not isinstance(k, (int, float, np.floating)) or not math.isfinite(k) or k <= 0:
            raise ValueError(f"k must be a positive finite number (1 = add-one), got {k!r}; "
                             "use MLE for no smoothing")
        self.k = float(k)
        # C(c) per context row, for every order (order 1: the one empty context)
        self._ctx_total = [np.array([float(self.counts.n_tokens)])]
        for n in range(2, self.order + 1):
            table = self.counts.tables[n - 1]
            self._ctx_total.append(np.bincount(table.context, weights=table.counts.astype(np.float64),
                                               minlength=len(self.counts.tables[n - 2])))

    def counts_at(self, text: EncodedText) -> tuple[np.ndarray, np.ndarray]:
        """``(C(c w), C(c))`` for every predicted token of ``text`` (independent of k: tuning reuses them)."""
        h = self.counts.lookup(text)
        at = text.predicted
        used = np.minimum(text.pos[at] + 1, self.order)  # the context stops at the sentence start
        c_gram = np.zeros(len(at))
        c_ctx = np.zeros(len(at))
        for n in range(1, self.order + 1):
            sel = np.flatnonzero(used == n)
            if not len(sel):
                continue
            where = at[sel]
            if n == 1:
                c_gram[sel] = self.counts.tables[0].counts[text.ids[where]]
                c_ctx[sel] = self.counts.n_tokens
                continue
            c_gram[sel] = take(self.counts.tables[n - 1].counts, h[n - 1][where], 0.0)
            c_ctx[sel] = take(self._ctx_total[n - 1], h[n - 2][where - 1], 0.0)
        return c_gram, c_ctx

    def _token_probs(self, text: EncodedText) -> np.ndarray:
        c_gram, c_ctx = self.counts_at(text)
        return (c_gram + self.k) / (c_ctx + self.k * self.vocab.n_predictable)

    def _next_probs(self, context: list[int]) -> np.ndarray:
        v = len(self.vocab)
        n_ctx = len(context)
        follow = np.zeros(v)
        total = float(self.counts.n_tokens)
        if n_ctx == 0:
            follow[:] = self.counts.tables[0].counts
        else:
            # row of the whole context in the table of its length
            row = context[0]
            for j, w in enumerate(context[1:], start=2):
                row = int(self.counts.tables[j - 1].find(np.array([row * v + w]))[0])
                if row < 0:
                    break
            if row < 0:
                total = 0.0
            else:
                table = self.counts.tables[n_ctx]
                sl = table.followers(row)
                follow[table.keys[sl] % v] = table.counts[sl]
                total = float(self._ctx_total[n_ctx][row])
        p = (follow + self.k) / (total + self.k * self.vocab.n_predictable)
        p[BOS_ID] = 0.0
        return p

    def __repr__(self) -> str:
        return f"AddK(order={self.order}, k={self.k:g}, |V|={len(self.vocab):,})"


class Laplace(AddK):
    """Add-one smoothing: :class:`AddK` with k = 1."""

    name = "add-1"

    def __init__(self, counts: NGramCounts, order: int | None = None) -> None:
        super().__init__(counts, k=1.0, order=order)
