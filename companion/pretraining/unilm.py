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

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_ids, check_int, check_like
from ..transformer.attention import bidirectional_mask, causal_mask, prefix_lm_mask
from ..transformer.bert import BertForPreTraining
from .harness import MaskedLM, ModelSize, Vocab

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

    def __init__(self, vocab: Vocab, p: float = 0.15, shares: tuple[float, ...] = SHARES,
                 max_len: int | None = None, name: str | None = None):
        super().__init__(vocab, p)
        if len(shares) != len(MODES) or abs(sum(shares) - 1) > 1e-6 or min(shares) < 0:
            raise ValueError(f"shares must be {len(MODES)} non-negative numbers summing to 1 (modes {MODES})")
        self.shares = torch.tensor(shares)
        self.max_len = max_len  # a longer position table than the rows need (for seq2seq fine-tuning)
        self.name = name or self.name
        self._layouts: dict[int, dict[str, torch.Tensor]] = {}

    def build_model(self, size: ModelSize, vocab_size: int) -> BertForPreTraining:
        if self.max_len is not None and self.max_len < size.max_len:
            raise ValueError(f"max_len={self.max_len} is shorter than the model size's {size.max_len}")
        return super().build_model(replace(size, max_len=self.max_len or size.max_len), vocab_size)

    def layouts(self, T: int) -> dict[str, torch.Tensor]:
        """Every row layout rows of ``T`` tokens can take, built once per ``T``: variant ``m`` < 3
        is mode ``m`` (the whole row, one segment), variant ``3 + k`` is seq2seq cut after
        ``T // 4 + k`` tokens. Per variant: ``text`` (which row token sits at each position),
        ``fill`` (the special id there, -1 where a row token goes), ``segments``, ``mask``."""
        if T not in self._layouts:
            lo, hi = T // 4, max(T // 4 + 1, 3 * T // 4)
            modes = torch.tensor([0, 1, 2] + [MODES.index("seq2seq")] * (hi - lo))
            cuts = torch.tensor([lo] * 3 + list(range(lo, hi)))
            self._layouts[T] = self._build_layouts(T, modes, cuts)
        return self._layouts[T]

    def _build_layouts(self, T: int, modes: torch.Tensor, cuts: torch.Tensor) -> dict[str, torch.Tensor]:
        L, v = T + 3, self.vocab
        s2s = (modes == MODES.index("seq2seq"))[:, None]
        p = torch.arange(L)[None, :]
        c = torch.where(s2s, cuts[:, None], T)  # the source's text length (all of it: one segment)
        n_real = torch.where(s2s, T + 3, T + 2)
        text = torch.where(p <= c, p - 1, p - 2 + (~s2s).long()).clamp(0, T - 1)
        fill = torch.where((p >= 1) & (p <= c) | s2s & (p >= c + 2) & (p <= T + 1), -1, v.pad)
        fill = torch.where(p == 0, v.cls, torch.where((p == c + 1) | s2s & (p == T + 2), v.sep, fill))
        segments = (s2s & (p >= c + 2)).long()
        i, j = p[0][:, None], p[0][None, :]
        src_len = (c + 2)[:, :, None]  # [CLS] a [SEP]
        by_mode = torch.stack([torch.ones(L, L, dtype=torch.bool), j <= i, j >= i])[modes.clamp(max=2)]
        masks = torch.where(s2s[:, :, None], (j < src_len) | ((i >= src_len) & (j <= i)), by_mode)
        real = p < n_real  # [V, L]
        masks = torch.where(real[:, :, None], masks & real[:, None, :], real[:, None, :])
        return {"text": text.expand(len(modes), L).contiguous(), "fill": fill.expand(len(modes), L).contiguous(),
                "segments": segments.expand(len(modes), L).contiguous(), "mask": masks}

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        B, T = rows.shape
        modes = torch.multinomial(self.shares, B, replacement=True, generator=gen)
        cuts = torch.randint(T // 4, max(T // 4 + 1, 3 * T // 4), (B,), generator=gen)
        # every layout is precomputed (:meth:`layouts`): a batch only picks its rows' layouts, one
        # index per row (building the [B, L, L] masks per batch cost more than the 5 % allowed)
        lay = self.layouts(T)
        s2s = modes == MODES.index("seq2seq")
        variant = torch.where(s2s, 3 + cuts - T // 4, modes)
        fill = lay["fill"][variant]
        ids = torch.where(fill < 0, rows.gather(1, lay["text"][variant]), fill)
        inputs, labels = self.corrupt(ids, self.choose(ids, gen), gen)
        return {"ids": inputs, "segments": lay["segments"][variant], "mask": lay["mask"][variant],
                "labels": labels, "modes": modes}

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


# ------------------------------------------------------------------------------ seq2seq fine-tuning


@dataclass(frozen=True)
class GenerationIds:
    """The special ids and length limit chapter 8b's translation helpers read from ``.config``."""

    pad_id: int
    bos_id: int
    eos_id: int
    max_len: int


def seq2seq_layout(src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor, vocab: Vocab
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(ids, segments, positions, mask [B, N, N])`` of one pass that predicts every target token
    under UniLM's sequence-to-sequence mask.

    The row is ``[CLS] x [SEP] | y_1 .. y_{L-1} | [MASK]_1 .. [MASK]_L`` (``tgt_in`` is ``[CLS]
    y_1 .. y_{L-1}``, padded with ``[PAD]``). The source sees the source; the real target tokens
    see the source and the target up to themselves (the seq2seq mask); ``[MASK]_t`` has ``y_t``'s
    position and segment and sees the source, ``y_1 .. y_{t-1}`` and itself -- exactly what the
    ``[MASK]`` appended after ``y_{<t}`` sees when UniLM generates token ``t``. So one pass gives
    every teacher-forced ``P(y_t | x, y_{<t})`` (the "pseudo mask" layout of Bao et al. 2020)."""
    B, S = src.shape
    L = tgt_in.shape[1]
    A, Ly = S + 2, L - 1
    dev = src.device
    one = torch.ones(B, 1, dtype=torch.bool, device=dev)
    real_a = torch.cat([one, src_mask.bool(), one], 1)
    real_y = tgt_in[:, 1:] != vocab.pad
    src_len = src_mask.long().sum(1, keepdim=True)
    ids = torch.cat([torch.full((B, 1), vocab.cls, device=dev), src, torch.full((B, 1), vocab.sep, device=dev),
                     tgt_in[:, 1:], torch.full((B, L), vocab.mask, device=dev)], 1)
    pos_a = torch.arange(A, device=dev).expand(B, A).clone()
    pos_a[:, -1:] = src_len + 1  # [SEP] right after the last real source token
    pos_y = src_len + 2 + torch.arange(L, device=dev)  # y_t and [MASK]_t share a position
    positions = torch.cat([pos_a, pos_y[:, :Ly], pos_y], 1)
    segments = torch.cat([torch.zeros(B, A, dtype=torch.long, device=dev),
                          torch.ones(B, Ly + L, dtype=torch.long, device=dev)], 1)
    N = A + Ly + L
    mask = torch.zeros(B, N, N, dtype=torch.bool, device=dev)
    mask[:, :, :A] = real_a[:, None, :]
    mask[:, A:A + Ly, A:A + Ly] = torch.ones(Ly, Ly, dtype=torch.bool, device=dev).tril() & real_y[:, None, :]
    mask[:, A + Ly:, A:A + Ly] = torch.ones(L, Ly, dtype=torch.bool, device=dev).tril(-1) & real_y[:, None, :]
    mask[:, A + Ly:, A + Ly:] = torch.eye(L, dtype=torch.bool, device=dev)
    return ids, segments, positions, mask


class UniLMSeq2Seq(nn.Module):
    """A (pre-trained) UniLM network used as a sequence-to-sequence model through its seq2seq mask.

    Same interface as :class:`~.seq2seq.Seq2Seq` where chapter 8b uses it: ``forward(src, tgt_in,
    src_mask) -> logits [B, L, V]`` (teacher-forced, :func:`seq2seq_layout`), :meth:`loss` on a
    batch dict, greedy :meth:`generate` (append ``[MASK]``, predict it, replace it by the
    prediction, repeat -- UniLM's decoding, with no KV cache), ``config``, ``device``.

    Fine-tuning predicts *every* target token once per step (through the pseudo masks), as the
    encoder--decoders' teacher forcing does; UniLM v1 instead masked a random share of the target
    tokens in place. The position table must hold ``source + target + 2`` positions."""

    def __init__(self, model: BertForPreTraining, vocab: Vocab):
        super().__init__()
        self.model, self.vocab = model, vocab
        self.config = GenerationIds(vocab.pad, vocab.cls, vocab.sep, model.config.max_len)

    @property
    def device(self) -> torch.device:
        return self.model.encoder.embeddings.tok.weight.device

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_mask: torch.Tensor | None = None,
                targets: torch.Tensor | None = None) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        for name, t in (("src", src), ("tgt_in", tgt_in)):
            check_ids(t, name, self.model.config.vocab_size)
        check_like(src_mask, "src_mask", src, "src")
        src_mask = torch.ones_like(src) if src_mask is None else src_mask
        ids, segments, positions, mask = seq2seq_layout(src, src_mask, tgt_in, self.vocab)
        if int(positions.max()) >= self.config.max_len:
            raise ValueError(f"source + target need {int(positions.max()) + 1} positions, the model has "
                             f"{self.config.max_len}; cut them or build UniLM with a larger max_len")
        e = self.model.encoder.embeddings
        x = e.drop(e.ln(e.tok(ids) + e.seg(segments) + e.pos(positions)))
        for block in self.model.encoder.blocks:
            x = block(x, mask)
        logits = self.model.mlm(x[:, -tgt_in.shape[1]:])
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self(batch["src"], batch["tgt_in"], batch.get("src_mask"), batch["tgt_out"])[1]

    @torch.no_grad()
    def generate(self, src: torch.Tensor, max_new_tokens: int, src_mask: torch.Tensor | None = None
                 ) -> torch.Tensor:
        """Greedy decoding: ``[B, max_new_tokens]`` new ids, ``pad_id`` after a row's ``[SEP]``."""
        check_int(max_new_tokens, "max_new_tokens")
        c = self.config
        was_training = self.training
        self.eval()
        B = src.shape[0]
        out = torch.full((B, 1), c.bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_new_tokens):
            nxt = self(src, out, src_mask)[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, c.pad_id), nxt)
            done |= nxt == c.eos_id
            out = torch.cat([out, nxt[:, None]], 1)
            if bool(done.all()):
                break
        self.train(was_training)
        return out[:, 1:]
