"""GPT: a left-to-right Transformer language model, and its fine-tuning (Radford et al. 2018).

Pre-training maximises ``sum_t log P(u_t | u_<t)`` with a causal mask. Fine-tuning reuses the
same network on a labelled task by rewriting each input into one token sequence (the paper's
Figure 1) and putting a linear layer on the hidden state of the last (*extract*) token:

* classification: ``[start] text [extract]``
* entailment:     ``[start] premise [delim] hypothesis [extract]``
* similarity:     both orders, ``[start] a [delim] b [extract]`` and ``[start] b [delim] a
  [extract]``; the two final hidden states are summed (the task has no natural order)
* multiple choice: ``[start] context [delim] answer_k [extract]`` for each answer k, one score
  each, softmax over the answers.

The fine-tuning loss adds the language-model loss on the same inputs, ``L = L_task + 0.5 L_LM``
(the paper's auxiliary objective, λ = 0.5). The three special tokens get ids reserved at the
top of the vocabulary (``GPTConfig.start_id``...).

``pre_ln=True, positions="learned"`` is GPT-2's layout (:mod:`.hf` loads Hugging Face's
``GPT2LMHeadModel`` weights into it exactly); ``pre_ln=False`` is GPT-1's post-LN block.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_finite, check_ids, check_int
from ..device import get_device
from ..word2vec._loop import intra_op_threads
from .attention import KVCache
from .blocks import (
    Block,
    check_config,
    count_parameters,
    init_weights,
    position_embedding,
)
from .loss import linear_cross_entropy

TASKS = ("classification", "entailment", "similarity", "multiple_choice")
MIN_TEMPERATURE = 1e-6  # the smallest non-zero sampling temperature (logits / T stays finite)
SMALL_DECODE = 4096  # batch x d_model up to which a cached CPU generation step uses one thread


@dataclass
class GPTConfig:
    """Sizes and switches of a GPT. The defaults are a tiny test model.

    ``start_id``/``delim_id``/``extract_id`` default to the last three ids of the vocabulary:
    size the vocabulary as (tokenizer's vocabulary + 3) and they never collide with text.
    """

    vocab_size: int = 100
    block_size: int = 64        # longest sequence (learned positions)
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 32
    d_ff: int | None = None     # default 4 * d_model
    dropout: float = 0.0
    attn_dropout: float | None = None  # default: dropout
    pre_ln: bool = True         # GPT-2 (True) or GPT-1 / Vaswani post-LN (False)
    positions: str = "learned"  # or "sinusoidal"
    activation: str = "gelu_tanh"
    tie_weights: bool = True    # output layer = token embedding matrix (Press & Wolf 2017)
    bias: bool = True
    ln_eps: float = 1e-5
    start_id: int | None = None
    delim_id: int | None = None
    extract_id: int | None = None

    def __post_init__(self):
        specials = ("start_id", "delim_id", "extract_id")
        for i, name in enumerate(specials):
            if getattr(self, name) is None and isinstance(self.vocab_size, int):
                setattr(self, name, self.vocab_size - 3 + i)
        check_config("GPTConfig", self, ("vocab_size", "block_size", "n_layer", "n_head", "d_model"), specials)
        self.d_ff = 4 * self.d_model if self.d_ff is None else self.d_ff
        self.attn_dropout = self.dropout if self.attn_dropout is None else self.attn_dropout


class GPT(nn.Module):
    """The decoder: token + position embeddings, ``n_layer`` causal blocks, a tied LM head."""

    def __init__(self, config: GPTConfig, seed: int | None = 0, device: str | torch.device | None = None):
        """``seed`` seeds the initialisation (``None``: leave the weights to a loader); ``device``
        places the parameters (``None``: CPU; ``companion.train.fit`` moves the model anyway)."""
        super().__init__()
        self.config = c = config
        self.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.wpe = position_embedding(c.positions, c.block_size, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            Block(c.d_model, c.n_head, c.d_ff, pre_ln=c.pre_ln, dropout=c.dropout, attn_dropout=c.attn_dropout,
                  activation=c.activation, ln_eps=c.ln_eps, bias=c.bias)
            for _ in range(c.n_layer))
        # pre-LN leaves the residual stream un-normalised, so GPT-2 adds one final LN
        self.ln_f = nn.LayerNorm(c.d_model, eps=c.ln_eps, bias=c.bias) if c.pre_ln else nn.Identity()
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if seed is not None:
            torch.manual_seed(seed)
        init_weights(self)
        if c.tie_weights:
            self.lm_head.weight = self.wte.weight
        if device is not None:
            self.to(get_device(device))

    @property
    def device(self) -> torch.device:
        return self.wte.weight.device

    def num_parameters(self) -> int:
        return count_parameters(self)

    def hidden(self, ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """Final hidden states ``[B, T, d]`` of token ids ``[B, T]`` (after ``ln_f``)."""
        check_ids(ids, "ids", self.config.vocab_size)
        return self._hidden(ids, cache)

    def _hidden(self, ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """:meth:`hidden` without the id check (generation checks its prompt once)."""
        T = ids.shape[1]
        past = cache.length if cache is not None else 0
        if past + T > self.config.block_size:
            raise ValueError(f"sequence of {past + T} tokens exceeds block_size={self.config.block_size}; "
                             "crop the input or build the model with a larger block_size")
        pos = torch.arange(past, past + T, device=ids.device)
        x = self.drop(self.wte(ids) + self.wpe(pos))
        for i, block in enumerate(self.blocks):
            x = block(x, causal=True, cache=cache, layer=i)
        if cache is not None:
            cache.length += T
        return self.ln_f(x)

    def forward(self, ids: torch.Tensor, targets: torch.Tensor | None = None,
                cache: KVCache | None = None) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Logits ``[B, T, V]``; with ``targets`` (``[B, T]``, -100 = ignore) also the mean
        cross-entropy. Targets are the inputs shifted by one, passed separately, so the logits
        are never copied to shift them."""
        logits = self.lm_head(self.hidden(ids, cache))
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)

    def loss(self, batch) -> torch.Tensor:
        """Language-model loss of a ``[B, T+1]`` id tensor, or an ``(inputs, targets)`` pair."""
        x, y = (batch[:, :-1], batch[:, 1:]) if isinstance(batch, torch.Tensor) else batch
        if type(self.lm_head) is not nn.Linear:  # a wrapped head (LoRA, quantised): the plain path
            return self(x, y)[1]
        # equals forward's loss (tested) but never builds the [B, T, V] logits: the output layer
        # and the softmax run in cache-sized chunks (loss.py); ~13% of the benchmark's step saved
        return linear_cross_entropy(self.hidden(x), self.lm_head.weight, y)

    def new_cache(self, batch: int, max_len: int | None = None) -> KVCache:
        c = self.config
        return KVCache.empty(c.n_layer, batch, c.n_head, max_len or c.block_size, c.d_model // c.n_head,
                             device=self.device, dtype=self.wte.weight.dtype)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None,
                 return_logits: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Continue ``ids [B, T]`` by ``max_new_tokens`` tokens.

        ``temperature=0`` is greedy decoding; otherwise sample from ``softmax(logits / T)``,
        restricted to the ``top_k`` most likely tokens and/or the smallest set whose
        probability reaches ``top_p`` (nucleus sampling). With ``use_cache`` each step feeds only
        the newest token and reads the others' keys and values from a :class:`KVCache`.
        ``return_logits=True`` also returns the ``[B, max_new_tokens, V]`` next-token logits.
        """
        check_ids(ids, "ids", self.config.vocab_size)
        if ids.shape[1] == 0 or ids.shape[0] == 0:
            raise ValueError(f"ids must be a non-empty [batch, length] tensor, got shape {tuple(ids.shape)}")
        check_int(max_new_tokens, "max_new_tokens", 0)
        check_sampling(temperature, top_k, top_p)
        if use_cache and ids.shape[1] + max_new_tokens > self.config.block_size:
            raise ValueError(f"{ids.shape[1]} + {max_new_tokens} tokens exceed block_size="
                             f"{self.config.block_size}; generate fewer or pass use_cache=False (which crops)")
        was_training = self.training
        self.eval()
        cache = self.new_cache(ids.shape[0]) if use_cache else None
        out, all_logits, step_input = ids, [], ids
        # A cached step on a CPU is some 100 tiny operations on one token's vectors: too small to
        # split over OpenMP threads, whose fork/join then costs more than the work (and, on a
        # shared machine, waits for a descheduled sibling). Small cached batches run on one thread.
        one = use_cache and self.device.type == "cpu" and ids.shape[0] * self.config.d_model <= SMALL_DECODE
        with intra_op_threads(1 if one else None):
            for _ in range(max_new_tokens):
                context = step_input if use_cache else out[:, -self.config.block_size:]
                # only the last position's logits are needed (both paths): the cache is what differs
                logits = self.lm_head(self._hidden(context, cache)[:, -1]).float()
                all_logits.append(logits)
                nxt = sample_next(logits, temperature, top_k, top_p, generator)
                out = torch.cat([out, nxt], dim=1)
                step_input = nxt
        self.train(was_training)
        if not return_logits:
            return out
        if not all_logits:  # max_new_tokens=0
            return out, torch.zeros(len(ids), 0, self.config.vocab_size, device=ids.device)
        return out, torch.stack(all_logits, 1)


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """One token id per row ``[B, 1]`` from next-token logits ``[B, V]``."""
    check_sampling(temperature, top_k, top_p)
    if logits.dim() != 2:
        raise ValueError(f"logits must be [batch, vocabulary], got shape {tuple(logits.shape)}")
    if temperature == 0:
        return logits.argmax(-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        cum = sorted_logits.softmax(-1).cumsum(-1)
        drop = cum - sorted_logits.softmax(-1) >= top_p  # tokens after the nucleus is full
        logits = logits.scatter(-1, order, sorted_logits.masked_fill(drop, float("-inf")))
    probs = logits.softmax(-1)
    return torch.multinomial(probs, 1, generator=generator)


def check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """``temperature`` 0 (greedy) or a finite number >= :data:`MIN_TEMPERATURE`, ``top_k`` None or an
    int >= 1, ``top_p`` None or a number in (0, 1]; ``ValueError`` otherwise (a NaN temperature
    would sample from NaN probabilities, a tiny one overflow ``logits / T``, a ``top_k`` of 0 keep
    no token)."""
    check_finite(temperature, "temperature")
    if 0 < temperature < MIN_TEMPERATURE:
        raise ValueError(f"temperature must be 0 (greedy) or >= {MIN_TEMPERATURE:g} (below it logits / T "
                         f"overflows float32), got {temperature!r}")
    if top_k is not None:
        check_int(top_k, "top_k")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, numbers.Real) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or a number in (0, 1], got {top_p!r}")


# ------------------------------------------------------------------------------ fine-tuning


def task_inputs(config: GPTConfig, task: str, a: list[int], b: list[int] | list[list[int]] | None = None) -> list[list[int]]:
    """The paper's input transformation: the token sequence(s) for one example.

    Returns one sequence for classification/entailment, two for similarity (both orders) and
    one per answer for multiple choice (``b`` is then the list of answers).
    """
    s, d, e = config.start_id, config.delim_id, config.extract_id
    if task == "classification":
        return [[s, *a, e]]
    if b is None:
        raise ValueError(f"task {task!r} needs a second text (b=...)")
    if task == "entailment":
        return [[s, *a, d, *b, e]]
    if task == "similarity":
        return [[s, *a, d, *b, e], [s, *b, d, *a, e]]
    if task == "multiple_choice":
        return [[s, *a, d, *ans, e] for ans in b]
    raise ValueError(f"task {task!r} is unknown; use one of {TASKS}")


def task_batch(config: GPTConfig, task: str, examples: list[tuple], pad_id: int = 0) -> dict[str, torch.Tensor]:
    """A batch from ``(a, b, label)`` tuples (``(a, label)`` for classification).

    ``ids`` is ``[B, T]`` for classification/entailment and ``[B, n, T]`` for similarity (n=2)
    and multiple choice (n answers, all examples the same n); ``lengths`` matches without T.
    Padding goes on the right: under the causal mask no real token ever sees it.
    """
    if task not in TASKS:
        raise ValueError(f"task {task!r} is unknown; use one of {TASKS}")
    if isinstance(examples, str) or not isinstance(examples, Sequence) or not examples:
        raise ValueError(f"examples must be a non-empty list of (a, b, label) tuples ((a, label) for "
                         f"classification), got {examples!r:.80}")
    seqs, labels = [], []
    for ex in examples:
        a, b, label = (ex[0], None, ex[1]) if task == "classification" else ex
        seqs.append(task_inputs(config, task, a, b))
        labels.append(label)
    n = {len(s) for s in seqs}
    if len(n) != 1:
        raise ValueError(f"every example needs the same number of sequences, got {sorted(n)}")
    T = max(len(x) for s in seqs for x in s)
    if T > config.block_size:
        raise ValueError(f"an input of {T} tokens exceeds block_size={config.block_size}; truncate the texts")
    ids = torch.full((len(seqs), n.pop(), T), pad_id, dtype=torch.long)
    lengths = torch.zeros(ids.shape[:2], dtype=torch.long)
    for i, s in enumerate(seqs):
        for j, x in enumerate(s):
            ids[i, j, :len(x)] = torch.tensor(x)
            lengths[i, j] = len(x)
    if task in ("classification", "entailment"):
        ids, lengths = ids[:, 0], lengths[:, 0]
    dtype = torch.float if any(isinstance(y, float) for y in labels) else torch.long
    return {"ids": ids, "lengths": lengths, "labels": torch.tensor(labels, dtype=dtype)}


def _check_lengths(ids: torch.Tensor, lengths: torch.Tensor) -> None:
    """``lengths`` (one per row of ``ids``, as :func:`task_batch` makes them) in ``[1, T]``: a
    length of 0 would read the last padded position as the extract token."""
    if not isinstance(lengths, torch.Tensor) or lengths.shape != ids.shape[:-1]:
        raise ValueError(f"lengths must be a tensor of shape {tuple(ids.shape[:-1])} (one per row of ids), got "
                         f"{tuple(lengths.shape) if isinstance(lengths, torch.Tensor) else type(lengths).__name__}")
    if lengths.numel():
        lo, hi = torch.aminmax(lengths)
        if bool((lo < 1) | (hi > ids.shape[-1])):
            raise ValueError(f"lengths must be in [1, {ids.shape[-1]}] (the tokens of each row up to its extract "
                             f"token), got {int(lo) if int(lo) < 1 else int(hi)}")


class GPTForTask(nn.Module):
    """A pre-trained :class:`GPT` plus one linear layer on the extract token's hidden state.

    ``loss(batch) = task loss + lm_weight * LM loss`` on the batch's own tokens (``lm_weight=0.5``
    is the paper's λ; 0 turns the auxiliary objective off, the chapter's ablation).
    ``n_out=1`` with float labels is regression (MSE); multiple choice has one score per answer.
    """

    def __init__(self, gpt: GPT, task: str, n_out: int, lm_weight: float = 0.5, seed: int = 0):
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"task {task!r} is unknown; use one of {TASKS}")
        check_int(n_out, "n_out")
        check_finite(lm_weight, "lm_weight")
        self.gpt, self.task, self.lm_weight = gpt, task, lm_weight
        self.drop = nn.Dropout(gpt.config.dropout)
        torch.manual_seed(seed)
        self.head = nn.Linear(gpt.config.d_model, 1 if task == "multiple_choice" else n_out)
        init_weights(self.head)
        self.head.to(gpt.device)  # beside the pre-trained model

    def _features(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.gpt.hidden(ids)
        last = h[torch.arange(len(ids), device=ids.device), lengths - 1]  # the extract token
        return last, h

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self._forward(batch)[0]

    def _forward(self, batch):
        ids, lengths = batch["ids"], batch["lengths"]
        _check_lengths(ids, lengths)
        flat_ids = ids.reshape(-1, ids.shape[-1])
        feats, h = self._features(flat_ids, lengths.reshape(-1))
        if self.task == "similarity":
            out = self.head(self.drop(feats.view(*ids.shape[:2], -1).sum(1)))
        elif self.task == "multiple_choice":
            out = self.head(self.drop(feats)).view(ids.shape[:2])
        else:
            out = self.head(self.drop(feats))
        return out, h, flat_ids, lengths.reshape(-1)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        out, h, ids, lengths = self._forward(batch)
        y = batch["labels"]
        task_loss = F.mse_loss(out.squeeze(-1), y.float()) if y.is_floating_point() else F.cross_entropy(out, y)
        if self.lm_weight == 0:
            return task_loss
        # LM loss on the real tokens: predict token t+1 from position t, never into the padding
        targets = ids[:, 1:].masked_fill(torch.arange(1, ids.shape[1], device=ids.device) >= lengths[:, None], -100)
        logits = self.gpt.lm_head(h[:, :-1])
        lm_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        return task_loss + self.lm_weight * lm_loss
