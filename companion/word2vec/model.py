"""What CBOW and skip-gram share: two embedding matrices and an output layer.

word2vec keeps two matrices (the seed's "two matrices"): the *input* vectors ``v_w`` (the C
code's ``syn0``, the vectors everybody uses) and the *output* vectors ``u`` of the output layer
(``syn1neg`` per word for negative sampling and the full softmax, ``syn1`` per tree node for the
hierarchical softmax). The architectures differ only in how the hidden vector ``h`` is made from
the input vectors -- see :mod:`.skipgram` and :mod:`.cbow`.

Two ways to train, which compute the same update (the tests check it):

* ``loss(batch)``: autograd; the mean loss per example of the batch, for
  :func:`companion.train.fit` and for the gradient checks;
* ``sgd_step(batch, lr)``: the C code's plain SGD, written by hand for a whole batch -- no
  autograd graph, no gradient tensors, only the rows the batch touches are read and written.
"""

from __future__ import annotations

import torch
from torch import nn

from ..neural_lm.tree import huffman_tree
from ._loop import check_update_cap
from .heads import OUTPUTS, FullSoftmax, HierarchicalSoftmax, NegativeSampling
from .pairs import Word2VecBatch

__all__ = ["Word2VecModel", "PairModel"]


class PairModel(nn.Module):
    """What word2vec's models and fastText's share: an output layer ``self.head`` (the heads
    of :mod:`.heads`) fed by hidden vectors built from input rows, trained on
    :class:`~.pairs.Word2VecBatch` es. Subclasses set ``self.head`` and ``self.vocab_size`` and
    define ``pair_loss(batch) -> (summed loss, number of examples)``."""

    head: nn.Module
    vocab_size: int

    @property
    def sparse_grad(self) -> bool:
        """Whether autograd gives the embedding matrices sparse gradients (only touched rows)."""
        return bool(getattr(self, "_sparse_grad", False))

    @sparse_grad.setter
    def sparse_grad(self, value: bool) -> None:
        self._sparse_grad = bool(value)
        self.head.sparse_grad = bool(value)

    @property
    def out_vectors(self) -> torch.Tensor:
        """The output layer's matrix: ``[V, d]`` word vectors (full/neg) or ``[V-1, d]`` node vectors (hs)."""
        return self.head.weight

    def pair_loss(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def loss(self, batch: Word2VecBatch) -> torch.Tensor:
        """Mean loss per example (pair) of the batch (what :func:`companion.train.fit` minimises)."""
        total, n = self.pair_loss(batch)
        return total / n.clamp(min=1)

    def _check_batch_shape(self, batch: Word2VecBatch) -> None:
        if not isinstance(batch, Word2VecBatch):
            raise TypeError(f"expected a Word2VecBatch (see companion.word2vec.epoch_batches), got {type(batch).__name__}")
        if batch.tokens.dim() != 2 or batch.targets.dim() != 2 or batch.mask.shape != (*batch.tokens.shape, batch.targets.shape[1]):
            raise ValueError(
                f"a Word2VecBatch needs tokens [nb, L], targets [nb, g] and mask [nb, L, g]; got "
                f"{tuple(batch.tokens.shape)}, {tuple(batch.targets.shape)}, {tuple(batch.mask.shape)}"
            )


class Word2VecModel(PairModel):
    """Input vectors plus an output layer; subclasses define the hidden vector.

    Args:
        counts: ``[V]`` word counts (sorted or not) -- they size the vocabulary and build the
            Huffman tree (``hs``) or the noise table (``neg``).
        dim: vector size ``d``.
        output: ``"full"``, ``"hs"`` or ``"neg"``.
        negative: noise words per example (``neg`` only).
        power: noise exponent (``neg`` only).
        seed: seeds the initial input vectors and the noise sampler.
    """

    arch = "?"

    def __init__(self, counts: torch.Tensor, dim: int = 100, *, output: str = "neg", negative: int = 5, power: float = 0.75, seed: int = 0):
        super().__init__()
        counts = torch.as_tensor(counts)
        if counts.dim() != 1 or counts.numel() < 2:
            raise ValueError(f"counts must be a 1-D tensor with one count per word (>= 2 words), got shape {tuple(counts.shape)}")
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS} (full softmax, hierarchical softmax, negative sampling), got {output!r}")
        V = int(counts.numel())
        self.vocab_size, self.dim, self.output = V, dim, output
        gen = torch.Generator().manual_seed(int(seed))
        # C code: syn0 uniform in [-0.5/d, 0.5/d); output vectors zero
        self.in_vectors = nn.Parameter((torch.rand(V, dim, generator=gen) - 0.5) / dim)
        if output == "full":
            self.head: nn.Module = FullSoftmax(V, dim)
        elif output == "hs":
            self.head = HierarchicalSoftmax(dim, huffman_tree(counts.tolist()))
        else:
            self.head = NegativeSampling(V, dim, counts, negative=negative, power=power, seed=seed + 1)

    # -- subclasses ------------------------------------------------------------------------
    def hidden(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(X, A, n_examples)``: the hidden vectors ``[nb, Q, d]`` (differentiable), their
        attachment to the centres ``[nb, Q, g]`` and the number of training examples."""
        raise NotImplementedError

    def _push_input_error(self, batch: Word2VecBatch, E: torch.Tensor, cap: float | None = None) -> None:
        """Add the error ``E`` (one row per hidden vector) to the input vectors that made them
        (each row's step capped at ``cap`` pairs' worth, see :func:`~.heads.row_scale`)."""
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------------------
    def _check_batch(self, batch: Word2VecBatch) -> None:
        self._check_batch_shape(batch)
        for name in ("tokens", "targets"):
            t = getattr(batch, name)
            if t.numel() and (int(t.min()) < 0 or int(t.max()) >= self.vocab_size):
                raise ValueError(f"batch.{name} holds ids outside 0..{self.vocab_size - 1}; encode with the model's vocabulary")

    def pair_loss(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(summed loss, number of examples)`` through autograd (NEG draws fresh noise words)."""
        self._check_batch(batch)
        X, A, n = self.hidden(batch)
        return self.head.loss(X, A, batch.targets).sum(), n

    @torch.no_grad()
    def sgd_step(self, batch: Word2VecBatch, lr: float, cap: float | None = None) -> tuple[float, int]:
        """One hand-written SGD step of the C code on a whole batch.

        Equals a gradient step on the *summed* loss of the batch with step size ``lr`` (for
        CBOW, with the C code's convention for the context words -- see :mod:`.cbow`), except
        that with ``cap`` a vector updated by more than ``cap`` pairs of the batch moves
        ``cap / n`` of its summed step (:func:`~.heads.row_scale`; ``None``: plain SGD).

        Returns:
            ``(mean loss per example, number of examples)``; the loss is from before the step.
        """
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        X, A, n = self.hidden(batch)
        check_update_cap(cap, "cap")
        E, loss = self.head.sgd_update(X, A, batch.targets, lr, cap=cap)
        self._push_input_error(batch, E, cap)
        n = int(n)
        return float(loss) / max(1, n), n

    def vectors(self, which: str = "input") -> torch.Tensor:
        """The word vectors to use: see :func:`companion.word2vec.export.combine`."""
        from .export import combine

        return combine(self, which)
