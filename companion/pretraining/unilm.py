"""UniLM (Dong et al. 2019): one Transformer, three language models, chosen by the mask.

UniLM is BERT's network and BERT's masked-token prediction; what changes from row to row is
the **self-attention mask**, i.e. which context a ``[MASK]`` may use:

* **bidirectional** -- every token sees every token (BERT's MLM);
* **left-to-right** (and right-to-left) -- a token sees itself and what precedes (follows) it:
  a unidirectional LM, GPT's context;
* **sequence-to-sequence** -- the row is cut into a source ``[CLS] a [SEP]`` (segment 0) and a
  target ``b [SEP]`` (segment 1); the source sees only the source (bidirectionally), the target
  sees the source and its own past: chapter 7's :func:`prefix_lm_mask`. One network then
  encodes like BERT and generates like a decoder.

Within a batch, a third of the rows are bidirectional, a third sequence-to-sequence, and a
sixth each left-to-right and right-to-left (the paper's shares). The encoder that fine-tunes is
chapter 7's :class:`BertEncoder`, so GLUE-lite fine-tuning is BERT's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..transformer.attention import bidirectional_mask, causal_mask, prefix_lm_mask
from ..transformer.bert import BertForPreTraining
from .harness import MaskedLM, Vocab

MODES = ("bidirectional", "left-to-right", "right-to-left", "seq2seq")
SHARES = (1 / 3, 1 / 6, 1 / 6, 1 / 3)


def unilm_mask(mode: str, T: int, src_len: int | None = None) -> torch.Tensor:
    """``[T, T]`` boolean mask (True = may attend) of one UniLM mode; ``src_len`` is the
    source's length (``[CLS] a [SEP]``) in ``seq2seq`` mode."""
    if mode == "bidirectional":
        return bidirectional_mask(T)
    if mode == "left-to-right":
        return causal_mask(T)
    if mode == "right-to-left":
        return causal_mask(T).T.contiguous()
    if mode == "seq2seq":
        if src_len is None or not 1 <= src_len <= T:
            raise ValueError(f"seq2seq mode needs src_len in [1, {T}], got {src_len}")
        return prefix_lm_mask(T, src_len)
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def with_padding(mask: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """No query attends to a padding key; padding queries see every real key (so no row of the
    softmax is empty -- their outputs are never used)."""
    out = mask & real[None, :]
    out[~real] = real
    return out


class UniLM(MaskedLM):
    """UniLM as a harness objective: rows of ``[CLS] row [SEP] [PAD]`` (bidirectional and the two
    unidirectional modes) or ``[CLS] a [SEP] b [SEP]`` (seq2seq, cut at a uniform point in the
    middle half), 15 % of text tokens masked 80/10/10 in every mode, a ``[B, L, L]`` mask per row."""

    name, arch = "UniLM (3 masks)", "encoder"

    def __init__(self, vocab: Vocab, p: float = 0.15, shares: tuple[float, ...] = SHARES):
        super().__init__(vocab, p)
        if len(shares) != len(MODES) or abs(sum(shares) - 1) > 1e-6 or min(shares) < 0:
            raise ValueError(f"shares must be {len(MODES)} non-negative numbers summing to 1 (modes {MODES})")
        self.shares = torch.tensor(shares)

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        B, T = rows.shape
        L, v = T + 3, self.vocab
        ids = torch.full((B, L), v.pad, dtype=torch.long)
        segments = torch.zeros((B, L), dtype=torch.long)
        masks = torch.zeros((B, L, L), dtype=torch.bool)
        modes = torch.multinomial(self.shares, B, replacement=True, generator=gen)
        cuts = torch.randint(T // 4, max(T // 4 + 1, 3 * T // 4), (B,), generator=gen)
        for i, (row, m) in enumerate(zip(rows, modes.tolist())):
            if MODES[m] == "seq2seq":
                c = int(cuts[i])
                seq = torch.cat([torch.tensor([v.cls]), row[:c], torch.tensor([v.sep]), row[c:], torch.tensor([v.sep])])
                segments[i, c + 2:] = 1
                src_len = c + 2
            else:
                seq = torch.cat([torch.tensor([v.cls]), row, torch.tensor([v.sep])])
                src_len = None
            ids[i, :len(seq)] = seq
            real = torch.arange(L) < len(seq)
            masks[i] = with_padding(unilm_mask(MODES[m], L, src_len if src_len else None), real)
        inputs, labels = self.corrupt(ids, self.choose(ids, gen), gen)
        return {"ids": inputs, "segments": segments, "mask": masks, "labels": labels, "modes": modes}

    def loss(self, model: BertForPreTraining, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        h = hidden(model, batch["ids"], batch["segments"], batch["mask"])
        chosen = batch["labels"] != -100
        if not chosen.any():
            return h.sum() * 0.0
        return F.cross_entropy(model.mlm(h[chosen]), batch["labels"][chosen])


def hidden(model: BertForPreTraining, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The encoder's hidden states under an arbitrary ``[B, L, L]`` attention mask."""
    x = model.encoder.embeddings(ids, segments)
    for block in model.encoder.blocks:
        x = block(x, mask)
    return x
