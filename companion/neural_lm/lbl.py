"""The log-bilinear language model (Mnih & Hinton 2007; with a tree: HLBL, Mnih & Hinton 2008).

No hidden non-linearity: the model *predicts a word vector* as a linear function of the
context's word vectors, one ``d x d`` matrix per position,

    r_hat = sum_{i=1}^{n-1} Q_i r_{w_{t-i}},

and scores each word by how well its own vector matches the prediction,

    P(w_t = w | context) = softmax_w(r_hat . r_w + b_w).

The same matrix ``R`` of word vectors serves the context and the prediction (``tie=True``, as
in the paper). With ``output="hsoftmax"`` the tree's node vectors take the place of ``r_w``.
The paper calls the position matrices ``C_i``; we write ``Q_i`` (attribute ``Q``) because the
book keeps ``C`` for the embedding matrix, and ``d`` (field ``dim``) for the vector size.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Sequence

import torch
from torch import nn

from .common import NeuralLM, check_lm_output, check_lm_sizes, seeded
from .tree import BinaryTree

__all__ = ["LBLConfig", "LBL"]


@dataclass
class LBLConfig:
    """Sizes of a log-bilinear LM.

    Attributes:
        vocab_size: ``|V|``.
        n: order (reads ``n - 1`` previous words), ``n >= 2``.
        dim: word-vector size ``d``.
        tie: use the context vectors ``R`` as the output vectors too (full softmax only).
        output: ``"full"`` or ``"hsoftmax"``.
        tree: ``"huffman"`` (needs counts) or ``"balanced"`` for ``hsoftmax``.
        init_std: standard deviation of the initial word vectors.
        m: alias of ``dim`` (the paper's letter; not stored).
    """

    vocab_size: int
    n: int = 5
    dim: int = 60
    tie: bool = True
    output: str = "full"
    tree: str = "huffman"
    init_std: float = 0.1
    m: InitVar[int | None] = None

    def __post_init__(self, m: int | None) -> None:
        if m is not None:
            self.dim = m

    def validate(self) -> None:
        """Raise with a fix for any impossible setting."""
        check_lm_sizes(self)
        check_lm_output(self)


class LBL(NeuralLM):
    """The log-bilinear LM. Same interface as :class:`~.nnlm.NNLM` (``loss``, ``log_prob``,
    ``next_word_distribution``); arguments as there."""

    def __init__(
        self,
        config: LBLConfig,
        *,
        counts: Sequence[int] | None = None,
        tree: BinaryTree | None = None,
        device: str | torch.device | None = None,
        seed: int | None = 0,
    ):
        super().__init__()
        self._configure(config, LBLConfig)
        with seeded(seed):
            d, k = config.dim, self.n_context
            self.R = nn.Embedding(config.vocab_size, d)
            nn.init.normal_(self.R.weight, std=config.init_std)
            # Q_i starts as a scaled identity: r_hat begins as an average of the context vectors.
            eye = torch.eye(d) / k
            self.Q = nn.Parameter(eye.repeat(k, 1, 1) + 0.01 * torch.randn(k, d, d))
            shared = self.R.weight if (config.tie and config.output == "full") else None
            self._build_output(d, counts=counts, tree=tree, weight=shared)
        if device is not None:
            self.to(device)

    def features(self, contexts: torch.Tensor) -> torch.Tensor:
        """The predicted representation ``r_hat = sum_i Q_i r_{w_i}``: ``[N, d]``."""
        r = self.R(contexts).flatten(1)  # [N, (n-1) d]: the context vectors side by side
        # sum_i Q_i r_i as one matrix product with the Q_i^T stacked: [(n-1) d, d]
        return r @ self.Q.transpose(1, 2).reshape(-1, self.config.dim)

    @property
    def embeddings(self) -> torch.Tensor:
        """The learned word vectors ``R``: ``[V, d]`` (detached)."""
        return self.R.weight.detach()
