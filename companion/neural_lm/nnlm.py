"""Bengio et al. (2003)'s neural probabilistic language model.

For a context of ``n - 1`` words ``w_{t-n+1} .. w_{t-1}``:

    x = [C(w_{t-n+1}); ...; C(w_{t-1})]          (shared word vectors C: |V| x m, concatenated)
    y = b + W x + U tanh(d + H x)                 (W: the optional direct connections)
    P(w_t = i | context) = softmax(y)_i

With ``output="hsoftmax"`` the same features feed a tree instead of the |V|-way softmax (the
direct connections then enter every node's score: ``u_n . [tanh(d + Hx); x]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import nn

from .common import NeuralLM, check_lm_output, check_lm_sizes, seeded
from .output import FullSoftmax
from .tree import BinaryTree

__all__ = ["NNLMConfig", "NNLM", "paper_parameter_count"]


@dataclass
class NNLMConfig:
    """Sizes of an NNLM, named as in the paper.

    Attributes:
        vocab_size: ``|V|``.
        n: order of the model: it reads ``n - 1`` previous words (``n >= 2``).
        m: word-vector (embedding) size.
        h: hidden units; ``0`` means no hidden layer (then ``direct`` must be True).
        direct: the direct connections ``W x`` from the word vectors to the output.
        output: ``"full"`` softmax or ``"hsoftmax"`` (hierarchical softmax).
        tree: for ``hsoftmax``: ``"huffman"`` (needs counts) or ``"balanced"``; or pass a
            :class:`~.tree.BinaryTree` to :class:`NNLM`.
        init_std: standard deviation of the initial word vectors.
        sparse: sparse gradients for the word vectors C (and the tree's node vectors), so that
            an SGD step costs O(batch) instead of O(|V|); needs an optimizer that accepts
            sparse gradients (plain SGD, ``SparseAdam``, Adagrad) and no gradient clipping.
    """

    vocab_size: int
    n: int = 5
    m: int = 60
    h: int = 50
    direct: bool = True
    output: str = "full"
    tree: str = "huffman"
    init_std: float = 0.1
    sparse: bool = False

    def validate(self) -> None:
        """Raise ``ValueError`` with a fix for any impossible setting."""
        check_lm_sizes(self, ("vocab_size", "n", "m", "h"))
        if self.h < 0:
            raise ValueError(f"h (hidden units) must be >= 0, got {self.h}")
        if self.h == 0 and not self.direct:
            raise ValueError("h=0 leaves only the direct connections: set direct=True or h >= 1")
        check_lm_output(self)


def paper_parameter_count(vocab_size: int, n: int, m: int, h: int, direct: bool = True) -> int:
    """Free parameters of the full-softmax NNLM, counted as in Bengio et al. (2003):
    ``|V|(1 + n m + h) + h(1 + (n-1) m)`` with direct connections (``b, W, U, d, H, C``);
    without them ``W`` (``|V| (n-1) m``) drops out. Ignoring the biases this is the chapter's
    ``(n m + h)|V| + (n-1) m h``."""
    total = vocab_size * (1 + n * m + h) + h * (1 + (n - 1) * m)
    return total if direct else total - vocab_size * (n - 1) * m


class NNLM(NeuralLM):
    """The neural probabilistic language model.

    Args:
        config: an :class:`NNLMConfig`.
        counts: training count of every word id (needed for a Huffman tree).
        tree: use this tree for the hierarchical softmax (overrides ``config.tree``).
        device: where to put the parameters (``None``: CPU; :func:`companion.train.fit`
            moves the model to its device anyway).
        seed: seeds the initial weights, so two models built with the same seed are equal.

    Example::

        model = NNLM(NNLMConfig(vocab_size=len(vocab), n=5, m=60, h=50, direct=True))
        fit(model, lambda e: iterate_minibatches(ctx, tgt, batch_size=256, seed=e))
    """

    def __init__(
        self,
        config: NNLMConfig,
        *,
        counts: Sequence[int] | None = None,
        tree: BinaryTree | None = None,
        device: str | torch.device | None = None,
        seed: int | None = 0,
    ):
        super().__init__()
        self._configure(config, NNLMConfig)
        with seeded(seed):
            self.C = nn.Embedding(config.vocab_size, config.m, sparse=config.sparse)  # shared word vectors
            nn.init.normal_(self.C.weight, std=config.init_std)
            in_x = self.n_context * config.m
            self.H = nn.Linear(in_x, config.h) if config.h > 0 else None  # H x + d
            # The output layer reads [tanh(d + Hx); x] so that one matrix holds [U | W]:
            # b + [U | W][a; x] = b + U a + W x.
            self._build_output(config.h + (in_x if config.direct else 0), counts=counts, tree=tree, sparse=config.sparse)
        if device is not None:
            self.to(device)

    def embed(self, contexts: torch.Tensor) -> torch.Tensor:
        """``x``: the concatenated context word vectors, ``[N, (n-1) m]``."""
        return self.C(contexts).flatten(1)

    def features(self, contexts: torch.Tensor) -> torch.Tensor:
        """What the output layer reads: ``tanh(d + H x)``, followed by ``x`` if ``direct``."""
        x = self.embed(contexts)
        if self.H is None:
            return x
        a = torch.tanh(self.H(x))
        return torch.cat([a, x], dim=1) if self.config.direct else a

    def logits(self, contexts: torch.Tensor) -> torch.Tensor:
        """``y = b + W x + U tanh(d + H x)``, ``[N, V]`` (full softmax only), written out term
        by term so it can be read against the paper (equal to ``self.out.logits(features)``)."""
        if not isinstance(self.out, FullSoftmax):
            raise TypeError("logits() exists for the full softmax only; use log_probs_all() with a tree")
        x = self.embed(contexts)
        y = self.out.bias.expand(x.shape[0], -1)
        if self.H is not None:
            y = y + torch.tanh(self.H(x)) @ self.U.T
        if self.config.direct:
            y = y + x @ self.W.T
        return y

    @property
    def U(self) -> torch.Tensor:
        """Hidden-to-output weights ``[V, h]`` (a view into the output layer; full softmax)."""
        return self._out_weight()[:, : self.config.h]

    @property
    def W(self) -> torch.Tensor:
        """Direct-connection weights ``[V, (n-1) m]`` (a view; full softmax with ``direct``)."""
        if not self.config.direct:
            # ValueError, not AttributeError: nn.Module would swallow the latter and say "no attribute 'W'"
            raise ValueError("this NNLM has no direct connections (config.direct=False), so it has no W")
        return self._out_weight()[:, self.config.h :]

    def _out_weight(self) -> torch.Tensor:
        if not isinstance(self.out, FullSoftmax):
            raise ValueError("U and W are blocks of the full softmax's weight; a tree has node vectors instead")
        return self.out.weight

    @property
    def embeddings(self) -> torch.Tensor:
        """The learned word vectors ``C``: ``[V, m]`` (detached)."""
        return self.C.weight.detach()
