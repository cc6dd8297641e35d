"""LSTM language models: the bridge from chapter 2's feed-forward model to contextual vectors.

Hochreiter & Schmidhuber (1997)'s cell, as written in most papers since Gers et al. (2000)::

    i = sigmoid(W_ii x + b_ii + W_hi h + b_hi)      input gate
    f = sigmoid(W_if x + b_if + W_hf h + b_hf)      forget gate
    g = tanh   (W_ig x + b_ig + W_hg h + b_hg)      candidate
    o = sigmoid(W_io x + b_io + W_ho h + b_ho)      output gate
    c' = f * c + i * g                              the cell: an additive memory
    h' = o * tanh(c')

:class:`LSTMCell` and :class:`ManualLSTM` write this out for teaching, with ``torch.nn.LSTM``'s
parameter layout (gates stacked i, f, g, o), so the same weights give the same outputs and
gradients (``tests/test_contextual_lstm_lm.py``). Training uses ``nn.LSTM`` (``cell="torch"``),
whose fused kernels are several times faster (``benchmarks/bench_contextual.py``).

:class:`LSTMLM` reads a stream of word ids and predicts the next one at every step, through
chapter 2's output layers (full softmax or the hierarchical softmax over a Huffman tree).
:func:`train_lstm_lm` trains it with truncated back-propagation through time (the state is
carried from one batch to the next, the gradient is not) through :func:`companion.train.fit`;
:func:`stream_log_probs` scores every token of a split exactly once, aligned with chapter 2's
``lm_examples`` targets, so the per-token log-probabilities mix and bootstrap like chapter 2's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from ..data.batching import stream_batches
from ..neural_lm.common import make_output_layer
from ..train import History, TrainConfig, fit

State = tuple[torch.Tensor, torch.Tensor]  # (h, c), each [n_layers, B, H]
CELLS = ("torch", "ours")


def _check_pos_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _check_rate(name: str, p: object) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must be a dropout rate in [0, 1), got {p!r}")


class LSTMCell(nn.Module):
    """One LSTM step, written out (same parameters and layout as one layer of ``nn.LSTM``).

    ``weight_ih`` is ``[4H, I]`` and ``weight_hh`` ``[4H, H]``: the four gates' rows stacked in
    the order input, forget, candidate, output.
    """

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        _check_pos_int("input_size", input_size)
        _check_pos_int("hidden_size", hidden_size)
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(4 * hidden_size))
        bound = 1.0 / math.sqrt(hidden_size)  # nn.LSTM's initialisation
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, state: State) -> State:
        """``x``: ``[B, I]``; ``state``: ``(h, c)``, each ``[B, H]``. Returns the new ``(h, c)``."""
        h, c = state
        gates = x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # forget some, write some
        h = torch.sigmoid(o) * torch.tanh(c)  # expose a gated view of the memory
        return h, c


class ManualLSTM(nn.Module):
    """A stack of :class:`LSTMCell`, unrolled in Python; a drop-in for ``nn.LSTM(batch_first=True)``
    (no dropout between layers, unidirectional). Slow: it is here to be read."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1):
        super().__init__()
        _check_pos_int("num_layers", num_layers)
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.cells = nn.ModuleList(
            LSTMCell(input_size if k == 0 else hidden_size, hidden_size) for k in range(num_layers)
        )

    def forward(self, x: torch.Tensor, state: State | None = None) -> tuple[torch.Tensor, State]:
        """``x``: ``[B, T, I]`` -> (outputs ``[B, T, H]``, ``(h, c)`` each ``[L, B, H]``)."""
        if x.dim() != 3:
            raise ValueError(f"x must be [batch, time, features], got shape {tuple(x.shape)}")
        B = x.shape[0]
        if state is None:
            zeros = x.new_zeros(self.num_layers, B, self.hidden_size)
            state = (zeros, zeros)
        hs, cs = [], []
        for k, cell in enumerate(self.cells):
            h, c = state[0][k], state[1][k]
            outs = []
            for t in range(x.shape[1]):
                h, c = cell(x[:, t], (h, c))
                outs.append(h)
            x = torch.stack(outs, dim=1)  # this layer's outputs feed the next layer
            hs.append(h)
            cs.append(c)
        return x, (torch.stack(hs), torch.stack(cs))

    @torch.no_grad()
    def copy_from(self, lstm: nn.LSTM) -> ManualLSTM:
        """Load the weights of an ``nn.LSTM`` with the same sizes (returns ``self``)."""
        if not isinstance(lstm, nn.LSTM) or lstm.num_layers != self.num_layers or lstm.bidirectional \
                or lstm.hidden_size != self.hidden_size or lstm.proj_size or not lstm.bias:
            raise ValueError("copy_from needs a unidirectional nn.LSTM with biases and the same "
                             "hidden_size and num_layers")
        for k, cell in enumerate(self.cells):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(cell, name).copy_(getattr(lstm, f"{name}_l{k}"))
        return self


@dataclass
class LSTMLMConfig:
    """An LSTM language model.

    Attributes:
        vocab_size: words, including ``<unk>`` and ``</s>``.
        emb_dim: word-vector size.
        hidden: LSTM state size.
        n_layers: stacked LSTM layers.
        dropout: dropout on the embeddings, between layers and before the output (Zaremba et
            al. 2014's recipe for regularising LSTMs).
        output: ``"full"`` softmax or ``"hsoftmax"`` (chapter 2's tree; needs word counts).
        tie_weights: share the input embedding with the full softmax's output vectors (Press &
            Wolf 2017; Inan et al. 2017); needs ``output="full"``. A projection maps ``hidden`` to
            ``emb_dim`` when they differ.
        cell: ``"torch"`` (``nn.LSTM``, fast) or ``"ours"`` (:class:`ManualLSTM`, for teaching).
    """

    vocab_size: int
    emb_dim: int = 64
    hidden: int = 128
    n_layers: int = 1
    dropout: float = 0.1
    output: str = "full"
    tie_weights: bool = False
    cell: str = "torch"

    def validate(self) -> None:
        for name in ("vocab_size", "emb_dim", "hidden", "n_layers"):
            _check_pos_int(name, getattr(self, name))
        _check_rate("dropout", self.dropout)
        if self.output not in ("full", "hsoftmax"):
            raise ValueError(f"output must be 'full' or 'hsoftmax', got {self.output!r}")
        if self.cell not in CELLS:
            raise ValueError(f"cell must be one of {CELLS}, got {self.cell!r}")
        if self.tie_weights and self.output != "full":
            raise ValueError("tie_weights needs output='full' (a tree has no per-word output vectors)")


class LSTMLM(nn.Module):
    """Embedding -> LSTM -> (projection) -> chapter 2's output layer, one prediction per step."""

    def __init__(self, config: LSTMLMConfig, *, counts: Sequence[int] | None = None, seed: int | None = 0):
        super().__init__()
        if not isinstance(config, LSTMLMConfig):
            raise TypeError(f"config must be an LSTMLMConfig, got {type(config).__name__}")
        config.validate()
        self.config = config
        if seed is not None:
            torch.manual_seed(seed)
        c = config
        self.embed = nn.Embedding(c.vocab_size, c.emb_dim)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        if c.cell == "torch":
            self.rnn: nn.Module = nn.LSTM(c.emb_dim, c.hidden, c.n_layers, batch_first=True,
                                          dropout=c.dropout if c.n_layers > 1 else 0.0)
        else:
            self.rnn = ManualLSTM(c.emb_dim, c.hidden, c.n_layers)
        self.drop = nn.Dropout(c.dropout)
        out_dim = c.emb_dim if c.tie_weights else c.hidden
        self.proj = nn.Linear(c.hidden, out_dim) if out_dim != c.hidden else nn.Identity()
        self.out = make_output_layer(c.output, out_dim, c.vocab_size, counts=counts,
                                     weight=self.embed.weight if c.tie_weights else None)

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def _check_ids(self, x: torch.Tensor) -> None:
        if not isinstance(x, torch.Tensor) or x.dtype != torch.long or x.dim() != 2:
            raise ValueError("inputs must be a LongTensor [batch, time] of word ids")
        if x.numel() and (int(x.min()) < 0 or int(x.max()) >= self.config.vocab_size):
            raise ValueError(f"word ids must lie in [0, {self.config.vocab_size}), got "
                             f"[{int(x.min())}, {int(x.max())}]")

    def features(self, x: torch.Tensor, state: State | None = None) -> tuple[torch.Tensor, State]:
        """``x [B, T]`` -> (the vectors the output layer reads ``[B, T, D]``, the final state)."""
        self._check_ids(x)
        h, state = self.rnn(self.drop(self.embed(x)), state)
        return self.proj(self.drop(h)), state

    def loss(self, batch: tuple[torch.Tensor, torch.Tensor], state: State | None = None) -> torch.Tensor:
        """Mean NLL (nats per token) of ``(inputs, targets)``, both ``[B, T]``."""
        x, y = batch
        h, _ = self.features(x, state)
        return self.out.loss(h.reshape(-1, h.shape[-1]), y.reshape(-1))


def detach_state(state):
    """The state (a tensor, or nested tuples/lists of tensors) cut from the autograd graph."""
    if isinstance(state, torch.Tensor):
        return state.detach()
    return type(state)(detach_state(s) for s in state)


class TBPTT:
    """Truncated back-propagation through time for :func:`companion.train.fit`.

    ``batches(epoch)`` walks the streams from the start (and resets the state); ``loss`` feeds
    each batch the previous batch's final state, detached so that gradients stop at the batch
    boundary while the memory does not.
    """

    def __init__(self, ids: Sequence[int] | torch.Tensor, batch_size: int, seq_len: int):
        self.stream = stream_batches(ids, batch_size, seq_len)
        self.state: State | None = None

    def batches(self, epoch: int):
        self.state = None
        return self.stream

    def loss(self, model: LSTMLM, batch) -> torch.Tensor:
        x, y = batch
        h, state = model.features(x, self.state)
        self.state = detach_state(state)
        return model.out.loss(h.reshape(-1, h.shape[-1]), y.reshape(-1))


def sentence_stream(sentences: Sequence[Sequence[str]], vocab, *, eos: str = "</s>") -> list[int]:
    """``eos w_1 ... w_n eos w_1 ... eos``: the ids of a split as one stream, starting with ``eos``
    so that every word *and* every sentence end is predicted, as chapter 2's ``lm_examples``."""
    if isinstance(sentences, (str, bytes)) or not len(sentences):
        raise ValueError("sentences must be a non-empty list of token lists")
    if eos not in vocab.stoi:
        raise ValueError(f"the vocabulary has no {eos!r} symbol; build it with specials=({eos!r},)")
    out = [eos]
    for s in sentences:
        if isinstance(s, str):
            raise TypeError("each sentence must be a list of tokens, not a string")
        out.extend(s)
        out.append(eos)
    return vocab.encode(out)


@torch.no_grad()
def stream_log_probs(model: LSTMLM, ids: Sequence[int] | torch.Tensor, *, n_streams: int = 16,
                     seq_len: int = 64) -> torch.Tensor:
    """``log P(ids[t] | ids[:t])`` for every ``t >= 1``: float64 ``[len(ids) - 1]``, on the CPU.

    The stream is cut into ``n_streams`` contiguous pieces scored in parallel (each piece starts
    from the previous piece's last token with a fresh state, so the first few tokens of each piece
    see a short history); the last piece is padded, and the padding is not scored. Runs in eval
    mode.
    """
    t = torch.as_tensor(ids, dtype=torch.long)
    if t.dim() != 1 or t.numel() < 2:
        raise ValueError("ids must be a 1-D sequence of at least 2 word ids")
    _check_pos_int("n_streams", n_streams)
    _check_pos_int("seq_len", seq_len)
    n_targets = t.numel() - 1
    per = -(-n_targets // n_streams)
    x = torch.zeros(n_streams * per, dtype=torch.long)
    y = torch.zeros(n_streams * per, dtype=torch.long)
    x[:n_targets], y[:n_targets] = t[:-1], t[1:]
    x, y = x.view(n_streams, per), y.view(n_streams, per)
    was_training = model.training
    model.eval()
    dev = model.device
    out, state = [], None
    try:
        for s in range(0, per, seq_len):
            xb, yb = x[:, s:s + seq_len].to(dev), y[:, s:s + seq_len].to(dev)
            h, state = model.features(xb, state)
            lp = model.out.log_prob(h.reshape(-1, h.shape[-1]), yb.reshape(-1))
            out.append(lp.view(n_streams, -1).double().cpu())
    finally:
        model.train(was_training)
    return torch.cat(out, dim=1).reshape(-1)[:n_targets]


def stream_perplexity(model: LSTMLM, ids: Sequence[int] | torch.Tensor, **kwargs) -> float:
    """``exp(mean NLL)`` over every predicted token of the stream (see :func:`stream_log_probs`)."""
    return math.exp(-float(stream_log_probs(model, ids, **kwargs).mean()))


@dataclass
class LMPlan:
    """How to train an :class:`LSTMLM` (see :func:`train_lstm_lm`).

    Attributes:
        batch_size: parallel streams. seq_len: BPTT length. lr: Adam's rate. epochs: passes.
        max_steps: stop earlier (``None``: all epochs). clip: gradient norm clip.
        eval_tokens: validation tokens scored at each evaluation. evals: evaluations per run.
        seed: initialisation and dropout seed.
        lr_final: ``None`` keeps the rate constant; a number decays it linearly from ``lr``
            at the first step to ``lr_final`` at the last (a run of one or two epochs ends with
            small steps that settle into a minimum instead of bouncing around it).
        optimizer: ``"adam"`` or ``"sgd"`` (Zaremba et al. 2014: plain SGD at lr 1).
        halve_after: ``None``, or an epoch count after which the rate is multiplied by
            ``decay`` at the start of every further epoch (Zaremba et al.'s small model: 0.5
            after epoch 4).
    """

    batch_size: int = 32
    seq_len: int = 35
    lr: float = 3e-3
    epochs: int = 1
    max_steps: int | None = None
    clip: float = 0.25
    eval_tokens: int = 20_000
    evals: int = 4
    seed: int = 0
    lr_final: float | None = None
    optimizer: str = "adam"
    halve_after: int | None = None
    decay: float = 0.5


def train_lstm_lm(model: nn.Module, train_ids: Sequence[int], valid_ids: Sequence[int], plan: LMPlan, *,
                  device: str | None = None, progress: bool = True) -> History:
    """Train with TBPTT (Adam or SGD, see :class:`LMPlan`) through :func:`companion.train.fit`;
    keeps the best weights by the perplexity on (the first ``plan.eval_tokens`` of) ``valid_ids``. ``model`` is an
    :class:`LSTMLM` or anything with the same ``features(x, state)``, ``out`` and ``device``
    (e.g. :class:`companion.contextual.ulmfit.AWDLSTMLM`)."""
    tb = TBPTT(train_ids, plan.batch_size, plan.seq_len)
    steps = len(tb.stream) * plan.epochs if plan.max_steps is None else plan.max_steps
    valid = list(valid_ids[: plan.eval_tokens + 1])

    def evaluate(m: nn.Module) -> dict[str, float]:
        lp = stream_log_probs(m, valid, n_streams=8)  # type: ignore[arg-type]
        return {"val_loss": -float(lp.mean()), "val_ppl": math.exp(-float(lp.mean()))}

    config = TrainConfig(epochs=plan.epochs, lr=plan.lr, clip_grad_norm=plan.clip, seed=plan.seed,
                         device=device, max_steps=plan.max_steps, optimizer=plan.optimizer,
                         eval_every=max(1, steps // max(1, plan.evals)), progress=progress)

    def schedule(step: int, opt: torch.optim.Optimizer) -> None:
        for g in opt.param_groups:
            g["lr"] = plan_lr(plan, step, steps, len(tb.stream))

    return fit(model, tb.batches, config=config, loss_fn=tb.loss, evaluate=evaluate,
               count_fn=lambda b: int(b[1].numel()), schedule=schedule)


def plan_lr(plan: LMPlan, step: int, total: int, per_epoch: int) -> float:
    """The learning rate of ``plan`` at ``step`` (0-based) of a run of ``total`` steps with
    ``per_epoch`` steps per epoch: ``plan.lr``, decayed linearly to ``plan.lr_final`` over the
    run when that is set, and multiplied by ``plan.decay`` once per epoch after epoch
    ``plan.halve_after`` when that is set."""
    if total < 1 or per_epoch < 1 or step < 0:
        raise ValueError(f"need total >= 1, per_epoch >= 1 and step >= 0, got step={step}, "
                         f"total={total}, per_epoch={per_epoch}")
    lr = plan.lr
    if plan.lr_final is not None:
        lr += min(1.0, step / max(1, total - 1)) * (plan.lr_final - plan.lr)
    if plan.halve_after is not None:
        epoch = step // per_epoch + 1  # 1-based, as in the papers
        lr *= plan.decay ** max(0, epoch - plan.halve_after)
    return lr
