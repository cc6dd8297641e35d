"""What every n-gram language model of chapter 1 can do: score, measure perplexity, sample.

A model is built from :class:`~companion.counting.ngram.NGramCounts` (``Model(counts, ...)``) or
straight from sentences (``Model.fit(sentences, order, ...)``). Most smoothing methods share one
*interpolated* form, computed from the lowest order up::

    p_1(w)     = num_1(w)     + gamma_1         * 1 / |V'|          (|V'|: every symbol but <s>)
    p_k(w | c) = num_k(c w)   + gamma_k(c)      * p_{k-1}(w | c')   (c' = c without its first word)

``num_k`` is non-zero only for n-grams seen in training, and an unseen context ``c`` has
``gamma_k(c) = 1`` (the model falls back to the shorter context). MLE, Jelinek-Mercer, Kneser-Ney
and modified Kneser-Ney only differ in ``num`` and ``gamma``; add-k is the exception (it never
looks at shorter contexts) and overrides the scoring.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .ngram import BOS, BOS_ID, EOS, EOS_ID, UNK_ID, EncodedText, NGramCounts


def take(values: np.ndarray, rows: np.ndarray, default: float) -> np.ndarray:
    """``values[rows]`` where ``rows >= 0``, ``default`` elsewhere (safe for empty tables)."""
    out = np.full(rows.shape, default, dtype=np.float64)
    hit = rows >= 0
    out[hit] = values[rows[hit]]
    return out


class NGramLM:
    """Base class: an n-gram model over the vocabulary of its counts.

    Args:
        counts: n-gram counts (see :class:`NGramCounts`).
        order: use only orders 1..order of ``counts`` (default: all of them).
    """

    name = "n-gram model"

    def __init__(self, counts: NGramCounts, order: int | None = None) -> None:
        if not isinstance(counts, NGramCounts):
            raise TypeError(f"{type(self).__name__} needs NGramCounts, got {type(counts).__name__}; to start "
                            f"from sentences use {type(self).__name__}.fit(sentences, order)")
        self.counts = counts if order is None or order == counts.order else counts.truncate(order)
        self.order = self.counts.order
        self.vocab = self.counts.vocab

    @classmethod
    def fit(cls, sentences: Sequence[Sequence[str]], order: int, *, vocab=None, unk: str = "<unk>", **params):
        """Count ``sentences`` up to ``order`` and build the model (``params`` go to the constructor)."""
        return cls(NGramCounts(sentences, order, vocab, unk=unk), **params)

    # ------------------------------------------------------------------ subclasses implement
    def _token_probs(self, text: EncodedText) -> np.ndarray:  # pragma: no cover - abstract
        """Probability of every predicted token of ``text``."""
        raise NotImplementedError

    def _next_probs(self, context: list[int]) -> np.ndarray:  # pragma: no cover - abstract
        """Next-token distribution (length |V|, 0 at ``<s>``) after a checked, truncated context."""
        raise NotImplementedError

    # ------------------------------------------------------------------ scoring
    def encode(self, sentences: Sequence[Sequence[str]] | EncodedText) -> EncodedText:
        """Encode sentences once to score them with several models of the same counts."""
        return self.counts.encode(sentences)

    def token_probs(self, sentences: Sequence[Sequence[str]] | EncodedText) -> np.ndarray:
        """Probability of each predicted token (every word and each sentence's ``</s>``), in order."""
        return self._token_probs(self.encode(sentences))

    def token_logprobs(self, sentences: Sequence[Sequence[str]] | EncodedText) -> np.ndarray:
        """Natural log-probability of each predicted token (``-inf`` where the probability is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.token_probs(sentences))

    def log_likelihood(self, sentences: Sequence[Sequence[str]] | EncodedText) -> float:
        """Sum of the natural log-probabilities of the predicted tokens."""
        return float(self.token_logprobs(sentences).sum())

    def cross_entropy(self, sentences: Sequence[Sequence[str]] | EncodedText, base: float = 2.0) -> float:
        """Average negative log-probability per predicted token (bits by default)."""
        text = self.encode(sentences)
        return -self.log_likelihood(text) / text.n_tokens / math.log(base)

    def perplexity(self, sentences: Sequence[Sequence[str]] | EncodedText) -> float:
        """``exp`` of the average negative log-probability per predicted token.

        Tokens are the words plus one ``</s>`` per sentence (as KenLM's ``query`` counts them);
        ``<s>`` is context only. Infinite if some token has probability 0 (e.g. MLE on unseen text).
        """
        text = self.encode(sentences)
        ll = self.log_likelihood(text)
        return math.exp(-ll / text.n_tokens) if math.isfinite(ll) else math.inf

    # ------------------------------------------------------------------ one context at a time
    def _context_ids(self, context: Sequence[str] | Sequence[int] | str | None) -> list[int]:
        if context is None:
            return []
        if isinstance(context, str):
            raise TypeError("give the context as a list of words, e.g. ['<s>', 'the'], not a string")
        ids = self.counts._ids(context)
        for i, w in enumerate(ids):
            if w == EOS_ID:
                raise ValueError(f"the context contains {EOS!r}: a sentence ends there, nothing follows it")
            if w == BOS_ID and i != 0:
                raise ValueError(f"{BOS!r} may only open the context (it marks the sentence start), "
                                 f"found it at position {i}")
        keep = self.order - 1
        return ids[len(ids) - keep:] if keep > 0 else []

    def next_distribution(self, context: Sequence[str] | Sequence[int] | None = None) -> np.ndarray:
        """P(next token | context) over the vocabulary ids (0 at ``<s>``; sums to 1).

        Args:
            context: the preceding words (or ids); start it with ``"<s>"`` for a sentence start.
                Only the last ``order - 1`` are used.
        """
        return self._next_probs(self._context_ids(context))

    def prob(self, word: str | int, context: Sequence[str] | Sequence[int] | None = None) -> float:
        """P(word | context); an unknown word is scored as the unknown symbol."""
        (w,) = self.counts._ids([word])
        if w == BOS_ID:
            raise ValueError(f"{BOS!r} is never predicted (it only marks where a sentence starts)")
        return float(self.next_distribution(context)[w])

    def logprob(self, word: str | int, context: Sequence[str] | Sequence[int] | None = None) -> float:
        """Natural log of :meth:`prob`."""
        p = self.prob(word, context)
        return math.log(p) if p > 0 else -math.inf

    def ngram_probs(self, ngrams: Sequence[Sequence[str]] | np.ndarray) -> np.ndarray:
        """P(last word | the words before it) for each n-gram (rows of words or of ids).

        All rows must have the same length (<= order); ``<s>`` may only open a row.
        """
        ids = self._ngram_matrix(ngrams)
        return np.array([self._next_probs(list(map(int, row[:-1])))[row[-1]] for row in ids])

    def _ngram_matrix(self, ngrams) -> np.ndarray:
        if isinstance(ngrams, np.ndarray) and ngrams.dtype.kind in "iu":
            ids = ngrams.astype(np.int64)
            if ids.ndim != 2 or ids.size and (ids.min() < 0 or ids.max() >= len(self.vocab)):
                raise ValueError(f"an id matrix must be 2-D with ids in 0..{len(self.vocab) - 1}")
        else:
            rows = [self.counts._ids(g) for g in ngrams]
            if len({len(r) for r in rows}) > 1:
                raise ValueError("all n-grams must have the same length; group them by order")
            ids = np.array(rows, dtype=np.int64).reshape(len(rows), -1)
        if ids.shape[1] < 1 or ids.shape[1] > self.order:
            raise ValueError(f"n-grams must have 1..{self.order} words, got {ids.shape[1]}")
        if (ids[:, 1:] == BOS_ID).any() or (ids[:, -1] == BOS_ID).any() or (ids[:, :-1] == EOS_ID).any():
            raise ValueError(f"{BOS!r} may only open an n-gram and {EOS!r} only close it")
        return ids

    def top_next(self, context: Sequence[str] | Sequence[int] | None = None, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` most probable next tokens with their probabilities."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        p = self.next_distribution(context)
        top = np.argsort(-p, kind="stable")[:k]
        return [(self.vocab.itos[i], float(p[i])) for i in top]

    def generate(self, prompt: str | Sequence[str] | None = None, max_words: int = 30, *, temperature: float = 1.0,
                 seed: int = 0, allow_unk: bool = False) -> list[str]:
        """Sample a continuation of ``prompt`` (see :func:`companion.counting.generate.sample`)."""
        from .generate import sample

        return sample(self, prompt, max_words, temperature=temperature, seed=seed, allow_unk=allow_unk)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(order={self.order}, |V|={len(self.vocab):,})"


class InterpolatedLM(NGramLM):
    """A model of the interpolated form ``p_k = num_k + gamma_k * p_{k-1}`` (see the module doc).

    Subclasses implement :meth:`_level`; this class turns the levels into fast scoring.
    """

    def _setup(self) -> None:
        """Compute ``num``/``gamma`` for every order (call at the end of ``__init__``)."""
        self._num: list[np.ndarray] = []
        self._gamma: list[np.ndarray] = []
        for k in range(1, self.order + 1):
            num, gamma = self._level(k)
            self._num.append(np.asarray(num, dtype=np.float64))
            self._gamma.append(np.asarray(gamma, dtype=np.float64))
        uniform = 1.0 / self.vocab.n_predictable
        p1 = self._num[0] + self._gamma[0][0] * uniform
        p1[BOS_ID] = 0.0
        self._p1 = p1

    def _level(self, k: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """``(num_k per row of table k, gamma_k per row of table k-1)``; gamma 1 for unseen contexts."""
        raise NotImplementedError

    def _context_sums(self, k: int, weights: np.ndarray) -> np.ndarray:
        """Sum of ``weights`` over the rows of table k that share a context (one value per row of table k-1)."""
        n_ctx = 1 if k == 1 else len(self.counts.tables[k - 2])
        table = self.counts.tables[k - 1]
        ctx = np.zeros(len(table), dtype=np.int64) if k == 1 else table.context
        return np.bincount(ctx, weights=weights, minlength=n_ctx)

    def _token_probs(self, text: EncodedText) -> np.ndarray:
        h = self.counts.lookup(text)
        at = text.predicted
        p = self._p1[text.ids[at]]
        for k in range(2, self.order + 1):
            p = take(self._num[k - 1], h[k - 1][at], 0.0) + take(self._gamma[k - 1], h[k - 2][at - 1], 1.0) * p
        return p

    def ngram_probs(self, ngrams: Sequence[Sequence[str]] | np.ndarray) -> np.ndarray:
        """P(last word | the words before it) for each n-gram, vectorised (see :meth:`NGramLM.ngram_probs`)."""
        ids = self._ngram_matrix(ngrams)
        rows, width = ids.shape
        v = len(self.vocab)
        # at[m][:, j]: row of the m-gram ending at column j (-1: unseen or does not fit)
        at = {1: ids}
        for m in range(2, width + 1):
            cur = np.full((rows, width), -1, dtype=np.int64)
            prev = at[m - 1]
            for j in range(m - 1, width):
                keys = np.where(prev[:, j - 1] >= 0, prev[:, j - 1] * v + ids[:, j], -1)
                cur[:, j] = self.counts.tables[m - 1].find(keys)
            at[m] = cur
        p = self._p1[ids[:, -1]]
        for k in range(2, width + 1):
            p = take(self._num[k - 1], at[k][:, -1], 0.0) + take(self._gamma[k - 1], at[k - 1][:, -2], 1.0) * p
        return p

    def backoffs(self, contexts: Sequence[Sequence[str]] | np.ndarray) -> np.ndarray:
        """γ(c) for each context c (the weight of the shorter context; 1 for an unseen context):
        the back-off weights of an ARPA file."""
        ids = self._ngram_matrix(contexts) if len(contexts) else np.zeros((0, 1), np.int64)
        width = ids.shape[1]
        if width >= self.order:
            raise ValueError(f"a context of a {self.order}-gram model has at most {self.order - 1} words")
        v = len(self.vocab)
        row = ids[:, 0]
        for j in range(1, width):
            row = self.counts.tables[j].find(np.where(row >= 0, row * v + ids[:, j], -1))
        return take(self._gamma[width], row, 1.0)

    def _context_rows(self, context: list[int]) -> list[int]:
        """rows[m] = row of the last m context words in the table of order m (-1 if unseen)."""
        v = len(self.vocab)
        rows = [0]
        for m in range(1, len(context) + 1):
            row = context[-m]
            for j, w in enumerate(context[len(context) - m + 1:], start=2):
                row = int(self.counts.tables[j - 1].find(np.array([row * v + w]))[0])
                if row < 0:
                    break
            rows.append(row)
        return rows

    def _next_probs(self, context: list[int]) -> np.ndarray:
        p = self._p1.copy()
        rows = self._context_rows(context)
        v = len(self.vocab)
        for m in range(1, len(context) + 1):
            row = rows[m]
            if row < 0:
                break
            k = m + 1
            table = self.counts.tables[k - 1]
            sl = table.followers(row)
            p *= self._gamma[k - 1][row]
            p[table.keys[sl] % v] += self._num[k - 1][sl]
        return p


def unk_share(model: NGramLM, sentences: Sequence[Sequence[str]]) -> float:
    """Share of the predicted tokens of ``sentences`` that the model reads as the unknown symbol."""
    text = model.encode(sentences)
    return float(np.mean(text.ids[text.predicted] == UNK_ID))
