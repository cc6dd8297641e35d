"""An encoder--decoder Transformer (Vaswani et al. 2017) built from chapter 7's blocks.

The encoder is chapter 7's :class:`~companion.transformer.blocks.Block` stack with a padding
mask (every source token sees every real source token). The decoder block adds the one piece
chapter 7 did not need, **cross-attention**: its queries come from the decoder, its keys and
values from the encoder's output (the *memory*), so each target position can read the whole
source. A decoder block is therefore

    causal self-attention  ->  cross-attention over the memory  ->  MLP,

each with a residual connection and a layer norm (pre-LN here by default, as in T5 and GPT-2;
``pre_ln=False`` is the original post-LN layout, as in BART). Encoder, decoder and output layer
share one token embedding matrix (BART and T5 do the same).

Training is *teacher forcing*: the decoder reads the gold target shifted right by one
(``[bos] y_1 .. y_{n-1}``) and predicts ``y_1 .. y_n`` in one pass. Generation feeds one token a
step; the decoder's own keys and values go into chapter 7's :class:`KVCache` and the memory's
keys and values are computed once per source (a test checks both paths give the same logits).

:class:`Seq2Seq` equals :class:`torch.nn.Transformer` with the same weights (a test maps them).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_ids, check_int, check_like
from ..device import get_device
from ..transformer.attention import (
    KVCache,
    MultiHeadAttention,
    padding_mask,
    scaled_dot_product_attention,
)
from ..transformer.blocks import (
    MLP,
    Block,
    check_config,
    count_parameters,
    init_weights,
    position_embedding,
)
from ..transformer.gpt import check_sampling, sample_next


@dataclass
class Seq2SeqConfig:
    """Sizes, layout and special ids. The defaults are a tiny test model."""

    vocab_size: int = 100
    max_len: int = 64           # longest source and longest target (learned positions)
    n_enc_layer: int = 2
    n_dec_layer: int = 2
    n_head: int = 4
    d_model: int = 32
    d_ff: int | None = None     # default 4 * d_model
    dropout: float = 0.0
    pre_ln: bool = True
    positions: str = "learned"
    activation: str = "gelu"
    ln_eps: float = 1e-5
    bias: bool = True
    pad_id: int = 0             # source padding (masked out of attention)
    bos_id: int = 1             # the decoder's start token
    eos_id: int = 2             # generation stops after it

    def __post_init__(self):
        check_config("Seq2SeqConfig", self, ("vocab_size", "max_len", "n_enc_layer", "n_dec_layer", "n_head", "d_model"),
                     ("pad_id", "bos_id", "eos_id"))
        self.d_ff = 4 * self.d_model if self.d_ff is None else self.d_ff


class CrossAttention(nn.Module):
    """Multi-head attention whose queries come from ``x`` and keys/values from ``memory``.

    ``memory_kv(memory)`` projects the memory once (``[B, H, S, hd]`` keys and values); a decoder
    generating token by token reuses them at every step. ``memory_mask`` is ``[B, S]`` (True or 1
    = a real source token).
    """

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model={d_model} must be divisible by n_head={n_head}")
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=bias)
        self.proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = dropout
        self.use_sdpa = True
        self.last_weights: torch.Tensor | None = None

    def memory_kv(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, S, _ = memory.shape
        k, v = self.kv(memory).view(B, S, 2, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4)
        return k, v

    def forward(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor],
                memory_mask: torch.Tensor | None = None) -> torch.Tensor:
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k, v = kv
        mask = None if memory_mask is None else memory_mask.bool()[:, None, None, :]  # all heads, queries
        p = self.dropout if self.training else 0.0
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        else:
            y, w = scaled_dot_product_attention(q, k, v, mask, p, self.training)
            self.last_weights = w.detach()
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class DecoderBlock(nn.Module):
    """Causal self-attention, cross-attention over the memory, MLP (pre-LN or post-LN)."""

    def __init__(self, d_model: int, n_head: int, d_ff: int, *, pre_ln: bool, dropout: float = 0.0,
                 activation: str = "gelu", ln_eps: float = 1e-5, bias: bool = True):
        super().__init__()
        self.pre_ln = pre_ln
        self.ln_1 = nn.LayerNorm(d_model, eps=ln_eps, bias=bias)
        self.attn = MultiHeadAttention(d_model, n_head, dropout, bias)
        self.ln_2 = nn.LayerNorm(d_model, eps=ln_eps, bias=bias)
        self.cross = CrossAttention(d_model, n_head, dropout, bias)
        self.ln_3 = nn.LayerNorm(d_model, eps=ln_eps, bias=bias)
        self.mlp = MLP(d_model, d_ff, activation, dropout, bias)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor], memory_mask: torch.Tensor | None = None,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        if self.pre_ln:
            x = x + self.drop(self.attn(self.ln_1(x), causal=True, cache=cache, layer=layer))
            x = x + self.drop(self.cross(self.ln_2(x), kv, memory_mask))
            return x + self.mlp(self.ln_3(x))
        x = self.ln_1(x + self.drop(self.attn(x, causal=True, cache=cache, layer=layer)))
        x = self.ln_2(x + self.drop(self.cross(x, kv, memory_mask)))
        return self.ln_3(x + self.mlp(x))


class Seq2Seq(nn.Module):
    """Encoder--decoder Transformer with one shared token embedding and a tied output layer.

    ``forward(src, tgt_in, src_mask=None, targets=None)`` returns logits ``[B, T, V]`` (and the
    mean cross-entropy over ``targets``, -100 = ignore). :meth:`loss` takes a batch dict with
    ``src``, ``src_mask``, ``tgt_in``, ``tgt_out`` (what the objectives in this package make).
    """

    def __init__(self, config: Seq2SeqConfig, seed: int | None = 0, device: str | torch.device | None = None):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.enc_pos = position_embedding(c.positions, c.max_len, c.d_model)
        self.dec_pos = position_embedding(c.positions, c.max_len, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        self.encoder_blocks = nn.ModuleList(
            Block(c.d_model, c.n_head, c.d_ff, pre_ln=c.pre_ln, dropout=c.dropout, attn_dropout=c.dropout,
                  activation=c.activation, ln_eps=c.ln_eps, bias=c.bias) for _ in range(c.n_enc_layer))
        self.decoder_blocks = nn.ModuleList(
            DecoderBlock(c.d_model, c.n_head, c.d_ff, pre_ln=c.pre_ln, dropout=c.dropout, activation=c.activation,
                         ln_eps=c.ln_eps, bias=c.bias) for _ in range(c.n_dec_layer))
        # pre-LN leaves each stack's residual stream un-normalised: one final LN per stack
        self.ln_enc = nn.LayerNorm(c.d_model, eps=c.ln_eps, bias=c.bias) if c.pre_ln else nn.Identity()
        self.ln_dec = nn.LayerNorm(c.d_model, eps=c.ln_eps, bias=c.bias) if c.pre_ln else nn.Identity()
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if seed is not None:
            torch.manual_seed(seed)
        init_weights(self)
        self.lm_head.weight = self.embed.weight
        if device is not None:
            self.to(get_device(device))

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device

    def num_parameters(self) -> int:
        return count_parameters(self)

    def _check_len(self, T: int, what: str) -> None:
        if T > self.config.max_len:
            raise ValueError(f"{what} of {T} tokens exceeds max_len={self.config.max_len}; truncate it or build "
                             "the model with a larger max_len")

    # -------------------------------------------------------------------- the two stacks

    def run_encoder(self, x: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The encoder stack on embedded inputs ``[B, S, d]`` (no embedding, no dropout)."""
        mask = None if src_mask is None or bool(src_mask.all()) else padding_mask(src_mask)
        for block in self.encoder_blocks:
            x = block(x, mask)
        return self.ln_enc(x)

    def run_decoder(self, y: torch.Tensor, memory: torch.Tensor | list, src_mask: torch.Tensor | None = None,
                    cache: KVCache | None = None) -> torch.Tensor:
        """The decoder stack on embedded targets ``[B, T, d]``; ``memory`` is the encoder's
        output or the list of per-layer ``(k, v)`` from :meth:`memory_kv`."""
        kvs = self.memory_kv(memory) if isinstance(memory, torch.Tensor) else memory
        for i, block in enumerate(self.decoder_blocks):
            y = block(y, kvs[i], src_mask, cache, i)
        if cache is not None:
            cache.length += y.shape[1]
        return self.ln_dec(y)

    def memory_kv(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Every decoder layer's cross-attention keys and values of ``memory`` (computed once)."""
        return [b.cross.memory_kv(memory) for b in self.decoder_blocks]

    # -------------------------------------------------------------------- ids in, logits out

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Encoder output ``[B, S, d]`` of source ids ``[B, S]`` (``src_mask`` 1 = real token)."""
        check_ids(src, "src", self.config.vocab_size)
        check_like(src_mask, "src_mask", src, "src")
        self._check_len(src.shape[1], "source")
        pos = torch.arange(src.shape[1], device=src.device)
        return self.run_encoder(self.drop(self.embed(src) + self.enc_pos(pos)), src_mask)

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor | list, src_mask: torch.Tensor | None = None,
               cache: KVCache | None = None) -> torch.Tensor:
        """Decoder hidden states ``[B, T, d]`` of target ids ``[B, T]`` (after any cached ones)."""
        check_ids(tgt, "tgt", self.config.vocab_size)
        past = cache.length if cache is not None else 0
        self._check_len(past + tgt.shape[1], "target")
        pos = torch.arange(past, past + tgt.shape[1], device=tgt.device)
        return self.run_decoder(self.drop(self.embed(tgt) + self.dec_pos(pos)), memory, src_mask, cache)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_mask: torch.Tensor | None = None,
                targets: torch.Tensor | None = None) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        logits = self.lm_head(self.decode(tgt_in, self.encode(src, src_mask), src_mask))
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Teacher-forced cross-entropy of a batch with ``src``, ``tgt_in``, ``tgt_out`` (and
        optionally ``src_mask``)."""
        return self(batch["src"], batch["tgt_in"], batch.get("src_mask"), batch["tgt_out"])[1]

    def new_cache(self, batch: int, max_len: int | None = None) -> KVCache:
        c = self.config
        return KVCache.empty(c.n_dec_layer, batch, c.n_head, max_len or c.max_len, c.d_model // c.n_head,
                             device=self.device, dtype=self.embed.weight.dtype)

    @torch.no_grad()
    def generate(self, src: torch.Tensor, max_new_tokens: int, src_mask: torch.Tensor | None = None, *,
                 temperature: float = 0.0, top_k: int | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None, prefix: torch.Tensor | None = None,
                 return_logits: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Decode ``max_new_tokens`` tokens for each source (greedy by default), starting from
        ``[bos]`` (or ``prefix [B, P]``, which must start with it). Returns the new ids
        ``[B, max_new_tokens]``; after a row's ``eos`` its remaining ids are ``pad_id``.
        ``use_cache=False`` re-runs the decoder over the whole prefix every step (for the test
        that both paths agree)."""
        c = self.config
        check_ids(src, "src", c.vocab_size)
        check_int(max_new_tokens, "max_new_tokens")
        check_sampling(temperature, top_k, None)
        if prefix is not None:
            check_ids(prefix, "prefix", c.vocab_size)
            if len(prefix) != len(src) or prefix.shape[1] == 0:
                raise ValueError(f"prefix must be [batch={len(src)}, length >= 1] ids, got shape {tuple(prefix.shape)}")
        B = src.shape[0]
        out = prefix if prefix is not None else torch.full((B, 1), c.bos_id, dtype=torch.long, device=src.device)
        if out.shape[1] + max_new_tokens - 1 > c.max_len:
            raise ValueError(f"{out.shape[1]} + {max_new_tokens} target tokens exceed max_len={c.max_len}")
        was_training = self.training
        self.eval()
        kvs = self.memory_kv(self.encode(src, src_mask))  # the source is encoded once
        cache = self.new_cache(B) if use_cache else None
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        new, all_logits, step_input = [], [], out
        for _ in range(max_new_tokens):
            h = self.decode(step_input, kvs, src_mask, cache) if use_cache else self.decode(out, kvs, src_mask)
            logits = self.lm_head(h[:, -1]).float()
            all_logits.append(logits)
            nxt = sample_next(logits, temperature, top_k, None, generator).squeeze(1)
            nxt = torch.where(done, torch.full_like(nxt, c.pad_id), nxt)
            done |= nxt == c.eos_id
            new.append(nxt)
            out = torch.cat([out, nxt[:, None]], 1)
            step_input = nxt[:, None]
            if bool(done.all()):
                break
        self.train(was_training)
        ids = torch.stack(new, 1)
        return (ids, torch.stack(all_logits, 1)) if return_logits else ids


class EncoderView(nn.Module):
    """The encoder half of a :class:`Seq2Seq` as a module of its own (shares its parameters):
    ``forward(ids, segments=None, attention_mask=None) -> [B, T, d]`` like chapter 7's
    :class:`~companion.transformer.bert.BertEncoder`, so it fine-tunes the same way."""

    def __init__(self, model: Seq2Seq):
        super().__init__()
        self.model = model
        self.config = model.config

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.model.encode(ids, attention_mask)


def shift_right(tgt: torch.Tensor, bos_id: int, pad_id: int | None = None) -> torch.Tensor:
    """Decoder inputs for teacher forcing: ``[bos] y_1 .. y_{n-1}``. Ignored target positions
    (-100) become ``pad_id`` (default ``bos_id``) in the inputs."""
    x = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt[:, :-1]], 1)
    return x.masked_fill(x == -100, bos_id if pad_id is None else pad_id)


# ------------------------------------------------------------------------------ objectives


def pad_rows(seqs: list[list[int]], length: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Lists of ids cut or padded to ``length``: ``(ids [B, length], mask [B, length])`` (mask 1 =
    real token). A fixed length keeps every batch of an objective the same shape, so its cost
    per step is known in advance (the harness's FLOPs budget relies on that)."""
    # padded as Python lists and converted once (a tensor write per row cost a T5 batch ~40 %)
    cut = [list(s[:length]) for s in seqs]
    ids = torch.tensor([s + [pad] * (length - len(s)) for s in cut], dtype=torch.long).view(len(seqs), length)
    n = torch.tensor([len(s) for s in cut], dtype=torch.long)
    mask = (torch.arange(length)[None, :] < n[:, None]).long()
    return ids, mask


def seq2seq_config(vocab, size, *, max_len: int | None = None, pre_ln: bool = True) -> Seq2SeqConfig:
    """A :class:`Seq2SeqConfig` for a harness :class:`~companion.pretraining.harness.Vocab` at a
    :class:`~companion.pretraining.harness.ModelSize`: ``n_layers`` encoder blocks **and**
    ``n_layers`` decoder blocks (BART and T5 pair a BERT-sized encoder with an equal decoder),
    ``[CLS]`` as the decoder's start token and ``[SEP]`` as its end."""
    return Seq2SeqConfig(vocab_size=vocab.size, max_len=max_len or size.max_len, n_enc_layer=size.n_layers,
                         n_dec_layer=size.n_layers, n_head=size.n_heads, d_model=size.d_model, d_ff=size.d_ff,
                         pre_ln=pre_ln, pad_id=vocab.pad, bos_id=vocab.cls, eos_id=vocab.sep)


class FlopSeq2Seq(Seq2Seq):
    """A :class:`Seq2Seq` that tells the harness what one corpus token costs it.

    The harness charges ``6 * flop_parameters() * tokens`` for ``tokens`` corpus tokens. An
    encoder--decoder runs its encoder over ``src_len`` positions and its decoder over ``tgt_len``
    per row of ``row_len`` corpus tokens, so the parameters applied per corpus token are
    ``N_enc * src_len / row_len + N_dec * tgt_len / row_len`` (T5 span corruption's short
    targets make it cheap; BART's full reconstruction costs both stacks on every token).
    """

    def __init__(self, config: Seq2SeqConfig, src_share: float, tgt_share: float, **kw):
        super().__init__(config, **kw)
        self.src_share, self.tgt_share = float(src_share), float(tgt_share)

    def flop_parameters(self) -> float:
        enc = sum(p.numel() for p in self.encoder_blocks.parameters()) + sum(p.numel() for p in self.ln_enc.parameters())
        cross_kv = sum(p.numel() for b in self.decoder_blocks for p in b.cross.kv.parameters())
        dec = sum(p.numel() for p in self.decoder_blocks.parameters()) + sum(p.numel() for p in self.ln_dec.parameters())
        # the cross-attention's key/value projections run over the source, the rest over the target
        return (enc + cross_kv) * self.src_share + (dec - cross_kv) * self.tgt_share


class Seq2SeqObjective:
    """Shared parts of the encoder--decoder objectives (mixed into a harness ``Objective``).

    A subclass defines :meth:`pairs` (one row -> ``(source ids, target ids)``) and
    :meth:`lengths` (the fixed source and target lengths for rows of ``T`` tokens); this class
    pads them into ``src``, ``src_mask``, ``tgt_in`` (``[CLS]`` + target shifted right) and
    ``tgt_out`` (padding -100), builds a :class:`FlopSeq2Seq`, and computes the loss.
    """

    arch = "encoder-decoder"
    pre_ln = True

    def lengths(self, T: int) -> tuple[int, int]:
        raise NotImplementedError

    def pairs(self, row: list[int], gen: torch.Generator) -> tuple[list[int], list[int]]:
        raise NotImplementedError

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        if rows.dim() != 2:
            raise ValueError(f"rows must be [batch, length] token ids, got shape {tuple(rows.shape)}")
        S, L = self.lengths(rows.shape[1])
        srcs, tgts = zip(*(self.pairs(r, gen) for r in rows.tolist()))
        src, src_mask = pad_rows(list(srcs), S, self.vocab.pad)
        tgt, tgt_mask = pad_rows(list(tgts), L, self.vocab.pad)
        tgt_out = tgt.masked_fill(tgt_mask == 0, -100)
        return {"src": src, "src_mask": src_mask, "tgt_in": shift_right(tgt_out, self.vocab.cls, self.vocab.pad),
                "tgt_out": tgt_out}

    def build_model(self, size, vocab_size: int) -> FlopSeq2Seq:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        S, L = self.lengths(size.row_len)
        cfg = seq2seq_config(self.vocab, size, max_len=max(S, L, size.max_len), pre_ln=self.pre_ln)
        # seed=None: the harness seeds torch's global generator before building the model
        return FlopSeq2Seq(cfg, S / size.row_len, L / size.row_len, seed=None)

    def loss(self, model: Seq2Seq, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return model.loss(batch)

    def encoder(self, model: Seq2Seq) -> None:
        """None: an encoder--decoder fine-tunes text to text (:mod:`.t5`), not through a
        classifier on its encoder."""
        return
