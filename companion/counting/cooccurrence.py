"""Word-word co-occurrence counts: how often each word appears near each other word.

Harris (1954) and Firth (1957): words that occur in similar contexts have similar meanings. The
simplest "context" of a word is the words within ``window`` positions of it, in the same
sentence. The result is a sparse ``|V| x |V|`` matrix (Brown: ~50k types, under 1 % non-zero).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import scipy.sparse as sp


@dataclass
class Cooccurrence:
    """A co-occurrence matrix and its words.

    Attributes:
        matrix: ``[|V|, |V|]`` CSR; ``matrix[i, j]`` = (weighted) count of word j near word i.
        words: row/column ``i`` is ``words[i]``.
        index: word -> row.
        counts: each word's frequency in the corpus.
    """

    matrix: sp.csr_matrix
    words: list[str]
    index: dict[str, int]
    counts: np.ndarray

    def row(self, word: str) -> np.ndarray:
        """The dense count vector of ``word``."""
        if word not in self.index:
            raise KeyError(f"{word!r} is not in this co-occurrence vocabulary ({len(self.words)} words)")
        return self.matrix[self.index[word]].toarray().ravel()


def cooccurrence_matrix(sentences: Sequence[Sequence[str]], window: int = 2, *, vocab: Sequence[str] | None = None,
                        min_count: int = 1, max_size: int | None = None, weighting: str = "uniform",
                        symmetric: bool = True) -> Cooccurrence:
    """Count, for every word, the words within ``window`` positions of it in the same sentence.

    Args:
        sentences: lists of tokens.
        window: how many positions on each side count as context (>= 1).
        vocab: the words to keep (rows and columns, in this order); default: words seen at least
            ``min_count`` times, most frequent first, at most ``max_size`` of them.
        weighting: ``"uniform"`` (every position counts 1) or ``"harmonic"`` (1/distance, as GloVe).
        symmetric: count left and right contexts (else only the words to the right).

    Words outside the vocabulary keep their positions (they are not squeezed out) but are not counted.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an int >= 1, got {window!r}")
    if weighting not in ("uniform", "harmonic"):
        raise ValueError(f"weighting must be 'uniform' or 'harmonic', got {weighting!r}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
    if isinstance(sentences, (str, bytes)) or not len(sentences):
        raise ValueError("sentences must be a non-empty list of token lists")
    for i, s in enumerate(sentences[:1000]):
        if isinstance(s, (str, bytes)) or not isinstance(s, (list, tuple)):
            raise TypeError(f"sentence {i} must be a list of str tokens, got {type(s).__name__}")
    flat = list(chain.from_iterable(sentences))
    freq = Counter(flat)
    if vocab is None:
        words = sorted((w for w, c in freq.items() if c >= min_count), key=lambda w: (-freq[w], w))
        if max_size is not None:
            words = words[:max_size]
    else:
        if isinstance(vocab, Mapping):
            raise TypeError("vocab must be a list of words (its order gives the rows)")
        words = list(getattr(vocab, "itos", vocab))
        if len(set(words)) != len(words):
            raise ValueError("vocab has repeated words")
    if not words:
        raise ValueError("the vocabulary is empty: lower min_count or pass vocab")
    index = {w: i for i, w in enumerate(words)}
    get = index.get
    ids = np.fromiter((get(w, -1) for w in flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    sent = np.repeat(np.arange(len(sentences)), lengths)
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        left, right = ids[:-d], ids[d:]
        ok = (left >= 0) & (right >= 0) & (sent[:-d] == sent[d:])
        w = 1.0 if weighting == "uniform" else 1.0 / d
        rows.append(left[ok])
        cols.append(right[ok])
        vals.append(np.full(int(ok.sum()), w))
        if symmetric:
            rows.append(right[ok])
            cols.append(left[ok])
            vals.append(np.full(int(ok.sum()), w))
    v = len(words)
    m = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(v, v)).tocsr()
    m.sum_duplicates()
    counts = np.array([freq.get(w, 0) for w in words], dtype=np.int64)
    return Cooccurrence(m, words, index, counts)
