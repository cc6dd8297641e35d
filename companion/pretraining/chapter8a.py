"""Chapter 8a's bookkeeping: sizes per scale, the objectives of the table, the runs, the table,
the claims and the figures. The models and objectives themselves live in :mod:`.harness`,
:mod:`.mlm`, :mod:`.sentence_tasks`, :mod:`.albert`, :mod:`.xlnet` and :mod:`.electra`.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.patches import FancyBboxPatch

from ..scale import get_scale, pick  # noqa: F401 (get_scale: the notebook's, with smooth)
from ..transformer.bert import BertForPreTraining
from ..transformer.chapter7b import smooth  # noqa: F401
from .albert import AlbertObjective
from .electra import ElectraObjective
from .harness import (
    Corpus,
    FineTune,
    MaskedLM,
    ModelSize,
    Objective,
    PretrainResult,
    build_corpus,
    count_parameters,
    finetune_glue,
    flop_parameters,
    heldout_loss,
    model_flops,
    pretrain,
)
from .mlm import EntityMLM, MacBERTMLM, SpanMLM, StaticMLM, WholeWordMLM
from .sentence_tasks import SentenceTask
from .xlnet import PermutationLM, two_stream_masks


@dataclass(frozen=True)
class Sizes:
    """Everything that changes with ``BOOK_SCALE``."""

    vocab_size: int
    tokenizer_chars: int
    corpus_chars: int
    heldout_chars: int
    max_rows: int            # rows of the pre-training corpus kept (a small corpus: several epochs)
    size: ModelSize
    batch_size: int
    steps: int               # the budget: FLOPs of this many steps of the plain masked LM
    lr: float
    seeds: tuple[int, ...]   # pre-training seeds of the objectives the claims compare
    ft: FineTune
    n_boot: int


def sizes(scale: str | None = None) -> Sizes:
    """The run at ``scale`` (default ``BOOK_SCALE``); ``gpu`` is a preset, written but not run."""
    return pick(
        # ci: 6 steps and 48 fine-tuning examples (12 and 100 before chapter 8a's Chinese section)
        ci=Sizes(512, 200_000, 300_000, 30_000, 600, ModelSize(32, 2, 2, 128, 32), 16, 6, 2e-3, (0,),
                 FineTune(1, 1e-3, 32, 48), 100),
        laptop=Sizes(2048, 500_000, 400_000, 60_000, 1500, ModelSize(64, 2, 4, 256, 48), 32, 90, 1e-3,
                     (0, 1, 2), FineTune(1, 1e-3, 32, 400), 300),
        gpu=Sizes(8192, 5_000_000, 50_000_000, 500_000, 400_000, ModelSize(256, 4, 4, 1024, 128), 128, 10_000,
                  5e-4, (0, 1, 2), FineTune(3, 1e-4, 32, None), 1000),
        scale=scale)


def load_corpus(s: Sizes) -> Corpus:
    """Chapter 7's pre-training corpus (training and held-out documents), our byte-level BPE
    with ``s.vocab_size`` ids, rows of ``s.size.row_len`` tokens (the first ``s.max_rows``)."""
    from ..data.lm_corpora import load_pretraining_corpus
    from ..transformer.chapter7b import corpus_slice

    train, held = load_pretraining_corpus("train"), load_pretraining_corpus("heldout")
    corpus = build_corpus(corpus_slice(train, s.corpus_chars), corpus_slice(held, s.heldout_chars),
                          vocab_size=s.vocab_size, row_len=s.size.row_len,
                          tokenizer_texts=corpus_slice(train, s.tokenizer_chars))
    corpus.rows = corpus.rows[: s.max_rows]
    return corpus


# the objectives the claims compare, each pre-trained with every seed of Sizes.seeds
CLAIMS = {
    "dynamic - static masking": ("MLM (dynamic)", "MLM (static)"),
    "no NSP - NSP": ("MLM, two segments, no NSP", "MLM + NSP"),
    "ELECTRA - MLM": ("ELECTRA (RTD)", "MLM (dynamic)"),
    "span + SBO - token masking": ("Span + SBO", "MLM (dynamic)"),
}


def objectives(corpus: Corpus, similar: torch.Tensor) -> dict[str, Objective]:
    """Every encoder objective of the chapter, in the table's order."""
    v = corpus.vocab
    objs = [MaskedLM(v), StaticMLM(v), WholeWordMLM(v), EntityMLM(v), SpanMLM(v), MacBERTMLM(v, similar),
            SentenceTask(v, "nsp"), SentenceTask(v, "sop"), SentenceTask(v, "none"),
            AlbertObjective(v, embedding_size=16, share=True), PermutationLM(v), ElectraObjective(v)]
    return {o.name: o for o in objs}


def flops_budget(corpus: Corpus, s: Sizes) -> float:
    """The FLOPs of ``s.steps`` steps of the plain masked LM at ``s.size``: every objective gets this."""
    torch.manual_seed(0)
    m = MaskedLM(corpus.vocab).build_model(s.size, corpus.vocab.size)
    return model_flops(m, s.steps * s.batch_size * s.size.row_len) * 1.001


def warm_up(corpus: Corpus, s: Sizes) -> None:
    """Two untimed steps first: a process's first timed model ran slow in chapter 2 (thread pools
    and allocators warming up), which would be charged to whichever objective comes first."""
    pretrain(MaskedLM(corpus.vocab), corpus.rows, s.size, corpus.vocab.size,
             flops_budget=flops_budget(corpus, s) * 2 / s.steps, batch_size=s.batch_size, lr=s.lr)


def seeds_for(name: str, s: Sizes) -> tuple[int, ...]:
    """Every seed for the objectives the claims compare, the first seed for the rest."""
    return s.seeds if any(name in pair for pair in CLAIMS.values()) else s.seeds[:1]


@dataclass
class Run:
    """One pre-training run and its evaluations."""

    result: PretrainResult
    seed: int
    heldout: float                 # the objective's own loss on held-out rows
    heldout_mlm: float             # token-level masked-LM loss on held-out rows (BERT-family models)
    glue: dict[str, np.ndarray]    # GLUE-lite test predictions per task
    eval_s: float


def run_objective(obj: Objective, corpus: Corpus, s: Sizes, budget: float, tasks: dict, seed: int,
                  device: str | None = None) -> Run:
    """Pre-train ``obj`` to the budget, then its held-out losses and GLUE-lite predictions."""
    res = pretrain(obj, corpus.rows, s.size, corpus.vocab.size, flops_budget=budget, batch_size=s.batch_size,
                   lr=s.lr, seed=seed, device=device or "cpu")
    t0 = time.perf_counter()
    held = heldout_loss(obj, res.model, corpus.heldout, batch_size=s.batch_size)
    mlm = float("nan")
    if isinstance(res.model, BertForPreTraining) and not isinstance(obj, MacBERTMLM):
        mlm = heldout_loss(MaskedLM(corpus.vocab), res.model, corpus.heldout, batch_size=s.batch_size)
    preds = finetune_glue(obj.encoder(res.model), corpus.tokenizer, tasks, s.ft, seeds=(seed,), device=device)[0]
    return Run(res, seed, held, mlm, preds, time.perf_counter() - t0)


def run_all(objs: dict[str, Objective], corpus: Corpus, s: Sizes, tasks: dict, device: str | None = None
            ) -> dict[str, list[Run]]:
    """Every objective with its seeds (:func:`seeds_for`), at the same FLOP budget."""
    budget = flops_budget(corpus, s)
    return {name: [run_objective(obj, corpus, s, budget, tasks, seed, device) for seed in seeds_for(name, s)]
            for name, obj in objs.items()}


def _glue_avg(preds: dict[str, np.ndarray], tasks: dict) -> float:
    from ..transformer.chapter7b import glue_scores

    return glue_scores(preds, tasks)["avg"]


TABLE_COLUMNS = ["params", "FLOP params", "steps", "GFLOP", "train loss", "held-out loss", "held-out MLM",
                 "GLUE-lite", "GLUE sd", "wall s", "tokens/s", "batch %"]


def objectives_table(runs: dict[str, list[Run]], objs: dict[str, Objective], tasks: dict) -> pd.DataFrame:
    """One line per objective (means over its seeds): parameters, FLOP parameters, tokens and
    FLOPs spent, steps, training loss (last 10 steps), held-out losses, GLUE-lite average
    (± sd over seeds), wall seconds, tokens per second, and the share of time spent making batches."""
    rows = {}
    for name, rs in runs.items():
        res = [r.result for r in rs]
        glue = [_glue_avg(r.glue, tasks) for r in rs]
        rows[name] = {
            "arch": objs[name].arch, "params": count_parameters(res[0].model),
            "FLOP params": flop_parameters(res[0].model), "steps": res[0].steps, "tokens": res[0].tokens,
            "GFLOP": res[0].flops / 1e9, "train loss": np.mean([r.final_loss(10) for r in res]),
            "held-out loss": np.mean([r.heldout for r in rs]),
            "held-out MLM": np.mean([r.heldout_mlm for r in rs]),
            "GLUE-lite": np.mean(glue), "GLUE sd": np.std(glue, ddof=1) if len(glue) > 1 else np.nan,
            "seeds": len(rs), "wall s": np.mean([r.wall_s for r in res]),
            "tokens/s": np.mean([r.tokens_per_s for r in res]),
            "batch %": 100 * np.mean([r.batch_share for r in res]),
        }
    return pd.DataFrame(rows).T


def claim_table(runs: dict[str, list[Run]], tasks: dict, n_boot: int, claims: dict = CLAIMS) -> pd.DataFrame:
    """Each claim ``a - b`` on the GLUE-lite average: the difference of seed means, the seeds'
    standard error of that difference, the paired-bootstrap 95 % interval over test examples
    (chapter 7's), and a verdict: ``holds`` only when both the interval and two standard errors
    exclude zero; ``reversed`` when both say the opposite; else ``inside the noise``. The held-out
    token-MLM loss gained by ``a`` (``b - a``: lower is better), where both models have one, with
    its seed standard error and its own verdict (``lower loss`` when it exceeds two SEs) -- a
    measure of pre-training itself, less noisy than fine-tuning at our scale."""
    from ..transformer.chapter7b import paired_bootstrap

    rows = {}
    for label, (a, b) in claims.items():
        if a not in runs or b not in runs:
            continue
        ga = np.array([_glue_avg(r.glue, tasks) for r in runs[a]])
        gb = np.array([_glue_avg(r.glue, tasks) for r in runs[b]])
        diff = ga.mean() - gb.mean()
        se = np.sqrt(ga.var(ddof=1) / len(ga) + gb.var(ddof=1) / len(gb)) if min(len(ga), len(gb)) > 1 else np.nan
        boot = paired_bootstrap([r.glue for r in runs[a]], [r.glue for r in runs[b]], tasks, n_boot=n_boot)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        ma, mb = np.array([r.heldout_mlm for r in runs[a]]), np.array([r.heldout_mlm for r in runs[b]])
        mlm = mb.mean() - ma.mean()
        mlm_se = np.sqrt(ma.var(ddof=1) / len(ma) + mb.var(ddof=1) / len(mb)) if min(len(ma), len(mb)) > 1 else np.nan
        mlm_verdict = "n/a"
        if np.isfinite(mlm):
            mlm_verdict = "inside the noise"
            if np.isfinite(mlm_se) and abs(mlm) > 2 * mlm_se:
                mlm_verdict = "lower loss" if mlm > 0 else "higher loss"
        ok_se = np.isfinite(se)
        verdict = "inside the noise"
        if lo > 0 and ok_se and diff > 2 * se:
            verdict = "holds"
        elif hi < 0 and ok_se and diff < -2 * se:
            verdict = "reversed"
        rows[label] = {"GLUE diff": diff, "seed SE": se, "95% low": lo, "95% high": hi,
                       "verdict": verdict, "MLM loss gain": mlm, "MLM SE": mlm_se, "MLM verdict": mlm_verdict,
                       "seeds": f"{len(ga)} vs {len(gb)}"}
    return pd.DataFrame(rows).T


SOURCE = "notebooks/08a_encoder_objectives.ipynb"


def _label(name: str, s: Sizes) -> str:
    z = s.size
    return f"{name}, d={z.d_model}, {z.n_layers} layers, {s.steps} MLM-step FLOPs"


def objective_row(name: str, row: pd.Series, s: Sizes) -> dict:
    """``RunningTable("objectives").add`` arguments for one line of :func:`objectives_table`."""
    def num(key):
        v = float(row[key])
        return round(v, 4) if np.isfinite(v) else None

    scores = {"GLUE-lite": num("GLUE-lite"), "GLUE sd": num("GLUE sd"), "train loss": num("train loss"),
              "held-out loss": num("held-out loss"), "held-out MLM": num("held-out MLM"),
              "GFLOP": num("GFLOP"), "tokens/s": num("tokens/s"), "batch %": num("batch %")}
    return {"model": _label(name, s), "chapter": "08a", "scores": scores, "params": int(row["params"]),
            "train_time_s": round(float(row["wall s"]), 1), "source": SOURCE,
            "meta": {"seeds": int(row["seeds"]), "steps": int(row["steps"]), "tokens": int(row["tokens"]),
                     "flop_params": int(row["FLOP params"]), "ft_train": s.ft.ft_train}}


def glue_row(name: str, runs: list[Run], tasks: dict, s: Sizes) -> dict:
    """``RunningTable("glue_lite").add`` arguments: the first seed's GLUE-lite scores."""
    from ..evaluate.glue import evaluate_glue

    report = evaluate_glue(lambda t, exs, p=runs[0].glue: p[t], tasks, name=name)
    return {"model": f"{_label(name, s)} (ours)", "chapter": "08a", "scores": report.scores(),
            "params": count_parameters(runs[0].result.model), "train_time_s": round(runs[0].result.wall_s, 1),
            "source": SOURCE, "meta": {"seeds": [runs[0].seed], "ft_train": s.ft.ft_train}}


CLAIM_KEYS = {"dynamic - static masking": "dyn", "no NSP - NSP": "nsp", "ELECTRA - MLM": "electra",
              "span + SBO - token masking": "span"}


def glue_claims(claims: pd.DataFrame) -> dict[str, float | str]:
    """Plain numbers (and verdict strings) for myst-nb's ``glue``: ``dyn_diff``, ``dyn_lo``, ..."""
    out = {}
    for label, key in CLAIM_KEYS.items():
        r = claims.loc[label]
        for col, suffix in (("GLUE diff", "diff"), ("95% low", "lo"), ("95% high", "hi"), ("seed SE", "se"),
                            ("MLM loss gain", "mlm"), ("MLM SE", "mlm_se")):
            v = float(r[col])
            out[f"{key}_{suffix}"] = round(v, 4) if np.isfinite(v) else float("nan")
        out[f"{key}_verdict"] = str(r["verdict"])
        out[f"{key}_mlm_verdict"] = str(r["MLM verdict"])
    return out


# the schemes that keep a row's layout ([CLS] row [SEP]): drawable as strips, usable in the widget
STRIP_SCHEMES = ("MLM (static)", "MLM (dynamic)", "MLM (whole word)", "MLM (entity spans)", "Span + SBO",
                 "MacBERT (similar words)", "XLNet (permutation LM)", "ELECTRA (RTD)")


# ------------------------------------------------------------------------------ figures


def mask_strips(corpus: Corpus, objs: dict[str, Objective], text: str, seed: int = 0) -> tuple[list[str], dict]:
    """The tokens of ``text`` and, per objective, which of them are chosen (or replaced) in one
    batch drawn with ``seed``: ``(tokens, {name: (chosen [T] bool, inputs [T] str)})``."""
    tok = corpus.tokenizer
    ids = torch.tensor([tok.encode_ordinary(text)])
    out = {}
    for name, obj in objs.items():
        b = obj.make_batch(ids, torch.Generator().manual_seed(seed))
        if b["labels"].shape[1] != ids.shape[1] + 2:
            raise ValueError(f"{name} does not frame a row as [CLS] row [SEP]; it cannot be drawn as a strip")
        chosen = (b["labels"][0] != -100)[1:-1]
        inputs = [tok.decode([int(i)]) for i in b["ids"][0, 1:-1]]
        out[name] = (chosen, inputs)
    return [tok.decode([int(i)]) for i in ids[0]], out


def draw_mask_strips(tokens: list[str], strips: dict, ax=None):
    """One row per scheme, one cell per token: shaded where the token is to be predicted, with
    what the model reads there."""
    if ax is None:
        _, ax = plt.subplots(figsize=(min(16, 0.75 * len(tokens) + 2.5), 0.55 * (len(strips) + 1) + 0.6))
    T = len(tokens)
    for r, (name, (chosen, inputs)) in enumerate([("text", (torch.zeros(T, dtype=torch.bool), tokens)),
                                                   *strips.items()]):
        for t in range(T):
            color = "#f4a582" if chosen[t] else ("#f7f7f7" if r else "#d1e5f0")
            ax.add_patch(plt.Rectangle((t, -r - 0.9), 0.95, 0.8, fc=color, ec="0.7"))
            ax.text(t + 0.47, -r - 0.5, inputs[t].strip() or "␣", ha="center", va="center", fontsize=7)
        ax.text(-0.2, -r - 0.5, name, ha="right", va="center", fontsize=8)
    ax.set_xlim(-0.1, T)
    ax.set_ylim(-len(strips) - 1.1, 0.1)
    ax.axis("off")
    return ax


def draw_two_stream(rank: Sequence[int], targets: Sequence[bool], labels: Sequence[str], axes=None):
    """XLNet's content and query masks for one factorisation order (rows attend to columns)."""
    rank_t = torch.tensor([list(rank)])
    content, query = two_stream_masks(rank_t, torch.tensor([list(targets)]))
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    order = " → ".join(labels[i] for i in torch.tensor(rank).argsort().tolist())
    for ax, m, title in ((axes[0], content[0], "content stream h: rank[j] ≤ rank[i]"),
                         (axes[1], query[0], "query stream g: rank[j] < rank[i]")):
        ax.imshow(m.float().numpy(), cmap="Greys", vmin=0, vmax=1.3)
        ax.set_xticks(range(len(labels)), labels, fontsize=8, rotation=90)
        ax.set_yticks(range(len(labels)), [f"{lab} ({'predict' if t else 'context'})"
                                           for lab, t in zip(labels, targets)], fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("attends to (key)")
    axes[0].figure.suptitle(f"factorisation order: {order}", fontsize=9)
    return axes


def _box(ax, x, y, w, h, text, color, fontsize=9):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=color, ec="0.3"))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def draw_electra(ax=None):
    """ELECTRA: masked input -> small generator (MLM, samples) -> corrupted input ->
    discriminator -> original / replaced for every token; the embeddings shared."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6)
    ax.axis("off")
    words = ["the", "chef", "cooked", "the", "meal"]
    masked = ["the", "[MASK]", "[MASK]", "the", "meal"]
    sampled = ["the", "chef", "ate", "the", "meal"]
    verdict = ["original", "original", "replaced", "original", "original"]
    for i in range(5):
        x = 0.9 + 0.55 * i
        ax.text(x, 5.4, words[i], ha="center", fontsize=8)
        ax.text(x, 4.6, masked[i], ha="center", fontsize=7, color="C3" if masked[i] == "[MASK]" else "k")
        x2 = 5.8 + 0.75 * i
        ax.text(x2, 4.6, sampled[i], ha="center", fontsize=8, color="C3" if sampled[i] != words[i] else "k")
        ax.text(x2, 1.0, verdict[i], ha="center", fontsize=7, color="C3" if verdict[i] == "replaced" else "C2")
    _box(ax, 2.0, 3.0, 2.8, 1.1, "generator\n(small masked LM,\nsamples a token)", "#dbe9f6")
    _box(ax, 7.3, 3.0, 3.6, 1.1, "discriminator\n(full-size encoder:\noriginal or replaced?)", "#fde2c8")
    _box(ax, 4.65, 1.6, 1.9, 0.7, "shared\nembeddings", "#d9f0d3", 8)
    ax.annotate("", (2.0, 3.6), (2.0, 4.4), arrowprops={"arrowstyle": "->"})
    ax.annotate("", (5.8, 4.45), (3.4, 3.1), arrowprops={"arrowstyle": "->"})
    ax.annotate("", (7.3, 3.6), (7.3, 4.4), arrowprops={"arrowstyle": "->"})
    ax.annotate("", (7.3, 1.25), (7.3, 2.4), arrowprops={"arrowstyle": "->"})
    for x in (2.0, 7.3):
        ax.plot([4.65, x], [1.95, 2.45], ":", color="0.4")
    ax.text(2.0, 1.9, "L_MLM (masked 15 %)", ha="center", fontsize=8)
    ax.text(7.3, 0.45, "λ · L_RTD over every token, λ = 50", ha="center", fontsize=8)
    ax.text(4.6, 3.9, "sample", fontsize=8, rotation=22)
    return ax


# ------------------------------------------------------------------------------ try it


def mask_html(corpus: Corpus, objs: dict[str, Objective], text: str, scheme: str, seed: int = 0) -> str:
    """The widget's callback: ``text`` as the model reads it under ``scheme`` (chosen tokens
    highlighted, with what replaced them), or a message when the input is bad."""
    try:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the text is empty: type a sentence")
        if scheme not in objs:
            raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(objs)}")
        n = len(corpus.tokenizer.encode_ordinary(text))
        if n > corpus.rows.shape[1]:
            raise ValueError(f"the text is {n} tokens; the models read rows of {corpus.rows.shape[1]}: shorten it")
        if n < 4:
            raise ValueError("type at least four tokens")
        tokens, strips = mask_strips(corpus, {scheme: objs[scheme]}, text, seed)
    except ValueError as err:
        return f"<p><b>Cannot mask:</b> {html.escape(str(err))}</p>"
    chosen, inputs = strips[scheme]
    cells = []
    for t, tok in enumerate(tokens):
        if chosen[t]:
            shown = html.escape(inputs[t]) if inputs[t] != tok else "(kept)"
            cells.append(f"<span style='background:#f4a582'>{html.escape(tok)}→{shown}</span>")
        else:
            cells.append(html.escape(tok))
    share = float(chosen.float().mean())
    return f"<p>{' '.join(cells)}</p><p>{int(chosen.sum())} of {len(tokens)} tokens to predict ({share:.0%})</p>"


@dataclass
class MaskWidget:
    """A text box, a scheme menu and a seed slider; the output shows the masked text."""

    corpus: Corpus
    objs: dict
    text: object
    scheme: object
    seed: object
    output: object
    box: object
    calls: int = 0

    def update(self, *_: object) -> None:
        self.calls += 1
        self.output.value = mask_html(self.corpus, self.objs, self.text.value, self.scheme.value,
                                      int(self.seed.value))

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def mask_widget(corpus: Corpus, objs: dict[str, Objective], text: str) -> MaskWidget:
    """Try every masking scheme on your own sentence, with any seed."""
    import ipywidgets as w

    t = w.Text(value=text, description="text", continuous_update=False, layout={"width": "90%"})
    s = w.Dropdown(options=list(objs), description="scheme")
    k = w.IntSlider(value=0, min=0, max=20, description="seed")
    out = w.HTML()
    mw = MaskWidget(corpus, objs, t, s, k, out, w.VBox([t, w.HBox([s, k]), out]))
    for control in (t, s, k):
        control.observe(mw.update, names="value")
    mw.update()
    return mw


def neighbours(tok, similar: torch.Tensor, words: Sequence[str]) -> dict[str, list[str]]:
    """MacBERT's replacement candidates of each word that is a single token of ``tok``."""
    out = {}
    for w in words:
        ids = tok.encode_ordinary(w)
        if len(ids) == 1:
            out[w] = [tok.decode([j]) for j in similar[ids[0]].tolist()]
    return out
