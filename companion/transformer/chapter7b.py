"""Chapter 7b's experiments: GPT and BERT pre-trained alike, then fine-tuned on GLUE-lite.

The notebook ``07b_gpt_bert.ipynb`` imports everything from here, so its cells stay short:

* :class:`Sizes` / :func:`sizes` -- the run's sizes per ``BOOK_SCALE`` (one place to change them);
* :func:`train_tokenizer` -- our byte-level BPE, trained on a slice of the Part II corpus, with
  the special tokens both models need; :func:`gpt_config` / :func:`bert_config` give the two
  models the **same** vocabulary, width, depth and sequence length;
* :func:`pretrain_pair` -- both models through :func:`companion.transformer.pretrain` with the
  same number of steps, rows per step and tokens per row (equal compute, up to the heads);
* :func:`brown_perplexity` -- GPT's perplexity on Bengio's Brown test split, per token and per
  word (the whole test text's NLL divided by its number of words, sentence ends not counted);
* :func:`finetune` -- one model on one GLUE-lite task (GPT with the paper's input
  transformations and, optionally, the auxiliary LM loss; BERT with ``[CLS]`` pooling);
  :func:`paired_bootstrap` -- the spread of a difference of GLUE-lite averages;
* :func:`masking_table` / :func:`masking_rates` -- BERT's 80/10/10 corruption shown and counted;
* :func:`time_generation` -- sampling with and without the KV cache;
* :func:`draw_gpt_bert` -- the two models side by side, drawn by code.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from matplotlib.patches import FancyBboxPatch

from ..checks import check_texts
from ..evaluate.glue import DISPLAY, GlueTask, main_score, task_metrics
from ..scale import pick
from ..train import History, TrainConfig, fit
from .bert import (
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    mask_tokens,
    mean_pool,
    pad_batch,
    pair_inputs,
)
from .gpt import GPT, GPTConfig, GPTForTask, task_batch
from .pretrain import pack_lm, pretrain
from .tokenizers import ByteLevelBPE

EOT = "<|endoftext|>"
SPECIALS = (EOT, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# how GPT rewrites each GLUE-lite task (Radford et al. 2018, Figure 1)
GPT_TASK = {"sst2_glue": "classification", "mrpc": "entailment", "rte": "entailment",
            "sick_e": "entailment", "stsb": "similarity"}


@dataclass(frozen=True)
class Sizes:
    """Everything that changes with ``BOOK_SCALE``."""

    vocab_size: int          # byte-level BPE tokens, specials included
    tokenizer_chars: int     # characters of the corpus the BPE is trained on
    corpus_chars: int        # characters of the corpus the models are pre-trained on
    d_model: int
    n_layer: int
    n_head: int
    block_size: int          # tokens per pre-training row (GPT's context, BERT's max length)
    batch_size: int
    steps: int               # pre-training steps, the same for both models
    lr: float
    ft_epochs: int
    ft_lr: float
    ft_batch: int
    ft_train: int | None     # training examples per GLUE-lite task (the harness's first n; None: all)
    seeds: tuple[int, ...]   # fine-tuning seeds
    brown_words: int | None  # Brown test words scored (None: all)
    n_boot: int


def sizes(scale: str | None = None) -> Sizes:
    """The sizes at ``scale`` (default ``BOOK_SCALE``). ``gpu`` is a preset for a later run on
    one GPU: a wider, deeper model, more steps, the whole Brown test split, three seeds."""
    return pick(
        ci=Sizes(512, 200_000, 400_000, 64, 2, 4, 32, 16, 40, 1e-3, 1, 1e-3, 32, None, (0,), 3_000, 200),
        laptop=Sizes(4096, 2_000_000, 2_000_000, 128, 2, 4, 64, 32, 150, 1e-3, 1, 5e-4, 32, 500, (0,), None,
                     1000),
        gpu=Sizes(8192, 20_000_000, 200_000_000, 512, 8, 8, 128, 64, 20_000, 5e-4, 3, 1e-4, 32, None,
                  (0, 1, 2), None, 2000),
        scale=scale)


# ------------------------------------------------------------------------------ tokenizer


def corpus_slice(docs: Sequence[Sequence[str]], max_chars: int, stride: int = 7) -> list[str]:
    """Documents (sentences joined by spaces) taken every ``stride``-th, then the skipped ones, until
    ``max_chars`` characters: a deterministic slice that mixes the corpus's sources."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    order = [i for r in range(stride) for i in range(r, len(docs), stride)]
    out, n = [], 0
    for i in order:
        text = " ".join(docs[i])
        if not text:
            continue
        out.append(text[: max_chars - n])
        n += len(out[-1])
        if n >= max_chars:
            break
    return out


def train_tokenizer(texts: Sequence[str], vocab_size: int) -> ByteLevelBPE:
    """Our byte-level BPE (GPT-2's recipe) trained on ``texts``, with :data:`SPECIALS`."""
    return ByteLevelBPE.train(list(texts), vocab_size, special_tokens=SPECIALS)


def gpt_config(tok: ByteLevelBPE, s: Sizes) -> GPTConfig:
    """GPT over ``tok``'s ids plus three task tokens (start, delimiter, extract) at the top."""
    return GPTConfig(vocab_size=len(tok) + 3, block_size=s.block_size, n_layer=s.n_layer, n_head=s.n_head,
                     d_model=s.d_model)


def bert_config(tok: ByteLevelBPE, s: Sizes) -> BertConfig:
    """BERT with the same vocabulary size as :func:`gpt_config` and ``tok``'s special ids."""
    sp = tok.special_tokens
    return BertConfig(vocab_size=len(tok) + 3, max_len=s.block_size, n_layer=s.n_layer, n_head=s.n_head,
                      d_model=s.d_model, pad_id=sp["[PAD]"], unk_id=sp["[UNK]"], cls_id=sp["[CLS]"],
                      sep_id=sp["[SEP]"], mask_id=sp["[MASK]"])


# ------------------------------------------------------------------------------ pre-training


@dataclass
class Pretrained:
    gpt: GPT
    bert: BertForPreTraining
    history: dict[str, History]
    tokens: dict[str, int]      # tokens fed to each model
    seconds: dict[str, float]   # wall time
    cpu_seconds: dict[str, float]


def pretrain_pair(tok: ByteLevelBPE, docs: list[list[int]], s: Sizes, seed: int = 0,
                  device: str | None = None) -> Pretrained:
    """Pre-train a GPT (next token) and a BERT (masked LM, no NSP) of the same size on the same
    token ids, with the same optimizer, steps, rows per step and tokens per row."""
    models = {"GPT": GPT(gpt_config(tok, s), seed=seed), "BERT": BertForPreTraining(bert_config(tok, s), seed=seed)}
    hist, seconds, cpu, tokens = {}, {}, {}, {}
    for name, model in models.items():
        cfg = TrainConfig(epochs=1000, max_steps=s.steps, lr=s.lr, optimizer="adamw", weight_decay=0.01,
                          seed=seed, device=device, progress=False)
        t0, c0 = time.perf_counter(), time.process_time()
        hist[name] = pretrain(model, docs, batch_size=s.batch_size, config=cfg, eos_id=tok.special_tokens[EOT])
        seconds[name], cpu[name] = time.perf_counter() - t0, time.process_time() - c0
        tokens[name] = hist[name].items
    return Pretrained(models["GPT"], models["BERT"], hist, tokens, seconds, cpu)


def smooth(xs: Sequence[float], k: int = 10) -> np.ndarray:
    """A running mean over ``k`` steps (for loss curves)."""
    x = np.asarray(xs, dtype=float)
    k = max(1, min(k, len(x)))
    return np.convolve(x, np.ones(k) / k, mode="valid")


@torch.no_grad()
def lm_nll(gpt: GPT, ids: Sequence[int], start_id: int, batch_size: int = 32) -> tuple[float, int]:
    """Summed next-token NLL (nats) of ``ids`` under ``gpt`` and the number of tokens scored.
    The text is cut into non-overlapping windows of ``block_size`` tokens, each preceded by the
    token before it (``start_id`` for the first): every token is predicted once, from between 0
    and ``block_size - 1`` tokens of context."""
    B = gpt.config.block_size
    stream = torch.tensor([start_id, *ids], dtype=torch.long)
    n = len(ids)
    gpt.eval()
    total = 0.0
    rows = [stream[i:i + B + 1] for i in range(0, n, B)]
    for i in range(0, len(rows), batch_size):
        chunk = rows[i:i + batch_size]
        L = max(len(r) for r in chunk)
        x = torch.full((len(chunk), L), start_id, dtype=torch.long)
        y = torch.full((len(chunk), L - 1), -100, dtype=torch.long)
        for j, r in enumerate(chunk):
            x[j, :len(r)] = r
            y[j, :len(r) - 1] = r[1:]
        logits = gpt(x[:, :-1].to(gpt.device))
        total += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1).to(gpt.device),
                                       ignore_index=-100, reduction="sum"))
    return total, n


def brown_perplexity(gpt: GPT, tok: ByteLevelBPE, sentences: list[list[str]],
                     n_units: int | None = None) -> dict[str, float]:
    """GPT's perplexity on Brown sentences (lists of words, joined by spaces as in pre-training).

    Per word is the whole text's NLL divided by its number of **words**: GPT never predicts the
    n-gram models' end-of-sentence symbols, so it is not credited with them. Returns the NLL,
    token and word counts, tokens per word, perplexity per token and per word
    (``exp(NLL / words)``). ``n_units`` (optional, e.g. words plus sentence ends) adds
    ``ppl_unit = exp(NLL / n_units)`` for comparison; it does not change ``ppl_word``."""
    text = " ".join(" ".join(s) for s in sentences)
    ids = tok.encode_ordinary(text)
    nll, n_tok = lm_nll(gpt, ids, tok.special_tokens[EOT])
    n_words = sum(len(s) for s in sentences)
    if n_words < 1:
        raise ValueError("brown_perplexity needs at least one word")
    out = {"nll": nll, "tokens": n_tok, "words": n_words, "tokens_per_word": n_tok / n_words,
           "ppl_token": float(np.exp(nll / n_tok)), "ppl_word": float(np.exp(nll / n_words))}
    if n_units is not None:
        out.update(units=n_units, ppl_unit=float(np.exp(nll / n_units)))
    return out


@torch.no_grad()
def heldout_losses(pre: Pretrained, docs: list[list[int]], eos_id: int, max_rows: int = 64, seed: int = 0) -> dict:
    """Held-out loss per predicted token of both models (GPT: every next token; BERT: the masked
    15 %, masks drawn once with ``seed``)."""
    gpt, bert = pre.gpt.eval(), pre.bert.eval()
    rows = pack_lm(docs, gpt.config.block_size, eos_id)[:max_rows]
    out = {"GPT": float(gpt.loss(rows))}
    c = bert.config
    body = rows[:, : c.max_len - 2]
    ids = torch.cat([torch.full((len(body), 1), c.cls_id), body, torch.full((len(body), 1), c.sep_id)], 1)
    inputs, labels = mask_tokens(ids, c, generator=torch.Generator().manual_seed(seed))
    out["BERT"] = float(bert.loss({"ids": inputs, "labels": labels}))
    return out


# ------------------------------------------------------------------------------ fine-tuning


def _truncate(a: list[int], b: list[int] | None, room: int) -> tuple[list[int], list[int] | None]:
    """Cut the longer text first (the second on a tie) until both fit in ``room`` tokens."""
    if b is None:
        return list(a[:room]), None
    la, lb = len(a), len(b)
    if la + lb > room:
        short = min(la, lb)
        if short <= room - short:  # only the longer one is cut
            la, lb = (room - lb, lb) if la > lb else (la, room - la)
        else:  # both cut to half the room
            la, lb = (room + 1) // 2, room // 2
    return list(a[:la]), list(b[:lb])


def encode_examples(tok: ByteLevelBPE, examples, max_len: int) -> list[tuple[list[int], list[int] | None]]:
    """Token ids of each example's text (and second text), truncated to leave room for three
    special tokens (GPT: start, delimiter, extract; BERT: [CLS], [SEP], [SEP])."""
    out = []
    for e in examples:
        a = tok.encode_ordinary(e.text)
        b = tok.encode_ordinary(e.text_b) if e.text_b is not None else None
        out.append(_truncate(a, b, max_len - 3))
    return out


def _label(task: GlueTask, y):
    return float(y) / 5.0 if task.regression else int(y)  # STS-B's 0-5 scores scaled to 0-1


def _gpt_batches(cfg: GPTConfig, kind: str, enc, labels, pad_id: int, bs: int, seed: int):
    def epoch(e: int) -> list[dict]:
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
        out = []
        for i in range(0, len(order), bs):
            idx = order[i:i + bs]
            exs = [(enc[j][0], labels[j]) if kind == "classification" else (enc[j][0], enc[j][1], labels[j])
                   for j in idx]
            out.append(task_batch(cfg, kind, exs, pad_id))
        return out
    return epoch


def _bert_batch(cfg: BertConfig, enc, labels=None) -> dict:
    batch = pad_batch(cfg, [pair_inputs(cfg, a, b) for a, b in enc])
    if labels is not None:
        batch["labels"] = torch.tensor(labels, dtype=torch.float if isinstance(labels[0], float) else torch.long)
    return batch


def _bert_batches(cfg: BertConfig, enc, labels, bs: int, seed: int):
    def epoch(e: int) -> list[dict]:
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
        return [_bert_batch(cfg, [enc[j] for j in order[i:i + bs]], [labels[j] for j in order[i:i + bs]])
                for i in range(0, len(order), bs)]
    return epoch


def finetune(model: GPT | BertEncoder, tok: ByteLevelBPE, task: GlueTask, s: Sizes, *, seed: int = 0,
             lm_weight: float = 0.5, device: str | None = None) -> np.ndarray:
    """Fine-tune a copy of ``model`` (a pre-trained or a fresh :class:`GPT` or :class:`BertEncoder`)
    on ``task.train`` (its first ``s.ft_train`` examples) for ``s.ft_epochs`` epochs and return its predictions on ``task.test``:
    class indices, or real scores for STS-B. ``lm_weight`` is GPT's auxiliary LM weight λ."""
    n_out = 1 if task.regression else len(task.label_names)
    train = task.train[: s.ft_train]
    labels = [_label(task, e.label) for e in train]
    cfg_train = TrainConfig(epochs=s.ft_epochs, lr=s.ft_lr, optimizer="adamw", weight_decay=0.01, seed=seed,
                            device=device, progress=False)
    pad = tok.special_tokens["[PAD]"]
    if isinstance(model, GPT):
        kind = GPT_TASK[task.name]
        net = GPTForTask(copy.deepcopy(model), kind, n_out, lm_weight=lm_weight, seed=seed)
        L = model.config.block_size
        fit(net, _gpt_batches(model.config, kind, encode_examples(tok, train, L), labels, pad, s.ft_batch,
                              seed), config=cfg_train)
        enc = encode_examples(tok, task.test, L)
        batches = [task_batch(model.config, kind, [(a, 0) if kind == "classification" else (a, b, 0)
                                                   for a, b in enc[i:i + 64]], pad) for i in range(0, len(enc), 64)]
    elif isinstance(model, BertEncoder):
        net = BertForSequence(copy.deepcopy(model), n_out, pooling="cls", seed=seed)
        L = model.config.max_len
        fit(net, _bert_batches(model.config, encode_examples(tok, train, L), labels, s.ft_batch, seed),
            config=cfg_train)
        enc = encode_examples(tok, task.test, L)
        batches = [_bert_batch(model.config, enc[i:i + 64]) for i in range(0, len(enc), 64)]
    else:
        raise TypeError(f"finetune takes a GPT or a BertEncoder, got {type(model).__name__}")
    net.eval()
    dev = next(net.parameters()).device
    with torch.no_grad():
        out = torch.cat([net({k: v.to(dev) for k, v in b.items()}).cpu() for b in batches])
    return out.squeeze(-1).numpy() * 5.0 if task.regression else out.argmax(-1).numpy()


def glue_scores(preds: dict[str, np.ndarray], tasks: dict[str, GlueTask],
                idx: dict[str, np.ndarray] | None = None) -> dict[str, float]:
    """Main score per task (x 100) and the GLUE-style average, optionally on resampled indices."""
    out = {}
    for t, p in preds.items():
        gold = np.array([float(e.label) for e in tasks[t].test])
        i = idx[t] if idx is not None else slice(None)
        out[t] = main_score(t, task_metrics(t, gold[i], np.asarray(p)[i]))
    out["avg"] = float(np.mean([out[t] for t in preds]))
    return out


def paired_bootstrap(a: list[dict[str, np.ndarray]], b: list[dict[str, np.ndarray]], tasks: dict[str, GlueTask],
                     n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap distribution of ``avg(a) - avg(b)``: the test examples of every task are resampled
    (the same draw for both models); each side's score is its mean over its seeds' predictions."""
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_boot)
    for k in range(n_boot):
        idx = {t: rng.integers(0, len(tasks[t].test), len(tasks[t].test)) for t in a[0]}
        sa = np.mean([glue_scores(p, tasks, idx)["avg"] for p in a])
        sb = np.mean([glue_scores(p, tasks, idx)["avg"] for p in b])
        diffs[k] = sa - sb
    return diffs


def glue_frame(results: dict[str, list[dict[str, np.ndarray]]], tasks: dict[str, GlueTask]) -> pd.DataFrame:
    """One line per model: each task's main score and the average, mean over seeds (± sd when
    there are several seeds)."""
    rows = {}
    for name, runs in results.items():
        scores = [glue_scores(p, tasks) for p in runs]
        row = {}
        for t in [*runs[0], "avg"]:
            vals = [s[t] for s in scores]
            col = DISPLAY.get(t, t)
            row[col] = round(float(np.mean(vals)), 1)
            if len(vals) > 1:
                row[col + " sd"] = round(float(np.std(vals, ddof=1)), 1)
        rows[name] = row
    return pd.DataFrame(rows).T


# ------------------------------------------------------------------------------ masking


def masking_table(tok: ByteLevelBPE, config: BertConfig, text: str, seed: int = 0, p: float = 0.15) -> pd.DataFrame:
    """One corruption of ``text`` by BERT's masking: each token, what the model sees, and what it
    must predict (blank: not chosen)."""
    ids = torch.tensor([[config.cls_id, *tok.encode_ordinary(text), config.sep_id]])
    inputs, labels = mask_tokens(ids, config, p=p, generator=torch.Generator().manual_seed(seed))

    def show(i: int) -> str:
        return tok.decode([i]) if i < len(tok) else f"<{i}>"

    rows = []
    for i, x, y in zip(ids[0].tolist(), inputs[0].tolist(), labels[0].tolist()):
        what = "" if y == -100 else ("[MASK]" if x == config.mask_id else ("kept" if x == i else "random"))
        rows.append({"token": show(i), "model sees": show(x), "target": "" if y == -100 else show(y), "as": what})
    return pd.DataFrame(rows)


def masking_rates(ids: torch.Tensor, config: BertConfig, seed: int = 0, p: float = 0.15) -> dict[str, float]:
    """Measured rates of one masking pass over ``ids``: share of ordinary tokens chosen, and of
    the chosen ones the share turned into [MASK], into a random token, and kept."""
    inputs, labels = mask_tokens(ids, config, p=p, generator=torch.Generator().manual_seed(seed))
    ordinary = ~torch.isin(ids, torch.tensor(config.special_ids))
    chosen = labels != -100
    n = int(chosen.sum())
    masked = int((chosen & (inputs == config.mask_id)).sum())
    kept = int((chosen & (inputs == ids)).sum())
    return {"chosen": n / int(ordinary.sum()), "[MASK]": masked / n, "random": (n - masked - kept) / n,
            "kept": kept / n, "n_chosen": n}


# ------------------------------------------------------------------------------ generation


def time_generation(gpt: GPT, prompt: torch.Tensor, n_new: int, repeats: int = 3) -> dict[str, float]:
    """Seconds to sample ``n_new`` tokens with and without the KV cache (best of ``repeats``, the
    same seed, so both produce the same tokens; checked)."""
    out, best = {}, {}
    for use_cache in (True, False):
        times = []
        for _ in range(repeats):
            g = torch.Generator().manual_seed(0)
            t0 = time.perf_counter()
            out[use_cache] = gpt.generate(prompt, n_new, temperature=1.0, top_k=50, use_cache=use_cache,
                                          generator=g)
            times.append(time.perf_counter() - t0)
        best[use_cache] = min(times)
    if not torch.equal(out[True], out[False]):
        raise AssertionError("generation with and without the KV cache gave different tokens")
    return {"with cache s": best[True], "without cache s": best[False], "speed-up": best[False] / best[True]}


# ------------------------------------------------------------------------------ the diagram


def _box(ax, x, y, w, h, text, color, fontsize=9):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=color, ec="0.3"))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def draw_gpt_bert(ax=None):
    """GPT and BERT side by side: inputs, embeddings, the stack of blocks (causal vs
    bidirectional attention), and the pre-training heads. Returns the axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 5.2))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    for x0, name, inp, emb, stack, head, out in (
        (2.5, "GPT (decoder)", "<s> the cat sat", "token + position", "N x block\ncausal self-attention\n(pre-LN)",
         "LM head (tied)", "next token: the cat sat on"),
        (7.5, "BERT (encoder)", "[CLS] the [MASK] sat [SEP]", "token + segment + position",
         "N x block\nbidirectional self-attention\n(post-LN)", "MLM head (tied) / [CLS] pooler",
         "masked token: cat"),
    ):
        ax.text(x0, 9.6, name, ha="center", fontsize=12, weight="bold")
        _box(ax, x0, 1.0, 4.0, 0.7, inp, "#f2f2f2")
        _box(ax, x0, 2.6, 4.0, 0.8, emb, "#dbe9f6")
        _box(ax, x0, 4.9, 4.0, 2.0, stack, "#fde2c8")
        _box(ax, x0, 7.1, 4.0, 0.8, head, "#d9f0d3")
        _box(ax, x0, 8.6, 4.0, 0.7, out, "#f2f2f2")
        for y1, y2 in ((1.35, 2.2), (3.0, 3.9), (5.9, 6.7), (7.5, 8.25)):
            ax.annotate("", (x0, y2), (x0, y1), arrowprops={"arrowstyle": "->", "color": "0.3"})
    # the two attention patterns, as small matrices inside the stacks
    for x0, causal in ((2.5, True), (7.5, False)):
        m = np.tril(np.ones((5, 5))) if causal else np.ones((5, 5))
        ax.imshow(m, cmap="Greys", vmin=0, vmax=1.6, extent=(x0 + 1.15, x0 + 1.85, 4.05, 4.75), zorder=3)
    ax.set_aspect("auto")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    return ax


# ------------------------------------------------------------------------------ sentence vectors


def bert_sentence_encoder(encoder: BertEncoder, tok: ByteLevelBPE, pooling: str = "cls",
                          batch_size: int = 64) -> Callable[[list[str]], np.ndarray]:
    """``encode(sentences) -> [n, d]`` from a (frozen) encoder over our byte-level BPE: the final
    hidden state of ``[CLS]`` (``pooling="cls"``; no pooler: ours was never trained by NSP) or the
    mean of the real tokens' states (``"mean"``)."""
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling must be 'cls' or 'mean', got {pooling!r}")
    cfg = encoder.config

    @torch.no_grad()
    def encode(sentences: list[str]) -> np.ndarray:
        check_texts(sentences)
        encoder.eval()
        out = [torch.zeros(0, cfg.d_model)]  # no sentences: a [0, d] array
        for i in range(0, len(sentences), batch_size):
            ids = [tok.encode_ordinary(s)[: cfg.max_len - 2] for s in sentences[i:i + batch_size]]
            b = pad_batch(cfg, [pair_inputs(cfg, x) for x in ids])
            h = encoder(b["ids"], b["segments"], b["attention_mask"])
            out.append(h[:, 0] if pooling == "cls" else mean_pool(h, b["attention_mask"]))
        return torch.cat(out).numpy()

    return encode


def minilm_encoder(max_len: int = 256, batch_size: int = 64) -> tuple[Callable[[list[str]], np.ndarray], int]:
    """all-MiniLM-L6-v2's real weights in **our** :class:`BertEncoder`, tokenised by **our**
    WordPiece with its vocabulary, mean-pooled and L2-normalised (sentence-transformers' recipe).
    Returns ``(encode, parameter count)``."""
    from .hf import load_minilm, minilm_dir
    from .tokenizers import WordPiece

    directory = minilm_dir()
    encoder, wp = load_minilm(directory), WordPiece.from_file(directory / "vocab.txt")
    cfg = encoder.config

    @torch.no_grad()
    def encode(sentences: list[str]) -> np.ndarray:
        check_texts(sentences)
        out = [torch.zeros(0, cfg.d_model)]  # no sentences: a [0, d] array
        for i in range(0, len(sentences), batch_size):
            ids = [wp.ids(s)[: max_len - 2] for s in sentences[i:i + batch_size]]
            b = pad_batch(cfg, [pair_inputs(cfg, x) for x in ids])
            h = encoder(b["ids"], b["segments"], b["attention_mask"])
            out.append(F.normalize(mean_pool(h, b["attention_mask"]), dim=-1))
        return torch.cat(out).numpy()

    return encode, sum(p.numel() for p in encoder.parameters())


# ------------------------------------------------------------------------------ notebook helpers


def step_seconds(vocab: int, s: Sizes, steps: int = 3) -> float:
    """CPU seconds of one GPT training step at ``s``'s sizes with a vocabulary of ``vocab``."""
    m = GPT(GPTConfig(vocab_size=vocab, block_size=s.block_size, n_layer=s.n_layer, n_head=s.n_head,
                      d_model=s.d_model))
    opt = torch.optim.AdamW(m.parameters())
    x = torch.randint(0, min(256, vocab), (s.batch_size, s.block_size + 1))
    t0 = time.process_time()
    for _ in range(steps):
        opt.zero_grad()
        m.loss(x).backward()
        opt.step()
    return (time.process_time() - t0) / steps


def pretrain_summary(pre: Pretrained, held: dict[str, float]) -> pd.DataFrame:
    """Parameters, tokens seen, wall and CPU seconds and held-out loss of both models."""
    return pd.DataFrame({
        "parameters": {k: m.num_parameters() for k, m in (("GPT", pre.gpt), ("BERT", pre.bert))},
        "tokens seen": pre.tokens, "wall s": pre.seconds, "CPU s": pre.cpu_seconds, "held-out loss": held,
    }).round(2)


def claim_table(results: dict[str, list[dict[str, np.ndarray]]], tasks: dict[str, GlueTask],
                pairs: dict[str, tuple[str, str]], n_boot: int) -> pd.DataFrame:
    """For each ``label -> (a, b)``: the difference of GLUE-lite averages ``a - b`` (mean over
    seeds), its paired-bootstrap 95 % interval, and the verdict the interval supports."""
    rows = {}
    for label, (a, b) in pairs.items():
        d = paired_bootstrap(results[a], results[b], tasks, n_boot=n_boot)
        diff = np.mean([glue_scores(p, tasks)["avg"] for p in results[a]]) - np.mean(
            [glue_scores(p, tasks)["avg"] for p in results[b]])
        lo, hi = np.percentile(d, [2.5, 97.5])
        rows[label] = {"difference": diff, "95% low": lo, "95% high": hi}
    claims = pd.DataFrame(rows).T.round(2)
    claims["verdict"] = np.where(claims["95% low"] > 0, "holds",
                                 np.where(claims["95% high"] < 0, "reversed", "not significant"))
    return claims
