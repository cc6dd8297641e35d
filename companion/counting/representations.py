"""The oldest ways to turn words and documents into vectors: one-hot, bag of words, TF-IDF.

Documents are lists of tokens; a vocabulary is a list of words (``Vocab.itos`` works) or a
dict word -> column. Document-term matrices are ``scipy.sparse`` CSR: with tens of thousands of
word types, almost every entry is 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp


def _index(vocab: Sequence[str] | Mapping[str, int]) -> dict[str, int]:
    if isinstance(vocab, str):
        raise TypeError("vocab must be a list of words or a dict word -> column, not a string")
    if hasattr(vocab, "stoi") and not isinstance(vocab, Mapping):
        vocab = vocab.stoi
    if isinstance(vocab, Mapping):
        index = dict(vocab)
        cols = sorted(index.values())
        if cols != list(range(len(cols))):
            raise ValueError("a vocab dict must map words to the columns 0..len-1, each once")
        return index
    index = {}
    for w in vocab:
        if not isinstance(w, str):
            raise TypeError(f"vocabulary words must be str, got {type(w).__name__}: {w!r}")
        if w in index:
            raise ValueError(f"the word {w!r} is twice in the vocabulary")
        index[w] = len(index)
    if not index:
        raise ValueError("the vocabulary is empty")
    return index


def build_vocab(documents: Iterable[Sequence[str]], min_count: int = 1, max_size: int | None = None) -> list[str]:
    """Words seen at least ``min_count`` times, most frequent first (ties: alphabetical)."""
    from collections import Counter

    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
    counts = Counter()
    for d in _check_docs(documents):
        counts.update(d)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return words[:max_size] if max_size is not None else words


def _check_docs(documents) -> list:
    if isinstance(documents, (str, bytes)):
        raise TypeError("documents must be a list of token lists, got one string; tokenize it first")
    docs = list(documents)
    for i, d in enumerate(docs):
        if isinstance(d, (str, bytes)) or not isinstance(d, (list, tuple)):
            raise TypeError(f"document {i} must be a list of str tokens, got {type(d).__name__}")
    return docs


def one_hot(tokens: Sequence[str], vocab: Sequence[str] | Mapping[str, int], *, unknown: str = "error") -> np.ndarray:
    """One row per token with a single 1 in the token's column: ``[len(tokens), |V|]`` floats.

    Args:
        tokens: the words.
        vocab: the columns.
        unknown: ``"error"`` (raise on a word outside ``vocab``) or ``"zeros"`` (an all-zero row).

    Example:
        >>> one_hot(["b", "a"], ["a", "b", "c"]).tolist()
        [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    if unknown not in ("error", "zeros"):
        raise ValueError(f"unknown must be 'error' or 'zeros', got {unknown!r}")
    if isinstance(tokens, str):
        raise TypeError("tokens must be a list of words, not a string")
    index = _index(vocab)
    out = np.zeros((len(tokens), len(index)))
    for i, w in enumerate(tokens):
        j = index.get(w)
        if j is None:
            if unknown == "error":
                raise KeyError(f"{w!r} is not in the vocabulary; add it, or pass unknown='zeros'")
            continue
        out[i, j] = 1.0
    return out


def bag_of_words(documents: Iterable[Sequence[str]], vocab: Sequence[str] | Mapping[str, int], *,
                 binary: bool = False) -> sp.csr_matrix:
    """Document-term counts ``[n_docs, |V|]`` (sparse); words outside ``vocab`` are ignored.

    Example:
        >>> bag_of_words([["a", "b", "a"], ["c"]], ["a", "b", "c"]).toarray().tolist()
        [[2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    docs = _check_docs(documents)
    index = _index(vocab)
    rows, cols = [], []
    for i, d in enumerate(docs):
        js = [index[w] for w in d if w in index]
        cols.extend(js)
        rows.extend([i] * len(js))
    m = sp.coo_matrix((np.ones(len(cols)), (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                      shape=(len(docs), len(index))).tocsr()
    m.sum_duplicates()
    if binary:
        m.data[:] = 1.0
    return m


def tfidf(counts: sp.spmatrix | np.ndarray, *, smooth: bool = True, sublinear_tf: bool = False,
          norm: str | None = "l2") -> sp.csr_matrix:
    """TF-IDF weights of a document-term count matrix (scikit-learn's conventions).

    ``idf(t) = ln((1 + N) / (1 + df(t))) + 1`` with ``smooth`` (else ``ln(N / df(t)) + 1``);
    ``tf`` is the count, or ``1 + ln(count)`` with ``sublinear_tf``; each row is then scaled to
    unit length (``norm="l2"``), unit sum (``"l1"``) or left alone (``None``).
    """
    if norm not in ("l2", "l1", None):
        raise ValueError(f"norm must be 'l2', 'l1' or None, got {norm!r}")
    m = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"counts must be a non-empty 2-D documents x terms matrix, got shape {m.shape}")
    if m.nnz and m.data.min() < 0:
        raise ValueError("counts must be >= 0")
    m.eliminate_zeros()
    n_docs = m.shape[0]
    df = np.bincount(m.indices, minlength=m.shape[1])
    if smooth:
        idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
    else:
        with np.errstate(divide="ignore"):
            idf = np.where(df > 0, np.log(n_docs / np.maximum(df, 1)) + 1.0, 0.0)
    if sublinear_tf:
        m.data = 1.0 + np.log(m.data)
    m.data *= idf[m.indices]
    if norm is not None:
        if norm == "l2":
            size = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        else:
            size = np.asarray(abs(m).sum(axis=1)).ravel()
        size[size == 0] = 1.0
        m = sp.csr_matrix(sp.diags(1.0 / size) @ m)
    return m
