"""Collobert & Weston (2008; 2011)'s ranking language model, the objective behind SENNA.

Instead of normalised probabilities, a network scores a window of words, and training only
asks that a real window score higher, by a margin of 1, than the same window with its centre
word replaced by a random word:

    f(x) = w2 . hardtanh(W1 [e(x_1); ...; e(x_k)] + b1) + b2
    loss = mean max(0, 1 - f(x) + f(x~))

No softmax over |V| at all: the cost per window does not depend on the vocabulary size. The
word vectors ``e`` are the product.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .common import check_int_fields, seeded

__all__ = ["SennaConfig", "WindowRanker", "context_windows", "corrupt_centre", "ranking_accuracy"]


@dataclass
class SennaConfig:
    """Sizes of the window scorer.

    Attributes:
        vocab_size: ``|V|``.
        window: words per window (odd; the centre word is the one replaced). SENNA used 11.
        dim: word-vector size ``d`` (SENNA: 50).
        hidden: hidden units ``d_h`` (SENNA: 100).
        margin: the hinge margin.
        init_std: standard deviation of the initial word vectors. Keep it near 1: with small
            vectors (0.1) the centre word barely moves the score and, in our tests, training
            sat on the hinge's plateau (loss ~1, accuracy ~0.5) for hundreds of steps.
    """

    vocab_size: int
    window: int = 5
    dim: int = 50
    hidden: int = 100
    margin: float = 1.0
    init_std: float = 1.0
    m: InitVar[int | None] = None
    h: InitVar[int | None] = None

    def __post_init__(self, m: int | None, h: int | None) -> None:
        if m is not None:
            self.dim = m
        if h is not None:
            self.hidden = h

    def validate(self) -> None:
        """Raise with a fix for any impossible setting."""
        check_int_fields(self, ("vocab_size", "window", "dim", "hidden"))
        if self.vocab_size < 2:
            raise ValueError(f"vocab_size must be >= 2 (a corrupted centre must differ), got {self.vocab_size}")
        if self.window < 1 or self.window % 2 == 0:
            raise ValueError(f"window must be a positive odd number (it has a centre word), got {self.window}")
        if self.dim < 1 or self.hidden < 1:
            raise ValueError(f"dim and hidden must be >= 1, got dim={self.dim}, hidden={self.hidden}")
        if not self.margin > 0:
            raise ValueError(f"margin must be > 0, got {self.margin}")


def context_windows(ids: Sequence[int] | torch.Tensor | np.ndarray, window: int) -> torch.Tensor:
    """Every window of ``window`` consecutive ids of a token stream: ``[T - window + 1, window]``."""
    if window < 1 or window % 2 == 0:
        raise ValueError(f"window must be a positive odd number, got {window}")
    t = ids.long() if isinstance(ids, torch.Tensor) else torch.as_tensor(np.asarray(ids), dtype=torch.long)
    if t.dim() != 1 or t.numel() < window:
        raise ValueError(f"ids must be a 1-D stream with at least {window} tokens, got shape {tuple(t.shape)}")
    return t.unfold(0, window, 1).contiguous()


def corrupt_centre(
    windows: torch.Tensor, vocab_size: int, *, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A copy of ``windows`` whose centre word is replaced by a uniformly random *different* word."""
    c = windows.shape[1] // 2
    # draw from V-1 words and skip the true one, so the corrupted window always differs
    r = torch.randint(0, vocab_size - 1, (windows.shape[0],), generator=generator, device=windows.device)
    r = r + (r >= windows[:, c]).long()
    out = windows.clone()
    out[:, c] = r
    return out


class WindowRanker(nn.Module):
    """The window scorer ``f`` with its pairwise hinge loss.

    Args:
        config: a :class:`SennaConfig`.
        device: where to put the parameters.
        seed: seeds the initial weights and the stream of corrupting words.

    ``loss(batch)`` takes a ``[N, window]`` LongTensor of real windows (or a 1-tuple holding it,
    or a pair ``(windows, corrupted)`` to fix the negatives) and draws the corrupted centres
    from the model's own seeded generator, so training is reproducible.
    """

    def __init__(self, config: SennaConfig, *, device: str | torch.device | None = None, seed: int = 0):
        super().__init__()
        if not isinstance(config, SennaConfig):
            raise TypeError(f"config must be a SennaConfig, got {type(config).__name__}")
        config.validate()
        self.config, self.seed = config, seed
        with seeded(seed):
            self.E = nn.Embedding(config.vocab_size, config.dim)
            nn.init.normal_(self.E.weight, std=config.init_std)
            self.hidden = nn.Linear(config.window * config.dim, config.hidden)
            self.score_layer = nn.Linear(config.hidden, 1)
        self._gen: torch.Generator | None = None
        if device is not None:
            self.to(device)

    @property
    def device(self) -> torch.device:
        return self.E.weight.device

    def _generator(self) -> torch.Generator:
        if self._gen is None or self._gen.device != self.device:
            self._gen = torch.Generator(device=self.device).manual_seed(self.seed)
        return self._gen

    def _check(self, windows: torch.Tensor) -> None:
        cfg = self.config
        if not isinstance(windows, torch.Tensor) or windows.dtype not in (torch.int64, torch.int32):
            raise TypeError("windows must be a LongTensor of word ids [N, window]")
        if windows.dim() != 2 or windows.shape[1] != cfg.window:
            raise ValueError(f"windows must be [N, {cfg.window}], got shape {tuple(windows.shape)}")
        if windows.numel() and (int(windows.min()) < 0 or int(windows.max()) >= cfg.vocab_size):
            raise ValueError(f"window ids must lie in [0, {cfg.vocab_size}); encode with the model's vocabulary")

    def score(self, windows: torch.Tensor) -> torch.Tensor:
        """``f(x)`` for each window: ``[N]``."""
        self._check(windows)
        x = self.E(windows).flatten(1)
        return self.score_layer(F.hardtanh(self.hidden(x))).squeeze(1)

    def loss(self, batch) -> torch.Tensor:
        """Mean pairwise hinge loss ``max(0, margin - f(x) + f(x~))``."""
        if isinstance(batch, (tuple, list)):
            if len(batch) == 1:
                windows, corrupted = batch[0], None
            elif len(batch) == 2:
                windows, corrupted = batch
            else:
                raise TypeError("a batch is windows, (windows,) or (windows, corrupted)")
        else:
            windows, corrupted = batch, None
        self._check(windows)
        if corrupted is None:
            corrupted = corrupt_centre(windows, self.config.vocab_size, generator=self._generator())
        elif corrupted.shape != windows.shape:
            raise ValueError(f"corrupted windows {tuple(corrupted.shape)} must match windows {tuple(windows.shape)}")
        return F.relu(self.config.margin - self.score(windows) + self.score(corrupted)).mean()

    @property
    def embeddings(self) -> torch.Tensor:
        """The learned word vectors ``[V, d]`` (detached)."""
        return self.E.weight.detach()


@torch.no_grad()
def ranking_accuracy(
    model: WindowRanker, windows: torch.Tensor, *, n_negatives: int = 1, seed: int = 0, batch_size: int = 8192
) -> float:
    """Fraction of (window, corrupted window) pairs that the model ranks correctly, f(x) > f(x~).

    The corruptions are drawn with their own ``seed`` (not the model's training stream), so the
    metric is the same number every time it is computed for the same model and windows.
    """
    if n_negatives < 1:
        raise ValueError(f"n_negatives must be >= 1, got {n_negatives}")
    model_was_training = model.training
    model.eval()
    gen = torch.Generator(device=model.device).manual_seed(seed)
    right = total = 0
    try:
        for start in range(0, windows.shape[0], batch_size):
            w = windows[start : start + batch_size].to(model.device)
            s = model.score(w)
            for _ in range(n_negatives):
                right += int((s > model.score(corrupt_centre(w, model.config.vocab_size, generator=gen))).sum())
                total += w.shape[0]
    finally:
        model.train(model_was_training)
    if total == 0:
        raise ValueError("no windows to evaluate")
    return right / total
