"""Reference solutions for chapter 1."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np


def bigram_prob(sentences: list[list[str]], prev: str, word: str) -> float:
    """Maximum-likelihood P(word | prev) over sentences padded with <s> and </s>."""
    pairs: Counter = Counter()
    starts: Counter = Counter()
    for s in sentences:
        toks = ["<s>"] + list(s) + ["</s>"]
        for a, b in zip(toks, toks[1:]):
            pairs[(a, b)] += 1
            starts[a] += 1
    return pairs[(prev, word)] / starts[prev] if starts[prev] else 0.0


def add_k(ngram_count: int, context_count: int, vocab_size: int, k: float) -> float:
    """(C(c w) + k) / (C(c) + k |V|)."""
    return (ngram_count + k) / (context_count + k * vocab_size)


def perplexity(probs: list[float]) -> float:
    """exp of the mean negative log-probability; inf if a probability is 0."""
    if any(p == 0 for p in probs):
        return math.inf
    return math.exp(-sum(math.log(p) for p in probs) / len(probs))


def continuation_count(bigrams: list[tuple[str, str]], word: str) -> int:
    """Distinct left neighbours of ``word``."""
    return len({v for v, w in bigrams if w == word})


def kn_discounts(n1: int, n2: int, n3: int, n4: int) -> tuple[float, float, float]:
    """Chen & Goodman's D1, D2, D3+."""
    y = n1 / (n1 + 2 * n2)
    return 1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3


def ppmi_matrix(counts: np.ndarray) -> np.ndarray:
    """max(PMI, 0) of a dense count matrix; 0 where the count is 0."""
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    expected = np.outer(c.sum(axis=1), c.sum(axis=0)) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log((c / total) / expected)
    return np.maximum(np.nan_to_num(pmi, nan=0.0, neginf=0.0), 0.0)


def unseen_mass(context_count: int, n_followers: int, vocab_size: int, k: float) -> float:
    """Each of the |V| - N1+(c ·) unseen words gets k / (C(c) + k |V|)."""
    return (vocab_size - n_followers) * k / (context_count + k * vocab_size)


def fold_in(query_weights, u, s):
    """q = x_q^T U_k S_k^{-1}: divide by the singular values (the bug multiplied)."""
    q = np.asarray(query_weights, dtype=float) @ np.asarray(u, dtype=float)
    return q / np.asarray(s, dtype=float)


def window_study(windows=(2, 10), prefix_lengths=(2, 4, 6, 8, None), seed: int = 0):
    """A worked answer to the open task (runs in about a minute on a laptop).

    (a) WordSim-353 and SimLex-999 for count vectors (PPMI + SVD) of each window, with a 95 %
    bootstrap interval over the word pairs. Expect the narrow window to do relatively better on
    SimLex (similarity: words that fill the same slot) and the wide one on WordSim (relatedness:
    words of the same topic).
    (b) For Brown clusters (C = 100 over the 2,000 most frequent words of the training split), the
    share of word pairs sharing a path prefix whose most frequent POS tags agree: high for short
    prefixes inside the verb or noun subtrees only if the tree splits syntax first.
    """
    from collections import Counter, defaultdict
    from itertools import combinations

    import pandas as pd
    from scipy.stats import spearmanr

    from companion.counting import NGramCounts, count_word_vectors
    from companion.counting.brown_clusters import BrownConfig, brown_clusters
    from companion.data import bengio_split, load_brown, load_simlex999, load_wordsim353

    brown = load_brown()
    sents = [[w.lower() for w in s] for s in brown.sents()]
    rng = np.random.default_rng(seed)
    rows = {}
    for window in windows:
        cv = count_word_vectors(sents, window=window, min_count=5, dim=300)
        unit = cv.svd / np.linalg.norm(cv.svd, axis=1, keepdims=True).clip(1e-12)
        for name, bench in (("WordSim-353", load_wordsim353()), ("SimLex-999", load_simlex999())):
            pairs = [(a, b, s) for a, b, s in bench if a in cv.index and b in cv.index]
            cos = np.array([unit[cv.index[a]] @ unit[cv.index[b]] for a, b, _ in pairs])
            gold = np.array([s for _, _, s in pairs])
            boots = [spearmanr(gold[i], cos[i])[0] for i in rng.integers(0, len(pairs), (200, len(pairs)))]
            rows[(f"window {window}", name)] = {"rho": spearmanr(gold, cos)[0],
                                                "low": np.quantile(boots, 0.025),
                                                "high": np.quantile(boots, 0.975)}
    part_a = pd.DataFrame(rows).T
    split = bengio_split()
    res = brown_clusters(NGramCounts(split.train, 2, vocab=split.vocab), BrownConfig(100, 2000))
    tags = defaultdict(Counter)
    for w, t in brown.tagged_words():
        tags[w.lower()][t.split("-")[0]] += 1
    words = [w for w in res.words[:600] if w in tags]
    top = {w: tags[w].most_common(1)[0][0] for w in words}
    part_b = {}
    for length in prefix_lengths:
        same = [top[a] == top[b] for a, b in combinations(words, 2)
                if (res.path(a)[:length] if length else res.path(a))
                == (res.path(b)[:length] if length else res.path(b))]
        part_b["full path" if length is None else f"prefix {length}"] = float(np.mean(same)) if same else float("nan")
    return part_a, pd.Series(part_b, name="same most frequent tag")


def cosine_neighbours(vectors, words, word, k):
    """Normalise the rows, score every word against the query, drop the query, sort."""
    v = np.asarray(vectors, dtype=float)
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    q = words.index(word)
    cos = unit @ unit[q]
    cos[q] = -np.inf
    return [words[i] for i in np.argsort(-cos, kind="stable")[:k]]


# Chapter 1c's worked answers (ids ch01.c_<name>) live in their own file.
from .ch01c import (  # noqa: F401
    c_band_probability,
    c_cosine_rank,
    c_idf_by_hand,
    c_number_of_topics,
    c_plsa_estep,
)
