"""The class-based bigram model of Brown et al. (1992), a linear mixture of language models, and
a bootstrap over test sentences for comparing two models' perplexities.

``p(w | v) = p(c(w) | c(v)) p(w | c(w))``: the next word's *class* is predicted from the previous
word's class, then the word from its class. With C classes the transition table has C^2 cells
instead of |V|^2, so almost every class bigram of the test text was seen in training. We smooth
the class transitions by interpolated absolute discounting (one discount ``D = n1 / (n1 + 2 n2)``
from the class bigrams' count-of-counts; Ney, Essen & Kneser 1994) towards the class unigram, and
estimate ``p(w | c) = #(w) / #(c)`` by counting (a word is predicted as often as it occurs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .brown_clusters import BrownClusters
from .lm import NGramLM
from .ngram import BOS_ID, EncodedText, NGramCounts


class ClassBigramLM(NGramLM):
    """Brown et al.'s class-based bigram model over the vocabulary of ``counts``.

    Args:
        counts: training counts (order >= 2); only unigrams and bigrams are used.
        clusters: a class per vocabulary id (:class:`BrownClusters`, or an int array). Words
            without a class (-1: never seen in training) share one extra class, uniform inside.
    """

    name = "class-based bigram"

    def __init__(self, counts: NGramCounts, clusters: BrownClusters | np.ndarray) -> None:
        super().__init__(counts, order=2)
        cls = np.asarray(clusters.cluster if isinstance(clusters, BrownClusters) else clusters, dtype=np.int64)
        v = len(self.vocab)
        if cls.shape != (v,):
            raise ValueError(f"need one class per vocabulary id ({v}), got shape {cls.shape}")
        cls = cls.copy()
        k = int(cls.max()) + 1
        if (cls < 0).any():
            cls[cls < 0] = k
            k += 1
        self.cls, self.n_classes = cls, k
        uni = self.counts.table(1).counts.astype(np.float64)  # #(w) as a predicted token
        uni[BOS_ID] = 0.0
        n_c = np.bincount(cls, weights=uni, minlength=k)
        members = np.bincount(np.delete(cls, BOS_ID), minlength=k)
        # p(w | c): counts; a class nobody was seen in (the extra one) is uniform over its words
        self.p_word = np.where(n_c[cls] > 0, uni / np.maximum(n_c[cls], 1e-300), 1.0 / np.maximum(members[cls], 1))
        self.p_word[BOS_ID] = 0.0
        t = self.counts.table(2)
        joint = np.zeros((k, k))
        np.add.at(joint, (cls[t.context], cls[t.word]), t.counts)
        nr = np.bincount(joint.astype(np.int64).ravel(), minlength=3)
        self.discount = float(nr[1] / (nr[1] + 2 * nr[2])) if nr[1] + nr[2] > 0 else 0.5
        # the lower order: class unigram, add-one over the classes that hold predictable words
        can = members > 0
        self.p_class = (n_c + can) / (n_c.sum() + can.sum())
        row = joint.sum(axis=1, keepdims=True)
        seen = (joint > 0).sum(axis=1, keepdims=True)
        d = self.discount
        with np.errstate(invalid="ignore", divide="ignore"):
            trans = np.maximum(joint - d, 0.0) / row + d * seen / row * self.p_class[None, :]
        self.trans = np.where(row > 0, trans, self.p_class[None, :])

    def _token_probs(self, text: EncodedText) -> np.ndarray:
        at = text.predicted
        prev, w = text.ids[at - 1], text.ids[at]
        return self.trans[self.cls[prev], self.cls[w]] * self.p_word[w]

    def _next_probs(self, context: list[int]) -> np.ndarray:
        row = self.trans[self.cls[context[-1]]] if context else self.p_class
        return row[self.cls] * self.p_word


class LinearMixture(NGramLM):
    """``p(w | h) = sum_m lambda_m p_m(w | h)`` over models that share one vocabulary.

    Args:
        models: the models (the counts of the highest-order one encode text).
        weights: mixture weights (positive, summing to 1).
    """

    name = "mixture"

    def __init__(self, models: Sequence[NGramLM], weights: Sequence[float]) -> None:
        models = list(models)
        w = np.asarray(weights, dtype=np.float64)
        if len(models) < 2 or w.shape != (len(models),):
            raise ValueError("give at least two models and one weight per model")
        if (w < 0).any() or not math.isclose(w.sum(), 1.0, rel_tol=1e-9):
            raise ValueError(f"weights must be >= 0 and sum to 1, got {w.tolist()}")
        if any(m.vocab != models[0].vocab for m in models):
            raise ValueError("all models must share one vocabulary (build them from the same counts' vocab)")
        top = max(models, key=lambda m: m.order)
        super().__init__(top.counts)
        self.models, self.weights = models, w

    def _token_probs(self, text: EncodedText) -> np.ndarray:
        return sum(w * m._token_probs(text) for w, m in zip(self.weights, self.models))

    def _next_probs(self, context: list[int]) -> np.ndarray:
        out = 0.0
        for w, m in zip(self.weights, self.models):
            keep = m.order - 1
            out = out + w * m._next_probs(context[len(context) - keep:] if keep > 0 else [])
        return out


def fit_mixture(models: Sequence[NGramLM], valid: Sequence[Sequence[str]], n_iter: int = 50) -> LinearMixture:
    """Mixture weights that maximise the likelihood of ``valid`` (EM, from equal weights)."""
    models = list(models)
    text = models[0].encode(valid)
    probs = np.stack([m._token_probs(text) for m in models])
    w = np.full(len(models), 1.0 / len(models))
    for _ in range(n_iter):
        post = w[:, None] * probs
        post /= np.maximum(post.sum(axis=0, keepdims=True), 1e-300)
        w = post.mean(axis=1)
    return LinearMixture(models, w / w.sum())


def sentence_logprobs(model: NGramLM, sentences: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence: the sum of natural log-probabilities and the number of predicted tokens."""
    text = model.encode(sentences)
    at = text.predicted
    logp = np.log(np.maximum(model._token_probs(text), 1e-300))
    sent = np.cumsum(text.pos == 0) - 1  # sentence index of every position
    ll = np.bincount(sent[at], weights=logp, minlength=text.n_sentences)
    n = np.bincount(sent[at], minlength=text.n_sentences)
    return ll, n


def bootstrap_perplexity_ratio(a: NGramLM, b: NGramLM, sentences: Sequence[Sequence[str]], *,
                               n_boot: int = 1000, seed: int = 0) -> dict[str, float]:
    """``PPL(a) / PPL(b)`` on ``sentences`` and its 95 % bootstrap interval (sentences resampled).

    A ratio below 1 means ``a`` is better; the difference is real at this size when the whole
    interval is below (or above) 1.
    """
    lla, n = sentence_logprobs(a, sentences)
    llb, _ = sentence_logprobs(b, sentences)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(n), size=(n_boot, len(n)))
    ratio = np.exp((llb[idx].sum(axis=1) - lla[idx].sum(axis=1)) / n[idx].sum(axis=1))
    point = float(np.exp((llb.sum() - lla.sum()) / n.sum()))
    lo, hi = np.quantile(ratio, [0.025, 0.975])
    return {"ratio": point, "low": float(lo), "high": float(hi)}
