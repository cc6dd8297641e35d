"""Near-duplicate documents: K-shingles, MinHash and LSH banding (Broder 1997).

* A document is the *set* of its shingles: its runs of ``k`` consecutive words (or characters).
  The resemblance of two documents is the Jaccard similarity of their sets,
  ``J(A, B) = |A & B| / |A | B|``.
* MinHash: for a random permutation ``pi`` of the shingle universe,
  ``P(min pi(A) = min pi(B)) = J(A, B)``. With ``k`` independent hash functions standing in for
  permutations, the share of agreeing minima estimates ``J`` with standard error
  ``sqrt(J (1 - J) / k)`` (a binomial proportion). The hashes here are
  ``h_i(x) = (a_i x + b_i) mod p`` with ``p = 2^31 - 1`` over 31-bit shingle ids.
* LSH banding: cut the ``k = b r`` signature rows into ``b`` bands of ``r``; two documents are
  candidates if they agree on every row of at least one band, which happens with probability
  ``1 - (1 - J^r)^b``: an S-curve with its threshold near ``(1/b)^(1/r)``.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PRIME = (1 << 31) - 1


def shingles(tokens: Sequence[str] | str, k: int = 3) -> set[str]:
    """The set of ``k``-shingles: runs of ``k`` consecutive tokens joined by a space (a string
    gives character shingles). A document shorter than ``k`` is one shingle."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if isinstance(tokens, str):
        text = tokens
        return {text[i:i + k] for i in range(max(len(text) - k + 1, 1))} if text else set()
    toks = list(tokens)
    if not toks:
        return set()
    return {" ".join(toks[i:i + k]) for i in range(max(len(toks) - k + 1, 1))}


def jaccard(a: set, b: set) -> float:
    """``|a & b| / |a | b|`` (1 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def shingle_ids(shingle_set: set[str]) -> np.ndarray:
    """Stable 31-bit ids of shingles (CRC-32, the same on every machine and run)."""
    return np.array(sorted({zlib.crc32(s.encode("utf-8")) % PRIME for s in shingle_set}), dtype=np.int64)


@dataclass(frozen=True)
class MinHashConfig:
    """``n_hashes`` hash functions ``(a x + b) mod p``, drawn with ``seed``."""

    n_hashes: int = 128
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.n_hashes, bool) or not isinstance(self.n_hashes, int) or self.n_hashes < 1:
            raise ValueError(f"n_hashes must be an int >= 1, got {self.n_hashes!r}")


class MinHasher:
    """MinHash signatures: ``signature(ids)[i] = min_x (a_i x + b_i) mod p``.

    Example:
        >>> h = MinHasher(MinHashConfig(n_hashes=4, seed=0))
        >>> s = h.signature(shingle_ids(shingles("a b c d".split(), 2)))
        >>> s.shape, bool((s == h.signature(shingle_ids({"a b", "b c", "c d"}))).all())
        ((4,), True)
    """

    def __init__(self, config: MinHashConfig | None = None):
        self.config = config or MinHashConfig()
        rng = np.random.default_rng(self.config.seed)
        self.a = rng.integers(1, PRIME, size=self.config.n_hashes, dtype=np.int64)
        self.b = rng.integers(0, PRIME, size=self.config.n_hashes, dtype=np.int64)

    def signature(self, ids: np.ndarray) -> np.ndarray:
        """The signature of one set of shingle ids (``[n_hashes]`` int64). An empty set gets
        ``p`` in every row (it agrees only with another empty set)."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return np.full(self.config.n_hashes, PRIME, dtype=np.int64)
        if ids.min() < 0 or ids.max() >= PRIME:
            raise ValueError(f"shingle ids must lie in 0..{PRIME - 1} (see shingle_ids)")
        return ((self.a[:, None] * ids[None, :] + self.b[:, None]) % PRIME).min(axis=1)

    def signatures(self, sets: Sequence[np.ndarray]) -> np.ndarray:
        """Signatures of many sets: ``[n_sets, n_hashes]``."""
        return np.stack([self.signature(s) for s in sets]) if len(sets) else np.zeros((0, self.config.n_hashes), np.int64)


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """The share of rows where two signatures agree: MinHash's estimate of ``J``."""
    sig_a, sig_b = np.asarray(sig_a), np.asarray(sig_b)
    if sig_a.shape != sig_b.shape or sig_a.ndim != 1:
        raise ValueError(f"signatures must be 1-D of the same length, got {sig_a.shape}, {sig_b.shape}")
    return float((sig_a == sig_b).mean())


def standard_error(j: float | np.ndarray, n_hashes: int) -> float | np.ndarray:
    """The standard error of the MinHash estimate: ``sqrt(J (1 - J) / k)``."""
    return np.sqrt(np.asarray(j) * (1 - np.asarray(j)) / n_hashes)


def candidate_probability(j: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """The probability that a pair with Jaccard ``j`` shares at least one band: ``1 - (1 - j^r)^b``."""
    return 1.0 - (1.0 - np.asarray(j, dtype=float) ** rows) ** bands


def lsh_candidates(signatures: np.ndarray, bands: int, rows: int) -> set[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, that agree on every row of at least one band.

    Raises:
        ValueError: if ``bands * rows`` is not the signature length.
    """
    sig = np.asarray(signatures)
    if sig.ndim != 2 or bands * rows != sig.shape[1]:
        raise ValueError(f"bands * rows = {bands} * {rows} must equal the signature length {sig.shape[-1]}")
    pairs: set[tuple[int, int]] = set()
    for band in range(bands):
        buckets: dict[bytes, list[int]] = defaultdict(list)
        part = np.ascontiguousarray(sig[:, band * rows:(band + 1) * rows])
        for i in range(sig.shape[0]):
            buckets[part[i].tobytes()].append(i)
        for members in buckets.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    pairs.add((members[x], members[y]))
    return pairs


def perturb(tokens: Sequence[str], rate: float, filler: Sequence[str], rng: np.random.Generator) -> list[str]:
    """A near-duplicate: each token is, with probability ``rate``, deleted, replaced by a word
    of ``filler``, or followed by an inserted one (a third of the edits each)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must lie in [0, 1], got {rate}")
    out = []
    for t in tokens:
        if rng.random() >= rate:
            out.append(t)
            continue
        op = rng.integers(3)
        if op == 1:
            out.append(filler[rng.integers(len(filler))])
        elif op == 2:
            out += [t, filler[rng.integers(len(filler))]]
    return out


def near_duplicate_set(documents: Sequence[Sequence[str]], n_sources: int, copies: int = 2,
                       rates: Sequence[float] = (0.02, 0.05, 0.1, 0.2), seed: int = 0):
    """A synthetic near-duplicate collection: ``n_sources`` documents, each with ``copies``
    edited copies (:func:`perturb`, an edit rate drawn from ``rates``), plus as many untouched
    other documents as distractors. Returns ``(docs, source)``: ``source[i]`` is the index of
    the original a document was made from (pairs with the same source are the true
    near-duplicates)."""
    docs_in = [list(d) for d in documents]
    if len(docs_in) < 2 * n_sources:
        raise ValueError(f"need at least {2 * n_sources} documents, got {len(docs_in)}")
    rng = np.random.default_rng(seed)
    pick = rng.permutation(len(docs_in))[:2 * n_sources]
    filler = [w for d in docs_in[:200] for w in d] or ["x"]
    docs, source = [], []
    for s, i in enumerate(pick[:n_sources]):
        docs.append(docs_in[i])
        source.append(s)
        for _ in range(copies):
            docs.append(perturb(docs_in[i], float(rng.choice(rates)), filler, rng))
            source.append(s)
    for s, i in enumerate(pick[n_sources:], start=n_sources):
        docs.append(docs_in[i])
        source.append(s)
    return docs, np.array(source)


def precision_recall(found: set[tuple[int, int]], truth: set[tuple[int, int]]) -> tuple[float, float]:
    """``(precision, recall)`` of found pairs against the true pairs (1.0 for an empty set)."""
    tp = len(found & truth)
    return (tp / len(found) if found else 1.0), (tp / len(truth) if truth else 1.0)


__all__ = [
    "PRIME",
    "MinHashConfig",
    "MinHasher",
    "candidate_probability",
    "estimate_jaccard",
    "jaccard",
    "lsh_candidates",
    "near_duplicate_set",
    "perturb",
    "precision_recall",
    "shingle_ids",
    "shingles",
    "standard_error",
]
