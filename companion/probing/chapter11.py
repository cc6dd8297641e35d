"""Chapter 11's experiments, so the notebook's cells stay short.

* :func:`sizes` -- everything that changes with ``BOOK_SCALE``;
* :func:`token_task` -- a seeded sample of a tagging data set (Brown POS, CoNLL-2000 chunks,
  CoNLL-2003 entities); :func:`ptb_sample` -- Penn Treebank sentences with POS tags, Collins
  dependency heads and the trees (for POS, the structural probe, attention and the
  sentence-level tasks);
* :func:`sentence_tasks` -- Conneau et al.'s (2018) probing tasks we can build: length, word
  content, bigram shift, tense, tree depth, top constituents;
* :func:`train_static` -- the Part I vectors (PPMI+SVD, skip-gram, fastText) on Brown;
* :func:`run_token_probes` / :func:`run_layer_probes` / :func:`run_structural` -- the tables.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..scale import pick
from .probes import (
    ProbeConfig,
    bootstrap_acc,
    control_labels,
    control_task,
    encode_labels,
    extract,
    fit_probe,
)


@dataclass(frozen=True)
class Sizes:
    token_train: int        # training sentences per token task
    token_test: int
    ptb_train: int          # Penn Treebank sentences (POS, structure, sentence tasks)
    ptb_test: int
    max_words: int          # longer sentences are left out
    static_epochs: int      # skip-gram / fastText epochs on Brown
    static_dim: int
    probe_epochs: int
    mlp_hidden: int
    struct_epochs: int
    struct_rank: int
    attn_sentences: int
    n_boot: int
    seeds: tuple[int, ...]  # probe seeds (spread)


def sizes(scale: str | None = None) -> Sizes:
    return pick(
        ci=Sizes(120, 60, 200, 80, 25, 1, 50, 4, 64, 4, 32, 20, 200, (0,)),
        laptop=Sizes(800, 300, 1500, 500, 40, 1, 100, 8, 256, 10, 64, 150, 1000, (0, 1, 2)),
        gpu=Sizes(8000, 2000, 3000, 800, 60, 5, 300, 20, 512, 30, 128, 800, 2000, (0, 1, 2, 3, 4)),
        scale=scale)


# --------------------------------------------------------------------------------------- data


@dataclass
class TokenTask:
    name: str
    train_words: list[list[str]]
    train_tags: list[list[str]]
    test_words: list[list[str]]
    test_tags: list[list[str]]

    @property
    def n_tokens(self) -> tuple[int, int]:
        return sum(map(len, self.train_words)), sum(map(len, self.test_words))


def _sample(items: list, n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(items))[:n]
    return [items[i] for i in sorted(idx)]


def token_task(name: str, n_train: int, n_test: int, max_words: int = 40, seed: int = 0) -> TokenTask:
    """A seeded sample of ``load_tagging(name)``'s train and test splits (sentences of at most
    ``max_words`` tokens)."""
    from ..data import load_tagging

    d = load_tagging(name)
    tr = _sample([s for s in d["train"] if 0 < len(s.tokens) <= max_words], n_train, seed)
    te = _sample([s for s in d["test"] if 0 < len(s.tokens) <= max_words], n_test, seed + 1)
    return TokenTask(name, [list(s.tokens) for s in tr], [list(s.tags) for s in tr],
                     [list(s.tokens) for s in te], [list(s.tags) for s in te])


@dataclass
class PTBSentence:
    words: list[str]
    tags: list[str]
    heads: list[int]
    tree: object

    @property
    def keep(self) -> list[bool]:
        """Not punctuation (the structural probe's evaluation leaves punctuation out)."""
        from .structural import PUNCT_TAGS

        return [t not in PUNCT_TAGS for t in self.tags]


def ptb_sample(n_train: int, n_test: int, max_words: int = 40) -> tuple[list[PTBSentence], list[PTBSentence]]:
    """Penn Treebank sample sentences (traces removed) of 2..``max_words`` words: training
    sentences from the first 80 % of the files (``wsj_0001`` ... ``wsj_0159``), test sentences from
    the rest, so no article is in both."""
    from ..data.treebank import load_ptb_trees
    from .structural import dependencies

    train, test = [], []
    for t in load_ptb_trees():
        words, tags = t.tagged()
        if not 2 <= len(words) <= max_words:
            continue
        s = PTBSentence(words, tags, dependencies(t), t)
        (train if t.fileid < "wsj_0160" else test).append(s)
    return train[:n_train], test[:n_test]


# --------------------------------------------------------------------------- sentence tasks


def _depth(tree) -> int:
    if tree.word is not None:
        return 0
    kids = [c for c in tree.children if not (c.word is not None and c.label == "-NONE-")]
    return 1 + max((_depth(c) for c in kids), default=0)


def _top_constituents(tree) -> str:
    return " ".join(c.label.split("-")[0] for c in tree.children if c.label != "-NONE-")


def _tense(s: PTBSentence) -> str | None:
    """The tense of the main clause's head verb: past (VBD) or present (VBZ/VBP); None otherwise."""
    tag = s.tags[s.heads.index(-1)]
    return {"VBD": "past", "VBZ": "present", "VBP": "present"}.get(tag)


@dataclass
class SentenceTask:
    name: str
    train: list[tuple[list[str], str]]
    test: list[tuple[list[str], str]]

    def chance(self) -> float:
        """The majority class's share of the test set."""
        c = Counter(y for _, y in self.test)
        return c.most_common(1)[0][1] / len(self.test)


def _length_bin(n: int) -> str:
    for lo, hi in ((2, 10), (11, 15), (16, 20), (21, 25), (26, 30)):
        if lo <= n <= hi:
            return f"{lo}-{hi}"
    return "31+"


def bigram_shift(words: list[str], rng: np.random.Generator) -> list[str]:
    """Swap two adjacent words (neither is the first word, which may carry a capital)."""
    if len(words) < 3:
        raise ValueError("bigram shift needs a sentence of at least 3 words")
    i = int(rng.integers(1, len(words) - 1))
    return words[:i] + [words[i + 1], words[i]] + words[i + 2:]


def sentence_tasks(train: Sequence[PTBSentence], test: Sequence[PTBSentence], n_content_words: int = 10,
                   seed: int = 0) -> dict[str, SentenceTask]:
    """Conneau et al.'s probing tasks on treebank sentences: ``Length`` (6 bins), ``WordContent``
    (which of ``n_content_words`` mid-frequency words the sentence holds; sentences holding
    exactly one), ``BShift`` (were two adjacent words swapped? half the sentences are),
    ``Tense`` (past/present main verb), ``TreeDepth`` (depth of the parse, clipped to 5..12),
    ``TopConst`` (the labels under the root: the 5 most frequent sequences + ``OTHER``)."""
    rng = np.random.default_rng(seed)
    out: dict[str, SentenceTask] = {}
    out["Length"] = SentenceTask("Length", [(s.words, _length_bin(len(s.words))) for s in train],
                                 [(s.words, _length_bin(len(s.words))) for s in test])
    df = Counter(w.lower() for s in train for w in set(s.words) if w.isalpha())
    mid = [w for w, c in sorted(df.items(), key=lambda kv: (-kv[1], kv[0])) if 15 <= c and len(w) > 3]
    words = mid[len(mid) // 4: len(mid) // 4 + n_content_words]

    def content(ss):
        res = []
        for s in ss:
            hit = {w.lower() for w in s.words} & set(words)
            if len(hit) == 1:
                res.append((s.words, hit.pop()))
        return res

    out["WordContent"] = SentenceTask("WordContent", content(train), content(test))

    def shifted(ss):
        res = []
        for s in ss:
            if len(s.words) >= 3 and rng.random() < 0.5:
                res.append((bigram_shift(s.words, rng), "I"))
            else:
                res.append((s.words, "O"))
        return res

    out["BShift"] = SentenceTask("BShift", shifted(train), shifted(test))
    out["Tense"] = SentenceTask("Tense", [(s.words, _tense(s)) for s in train if _tense(s)],
                                [(s.words, _tense(s)) for s in test if _tense(s)])
    clip = lambda d: str(min(max(d, 5), 12))
    out["TreeDepth"] = SentenceTask("TreeDepth", [(s.words, clip(_depth(s.tree))) for s in train],
                                    [(s.words, clip(_depth(s.tree))) for s in test])
    top = Counter(_top_constituents(s.tree) for s in train).most_common(5)
    keep = {k for k, _ in top}
    tc = lambda s: _top_constituents(s.tree) if _top_constituents(s.tree) in keep else "OTHER"
    out["TopConst"] = SentenceTask("TopConst", [(s.words, tc(s)) for s in train], [(s.words, tc(s)) for s in test])
    return out


def mean_pool_layers(layers: Sequence[np.ndarray], lengths: Sequence[int]) -> list[np.ndarray]:
    """Token rows per layer -> one mean vector per sentence per layer."""
    ends = np.cumsum(lengths)
    starts = ends - np.asarray(lengths)
    return [np.stack([a[s:e].mean(0) for s, e in zip(starts, ends)]) for a in layers]


# ------------------------------------------------------------------------------ static vectors


@dataclass
class StaticVectors:
    named: dict[str, tuple[np.ndarray, dict[str, int]]]
    seconds: dict[str, float]
    fasttext: object


def train_static(dim: int, epochs: int, min_count: int = 3) -> StaticVectors:
    """PPMI+SVD (window 2), skip-gram (negative sampling) and fastText trained on Brown
    (lower-cased, 1.16M tokens), one thread each; fastText keeps its model so that words
    outside the vocabulary get vectors from their character n-grams."""
    from ..counting import count_word_vectors
    from ..data.brown import load_brown
    from ..static.fasttext import train_fasttext
    from ..word2vec import train_word2vec

    sents = [[w.lower() for w in s] for s in load_brown().sents()]
    named, seconds = {}, {}
    t0 = time.perf_counter()
    cv = count_word_vectors(sents, window=2, min_count=min_count, dim=dim)
    named["PPMI+SVD (ch. 1)"], seconds["PPMI+SVD (ch. 1)"] = (np.asarray(cv.svd), cv.index), time.perf_counter() - t0
    t0 = time.perf_counter()
    sg = train_word2vec(sents, arch="sg", output="neg", dim=dim, epochs=epochs, workers=1, seed=1, min_count=min_count)
    named["skip-gram (ch. 3)"], seconds["skip-gram (ch. 3)"] = (sg.vectors().numpy(), sg.index), time.perf_counter() - t0
    t0 = time.perf_counter()
    ft = train_fasttext(sents, dim=dim, epochs=epochs, bucket=200_000, min_count=min_count, seed=1)
    seconds["fastText (ch. 4)"] = time.perf_counter() - t0
    named["fastText (ch. 4)"] = (ft.vectors().numpy(), ft.index)
    return StaticVectors(named, seconds, ft)


def fasttext_extractor(ft, lowercase: bool = True):
    """fastText with vectors for unseen words from their n-grams (computed per call)."""
    from .probes import static_extractor

    def run(sentences):
        words = {(w.lower() if lowercase else w) for s in sentences for w in s}
        vecs, index = ft.with_oov(sorted(words))
        return static_extractor(vecs.numpy(), index, lowercase=lowercase)(sentences)

    return run


# ------------------------------------------------------------------------------------ probing


def run_token_probes(task: TokenTask, reps: Sequence[str], layer: Mapping[str, int] | None = None,
                     config: ProbeConfig | None = None, mlp_hidden: int = 256, seeds: Sequence[int] = (0,),
                     n_boot: int = 1000) -> pd.DataFrame:
    """For each representation (one layer of it: ``layer[name]``, default the last), a linear
    and an MLP probe on the task and on its control task; accuracy is the mean over ``seeds``
    (probe seed and control-task seed together), with a bootstrap interval of seed 0's test
    accuracy."""
    config = config or ProbeConfig()
    _, (y_tr, y_te) = encode_labels(task.train_tags, task.test_tags)
    rows = []
    for name in reps:
        k = (layer or {}).get(name, -1)
        X_tr, X_te = extract(name, task.train_words)[k], extract(name, task.test_words)[k]
        for kind in ("linear", "mlp"):
            acc, ctl, lo_hi = [], [], None
            for seed in seeds:
                cfg = ProbeConfig(**{**config.__dict__, "kind": kind, "hidden": mlp_hidden, "seed": seed})
                r = fit_probe(X_tr, y_tr, X_te, y_te, cfg)
                acc.append(r.test_acc)
                if lo_hi is None:
                    lo_hi = bootstrap_acc(r.predict(X_te) == y_te, n_boot)
                m = control_task(task.train_tags, task.train_words, task.train_words + task.test_words, seed=seed)
                _, (c_tr, c_te) = encode_labels(control_labels(m, task.train_words), control_labels(m, task.test_words))
                ctl.append(fit_probe(X_tr, c_tr, X_te, c_te, cfg).test_acc)
            rows.append({"representation": name, "probe": kind, "task acc": 100 * np.mean(acc),
                         "task sd": 100 * np.std(acc), "95% CI": f"{100 * lo_hi[0]:.1f}-{100 * lo_hi[1]:.1f}",
                         "control acc": 100 * np.mean(ctl),
                         "selectivity": 100 * (np.mean(acc) - np.mean(ctl))})
    return pd.DataFrame(rows).round(1)


def majority_baseline(task: TokenTask) -> float:
    """Accuracy of tagging every test word with its most frequent training tag (unseen words:
    the most frequent tag overall) -- the number a probe has to beat to say anything."""
    by_word: dict[str, Counter] = {}
    for ws, ts in zip(task.train_words, task.train_tags):
        for w, t in zip(ws, ts):
            by_word.setdefault(w, Counter())[t] += 1
    top = Counter(t for ts in task.train_tags for t in ts).most_common(1)[0][0]
    right = [(by_word[w].most_common(1)[0][0] if w in by_word else top) == t
             for ws, ts in zip(task.test_words, task.test_tags) for w, t in zip(ws, ts)]
    return float(np.mean(right))


def run_layer_probes(tasks: Mapping[str, TokenTask], rep: str, config: ProbeConfig | None = None
                     ) -> tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per task: linear-probe accuracy per layer, and the scalar-mix cumulative scores (Tenney et
    al.). Returns ``(frame with per-layer accuracy, expected layer and centre of gravity,
    per-layer scores, mix weights)``."""
    from .layers import (
        center_of_gravity,
        cumulative_scores,
        expected_layer,
        fit_scalar_mix,
        layer_scores,
    )

    rows, per, weights = [], {}, {}
    for tname, t in tasks.items():
        _, (y_tr, y_te) = encode_labels(t.train_tags, t.test_tags)
        L_tr, L_te = extract(rep, t.train_words), extract(rep, t.test_words)
        per[tname] = layer_scores(L_tr, y_tr, L_te, y_te, config)
        _, w = fit_scalar_mix(L_tr, y_tr, L_te, y_te, config)
        cum = cumulative_scores(L_tr, y_tr, L_te, y_te, config)
        weights[tname] = w
        rows.append({"task": tname, **{f"L{i}": 100 * a for i, a in enumerate(per[tname])},
                     "best layer": int(per[tname].argmax()), "expected layer": expected_layer(cum),
                     "centre of gravity": center_of_gravity(w)})
    return pd.DataFrame(rows).round(2), per, weights


def run_structural(train: Sequence[PTBSentence], test: Sequence[PTBSentence], rep: str, config=None
                   ) -> pd.DataFrame:
    """The structural probe on every layer of ``rep``: UUAS and DSpr. on the test sentences."""
    from .structural import (
        evaluate_structural,
        fit_structural,
        predict_distances,
        tree_distances,
    )

    def split(layers, lens):
        ends = np.cumsum(lens)
        return [[a[e - n:e] for n, e in zip(lens, ends)] for a in layers]

    L_tr = split(extract(rep, [s.words for s in train]), [len(s.words) for s in train])
    L_te = split(extract(rep, [s.words for s in test]), [len(s.words) for s in test])
    gold = [tree_distances(s.heads) for s in train]
    rows = []
    for k, (xs, xt) in enumerate(zip(L_tr, L_te)):
        probe = fit_structural(xs, gold, config)
        res = evaluate_structural(predict_distances(probe, xt), [s.heads for s in test], [s.keep for s in test])
        rows.append({"representation": rep, "layer": k, "UUAS": 100 * res["uuas"], "DSpr.": res["dspr"]})
    return pd.DataFrame(rows).round(3)
