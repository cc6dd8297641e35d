"""What the chapter's language models share: input checks, the output-layer switch, a base
class with the LM interface, n-gram windows, minibatches and perplexity evaluation.

Every language model here maps a context of ``n - 1`` word ids to a feature vector ``h`` and
hands ``h`` to an output layer (full softmax or hierarchical softmax). The base class
:class:`NeuralLM` turns that into the interface the book uses everywhere:

* ``model.loss((contexts, targets))`` -- mean NLL, what :func:`companion.train.fit` calls;
* ``model.log_prob(contexts, targets)`` -- per-token log-probabilities (natural log);
* ``model.next_word_distribution(context)`` -- ``P(. | context)`` over the vocabulary.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
from torch import nn

from ..evaluate import perplexity
from .hsoftmax import HierarchicalSoftmax
from .output import FullSoftmax, check_targets
from .tree import BinaryTree, balanced_tree, huffman_tree

__all__ = [
    "OUTPUTS",
    "TREES",
    "NeuralLM",
    "check_contexts",
    "check_int_fields",
    "check_lm_sizes",
    "check_lm_output",
    "seeded",
    "make_output_layer",
    "ngram_examples",
    "iterate_minibatches",
    "token_log_probs",
    "perplexity_of_model",
    "perplexity_evaluator",
]

OUTPUTS = ("full", "hsoftmax")
TREES = ("huffman", "balanced")


def check_contexts(contexts: torch.Tensor, n_context: int, vocab_size: int) -> None:
    """Raise a clear error unless ``contexts`` is ``[N, n_context]`` integer ids in ``[0, vocab_size)``."""
    if not isinstance(contexts, torch.Tensor):
        raise TypeError(f"contexts must be a torch.LongTensor [N, {n_context}], got {type(contexts).__name__}")
    if contexts.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"contexts must hold integer word ids (torch.long), got dtype {contexts.dtype}")
    if contexts.dim() != 2 or contexts.shape[1] != n_context:
        raise ValueError(
            f"contexts must be [N, {n_context}] (the n-1 = {n_context} previous words of each "
            f"target), got shape {tuple(contexts.shape)}"
        )
    if contexts.numel() and (int(contexts.min()) < 0 or int(contexts.max()) >= vocab_size):
        raise ValueError(
            f"context ids must lie in [0, {vocab_size}); got min {int(contexts.min())}, max "
            f"{int(contexts.max())}. Encode words with the same vocabulary the model was built for."
        )


def check_int_fields(config: Any, names: Sequence[str]) -> None:
    """Raise ``TypeError`` unless every field ``names`` of ``config`` is an int (not a bool)."""
    for name in names:
        v = getattr(config, name)
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, got {v!r}")


def check_lm_sizes(config: Any, int_fields: Sequence[str] = ("vocab_size", "n", "dim")) -> None:
    """The checks every n-gram LM config shares: ``int_fields`` are ints, ``vocab_size >= 2``,
    ``n >= 2`` and ``dim >= 1``."""
    check_int_fields(config, int_fields)
    if config.vocab_size < 2:
        raise ValueError(f"vocab_size must be >= 2, got {config.vocab_size}")
    if config.n < 2:
        raise ValueError(f"n must be >= 2 (the model reads n-1 >= 1 previous words), got {config.n}")
    if config.dim < 1:
        raise ValueError(f"dim (word-vector size d) must be >= 1, got {config.dim}")


def check_lm_output(config: Any) -> None:
    """The output-layer fields every LM config shares: ``output``, ``tree`` and ``init_std``."""
    if config.output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {config.output!r}")
    if config.tree not in TREES:
        raise ValueError(f"tree must be one of {TREES}, got {config.tree!r}")
    if not config.init_std > 0:
        raise ValueError(f"init_std must be > 0, got {config.init_std}")


@contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Seed torch's global generator for the block (``None``: leave it), then put back its
    state: a model's initial weights depend on its ``seed`` only, and building one does not
    move the caller's random stream."""
    state = torch.random.get_rng_state()
    if seed is not None:
        torch.manual_seed(seed)
    try:
        yield
    finally:
        if seed is not None:
            torch.random.set_rng_state(state)


def make_output_layer(
    output: str,
    in_features: int,
    vocab_size: int,
    *,
    tree: BinaryTree | None = None,
    tree_kind: str = "huffman",
    counts: Sequence[int] | None = None,
    weight: nn.Parameter | None = None,
    sparse: bool = False,
) -> nn.Module:
    """The output layer named by ``output`` (``"full"`` or ``"hsoftmax"``).

    For ``"hsoftmax"`` the tree is ``tree`` if given, else built by ``tree_kind``: ``"huffman"``
    (needs the training ``counts`` of every word id) or ``"balanced"``. ``sparse`` gives the
    tree's node vectors sparse gradients (the full softmax touches every row anyway).
    """
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    if output == "full":
        return FullSoftmax(in_features, vocab_size, weight=weight)
    if tree is None:
        if tree_kind not in TREES:
            raise ValueError(f"tree must be one of {TREES} (or pass a BinaryTree), got {tree_kind!r}")
        if tree_kind == "huffman":
            if counts is None:
                raise ValueError("a Huffman tree needs the word counts: pass counts=[count of id 0, ...]")
            tree = huffman_tree(counts)
        else:
            tree = balanced_tree(vocab_size)
    if tree.n_leaves != vocab_size:
        raise ValueError(f"the tree has {tree.n_leaves} leaves but the vocabulary has {vocab_size} words")
    return HierarchicalSoftmax(in_features, tree, sparse=sparse)


class NeuralLM(nn.Module):
    """Base class: subclasses set ``self.vocab_size``, ``self.n_context``, ``self.out`` and
    implement :meth:`features` (contexts -> ``h``)."""

    vocab_size: int
    n_context: int
    out: nn.Module

    def features(self, contexts: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def _configure(self, config: Any, config_cls: type) -> None:
        """Check ``config`` (an instance of ``config_cls``, valid) and set the sizes from it."""
        if not isinstance(config, config_cls):
            raise TypeError(f"config must be an {config_cls.__name__}, got {type(config).__name__}")
        config.validate()
        self.config = config
        self.vocab_size, self.n_context = config.vocab_size, config.n - 1

    def _build_output(
        self, in_features: int, *, counts: Sequence[int] | None, tree: BinaryTree | None, **kwargs: Any
    ) -> None:
        """``self.out``: the output layer ``self.config`` names, reading ``in_features`` numbers
        (``kwargs``: ``weight``, ``sparse``; see :func:`make_output_layer`)."""
        self.out = make_output_layer(
            self.config.output, in_features, self.vocab_size, tree=tree, tree_kind=self.config.tree, counts=counts,
            **kwargs,
        )

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def _unpack(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        if isinstance(batch, dict):
            batch = (batch.get("contexts"), batch.get("targets"))
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise TypeError(
                "a batch must be a pair (contexts [N, n-1], targets [N]) of LongTensors, "
                "e.g. from companion.neural_lm.iterate_minibatches"
            )
        return batch[0], batch[1]

    def forward(self, contexts: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """``log_prob(contexts, targets)`` if targets are given, else ``log_probs_all(contexts)``."""
        return self.log_probs_all(contexts) if targets is None else self.log_prob(contexts, targets)

    def loss(self, batch) -> torch.Tensor:
        """Mean negative log-likelihood (nats per token) of a batch ``(contexts, targets)``."""
        contexts, targets = self._unpack(batch)
        check_contexts(contexts, self.n_context, self.vocab_size)
        return self.out.loss(self.features(contexts), targets)

    def log_prob(self, contexts: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``log P(target | context)`` for each row: ``[N]`` (natural log)."""
        check_contexts(contexts, self.n_context, self.vocab_size)
        check_targets(targets, self.vocab_size, contexts.shape[0])
        return self.out.log_prob(self.features(contexts), targets)

    def log_probs_all(self, contexts: torch.Tensor) -> torch.Tensor:
        """``log P(w | context)`` for every word: ``[N, V]``."""
        check_contexts(contexts, self.n_context, self.vocab_size)
        return self.out.log_probs_all(self.features(contexts))

    @torch.no_grad()
    def next_word_distribution(self, context: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """``P(. | context)`` as probabilities: ``[V]`` for one context of ``n - 1`` ids,
        ``[N, V]`` for a ``[N, n - 1]`` batch. Runs in eval mode, without gradients."""
        ctx = torch.as_tensor(context, dtype=torch.long, device=self.device)
        single = ctx.dim() == 1
        if single:
            ctx = ctx.unsqueeze(0)
        was_training = self.training
        self.eval()
        try:
            probs = self.log_probs_all(ctx).exp()
        finally:
            self.train(was_training)
        return probs[0] if single else probs

    def num_parameters(self) -> int:
        """Number of trainable scalars."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def ngram_examples(ids: Sequence[int] | torch.Tensor | np.ndarray, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """All ``(n-1 previous ids, next id)`` pairs of a token stream, without copies per token.

    Returns ``contexts [T-n+1, n-1]`` and ``targets [T-n+1]`` (LongTensors). The first ``n - 1``
    tokens only serve as context.
    """
    if n < 2:
        raise ValueError(f"n must be >= 2 (an n-gram model predicts from n-1 >= 1 words), got {n}")
    t = torch.as_tensor(np.asarray(ids), dtype=torch.long) if not isinstance(ids, torch.Tensor) else ids.long()
    if t.dim() != 1:
        raise ValueError(f"ids must be a 1-D stream of token ids, got shape {tuple(t.shape)}")
    if t.numel() < n:
        raise ValueError(f"need at least n = {n} tokens to make one example, got {t.numel()}")
    w = t.unfold(0, n, 1)
    return w[:, :-1].contiguous(), w[:, -1].contiguous()


def iterate_minibatches(
    *tensors: torch.Tensor, batch_size: int, shuffle: bool = True, seed: int = 0
) -> Iterator[tuple[torch.Tensor, ...]]:
    """Yield aligned minibatches of the tensors (shuffled by ``seed`` when ``shuffle``)."""
    if not tensors:
        raise ValueError("pass at least one tensor")
    n = tensors[0].shape[0]
    if any(t.shape[0] != n for t in tensors):
        raise ValueError(f"all tensors need the same first dimension, got {[t.shape[0] for t in tensors]}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    for start in range(0, n, batch_size):
        if shuffle:
            idx = order[start : start + batch_size]
            yield tuple(t[idx] for t in tensors)
        else:
            yield tuple(t[start : start + batch_size] for t in tensors)


@torch.no_grad()
def token_log_probs(
    model: NeuralLM, contexts: torch.Tensor, targets: torch.Tensor, *, batch_size: int = 4096
) -> torch.Tensor:
    """Per-token ``log P(target | context)`` of a whole split, on the CPU as float64 ``[N]``
    (what :mod:`~companion.neural_lm.mixture` interpolates). Runs in eval mode."""
    was_training = model.training
    model.eval()
    dev = model.device
    try:
        out = [
            model.log_prob(c.to(dev), t.to(dev)).double().cpu()
            for c, t in iterate_minibatches(contexts, targets, batch_size=batch_size, shuffle=False)
        ]
    finally:
        model.train(was_training)
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.float64)


def perplexity_of_model(model: NeuralLM, contexts: torch.Tensor, targets: torch.Tensor, *, batch_size: int = 4096) -> float:
    """``exp(mean NLL)`` of the model on these examples."""
    lp = token_log_probs(model, contexts, targets, batch_size=batch_size)
    if lp.numel() == 0:
        raise ValueError("no examples to evaluate")
    return perplexity(-float(lp.sum()), lp.numel())


def perplexity_evaluator(
    contexts: torch.Tensor, targets: torch.Tensor, *, prefix: str = "val", batch_size: int = 4096
) -> Callable[[nn.Module], dict[str, float]]:
    """An ``evaluate`` callback for :func:`companion.train.fit` returning
    ``{"val_loss": mean NLL, "val_ppl": perplexity}`` (keys use ``prefix``)."""

    def evaluate(model: nn.Module) -> dict[str, float]:
        lp = token_log_probs(model, contexts, targets, batch_size=batch_size)  # type: ignore[arg-type]
        nll_sum = -float(lp.sum())
        return {f"{prefix}_loss": nll_sum / lp.numel(), f"{prefix}_ppl": perplexity(nll_sum, lp.numel())}

    return evaluate
