"""Bengio et al. (2003)'s neural probabilistic language model.

For a context of ``n - 1`` words ``w_{t-n+1} .. w_{t-1}``:

    x = [C(w_{t-n+1}); ...; C(w_{t-1})]          (shared word vectors C: |V| x d, concatenated)
    y = b + W x + U tanh(b_h + H x)               (W: the optional direct connections)
    P(w_t = i | context) = softmax(y)_i

With ``output="hsoftmax"`` the same features feed a tree instead of the |V|-way softmax (the
direct connections then enter every node's score: ``u_v . [tanh(b_h + Hx); x]``).

Notation (book/notation.md): ``d`` is the word-vector size and ``d_h`` the number of hidden
units (the paper's ``m`` and ``h``; its hidden bias ``d`` is our ``b_h``). The config fields are
``dim`` and ``hidden``; ``m=`` and ``h=`` are still accepted as aliases.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Sequence

import torch
from torch import nn

from .common import NeuralLM, check_lm_output, check_lm_sizes, seeded
from .output import FullSoftmax
from .tree import BinaryTree

__all__ = ["NNLMConfig", "NNLM", "paper_parameter_count"]


@dataclass
class NNLMConfig:
    """Sizes of an NNLM (the book's ``d`` and ``d_h``; the paper's ``m`` and ``h``).

    Attributes:
        vocab_size: ``|V|``.
        n: order of the model: it reads ``n - 1`` previous words (``n >= 2``).
        dim: word-vector (embedding) size ``d`` (the paper's ``m``).
        hidden: hidden units ``d_h`` (the paper's ``h``); ``0`` means no hidden layer (then
            ``direct`` must be True).
        direct: the direct connections ``W x`` from the word vectors to the output.
        output: ``"full"`` softmax or ``"hsoftmax"`` (hierarchical softmax).
        tree: for ``hsoftmax``: ``"huffman"`` (needs counts) or ``"balanced"``; or pass a
            :class:`~.tree.BinaryTree` to :class:`NNLM`.
        init_std: standard deviation of the initial word vectors.
        sparse: sparse gradients for the word vectors C (and the tree's node vectors), so that
            an SGD step costs O(batch) instead of O(|V|); needs an optimizer that accepts
            sparse gradients (plain SGD, ``SparseAdam``, Adagrad) and no gradient clipping.
        m, h: aliases of ``dim`` and ``hidden`` in the paper's letters (not stored).
    """

    vocab_size: int
    n: int = 5
    dim: int = 60
    hidden: int = 50
    direct: bool = True
    output: str = "full"
    tree: str = "huffman"
    init_std: float = 0.1
    sparse: bool = False
    m: InitVar[int | None] = None
    h: InitVar[int | None] = None

    def __post_init__(self, m: int | None, h: int | None) -> None:
        if m is not None:
            self.dim = m
        if h is not None:
            self.hidden = h

    def validate(self) -> None:
        """Raise ``ValueError`` with a fix for any impossible setting."""
        check_lm_sizes(self, ("vocab_size", "n", "dim", "hidden"))
        if self.hidden < 0:
            raise ValueError(f"hidden (units d_h) must be >= 0, got {self.hidden}")
        if self.hidden == 0 and not self.direct:
            raise ValueError("hidden=0 leaves only the direct connections: set direct=True or hidden >= 1")
        check_lm_output(self)


def paper_parameter_count(vocab_size: int, n: int, dim: int, hidden: int, direct: bool = True) -> int:
    """Free parameters of the full-softmax NNLM, counted as in Bengio et al. (2003), with
    ``d = dim`` and ``d_h = hidden``: ``|V|(1 + n d + d_h) + d_h(1 + (n-1) d)`` with direct
    connections (``b, W, U, b_h, H, C``); without them ``W`` (``|V| (n-1) d``) drops out.
    Ignoring the biases this is the chapter's
    ``(n d + d_h)|V| + (n-1) d d_h``."""
    d, d_h = dim, hidden
    total = vocab_size * (1 + n * d + d_h) + d_h * (1 + (n - 1) * d)
    return total if direct else total - vocab_size * (n - 1) * d


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

        model = NNLM(NNLMConfig(vocab_size=len(vocab), n=5, dim=60, hidden=50, direct=True))
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
            # shared word vectors: one row per word, whatever position it is read in
            self.C = nn.Embedding(config.vocab_size, config.dim, sparse=config.sparse)
            nn.init.normal_(self.C.weight, std=config.init_std)
            in_x = self.n_context * config.dim
            self.H = nn.Linear(in_x, config.hidden) if config.hidden > 0 else None  # H x + b_h
            # The output layer reads [tanh(b_h + Hx); x] so that one matrix holds [U | W]:
            # b + [U | W][h; x] = b + U h + W x.
            out_in = config.hidden + (in_x if config.direct else 0)
            self._build_output(out_in, counts=counts, tree=tree, sparse=config.sparse)
        if device is not None:
            self.to(device)

    def embed(self, contexts: torch.Tensor) -> torch.Tensor:
        """``x``: the concatenated context word vectors, ``[N, (n-1) d]``."""
        return self.C(contexts).flatten(1)

    def features(self, contexts: torch.Tensor) -> torch.Tensor:
        """What the output layer reads: ``h = tanh(b_h + H x)``, then ``x`` if ``direct``."""
        x = self.embed(contexts)
        if self.H is None:
            return x
        h = torch.tanh(self.H(x))
        return torch.cat([h, x], dim=1) if self.config.direct else h

    def logits(self, contexts: torch.Tensor) -> torch.Tensor:
        """``y = b + W x + U tanh(b_h + H x)``, ``[N, V]`` (full softmax only), written out term
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
        """Hidden-to-output weights ``[V, d_h]`` (a view into the output layer; full softmax)."""
        return self._out_weight()[:, : self.config.hidden]

    @property
    def W(self) -> torch.Tensor:
        """Direct-connection weights ``[V, (n-1) d]`` (a view; full softmax with ``direct``)."""
        if not self.config.direct:
            # ValueError, not AttributeError: nn.Module would swallow the latter and say "no attribute 'W'"
            raise ValueError("this NNLM has no direct connections (config.direct=False), so it has no W")
        return self._out_weight()[:, self.config.hidden :]

    def _out_weight(self) -> torch.Tensor:
        if not isinstance(self.out, FullSoftmax):
            raise ValueError("U and W are blocks of the full softmax's weight; a tree has node vectors instead")
        return self.out.weight

    @property
    def embeddings(self) -> torch.Tensor:
        """The learned word vectors ``C``: ``[V, d]`` (detached)."""
        return self.C.weight.detach()
