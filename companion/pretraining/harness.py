"""One pre-training harness, many objectives: chapter 8's way of comparing them at equal cost.

After BERT the field varied *what to predict*. Each paper changed the objective and, at the same
time, the data, the model size and the compute, so their tables cannot be lined up. Here every
objective is a small :class:`Objective` -- it turns a batch of packed token ids into model inputs
and targets, builds its model and computes its loss -- and :func:`pretrain` trains it on the same
rows, with the same tokenizer, the same :class:`ModelSize` and the same **compute budget** in
FLOPs, estimated the usual way (Kaplan et al. 2020) as

    FLOPs ~= 6 * N * tokens,

where ``N`` counts the parameters applied to every token (embeddings excluded: a lookup costs no
multiply-adds). ``6 = 2`` (multiply and add, forward) ``* 3`` (the backward pass costs about
twice the forward). A model whose layers share weights (ALBERT) or that runs its layers twice
per token (XLNet's two streams) or two networks (ELECTRA's generator and discriminator) says so
through a ``flop_parameters()`` method, so the budget buys it correspondingly fewer tokens.

The pieces:

* :class:`Vocab` -- the tokenizer's size, special ids and per-id flags (starts a word, is
  capitalised) that word- and entity-level masking need; :func:`build_corpus` trains chapter 7's
  byte-level BPE (plus sentinel tokens for T5) and packs documents into :class:`Corpus` rows;
* :class:`Objective` (abstract), :class:`ModelSize`, :func:`model_flops`, :func:`pretrain` ->
  :class:`PretrainResult` -- the contract every objective of chapters 8a and 8b plugs into;
* :class:`MaskedLM` -- the reference objective: BERT's masked LM with chapter 7's
  :func:`~companion.transformer.bert.mask_tokens`, masks drawn afresh for every batch
  (RoBERTa's *dynamic* masking); :mod:`.mlm` derives the other masking schemes from it;
* :func:`heldout_loss`, :func:`finetune_glue` -- held-out objective loss and GLUE-lite scores of the
  encoder an objective leaves behind (chapter 7's fine-tuning recipe, unchanged).
"""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ..train import TrainConfig, fit
from ..transformer.bert import BertConfig, BertEncoder, BertForPreTraining, mask_tokens
from ..transformer.blocks import count_parameters, init_weights

RESERVED = 3  # special tokens an encoder row may add: [CLS] a [SEP] b [SEP]
N_SENTINELS = 16  # T5's <extra_id_k> tokens kept in every chapter-8 vocabulary
SPECIAL_NAMES = ("<|endoftext|>", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


# ------------------------------------------------------------------------------ sizes and vocab


@dataclass(frozen=True)
class ModelSize:
    """The shape shared by every model of one comparison. ``max_len`` bounds a model's input
    (rows of the corpus have ``max_len - RESERVED`` tokens: :attr:`row_len`)."""

    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    max_len: int

    def __post_init__(self):
        for name in ("d_model", "n_layers", "n_heads", "d_ff", "max_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"ModelSize.{name} must be a positive int, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if self.max_len <= RESERVED + 1:
            raise ValueError(f"max_len={self.max_len} leaves no room for text after {RESERVED} special tokens")

    @property
    def row_len(self) -> int:
        return self.max_len - RESERVED


@dataclass(frozen=True)
class Vocab:
    """What objectives need to know about the tokenizer.

    Attributes:
        size: number of ids (the models' vocabulary size).
        pad, unk, cls, sep, mask, eos: special ids (``eos`` separates packed documents).
        sentinels: T5's ``<extra_id_k>`` ids (may be empty).
        word_start: ``[size]`` bool, True where the token begins a word (byte-level BPE: its text
            starts with a space) -- whole-word and span masking.
        capital: ``[size]`` bool, True where the token's first letter is upper case -- the
            capitalised-span "entities" of ERNIE-style masking.
        sentence_end: ``[size]`` bool, True where the token ends in ``.``, ``!`` or ``?`` (so the
            next word starts a sentence, and its capital letter says nothing about entities).
    """

    size: int
    pad: int
    unk: int
    cls: int
    sep: int
    mask: int
    eos: int
    sentinels: tuple[int, ...] = ()
    word_start: torch.Tensor | None = field(default=None, repr=False, compare=False)
    capital: torch.Tensor | None = field(default=None, repr=False, compare=False)
    sentence_end: torch.Tensor | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        for name in ("pad", "unk", "cls", "sep", "mask", "eos"):
            v = getattr(self, name)
            if not 0 <= v < self.size:
                raise ValueError(f"Vocab.{name}={v} is outside the vocabulary of {self.size} ids")
        if any(not 0 <= s < self.size for s in self.sentinels):
            raise ValueError(f"a sentinel id is outside the vocabulary of {self.size} ids")
        for name in ("word_start", "capital", "sentence_end"):
            t = getattr(self, name)
            if t is not None and (t.dtype != torch.bool or t.shape != (self.size,)):
                raise ValueError(f"Vocab.{name} must be a bool tensor of shape ({self.size},)")

    @property
    def specials(self) -> tuple[int, ...]:
        """Every id that is not text: never masked, never a random replacement."""
        return (self.pad, self.unk, self.cls, self.sep, self.mask, self.eos, *self.sentinels)

    def ordinary(self) -> torch.Tensor:
        """The ids of real text tokens (random replacements are drawn from these)."""
        keep = torch.ones(self.size, dtype=torch.bool)
        keep[list(self.specials)] = False
        return keep.nonzero().squeeze(1)

    def bert_config(self, size: ModelSize, **kw) -> BertConfig:
        """Chapter 7's :class:`BertConfig` for this vocabulary at ``size``."""
        return BertConfig(vocab_size=self.size, max_len=size.max_len, n_layer=size.n_layers, n_head=size.n_heads,
                          d_model=size.d_model, d_ff=size.d_ff, pad_id=self.pad, unk_id=self.unk, cls_id=self.cls,
                          sep_id=self.sep, mask_id=self.mask, **kw)

    @classmethod
    def from_tokenizer(cls, tok) -> Vocab:
        """From chapter 7's :class:`~companion.transformer.tokenizers.ByteLevelBPE` trained with
        :data:`SPECIAL_NAMES` (and optionally ``<extra_id_k>`` sentinels)."""
        sp = tok.special_tokens
        missing = [s for s in SPECIAL_NAMES if s not in sp]
        if missing:
            raise ValueError(f"the tokenizer lacks the special tokens {missing}; train it with build_corpus")
        V = len(tok)
        word_start = torch.zeros(V, dtype=torch.bool)
        capital = torch.zeros(V, dtype=torch.bool)
        sentence_end = torch.zeros(V, dtype=torch.bool)
        for i in range(V):
            if i in sp.values():
                continue
            b = tok.decoder_bytes.get(i, b"")
            word_start[i] = b[:1] == b" "
            text = b.lstrip(b" ")
            capital[i] = text[:1].isupper()
            sentence_end[i] = text.rstrip()[-1:] in (b".", b"!", b"?")
        sentinels = tuple(sp[f"<extra_id_{k}>"] for k in range(N_SENTINELS) if f"<extra_id_{k}>" in sp)
        return cls(V, sp["[PAD]"], sp["[UNK]"], sp["[CLS]"], sp["[SEP]"], sp["[MASK]"], sp["<|endoftext|>"],
                   sentinels, word_start, capital, sentence_end)


def toy_vocab(size: int = 64, n_sentinels: int = 0) -> Vocab:
    """A made-up vocabulary for tests: specials at ids 0-5 (eos, pad, unk, cls, sep, mask), then
    sentinels; every 3rd ordinary id starts a word, every 7th is capitalised, every 11th ends
    a sentence."""
    if size < 8 + n_sentinels:
        raise ValueError(f"size must be at least {8 + n_sentinels}")
    ids = torch.arange(size)
    first = 6 + n_sentinels
    word_start = (ids >= first) & ((ids - first) % 3 == 0)
    capital = (ids >= first) & ((ids - first) % 7 == 0)
    sentence_end = (ids >= first) & ((ids - first) % 11 == 5)
    return Vocab(size, pad=1, unk=2, cls=3, sep=4, mask=5, eos=0, sentinels=tuple(range(6, first)),
                 word_start=word_start, capital=capital, sentence_end=sentence_end)


@dataclass
class Corpus:
    """Packed pre-training data: ``rows`` ``[N, row_len]`` and ``heldout`` ``[M, row_len]`` token
    ids (documents joined by ``eos``, cut into equal rows; no padding), the tokenizer and its
    :class:`Vocab`."""

    tokenizer: object
    vocab: Vocab
    rows: torch.Tensor
    heldout: torch.Tensor

    @property
    def tokens(self) -> int:
        return int(self.rows.numel())


def pack_rows(docs: Sequence[Sequence[int]], row_len: int, eos: int) -> torch.Tensor:
    """Documents (token-id lists) joined by ``eos`` into one stream, cut into ``[N, row_len]``
    (the incomplete tail is dropped): RoBERTa's FULL-SENTENCES packing."""
    if row_len < 2:
        raise ValueError(f"row_len must be at least 2, got {row_len}")
    stream = [t for d in docs for t in (*d, eos)]
    n = len(stream) // row_len
    if n < 1:
        raise ValueError(f"{len(stream)} tokens do not fill one row of {row_len}; use more text or shorter rows")
    return torch.tensor(stream[: n * row_len], dtype=torch.long).view(n, row_len)


def build_corpus(texts: Sequence[str], heldout_texts: Sequence[str], *, vocab_size: int, row_len: int,
                 tokenizer_texts: Sequence[str] | None = None, n_sentinels: int = N_SENTINELS) -> Corpus:
    """Train chapter 7's byte-level BPE (``vocab_size`` ids, :data:`SPECIAL_NAMES` and
    ``n_sentinels`` sentinels included) on ``tokenizer_texts`` (default ``texts``) and pack
    ``texts`` / ``heldout_texts`` into rows of ``row_len`` ids."""
    from ..transformer.tokenizers import ByteLevelBPE

    specials = (*SPECIAL_NAMES, *(f"<extra_id_{k}>" for k in range(n_sentinels)))
    tok = ByteLevelBPE.train(list(tokenizer_texts or texts), vocab_size, special_tokens=specials)
    vocab = Vocab.from_tokenizer(tok)
    rows = pack_rows([tok.encode_ordinary(t) for t in texts], row_len, vocab.eos)
    held = pack_rows([tok.encode_ordinary(t) for t in heldout_texts], row_len, vocab.eos)
    return Corpus(tok, vocab, rows, held)


# ------------------------------------------------------------------------------ the contract


class Objective(abc.ABC):
    """A pre-training objective: what the model sees, what it predicts, and which part of it
    fine-tunes afterwards.

    Subclasses set ``name`` (the row label) and ``arch`` (``"encoder"``, ``"decoder"`` or
    ``"encoder-decoder"``), and implement the three abstract methods. ``make_batch`` runs on the
    CPU with the given generator only (so that batches repeat exactly); ``build_model`` draws its
    initial weights from torch's global generator, which :func:`pretrain` seeds.
    """

    name: str = "objective"
    arch: str = "encoder"

    @abc.abstractmethod
    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        """rows: (B, T) long token ids from the packed corpus -> model inputs + targets (CPU)."""

    @abc.abstractmethod
    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        """A freshly initialised model for this objective."""

    @abc.abstractmethod
    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The scalar training loss of ``model`` on ``batch``."""

    def encoder(self, model: nn.Module) -> nn.Module | None:
        """The part that fine-tunes on GLUE-lite (None: the objective cannot be fine-tuned)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def init_model(model: nn.Module) -> nn.Module:
    """BERT/GPT initialisation (N(0, 0.02), zero biases) from torch's global generator."""
    init_weights(model)
    return model


def non_embedding_parameters(model: nn.Module) -> int:
    """Distinct trainable parameters outside ``nn.Embedding`` tables (a tied output layer is the
    embedding table, so it is left out too)."""
    emb = {id(p) for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    uniq = {id(p): p for p in model.parameters() if p.requires_grad}
    return sum(p.numel() for k, p in uniq.items() if k not in emb)


def flop_parameters(model: nn.Module) -> int:
    """Parameters applied to each token: ``model.flop_parameters()`` when the model defines it
    (shared layers counted once per use, two networks or two streams added up), else
    :func:`non_embedding_parameters`."""
    if hasattr(model, "flop_parameters"):
        return int(model.flop_parameters())
    return non_embedding_parameters(model)


def model_flops(model: nn.Module, tokens: int) -> float:
    """Training FLOPs ``6 * N * tokens`` (N: :func:`flop_parameters`; 2 per multiply-add, x3 for
    forward + backward). Attention's ``T^2`` term and the output softmax are left out, as in
    Kaplan et al.; wall time (in :class:`PretrainResult`) shows what this estimate misses."""
    if tokens < 0:
        raise ValueError(f"tokens must be non-negative, got {tokens}")
    return 6.0 * flop_parameters(model) * tokens


@dataclass
class PretrainResult:
    """What :func:`pretrain` returns.

    Attributes:
        name: the objective's name.
        model: the trained model (on ``device``).
        losses: training loss per step.
        tokens: corpus tokens consumed (rows x row length x steps).
        flops: :func:`model_flops` of those tokens (at most the budget).
        wall_s: wall-clock seconds of the training loop (batch making included).
        tokens_per_s: ``tokens / wall_s``.
        batch_s: seconds spent in ``make_batch`` (its share of the step: :attr:`batch_share`).
        steps: optimizer steps taken.
    """

    name: str
    model: nn.Module
    losses: list[float]
    tokens: int
    flops: float
    wall_s: float
    tokens_per_s: float
    batch_s: float
    steps: int = 0

    @property
    def batch_share(self) -> float:
        """The share of the training time spent making batches (the issue asks for <= 5 %)."""
        return self.batch_s / self.wall_s if self.wall_s > 0 else float("nan")

    def final_loss(self, k: int = 20) -> float:
        """The mean training loss of the last ``k`` steps."""
        return float(np.mean(self.losses[-k:]))


def _check_rows(rows: torch.Tensor, size: ModelSize, batch_size: int) -> None:
    if not isinstance(rows, torch.Tensor) or rows.dim() != 2 or rows.dtype != torch.long:
        raise ValueError("rows must be a 2-D long tensor of token ids [N, T] (see pack_rows)")
    if rows.shape[1] > size.row_len:
        raise ValueError(f"rows of {rows.shape[1]} tokens are longer than size.row_len={size.row_len} "
                         f"(max_len {size.max_len} - {RESERVED} special tokens); pack shorter rows")
    if len(rows) < batch_size:
        raise ValueError(f"{len(rows)} rows do not fill one batch of {batch_size}; use more text or a smaller batch")


def pretrain(objective: Objective, rows: torch.Tensor, size: ModelSize, vocab_size: int, *,
             flops_budget: float, batch_size: int, lr: float, seed: int = 0,
             device: str | torch.device | None = "cpu", weight_decay: float = 0.01) -> PretrainResult:
    """Train ``objective``'s model on ``rows`` until ``flops_budget`` is spent.

    The budget buys ``floor(flops_budget / (6 N B T))`` steps of ``batch_size`` rows. Rows are
    shuffled per epoch by a generator seeded with ``seed`` alone, so every objective sees the
    same rows in the same order; the objective's randomness (masks, permutations, noise) comes
    from a second generator, advanced across the whole run (fresh draws every epoch). AdamW at a
    constant ``lr`` through :func:`companion.train.fit`.

    Raises:
        ValueError: bad rows, or a budget too small for a single step.
    """
    _check_rows(rows, size, batch_size)
    if not (isinstance(flops_budget, (int, float)) and flops_budget > 0 and math.isfinite(flops_budget)):
        raise ValueError(f"flops_budget must be a positive finite number, got {flops_budget!r}")
    torch.manual_seed(seed)
    model = objective.build_model(size, vocab_size)
    tokens_per_step = batch_size * rows.shape[1]
    per_step = model_flops(model, tokens_per_step)
    steps = int(flops_budget // per_step)
    if steps < 1:
        raise ValueError(f"a budget of {flops_budget:.3g} FLOPs does not buy one step of {per_step:.3g} "
                         f"({objective.name}: {flop_parameters(model):,} parameters x {tokens_per_step} tokens x 6)")
    batch_time = [0.0]
    obj_gen = torch.Generator().manual_seed(10_007 * seed + 1)

    def batches(epoch: int) -> Iterator[dict[str, torch.Tensor]]:
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(seed * 1000 + epoch))
        for i in range(0, len(rows) - batch_size + 1, batch_size):  # full batches only: equal tokens per step
            t0 = time.perf_counter()
            batch = objective.make_batch(rows[order[i:i + batch_size]], obj_gen)
            batch_time[0] += time.perf_counter() - t0
            yield batch

    n_per_epoch = len(rows) // batch_size
    cfg = TrainConfig(epochs=math.ceil(steps / n_per_epoch), max_steps=steps, lr=lr, optimizer="adamw",
                      weight_decay=weight_decay, seed=seed, device=None if device is None else str(device),
                      progress=False)
    t0 = time.perf_counter()
    hist = fit(model, batches, config=cfg, loss_fn=objective.loss, count_fn=lambda b: tokens_per_step)
    wall = time.perf_counter() - t0
    tokens = hist.steps * tokens_per_step
    return PretrainResult(objective.name, model, hist.step_loss, tokens, model_flops(model, tokens), wall,
                          tokens / wall if wall > 0 else float("nan"), batch_time[0], hist.steps)


@torch.no_grad()
def heldout_loss(objective: Objective, model: nn.Module, rows: torch.Tensor, *, batch_size: int = 64,
                 seed: int = 0) -> float:
    """The objective's mean loss on held-out rows (its randomness drawn once from ``seed``).
    Losses of different objectives predict different things: compare them only within one."""
    gen = torch.Generator().manual_seed(seed)
    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    total, n = 0.0, 0
    try:
        for i in range(0, len(rows) - batch_size + 1, batch_size) or [0]:
            chunk = rows[i:i + batch_size]
            batch = {k: v.to(dev) for k, v in objective.make_batch(chunk, gen).items()}
            total += float(objective.loss(model, batch)) * len(chunk)
            n += len(chunk)
    finally:
        model.train(was)
    return total / n


# ------------------------------------------------------------------------------ the reference objective


class MaskedLM(Objective):
    """BERT's masked LM with dynamic masking (RoBERTa): ``[CLS] row [SEP]``, 15 % of the text
    tokens chosen afresh in every batch, 80/10/10 ``[MASK]`` / random / kept (chapter 7's
    :func:`~companion.transformer.bert.mask_tokens`), predicted by a tied softmax.

    Subclasses change *which* positions are chosen by overriding :meth:`choose`; the 80/10/10
    corruption (:meth:`corrupt`) and the model stay the same.
    """

    name, arch = "MLM (dynamic)", "encoder"

    def __init__(self, vocab: Vocab, p: float = 0.15):
        if not 0 < p < 1:
            raise ValueError(f"p must be in (0, 1), got {p}")
        self.vocab, self.p = vocab, p
        self._ordinary = vocab.ordinary()
        self._specials = torch.tensor(vocab.specials)

    # -- batches
    def frame(self, rows: torch.Tensor) -> torch.Tensor:
        """``[CLS] row [SEP]`` for every row."""
        B = len(rows)
        v = self.vocab
        return torch.cat([torch.full((B, 1), v.cls), rows, torch.full((B, 1), v.sep)], 1)

    def candidates(self, ids: torch.Tensor) -> torch.Tensor:
        """Positions that may be masked: text tokens, not specials."""
        return ~torch.isin(ids, self._specials.to(ids.device))

    def choose(self, ids: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        """Which positions to predict: each candidate independently with probability ``p``."""
        return self.candidates(ids) & (torch.rand(ids.shape, generator=gen) < self.p)

    def corrupt(self, ids: torch.Tensor, chosen: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """BERT's 80/10/10 on the ``chosen`` positions: ``(inputs, labels)``, labels -100 elsewhere.
        Draws exactly as :func:`mask_tokens` does after its choice (a test checks they agree)."""
        r = torch.rand(ids.shape, generator=gen)
        labels = ids.masked_fill(~chosen, -100)
        inputs = ids.masked_fill(chosen & (r < 0.8), self.vocab.mask)
        rand = self._ordinary[torch.randint(len(self._ordinary), ids.shape, generator=gen)]
        return torch.where(chosen & (r >= 0.8) & (r < 0.9), rand, inputs), labels

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = self.frame(rows)
        inputs, labels = self.corrupt(ids, self.choose(ids, gen), gen)
        return {"ids": inputs, "labels": labels}

    # -- model
    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        model = BertForPreTraining(self.vocab.bert_config(size), seed=None)
        init_model(model)
        nn.init.zeros_(model.mlm.decoder.bias)
        return model

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if not (batch["labels"] != -100).any():  # a (tiny) batch with nothing chosen: predict nothing
            return model.encoder(batch["ids"][:1, :2]).sum() * 0.0
        return model.loss(batch)

    def encoder(self, model: nn.Module) -> BertEncoder:
        return model.encoder


def reference_mask_tokens(ids: torch.Tensor, vocab: Vocab, p: float, gen: torch.Generator):
    """Chapter 7's :func:`mask_tokens` on ``ids`` with a config made from ``vocab`` (for tests)."""
    cfg = BertConfig(vocab_size=vocab.size, pad_id=vocab.pad, unk_id=vocab.unk, cls_id=vocab.cls,
                     sep_id=vocab.sep, mask_id=vocab.mask)
    return mask_tokens(ids, cfg, p=p, generator=gen)


# ------------------------------------------------------------------------------ GLUE-lite


@dataclass(frozen=True)
class FineTune:
    """Chapter 7's fine-tuning recipe (the fields :func:`companion.transformer.chapter7b.finetune`
    reads): epochs, learning rate, batch size, training examples per task (None: all)."""

    ft_epochs: int = 1
    ft_lr: float = 5e-4
    ft_batch: int = 32
    ft_train: int | None = None


def finetune_glue(encoder: nn.Module, tokenizer, tasks: dict, ft: FineTune, seeds: Sequence[int] = (0,),
                  device: str | None = None) -> list[dict[str, np.ndarray]]:
    """Fine-tune a copy of ``encoder`` (a :class:`BertEncoder` or subclass) on every GLUE-lite
    task, once per seed: ``[{task: test predictions}]`` per seed (score them with
    :func:`companion.transformer.chapter7b.glue_scores`)."""
    from ..transformer.chapter7b import finetune

    if not isinstance(encoder, BertEncoder):
        raise TypeError(f"finetune_glue takes a BertEncoder (or subclass), got {type(encoder).__name__}; "
                        "an objective whose encoder is something else needs its own fine-tuning route")
    return [{t: finetune(encoder, tokenizer, task, ft, seed=seed, device=device) for t, task in tasks.items()}
            for seed in seeds]


__all__ = [
    "N_SENTINELS",
    "RESERVED",
    "SPECIAL_NAMES",
    "Corpus",
    "FineTune",
    "MaskedLM",
    "ModelSize",
    "Objective",
    "PretrainResult",
    "Vocab",
    "build_corpus",
    "count_parameters",
    "finetune_glue",
    "flop_parameters",
    "heldout_loss",
    "init_model",
    "model_flops",
    "non_embedding_parameters",
    "pack_rows",
    "pretrain",
    "reference_mask_tokens",
    "toy_vocab",
]
