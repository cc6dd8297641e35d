"""The map: every model of the book on the four axes of Qiu et al.'s (2020) survey of pre-trained
models -- representation type, architecture, pre-training task type, extension -- with a link to
its chapter and the scores the book measured for it (read from the running tables).

:data:`MODELS` places each model by what it *is*; :func:`scores_for` joins the stored rows of the
running tables (``companion/evaluate/rows/*.json``) by table and model-name prefix;
:func:`map_html` writes a self-contained interactive chart (inline SVG drawn by a few lines of
JavaScript, no network, no library), and :func:`map_frame` the same content as a table.

The survey's axes describe *pre-trained* word representations; the book also has models that
came before (counts, n-gram LMs), sentence encoders, and ways to adapt a model (chapter 10).
They are placed on the same axes with values the survey does not have, each said as such in
:data:`AXES`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

AXES: dict[str, tuple[str, ...]] = {
    "representation": ("none (a language model)", "non-contextual", "sentence vectors (ours)", "contextual"),
    "architecture": ("counts / matrix factorisation", "shallow neural (MLP, log-bilinear)", "LSTM",
                     "Transformer encoder", "Transformer decoder", "Transformer (encoder-decoder)"),
    "task": ("count statistics", "supervised", "LM", "MLM", "Seq2Seq MLM", "PLM", "DAE", "CTL"),
    "extension": ("none", "knowledge-enriched", "multilingual", "language-specific", "compression",
                  "adaptation (survey section 6)"),
}

# notebooks of the book (fixed names, also for chapters still being written)
CHAPTER_PAGES: dict[str, str] = {
    "01a": "01a_ngram_models", "01b": "01b_count_vectors", "02": "02_neural_lm", "03": "03_word2vec",
    "04a": "04a_glove_fasttext", "04b": "04b_evaluating_embeddings", "05": "05_sentence_embeddings",
    "06a": "06a_rnn_lms_ulmfit", "06b": "06b_cove_elmo", "07a": "07a_attention_transformer",
    "07b": "07b_gpt_bert", "08a": "08a_encoder_objectives", "08b": "08b_encoder_decoder_objectives",
    "09": "09_compression_scaling", "10a": "10a_transfer", "10b": "10b_prompting", "11": "11_probing",
    "11b": "11b_multilingual",
}


@dataclass(frozen=True)
class ScoreRef:
    """Where a model's score lives: ``table``, a row whose model name starts with ``prefix``,
    the score ``column`` and how the map labels it."""

    table: str
    prefix: str
    column: str
    label: str


@dataclass(frozen=True)
class MapModel:
    name: str
    year: int
    chapter: str
    representation: str
    architecture: str
    task: str
    extension: str = "none"
    scores: tuple[ScoreRef, ...] = field(default_factory=tuple)
    note: str = ""

    def __post_init__(self) -> None:
        for axis, values in AXES.items():
            if getattr(self, axis) not in values:
                raise ValueError(f"{self.name}: {axis}={getattr(self, axis)!r} is not one of {values}")
        if self.chapter not in CHAPTER_PAGES:
            raise ValueError(f"{self.name}: unknown chapter {self.chapter!r}; known: {sorted(CHAPTER_PAGES)}")


_PPL = "brown_ppl"
_N, _NC, _SV, _C = AXES["representation"]
_CNT, _SH, _LSTM, _ENC, _DEC, _ED = AXES["architecture"]

MODELS: tuple[MapModel, ...] = (
    MapModel("Kneser-Ney 5-gram", 1995, "01a", _N, _CNT, "count statistics",
             scores=(ScoreRef(_PPL, "modified KN, n = 5", "test", "Brown test ppl"),)),
    MapModel("Brown clusters", 1992, "01a", _NC, _CNT, "count statistics",
             scores=(ScoreRef(_PPL, "class bigram (Brown clusters", "test", "Brown test ppl (class LM)"),)),
    MapModel("PPMI + SVD / LSA", 1990, "01b", _NC, _CNT, "count statistics",
             scores=(ScoreRef("probing", "PPMI+SVD", "POS acc", "POS probe acc (ch. 11)"),)),
    MapModel("NNLM (Bengio et al.)", 2003, "02", _NC, _SH, "LM",
             scores=(ScoreRef(_PPL, "NNLM, tree (d=60", "test", "Brown test ppl"),)),
    MapModel("LBL (Mnih & Hinton)", 2007, "02", _NC, _SH, "LM",
             scores=(ScoreRef(_PPL, "LBL, tree", "test", "Brown test ppl"),)),
    MapModel("SENNA (Collobert & Weston)", 2008, "02", _NC, _SH, "CTL", note="ranking loss: a real window vs a corrupted one"),
    MapModel("CBOW", 2013, "03", _NC, _SH, "CTL", note="the survey files CBOW with negative sampling under CTL"),
    MapModel("skip-gram", 2013, "03", _NC, _SH, "CTL",
             scores=(ScoreRef("probing", "skip-gram", "POS acc", "POS probe acc (ch. 11)"),)),
    MapModel("GloVe", 2014, "04a", _NC, _CNT, "count statistics", note="weighted least squares on log counts",
             scores=(ScoreRef("sentence", "mean GloVe 6B 50d", "MR", "MR acc (mean vectors, ch. 5)"),)),
    MapModel("fastText", 2017, "04a", _NC, _SH, "CTL",
             scores=(ScoreRef("probing", "fastText", "POS acc", "POS probe acc (ch. 11)"),)),
    MapModel("doc2vec / FastSent / DAN", 2014, "05", _SV, _SH, "CTL"),
    MapModel("skip-thoughts / quick-thoughts", 2015, "05", _SV, _LSTM, "CTL", note="predict (skip-thoughts) or pick (quick-thoughts) the neighbouring sentence"),
    MapModel("SDAE", 2016, "05", _SV, _LSTM, "DAE"),
    MapModel("InferSent / GenSen", 2017, "05", _SV, _LSTM, "supervised"),
    MapModel("all-MiniLM-L6-v2", 2020, "05", _SV, _ENC, "CTL", "compression",
             note="distilled MiniLM, then contrastive sentence-pair training",
             scores=(ScoreRef("sentence", "all-MiniLM-L6-v2 (sentence-transformers)", "MR", "MR acc (ch. 5)"),
                     ScoreRef("probing", "all-MiniLM-L6-v2", "POS acc", "POS probe acc, best layer (ch. 11)"))),
    MapModel("AWD-LSTM / ULMFiT", 2018, "06a", _C, _LSTM, "LM"),
    MapModel("context2vec", 2016, "06a", _C, _LSTM, "CTL"),
    MapModel("CoVe", 2017, "06b", _C, _LSTM, "supervised", note="the encoder of an English-German translation model"),
    MapModel("ELMo", 2018, "06b", _C, _LSTM, "LM",
             scores=(ScoreRef("probing", "ELMo (ch. 6)", "POS acc", "POS probe acc, best layer (ch. 11)"),)),
    MapModel("Transformer (Vaswani et al.)", 2017, "07a", _N, _ED, "supervised"),
    MapModel("GPT", 2018, "07b", _C, _DEC, "LM",
             scores=(ScoreRef(_PPL, "GPT, byte-BPE", "test", "Brown test ppl (per word)"),
                     ScoreRef("glue_lite", "GPT (no aux LM)", "avg", "GLUE-lite avg"),
                     ScoreRef("probing", "GPT (ch. 7)", "POS acc", "POS probe acc, best layer (ch. 11)"))),
    MapModel("BERT", 2018, "07b", _C, _ENC, "MLM",
             scores=(ScoreRef("glue_lite", "BERT, d=128", "avg", "GLUE-lite avg"),
                     ScoreRef("probing", "BERT (ch. 7)", "POS acc", "POS probe acc, best layer (ch. 11)"))),
    MapModel("RoBERTa (dynamic masking)", 2019, "08a", _C, _ENC, "MLM"),
    MapModel("SpanBERT / MacBERT", 2019, "08a", _C, _ENC, "MLM"),
    MapModel("ERNIE (Baidu, entity masking)", 2019, "08a", _C, _ENC, "MLM", "language-specific"),
    MapModel("ALBERT (SOP, shared layers)", 2019, "08a", _C, _ENC, "CTL", "compression"),
    MapModel("XLNet", 2019, "08a", _C, _ENC, "PLM"),
    MapModel("ELECTRA", 2020, "08a", _C, _ENC, "CTL", note="replaced-token detection"),
    MapModel("MASS", 2019, "08b", _C, _ED, "Seq2Seq MLM"),
    MapModel("UniLM", 2019, "08b", _C, _ENC, "LM", note="one encoder, three attention masks"),
    MapModel("BART", 2019, "08b", _C, _ED, "DAE"),
    MapModel("T5", 2019, "08b", _C, _ED, "Seq2Seq MLM"),
    MapModel("DistilBERT-style distillation", 2019, "09", _C, _ENC, "MLM", "compression"),
    MapModel("pruning / quantization", 2019, "09", _C, _ENC, "MLM", "compression"),
    MapModel("fine-tuning (ULMFiT tricks, multi-task)", 2018, "10a", _C, _ENC, "MLM", "adaptation (survey section 6)"),
    MapModel("adapters / LoRA / BitFit / prefix", 2019, "10a", _C, _ENC, "MLM", "adaptation (survey section 6)"),
    MapModel("prompts / PET / LM-BFF / AutoPrompt", 2020, "10b", _C, _ENC, "MLM", "adaptation (survey section 6)"),
    MapModel("tiny mBERT / XLM (English + Chinese)", 2019, "11b", _C, _ENC, "MLM", "multilingual",
             note="one WordPiece vocabulary over both languages; XLM adds translation-LM rows",
             scores=(ScoreRef("probing", "EN+ZH MLM (ch. 11b)", "xling AUC", "zero-shot sentiment AUC en→zh (ch. 11b)"),
                     ScoreRef("probing", "EN+ZH MLM+TLM (ch. 11b)", "Tatoeba P@1", "Tatoeba P@1 %, with TLM (ch. 11b)"))),
    MapModel("K-BERT (visible matrix)", 2019, "11", _C, _ENC, "MLM", "knowledge-enriched",
             note="knowledge injected at input time into a small BERT of this chapter"),
)


def chapter_written(chapter: str, notebooks: str | Path | None = None) -> bool:
    """Whether the chapter's notebook exists in ``notebooks`` (default: the repository's)."""
    root = Path(notebooks) if notebooks is not None else Path(__file__).resolve().parents[2] / "notebooks"
    return (root / f"{CHAPTER_PAGES[chapter]}.ipynb").is_file()


def scores_for(model: MapModel, tables: Mapping[str, Sequence] | None = None,
               scale: str = "laptop") -> dict[str, float]:
    """The model's measured scores: for each :class:`ScoreRef`, the first stored row (at
    ``scale``) of its table whose name starts with the prefix. ``tables`` maps a table name to
    its rows (default: the running tables as stored)."""
    from ..evaluate.tables import RunningTable

    out: dict[str, float] = {}
    for ref in model.scores:
        if tables is not None:
            rows = tables.get(ref.table, [])
        else:
            try:
                rows = RunningTable(ref.table).rows()
            except (KeyError, ValueError, FileNotFoundError):
                rows = []
        for r in rows:
            if r.scale == scale and r.model.startswith(ref.prefix) and r.scores.get(ref.column) is not None:
                out[ref.label] = float(r.scores[ref.column])
                break
    return out


def map_records(tables: Mapping[str, Sequence] | None = None, scale: str = "laptop",
                notebooks: str | Path | None = None) -> list[dict]:
    """One dict per model: its axes, chapter, link, whether the chapter is written, scores."""
    out = []
    for m in MODELS:
        d = {k: v for k, v in asdict(m).items() if k != "scores"}
        d["page"] = CHAPTER_PAGES[m.chapter] + ".html"
        d["written"] = chapter_written(m.chapter, notebooks)
        d["scores"] = scores_for(m, tables, scale)
        out.append(d)
    return out


def map_frame(records: Sequence[dict]) -> pd.DataFrame:
    """The map as a table (what the chart shows, for readers without JavaScript)."""
    rows = []
    for r in records:
        scores = "; ".join(f"{k} {v:g}" for k, v in r["scores"].items())
        rows.append({"model": r["name"], "year": r["year"], "ch.": r["chapter"],
                     **{a: r[a] for a in AXES},
                     "measured": scores or ("not measured" if r["written"] else "chapter not yet written")})
    return pd.DataFrame(rows)


_JS = r"""
(function(){
const root=document.getElementById(__ID__), AX=__AXES__, D=__DATA__;
const colors=["#999","#1b9e77","#d95f02","#7570b3","#e7298a","#66a61e","#e6ab02","#a6761d"];
const sel=(n,v)=>{const s=document.createElement("select");for(const a of Object.keys(AX)){const o=document.createElement("option");o.value=a;o.text=n+": "+a;if(a===v)o.selected=true;s.appendChild(o);}s.onchange=draw;root.querySelector(".ctl").appendChild(s);return s;};
const sx=sel("x","architecture"), sy=sel("y","task"), sc=sel("colour","representation");
const tip=root.querySelector(".tip"), svg=root.querySelector("svg");
function esc(t){return String(t).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));}
function draw(){
 const X=AX[sx.value], Y=AX[sy.value], C=AX[sc.value], W=980, cw=(W-200)/X.length, rh=64, H=40+rh*Y.length+30;
 svg.setAttribute("viewBox","0 0 "+W+" "+H); svg.setAttribute("height",H); let s="";
 Y.forEach((y,j)=>{s+=`<text x="195" y="${40+rh*j+rh/2}" text-anchor="end" font-size="11">${esc(y)}</text><line x1="200" x2="${W}" y1="${40+rh*j}" y2="${40+rh*j}" stroke="#ddd"/>`;});
 X.forEach((x,i)=>{s+=`<text x="${200+cw*i+cw/2}" y="28" text-anchor="middle" font-size="10">${esc(x)}</text><line y1="35" y2="${H-30}" x1="${200+cw*i}" x2="${200+cw*i}" stroke="#ddd"/>`;});
 const cell={};
 D.forEach((d,k)=>{const i=X.indexOf(d[sx.value]), j=Y.indexOf(d[sy.value]), key=i+","+j, n=(cell[key]=(cell[key]||0)+1)-1;
  const cx=200+cw*i+12+(n%6)*((cw-20)/6), cy=40+rh*j+16+Math.floor(n/6)*22, col=colors[C.indexOf(d[sc.value])%colors.length];
  const r=Object.keys(d.scores).length?7:5, dash=d.written?"":' stroke-dasharray="2,2"';
  s+=`<a href="${esc(d.page)}"><circle data-k="${k}" cx="${cx}" cy="${cy}" r="${r}" fill="${d.written?col:"#fff"}" stroke="${col}" stroke-width="2"${dash}/></a>`;});
 C.forEach((c,i)=>{s+=`<circle cx="${210+i*150}" cy="${H-12}" r="5" fill="${colors[i%colors.length]}"/><text x="${220+i*150}" y="${H-8}" font-size="10">${esc(c)}</text>`;});
 svg.innerHTML=s;
 svg.querySelectorAll("circle[data-k]").forEach(el=>{el.onmouseenter=()=>{const d=D[+el.dataset.k];
  const sc=Object.entries(d.scores).map(([a,b])=>esc(a)+": <b>"+b+"</b>").join("<br>")||(d.written?"no score in the running tables":"chapter not yet written");
  tip.innerHTML=`<b>${esc(d.name)}</b> (${d.year}) &middot; chapter ${esc(d.chapter)}<br>${Object.keys(AX).map(a=>esc(a)+": "+esc(d[a])).join("<br>")}<br>${sc}${d.note?"<br><i>"+esc(d.note)+"</i>":""}`;};});
}
draw();
})();
"""


def map_html(records: Sequence[dict], element_id: str = "ptm-map") -> str:
    """A self-contained chart (one ``<div>`` with inline SVG and script; nothing is fetched).
    Choose which axes go on x, y and colour; hover a model for its scores; click for its chapter.
    Filled circles: chapter written; dashed: not yet; larger: has measured scores."""
    if not element_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"element_id must be letters, digits, - and _, got {element_id!r}")
    data = json.dumps(list(records), ensure_ascii=True).replace("</", "<\\/")
    js = _JS.replace("__ID__", json.dumps(element_id)).replace("__AXES__", json.dumps(AXES)).replace("__DATA__", data)
    return (f'<div id="{html.escape(element_id)}" style="font-family:sans-serif">'
            f'<div class="ctl" style="margin-bottom:4px"></div>'
            f'<svg width="100%" role="img" aria-label="the book\'s models on the survey\'s four axes"></svg>'
            f'<div class="tip" style="min-height:6em;font-size:12px;border-top:1px solid #ccc;padding:4px">'
            f'hover a model</div><script>{js}</script></div>')
