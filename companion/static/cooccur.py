"""The global co-occurrence matrix GloVe factorises (Pennington et al. 2014).

``X[i, j]`` sums, over every occurrence of word ``i``, a weight for each occurrence of word ``j``
within ``window`` words of it. As in GloVe's ``cooccur.c``:

* the weight of a pair ``d`` words apart is ``1 / d`` (``distance_weighting=True``): "very
  distant word pairs are expected to contain less relevant information";
* the window is symmetric (left and right context), so ``X`` is symmetric;
* windows do not cross a sentence (``cooccur.c``: a line) boundary;
* out-of-vocabulary tokens are removed *before* the windows are formed (``cooccur.c`` skips
  them without counting them as a position), which is what
  :func:`companion.word2vec.encode_corpus` does too.

The counting is vectorised: for each offset ``d = 1..window`` the pairs ``(ids[t], ids[t+d])``
of the whole corpus are one array, and scipy's COO -> CSR conversion sums the duplicates. No
Python loop runs over tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp
import torch

from ..word2vec.corpus import EncodedCorpus, Word2VecVocab, encode_corpus

__all__ = ["Cooccurrence", "cooccurrence_matrix", "cooccurrence_reference", "probability_ratios"]


@dataclass
class Cooccurrence:
    """A co-occurrence matrix with its vocabulary.

    Attributes:
        matrix: ``[V, V]`` float64 ``scipy.sparse.csr_matrix``; ``matrix[i, j] = X_ij``.
        vocab: the :class:`~companion.word2vec.Word2VecVocab` (row ``i`` is ``vocab.itos[i]``).
        window, symmetric, distance_weighting: how it was counted.
    """

    matrix: sp.csr_matrix
    vocab: Word2VecVocab
    window: int
    symmetric: bool
    distance_weighting: bool

    @property
    def nnz(self) -> int:
        """Number of non-zero entries (the training examples of GloVe)."""
        return int(self.matrix.nnz)

    def entries(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The non-zero entries as three tensors ``(i, j, x)``: int64, int64, float64."""
        coo = self.matrix.tocoo()
        return (torch.from_numpy(coo.row.astype(np.int64)), torch.from_numpy(coo.col.astype(np.int64)),
                torch.from_numpy(coo.data.astype(np.float64)))

    def get(self, w1: str, w2: str) -> float:
        """``X[w1, w2]`` by words (0.0 if never together)."""
        s = self.vocab.stoi
        for w in (w1, w2):
            if w not in s:
                raise KeyError(f"{w!r} is not in the vocabulary ({len(self.vocab)} words)")
        return float(self.matrix[s[w1], s[w2]])

    def density(self) -> float:
        """Share of the ``V^2`` cells that are non-zero (GloVe's point: it is tiny)."""
        v = self.matrix.shape[0]
        return self.nnz / float(v * v)


def _check_window(window: int) -> None:
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise ValueError(f"window must be a positive int (GloVe's demo uses 15, word2vec 5), got {window!r}")


def cooccurrence_matrix(
    corpus: EncodedCorpus | Sequence[Sequence[str]],
    window: int = 10,
    *,
    symmetric: bool = True,
    distance_weighting: bool = True,
    min_count: int = 5,
    max_vocab: int | None = None,
) -> Cooccurrence:
    """Count ``X`` over a corpus.

    Args:
        corpus: an :class:`~companion.word2vec.EncodedCorpus` or a list of token lists
            (encoded with ``min_count``/``max_vocab`` then; rarer words are dropped).
        window: context words on each side.
        symmetric: count right contexts too (``cooccur.c -symmetric 1``); if ``False`` only the
            words *before* each word are its context.
        distance_weighting: weight a pair ``d`` apart by ``1/d`` (else 1).

    Returns:
        A :class:`Cooccurrence`.

    Example:
        >>> c = cooccurrence_matrix([["a", "b", "c"]], window=2, min_count=1)
        >>> c.get("a", "c"), c.get("a", "b")
        (0.5, 1.0)
    """
    _check_window(window)
    if not isinstance(corpus, EncodedCorpus):
        corpus = encode_corpus(corpus, min_count=min_count, max_size=max_vocab)
    ids = corpus.ids.cpu().numpy()
    sent = corpus.sentence.cpu().numpy()
    V = len(corpus.vocab)
    total: sp.csr_matrix | None = None
    for d in range(1, window + 1):
        if d >= ids.size:
            break
        same = sent[:-d] == sent[d:]
        left, right = ids[:-d][same], ids[d:][same]
        if left.size == 0:
            continue
        w = np.full(left.size, 1.0 / d if distance_weighting else 1.0)
        # row = word, column = its context word to the left at distance d
        part = sp.coo_matrix((w, (right, left)), shape=(V, V)).tocsr()
        total = part if total is None else total + part
    if total is None:
        total = sp.csr_matrix((V, V), dtype=np.float64)
    if symmetric:
        total = total + total.T.tocsr()
    total = total.tocsr()
    total.sum_duplicates()
    total.sort_indices()
    return Cooccurrence(total, corpus.vocab, window, symmetric, distance_weighting)


def cooccurrence_reference(
    sentences: Sequence[Sequence[int]], window: int, *, symmetric: bool = True, distance_weighting: bool = True
) -> dict[tuple[int, int], float]:
    """A direct, loop-based count (for tests and for reading): ``{(i, j): X_ij}`` over id lists.

    Slow on purpose -- it is the definition, not the implementation.
    """
    _check_window(window)
    out: dict[tuple[int, int], float] = {}
    for s in sentences:
        for t, w in enumerate(s):
            for d in range(1, window + 1):
                if t - d < 0:
                    break
                c = s[t - d]
                x = 1.0 / d if distance_weighting else 1.0
                out[(w, c)] = out.get((w, c), 0.0) + x
                if symmetric:
                    out[(c, w)] = out.get((c, w), 0.0) + x
    return out


def probability_ratios(cooc: Cooccurrence, i: str, j: str, probes: Sequence[str]) -> list[dict[str, float | str]]:
    """The paper's Table 1: ``P(k|i)``, ``P(k|j)`` and their ratio for probe words ``k``.

    ``P(k|i) = X_ik / X_i`` with ``X_i = sum_k X_ik``. A ratio far above 1 means ``k`` is
    related to ``i`` but not ``j`` (ice : solid), far below 1 the reverse (steam : gas), near 1
    related to both or neither (water, fashion): the ratio, not the raw probability, separates
    relevant from irrelevant words -- GloVe's starting point.

    Returns:
        One dict per probe: ``{"k", "P(k|i)", "P(k|j)", "ratio"}`` (ratio ``inf``/``nan`` when a
        probability is 0).
    """
    s = cooc.vocab.stoi
    for w in (i, j, *probes):
        if w not in s:
            raise KeyError(f"{w!r} is not in the vocabulary; pick words seen at least min_count times")
    row_sums = np.asarray(cooc.matrix.sum(axis=1)).ravel()
    out: list[dict[str, float | str]] = []
    for k in probes:
        pi = float(cooc.matrix[s[i], s[k]]) / row_sums[s[i]]
        pj = float(cooc.matrix[s[j], s[k]]) / row_sums[s[j]]
        ratio = pi / pj if pj > 0 else (float("inf") if pi > 0 else float("nan"))
        out.append({"k": k, "P(k|i)": pi, "P(k|j)": pj, "ratio": ratio})
    return out
