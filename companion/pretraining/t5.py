"""T5 (Raffel et al. 2019): span corruption with sentinel tokens, and every task as text to text.

**Span corruption.** 15 % of a row's tokens are dropped in spans of mean length 3. Each span is
replaced in the input by one *sentinel* (``<extra_id_0>``, ``<extra_id_1>``, ...); the target
lists each sentinel followed by the tokens it hides, and ends with ``[SEP]``::

    input:   Thank you <X> me to your party <Y> week .
    target:  <X> for inviting <Y> last <Z>

Unlike BART, the decoder predicts only the dropped tokens, so targets are short (about 0.15 +
0.05 of the row) -- T5 chose it partly because it is cheap. The span layout follows T5's
``random_spans_noise_mask``: the noise tokens and the kept tokens are each cut into the same
number of non-empty segments by uniformly random cut points, and the segments alternate, kept
first. :func:`uncorrupt` inverts it (tested: the round trip returns the row).

**Text to text.** Fine-tuning needs no new layer: each GLUE-lite example is written as text
(``"rte premise: ... hypothesis: ..."``), the decoder writes the label as text
(``"entailment"``, ``"not_entailment"``; an STS-B score rounded to 0.2, ``"3.8"``), and a
prediction that is not a label counts as wrong (:func:`from_text`), as in the paper.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import torch

from ..checks import check_texts
from ..evaluate.glue import GlueTask
from ..train import TrainConfig, fit
from .harness import Objective, Vocab
from .seq2seq import Seq2Seq, Seq2SeqObjective, pad_rows, shift_right


def random_segmentation(n_items: int, n_segments: int, gen: torch.Generator) -> list[int]:
    """Lengths of ``n_segments`` non-empty segments summing to ``n_items``, cut at uniformly
    chosen distinct points (T5's ``_random_segmentation``)."""
    if not 1 <= n_segments <= n_items:
        raise ValueError(f"cannot cut {n_items} items into {n_segments} non-empty segments")
    cuts = sorted((torch.randperm(n_items - 1, generator=gen)[: n_segments - 1] + 1).tolist())
    edges = [0, *cuts, n_items]
    return [b - a for a, b in pairwise(edges)]


def span_layout(n: int, density: float = 0.15, mean_span: float = 3.0) -> tuple[int, int]:
    """``(noise tokens, spans)`` for a row of ``n`` tokens: ``round(density * n)`` tokens (at
    least 1, at most ``n - 1``) in ``max(1, round(noise / mean_span))`` spans."""
    if not 0 < density < 1:
        raise ValueError(f"density must be in (0, 1), got {density}")
    if n < 2:
        raise ValueError(f"a row needs at least 2 tokens to corrupt, got {n}")
    n_noise = min(max(round(density * n), 1), n - 1)
    return n_noise, min(max(round(n_noise / mean_span), 1), n_noise, n - n_noise)


def span_corruption(ids: Sequence[int], sentinels: Sequence[int], eos: int, gen: torch.Generator,
                    density: float = 0.15, mean_span: float = 3.0) -> tuple[list[int], list[int]]:
    """T5's span corruption of one row: ``(input ids, target ids)``."""
    n = len(ids)
    n_noise, n_spans = span_layout(n, density, mean_span)
    if n_spans > len(sentinels):
        raise ValueError(f"{n_spans} spans need {n_spans} sentinels, the vocabulary has {len(sentinels)}")
    noise = random_segmentation(n_noise, n_spans, gen)
    keep = random_segmentation(n - n_noise, n_spans, gen)
    inp, tgt, pos = [], [], 0
    for k, (a, b) in enumerate(zip(keep, noise)):
        inp += list(ids[pos:pos + a]) + [sentinels[k]]
        tgt += [sentinels[k], *ids[pos + a:pos + a + b]]
        pos += a + b
    return inp, [*tgt, eos]


def uncorrupt(inputs: Sequence[int], targets: Sequence[int], sentinels: Sequence[int], eos: int) -> list[int]:
    """Put the target's spans back in place of the input's sentinels (the round trip)."""
    sent = {s: k for k, s in enumerate(sentinels)}
    spans: dict[int, list[int]] = {}
    cur = None
    for t in targets:
        if t == eos:
            break
        if t in sent:
            cur = sent[t]
            spans[cur] = []
        elif cur is None:
            raise ValueError("the target must start with a sentinel")
        else:
            spans[cur].append(t)
    out = []
    for t in inputs:
        out += spans.get(sent[t], []) if t in sent else [t]
    return out


class T5SpanCorruption(Seq2SeqObjective, Objective):
    """T5's pre-training objective as a harness objective (inputs and targets of fixed length
    for a given row length, so every batch costs the same)."""

    def __init__(self, vocab: Vocab, density: float = 0.15, mean_span: float = 3.0,
                 name: str = "T5: span corruption"):
        if not vocab.sentinels:
            raise ValueError("the vocabulary has no sentinel tokens; build the corpus with n_sentinels > 0")
        span_layout(8, density, mean_span)  # validates density
        self.vocab, self.density, self.mean_span, self.name = vocab, density, mean_span, name

    def lengths(self, T: int) -> tuple[int, int]:
        n_noise, n_spans = span_layout(T, self.density, self.mean_span)
        return T - n_noise + n_spans, n_noise + n_spans + 1

    def pairs(self, row: list[int], gen: torch.Generator) -> tuple[list[int], list[int]]:
        return span_corruption(row, self.vocab.sentinels, self.vocab.sep, gen, self.density, self.mean_span)


# ------------------------------------------------------------------------------ text to text

LABEL_TEXT: dict[str, tuple[str, ...]] = {
    "sst2_glue": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "rte": ("entailment", "not_entailment"),
    "sick_e": ("entailment", "neutral", "contradiction"),
}
PAIR_FIELDS: dict[str, tuple[str, str]] = {
    "mrpc": ("sentence1", "sentence2"), "stsb": ("sentence1", "sentence2"), "rte": ("premise", "hypothesis"),
    "sick_e": ("premise", "hypothesis"),
}
PREFIX = {"sst2_glue": "sst2", "mrpc": "mrpc", "stsb": "stsb", "rte": "rte", "sick_e": "sick"}


def label_texts(task: GlueTask) -> tuple[str, ...] | None:
    """The label words of a classification task, in label-index order (None for STS-B)."""
    if task.regression:
        return None
    words = LABEL_TEXT.get(task.name)
    if words is None or len(words) != len(task.label_names):
        raise ValueError(f"no label words for task {task.name!r} with labels {task.label_names}")
    return words


def to_text(task: GlueTask, example) -> tuple[str, str]:
    """``(input text, target text)`` of one GLUE-lite example, T5 style."""
    prefix = PREFIX.get(task.name, task.name)
    if example.text_b is None:
        src = f"{prefix} sentence: {example.text}"
    else:
        a, b = PAIR_FIELDS.get(task.name, ("sentence1", "sentence2"))
        src = f"{prefix} {a}: {example.text} {b}: {example.text_b}"
    if task.regression:
        return src, f"{round(float(example.label) * 5) / 5:.1f}"  # T5 rounds STS-B to 0.2
    return src, label_texts(task)[int(example.label)]


def from_text(task: GlueTask, text: str) -> float | None:
    """The label a generated ``text`` names (a class index or a score), or None if it names none.
    Only the first word counts (a label is one word: a tiny model that has not yet learnt to stop
    after it is not penalised for what follows)."""
    text = (text.split() or [""])[0]
    if task.regression:
        try:
            v = float(text)
        except ValueError:
            return None
        return v if math.isfinite(v) and 0 <= v <= 5 else None
    words = label_texts(task)
    return float(words.index(text)) if text in words else None


def encode_pairs(tok, pairs: Sequence[tuple[str, str]], max_src: int, eos: int) -> list[tuple[list[int], list[int]]]:
    """Token ids of (input, target) texts: the input cut to ``max_src``, the target ended by ``eos``."""
    return [(tok.encode_ordinary(s)[:max_src], [*tok.encode_ordinary(" " + t), eos]) for s, t in pairs]


def _batch(enc, vocab: Vocab, max_src: int, max_tgt: int) -> dict[str, torch.Tensor]:
    src, src_mask = pad_rows([a for a, _ in enc], max_src, vocab.pad)
    tgt, tgt_mask = pad_rows([b for _, b in enc], max_tgt, vocab.pad)
    tgt_out = tgt.masked_fill(tgt_mask == 0, -100)
    return {"src": src, "src_mask": src_mask, "tgt_in": shift_right(tgt_out, vocab.cls, vocab.pad),
            "tgt_out": tgt_out}


def finetune_text_to_text(model: Seq2Seq, tok, vocab: Vocab, task: GlueTask, *, epochs: int = 1,
                          lr: float = 5e-4, batch_size: int = 32, max_train: int | None = None, seed: int = 0,
                          device: str | None = None, scoring: str = "rank") -> tuple[np.ndarray, float]:
    """Fine-tune a copy of ``model`` to write ``task``'s labels as text, then decode the test
    set greedily. Returns ``(predictions, invalid share)``; the invalid share is that of the free
    greedy generations that name no label. ``scoring="rank"`` (default) predicts by
    :func:`rank_predictions` (the most likely allowed output: always a label);
    ``scoring="generate"`` reads the greedy generation, where one that names no label becomes -1
    (always wrong) for a class and the training mean for STS-B (T5's rule)."""
    max_src = model.config.max_len
    train = task.train[:max_train]
    enc = encode_pairs(tok, [to_text(task, e) for e in train], max_src, vocab.sep)
    max_tgt = min(max(len(b) for _, b in enc), model.config.max_len)
    net = copy.deepcopy(model)

    def batches(epoch: int) -> list[dict[str, torch.Tensor]]:
        order = torch.randperm(len(enc), generator=torch.Generator().manual_seed(seed * 1000 + epoch)).tolist()
        return [_batch([enc[j] for j in order[i:i + batch_size]], vocab, max_src, max_tgt)
                for i in range(0, len(order), batch_size)]

    cfg = TrainConfig(epochs=epochs, lr=lr, optimizer="adamw", weight_decay=0.01, seed=seed, device=device,
                      progress=False)
    fit(net, batches, config=cfg, loss_fn=lambda m, b: m.loss(b))
    sources = [to_text(task, e)[0] for e in task.test]
    texts = generate_texts(net, tok, sources, max_tgt)
    labels = [from_text(task, t) for t in texts]
    invalid = float(np.mean([v is None for v in labels]))
    if scoring == "rank":
        return rank_predictions(net, tok, task, sources), invalid
    if scoring != "generate":
        raise ValueError(f"scoring must be 'rank' or 'generate', got {scoring!r}")
    fallback = float(np.mean([float(e.label) for e in train])) if task.regression else -1.0
    preds = np.array([fallback if v is None else v for v in labels])
    return (preds if task.regression else preds.astype(int)), invalid


def candidate_texts(task: GlueTask) -> tuple[str, ...]:
    """The outputs a task allows: its label words, or STS-B's 26 scores 0.0, 0.2, ..., 5.0."""
    words = label_texts(task)
    return words if words is not None else tuple(f"{k / 5:.1f}" for k in range(26))


@torch.no_grad()
def score_candidates(model: Seq2Seq, tok, sources: Sequence[str], candidates: Sequence[str],
                     batch_size: int = 64) -> np.ndarray:
    """``[n_sources, n_candidates]``: the log-probability (nats) the model gives each candidate
    text, end token included, as the whole output for each source -- ``log P(y | x)`` summed over
    the candidate's tokens, teacher-forced. Each source is encoded once."""
    check_texts(sources, "sources")
    check_texts(candidates, "candidates")
    if not candidates:
        raise ValueError("candidates must hold at least one candidate text")
    c = model.config
    cands = [[*tok.encode_ordinary(" " + t), c.eos_id] for t in candidates]
    L = max(map(len, cands))
    tgt, tgt_mask = pad_rows(cands, L, c.pad_id)
    tgt_out = tgt.masked_fill(tgt_mask == 0, -100)
    tgt_in = shift_right(tgt_out, c.bos_id, c.pad_id)
    model.eval()
    dev, out = model.device, []
    for i in range(0, len(sources), batch_size):
        ids = [tok.encode_ordinary(s)[: c.max_len] or [c.pad_id] for s in sources[i:i + batch_size]]
        src, mask = (t.to(dev) for t in pad_rows(ids, max(map(len, ids)), c.pad_id))
        kvs = model.memory_kv(model.encode(src, mask))
        scores = torch.empty(len(ids), len(cands))
        for k in range(len(cands)):
            y_in, y_out = tgt_in[k:k + 1].expand(len(ids), -1).to(dev), tgt_out[k].to(dev)
            logp = torch.log_softmax(model.lm_head(model.decode(y_in, kvs, mask)).float(), -1)
            keep = y_out != -100
            scores[:, k] = logp[:, keep, :].gather(-1, y_out[keep][None, :, None].expand(len(ids), -1, 1)).sum((1, 2)).cpu()
        out.append(scores)
    return torch.cat(out).double().numpy()


def rank_predictions(model: Seq2Seq, tok, task: GlueTask, sources: Sequence[str]) -> np.ndarray:
    """Rank classification: the allowed output the model finds most likely (a class index), or
    for STS-B the candidates' scores averaged with the model's normalised probabilities (an
    argmax would give a constant, whose correlation is undefined, whenever one score wins for
    every pair)."""
    s = score_candidates(model, tok, sources, candidate_texts(task))
    if not task.regression:
        return s.argmax(1).astype(int)
    p = np.exp(s - s.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)) @ np.arange(26) / 5


@torch.no_grad()
def generate_texts(model: Seq2Seq, tok, sources: Sequence[str], max_new_tokens: int,
                   batch_size: int = 64) -> list[str]:
    """Greedy decoding of each source text (cut to the model's ``max_len``), up to ``[SEP]``."""
    check_texts(sources, "sources")
    c = model.config
    out = []
    dev = model.device
    for i in range(0, len(sources), batch_size):
        ids = [tok.encode_ordinary(s)[: c.max_len] or [c.pad_id] for s in sources[i:i + batch_size]]
        src, mask = pad_rows(ids, max(map(len, ids)), c.pad_id)
        gen = model.generate(src.to(dev), max_new_tokens, mask.to(dev)).cpu()
        for row in gen.tolist():
            row = row[: row.index(c.eos_id)] if c.eos_id in row else row
            out.append(tok.decode([t for t in row if t != c.pad_id]))
    return out
