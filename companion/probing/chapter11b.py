"""Chapter 11b's experiments and figure, so the notebook's cells stay short.

* :func:`prepare` -- the data and the shared vocabulary (:class:`Setup`);
* :func:`pretrain_all` -- the models: untrained, masked LM per seed, masked LM + translation LM;
* :func:`evaluate` -- transfer (four directions) and Tatoeba retrieval of one model, one layer;
* :func:`transfer_frame` / :func:`retrieval_frame` -- the tables;
* :func:`draw_shared_vocab` -- the chapter's diagram; :func:`retrieval_widget` -- "try it".
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..transformer.chapter7b import smooth
from . import multilingual as ml

__all__ = ["RetrievalPicker", "Setup", "add_rows", "draw_shared_vocab", "evaluate", "prepare", "pretrain_all",
           "retrieval_frame", "retrieval_widget", "smooth", "spread", "transfer_frame"]

DIRECTIONS = (("en", "zh"), ("zh", "en"), ("en", "en"), ("zh", "zh"))
NAMES = {"en": "SST-2 (en)", "zh": "ChnSentiCorp (zh)"}


@dataclass
class Setup:
    sizes: ml.Sizes
    train_pairs: list[tuple[str, str]]   # Tatoeba pairs whose sides enter pre-training (unpaired)
    test_pairs: list[tuple[str, str]]    # held-out pairs for retrieval
    english: list[str]
    chinese: list[str]
    tok: object
    sentiment: dict
    seconds: float


def prepare(s: ml.Sizes) -> Setup:
    """Tatoeba split, both corpora, the shared WordPiece vocabulary and the sentiment samples."""
    t0 = time.process_time()
    train_pairs, test_pairs = ml.tatoeba_split(s.n_pairs)
    en = ml.english_text(s.en_chars, train_pairs)
    zh = ml.chinese_text(s.zh_chars, train_pairs)
    tok = ml.train_tokenizer(en, zh, s.vocab_size)
    test_pairs = [(ml.normalize(a), ml.normalize(b)) for a, b in test_pairs]
    sent = ml.sentiment_data(s.n_train, s.n_test)
    return Setup(s, train_pairs, test_pairs, en, zh, tok, sent, time.process_time() - t0)


def pretrain_all(setup: Setup, device: str | None = None) -> dict[str, ml.Pretrained]:
    """``{"untrained": ..., "MLM seed 0": ..., ..., "MLM+TLM seed 0": ...}``."""
    s = setup.sizes
    args = (setup.tok, setup.english, setup.chinese, s)
    out = {"untrained": ml.pretrain_mlm(*args, seed=s.seeds[0], steps=0)}
    for seed in s.seeds:
        out[f"MLM seed {seed}"] = ml.pretrain_mlm(*args, seed=seed, device=device)
    out[f"MLM+TLM seed {s.seeds[0]}"] = ml.pretrain_mlm(*args, seed=s.seeds[0], device=device,
                                                        pairs=setup.train_pairs)
    return out


@dataclass
class Evaluation:
    transfer: dict[tuple[str, str], dict[str, float]]  # direction -> acc, auc, auc_lo, auc_hi
    hits: np.ndarray                                     # Tatoeba en->zh precision@1 per query
    hits_back: np.ndarray                                # zh->en
    layer_p1: list[float]                                # en->zh P@1 % per layer
    vectors: dict = field(repr=False, default_factory=dict)


def evaluate(model, setup: Setup, layer: int, n_boot: int = 1000) -> Evaluation:
    """Zero-shot transfer and retrieval from mean-pooled ``layer`` vectors, each language
    centred on its own mean (no labels of the target language are used)."""
    tok, sent = setup.tok, setup.sentiment
    vec = {lang: {sp: ml.sentence_vectors(model, tok, sent[lang][sp][0]) for sp in ("train", "test")}
           for lang in ("en", "zh")}
    res = {}
    for a, b in DIRECTIONS:
        score = ml.fit_logreg(ml.center(vec[a]["train"][layer]), sent[a]["train"][1])(
            ml.center(vec[b]["test"][layer]))
        y = sent[b]["test"][1]
        rng = np.random.default_rng(0)
        boots = []
        for _ in range(n_boot):
            i = rng.integers(0, len(y), len(y))
            if 0 < y[i].sum() < len(i):
                boots.append(ml.auc(score[i], y[i]))
        res[(a, b)] = {"acc": 100 * float(((score > 0) == y).mean()), "auc": 100 * ml.auc(score, y),
                       "auc_lo": 100 * float(np.percentile(boots, 2.5)),
                       "auc_hi": 100 * float(np.percentile(boots, 97.5))}
    A = ml.sentence_vectors(model, tok, [en for en, _ in setup.test_pairs])
    B = ml.sentence_vectors(model, tok, [zh for _, zh in setup.test_pairs])
    per_layer = [100 * float(ml.retrieval(ml.center(a), ml.center(b)).mean()) for a, b in zip(A, B)]
    hits = ml.retrieval(ml.center(A[layer]), ml.center(B[layer]))
    back = ml.retrieval(ml.center(B[layer]), ml.center(A[layer]))
    return Evaluation(res, hits, back, per_layer, {"en": A[layer], "zh": B[layer]})


def transfer_frame(evals: Mapping[str, Evaluation]) -> pd.DataFrame:
    """AUC % (and accuracy) of each model in each direction; chance is 50 on both test sets."""
    rows = []
    for name, ev in evals.items():
        for (a, b), r in ev.transfer.items():
            rows.append({"model": name, "train": NAMES[a], "test": NAMES[b],
                         "zero-shot": a != b, "acc %": round(r["acc"], 1), "AUC %": round(r["auc"], 1),
                         "AUC 95% interval": f"{r['auc_lo']:.1f}-{r['auc_hi']:.1f}"})
    return pd.DataFrame(rows)


def retrieval_frame(evals: Mapping[str, Evaluation], overlap: np.ndarray, n_boot: int = 1000) -> pd.DataFrame:
    """Tatoeba precision@1 % both ways, with a bootstrap interval over queries, the token-overlap
    baseline and chance."""
    rows = []
    for name, hits in [*((k, (e.hits, e.hits_back)) for k, e in evals.items()), ("token overlap", (overlap, None))]:
        m, lo, hi = ml.bootstrap_ci(hits[0], n_boot)
        rows.append({"model": name, "en→zh P@1 %": round(100 * m, 2),
                     "95% interval": f"{100 * lo:.2f}-{100 * hi:.2f}",
                     "zh→en P@1 %": None if hits[1] is None else round(100 * float(hits[1].mean()), 2)})
    n = len(overlap)
    rows.append({"model": "chance (1 / pairs)", "en→zh P@1 %": round(100 / n, 2), "95% interval": "",
                 "zh→en P@1 %": round(100 / n, 2)})
    return pd.DataFrame(rows)


def spread(evals: Mapping[str, Evaluation], prefix: str, direction: tuple[str, str]) -> tuple[float, float]:
    """Mean and standard deviation over the seeds' models named ``prefix seed N``."""
    v = [e.transfer[direction]["auc"] for k, e in evals.items() if k.startswith(prefix + " seed")]
    return float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0


ROWS = {"EN+ZH MLM (ch. 11b)": "MLM seed", "EN+ZH MLM+TLM (ch. 11b)": "MLM+TLM seed"}


def add_rows(table, models: Mapping[str, ml.Pretrained], evals: Mapping[str, Evaluation],
             source: str = "notebooks/11b_multilingual.ipynb"):
    """The first seed's MLM and the MLM+TLM model as rows of the ``probing`` table: zero-shot
    AUC % (en->zh) and Tatoeba precision@1 %. Returns ``table``."""
    for name, prefix in ROWS.items():
        key = next(k for k in models if k.startswith(prefix))
        ev, m = evals[key], models[key]
        scores = {"xling AUC": round(ev.transfer[("en", "zh")]["auc"], 1),
                  "Tatoeba P@1": round(100 * float(ev.hits.mean()), 2)}
        table.add(name, chapter="11b", scores=scores, train_time_s=round(m.cpu_seconds, 1), source=source,
                  params=sum(p.numel() for p in m.model.parameters()), meta={"seed": key, "steps": len(m.losses)})
    return table


# ---------------------------------------------------------------------------------- diagram


def _box(ax, x, y, w, h, text, color, fontsize=9):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=color, ec="black", lw=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def draw_shared_vocab(ax=None):
    """Two monolingual corpora, one WordPiece vocabulary (shared anchors in the middle), one
    BERT trained by masked LM; a classifier trained on English vectors is applied to Chinese."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 5)
    ax.axis("off")
    _box(ax, 0.1, 3.6, 2.6, 1.0, "English text\n(no translations)", "#dbe9f6")
    _box(ax, 0.1, 0.4, 2.6, 1.0, "Chinese text\n(no translations)", "#fde2d2")
    _box(ax, 3.4, 1.6, 2.4, 1.8, "one WordPiece vocabulary\nEnglish pieces | Chinese characters\n"
         "shared: 0-9 , . ? ! ( )\nLatin names", "#eeeeee", 8)
    _box(ax, 6.5, 1.6, 1.5, 1.8, "BERT\n(chapter 7)\nmasked LM", "#e3f1df")
    _box(ax, 8.4, 3.4, 1.5, 1.2, "classifier\ntrained on\nEnglish", "#dbe9f6", 8)
    _box(ax, 8.4, 0.4, 1.5, 1.2, "applied to\nChinese\n(zero-shot)", "#fde2d2", 8)
    for (x0, y0), (x1, y1) in (((2.7, 4.1), (3.4, 3.0)), ((2.7, 0.9), (3.4, 2.0)), ((5.8, 2.5), (6.5, 2.5)),
                               ((8.0, 3.0), (8.4, 3.9)), ((8.0, 2.0), (8.4, 1.1))):
        ax.annotate("", (x1, y1), (x0, y0), arrowprops={"arrowstyle": "->", "lw": 1.2})
    ax.text(5.0, 4.6, "mBERT's recipe: the only bridge between the languages is what the vocabulary "
            "shares", ha="center", fontsize=9, style="italic")
    return ax


# ----------------------------------------------------------------------------------- widget


@dataclass
class RetrievalPicker:
    """A sentence box, a slider for ``k`` and the ``k`` nearest sentences of the other language."""

    model: object
    tok: object
    pools: dict            # language -> (texts, vectors)
    layer: int
    sentence: object
    k: object
    output: object
    box: object
    calls: int = 0

    def answer(self, query: str, k: int) -> str:
        """The HTML for ``query``: raises ``ValueError`` for an empty query or a bad ``k``."""
        src, dst = ("zh", "en") if ml.is_chinese(query) else ("en", "zh")
        texts, vecs = self.pools[dst]
        got = ml.nearest_translations(query, self.model, self.tok, texts, vecs, self.layer, vecs.mean(0),
                                      self.pools[src][1].mean(0), k)
        items = "".join(f"<li>{html.escape(t)} <small>(cos {c:.3f})</small></li>" for t, c in got)
        return f"<p>{src} → {dst}, the {k} nearest of {len(texts)} sentences:</p><ol>{items}</ol>"

    def update(self, *_: object) -> None:
        """Re-render from the controls; a bad input is shown as a message, not raised."""
        self.calls += 1
        try:
            self.output.value = self.answer(self.sentence.value, int(self.k.value))
        except ValueError as err:
            self.output.value = f"<p><b>Cannot search:</b> {html.escape(str(err))}</p>"

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def retrieval_widget(model, setup: Setup, vectors: Mapping[str, np.ndarray], layer: int,
                     sentence: str = "I like to read books.", k: int = 5) -> RetrievalPicker:
    """Controls: an English or Chinese sentence and ``k``; the pool is the Tatoeba test pairs."""
    import ipywidgets as w

    pools = {"en": ([a for a, _ in setup.test_pairs], vectors["en"]),
             "zh": ([b for _, b in setup.test_pairs], vectors["zh"])}
    s = w.Text(value=sentence, description="sentence", continuous_update=False, layout=w.Layout(width="60%"))
    kk = w.IntSlider(value=k, min=1, max=10, description="k")
    out = w.HTML()
    picker = RetrievalPicker(model, setup.tok, pools, layer, s, kk, out, w.VBox([s, kk, out]))
    for control in (s, kk):
        control.observe(picker.update, names="value")
    picker.update()
    return picker


