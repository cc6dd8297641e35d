"""BART (Lewis et al. 2019): corrupt a document, then reconstruct all of it with a decoder.

BART is a denoising autoencoder: any noising ``g`` is allowed, because the decoder always
predicts the *whole* original document ``x`` from ``g(x)``, left to right:
``L = -sum_t log P(x_t | x_<t, g(x))``. The paper's five noisings (its Figure 2):

* **token masking** -- random tokens become ``[MASK]`` (as in BERT);
* **token deletion** -- random tokens are removed; the model must also find *where*;
* **text infilling** -- spans with Poisson(λ = 3) lengths are each replaced by **one**
  ``[MASK]`` (a length-0 span inserts one); the model must also say *how many* tokens are missing;
* **sentence permutation** -- the document's sentences are shuffled;
* **document rotation** -- the document is rotated to start at a uniformly chosen token.

The first three corrupt the same share of tokens here (30 %, fairseq's ``--mask 0.3``, which
BART's final model used for infilling), so the ablation compares *how* tokens are corrupted, not
how many. The two reorderings keep every token and are invertible (tests).

:class:`BART` is a harness objective over any combination, applied in the paper's order
(permute sentences, rotate, then the token-level noising); :class:`EncoderMaskedLM` is the
ablation's "masked language model" row: the same network, but only the encoder is pre-trained
(by MLM), so the decoder starts from scratch at fine-tuning -- an MLM encoder alone cannot
generate.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from .harness import ModelSize, Objective, Vocab
from .seq2seq import FlopSeq2Seq, Seq2SeqObjective, seq2seq_config

NOISINGS = ("token masking", "token deletion", "text infilling", "sentence permutation", "document rotation")
TOKEN_LEVEL = NOISINGS[:3]
SLACK = 3  # text infilling may lengthen a row (length-0 spans insert a [MASK]): source length T + SLACK


def _check_rate(p: float, name: str = "p") -> None:
    if not 0 <= p < 1:
        raise ValueError(f"{name} must be in [0, 1), got {p}")


def token_masking(ids: Sequence[int], mask_id: int, gen: torch.Generator, p: float = 0.3) -> list[int]:
    """Each token independently becomes ``mask_id`` with probability ``p``."""
    _check_rate(p)
    hit = (torch.rand(len(ids), generator=gen) < p).tolist()
    return [mask_id if h else t for t, h in zip(ids, hit)]


def token_deletion(ids: Sequence[int], gen: torch.Generator, p: float = 0.3) -> list[int]:
    """Each token is independently removed with probability ``p`` (nothing marks the gap)."""
    _check_rate(p)
    hit = (torch.rand(len(ids), generator=gen) < p).tolist()
    return [t for t, h in zip(ids, hit) if not h]


def poisson_spans(n_masked: int, gen: torch.Generator, lam: float = 3.0) -> list[int]:
    """Span lengths drawn from Poisson(``lam``) until they cover ``n_masked`` tokens; the last
    one is cut to fit. Zero lengths are kept (each becomes an inserted ``[MASK]``)."""
    if lam <= 0:
        raise ValueError(f"lam must be positive, got {lam}")
    lengths, total = [], 0
    while total < n_masked:
        draws = torch.poisson(torch.full((8,), float(lam)), generator=gen).long().tolist()
        for d in draws:
            lengths.append(min(d, n_masked - total))
            total += lengths[-1]
            if total >= n_masked:
                break
    return lengths


def text_infilling(ids: Sequence[int], mask_id: int, gen: torch.Generator, ratio: float = 0.3,
                   lam: float = 3.0) -> tuple[list[int], list[tuple[int, int]]]:
    """Replace spans covering ``round(ratio * n)`` tokens, Poisson(``lam``) long, each by **one**
    ``mask_id``. Returns ``(noised ids, spans)``, each span ``(start in ids, length)``.

    Spans are placed uniformly without overlap: the ``n - masked`` kept tokens leave
    ``n - masked + 1`` gaps, and each span goes into a uniformly drawn gap (two spans in one gap
    become two adjacent masks)."""
    _check_rate(ratio, "ratio")
    n = len(ids)
    lengths = poisson_spans(round(ratio * n), gen, lam)
    kept = n - sum(lengths)
    slots = sorted(torch.randint(0, kept + 1, (len(lengths),), generator=gen).tolist())
    out, spans, pos, j = [], [], 0, 0
    for gap in range(kept + 1):
        while j < len(lengths) and slots[j] == gap:
            spans.append((pos, lengths[j]))
            out.append(mask_id)
            pos += lengths[j]
            j += 1
        if gap < kept:
            out.append(ids[pos])
            pos += 1
    return out, spans


def split_sentences(ids: Sequence[int], is_end: torch.Tensor) -> list[list[int]]:
    """Cut ``ids`` after every token whose flag in ``is_end`` (``[V]`` bool) is set; the tail
    after the last end is a sentence too."""
    sents, cur = [], []
    flags = is_end[torch.as_tensor(list(ids), dtype=torch.long)].tolist() if len(ids) else []
    for t, end in zip(ids, flags):
        cur.append(t)
        if end:
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    return sents


def sentence_permutation(ids: Sequence[int], is_end: torch.Tensor,
                         gen: torch.Generator) -> tuple[list[int], list[int]]:
    """Shuffle the sentences: ``(noised ids, order)``, where the noised text is
    ``sentences[order[0]] + sentences[order[1]] + ...`` (:func:`unpermute` inverts it)."""
    sents = split_sentences(ids, is_end)
    order = torch.randperm(len(sents), generator=gen).tolist()
    return [t for i in order for t in sents[i]], order


def unpermute(noised: Sequence[int], order: Sequence[int], lengths: Sequence[int]) -> list[int]:
    """The inverse of :func:`sentence_permutation`, given its ``order`` and the original
    sentence ``lengths`` (a tail without an end token may have moved into the middle, so the
    permuted text cannot always be re-cut at end tokens alone)."""
    if sorted(order) != list(range(len(lengths))) or sum(lengths) != len(noised):
        raise ValueError("order must be a permutation of range(len(lengths)) and lengths must sum to len(noised)")
    back, pos = [None] * len(order), 0
    for i in order:
        back[i] = list(noised[pos:pos + lengths[i]])
        pos += lengths[i]
    return [t for s in back for t in s]


def document_rotation(ids: Sequence[int], gen: torch.Generator) -> tuple[list[int], int]:
    """Rotate so the text starts at a uniformly drawn token: ``(ids[k:] + ids[:k], k)``."""
    k = int(torch.randint(0, len(ids), (1,), generator=gen)) if len(ids) else 0
    return list(ids[k:]) + list(ids[:k]), k


def unrotate(rotated: Sequence[int], k: int) -> list[int]:
    """The inverse of :func:`document_rotation`."""
    n = len(rotated)
    return list(rotated[n - k:]) + list(rotated[:n - k]) if k else list(rotated)


def sentence_end_flags(tok, vocab_size: int | None = None) -> torch.Tensor:
    """``[V]`` bool: the tokens of a byte-level BPE whose text ends a sentence (``.``, ``!``,
    ``?``, possibly followed by a closing quote or bracket), plus ``<|endoftext|>``."""
    V = vocab_size or len(tok)
    flags = torch.zeros(V, dtype=torch.bool)
    for i in range(min(V, len(tok))):
        b = tok.decoder_bytes.get(i, b"").rstrip(b" \"')]")
        flags[i] = b[-1:] in (b".", b"!", b"?")
    eot = tok.special_tokens.get("<|endoftext|>")
    if eot is not None:
        flags[eot] = True
    return flags


def noise(ids: Sequence[int], noisings: Sequence[str], vocab: Vocab, is_end: torch.Tensor | None,
          gen: torch.Generator, rate: float = 0.3, lam: float = 3.0) -> list[int]:
    """Apply ``noisings`` (names from :data:`NOISINGS`) in BART's order: sentence permutation,
    document rotation, then the token-level one."""
    out = list(ids)
    if "sentence permutation" in noisings:
        if is_end is None:
            raise ValueError("sentence permutation needs is_end flags (see sentence_end_flags)")
        out, _ = sentence_permutation(out, is_end, gen)
    if "document rotation" in noisings:
        out, _ = document_rotation(out, gen)
    if "token masking" in noisings:
        out = token_masking(out, vocab.mask, gen, rate)
    if "token deletion" in noisings:
        out = token_deletion(out, gen, rate)
    if "text infilling" in noisings:
        out, _ = text_infilling(out, vocab.mask, gen, rate, lam)
    return out


class BART(Seq2SeqObjective, Objective):
    """BART's objective with any combination of :data:`NOISINGS`: the encoder reads the
    corrupted row, the decoder reconstructs the original row (every token is a target)."""

    def __init__(self, vocab: Vocab, noisings: Sequence[str] = ("text infilling", "sentence permutation"),
                 is_end: torch.Tensor | None = None, rate: float = 0.3, lam: float = 3.0, name: str | None = None):
        noisings = tuple(noisings)
        unknown = [n for n in noisings if n not in NOISINGS]
        if unknown or not noisings:
            raise ValueError(f"unknown noisings {unknown}; choose one or more of {NOISINGS}")
        if sum(n in TOKEN_LEVEL for n in noisings) > 1:
            raise ValueError(f"use at most one token-level noising of {TOKEN_LEVEL} (they corrupt the same tokens)")
        if "sentence permutation" in noisings and is_end is None:
            raise ValueError("sentence permutation needs is_end flags: pass is_end=sentence_end_flags(tokenizer)")
        _check_rate(rate, "rate")
        self.vocab, self.noisings, self.is_end, self.rate, self.lam = vocab, noisings, is_end, rate, lam
        self.name = name or "BART: " + " + ".join(noisings)

    def lengths(self, T: int) -> tuple[int, int]:
        return T + SLACK, T

    def pairs(self, row: list[int], gen: torch.Generator) -> tuple[list[int], list[int]]:
        return noise(row, self.noisings, self.vocab, self.is_end, gen, self.rate, self.lam), row


class EncoderMaskedLM(Seq2SeqObjective, Objective):
    """The BART ablation's masked-LM row: BERT-style masking (15 %, 80/10/10 is left out for
    simplicity: chosen tokens become ``[MASK]``), predicted from the **encoder** through the tied
    output layer. The decoder of the same :class:`FlopSeq2Seq` is never trained, so at
    fine-tuning it starts from scratch."""

    def __init__(self, vocab: Vocab, p: float = 0.15, name: str = "MLM (encoder only)"):
        _check_rate(p)
        self.vocab, self.p, self.name = vocab, p, name
        self._specials = torch.tensor(vocab.specials)

    def lengths(self, T: int) -> tuple[int, int]:
        return T, 0

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        chosen = (torch.rand(rows.shape, generator=gen) < self.p) & ~torch.isin(rows, self._specials)
        return {"src": rows.masked_fill(chosen, self.vocab.mask), "labels": rows.masked_fill(~chosen, -100)}

    def build_model(self, size: ModelSize, vocab_size: int) -> FlopSeq2Seq:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        return FlopSeq2Seq(seq2seq_config(self.vocab, size), 1.0, 0.0, seed=None)

    def loss(self, model: FlopSeq2Seq, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = model.lm_head(model.encode(batch["src"]))
        labels = batch["labels"]
        if not (labels != -100).any():
            return logits.sum() * 0.0
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
