"""Continuous bag-of-words (Mikolov et al. 2013a): the averaged context predicts the centre.

``h = (1/|C|) sum_{c in C} v_c`` over the context words ``C`` of the centre's (dynamic) window:
word order inside the window is lost -- a *bag* of words, but of continuous vectors. A centre
whose window is empty (a one-word sentence) is not an example, as in the C code.

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

from .heads import gather_rows, row_scale
from .model import Word2VecModel
from .pairs import Word2VecBatch

__all__ = ["CBOW"]


class CBOW(Word2VecModel):
    """CBOW with the mean of the context vectors; see :class:`~.model.Word2VecModel`."""

    arch = "cbow"

    def hidden(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        X = gather_rows(self.in_vectors, batch.tokens, self.sparse_grad)  # [nb, L, d]
        M = batch.mask.to(X.dtype)  # [nb, L, g]
        counts = M.sum(1)  # [nb, g] context words per centre
        H = torch.bmm(M.transpose(1, 2), X) / counts.clamp(min=1).unsqueeze(2)  # [nb, g, d]
        has_context = (counts > 0).to(X.dtype)
        return H, torch.diag_embed(has_context), has_context.sum().long()

    def _push_input_error(self, batch: Word2VecBatch, E: torch.Tensor, cap: float | None = None) -> None:
        # the whole error of each centre to every word of its window, as the C code does
        M = batch.mask.to(E.dtype)
        E_tok = torch.bmm(M, E)  # [nb, L, d]
        scale = row_scale(batch.tokens, M.sum(2), self.vocab_size, cap)
        if scale is not None:
            E_tok = E_tok * scale.unsqueeze(2)
        self.in_vectors.index_add_(0, batch.tokens.reshape(-1), E_tok.reshape(-1, self.dim))
