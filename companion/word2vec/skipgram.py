"""Skip-gram (Mikolov et al. 2013a): one word predicts another word of its window.

``h = v_{w_I}``: the hidden vector is just the input word's vector, so the model is a
log-bilinear classifier ``p(w_O | w_I) ~ exp(u_{w_O} . v_{w_I})`` (with a cheap surrogate of the
softmax, see :mod:`.heads`). Every (input, output) pair of a window is its own example, which is
why skip-gram costs about ``2 x mean window`` times more than CBOW per corpus word.

In a batch block, the hidden vectors are simply the vectors of the block's tokens and the window
mask says which centre each one predicts; each token's vector is read and updated once per
block, with the errors of all its pairs summed.
"""

from __future__ import annotations

import torch

from .heads import gather_rows, row_scale
from .model import Word2VecModel
from .pairs import Word2VecBatch

__all__ = ["SkipGram"]


class SkipGram(Word2VecModel):
    """Skip-gram; see :class:`~.model.Word2VecModel` for the arguments.

    Example:
        >>> m = SkipGram(torch.tensor([5, 3, 2]), dim=4, output="neg", negative=2)
        >>> m.in_vectors.shape, m.out_vectors.shape
        (torch.Size([3, 4]), torch.Size([3, 4]))
    """

    arch = "sg"

    def hidden(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        X = gather_rows(self.in_vectors, batch.tokens, self.sparse_grad)  # [nb, L, d]
        return X, batch.mask.to(X.dtype), batch.mask.sum()

    def _push_input_error(self, batch: Word2VecBatch, E: torch.Tensor, cap: float | None = None) -> None:
        scale = row_scale(batch.tokens, batch.mask.sum(2).to(E.dtype), self.vocab_size, cap)
        if scale is not None:
            E = E * scale.unsqueeze(2)
        self.in_vectors.index_add_(0, batch.tokens.reshape(-1), E.reshape(-1, self.dim))
