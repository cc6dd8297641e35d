"""Chapter 8b's experiments: the encoder--decoder objectives side by side at equal compute.

The notebook ``08b_encoder_decoder_objectives.ipynb`` imports everything from here:

* :class:`Sizes` / :func:`sizes` -- the run's sizes per ``BOOK_SCALE``;
* :func:`load_corpus` -- chapter 7's Part II corpus and byte-level BPE through the harness's
  :func:`~.harness.build_corpus` (sentinels included);
* :func:`denoising_objectives` / :func:`pretrain_all` / :func:`pretrain_frame` -- BART's five
  noisings, BART's final combination, T5, MASS and an encoder-only MLM, each pre-trained on the
  same rows with the same FLOPs budget;
* :func:`translation_data` / :func:`finetune_translation` / :func:`translation_scores` -- the
  generation task (Multi30k en->de): every pre-trained network (and a fresh one) fine-tuned alike,
  scored by per-token loss on the test targets and BLEU;
* :func:`loss_claims` -- paired bootstrap intervals of loss differences;
* :func:`draw_noisings`, :func:`draw_unilm_masks`, :func:`draw_encoder_decoder` -- the figures.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from matplotlib.patches import FancyBboxPatch

from ..scale import pick
from ..train import TrainConfig, fit
from ..transformer.bert import BertForPreTraining
from .bart import BART, NOISINGS, EncoderMaskedLM, noise, sentence_end_flags
from .harness import (
    Corpus,
    ModelSize,
    Objective,
    PretrainResult,
    Vocab,
    build_corpus,
    heldout_loss,
    pretrain,
)
from .mass import MASS
from .noising_widget import noising_html, noising_widget
from .seq2seq import FlopSeq2Seq, Seq2Seq, pad_rows, shift_right
from .t5 import T5SpanCorruption, span_corruption
from .unilm import MODES, UniLM, UniLMSeq2Seq, unilm_mask


@dataclass(frozen=True)
class Sizes:
    """Everything that changes with ``BOOK_SCALE``."""

    vocab_size: int
    tokenizer_chars: int
    corpus_chars: int
    heldout_docs: int
    size: ModelSize
    batch_size: int
    lr: float
    budget_steps: int        # the FLOPs budget: this many steps of BART (the costliest objective)
    gen_train: int           # Multi30k training pairs
    gen_test: int            # Multi30k test pairs
    gen_steps: int           # fine-tuning steps on the generation task
    gen_lr: float
    n_bleu: int              # test pairs translated greedily for BLEU
    glue_train: int | None   # GLUE-lite training examples per task for text-to-text fine-tuning
    glue_epochs: int
    seeds: tuple[int, ...]   # pre-training (and fine-tuning) seeds
    n_boot: int


def sizes(scale: str | None = None) -> Sizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``). ``gpu`` is a preset for one GPU (unrun)."""
    return pick(
        ci=Sizes(512, 60_000, 100_000, 10, ModelSize(32, 1, 2, 64, 35), 16, 2e-3, 3, 200, 30, 4, 2e-3, 10, 48,
                 1, (0,), 200),
        # laptop and gpu: chapter 8a's vocabulary, corpus slice and model size
        # the laptop budget is about half the pre-training and generation steps 8a would suggest:
        # ten objectives x two seeds must fit a few CPU minutes (400 test pairs, BLEU on 60 of them)
        laptop=Sizes(2048, 500_000, 400_000, 60, ModelSize(64, 2, 4, 256, 48), 16, 2e-3, 50, 1500, 400, 50,
                     1e-3, 60, 200, 1, (0, 1), 1000),
        gpu=Sizes(8192, 5_000_000, 50_000_000, 2000, ModelSize(256, 4, 4, 1024, 128), 64, 5e-4, 5000, 29_000,
                  1000, 3000, 3e-4, 1000, None, 3, (0, 1, 2), 2000),
        scale=scale)


# ------------------------------------------------------------------------------ corpus and objectives


def load_corpus(s: Sizes) -> tuple[Corpus, torch.Tensor]:
    """Chapter 7's Part II corpus, BPE and rows (``s.size.row_len`` tokens), and the
    sentence-end flags of the vocabulary."""
    from ..data.lm_corpora import load_pretraining_corpus
    from ..transformer.chapter7b import corpus_slice

    docs = load_pretraining_corpus("train")
    held = [" ".join(d) for d in load_pretraining_corpus("heldout")[: s.heldout_docs]]
    corpus = build_corpus(corpus_slice(docs, s.corpus_chars), held, vocab_size=s.vocab_size,
                          row_len=s.size.row_len, tokenizer_texts=corpus_slice(docs, s.tokenizer_chars))
    return corpus, sentence_end_flags(corpus.tokenizer)


def denoising_objectives(vocab: Vocab, is_end: torch.Tensor, s: Sizes | None = None) -> dict[str, Objective]:
    """The table's rows: each BART noising alone, BART's final infilling + permutation, T5's
    span corruption, MASS, UniLM and the encoder-only MLM (names are the objectives' own).
    UniLM's position table holds ``2 * max_len + 2`` positions (``s``'s model size): a source and
    a target of ``max_len`` tokens each when it is fine-tuned as a sequence-to-sequence model."""
    s = s or sizes()
    objs: list[Objective] = [BART(vocab, (n,), is_end=is_end) for n in NOISINGS]
    objs += [BART(vocab, ("text infilling", "sentence permutation"), is_end=is_end,
                  name="BART: infilling + permutation"), T5SpanCorruption(vocab), MASS(vocab),
             UniLM(vocab, max_len=2 * s.size.max_len + 2), EncoderMaskedLM(vocab)]
    return {o.name: o for o in objs}


def flops_budget(objective: Objective, s: Sizes) -> float:
    """``s.budget_steps`` steps of ``objective``'s model at ``s``'s sizes, in FLOPs."""
    from .harness import model_flops

    model = objective.build_model(s.size, objective.vocab.size)
    return model_flops(model, s.budget_steps * s.batch_size * s.size.row_len)


def pretrain_all(objectives: dict[str, Objective], corpus: Corpus, s: Sizes, budget: float,
                 seed: int = 0, device: str | None = None) -> dict[str, PretrainResult]:
    """Every objective on the same rows with the same budget and seed."""
    return {name: pretrain(o, corpus.rows, s.size, corpus.vocab.size, flops_budget=budget, batch_size=s.batch_size,
                           lr=s.lr, seed=seed, device=device) for name, o in objectives.items()}


def pretrain_frame(runs: Sequence[dict[str, PretrainResult]], extra: dict[str, list[float]] | None = None
                   ) -> pd.DataFrame:
    """One line per objective: steps, corpus tokens, FLOPs, wall s, tokens/s, batch-making share,
    first and last training loss (mean over seeds) and any ``extra`` columns (mean over seeds)."""
    rows = {}
    for name in runs[0]:
        rs = [r[name] for r in runs]
        rows[name] = {"steps": rs[0].steps, "tokens": rs[0].tokens, "TFLOPs": rs[0].flops / 1e12,
                      "wall s": np.mean([r.wall_s for r in rs]), "tokens/s": np.mean([r.tokens_per_s for r in rs]),
                      "batch %": 100 * np.mean([r.batch_share for r in rs]),
                      "first loss": np.mean([r.losses[0] for r in rs]), "last loss": np.mean([r.final_loss() for r in rs])}
        for col, vals in (extra or {}).items():
            if name in vals:
                rows[name][col] = float(np.mean(vals[name]))
    return pd.DataFrame(rows).T.round(3)


def reconstruction_losses(runs: dict[str, PretrainResult], corpus: Corpus, is_end: torch.Tensor,
                          max_rows: int = 128) -> dict[str, float]:
    """Zero-shot: each pre-trained network's loss at rebuilding held-out rows corrupted by BART's
    text infilling (teacher-forced, per token). A network whose decoder was never trained cannot."""
    probe = BART(corpus.vocab, ("text infilling",), is_end=is_end)
    rows = corpus.heldout[:max_rows]
    return {name: heldout_loss(probe, r.model, rows, batch_size=min(64, len(rows)))
            for name, r in runs.items() if isinstance(r.model, Seq2Seq)}


# ------------------------------------------------------------------------------ the generation task


def translation_data(tok, vocab: Vocab, s: Sizes, max_len: int) -> dict[str, list[tuple[list[int], list[int]]]]:
    """Multi30k en->de as token ids with chapter 7's English BPE: ``{"train", "test"}`` lists of
    ``(source ids, target ids + [SEP])``, both cut to ``max_len``."""
    from ..data.parallel import load_multi30k

    data = load_multi30k("en", "de")
    out = {}
    for split, n in (("train", s.gen_train), ("test", s.gen_test)):
        out[split] = [(tok.encode_ordinary(a)[:max_len], [*tok.encode_ordinary(b)[: max_len - 1], vocab.sep])
                      for a, b in data[split][:n]]
    return out


def _pair_batch(pairs, vocab: Vocab) -> dict[str, torch.Tensor]:
    src, src_mask = pad_rows([a for a, _ in pairs], max(len(a) for a, _ in pairs), vocab.pad)
    tgt, tgt_mask = pad_rows([b for _, b in pairs], max(len(b) for _, b in pairs), vocab.pad)
    tgt_out = tgt.masked_fill(tgt_mask == 0, -100)
    return {"src": src, "src_mask": src_mask, "tgt_in": shift_right(tgt_out, vocab.cls, vocab.pad), "tgt_out": tgt_out}


def finetune_translation(model: Seq2Seq, data: dict, vocab: Vocab, s: Sizes, seed: int = 0,
                         device: str | None = None) -> Seq2Seq:
    """A copy of ``model`` trained ``s.gen_steps`` steps (batches of ``s.batch_size`` pairs,
    shuffled per epoch) on ``data["train"]``."""
    net = copy.deepcopy(model)
    train = data["train"]

    def batches(epoch: int) -> list[dict[str, torch.Tensor]]:
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed * 1000 + epoch)).tolist()
        return [_pair_batch([train[j] for j in order[i:i + s.batch_size]], vocab)
                for i in range(0, len(order) - s.batch_size + 1, s.batch_size)]

    n_epochs = -(-s.gen_steps // max(1, len(train) // s.batch_size))
    cfg = TrainConfig(epochs=n_epochs, max_steps=s.gen_steps, lr=s.gen_lr, optimizer="adamw", weight_decay=0.01,
                      seed=seed, device=device, progress=False)
    fit(net, batches, config=cfg, loss_fn=lambda m, b: m.loss(b))
    return net.eval()


@torch.no_grad()
def target_nll(model: Seq2Seq, pairs, vocab: Vocab, batch_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Per test pair: the summed NLL (nats) of its target tokens given its source, and their number."""
    model.eval()
    nll, n = [], []
    dev = model.device
    for i in range(0, len(pairs), batch_size):
        b = {k: v.to(dev) for k, v in _pair_batch(pairs[i:i + batch_size], vocab).items()}
        logits = model(b["src"], b["tgt_in"], b["src_mask"])
        tok = F.cross_entropy(logits.transpose(1, 2), b["tgt_out"], ignore_index=-100, reduction="none")
        keep = b["tgt_out"] != -100
        nll.append((tok * keep).sum(1).cpu())
        n.append(keep.sum(1).cpu())
    return torch.cat(nll).double().numpy(), torch.cat(n).numpy()


def bleu(model: Seq2Seq, tok, pairs, max_new: int, batch_size: int = 64) -> float:
    """Corpus BLEU (sacrebleu) of greedy translations of ``pairs`` against their references."""
    import sacrebleu

    model.eval()
    hyps, refs = [], []
    c = model.config
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i:i + batch_size]
        src, mask = pad_rows([a for a, _ in chunk], max(len(a) for a, _ in chunk), c.pad_id)
        out = model.generate(src.to(model.device), max_new, mask.to(model.device)).cpu().tolist()
        for row, (_, ref) in zip(out, chunk):
            row = row[: row.index(c.eos_id)] if c.eos_id in row else row
            hyps.append(tok.decode([t for t in row if t != c.pad_id]))
            refs.append(tok.decode(ref[:-1]))
    return float(sacrebleu.corpus_bleu(hyps, [refs]).score)


def fresh_model(objective: Objective, s: Sizes, vocab_size: int, seed: int) -> Seq2Seq:
    """An untrained network of ``objective``'s architecture (the "no pre-training" row)."""
    torch.manual_seed(seed)
    return objective.build_model(s.size, vocab_size)


def translation_scores(models: dict[str, Seq2Seq], data: dict, tok, vocab: Vocab, s: Sizes, seed: int = 0,
                       device: str | None = None) -> dict[str, dict]:
    """Fine-tune every model alike on the translation task (a UniLM network through
    :class:`~.unilm.UniLMSeq2Seq`); per model: per-pair NLL and token
    counts on the test set, loss per token, perplexity, BLEU (on the first ``s.n_bleu`` test pairs)
    and fine-tuning seconds."""
    out = {}
    n_bleu = s.n_bleu
    max_new = max(len(b) for _, b in data["test"][:n_bleu])
    for name, m in models.items():
        if isinstance(m, BertForPreTraining):  # UniLM: one stack, generating through its seq2seq mask
            m = UniLMSeq2Seq(m, vocab)
        t0 = time.perf_counter()
        net = finetune_translation(m, data, vocab, s, seed=seed, device=device)
        secs = time.perf_counter() - t0
        nll, n = target_nll(net, data["test"], vocab)
        out[name] = {"nll": nll, "n": n, "loss": float(nll.sum() / n.sum()), "ppl": float(np.exp(nll.sum() / n.sum())),
                     "bleu": bleu(net, tok, data["test"][:n_bleu], max_new), "seconds": secs}
    return out


def loss_claims(results: Sequence[dict[str, dict]], pairs: dict[str, tuple[str, str]], n_boot: int = 1000,
                seed: int = 0) -> pd.DataFrame:
    """For each ``label -> (a, b)``: the difference of test loss per token ``a - b`` (mean over
    seeds), a paired bootstrap 95 % interval over test pairs (the same resample for both, each side
    averaged over its seeds), the per-seed differences, and the verdict ("a lower" when the whole
    interval is below 0)."""
    rng = np.random.default_rng(seed)
    n_test = len(results[0][next(iter(results[0]))]["n"])
    idx = rng.integers(0, n_test, (n_boot, n_test))
    rows = {}
    for label, (a, b) in pairs.items():
        def per_token(name: str, i: np.ndarray) -> np.ndarray:
            return np.mean([r[name]["nll"][i].sum(-1) / r[name]["n"][i].sum(-1) for r in results], axis=0)

        diffs = per_token(a, idx) - per_token(b, idx)
        seeds = [r[a]["loss"] - r[b]["loss"] for r in results]
        lo, hi = np.percentile(diffs, [2.5, 97.5])
        rows[label] = {"difference": float(np.mean(seeds)), "95% low": lo, "95% high": hi,
                       "seed min": min(seeds), "seed max": max(seeds)}
    frame = pd.DataFrame(rows).T.round(3)
    frame["verdict"] = np.where(frame["95% high"] < 0, "a lower",
                                np.where(frame["95% low"] > 0, "b lower", "not significant"))
    return frame


def translation_frame(results: Sequence[dict[str, dict]]) -> pd.DataFrame:
    """Test loss per token, perplexity and BLEU per model: mean over seeds (and the seeds' sd)."""
    rows = {}
    for name in results[0]:
        loss = [r[name]["loss"] for r in results]
        rows[name] = {"loss": np.mean(loss), "loss sd": np.std(loss, ddof=1) if len(loss) > 1 else np.nan,
                      "perplexity": np.mean([r[name]["ppl"] for r in results]),
                      "BLEU": np.mean([r[name]["bleu"] for r in results])}
    return pd.DataFrame(rows).T.round(3)


# ------------------------------------------------------------------------------ T5 text to text, architectures


def t5_glue(models: dict[str, Seq2Seq], corpus: Corpus, tasks: dict, s: Sizes, seeds: Sequence[int],
            device: str | None = None, scoring: str = "rank"
            ) -> tuple[dict[str, list[dict[str, np.ndarray]]], pd.DataFrame]:
    """Text-to-text fine-tuning of each model on every GLUE-lite task, once per seed:
    ``({model: [{task: test predictions} per seed]}, valid-label shares in % per model and task)``
    (the first is what :func:`companion.transformer.chapter7b.glue_frame` scores).

    ``scoring="rank"``: predictions by rank classification (:func:`~.t5.rank_predictions`: the
    allowed output with the highest ``P(y | x)``), so every prediction is a label; the valid share
    says how often the *free* greedy generation named one. ``scoring="generate"``: the greedy
    generation is the prediction, and one that names no label counts as wrong (T5's rule): it is
    set to ``(gold + 1) % n_classes``, a valid class index that every metric scores as an error."""
    from .t5 import finetune_text_to_text

    results, invalid = {}, {}
    for name, m in models.items():
        runs = []
        for seed in seeds:
            preds = {}
            for t, task in tasks.items():
                preds[t], invalid[(name, t, seed)] = finetune_text_to_text(
                    m, corpus.tokenizer, corpus.vocab, task, epochs=s.glue_epochs, lr=s.gen_lr,
                    batch_size=s.batch_size, max_train=s.glue_train, seed=seed, device=device, scoring=scoring)
                if not task.regression:
                    gold = np.array([int(e.label) for e in task.test])
                    preds[t] = np.where(preds[t] < 0, (gold + 1) % len(task.label_names), preds[t])
            runs.append(preds)
        results[name] = runs
    valid = 100 - pd.Series(invalid).groupby(level=[0, 1]).mean().unstack().mul(100)
    return results, valid.round(1)


def architecture_runs(corpus: Corpus, s: Sizes, budget: float, seed: int = 0,
                      device: str | None = None) -> dict[str, dict[str, float]]:
    """T5's architecture comparison at one FLOPs budget: each architecture's parameters, steps,
    wall seconds and held-out loss per target token (the same splits for all three)."""
    from .prefix_lm import ARCHITECTURES

    out = {}
    for name, cls in ARCHITECTURES.items():
        obj = cls(corpus.vocab)
        r = pretrain(obj, corpus.rows, s.size, corpus.vocab.size, flops_budget=budget, batch_size=s.batch_size,
                     lr=s.lr, seed=seed, device=device)
        out[name] = {"parameters": sum(p.numel() for p in r.model.parameters()), "steps": r.steps,
                     "wall s": r.wall_s, "held-out loss": heldout_loss(obj, r.model, corpus.heldout[:256],
                                                                       batch_size=64)}
    return out


# ------------------------------------------------------------------------------ figures


def _strip(ax, y: float, tokens: Sequence[str], colors: Sequence[str], label: str) -> None:
    ax.text(-0.2, y, label, ha="right", va="center", fontsize=8)
    x = 0.0
    for t, c in zip(tokens, colors):
        w = max(0.5, 0.13 * len(t) + 0.25)
        ax.add_patch(FancyBboxPatch((x, y - 0.3), w - 0.08, 0.6, boxstyle="round,pad=0.02", fc=c, ec="0.5", lw=0.5))
        ax.text(x + (w - 0.08) / 2, y, t, ha="center", va="center", fontsize=7)
        x += w


def noised_words(words: Sequence[str], seed: int = 0, rate: float = 0.3) -> dict[str, list[int]]:
    """Each of BART's noisings applied to a list of words (a word ending in ``.``, ``!`` or ``?``
    ends a sentence): ``{noising: positions}`` where a position indexes ``words`` and -1 is a
    ``[MASK]``. One generator, seeded once, is used for the five in turn."""
    n = len(words)
    is_end = torch.tensor([w[-1:] in (".", "!", "?") for w in words], dtype=torch.bool)
    g = torch.Generator().manual_seed(seed)
    return {name: noise(list(range(n)), (name,), _IndexVocab(), is_end, g, rate) for name in NOISINGS}


def noising_frame(words: Sequence[str], seed: int = 0, rate: float = 0.3) -> pd.DataFrame:
    """The noised texts of :func:`noised_words`, one line each (original on top)."""
    lines = {"original": " ".join(words)}
    for name, pos in noised_words(words, seed, rate).items():
        lines[name] = " ".join("[MASK]" if p < 0 else words[p] for p in pos)
    return pd.DataFrame({"encoder input": lines})


def draw_noisings(words: Sequence[str], seed: int = 0, rate: float = 0.3):
    """BART's five noisings of ``words`` as token strips (original on top). Grey: ``[MASK]``;
    each sentence keeps its colour, so permutation and rotation show as moved blocks."""
    sent_of, k = [], 0
    for w in words:
        sent_of.append(k)
        k += w[-1:] in (".", "!", "?")
    palette = ["#dbe9f6", "#fde2c8", "#d9f0d3", "#f6d5e5", "#eeeeee"]
    lines = [("original", list(range(len(words)))), *noised_words(words, seed, rate).items()]
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(lines) + 0.3))
    for row, (name, pos) in enumerate(lines):
        toks = ["[MASK]" if p < 0 else words[p] for p in pos]
        cols = ["#9e9e9e" if p < 0 else palette[sent_of[p] % len(palette)] for p in pos]
        _strip(ax, -row, toks, cols, name)
    width = max(sum(max(0.5, 0.13 * len("[MASK]" if p < 0 else words[p]) + 0.25) for p in pos) for _, pos in lines)
    width = max(width + 0.5, 8)
    ax.set_xlim(-3.2, width)
    ax.set_ylim(-len(lines) + 0.4, 0.6)
    ax.axis("off")
    return fig


class _IndexVocab:
    """Noising positions instead of ids: the mask "id" is -1."""

    mask = -1


def span_corruption_words(words: Sequence[str], seed: int = 0, density: float = 0.15) -> pd.DataFrame:
    """One T5 span corruption of a list of words (sentinels shown as ``<X0>``, ``<X1>`` ...; the
    end token as ``</s>``), and the row rebuilt from the two (:func:`~.t5.uncorrupt`)."""
    from .t5 import uncorrupt

    n = len(words)
    sentinels = list(range(n, n + 16))
    inp, tgt = span_corruption(list(range(n)), sentinels, -1, torch.Generator().manual_seed(seed), density)

    def show(ids):
        return " ".join("</s>" if i < 0 else (f"<X{i - n}>" if i >= n else words[i]) for i in ids)

    back = uncorrupt(inp, tgt, sentinels, -1)
    return pd.DataFrame({"text": [show(inp), show(tgt), show(back)]}, index=["input", "target", "rebuilt"])


def draw_unilm_masks(T: int = 8, src_len: int = 4):
    """UniLM's masks side by side (rows: queries; dark: may attend)."""
    fig, axes = plt.subplots(1, len(MODES), figsize=(2.4 * len(MODES), 2.6))
    for ax, mode in zip(axes, MODES):
        m = unilm_mask(mode, T, src_len if mode == "seq2seq" else None)
        ax.imshow(m.float().numpy(), cmap="Greys", vmin=0, vmax=1)
        ax.set_title(mode, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        if mode == "seq2seq":
            ax.axhline(src_len - 0.5, color="tab:orange", lw=1)
            ax.axvline(src_len - 0.5, color="tab:orange", lw=1)
    axes[0].set_ylabel("query")
    return fig


def draw_encoder_decoder(ax=None):
    """The encoder--decoder: the encoder reads the corrupted text bidirectionally, the decoder
    writes the original left to right, reading the encoder through cross-attention."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.8))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")

    def box(x, y, w, h, text, color):
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=color, ec="0.3"))
        ax.text(x, y, text, ha="center", va="center", fontsize=9)

    box(2.5, 1.0, 4.0, 0.8, "corrupted: the [MASK] sat on the mat", "#f2f2f2")
    box(2.5, 4.6, 4.0, 3.8, "encoder\nN x (bidirectional self-attention\n+ MLP)", "#dbe9f6")
    box(7.5, 1.0, 4.0, 0.8, "[CLS] the cat sat on the", "#f2f2f2")
    box(7.5, 4.6, 4.0, 3.8, "decoder\nN x (causal self-attention\n+ cross-attention + MLP)", "#fde2c8")
    box(7.5, 7.7, 4.0, 0.8, "tied output layer", "#d9f0d3")
    box(7.5, 9.1, 4.0, 0.8, "the cat sat on the mat", "#f2f2f2")
    for x, (y1, y2) in ((2.5, (1.4, 2.7)), (7.5, (1.4, 2.7)), (7.5, (6.5, 7.3)), (7.5, (8.1, 8.7))):
        ax.annotate("", (x, y2), (x, y1), arrowprops={"arrowstyle": "->", "color": "0.3"})
    ax.annotate("", (5.5, 4.6), (4.5, 4.6), arrowprops={"arrowstyle": "->", "color": "tab:orange", "lw": 2})
    ax.text(5.0, 5.0, "memory\n(keys, values)", ha="center", fontsize=8, color="tab:orange")
    return ax


__all__ = [
    "FlopSeq2Seq",
    "Sizes",
    "bleu",
    "denoising_objectives",
    "draw_encoder_decoder",
    "draw_noisings",
    "draw_unilm_masks",
    "finetune_translation",
    "flops_budget",
    "fresh_model",
    "load_corpus",
    "loss_claims",
    "noising_html",
    "noising_widget",
    "pretrain_all",
    "pretrain_frame",
    "reconstruction_losses",
    "sizes",
    "span_corruption_words",
    "target_nll",
    "translation_data",
    "translation_frame",
    "translation_scores",
]
