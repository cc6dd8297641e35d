"""Continuous bag-of-words (Mikolov et al. 2013a): the averaged context predicts the centre.

``h = (1/|C|) sum_{c in C} v_c`` over the context words ``C`` of the centre's (dynamic) window:
word order inside the window is lost -- a *bag* of words, but of continuous vectors.

**The C code's update of the context vectors.** The exact gradient of the loss with respect to
one context vector is ``(1/|C|) dloss/dh``. The C code (``cbow_mean = 1``, as gensim) computes
``h`` as the mean but adds the *whole* error ``e = lr * (-dloss/dh)`` to every context vector,
i.e. it steps ``|C|`` times further on the input side. We follow the C code, because its
learning rate (0.05 for CBOW) is tuned for that and because gensim does the same; the tests
check ``sgd_step`` against ``|C| x`` the autograd gradient. Training through autograd
(:meth:`loss`) uses the exact gradient.
"""

from __future__ import annotations

import torch

from .heads import gather_rows
from .model import Word2VecModel
from .pairs import Word2VecBatch

__all__ = ["CBOW"]


class CBOW(Word2VecModel):
    """CBOW with the mean of the context vectors; see :class:`~.model.Word2VecModel`."""

    arch = "cbow"

    def _check_owner(self, batch: Word2VecBatch) -> None:
        if batch.owner is None:
            raise ValueError("a CBOW batch needs .owner (the example of each context word); make it with epoch_batches(arch='cbow')")
        if batch.owner.shape != batch.inputs.shape:
            raise ValueError(f"owner {tuple(batch.owner.shape)} and inputs {tuple(batch.inputs.shape)} must have the same shape")

    def context_counts(self, batch: Word2VecBatch) -> torch.Tensor:
        """``[B]`` number of context words of each example."""
        n = batch.targets.shape[0]
        return torch.zeros(n, device=batch.owner.device, dtype=self.in_vectors.dtype).index_add_(
            0, batch.owner, torch.ones_like(batch.owner, dtype=self.in_vectors.dtype)
        )

    def hidden(self, batch: Word2VecBatch) -> torch.Tensor:
        self._check_owner(batch)
        n = batch.targets.shape[0]
        summed = torch.zeros(n, self.dim, device=self.in_vectors.device, dtype=self.in_vectors.dtype)
        summed = summed.index_add(0, batch.owner, gather_rows(self.in_vectors, batch.inputs, self.sparse_grad))
        counts = self.context_counts(batch).clamp(min=1)
        return summed / counts.unsqueeze(1)

    def _push_input_error(self, batch: Word2VecBatch, e: torch.Tensor) -> None:
        # the whole error to each context word, as the C code does (see the module docstring)
        self.in_vectors.index_add_(0, batch.inputs, e[batch.owner])
