"""ULMFiT (Howard & Ruder 2018): pre-train an AWD-LSTM language model, fine-tune it on the target
task's text, then fine-tune a classifier on top — with three tricks that keep the second and
third steps from destroying what the first learned:

* **discriminative learning rates**: lower layers (more general) move less; the paper's choice is
  ``lr_{l-1} = lr_l / 2.6`` (:func:`discriminative_lrs`);
* **slanted triangular learning rates** (STLR): a short linear warm-up to ``lr_max`` over the first
  ``cut_frac`` of the steps, then a long linear decay to ``lr_max / ratio`` (:func:`stlr`);
* **gradual unfreezing**: first epoch only the classifier head trains, then one more layer group
  from the top each epoch (:func:`unfreeze_schedule`).

The classifier reads the last layer's states through **concat pooling**: ``[h_T, max_t h_t,
mean_t h_t]`` (:func:`concat_pool`). The AWD-LSTM (Merity et al. 2018) is three weight-dropped
LSTM layers with the dropouts of :mod:`companion.contextual.awd`, the last layer returning to the
embedding size so the output softmax can share the embedding matrix.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..neural_lm.common import make_output_layer
from ..train import History, TrainConfig, fit
from .awd import DroppedEmbedding, LockedDropout, WeightDropLSTM
from .lstm_lm import TBPTT, _check_pos_int, _check_rate

GroupState = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass
class AWDLSTMConfig:
    """An AWD-LSTM (defaults: the paper's sizes; the dropouts of fastai's language-model config).

    Attributes:
        vocab_size: words, including the specials. emb_dim: word vectors (and the last layer's
            output). hidden: the inner layers' state size. n_layers: LSTM layers.
        embed_p: embedding dropout (whole words). input_p: locked dropout on the embeddings.
        hidden_p: locked dropout between layers. weight_p: DropConnect on each ``W_hh``.
        output_p: locked dropout on the last layer's output (before the softmax / pooling).
        pad_id: the padding id (its embedding row starts at zero and gets no gradient).
        embed_init_std: ``None``: embeddings start uniform in [-0.1, 0.1] (AWD-LSTM's and fastai's
            choice, for runs of hundreds of epochs); a number: normal with this deviation. With
            the tied softmax, logits are embedding . state, so tiny embeddings make a short run
            push the top layer's states to +-1 to reach confident predictions (chapter 6a
            measured 62 % of them beyond 0.9 after one epoch); the laptop presets start at 0.5.
    """

    vocab_size: int
    emb_dim: int = 400
    hidden: int = 1150
    n_layers: int = 3
    embed_p: float = 0.02
    input_p: float = 0.25
    hidden_p: float = 0.15
    weight_p: float = 0.2
    output_p: float = 0.1
    pad_id: int | None = None
    embed_init_std: float | None = None

    def validate(self) -> None:
        if self.embed_init_std is not None and not self.embed_init_std > 0:
            raise ValueError(f"embed_init_std must be positive or None, got {self.embed_init_std!r}")
        for name in ("vocab_size", "emb_dim", "hidden", "n_layers"):
            _check_pos_int(name, getattr(self, name))
        for name in ("embed_p", "input_p", "hidden_p", "weight_p", "output_p"):
            _check_rate(name, getattr(self, name))
        if self.pad_id is not None and not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id must be a word id in [0, {self.vocab_size}), got {self.pad_id}")


class AWDLSTM(nn.Module):
    """The encoder: dropped embedding -> locked dropout -> weight-dropped LSTMs with locked dropout
    between them. ``forward`` returns every layer's outputs (for pooling and probing)."""

    def __init__(self, config: AWDLSTMConfig):
        super().__init__()
        config.validate()
        c = self.config = config
        self.embed = DroppedEmbedding(c.vocab_size, c.emb_dim, c.embed_p, padding_idx=c.pad_id)
        if c.embed_init_std is None:
            nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        else:
            nn.init.normal_(self.embed.weight, std=c.embed_init_std)
        if c.pad_id is not None:
            with torch.no_grad():
                self.embed.weight[c.pad_id].zero_()
        self.input_drop = LockedDropout(c.input_p)
        sizes = [c.emb_dim] + [c.hidden] * (c.n_layers - 1) + [c.emb_dim]
        self.layers = nn.ModuleList(WeightDropLSTM(sizes[k], sizes[k + 1], c.weight_p)
                                    for k in range(c.n_layers))
        self.hidden_drops = nn.ModuleList(LockedDropout(c.hidden_p) for _ in range(c.n_layers - 1))

    def forward(self, ids: torch.Tensor, state: GroupState | None = None
                ) -> tuple[list[torch.Tensor], GroupState]:
        """``ids [B, T]`` -> (each layer's outputs ``[B, T, size]``, the new per-layer states)."""
        if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or ids.dim() != 2:
            raise ValueError("ids must be a LongTensor [batch, time]")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.config.vocab_size):
            raise ValueError(f"word ids must lie in [0, {self.config.vocab_size})")
        x = self.input_drop(self.embed(ids))
        outputs, new_state = [], []
        for k, layer in enumerate(self.layers):
            x, s = layer(x, None if state is None else state[k])
            outputs.append(x)
            new_state.append(s)
            if k < len(self.hidden_drops):
                x = self.hidden_drops[k](x)
        return outputs, new_state


class AWDLSTMLM(nn.Module):
    """AWD-LSTM language model: the encoder plus a tied full softmax (chapter 2's ``FullSoftmax``
    reading the embedding matrix). Same ``features``/``out`` interface as
    :class:`~companion.contextual.lstm_lm.LSTMLM`, so it trains with ``train_lstm_lm``."""

    def __init__(self, config: AWDLSTMConfig, seed: int | None = 0):
        super().__init__()
        if seed is not None:
            torch.manual_seed(seed)
        self.config = config
        self.encoder = AWDLSTM(config)
        self.out_drop = LockedDropout(config.output_p)
        self.out = make_output_layer("full", config.emb_dim, config.vocab_size,
                                     weight=self.encoder.embed.weight)

    @property
    def device(self) -> torch.device:
        return self.encoder.embed.weight.device

    def features(self, ids: torch.Tensor, state: GroupState | None = None
                 ) -> tuple[torch.Tensor, GroupState]:
        outputs, state = self.encoder(ids, state)
        return self.out_drop(outputs[-1]), state

    @torch.no_grad()
    def init_output_bias(self, counts: Sequence[int]) -> None:
        """Start the softmax bias at the log unigram distribution (add-one smoothed), so that a
        zero state already predicts word frequencies. Without it, a short pre-training run has
        the tied softmax learn the frequencies through the top layer: its states grow towards
        +-1 along one shared direction (saturated, nearly the same for every sentence), a poor
        start for the classifier (chapter 6a measures both)."""
        if len(counts) != self.config.vocab_size:
            raise ValueError(f"counts has {len(counts)} entries but vocab_size is {self.config.vocab_size}")
        n = torch.as_tensor(counts, dtype=torch.float64).clamp(min=0) + 1.0
        self.out.bias.copy_((n / n.sum()).log().to(self.out.bias.dtype))

    def loss(self, batch) -> torch.Tensor:
        x, y = batch
        h, _ = self.features(x)
        return self.out.loss(h.reshape(-1, h.shape[-1]), y.reshape(-1))


def concat_pool(h: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``[h_T, max_t h_t, mean_t h_t]`` over each sequence's real (unpadded) steps: ``[B, 3D]``.

    ``h``: ``[B, T, D]`` right-padded outputs; ``lengths``: ``[B]`` real lengths (>= 1).
    """
    if h.dim() != 3 or lengths.dim() != 1 or lengths.shape[0] != h.shape[0]:
        raise ValueError(f"need h [B, T, D] and lengths [B], got {tuple(h.shape)} and {tuple(lengths.shape)}")
    if int(lengths.min()) < 1 or int(lengths.max()) > h.shape[1]:
        raise ValueError(f"lengths must lie in [1, {h.shape[1]}], got [{int(lengths.min())}, {int(lengths.max())}]")
    lengths = lengths.to(h.device)
    valid = torch.arange(h.shape[1], device=h.device)[None, :] < lengths[:, None]  # [B, T]
    last = h[torch.arange(h.shape[0], device=h.device), lengths - 1]
    mx = h.masked_fill(~valid[..., None], float("-inf")).max(dim=1).values
    mean = (h * valid[..., None]).sum(dim=1) / lengths[:, None].to(h.dtype)
    return torch.cat([last, mx, mean], dim=-1)


class ConcatPoolClassifier(nn.Module):
    """The ULMFiT classifier: an AWD-LSTM encoder, concat pooling, and the paper's head
    (batch norm, dropout, linear ``3D -> head_hidden``, ReLU, batch norm, dropout, linear)."""

    def __init__(self, encoder: AWDLSTM, n_classes: int, *, head_hidden: int = 50,
                 head_p: tuple[float, float] = (0.2, 0.1)):
        super().__init__()
        _check_pos_int("n_classes", n_classes)
        if n_classes < 2:
            raise ValueError("n_classes must be at least 2")
        self.encoder = encoder
        d = 3 * encoder.config.emb_dim
        self.head = nn.Sequential(
            nn.BatchNorm1d(d), nn.Dropout(head_p[0]), nn.Linear(d, head_hidden), nn.ReLU(),
            nn.BatchNorm1d(head_hidden), nn.Dropout(head_p[1]), nn.Linear(head_hidden, n_classes),
        )
        self.out_drop = LockedDropout(encoder.config.output_p)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        outputs, _ = self.encoder(ids)
        return self.head(concat_pool(self.out_drop(outputs[-1]), lengths))

    def loss(self, batch) -> torch.Tensor:
        ids, lengths, labels = batch
        return F.cross_entropy(self(ids, lengths), labels)


def layer_groups(model: nn.Module) -> list[list[nn.Parameter]]:
    """The parameter groups that learning rates and unfreezing act on, bottom to top:
    ``[embedding, LSTM 1, ..., LSTM L]`` for an LM, ``+ [head]`` for a classifier. The LM's tied
    softmax shares the embedding matrix; its bias joins the top LSTM's group."""
    enc = model.encoder if hasattr(model, "encoder") else model
    if not isinstance(enc, AWDLSTM):
        raise TypeError(f"layer_groups needs an AWD-LSTM model, got {type(model).__name__}")
    groups = [[enc.embed.weight]] + [list(layer.parameters()) for layer in enc.layers]
    if isinstance(model, ConcatPoolClassifier):
        groups.append(list(model.head.parameters()))
    elif isinstance(model, AWDLSTMLM):
        groups[-1].append(model.out.bias)  # the softmax's bias moves with the top layer
    return groups


def discriminative_lrs(n_groups: int, lr: float, factor: float = 2.6) -> list[float]:
    """Learning rates bottom to top: the top group gets ``lr``, each lower one ``/ factor``."""
    _check_pos_int("n_groups", n_groups)
    if not (lr > 0 and math.isfinite(lr)) or not factor >= 1:
        raise ValueError(f"need lr > 0 and factor >= 1, got lr={lr!r}, factor={factor!r}")
    return [lr / factor ** (n_groups - 1 - k) for k in range(n_groups)]


def stlr(t: int, total: int, lr_max: float, cut_frac: float = 0.1, ratio: float = 32.0) -> float:
    """The slanted triangular learning rate at step ``t`` of ``total`` (Howard & Ruder 2018, eq. 3)::

        cut = floor(T * cut_frac)
        p   = t / cut                                  if t < cut
              1 - (t - cut) / (cut * (1/cut_frac - 1))  otherwise
        lr  = lr_max * (1 + p * (ratio - 1)) / ratio
    """
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise ValueError(f"total must be a positive int (number of steps), got {total!r}")
    if not 0 <= t <= total:
        raise ValueError(f"t must lie in [0, total={total}], got {t}")
    if not 0 < cut_frac < 1 or not ratio >= 1:
        raise ValueError(f"need 0 < cut_frac < 1 and ratio >= 1, got {cut_frac!r}, {ratio!r}")
    cut = max(1, math.floor(total * cut_frac))
    p = t / cut if t < cut else 1 - (t - cut) / (cut * (1 / cut_frac - 1))
    return lr_max * (1 + max(p, 0.0) * (ratio - 1)) / ratio


def unfreeze_schedule(n_groups: int, epochs: int) -> list[int]:
    """How many groups (from the top) train in each epoch: 1, 2, ..., then all."""
    _check_pos_int("n_groups", n_groups)
    _check_pos_int("epochs", epochs)
    return [min(e + 1, n_groups) for e in range(epochs)]


def set_trainable(groups: Sequence[Sequence[nn.Parameter]], n_top: int) -> None:
    """Let only the top ``n_top`` groups train (``requires_grad``); freeze the rest."""
    for k, g in enumerate(groups):
        for p in g:
            p.requires_grad_(k >= len(groups) - n_top)


@dataclass
class FineTunePlan:
    """A fine-tuning run (language model or classifier) with the three switches of the ablation.

    Attributes:
        epochs, lr (the top group's peak rate), batch_size, seed.
        discriminative: lower groups get ``lr / factor**k``. stlr: slanted triangular schedule
            (else a constant rate). gradual_unfreezing: classifier only; else all groups train
            from the first step. cut_frac, ratio: STLR's. clip: gradient-norm clip.
        betas: Adam's (the paper's 0.7, 0.99).
    """

    epochs: int = 4
    lr: float = 1e-2
    batch_size: int = 32
    discriminative: bool = True
    factor: float = 2.6
    stlr: bool = True
    cut_frac: float = 0.1
    ratio: float = 32.0
    gradual_unfreezing: bool = True
    clip: float = 0.4
    betas: tuple[float, float] = (0.7, 0.99)
    seed: int = 0


def _optimizer(groups, plan: FineTunePlan) -> tuple[torch.optim.Optimizer, list[float]]:
    lrs = (discriminative_lrs(len(groups), plan.lr, plan.factor) if plan.discriminative
           else [plan.lr] * len(groups))
    opt = torch.optim.Adam([{"params": g, "lr": lr} for g, lr in zip(groups, lrs)], betas=plan.betas)
    return opt, lrs


def rate_schedule(lrs: list[float], total: int, plan: FineTunePlan, offset: int = 0):
    """The hook :func:`companion.train.fit` calls before each optimizer step: every group's rate
    at step ``offset + step`` of ``total`` (its discriminative rate times the STLR factor, or
    times 1 without STLR). ``offset`` carries the step count across several ``fit`` calls."""

    def schedule(step: int, opt: torch.optim.Optimizer) -> None:
        t = min(offset + step, total)
        factor = stlr(t, total, 1.0, plan.cut_frac, plan.ratio) if plan.stlr else 1.0
        for g, lr in zip(opt.param_groups, lrs):
            g["lr"] = lr * factor

    return schedule


def finetune_lm(lm: AWDLSTMLM, ids: Sequence[int], plan: FineTunePlan, *, seq_len: int = 35,
                device: str | None = None, progress: bool = False) -> History:
    """Target-task LM fine-tuning: TBPTT over the task's text with discriminative rates and STLR
    (all layers train; gradual unfreezing is for the classifier)."""
    tb = TBPTT(ids, plan.batch_size, seq_len)
    groups = layer_groups(lm)
    set_trainable(groups, len(groups))
    opt, lrs = _optimizer(groups, plan)
    total = len(tb.stream) * plan.epochs
    config = TrainConfig(epochs=plan.epochs, lr=plan.lr, clip_grad_norm=plan.clip, seed=plan.seed,
                         device=device, progress=progress)
    return fit(lm, tb.batches, config=config, loss_fn=tb.loss, optimizer=opt,
               count_fn=lambda b: int(b[1].numel()), schedule=rate_schedule(lrs, total, plan))


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists into ``([B, T_max] ids, [B] lengths)``; empty lists become one pad."""
    lengths = torch.tensor([max(1, len(s)) for s in seqs])
    out = torch.full((len(seqs), int(lengths.max())), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.as_tensor(s, dtype=torch.long)
    return out, lengths


def classification_batches(seqs: Sequence[Sequence[int]], labels: Sequence[int], batch_size: int,
                           pad_id: int, seed: int = 0) -> list[tuple[torch.Tensor, ...]]:
    """Shuffled ``(ids, lengths, labels)`` batches (sorted by length inside chunks of 50 batches,
    so little padding; batches of one example are merged away because batch norm needs two)."""
    if len(seqs) != len(labels) or not len(seqs):
        raise ValueError(f"need as many labels as sequences (and at least one), got {len(seqs)} and {len(labels)}")
    order = list(range(len(seqs)))
    random.Random(seed).shuffle(order)
    chunk = 50 * batch_size
    order = [i for s in range(0, len(order), chunk)
             for i in sorted(order[s:s + chunk], key=lambda i: len(seqs[i]))]
    idx = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    if len(idx) > 1 and len(idx[-1]) < 2:
        last = idx.pop()
        idx[-1] += last
    random.Random(seed + 1).shuffle(idx)
    out = []
    for b in idx:
        ids, lengths = pad_batch([seqs[i] for i in b], pad_id)
        out.append((ids, lengths, torch.tensor([labels[i] for i in b], dtype=torch.long)))
    return out


@torch.no_grad()
def accuracy(clf: ConcatPoolClassifier, seqs: Sequence[Sequence[int]], labels: Sequence[int],
             pad_id: int, batch_size: int = 256) -> float:
    """Share of ``seqs`` whose predicted class is the label (eval mode)."""
    was = clf.training
    clf.eval()
    dev = next(clf.parameters()).device
    right = 0
    try:
        for s in range(0, len(seqs), batch_size):
            ids, lengths = pad_batch(seqs[s:s + batch_size], pad_id)
            pred = clf(ids.to(dev), lengths).argmax(-1).cpu()
            right += int((pred == torch.as_tensor(labels[s:s + batch_size])).sum())
    finally:
        clf.train(was)
    return right / len(seqs)


def train_classifier(clf: ConcatPoolClassifier, seqs: Sequence[Sequence[int]], labels: Sequence[int],
                     plan: FineTunePlan, *, pad_id: int, device: str | None = None,
                     progress: bool = False) -> dict[str, float]:
    """Fine-tune the classifier: one ``fit`` call per epoch so that gradual unfreezing can open
    one more group each epoch; the optimizer (and its per-group rates) lives across epochs.
    Returns ``{"seconds", "steps"}``."""
    groups = layer_groups(clf)
    opt, lrs = _optimizer(groups, plan)
    n_batches = len(classification_batches(seqs, labels, plan.batch_size, pad_id, plan.seed))
    total = n_batches * plan.epochs
    schedule = (unfreeze_schedule(len(groups), plan.epochs) if plan.gradual_unfreezing
                else [len(groups)] * plan.epochs)
    steps = 0
    start = time.perf_counter()
    for e in range(plan.epochs):
        set_trainable(groups, schedule[e])
        batches = classification_batches(seqs, labels, plan.batch_size, pad_id, plan.seed * 1000 + e)
        config = TrainConfig(epochs=1, lr=plan.lr, clip_grad_norm=plan.clip, seed=plan.seed * 1000 + e,
                             device=device, progress=progress)
        steps += fit(clf, batches, config=config, optimizer=opt,
                     schedule=rate_schedule(lrs, total, plan, offset=steps)).steps
    set_trainable(groups, len(groups))
    return {"seconds": time.perf_counter() - start, "steps": float(steps)}
