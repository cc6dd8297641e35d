"""Discrete prompts: adapt the task to the model instead of the model to the task.

* **Cloze prompts** for a masked LM: a *pattern* turns an input into a sentence with one blank,
  ``"{text} It was [MASK]."``, and the model's distribution over the blank is read
  (:class:`ClozeModel`, :func:`cloze_inputs`, :func:`mask_logits`).
* **Verbalizers**: each label is one or more *label words*; a label's score is the probability
  the model gives its words at the blank, renormalised over the labels
  (:func:`label_scores`, :func:`label_distribution`). The survey's example: a review's rating
  read as one of "excellent / good / OK / bad / horrible" (:data:`FIVE_STARS`).
* **Prefix prompts** for a causal LM (GPT-3's in-context learning, Brown et al. 2020): a few
  demonstrations ``input -> label word`` and the query; the next-token probabilities of the
  label words decide (:func:`build_prompt`, :func:`choose_demos` -- random or nearest
  neighbours, Liu et al. 2022 -- and :func:`gpt_label_logprobs`).
* **Contextual calibration** (Zhao et al. 2021): the same prompt with a content-free input
  ("N/A") shows the model's bias among the labels; dividing it out,
  ``q = normalise(p / p_cf)`` (the argmax of Zhao et al.'s ``softmax(W p + b)``, ``W = diag(p_cf)^-1``,
  ``b = 0``), corrects it (:func:`calibrate`).
* The chapter's widget: write a pattern and label words, see the label distribution
  (:func:`prompt_distribution`, plain and tested; :func:`prompt_widget`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..data.tasks import Example

MASK = "[MASK]"
FIVE_STARS = ("horrible", "bad", "OK", "good", "excellent")  # SST-5's labels 0-4, as words


# ------------------------------------------------------------------------------ cloze models


@dataclass
class ClozeModel:
    """A masked LM seen as ``text -> distribution over the vocabulary at [MASK]``.

    ``encoder`` maps ``(ids, segments, attention_mask)`` to hidden states, ``head`` hidden
    states to vocabulary logits; ``tokenize`` maps text to ids; ``config`` gives the special
    ids (``cls_id``, ``sep_id``, ``mask_id``, ``pad_id``, ``max_len``). ``space=True`` for a
    byte-level BPE, where a word after a space is a different token (``" good"``) from the
    same word at the start of a text."""

    encoder: nn.Module
    head: nn.Module | Callable[[torch.Tensor], torch.Tensor]
    tokenize: Callable[[str], list[int]]
    config: object
    space: bool = False
    name: str = ""

    def word_id(self, word: str) -> int:
        """The id of a label word, which must be a single token of the vocabulary."""
        if not isinstance(word, str) or not word.strip():
            raise ValueError("a label word is empty; give one word per label, like 'great'")
        ids = self.tokenize((" " if self.space else "") + word.strip())
        if len(ids) != 1:
            raise ValueError(f"label word {word!r} is {len(ids)} tokens in this vocabulary, not one; "
                             "pick a more common word")
        return ids[0]

    def word_ids(self, words: Sequence[str | Sequence[str]]) -> list[list[int]]:
        """Ids per label: each label is a word or a list of words."""
        return [[self.word_id(w)] if isinstance(w, str) else [self.word_id(x) for x in w] for w in words]

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Vocabulary logits at each row's ``[MASK]`` (``batch["mask_pos"]``): ``[B, V]``."""
        h = self.encoder(batch["ids"], batch.get("segments"), batch.get("attention_mask"))
        return self.head(h[torch.arange(len(h), device=h.device), batch["mask_pos"]])


class TiedHead(nn.Module):
    """Logits as dot products with the token embeddings, ``h E^T`` -- the output layer of a
    masked LM whose own MLM head was not shipped (all-MiniLM-L6-v2 keeps only the encoder)."""

    def __init__(self, embedding: nn.Embedding):
        super().__init__()
        self.embedding = embedding

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.embedding.weight.t()


def bert_cloze(bert, tok, name: str = "our BERT (07b)") -> ClozeModel:
    """Chapter 7b's :class:`BertForPreTraining` over our byte-level BPE, with its MLM head."""
    return ClozeModel(bert.encoder, bert.mlm, tok.encode_ordinary, bert.config, space=True, name=name)


def minilm_cloze() -> ClozeModel:
    """all-MiniLM-L6-v2 in our encoder with a :class:`TiedHead` (its MLM head is not in the
    release, and contrastive training has moved it away from masked-LM anyway)."""
    from ..transformer.hf import load_minilm, minilm_dir
    from ..transformer.tokenizers import WordPiece

    enc = load_minilm()
    wp = WordPiece.from_file(minilm_dir() / "vocab.txt")
    return ClozeModel(enc, TiedHead(enc.embeddings.tok), wp.ids, enc.config, space=False,
                      name="all-MiniLM-L6-v2 (tied head)")


def _parse_pattern(pattern: str) -> list[str]:
    if not isinstance(pattern, str) or pattern.count(MASK) != 1:
        raise ValueError(f"a pattern needs exactly one {MASK}, e.g. '{{text}} It was {MASK}.'; got {pattern!r}")
    if "{text}" not in pattern:
        raise ValueError(f"a pattern needs the placeholder {{text}} where the input goes; got {pattern!r}")
    return [p for p in re.split(r"(\{text\}|\{text_b\}|\[MASK\])", pattern) if p]


def cloze_inputs(model: ClozeModel, pattern: str, examples: Sequence[Example], max_len: int | None = None
                 ) -> dict[str, torch.Tensor]:
    """``[CLS] pattern(x) [SEP]`` for each example, padded, with ``mask_pos``. The input text is
    cut (from its end) so that the whole sequence fits in ``max_len`` tokens."""
    pieces = _parse_pattern(pattern)
    c = model.config
    max_len = min(max_len or c.max_len, c.max_len)
    rows, pos = [], []
    for e in examples:
        fixed, slots = [], []
        for j, p in enumerate(pieces):
            if p == MASK:
                fixed.append([c.mask_id])
            elif p in ("{text}", "{text_b}"):
                t = (e.text if p == "{text}" else (e.text_b or "")).strip()
                # byte-level BPE: a word after other text carries its leading space
                fixed.append(model.tokenize((" " if model.space and j and t else "") + t))
                slots.append(len(fixed) - 1)
            else:  # BPE: the blank's label word carries its own space, so none is left before it
                fixed.append(model.tokenize(p.rstrip()) if model.space else model.tokenize(p.strip()))
        over = sum(map(len, fixed)) + 2 - max_len
        for i in slots[::-1]:
            if over <= 0:
                break
            cut = min(over, len(fixed[i]))
            fixed[i] = fixed[i][: len(fixed[i]) - cut]
            over -= cut
        if over > 0:
            raise ValueError(f"the pattern alone is longer than max_len={max_len} tokens; shorten it")
        ids = [c.cls_id]
        for f in fixed:
            ids += f
        pos.append(ids.index(c.mask_id))
        rows.append(ids + [c.sep_id])
    T = max(map(len, rows))
    out = {"ids": torch.full((len(rows), T), c.pad_id, dtype=torch.long),
           "attention_mask": torch.zeros(len(rows), T, dtype=torch.long)}
    for i, r in enumerate(rows):
        out["ids"][i, :len(r)] = torch.tensor(r)
        out["attention_mask"][i, :len(r)] = 1
    out["segments"] = torch.zeros_like(out["ids"])
    out["mask_pos"] = torch.tensor(pos)
    return out


@torch.no_grad()
def mask_logits(model: ClozeModel, pattern: str, examples: Sequence[Example], batch_size: int = 64,
                max_len: int | None = None) -> torch.Tensor:
    """Vocabulary logits at the blank for every example: ``[n, V]`` (eval mode)."""
    model.encoder.eval()
    dev = next(model.encoder.parameters()).device
    out = []
    for i in range(0, len(examples), batch_size):
        b = cloze_inputs(model, pattern, examples[i:i + batch_size], max_len)
        out.append(model.logits({k: v.to(dev) for k, v in b.items()}).float().cpu())
    return torch.cat(out)


# ------------------------------------------------------------------------------- verbalizers


def label_scores(logits: torch.Tensor, label_ids: Sequence[Sequence[int]]) -> torch.Tensor:
    """``[B, n_labels]``: the log of the probability the model puts on each label's words at the
    blank, ``log sum_{w in label} softmax(logits)_w`` (one word: its log-probability)."""
    logp = F.log_softmax(logits.float(), dim=-1)
    if not label_ids or any(len(ids) == 0 for ids in label_ids):
        raise ValueError("every label needs at least one label word")
    return torch.stack([logp[:, list(ids)].logsumexp(-1) for ids in label_ids], -1)


def label_distribution(logits: torch.Tensor, label_ids: Sequence[Sequence[int]]) -> torch.Tensor:
    """The labels' probabilities, renormalised over the label words only: ``[B, n_labels]``."""
    return label_scores(logits, label_ids).softmax(-1)


# ------------------------------------------------------------------------------ calibration


def calibrate(probs: np.ndarray | torch.Tensor, p_cf: np.ndarray | torch.Tensor) -> np.ndarray:
    """Contextual calibration (Zhao et al. 2021): each row of ``probs`` divided by the
    content-free distribution ``p_cf`` and renormalised. Zhao et al. write ``softmax(W p + b)``
    on the probabilities ``p`` with ``W = diag(p_cf)^-1, b = 0`` and take the argmax; the
    renormalised ratios have the same argmax and are a distribution. A prompt that prefers one
    label whatever the input is thereby centred: ``calibrate(p_cf, p_cf)`` is uniform."""
    p, cf = np.asarray(probs, dtype=np.float64), np.asarray(p_cf, dtype=np.float64)
    if p.shape[-1] != cf.shape[-1]:
        raise ValueError(f"probs have {p.shape[-1]} labels but p_cf has {cf.shape[-1]}")
    if (cf <= 0).any():
        raise ValueError("p_cf must be strictly positive (a label with zero content-free probability)")
    q = p / cf
    return q / q.sum(-1, keepdims=True)


CONTENT_FREE = ("N/A", "", "[MASK]")


# --------------------------------------------------------------------------- in-context (GPT)


@dataclass(frozen=True)
class Template:
    """How one demonstration or the query is written: ``"Review: {text}\\nSentiment:"`` then
    ``" " + label word`` (``{text_b}`` for pairs)."""

    query: str = "Review: {text}\nSentiment:"
    sep: str = "\n\n"

    def render(self, e: Example, label_word: str | None = None) -> str:
        q = self.query.replace("{text}", e.text.strip()).replace("{text_b}", (e.text_b or "").strip())
        return q if label_word is None else f"{q} {label_word}"


def build_prompt(template: Template, demos: Sequence[Example], query: Example, label_words: Sequence[str],
                 tokenize: Callable[[str], list[int]], max_tokens: int) -> tuple[str, int]:
    """Demonstrations (with their label words) then the query, joined by ``template.sep``.
    Demonstrations are dropped from the front until the prompt fits ``max_tokens`` tokens (the
    label word that follows needs one more). Returns ``(prompt, demonstrations kept)``."""
    q = template.render(query)
    demos = list(demos)
    while True:
        parts = [template.render(d, label_words[int(d.label)]) for d in demos] + [q]
        text = template.sep.join(parts)
        if len(tokenize(text)) < max_tokens or not demos:
            break
        demos = demos[1:]
    if len(tokenize(text)) >= max_tokens:
        raise ValueError(f"the query alone is {len(tokenize(text))} tokens, more than the model's {max_tokens}")
    return text, len(demos)


def choose_demos(n_pool: int, k: int, how: str = "random", seed: int = 0, pool_vectors: np.ndarray | None = None,
                 query_vector: np.ndarray | None = None) -> list[int]:
    """Indices of ``k`` demonstrations from a pool of ``n_pool`` labelled examples: at random
    (seeded) or the ``k`` nearest to the query by cosine similarity, the nearest last (next to
    the query; Liu et al. 2022's KATE)."""
    if k < 0 or k > n_pool:
        raise ValueError(f"k must be in [0, {n_pool}], got {k}")
    if how == "random":
        return np.random.default_rng(seed).choice(n_pool, size=k, replace=False).tolist()
    if how == "similar":
        if pool_vectors is None or query_vector is None:
            raise ValueError("how='similar' needs pool_vectors and query_vector")
        P = pool_vectors / np.linalg.norm(pool_vectors, axis=1, keepdims=True)
        s = P @ (query_vector / np.linalg.norm(query_vector))
        return np.argsort(-s, kind="stable")[:k][::-1].tolist()
    raise ValueError(f"how must be 'random' or 'similar', got {how!r}")


@torch.no_grad()
def gpt_label_logprobs(gpt, tokenize: Callable[[str], list[int]], prompts: Sequence[str],
                       label_ids: Sequence[int], start_id: int, batch_size: int = 1) -> np.ndarray:
    """``[n, n_labels]``: log-probabilities of each label's (first) token right after each
    prompt, under a causal LM (our :class:`~companion.transformer.gpt.GPT`).

    ``batch_size > 1`` scores prompts together, padded on the right: a causal model's position
    ``t`` never sees what follows it, so the padding cannot change the logits read at each
    prompt's last token (tested equal to one prompt at a time)."""
    gpt.eval()
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    seqs = [[start_id, *tokenize(p)][-gpt.config.block_size:] for p in prompts]
    out = []
    for i in range(0, len(seqs), batch_size):
        chunk = seqs[i:i + batch_size]
        width = max(map(len, chunk))
        ids = torch.tensor([s + [start_id] * (width - len(s)) for s in chunk], device=gpt.device)
        last = torch.tensor([len(s) - 1 for s in chunk], device=gpt.device)
        logits = gpt(ids)[torch.arange(len(chunk), device=gpt.device), last].float()
        out.append(F.log_softmax(logits, -1)[:, list(label_ids)].cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(label_ids)))


# ------------------------------------------------------------------------------------- widget


def parse_words(text: str) -> list[str]:
    """Label words from a comma-separated string: ``"great, terrible"``."""
    words = [w.strip() for w in (text or "").split(",") if w.strip()]
    if len(words) < 2:
        raise ValueError("give at least two label words separated by commas, e.g. 'great, terrible'")
    return words


def prompt_distribution(model: ClozeModel, pattern: str, words: str, text: str) -> dict[str, float]:
    """The widget's callback: ``{label word: probability}`` for ``text`` under ``pattern``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the input text is empty: type a sentence to classify")
    ws = parse_words(words)
    ids = model.word_ids(ws)
    logits = mask_logits(model, pattern, [Example(text, 0)])
    p = label_distribution(logits, ids)[0]
    return {w: float(x) for w, x in zip(ws, p)}


def prompt_html(model: ClozeModel, pattern: str, words: str, text: str) -> str:
    """The distribution as HTML bars, or the error message when the input is bad."""
    try:
        dist = prompt_distribution(model, pattern, words, text)
    except ValueError as err:
        return f"<p><b>Cannot score:</b> {html.escape(str(err))}</p>"
    rows = "".join(
        f"<tr><td>{html.escape(w)}</td><td><div style='background:#4c72b0;height:10px;width:{int(200 * p)}px'>"
        f"</div></td><td>{p:.3f}</td></tr>" for w, p in dist.items())
    return f"<table>{rows}</table>"


@dataclass
class PromptWidget:
    """Pattern, label words and input text boxes and the label distribution they give."""

    model: ClozeModel
    pattern: object
    words: object
    text: object
    output: object
    box: object
    calls: int = field(default=0)

    def update(self, *_: object) -> None:
        self.calls += 1
        self.output.value = prompt_html(self.model, self.pattern.value, self.words.value, self.text.value)

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def prompt_widget(model: ClozeModel, pattern: str = "{text} It was [MASK].", words: str = "great, terrible",
                  text: str = "a gorgeous, witty, seductive movie.") -> PromptWidget:
    """Three text boxes (pattern, label words, input) and the label distribution."""
    import ipywidgets as w

    p = w.Text(value=pattern, description="pattern", continuous_update=False)
    lw = w.Text(value=words, description="label words", continuous_update=False)
    t = w.Text(value=text, description="input", continuous_update=False)
    out = w.HTML()
    pw = PromptWidget(model, p, lw, t, out, w.VBox([p, lw, t, out]))
    for control in (p, lw, t):
        control.observe(pw.update, names="value")
    pw.update()
    return pw
