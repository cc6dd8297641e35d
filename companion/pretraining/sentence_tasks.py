"""Sentence-level pre-training tasks beside the masked LM: NSP (BERT), SOP (ALBERT), none (RoBERTa).

Every row of the packed corpus is cut in two at a random point in its middle half, ``a`` and
``b`` (BERT's "sentences" are spans of contiguous text, not linguistic sentences, so a cut
inside a sentence is within its definition; our cut may also fall inside a word), and framed
``[CLS] a [SEP] b [SEP]`` with segment ids 0 / 1. Then

* ``"nsp"`` -- next sentence prediction (Devlin et al. 2018): half of the pairs keep their own
  ``b`` (label 1, "is next"), half take the ``b`` of another row of the batch (label 0). Lan et
  al. (2020) argue it is mostly *topic* prediction -- a random ``b`` comes from another document
  -- and too easy to teach coherence;
* ``"sop"`` -- sentence order prediction (ALBERT): the negative is the same two segments
  swapped, ``[CLS] b [SEP] a [SEP]`` (label 0); topic gives nothing away;
* ``"none"`` -- the same two-segment input and no sentence loss: RoBERTa's finding (Liu et al.
  2019) is that dropping NSP does not hurt.

The masked-LM part (15 %, 80/10/10, dynamic) and the model (chapter 7's
:class:`~companion.transformer.bert.BertForPreTraining`, whose ``nsp`` head serves both tasks)
are the harness's :class:`~.harness.MaskedLM`.
"""

from __future__ import annotations

import torch
from torch import nn

from .harness import MaskedLM, Vocab

KINDS = ("nsp", "sop", "none")


class SentenceTask(MaskedLM):
    """Masked LM on two-segment inputs plus NSP, SOP or no sentence-level loss."""

    def __init__(self, vocab: Vocab, kind: str = "nsp", p: float = 0.15):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        super().__init__(vocab, p)
        self.kind = kind
        self.name = {"nsp": "MLM + NSP", "sop": "MLM + SOP", "none": "MLM, two segments, no NSP"}[kind]

    def pairs(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        """``{"ids", "segments", "nsp_labels"}`` before masking: ``[B, T + 3]`` each (labels ``[B]``,
        1 = the original order / the true next segment)."""
        B, T = rows.shape
        if T < 4:
            raise ValueError(f"rows of {T} tokens are too short to cut in two segments")
        cut = torch.randint(T // 4, T - T // 4 + 1, (B,), generator=gen).clamp(1, T - 1)
        positive = torch.rand(B, generator=gen) < 0.5
        if self.kind == "none":
            positive[:] = True
        pos = torch.arange(T).expand(B, T)
        in_a = pos < cut[:, None]
        if self.kind == "nsp":
            # a negative b is the same stretch of the next row (another place, usually another document)
            other = rows.roll(1, 0)
            body = torch.where(in_a | positive[:, None], rows, other)
            first_len = cut
        else:  # sop swaps the segments of a negative; none never does
            swapped = torch.cat([rows, rows], 1)  # b a = rows rotated left by cut
            idx = (pos + cut[:, None]) % T
            body = torch.where(positive[:, None], rows, swapped.gather(1, idx))
            first_len = torch.where(positive, cut, T - cut)
        v = self.vocab
        # [CLS] first [SEP] second [SEP]: insert the middle [SEP] after first_len tokens
        ids = torch.full((B, T + 3), v.sep)
        ids[:, 0] = v.cls
        shift = (pos >= first_len[:, None]).long()  # tokens of the second segment move one right
        ids.scatter_(1, 1 + pos + shift, body)
        segments = (torch.arange(T + 3).expand(B, -1) > first_len[:, None] + 1).long()  # the middle [SEP] is in a
        segments[:, -1] = 1
        return {"ids": ids, "segments": segments, "nsp_labels": positive.long()}

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        b = self.pairs(rows, gen)
        inputs, labels = self.corrupt(b["ids"], self.choose(b["ids"], gen), gen)
        out = {"ids": inputs, "segments": b["segments"], "labels": labels}
        if self.kind != "none":
            out["nsp_labels"] = b["nsp_labels"]
        return out

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return model.loss(batch)  # BertForPreTraining adds the NSP/SOP head's loss when labels are there
