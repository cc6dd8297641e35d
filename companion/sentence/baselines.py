"""Chapter 5's baselines: sentence vectors with no training of their own.

* :class:`BagOfWords` -- counts (or TF-IDF weights) of the words of a fitted vocabulary: a
  sparse, very high-dimensional vector that knows which words occur and nothing else.
* :class:`AveragedVectors` -- the mean of the sentence's word vectors (any ``(vectors, vocab)``
  pair: Part I's skip-gram/fastText, or GloVe 6B 50d from
  :func:`companion.data.load_glove_6b_50d`).
* :class:`SIF` -- "smooth inverse frequency" (Arora, Liang & Ma 2017, *A simple but tough-to-beat
  baseline for sentence embeddings*): each word weighted by ``a / (a + p(w))``, then the
  projection on the first principal component of all sentence vectors ("the common discourse
  vector", mostly syntax and frequent words) removed.

Every encoder has ``encode(list[str]) -> Tensor [n, d]``, the signature of the SentEval-style
harness (:func:`companion.evaluate.senteval`); sentences are tokenised with the book's
:func:`companion.data.tokenize`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch

from ..checks import check_texts as _check_sentences
from ..data.text import tokenize

__all__ = [
    "SIF",
    "AveragedVectors",
    "BagOfWords",
    "first_component",
    "remove_component",
    "sif_weights",
    "word_probabilities",
]

Tokenizer = Callable[[str], list[str]]


def _as_matrix(vectors) -> torch.Tensor:
    v = torch.as_tensor(np.asarray(vectors) if not isinstance(vectors, torch.Tensor) else vectors)
    if v.dim() != 2 or v.shape[0] < 1 or v.shape[1] < 1:
        raise ValueError(f"vectors must be a 2-D matrix [V, d], got shape {tuple(v.shape)}")
    return v.float()


def _as_index(vocab: Sequence[str] | Mapping[str, int], n_rows: int) -> dict[str, int]:
    index = dict(vocab) if isinstance(vocab, Mapping) else {w: i for i, w in enumerate(vocab)}
    if isinstance(vocab, Sequence) and len(vocab) != n_rows:
        raise ValueError(f"vocab has {len(vocab)} words but vectors has {n_rows} rows; pass one word per row")
    if index and max(index.values()) >= n_rows:
        raise ValueError(f"vocab maps a word to row {max(index.values())} but vectors has {n_rows} rows")
    return index


# --------------------------------------------------------------------------- bag of words
class BagOfWords:
    """Counts or TF-IDF weights over the words seen in :meth:`fit`.

    TF-IDF follows scikit-learn's defaults (so a test can compare): ``tf`` is the raw count,
    ``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` (the "smooth" idf: as if one extra document held
    every word, so no division by zero), and each row is L2-normalised.

    Args:
        weighting: ``"count"``, ``"binary"`` or ``"tfidf"``.
        min_df: keep words in at least this many fitted sentences.
        max_features: keep at most this many words (the most frequent ones).
        tokenizer: ``str -> list[str]`` (default :func:`companion.data.tokenize`).
    """

    WEIGHTINGS = ("count", "binary", "tfidf")

    def __init__(self, weighting: str = "tfidf", *, min_df: int = 1, max_features: int | None = None,
                 tokenizer: Tokenizer = tokenize) -> None:
        if weighting not in self.WEIGHTINGS:
            raise ValueError(f"weighting must be one of {self.WEIGHTINGS}, got {weighting!r}")
        if not isinstance(min_df, int) or min_df < 1:
            raise ValueError(f"min_df must be a positive int, got {min_df!r}")
        if max_features is not None and (not isinstance(max_features, int) or max_features < 1):
            raise ValueError(f"max_features must be a positive int or None, got {max_features!r}")
        self.weighting, self.min_df, self.max_features, self.tokenizer = weighting, min_df, max_features, tokenizer
        self.index: dict[str, int] | None = None
        self.idf: torch.Tensor | None = None

    def fit(self, sentences: Sequence[str]) -> BagOfWords:
        """Build the vocabulary (and the idf) from ``sentences``; returns ``self``."""
        _check_sentences(sentences)
        if not sentences:
            raise ValueError("fit needs at least one sentence")
        df: Counter[str] = Counter()
        tf: Counter[str] = Counter()
        for s in sentences:
            toks = self.tokenizer(s)
            tf.update(toks)
            df.update(set(toks))
        words = [w for w in df if df[w] >= self.min_df]
        words.sort(key=lambda w: (-tf[w], w))
        if self.max_features is not None:
            words = words[: self.max_features]
        if not words:
            raise ValueError(f"no word occurs in >= {self.min_df} sentences; lower min_df")
        words.sort()  # alphabetical columns, as scikit-learn
        self.index = {w: i for i, w in enumerate(words)}
        n = len(sentences)
        dfs = torch.tensor([df[w] for w in words], dtype=torch.float64)
        self.idf = (torch.log((1 + n) / (1 + dfs)) + 1).float()
        return self

    @property
    def dim(self) -> int:
        if self.index is None:
            raise RuntimeError("call fit(sentences) before using the encoder")
        return len(self.index)

    def encode(self, sentences: Sequence[str]) -> torch.Tensor:
        """``[n, |V|]`` float32 rows (dense: fine for the harness's batches of ~128)."""
        _check_sentences(sentences)
        out = torch.zeros(len(sentences), self.dim)
        assert self.index is not None and self.idf is not None
        for i, s in enumerate(sentences):
            for w, c in Counter(self.tokenizer(s)).items():
                j = self.index.get(w)
                if j is not None:
                    out[i, j] = 1.0 if self.weighting == "binary" else float(c)
        if self.weighting == "tfidf":
            out = out * self.idf
            out = out / out.norm(dim=1, keepdim=True).clamp(min=1e-12)
        return out

    __call__ = encode


# --------------------------------------------------------------------------- averaged vectors
class AveragedVectors:
    """The (optionally weighted) mean of a sentence's word vectors.

    Words missing from ``vocab`` are skipped; a sentence with no known word gets the zero
    vector (the harness needs a finite row for every sentence).

    Args:
        vectors: ``[V, d]`` word vectors (tensor or array).
        vocab: the words of the rows (a list) or a ``word -> row`` mapping.
        weights: optional ``word -> weight`` (e.g. :func:`sif_weights`); missing words weigh 1.
        tokenizer: ``str -> list[str]``; GloVe is lower-cased, as is the default tokenizer.
        device: where the vectors live and the means are computed.
    """

    def __init__(self, vectors, vocab: Sequence[str] | Mapping[str, int], *,
                 weights: Mapping[str, float] | None = None, tokenizer: Tokenizer = tokenize,
                 device: str | torch.device = "cpu") -> None:
        self.vectors = _as_matrix(vectors).to(device)
        self.index = _as_index(vocab, self.vectors.shape[0])
        self.weights = dict(weights) if weights is not None else None
        self.tokenizer = tokenizer
        self.device = torch.device(device)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def _ids_weights(self, sentence: str) -> tuple[list[int], list[float]]:
        ids, ws = [], []
        for w in self.tokenizer(sentence):
            j = self.index.get(w)
            if j is not None:
                ids.append(j)
                ws.append(1.0 if self.weights is None else float(self.weights.get(w, 1.0)))
        return ids, ws

    def encode(self, sentences: Sequence[str]) -> torch.Tensor:
        """``[n, d]`` float32 means on ``device``."""
        _check_sentences(sentences)
        ids, ws, rows = [], [], []
        for i, s in enumerate(sentences):
            a, b = self._ids_weights(s)
            ids += a
            ws += b
            rows += [i] * len(a)
        out = torch.zeros(len(sentences), self.dim, device=self.device)
        if ids:
            # one gather + one scatter-add: sum_w weight_w v_w per sentence, then / number of words
            ids_t = torch.tensor(ids, device=self.device)
            w_t = torch.tensor(ws, device=self.device).unsqueeze(1)
            rows_t = torch.tensor(rows, device=self.device)
            out.index_add_(0, rows_t, self.vectors[ids_t] * w_t)
            n = torch.zeros(len(sentences), device=self.device).index_add_(0, rows_t, torch.ones(len(ids), device=self.device))
            out = out / n.clamp(min=1).unsqueeze(1)
        return out

    __call__ = encode


# --------------------------------------------------------------------------- SIF
def word_probabilities(texts: Sequence[str] | Sequence[Sequence[str]], tokenizer: Tokenizer = tokenize) -> dict[str, float]:
    """Unigram probabilities ``p(w) = count(w) / total`` from raw sentences or token lists."""
    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(tokenizer(t) if isinstance(t, str) else t)
    total = sum(counts.values())
    if total == 0:
        raise ValueError("word_probabilities needs at least one token")
    return {w: c / total for w, c in counts.items()}


def sif_weights(probs: Mapping[str, float], a: float = 1e-3) -> dict[str, float]:
    """Arora et al.'s weight ``a / (a + p(w))`` per word: ~1 for rare words, small for frequent.

    Why this form: in their generative model a word is emitted either from the sentence's
    discourse vector or, with probability related to ``alpha``, just for being frequent; the MAP
    estimate of the discourse vector weights each word by ``a / (a + p(w))``.
    """
    if not (isinstance(a, (int, float)) and a > 0 and math.isfinite(a)):
        raise ValueError(f"a must be a positive number (the paper uses 1e-3 .. 1e-4), got {a!r}")
    for w, p in probs.items():
        if not (0 <= p <= 1):
            raise ValueError(f"p({w!r}) = {p} is not a probability")
    return {w: a / (a + p) for w, p in probs.items()}


def first_component(X: torch.Tensor, iters: int = 100, seed: int = 0) -> torch.Tensor:
    """The first right singular vector of ``X [n, d]`` (unit norm), by power iteration on ``X^T X``.

    Uncentred, as Arora et al.'s code (``TruncatedSVD``): the common component includes the mean.
    """
    if X.dim() != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be a non-empty [n, d] matrix, got shape {tuple(X.shape)}")
    C = X.double().t() @ X.double()  # [d, d]: cheap, d is small
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(C.shape[0], generator=g, dtype=torch.float64).to(C.device)
    u = u / u.norm()
    for _ in range(iters):
        v = C @ u
        nv = v.norm()
        if nv == 0:  # X is all zeros: no direction to remove
            return torch.zeros(C.shape[0], dtype=X.dtype, device=X.device)
        v = v / nv
        if torch.allclose(v, u, atol=1e-12, rtol=0):
            u = v
            break
        u = v
    return u.to(X.dtype)


def remove_component(X: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """``X - (X u) u^T``: every row's projection on the unit vector ``u`` removed."""
    return X - (X @ u).unsqueeze(1) * u.unsqueeze(0)


class SIF:
    """Arora et al.'s SIF embedding: weighted average, then the common component removed.

    :meth:`fit` computes the first principal component of the weighted averages of the given
    sentences (the paper uses the sentences to be embedded; we fit on a training corpus so that
    unseen sentences are embedded the same way); :meth:`encode` removes it.

    Args:
        vectors, vocab: word vectors and their words (as :class:`AveragedVectors`).
        probs: ``word -> p(w)`` (:func:`word_probabilities` on a corpus); words without a
            probability get weight 1 (treated as rare).
        a: the smoothing parameter (paper: 1e-3 to 1e-4 works best).
        remove: remove the first principal component (set ``False`` for weighting only).
    """

    def __init__(self, vectors, vocab: Sequence[str] | Mapping[str, int], probs: Mapping[str, float], *,
                 a: float = 1e-3, remove: bool = True, tokenizer: Tokenizer = tokenize,
                 device: str | torch.device = "cpu") -> None:
        self.average = AveragedVectors(vectors, vocab, weights=sif_weights(probs, a), tokenizer=tokenizer, device=device)
        self.remove = remove
        self.component: torch.Tensor | None = None

    @property
    def dim(self) -> int:
        return self.average.dim

    def fit(self, sentences: Sequence[str]) -> SIF:
        """Compute the common component from ``sentences``; returns ``self``."""
        _check_sentences(sentences)
        if not sentences:
            raise ValueError("fit needs at least one sentence")
        self.component = first_component(self.average.encode(sentences))
        return self

    def encode(self, sentences: Sequence[str]) -> torch.Tensor:
        X = self.average.encode(sentences)
        if not self.remove:
            return X
        if self.component is None:
            raise RuntimeError("call fit(sentences) first (or SIF(..., remove=False))")
        return remove_component(X, self.component)

    __call__ = encode
