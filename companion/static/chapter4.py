"""Chapter 4's bookkeeping, kept out of the notebooks (04a and 04b): training every static model
of Part I on the same tokens, the Part I table, the small tables the chapter prints, and the
paired bootstrap that gives its claim checks a spread.

Everything here is plumbing around functions the book teaches elsewhere (``train_glove``,
``train_fasttext``, ``train_word2vec``, ``count_word_vectors``, ``companion.evaluate``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..evaluate import (
    analogy,
    analogy_scores,
    compare_embeddings,
    spearman,
    unit_rows,
    word_similarity,
)
from ..evaluate.rare import RareSlice, coverage, rare_slice
from .cooccur import Cooccurrence, probability_ratios
from .subwords import char_ngrams

__all__ = [
    "TABLE_FORMAT",
    "Benchmarks",
    "PartOne",
    "accuracy_diff",
    "analogy_correct",
    "bootstrap",
    "load_benchmarks",
    "neighbour_frequency",
    "neighbour_table",
    "oov_table",
    "part_one_table",
    "ratio_table",
    "shortcut_table",
    "similarity_diff",
    "spearman_ci",
    "spelled_alike_share",
    "train_part_one",
]

TABLE_FORMAT = {
    "d": "{:.0f}", "train s": "{:.0f}", "WS353 ρ": "{:.3f}", "SimLex ρ": "{:.3f}",
    "analogies": "{:.1%}", "semantic": "{:.1%}", "syntactic": "{:.1%}", "rare pairs ρ": "{:.3f}",
    "rare analogies": "{:.1%}", "word coverage": "{:.1%}",
}


# --------------------------------------------------------------------------- spreads


def bootstrap(stat: Callable[[np.ndarray], float], n_items: int, n_boot: int = 1000,
              seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """``(stat(all items), lo, hi)``: the statistic on every item and the percentile interval of
    ``stat`` over ``n_boot`` resamples of the item indices (with replacement, seeded)."""
    if n_items < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n_items}")
    rng = np.random.default_rng(seed)
    point = float(stat(np.arange(n_items)))
    draws = np.array([stat(rng.integers(0, n_items, n_items)) for _ in range(n_boot)], float)
    draws = draws[np.isfinite(draws)]
    tail = (1 - level) / 2
    return point, float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail))


def _sims(space: tuple[Any, Any], pairs: Sequence[tuple[str, str, float]]) -> np.ndarray:
    return np.asarray(word_similarity(*space, pairs, oov_as_zero=True).cosines, float)


def similarity_diff(a: tuple[Any, Any], b: tuple[Any, Any], pairs, n_boot: int = 1000,
                    seed: int = 0) -> tuple[float, float, float]:
    """Spearman ρ of ``a`` minus that of ``b`` on the same pairs (a missing word: cosine 0),
    with a paired bootstrap interval over the pairs."""
    gold = np.asarray([float(p[2]) for p in pairs])
    ca, cb = _sims(a, pairs), _sims(b, pairs)
    return bootstrap(lambda i: spearman(gold[i], ca[i]) - spearman(gold[i], cb[i]), len(gold),
                     n_boot, seed)


def spearman_ci(x: Sequence[float], y: Sequence[float], n_boot: int = 1000,
                seed: int = 0) -> tuple[float, float, float]:
    """Spearman ρ of ``x`` and ``y`` with a bootstrap interval over the items."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return bootstrap(lambda i: spearman(x[i], y[i]), len(x), n_boot, seed)


def analogy_correct(space: tuple[Any, Any], questions, restrict: int = 30000
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(right, answered)``: one boolean each per question: answered right by 3CosAdd, and
    answerable at all (its four words among the ``restrict`` most frequent)."""
    res = analogy(*space, questions, restrict_vocab=restrict)
    right = np.array([p is not None and p.lower() == q[4].lower()
                      for p, q in zip(res.predictions, questions)])
    return right, np.array([p is not None for p in res.predictions])


def covered(pairs, *indexes) -> list:
    """The pairs whose two words every index has (case-folded, as the evaluation looks them up)."""
    return [p for p in pairs if all(p[0].lower() in ix and p[1].lower() in ix for ix in indexes)]


class Words(str):
    """A string that glue shows without quotes (its repr is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


def verdict(lo: float, hi: float) -> Words:
    """How the prose reads a 95% interval of a difference."""
    if lo > 0 or hi < 0:
        return Words("larger than the spread")
    return Words("not significant at this scale")


def accuracy_diff(right_a: np.ndarray, right_b: np.ndarray, n_boot: int = 1000,
                  seed: int = 0) -> tuple[float, float, float]:
    """Accuracy of ``a`` minus that of ``b`` on the same questions, paired bootstrap interval."""
    d = right_a.astype(float) - right_b.astype(float)
    return bootstrap(lambda i: float(d[i].mean()), len(d), n_boot, seed)


# --------------------------------------------------------------------------- benchmarks


@dataclass
class Benchmarks:
    """The Part I benchmarks and the chapter's rare-word slice of them."""

    ws: list
    sl: list
    questions: list
    rare_pairs: RareSlice
    rare_questions: RareSlice
    eval_words: list[str] = field(repr=False)


def load_benchmarks(counts: Mapping[str, int], rare: int = 20) -> Benchmarks:
    """WordSim-353, SimLex-999, the Google analogies, and their items with a word seen at most
    ``rare`` times in ``counts`` (unseen words included)."""
    from ..data import load_google_analogies, load_simlex999, load_wordsim353

    ws, sl, qs = load_wordsim353(), load_simlex999(), load_google_analogies()
    words = {w.lower() for p in ws + sl for w in p[:2]} | {w.lower() for q in qs for w in q[1:]}
    return Benchmarks(ws, sl, qs, rare_slice(ws + sl, counts, rare), rare_slice(qs, counts, rare),
                      sorted(words))


def part_one_table(named: Mapping[str, tuple[Any, Any]], seconds: Mapping[str, float],
                   bench: Benchmarks) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The Part I table (one row per named vector set) and the raw ``compare_embeddings``
    frames of the whole benchmarks and of the rare slice."""
    main = compare_embeddings(named, similarity={"WS353": bench.ws, "SimLex": bench.sl},
                              analogies=bench.questions)
    rare = compare_embeddings(named, similarity={"rare": bench.rare_pairs.items},
                              analogies=bench.rare_questions.items)
    table = pd.DataFrame({
        "d": main["dim"], "train s": pd.Series(dict(seconds)),
        "WS353 ρ": main["WS353 rho"], "SimLex ρ": main["SimLex rho"],
        "analogies": main["3cosadd"], "semantic": main["3cosadd semantic"],
        "syntactic": main["3cosadd syntactic"],
        "rare pairs ρ": rare["rare rho"], "rare analogies": rare["3cosadd"],
        "word coverage": pd.Series({n: coverage(bench.eval_words, idx)
                                    for n, (_, idx) in named.items()}),
    })
    return table, main, rare


def oov_row(ft_oov: tuple[Any, Any], fasttext_row: pd.Series, bench: Benchmarks) -> pd.Series:
    """fastText with OOV vectors: its similarity columns over every pair, full coverage; the
    analogy columns stay those of ``fasttext_row`` (the candidate answers are the vocabulary)."""
    row = fasttext_row.copy()
    row["WS353 ρ"] = word_similarity(*ft_oov, bench.ws).spearman
    row["SimLex ρ"] = word_similarity(*ft_oov, bench.sl).spearman
    row["rare pairs ρ"] = word_similarity(*ft_oov, bench.rare_pairs.items).spearman
    row["word coverage"] = coverage(bench.eval_words, ft_oov[1])
    return row


# --------------------------------------------------------------------------- training


@dataclass
class PartOne:
    """The trained models of Part I on one corpus: ``named`` maps a row name to
    ``(vectors, index)``; ``results`` keeps the training results; ``seconds`` the wall time."""

    named: dict[str, tuple[Any, Any]]
    results: dict[str, Any]
    seconds: dict[str, float]


def train_part_one(sentences, corpus, counts, cooc: Cooccurrence, *, dim: int, w2v_epochs: int,
                   nnlm_epochs: float = 0.1, glove_config=None, fasttext_config=None,
                   min_count: int = 5,
                   which: Sequence[str] = ("PPMI+SVD (ch. 1)", "NNLM (ch. 2)", "CBOW (ch. 3)",
                                           "skip-gram (ch. 3)", "GloVe", "fastText"),
                   count_seconds: float = 0.0, progress: bool = False) -> PartOne:
    """Train the Part I models named in ``which`` on the same tokens, one thread each (so the
    run is reproducible and the times compare like with like). GloVe's time includes counting
    ``cooc`` (``count_seconds``)."""
    from ..counting import count_word_vectors
    from ..data import Vocab
    from ..neural_lm import NNLM, NNLMConfig, TrainPlan, lm_examples, train_lm
    from ..word2vec import train_word2vec
    from .fasttext import train_fasttext
    from .glove import train_glove
    from .presets import fasttext_preset, glove_preset

    named, results, seconds = {}, {}, {}
    for name in which:
        t0 = time.perf_counter()
        if name.startswith("PPMI"):
            cv = count_word_vectors(sentences, window=5, min_count=min_count, dim=dim)
            named[name], results[name] = (cv.svd, cv.index), cv
        elif name.startswith("NNLM"):
            vocab = Vocab(counts, min_count=min_count, specials=("</s>",))
            train = lm_examples(sentences, vocab, 5)
            valid = (train[0][-5000:], train[1][-5000:])  # monitors the run only
            cfg = NNLMConfig(vocab_size=len(vocab), n=5, m=60, h=100, direct=False,
                             output="hsoftmax")
            model = NNLM(cfg, counts=[max(1, vocab.counts[w]) for w in vocab.itos])
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            plan = TrainPlan(batch_size=1024, lr=3e-3, epochs=nnlm_epochs, eval_tokens=5000)
            try:
                train_lm(model, train, valid, plan, progress=False, evals_per_epoch=1)
            finally:
                torch.set_num_threads(threads)
            named[name] = (model.embeddings, vocab.stoi)
            results[name] = {"windows": int(nnlm_epochs * len(train[1])), "of": len(train[1])}
        elif name.startswith(("CBOW", "skip-gram")):
            arch = "cbow" if name.startswith("CBOW") else "sg"
            r = train_word2vec(corpus, arch=arch, output="neg", dim=dim, epochs=w2v_epochs,
                               workers=1, seed=1)
            named[name], results[name] = (r.vectors(), r.index), r
        elif name == "GloVe":
            r = train_glove(cooc, glove_config or glove_preset(), progress=progress)
            named[name], results[name] = (r.vectors(), r.index), r
        elif name == "fastText":
            cfg = fasttext_config or fasttext_preset(epochs=w2v_epochs)
            r = train_fasttext(corpus, cfg, progress=progress)
            named[name], results[name] = (r.vectors(), r.index), r
        else:
            raise ValueError(f"unknown model {name!r}; choose from the defaults of `which`")
        seconds[name] = time.perf_counter() - t0 + (count_seconds if name == "GloVe" else 0.0)
    return PartOne(named, results, seconds)


# --------------------------------------------------------------------------- small tables


def ratio_table(cooc: Cooccurrence, i: str, j: str, probes: Sequence[str]) -> pd.DataFrame:
    """Weighted counts, P(k|i), P(k|j) and their ratio for each probe word k, as text (exact,
    comparable output)."""
    t = pd.DataFrame(probability_ratios(cooc, i, j, probes)).set_index("k")
    t.insert(0, "X_ik", [cooc.get(i, k) for k in probes])
    t.insert(1, "X_jk", [cooc.get(j, k) for k in probes])
    return t


def as_text(t: pd.DataFrame) -> pd.DataFrame:
    """The ratio table with every number written as text."""
    fmt = {"X_ik": "{:.2f}", "X_jk": "{:.2f}", "P(k|i)": "{:.1e}", "P(k|j)": "{:.1e}",
           "ratio": "{:.3g}"}
    return t.apply(lambda col: col.map(fmt[col.name].format))


def neighbour_lists(spaces: Mapping[str, tuple[Any, Any]], queries: Sequence[str],
                    k: int = 5) -> dict[str, dict[str, list[str]]]:
    """``{space: {query: [its k nearest words]}}`` for the queries each space knows."""
    from ..evaluate import nearest_neighbours

    return {name: {q: [w for w, _ in nearest_neighbours(vecs, idx, q, k)]
                   for q in queries if q in idx}
            for name, (vecs, idx) in spaces.items()}


def neighbour_table(spaces: Mapping[str, tuple[Any, Any]], queries: Sequence[str],
                    k: int = 5) -> pd.DataFrame:
    """One column per space: each query's k nearest words (cosine)."""
    lists = neighbour_lists(spaces, queries, k)
    return pd.DataFrame({name: {q: ", ".join(lists[name][q]) if q in lists[name]
                                else "(not in vocabulary)" for q in queries}
                         for name in spaces})


def spelled_alike_share(lists: Mapping[str, list[str]]) -> float:
    """Share of (query, neighbour) pairs that share a character n-gram of 4 to 6 characters."""
    hits = [bool(set(char_ngrams(q, 4, 6)) & set(char_ngrams(w, 4, 6)))
            for q, ws in lists.items() for w in ws]
    return float(np.mean(hits))


def oov_table(ft, oov_words: Mapping[str, str | None], k: int = 5) -> pd.DataFrame:
    """For each unseen word: the n-grams it shares with the word it misspells (if any), whether
    that word is among fastText's k nearest, and the neighbours."""
    rows = {}
    for w, meant in oov_words.items():
        nn = ft.nearest(w, k)
        row = {"shared n-grams": "–", "found": None,
               "fastText's nearest words": ", ".join(f"{n} ({s:.2f})" for n, s in nn)}
        if meant:
            mine = set(char_ngrams(w, 3, 6))
            row["shared n-grams"] = f"{len(mine & set(char_ngrams(meant, 3, 6)))} of {len(mine)}"
            row["found"] = meant in [n for n, _ in nn]
        rows[w] = row
    return pd.DataFrame(rows).T


def shortcut_table(space: tuple[Any, Any], questions, restrict: int = 30000
                   ) -> dict[str, np.ndarray]:
    """What 3CosAdd's arg max picks when ``a``, ``b`` and ``c`` may be answers: one boolean per
    answerable question for each of ``= expected answer``, ``= a``, ``= b``, ``= c``."""
    vectors, index = space
    mat = torch.as_tensor(np.asarray(vectors) if not isinstance(vectors, torch.Tensor)
                          else vectors).float()
    n = min(restrict, mat.shape[0])
    unit = unit_rows(mat[:n])
    rows = [[index.get(w.lower()) for w in q[1:]] for q in questions]
    rows = torch.tensor([r for r in rows if all(x is not None and x < n for x in r)])
    picks = torch.cat([analogy_scores(unit, *rows[s:s + 1024, :3].T, "3cosadd", 1e-3).argmax(1)
                       for s in range(0, len(rows), 1024)])
    return {name: (picks == rows[:, col]).numpy()
            for name, col in (("= expected answer", 3), ("= a", 0), ("= b", 1), ("= c", 2))}


def neighbour_frequency(space: tuple[Any, Any], words: Sequence[str],
                        counts: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(log count of each word, log count of its nearest neighbour other than itself)."""
    vectors, index = space
    unit = unit_rows(torch.as_tensor(np.asarray(vectors) if not isinstance(vectors, torch.Tensor)
                                     else vectors).float())
    itos = {i: w for w, i in index.items()}
    q = torch.tensor([index[w] for w in words])
    sims = unit[q] @ unit.T
    sims[torch.arange(len(q)), q] = float("-inf")  # not itself
    nn = [itos[int(j)] for j in sims.argmax(1)]
    return (np.array([math.log(counts[w]) for w in words]),
            np.array([math.log(counts[w]) for w in nn]))


# --------------------------------------------------------------------------- diagrams


def draw_subwords(word: str, vocab_row: int, n_words: int, *, minn: int = 3, maxn: int = 3,
                  bucket: int = 2_000_000, ax=None):
    """fastText's input vector of ``word``: the whole word and its n-grams (left), the rows of
    the input matrix they select (the word's own row, then ``n_words + hash % bucket``), and
    their mean v_w (right). Returns the figure."""
    import matplotlib.pyplot as plt

    from .. import plot
    from .subwords import fnv1a_32

    grams = ["<" + word + ">"] + char_ngrams(word, minn, maxn)
    rows = [vocab_row] + [n_words + fnv1a_32(g) % bucket for g in grams[1:]]
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(grams) + 0.9), dpi=plot.DPI,
                               layout="constrained")
    fig = ax.figure
    ys = np.linspace(len(grams) - 1, 0, len(grams))
    box = {"boxstyle": "round,pad=0.3", "fc": "white", "ec": plot.PALETTE[2]}
    ax.text(0.0, ys.mean(), word, ha="center", va="center", fontsize=12, bbox=box)
    for k, (g, r, y) in enumerate(zip(grams, rows, ys)):
        color = plot.PALETTE[0] if k == 0 else plot.PALETTE[1]
        ax.annotate("", (1.0, y), (0.3, ys.mean()), arrowprops={"arrowstyle": "->", "color": "0.6"})
        ax.text(1.35, y, g, ha="center", va="center", family="monospace", fontsize=10,
                bbox={**box, "ec": color})
        label = f"row {r:,}" + ("  (the word's own row)" if k == 0 else f"  (bucket {r - n_words:,})")
        ax.annotate("", (2.2, y), (1.75, y), arrowprops={"arrowstyle": "->", "color": color})
        ax.text(2.25, y, label, ha="left", va="center", fontsize=9, color=color)
        ax.annotate("", (4.6, ys.mean()), (4.0, y), arrowprops={"arrowstyle": "->", "color": "0.8"})
    ax.text(4.95, ys.mean(), "mean = $v_w$", ha="center", va="center", fontsize=11, bbox=box)
    ax.set_xlim(-0.5, 5.5)
    ax.set_ylim(-0.8, len(grams) - 0.2)
    ax.axis("off")
    ax.set_title(f"fastText's vector of '{word}' ({minn}-grams shown; the book uses 3 to 6)",
                 fontsize=10)
    return fig


# --------------------------------------------------------------------------- chapter 4b


def pair_cosine(space: tuple[Any, Any], a: str, b: str) -> float:
    """Cosine of two words' vectors (NaN if a word is missing, as at ci scale)."""
    vectors, index = space
    if a not in index or b not in index:
        return float("nan")
    mat = torch.as_tensor(np.asarray(vectors) if not isinstance(vectors, torch.Tensor)
                          else vectors).float()
    va, vb = mat[index[a]], mat[index[b]]
    return float(va @ vb / (va.norm() * vb.norm()))


def group_mean_diff(x: Sequence[float], y: Sequence[float], n_boot: int = 1000,
                    seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``x`` minus mean of ``y`` (two independent groups), with a bootstrap interval
    that resamples each group on its own."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    rng = np.random.default_rng(seed)
    draws = [rng.choice(x, len(x)).mean() - rng.choice(y, len(y)).mean() for _ in range(n_boot)]
    return float(x.mean() - y.mean()), *map(float, np.quantile(draws, [0.025, 0.975]))


def benchmark_gap(space: tuple[Any, Any], first, second, n_boot: int = 1000,
                  seed: int = 0) -> tuple[float, float, float]:
    """Spearman ρ on the benchmark ``first`` minus ρ on ``second`` (each over the pairs the
    space covers), with an interval from resampling each benchmark's pairs on its own."""
    rng = np.random.default_rng(seed)
    parts = []
    for pairs in (first, second):
        pairs = covered(pairs, space[1])
        gold = np.asarray([float(p[2]) for p in pairs])
        cos = np.asarray(word_similarity(*space, pairs).cosines, float)
        parts.append((gold, cos))
    (ga, ca), (gb, cb) = parts
    point = spearman(ga, ca) - spearman(gb, cb)
    draws = []
    for _ in range(n_boot):
        i, j = rng.integers(0, len(ga), len(ga)), rng.integers(0, len(gb), len(gb))
        draws.append(spearman(ga[i], ca[i]) - spearman(gb[j], cb[j]))
    return float(point), *map(float, np.quantile(draws, [0.025, 0.975]))
