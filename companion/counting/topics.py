"""Topic models: pLSA by EM (Hofmann 1999) and LDA by collapsed Gibbs sampling (Blei, Ng &
Jordan 2003; Griffiths & Steyvers 2004), written out.

Both explain a document's words as a mixture of ``K`` topics, each a distribution over the
vocabulary: ``p(w | d) = sum_k theta[d, k] * phi[k, w]``.

* **pLSA** fits ``theta`` (one free distribution per training document) and ``phi`` by maximum
  likelihood with EM. E-step: ``r[d, w, k] = theta[d, k] phi[k, w] / sum_j theta[d, j] phi[j, w]``;
  M-step: ``phi[k, w] ~ sum_d n[d, w] r[d, w, k]`` and ``theta[d, k] ~ sum_w n[d, w] r[d, w, k]``.
* **LDA** puts Dirichlet priors on both: ``theta_d ~ Dir(alpha)``, ``phi_k ~ Dir(beta)``. The
  collapsed Gibbs sampler integrates them out and resamples each token's topic from
  ``p(z_i = k | rest) ~ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``, all counts without
  token ``i``.

A corpus here is a list of 1-D int arrays of word ids (:func:`encode`). The sampler's inner loop
is compiled with numba (a dependency of the package); without it the same loop runs in Python.
Held-out evaluation is *document completion*: a test document's ``theta`` is inferred from half
of its tokens (:func:`completion_split`), and the other half is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

try:  # pragma: no cover - numba is a dependency; the fallback keeps the module importable
    from numba import njit
except ImportError:  # pragma: no cover
    def njit(*args, **kwargs):
        return (lambda f: f) if not args or not callable(args[0]) else args[0]


# ------------------------------------------------------------------------------ corpora


def encode(documents: Sequence[Sequence[str]], vocab: Sequence[str]) -> list[np.ndarray]:
    """Each document as an ``int32`` array of word ids; words outside ``vocab`` are dropped."""
    if isinstance(documents, (str, bytes)):
        raise TypeError("documents must be a list of token lists, not a string")
    index = {w: i for i, w in enumerate(vocab)}
    if not index:
        raise ValueError("vocab is empty")
    return [np.array([index[w] for w in d if w in index], dtype=np.int32) for d in documents]


def doc_term(docs: Sequence[np.ndarray], n_words: int) -> sp.csr_matrix:
    """The ``[n_docs, n_words]`` count matrix of encoded documents."""
    rows = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    cols = np.concatenate([np.asarray(d, dtype=np.int64) for d in docs]) if docs else np.zeros(0, int)
    if cols.size and (cols.min() < 0 or cols.max() >= n_words):
        raise ValueError(f"word ids must lie in 0..{n_words - 1}")
    m = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(len(docs), n_words))
    m.sum_duplicates()
    return m


def completion_split(docs: Sequence[np.ndarray], seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Split each document's tokens at random into an observed half and a held-out half."""
    rng = np.random.default_rng(seed)
    seen, held = [], []
    for d in docs:
        perm = rng.permutation(len(d))
        cut = len(d) // 2
        seen.append(np.sort(d[perm[:cut]]))
        held.append(np.sort(d[perm[cut:]]))
    return seen, held


@dataclass
class TopicModel:
    """A fitted topic model.

    Attributes:
        name: ``"pLSA"``, ``"LDA (Gibbs)"``, ...
        phi: ``[K, V]`` topic-word distributions (rows sum to 1).
        theta: ``[D, K]`` topic proportions of the training documents.
        history: the training log-likelihood per iteration (pLSA) or per recorded sweep (LDA).
        alpha: the document-topic prior used for folding in (0 for pLSA).
    """

    name: str
    phi: np.ndarray
    theta: np.ndarray
    history: list[float] = field(default_factory=list)
    alpha: float = 0.0

    @property
    def n_topics(self) -> int:
        return self.phi.shape[0]

    def top_words(self, vocab: Sequence[str], n: int = 10) -> list[list[str]]:
        """The ``n`` most probable words of each topic."""
        if len(vocab) != self.phi.shape[1]:
            raise ValueError(f"vocab has {len(vocab)} words, the model {self.phi.shape[1]}")
        return [[vocab[j] for j in np.argsort(-row, kind="stable")[:n]] for row in self.phi]


def _check_docs(docs: Sequence[np.ndarray], n_words: int) -> list[np.ndarray]:
    if isinstance(docs, (str, bytes)) or len(docs) == 0:
        raise ValueError("docs must be a non-empty list of int arrays (see encode)")
    out = [np.asarray(d, dtype=np.int32) for d in docs]
    for i, d in enumerate(out):
        if d.ndim != 1 or (d.size and (d.min() < 0 or d.max() >= n_words)):
            raise ValueError(f"document {i} must be a 1-D array of word ids in 0..{n_words - 1}")
    return out


def _check_k(n_topics: int) -> None:
    if isinstance(n_topics, bool) or not isinstance(n_topics, int) or n_topics < 1:
        raise ValueError(f"n_topics must be an int >= 1, got {n_topics!r}")


# ------------------------------------------------------------------------------ pLSA


@dataclass(frozen=True)
class PLSAConfig:
    """pLSA's settings: ``n_topics``, EM iterations ``n_iter``, the relative change of the
    log-likelihood that stops early ``tol``, and the ``seed`` of the random start."""

    n_topics: int = 20
    n_iter: int = 100
    tol: float = 1e-6
    seed: int = 0

    def __post_init__(self):
        _check_k(self.n_topics)
        if self.n_iter < 1:
            raise ValueError(f"n_iter must be >= 1, got {self.n_iter}")


def plsa_e_step(theta_rows: np.ndarray, phi_cols: np.ndarray) -> np.ndarray:
    """Responsibilities ``p(z = k | d, w)`` of each non-zero cell: ``theta_rows`` is
    ``theta[d]`` of each cell ``[nnz, K]``, ``phi_cols`` is ``phi[:, w].T`` ``[nnz, K]``."""
    p = theta_rows * phi_cols
    return p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)


def _em(counts: sp.csr_matrix, theta: np.ndarray, phi: np.ndarray, n_iter: int, tol: float,
        update_phi: bool) -> tuple[np.ndarray, np.ndarray, list[float]]:
    coo = counts.tocoo()
    rows, cols, n = coo.row, coo.col, coo.data
    d_of = sp.csr_matrix((np.ones(n.size), (np.arange(n.size), rows)), shape=(n.size, counts.shape[0]))
    w_of = sp.csr_matrix((np.ones(n.size), (np.arange(n.size), cols)), shape=(n.size, counts.shape[1]))
    history: list[float] = []
    for _ in range(n_iter):
        p = theta[rows] * phi[:, cols].T
        s = np.maximum(p.sum(axis=1), 1e-300)
        history.append(float(n @ np.log(s)))
        r = p * (n / s)[:, None]  # expected counts n(d, w) p(z | d, w)
        theta = np.asarray(d_of.T @ r)
        theta /= np.maximum(theta.sum(axis=1, keepdims=True), 1e-300)
        if update_phi:
            phi = np.asarray(w_of.T @ r).T
            phi /= np.maximum(phi.sum(axis=1, keepdims=True), 1e-300)
        if len(history) > 1 and abs(history[-1] - history[-2]) <= tol * abs(history[-2]):
            break
    return theta, phi, history


def fit_plsa(docs: Sequence[np.ndarray], n_words: int, config: PLSAConfig | None = None) -> TopicModel:
    """pLSA by EM on encoded documents (see :func:`encode`); vectorised over non-zero cells."""
    config = config or PLSAConfig()
    counts = doc_term(_check_docs(docs, n_words), n_words)
    rng = np.random.default_rng(config.seed)
    theta = rng.dirichlet(np.ones(config.n_topics), size=counts.shape[0])
    phi = rng.dirichlet(np.ones(n_words), size=config.n_topics)
    theta, phi, hist = _em(counts, theta, phi, config.n_iter, config.tol, update_phi=True)
    return TopicModel("pLSA", phi, theta, hist, 0.0)


def fold_in_plsa(model: TopicModel, docs: Sequence[np.ndarray], n_iter: int = 50, seed: int = 0) -> np.ndarray:
    """``theta`` of new documents by EM with ``phi`` fixed (Hofmann's folding-in)."""
    counts = doc_term(_check_docs(docs, model.phi.shape[1]), model.phi.shape[1])
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.ones(model.n_topics), size=counts.shape[0])
    theta, _, _ = _em(counts, theta, model.phi, n_iter, 0.0, update_phi=False)
    return theta


# ------------------------------------------------------------------------------ LDA


@dataclass(frozen=True)
class LDAConfig:
    """LDA's settings: ``n_topics``; symmetric priors ``alpha`` (document-topic) and ``beta``
    (topic-word); ``n_sweeps`` of the Gibbs sampler over every token; ``seed``."""

    n_topics: int = 20
    alpha: float = 0.1
    beta: float = 0.01
    n_sweeps: int = 200
    seed: int = 0

    def __post_init__(self):
        _check_k(self.n_topics)
        if not (self.alpha > 0 and self.beta > 0):
            raise ValueError(f"alpha and beta must be > 0, got {self.alpha}, {self.beta}")
        if self.n_sweeps < 1:
            raise ValueError(f"n_sweeps must be >= 1, got {self.n_sweeps}")


@njit(cache=True)
def _gibbs(words, docs, z, ndk, nkw, nk, alpha, beta, n_sweeps, seed):  # pragma: no cover - compiled
    np.random.seed(seed)
    n_topics, n_words = nkw.shape
    v_beta = n_words * beta
    p = np.empty(n_topics)
    for _ in range(n_sweeps):
        for i in range(words.shape[0]):
            w, d, k = words[i], docs[i], z[i]
            ndk[d, k] -= 1
            nkw[k, w] -= 1
            nk[k] -= 1
            total = 0.0
            for t in range(n_topics):
                total += (ndk[d, t] + alpha) * (nkw[t, w] + beta) / (nk[t] + v_beta)
                p[t] = total
            u = np.random.random() * total
            k = 0
            while k < n_topics - 1 and p[k] <= u:
                k += 1
            z[i] = k
            ndk[d, k] += 1
            nkw[k, w] += 1
            nk[k] += 1


@njit(cache=True)
def _gibbs_fixed_phi(words, docs, z, ndk, phi, alpha, n_sweeps, burn_in, seed, theta_sum):  # pragma: no cover
    np.random.seed(seed)
    n_topics = phi.shape[0]
    p = np.empty(n_topics)
    for s in range(n_sweeps):
        for i in range(words.shape[0]):
            w, d, k = words[i], docs[i], z[i]
            ndk[d, k] -= 1
            total = 0.0
            for t in range(n_topics):
                total += (ndk[d, t] + alpha) * phi[t, w]
                p[t] = total
            u = np.random.random() * total
            k = 0
            while k < n_topics - 1 and p[k] <= u:
                k += 1
            z[i] = k
            ndk[d, k] += 1
        if s >= burn_in:
            theta_sum += ndk


def _flatten(docs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    words = np.concatenate(docs).astype(np.int64) if docs else np.zeros(0, np.int64)
    which = np.repeat(np.arange(len(docs)), [len(d) for d in docs]).astype(np.int64)
    return words, which


def fit_lda_gibbs(docs: Sequence[np.ndarray], n_words: int, config: LDAConfig | None = None) -> TopicModel:
    """LDA by collapsed Gibbs sampling (Griffiths & Steyvers 2004) on encoded documents.

    The estimates come from the last sample: ``phi[k, w] = (n_kw + beta) / (n_k + V beta)``,
    ``theta[d, k] = (n_dk + alpha) / (n_d + K alpha)``. ``history`` holds the log-likelihood
    ``sum_i log sum_k theta[d_i, k] phi[k, w_i]`` every tenth sweep (and after the last)."""
    config = config or LDAConfig()
    docs = _check_docs(docs, n_words)
    words, which = _flatten(docs)
    if words.size == 0:
        raise ValueError("the documents hold no tokens")
    k_, n_docs = config.n_topics, len(docs)
    rng = np.random.default_rng(config.seed)
    z = rng.integers(0, k_, size=words.size).astype(np.int64)
    ndk = np.zeros((n_docs, k_), dtype=np.int64)
    nkw = np.zeros((k_, n_words), dtype=np.int64)
    np.add.at(ndk, (which, z), 1)
    np.add.at(nkw, (z, words), 1)
    nk = nkw.sum(axis=1)
    history = []
    done = 0
    while done < config.n_sweeps:
        step = min(10, config.n_sweeps - done)
        _gibbs(words, which, z, ndk, nkw, nk, float(config.alpha), float(config.beta), step,
               int(config.seed * 100_003 + done))
        done += step
        phi = (nkw + config.beta) / (nk[:, None] + n_words * config.beta)
        theta = (ndk + config.alpha) / (ndk.sum(axis=1, keepdims=True) + k_ * config.alpha)
        history.append(float(np.log((theta[which] * phi[:, words].T).sum(axis=1)).sum()))
    return TopicModel("LDA (Gibbs)", phi, theta, history, float(config.alpha))


def fold_in_lda(model: TopicModel, docs: Sequence[np.ndarray], n_sweeps: int = 50, burn_in: int = 10,
                seed: int = 0) -> np.ndarray:
    """``theta`` of new documents by Gibbs sampling their topics with ``phi`` fixed, averaged
    over the sweeps after ``burn_in``; the prior ``model.alpha`` (must be > 0)."""
    if model.alpha <= 0:
        raise ValueError("fold_in_lda needs a model with a Dirichlet prior alpha > 0 (use fold_in_plsa for pLSA)")
    if not 0 <= burn_in < n_sweeps:
        raise ValueError(f"need 0 <= burn_in < n_sweeps, got {burn_in}, {n_sweeps}")
    docs = _check_docs(docs, model.phi.shape[1])
    words, which = _flatten(docs)
    rng = np.random.default_rng(seed)
    k_ = model.n_topics
    z = rng.integers(0, k_, size=words.size).astype(np.int64)
    ndk = np.zeros((len(docs), k_), dtype=np.int64)
    np.add.at(ndk, (which, z), 1)
    theta_sum = np.zeros((len(docs), k_), dtype=np.int64)
    _gibbs_fixed_phi(words, which, z, ndk, np.ascontiguousarray(model.phi), float(model.alpha),
                     n_sweeps, burn_in, int(seed), theta_sum)
    n_samples = n_sweeps - burn_in
    lengths = np.array([len(d) for d in docs], dtype=float)[:, None]
    return (theta_sum / n_samples + model.alpha) / (lengths + k_ * model.alpha)


# ------------------------------------------------------------------------------ evaluation


def doc_log_likelihoods(phi: np.ndarray, theta: np.ndarray, docs: Sequence[np.ndarray]) -> np.ndarray:
    """``sum_{w in d} log sum_k theta[d, k] phi[k, w]`` for each document (nats)."""
    if len(docs) != theta.shape[0]:
        raise ValueError(f"{len(docs)} documents but theta has {theta.shape[0]} rows")
    return np.array([float(np.log(np.maximum(theta[i] @ phi[:, d], 1e-300)).sum()) for i, d in enumerate(docs)])


def perplexity(log_likelihoods: np.ndarray, n_tokens: np.ndarray | int) -> float:
    """``exp(-sum log p / sum tokens)``."""
    n = float(np.sum(n_tokens))
    if n <= 0:
        raise ValueError("no tokens to score")
    return float(np.exp(-np.sum(log_likelihoods) / n))


def _top_ids(phi: np.ndarray, n: int) -> np.ndarray:
    return np.argsort(-phi, axis=1, kind="stable")[:, :n]


def _doc_freqs(top: np.ndarray, reference: sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    ref = sp.csc_matrix(reference, dtype=bool).astype(np.float64)
    cols = ref[:, top.ravel()]
    df = np.asarray(cols.sum(axis=0)).ravel().reshape(top.shape)
    co = []
    for k in range(top.shape[0]):
        block = cols[:, k * top.shape[1]:(k + 1) * top.shape[1]]
        co.append((block.T @ block).toarray())
    return df, np.array(co)


def npmi_coherence(phi: np.ndarray, reference: sp.spmatrix, n: int = 10) -> np.ndarray:
    """Each topic's mean normalised PMI (Bouma 2009) over pairs of its ``n`` top words, with
    document co-occurrence in ``reference`` (``[n_docs, V]`` counts). A pair never seen
    together scores -1. Higher is more coherent; in [-1, 1]."""
    top = _top_ids(phi, n)
    df, co = _doc_freqs(top, reference)
    n_docs = reference.shape[0]
    out = []
    for k in range(top.shape[0]):
        vals = []
        for i in range(n):
            for j in range(i + 1, n):
                pij = co[k, i, j] / n_docs
                if pij == 0:
                    vals.append(-1.0)
                elif pij == 1:
                    vals.append(1.0)
                else:
                    pmi = np.log(pij / (df[k, i] / n_docs * df[k, j] / n_docs))
                    vals.append(float(pmi / -np.log(pij)))
        out.append(np.mean(vals))
    return np.array(out)


def umass_coherence(phi: np.ndarray, reference: sp.spmatrix, n: int = 10) -> np.ndarray:
    """Each topic's UMass coherence (Mimno et al. 2011): ``sum_{m > l} log((D(w_m, w_l) + 1) /
    D(w_l))`` over its ``n`` top words in rank order, document counts ``D`` from ``reference``.
    Closer to 0 is more coherent. A top word absent from ``reference`` is an error."""
    top = _top_ids(phi, n)
    df, co = _doc_freqs(top, reference)
    if (df == 0).any():
        raise ValueError("a top word occurs in no reference document; use the training documents")
    out = []
    for k in range(top.shape[0]):
        out.append(sum(np.log((co[k, m, l] + 1) / df[k, l]) for m in range(1, n) for l in range(m)))
    return np.array(out)


# ------------------------------------------------------------------------------ a known answer


def bars_topics(side: int = 5) -> np.ndarray:
    """Griffiths & Steyvers' "bars": ``2 * side`` topics over ``side**2`` words laid out on a
    ``side x side`` grid, each uniform over one row or one column."""
    if isinstance(side, bool) or not isinstance(side, int) or side < 2:
        raise ValueError(f"side must be an int >= 2, got {side!r}")
    phi = np.zeros((2 * side, side * side))
    grid = np.arange(side * side).reshape(side, side)
    for i in range(side):
        phi[i, grid[i]] = 1.0 / side
        phi[side + i, grid[:, i]] = 1.0 / side
    return phi


def generate_corpus(phi: np.ndarray, n_docs: int, doc_len: int, alpha: float = 1.0,
                    seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Documents drawn by LDA's generative story from known topics ``phi``: for each document
    ``theta ~ Dir(alpha)``, then each token's topic from ``theta`` and word from that topic.
    Returns ``(docs, theta)``."""
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or not np.allclose(phi.sum(axis=1), 1.0) or (phi < 0).any():
        raise ValueError("phi must be a [K, V] matrix of distributions (rows >= 0, summing to 1)")
    if n_docs < 1 or doc_len < 1:
        raise ValueError(f"n_docs and doc_len must be >= 1, got {n_docs}, {doc_len}")
    rng = np.random.default_rng(seed)
    k_, v = phi.shape
    theta = rng.dirichlet(np.full(k_, alpha), size=n_docs)
    docs = []
    for d in range(n_docs):
        z = rng.choice(k_, size=doc_len, p=theta[d])
        u = rng.random(doc_len)
        cdf = np.cumsum(phi[z], axis=1)
        docs.append(np.minimum((cdf < u[:, None]).sum(axis=1), v - 1).astype(np.int32))
    return docs, theta


def match_topics(true_phi: np.ndarray, est_phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair each true topic with one estimated topic by the Hungarian assignment that maximises
    the total cosine. Returns ``(estimated index of each true topic, cosine of each pair)``."""
    from scipy.optimize import linear_sum_assignment

    a, b = np.asarray(true_phi, float), np.asarray(est_phi, float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or b.shape[0] < a.shape[0]:
        raise ValueError(f"need [K, V] true and [K' >= K, V] estimated topics, got {a.shape}, {b.shape}")
    cos = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T
    rows, cols = linear_sum_assignment(-cos)
    return cols, cos[rows, cols]


def random_topics(n_topics: int, n_words: int, beta: float = 1.0, seed: int = 0) -> np.ndarray:
    """Topics drawn from ``Dir(beta)``: the baseline a recovered topic must beat."""
    _check_k(n_topics)
    return np.random.default_rng(seed).dirichlet(np.full(n_words, beta), size=n_topics)


__all__ = ["LDAConfig", "PLSAConfig", "TopicModel", "bars_topics", "completion_split", "doc_log_likelihoods",
           "doc_term", "encode", "fit_lda_gibbs", "fit_plsa", "fold_in_lda", "fold_in_plsa", "generate_corpus",
           "match_topics", "npmi_coherence", "perplexity", "plsa_e_step", "random_topics", "umass_coherence"]
