"""T5's architecture comparison (Raffel et al. 2019, Section 3.2): encoder--decoder vs
prefix LM vs decoder-only, on one prefix-LM task.

Each row is cut at a point drawn uniformly from its middle half (one point per batch); the
first part is the *input*, the rest the *target*, and every architecture is scored on the same
thing -- the loss per target token given the input -- so their losses compare directly:

* **encoder--decoder** (:class:`EncDecPrefix`): the encoder reads the input bidirectionally, the
  decoder predicts the target through cross-attention. ``n_layers`` + ``n_layers`` blocks: about
  twice the parameters of the others, but each token passes one stack only, so about the same
  FLOPs per token (T5's "2P parameters, M FLOPs" row).
* **prefix LM** (:class:`PrefixLM`): one stack over ``[CLS] input target``; the input positions
  see each other bidirectionally, the target positions are causal (chapter 7's
  :func:`prefix_lm_mask`) -- "P parameters, M FLOPs".
* **decoder-only** (:class:`DecoderOnlyLM`): the same stack with a causal mask everywhere (a GPT),
  so even the input is read left to right.

T5 found encoder--decoder > prefix LM > decoder-only on its downstream tasks (its Table 2).
"""

from __future__ import annotations

import torch
from torch import nn

from ..checks import check_ids
from ..transformer.attention import prefix_lm_mask
from ..transformer.gpt import GPT, GPTConfig
from .harness import ModelSize, Objective, Vocab
from .seq2seq import Seq2SeqObjective, shift_right


def split_point(T: int, gen: torch.Generator) -> int:
    """The input length: uniform in ``[T // 4, 3 T // 4]`` (at least 1, at most ``T - 1``)."""
    lo, hi = max(1, T // 4), min(T - 1, max(1, 3 * T // 4))
    return int(torch.randint(lo, hi + 1, (1,), generator=gen))


class StackLM(GPT):
    """Chapter 7's GPT whose attention mask can be anything (``None``: causal)."""

    def masked_hidden(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        check_ids(ids, "ids", self.config.vocab_size)
        if ids.shape[1] > self.config.block_size:
            raise ValueError(f"{ids.shape[1]} tokens exceed block_size={self.config.block_size}")
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.drop(self.wte(ids) + self.wpe(pos))
        for block in self.blocks:
            x = block(x, mask=mask, causal=mask is None)
        return self.ln_f(x)


class PrefixLM(Objective):
    """One stack over ``[CLS] input target``: bidirectional over ``[CLS] input``, causal over the
    target; loss on the target tokens only."""

    name, arch = "prefix LM", "decoder"
    causal_input = False

    def __init__(self, vocab: Vocab, name: str | None = None):
        self.vocab = vocab
        self.name = name or self.name

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        B, T = rows.shape
        p = split_point(T, gen)
        seq = torch.cat([torch.full((B, 1), self.vocab.cls), rows], 1)
        targets = seq[:, 1:].clone()
        targets[:, :p] = -100  # the input's own tokens are given, not predicted
        return {"ids": seq[:, :-1], "targets": targets, "prefix": torch.tensor(p + 1)}

    def build_model(self, size: ModelSize, vocab_size: int) -> StackLM:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        cfg = GPTConfig(vocab_size=vocab_size, block_size=size.max_len, n_layer=size.n_layers, n_head=size.n_heads,
                        d_model=size.d_model, d_ff=size.d_ff, activation="gelu")
        return StackLM(cfg, seed=None)

    def mask(self, batch: dict[str, torch.Tensor]) -> torch.Tensor | None:
        T = batch["ids"].shape[1]
        return None if self.causal_input else prefix_lm_mask(T, int(batch["prefix"]), batch["ids"].device)

    def loss(self, model: StackLM, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = model.lm_head(model.masked_hidden(batch["ids"], self.mask(batch)))
        return nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), batch["targets"].reshape(-1),
                                           ignore_index=-100)


class DecoderOnlyLM(PrefixLM):
    """The same stack and loss with a causal mask everywhere (a GPT reading the input left to right)."""

    name = "decoder-only"
    causal_input = True


class EncDecPrefix(Seq2SeqObjective, Objective):
    """The encoder reads the input, the decoder predicts the target."""

    name = "encoder-decoder"

    def __init__(self, vocab: Vocab, name: str | None = None):
        self.vocab = vocab
        self.name = name or self.name

    def lengths(self, T: int) -> tuple[int, int]:
        return T // 2, T - T // 2  # the split point's mean: what the FLOPs budget charges

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        p = split_point(rows.shape[1], gen)
        src, tgt_out = rows[:, :p], rows[:, p:]
        return {"src": src, "src_mask": torch.ones_like(src), "tgt_in": shift_right(tgt_out, self.vocab.cls),
                "tgt_out": tgt_out}


ARCHITECTURES = {"encoder-decoder": EncDecPrefix, "prefix LM": PrefixLM, "decoder-only": DecoderOnlyLM}
