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
from .layers import LayerSpread, layer_scores
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
    static_tokens: int | None = None  # Brown tokens the static vectors train on (None: all)
    layer_seeds: tuple[int, ...] = (0, 1, 2)  # probe seeds of the layer-wise analysis


def sizes(scale: str | None = None) -> Sizes:
    return pick(
        ci=Sizes(120, 60, 120, 50, 25, 1, 50, 4, 64, 3, 32, 10, 200, (0, 1), 200_000, (0,)),
        laptop=Sizes(400, 150, 500, 150, 40, 1, 100, 6, 256, 15, 64, 80, 1000, (0, 1)),
        gpu=Sizes(8000, 2000, 3000, 800, 60, 5, 300, 20, 512, 30, 128, 800, 2000, (0, 1, 2, 3, 4),
                  layer_seeds=(0, 1, 2, 3, 4)),
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
        return c.most_common(1)[0][1] / len(self.test) if self.test else float("nan")


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
    floor = max(3, len(train) // 100)
    mid = [w for w, c in sorted(df.items(), key=lambda kv: (-kv[1], kv[0])) if floor <= c and len(w) > 3]
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
    return {k: t for k, t in out.items() if t.train and t.test}  # a sample too small for a task drops it


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


def train_static(dim: int, epochs: int, min_count: int = 3, max_tokens: int | None = None) -> StaticVectors:
    """PPMI+SVD (window 2), skip-gram (negative sampling) and fastText trained on Brown
    (lower-cased, 1.16M tokens), one thread each; fastText keeps its model so that words
    outside the vocabulary get vectors from their character n-grams."""
    from ..counting import count_word_vectors
    from ..data.brown import load_brown
    from ..static.fasttext import train_fasttext
    from ..word2vec import train_word2vec

    sents = [[w.lower() for w in s] for s in load_brown().sents()]
    if max_tokens is not None:
        ends = np.cumsum([len(s) for s in sents])
        sents = sents[: int(np.searchsorted(ends, max_tokens)) + 1]
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
    accuracy; selectivity with its seeds' sd and a 95 % bootstrap interval over test tokens
    (``sel lo``, ``sel hi``)."""
    config = config or ProbeConfig()
    _, (y_tr, y_te) = encode_labels(task.train_tags, task.test_tags)
    rows = []
    for name in reps:
        k = (layer or {}).get(name, -1)
        X_tr, X_te = extract(name, task.train_words)[k], extract(name, task.test_words)[k]
        for kind in ("linear", "mlp"):
            acc, ctl, lo_hi, sel_hits = [], [], None, []
            for seed in seeds:
                lr = config.lr if kind == "linear" else 3 * config.lr  # the MLP memorises slowly at 1e-3
                cfg = ProbeConfig(**{**config.__dict__, "kind": kind, "hidden": mlp_hidden, "seed": seed, "lr": lr})
                r = fit_probe(X_tr, y_tr, X_te, y_te, cfg)
                acc.append(r.test_acc)
                if lo_hi is None:
                    lo_hi = bootstrap_acc(r.predict(X_te) == y_te, n_boot)
                m = control_task(task.train_tags, task.train_words, task.train_words + task.test_words, seed=seed)
                _, (c_tr, c_te) = encode_labels(control_labels(m, task.train_words), control_labels(m, task.test_words))
                rc = fit_probe(X_tr, c_tr, X_te, c_te, cfg)
                ctl.append(rc.test_acc)
                sel_hits.append((r.predict(X_te) == y_te).astype(float) - (rc.predict(X_te) == c_te))
            sel_lo, sel_hi = _bootstrap_mean(np.mean(sel_hits, 0), n_boot)
            sels = np.array(acc) - np.array(ctl)
            rows.append({"representation": name, "probe": kind, "task acc": 100 * np.mean(acc),
                         "task sd": 100 * np.std(acc), "95% CI": f"{100 * lo_hi[0]:.1f}-{100 * lo_hi[1]:.1f}",
                         "control acc": 100 * np.mean(ctl),
                         "selectivity": 100 * sels.mean(), "sel sd": 100 * sels.std(),
                         "sel lo": 100 * sel_lo, "sel hi": 100 * sel_hi})
    return pd.DataFrame(rows).round(1)


def _bootstrap_mean(values: np.ndarray, n_boot: int, seed: int = 0) -> tuple[float, float]:
    """A 95 % percentile interval of the mean of per-item ``values`` (here: a token's task hit
    minus its control hit, averaged over seeds -- the selectivity's interval over test tokens)."""
    v = np.asarray(values, dtype=np.float64)
    means = v[np.random.default_rng(seed).integers(0, len(v), size=(n_boot, len(v)))].mean(1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


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


def run_layer_probes(tasks: Mapping[str, TokenTask], rep: str, config: ProbeConfig | None = None,
                     seeds: Sequence[int] = (0, 1, 2), n_boot: int = 1000
                     ) -> tuple[pd.DataFrame, dict[str, LayerSpread]]:
    """Per task: linear-probe accuracy per layer and the scalar-mix cumulative scores (Tenney et
    al.) for every probe seed. Returns ``(frame, spreads)``: the frame has the seeds' mean accuracy
    per layer, the best layer, the expected layer (seeds' mean and sd, and a 95 % bootstrap
    interval over test tokens) and the mix weights' centre of gravity (mean, sd); ``spreads``
    keeps each task's :class:`~companion.probing.layers.LayerSpread` for further statistics."""
    from .layers import layer_spread

    rows, spreads = [], {}
    for tname, t in tasks.items():
        _, (y_tr, y_te) = encode_labels(t.train_tags, t.test_tags)
        sp = layer_spread(extract(rep, t.train_words), y_tr, extract(rep, t.test_words), y_te, config, seeds)
        spreads[tname] = sp
        per, el, cog = sp.per_layer.mean(0), sp.expected_layers(), sp.centres()
        lo, hi = np.nanpercentile(sp.boot_expected(n_boot), [2.5, 97.5])
        rows.append({"task": tname, **{f"L{i}": 100 * a for i, a in enumerate(per)},
                     "layer sd": 100 * sp.per_layer.std(0).max(), "best layer": int(per.argmax()),
                     "expected layer": np.nanmean(el), "EL sd": np.nanstd(el), "EL 95% CI": f"{lo:.2f} to {hi:.2f}",
                     "centre of gravity": cog.mean(), "CoG sd": cog.std()})
    return pd.DataFrame(rows).round(2), spreads


def layer_order(spreads: Mapping[str, LayerSpread], pairs: Sequence[tuple[str, str]] = (
        ("NER", "POS"), ("NER", "chunk"), ("chunk", "POS")), n_boot: int = 1000) -> pd.DataFrame:
    """The pipeline ordering, tested two ways for each ``(later, earlier)`` pair of tasks:

    * ``expected layer`` (Tenney et al.): the difference of the two tasks' expected layers;
    * ``depth gain`` (Peters et al.): the difference of what the last layer adds over the first
      (accuracy points), i.e. whether depth helps the later task more.

    Each with a 95 % bootstrap interval over test tokens (the tasks' test sets are independent,
    so their draws are paired at random) and a verdict (``holds`` / ``reversed`` /
    ``not separable``)."""
    from .layers import compare_expected

    stats = {"expected layer": lambda sp, i: sp.boot_expected(n_boot, seed=i),
             "depth gain": lambda sp, i: 100 * sp.boot_gain(n_boot, seed=i)}
    rows = []
    for stat, fn in stats.items():
        boots = {t: fn(sp, i) for i, (t, sp) in enumerate(spreads.items())}
        for later, earlier in pairs:
            d, lo, hi, verdict = compare_expected(boots[later], boots[earlier])
            rows.append({"statistic": stat, "claim": f"{later} later than {earlier}", "difference": round(d, 2),
                         "95% CI": f"{lo:.2f} to {hi:.2f}", "verdict": verdict})
    return pd.DataFrame(rows)


def order_table(orders: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`layer_order`'s frames of several representations side by side: one row per
    statistic and claim, one column per representation, each cell ``"difference [lo, hi] verdict"``."""
    if not orders:
        raise ValueError("no layer_order frames to put side by side")
    cols = {}
    for rep, f in orders.items():
        cols[rep] = [f"{d:+.2f} [{ci.replace(' to ', ', ')}] {v}"
                     for d, ci, v in zip(f.difference, f["95% CI"], f.verdict)]
    return pd.DataFrame(cols, index=pd.MultiIndex.from_frame(f[["statistic", "claim"]]))


def versus(lo: float, hi: float, ref_lo: float, ref_hi: float) -> str:
    """Compare two 95 % intervals in words: ``"above"``, ``"below"`` or ``"level with"`` (they
    overlap) -- for prose whose conclusion must follow the numbers."""
    if lo > hi or ref_lo > ref_hi:
        raise ValueError(f"an interval's lower end is above its upper end: ({lo}, {hi}), ({ref_lo}, {ref_hi})")
    return "above" if lo > ref_hi else "below" if hi < ref_lo else "level with"


def best_layer_interval(sp: LayerSpread, n_boot: int = 1000) -> tuple[int, float, float, float]:
    """``(best layer, accuracy %, 2.5 %, 97.5 %)``: the layer with the best mean accuracy over the
    seeds, and its bootstrap interval over test tokens."""
    mean = sp.per_layer.mean(0)
    k = int(mean.argmax())
    lo, hi = np.percentile(sp.boot_layers(n_boot)[:, k], [2.5, 97.5])
    return k, 100 * float(mean[k]), 100 * float(lo), 100 * float(hi)


def plot_layers(ax, spreads: Mapping[str, LayerSpread], n_boot: int = 1000) -> None:
    """Per-layer accuracy (mean of the seeds) with its 95 % bootstrap band over test tokens."""
    for name, sp in spreads.items():
        mean = 100 * sp.per_layer.mean(0)
        lo, hi = 100 * np.percentile(sp.boot_layers(n_boot), [2.5, 97.5], axis=0)
        xs = np.arange(len(mean))
        ax.plot(xs, mean, marker="o", label=name)
        ax.fill_between(xs, lo, hi, alpha=0.25)
    ax.set_ylabel("linear probe accuracy %")
    ax.legend()


def run_structural(train: Sequence[PTBSentence], test: Sequence[PTBSentence], rep: str, config=None,
                   preds: dict | None = None) -> pd.DataFrame:
    """The structural probe on every layer of ``rep``: UUAS and DSpr. on the test sentences
    (``preds``, if given, receives each layer's predicted distances under ``(rep, layer)``)."""
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
        pd_ = predict_distances(probe, xt)
        if preds is not None:
            preds[(rep, k)] = pd_
        res = evaluate_structural(pd_, [s.heads for s in test], [s.keep for s in test])
        rows.append({"representation": rep, "layer": k, "UUAS": 100 * res["uuas"], "DSpr.": res["dspr"]})
    return pd.DataFrame(rows).round(3)


def run_sentence_probes(tasks: Mapping[str, SentenceTask], reps: Sequence[str], config: ProbeConfig | None = None,
                        all_layers: Sequence[str] = ()) -> pd.DataFrame:
    """Accuracy (%) of a linear probe on mean-pooled vectors for each sentence task; for the
    representations in ``all_layers`` one row per layer, else the last layer only."""
    rows: dict[str, dict[str, float]] = {}
    for tname, t in tasks.items():
        _y_names, (y_tr, y_te) = encode_labels([[y] for _, y in t.train], [[y] for _, y in t.test])
        for rep in reps:
            lay_tr = mean_pool_layers(extract(rep, [w for w, _ in t.train]), [len(w) for w, _ in t.train])
            lay_te = mean_pool_layers(extract(rep, [w for w, _ in t.test]), [len(w) for w, _ in t.test])
            if rep in all_layers:  # every layer's probe, trained side by side
                for k, acc in enumerate(layer_scores(lay_tr, y_tr, lay_te, y_te, config)):
                    rows.setdefault(f"{rep} L{k}", {})[tname] = 100 * acc
            else:
                rows.setdefault(rep, {})[tname] = 100 * fit_probe(lay_tr[-1], y_tr, lay_te[-1], y_te, config).test_acc
        rows.setdefault("majority class", {})[tname] = 100 * t.chance()
    return pd.DataFrame(rows).T.round(1)


def uuas_interval(preds: Sequence[np.ndarray], sents: Sequence[PTBSentence], n_boot: int = 1000,
                  seed: int = 0) -> tuple[float, float, float]:
    """UUAS and a 95 % bootstrap interval over test sentences."""
    from .structural import uuas

    rt = np.array([uuas(p, s.heads, s.keep) for p, s in zip(preds, sents)], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(rt), size=(n_boot, len(rt)))
    boot = rt[idx, 0].sum(1) / np.maximum(rt[idx, 1].sum(1), 1)
    return float(rt[:, 0].sum() / rt[:, 1].sum()), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


def uuas_by_layer(preds: Mapping[tuple[str, int], Sequence[np.ndarray]], rep: str, sents: Sequence[PTBSentence],
                  n_boot: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, dict[str, object]]:
    """Where in ``rep`` is the tree? UUAS per layer with a 95 % bootstrap interval over test
    sentences (one draw shared by all layers, so layer differences are paired), and the best
    layer's paired margin over the first and the last layer. Returns ``(frame, summary)`` with
    ``summary = {"best": layer, "over_first": (mean, lo, hi), "over_last": (...), "middle": bool}``;
    ``middle`` is True when the best layer is neither the first nor the last and beats both with
    intervals above zero."""
    from .structural import uuas

    ks = sorted(k for r, k in preds if r == rep)
    if not ks:
        raise ValueError(f"no predicted distances for {rep!r}; run run_structural(..., preds=...) first")
    rt = np.array([[uuas(p, s.heads, s.keep) for p, s in zip(preds[(rep, k)], sents)] for k in ks], float)
    idx = np.random.default_rng(seed).integers(0, rt.shape[1], size=(n_boot, rt.shape[1]))
    boot = rt[:, idx, 0].sum(-1) / np.maximum(rt[:, idx, 1].sum(-1), 1)  # [layers, n_boot]
    point = rt[:, :, 0].sum(1) / rt[:, :, 1].sum(1)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    frame = pd.DataFrame({"layer": ks, "UUAS": 100 * point, "lo": 100 * lo, "hi": 100 * hi}).round(1)
    best = int(point.argmax())

    def margin(k: int) -> tuple[float, float, float]:
        d = 100 * (boot[best] - boot[k])
        return float(d.mean()), float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))

    first, last = margin(0), margin(len(ks) - 1)
    middle = 0 < best < len(ks) - 1 and first[1] > 0 and last[1] > 0
    return frame, {"best": ks[best], "over_first": first, "over_last": last, "middle": bool(middle)}


def run_structural_ci(train: Sequence[PTBSentence], test: Sequence[PTBSentence], rep: str, layer: int,
                      config=None, n_boot: int = 1000) -> tuple[float, float, float]:
    """UUAS with its interval for one layer of ``rep``."""
    from .structural import fit_structural, predict_distances, tree_distances

    def split(a, ss):
        ends = np.cumsum([len(s.words) for s in ss])
        return [a[e - len(s.words):e] for s, e in zip(ss, ends)]

    xs = split(extract(rep, [s.words for s in train])[layer], train)
    xt = split(extract(rep, [s.words for s in test])[layer], test)
    probe = fit_structural(xs, [tree_distances(s.heads) for s in train], config)
    return uuas_interval(predict_distances(probe, xt), test, n_boot)


def run_attention(encoder, wordpiece, sents: Sequence[PTBSentence]) -> tuple[dict[str, np.ndarray], tuple[int, float]]:
    """Head statistics and syntactic-head accuracy of a WordPiece BERT on treebank sentences,
    with the best fixed-offset baseline ``(offset, accuracy)``."""
    from .attention_stats import (
        best_offset_baseline,
        collect_attention,
        head_statistics,
        syntactic_head_accuracy,
    )

    enc = collect_attention(encoder, wordpiece, [s.words for s in sents])
    stats = head_statistics(enc)
    stats["syntactic head"] = syntactic_head_accuracy(enc, [s.heads for s in sents], [s.keep for s in sents])
    return stats, best_offset_baseline([s.heads for s in sents], [s.keep for s in sents])


# ------------------------------------------------------------------------------------ knowledge

CAPITALS: tuple[tuple[str, str], ...] = (
    ("Paris", "France"), ("Berlin", "Germany"), ("Rome", "Italy"), ("Madrid", "Spain"), ("Tokyo", "Japan"),
    ("Beijing", "China"), ("Moscow", "Russia"), ("Ottawa", "Canada"), ("Canberra", "Australia"),
    ("Cairo", "Egypt"), ("Athens", "Greece"), ("Lisbon", "Portugal"), ("Vienna", "Austria"),
    ("Dublin", "Ireland"), ("Oslo", "Norway"), ("Stockholm", "Sweden"), ("Helsinki", "Finland"),
    ("Warsaw", "Poland"), ("Budapest", "Hungary"), ("Nairobi", "Kenya"), ("Lima", "Peru"),
    ("Bangkok", "Thailand"), ("Hanoi", "Vietnam"), ("Manila", "Philippines"), ("Havana", "Cuba"),
    ("Ankara", "Turkey"), ("Tehran", "Iran"), ("Baghdad", "Iraq"), ("Brussels", "Belgium"),
    ("Copenhagen", "Denmark"),
)
"""Hand-checked (capital, country) pairs, each the country's capital in 2024."""


NONCE: tuple[str, ...] = (
    "Vostrel", "Quindar", "Belmusk", "Trazzo", "Okravin", "Pellux", "Zandrift", "Morvique", "Klestor",
    "Ubrano", "Feskil", "Gortova", "Hemlix", "Jurrant", "Lavesk", "Nimbrac", "Orsulen", "Plintor",
    "Rastoval", "Sebrix", "Tolvane", "Usklar", "Varnette", "Wexhold", "Yorbisk", "Brantic", "Cravold",
    "Dimsker", "Elvorn", "Frastle",
)
"""Made-up company names (checked absent from MiniLM's vocabulary as whole words): facts about
them can only come from the knowledge base."""


def nonce_facts(seed: int = 0) -> tuple[tuple[str, str], ...]:
    """Each made-up company of :data:`NONCE` gets a country of :data:`CAPITALS` (a seeded
    permutation): a knowledge base the model cannot have seen."""
    countries = [b for _, b in CAPITALS]
    perm = np.random.default_rng(seed).permutation(len(countries))
    return tuple((n, countries[j]) for n, j in zip(NONCE, perm))


def capital_ranking(encoder, wordpiece, pairs: Sequence[tuple[str, str]] = CAPITALS, mode: str = "none",
                    template: str = "We flew to {} last week .", shuffle_seed: int | None = None,
                    relation: str = "capital of") -> float:
    """A LAMA-style probe without an MLM head: the capital's last-layer vector (in ``template``)
    is compared by cosine with each country's vector (same template); P@1 = the share of
    capitals whose nearest country is theirs. ``mode``: ``"none"`` (no knowledge), ``"kbert"``
    (the triple ``capital of <country>`` injected with soft positions and the visible matrix),
    ``"naive"`` (injected as plain text: hard positions, full attention). ``shuffle_seed``
    injects *wrong* countries (a derangement) -- does the model follow the knowledge base?"""
    import torch

    from .knowledge import encode_tree, kbert_hidden, piece_tree

    if mode not in ("none", "kbert", "naive"):
        raise ValueError(f"mode must be 'none', 'kbert' or 'naive', got {mode!r}")
    c = encoder.config
    pieces = lambda w, _i: wordpiece.ids(w) or [c.unk_id]
    one = lambda t, _i: [int(t)]
    facts = list(pairs)
    if shuffle_seed is not None:
        rng = np.random.default_rng(shuffle_seed)
        perm = rng.permutation(len(facts))
        while (perm == np.arange(len(facts))).any():
            perm = rng.permutation(len(facts))
        facts = [(a, pairs[j][1]) for (a, _), j in zip(pairs, perm)]

    def vec(word: str, kb) -> torch.Tensor:
        words = template.format(word).split()
        tree, _ = piece_tree(words, kb, pieces)
        enc = encode_tree(tree, one, c.cls_id, c.sep_id, soft=mode != "naive", visible=mode != "naive")
        h = kbert_hidden(encoder, enc)[0]
        at = words.index(word)
        last = max(k for k, wi in enumerate(tree.source) if wi == at)
        return h[last + 1]  # +1: [CLS]

    countries = torch.stack([vec(b, {}) for _, b in pairs])
    right = 0
    for (a, gold), (_, injected) in zip(pairs, facts):
        kb = {} if mode == "none" else {a.lower(): [(relation, injected)]}
        sims = torch.nn.functional.cosine_similarity(vec(a, kb)[None], countries)
        right += int([b for _, b in pairs][int(sims.argmax())] == (injected if shuffle_seed is not None else gold))
    return right / len(pairs)


def knowledge_noise(encoder, wordpiece, sentences: Sequence[Sequence[str]], kb) -> pd.DataFrame:
    """Mean trunk drift (cosine distance of the other words' last-layer vectors) when the
    knowledge base's triples are injected, naive vs K-BERT, over sentences with an entity."""
    from .knowledge import trunk_drift

    c = encoder.config
    pieces = lambda w, _i: wordpiece.ids(w) or [c.unk_id]
    rows = []
    for s in sentences:
        if not any(w.lower() in kb for w in s):
            continue
        rows.append({"naive injection": trunk_drift(encoder, s, kb, pieces, c.cls_id, c.sep_id, False, False),
                     "K-BERT": trunk_drift(encoder, s, kb, pieces, c.cls_id, c.sep_id, True, True)})
    if not rows:
        raise ValueError("no sentence mentions an entity of the knowledge base")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------- diagram


def draw_probe(ax=None):
    """Frozen layers feed a probe; the same probe is trained on the task and on its control."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 5)
    ax.axis("off")

    def box(x, y, w, h, text, color):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", fc=color, ec="#333"))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9)

    ax.text(1.4, 0.25, "the  cat  sat  on  the  mat", ha="center", fontsize=9)
    for k in range(4):
        box(0.2, 0.7 + k * 1.0, 2.4, 0.7, "embeddings (layer 0)" if k == 0 else f"layer {k} (frozen)", "#dde8f5")
    for k in range(4):
        ax.annotate("", xy=(4.0, 2.4), xytext=(2.65, 1.05 + k * 1.0), arrowprops={"arrowstyle": "->", "color": "#777"})
    box(4.0, 2.0, 2.2, 0.8, "probe f(h)\nlinear or MLP", "#fde2c8")
    box(7.0, 3.0, 2.8, 0.8, "task: DT NN VBD IN DT NN", "#d9f0d3")
    box(7.0, 1.0, 2.8, 0.8, "control: 7 3 12 3 7 40\n(one random label per type)", "#eeeeee")
    ax.annotate("", xy=(7.0, 3.4), xytext=(6.25, 2.55), arrowprops={"arrowstyle": "->"})
    ax.annotate("", xy=(7.0, 1.4), xytext=(6.25, 2.25), arrowprops={"arrowstyle": "->"})
    ax.text(8.4, 2.4, "selectivity =\ntask acc - control acc", ha="center", fontsize=9)
    return ax


# --------------------------------------------------------------------------------- running table

ROW_NAMES = {"random vectors": "random vectors (one per word type)", "MiniLM": "all-MiniLM-L6-v2, layer 3 (our BertEncoder)"}


def add_probing_rows(table, token_tables: Mapping[str, pd.DataFrame], struct: pd.DataFrame,
                     seconds: Mapping[str, float] | None = None, source: str = "notebooks/11_probing.ipynb"):
    """One row per representation: linear-probe accuracy and selectivity per token task, and the
    structural probe's best-layer UUAS. Returns ``table``."""
    reps = list(dict.fromkeys(token_tables[next(iter(token_tables))].representation))
    for rep in reps:
        scores: dict[str, float | None] = {}
        for task, frame in token_tables.items():
            r = frame[(frame.representation == rep) & (frame.probe == "linear")].iloc[0]
            scores[f"{task} acc"] = float(r["task acc"])
            scores[f"{task} sel"] = float(r["selectivity"])
        s = struct[struct.representation == rep]
        scores["UUAS"] = float(s.UUAS.max()) if len(s) else None
        meta = {"probe": "linear", "uuas_layer": int(s.layer[s.UUAS.idxmax()]) if len(s) else None}
        chapter = "11"
        for key, ch in (("PPMI", "01b"), ("skip-gram", "03"), ("fastText", "04a")):
            if rep.startswith(key):
                chapter = ch
        table.add(ROW_NAMES.get(rep, rep), chapter="11", scores=scores, source=source,
                  train_time_s=(seconds or {}).get(rep), meta={**meta, "from_chapter": chapter})
    return table


def run_small_layers(tasks: Mapping[str, TokenTask], reps: Sequence[str], config: ProbeConfig | None = None,
                     seeds: Sequence[int] = (0, 1, 2), n_boot: int = 1000,
                     spreads: dict | None = None) -> pd.DataFrame:
    """:func:`run_layer_probes` for each representation in ``reps`` (the book's own small models),
    one frame indexed by ``(representation, task)``; ``spreads``, if given, receives each
    representation's spreads under its name."""
    frames = []
    for rep in reps:
        frame, sp = run_layer_probes(tasks, rep, config, seeds, n_boot)
        frames.append(frame.assign(representation=rep))
        if spreads is not None:
            spreads[rep] = sp
    return pd.concat(frames, ignore_index=True).set_index(["representation", "task"])


def add_layer_rows(table, frame: pd.DataFrame, source: str = "notebooks/11_probing.ipynb"):
    """One ``probing`` row per representation of :func:`run_small_layers`' frame: the best single
    layer's linear-probe accuracy per task (no control task: selectivity is left empty)."""
    for rep in dict.fromkeys(frame.index.get_level_values(0)):
        f = frame.loc[rep]
        layers = [c for c in f.columns if c.startswith("L") and c[1:].isdigit()]
        scores = {f"{task} acc": float(f.loc[task, layers].max()) for task in f.index}
        meta = {"probe": "linear", "best_layer": {t: int(f.loc[t, "best layer"]) for t in f.index},
                "expected_layer": {t: float(f.loc[t, "expected layer"]) for t in f.index}}
        table.add(rep, chapter="11", scores=scores, source=source, meta=meta)
    return table
