"""The noise distribution of negative sampling: the unigram distribution raised to 3/4.

Mikolov et al. (2013b) draw the ``k`` negative words of every pair from
``P_n(w) = count(w)^0.75 / sum_v count(v)^0.75``; the power flattens the distribution so rare
words are drawn more often than their frequency. The C code samples it with a *table*: an array
of ``1e8`` word ids in which each word fills a share of cells proportional to ``P_n(w)``; a
sample is one uniformly random cell. That is O(1) per draw and trivially vectorised: a batch of
draws is one ``randint`` and one gather.
"""

from __future__ import annotations

import torch

__all__ = ["noise_distribution", "unigram_table", "NoiseSampler"]


def noise_distribution(counts: torch.Tensor, power: float = 0.75) -> torch.Tensor:
    """``counts^power``, normalised: ``[V]`` float64 probabilities.

    Raises:
        ValueError: for an empty/negative/all-zero ``counts`` or a non-finite ``power``.
    """
    c = torch.as_tensor(counts).double()
    if c.dim() != 1 or c.numel() < 1:
        raise ValueError(f"counts must be a non-empty 1-D tensor, got shape {tuple(c.shape)}")
    if bool((c < 0).any()) or not bool(torch.isfinite(c).all()):
        raise ValueError("counts must be finite and >= 0")
    if not isinstance(power, (int, float)) or power != power or abs(power) == float("inf"):
        raise ValueError(f"power must be a finite number, got {power!r}")
    w = c.pow(power) * (c > 0)  # a zero count stays impossible even for power <= 0
    z = w.sum()
    if not z > 0:
        raise ValueError("counts must contain at least one positive count")
    return w / z


def unigram_table(counts: torch.Tensor, table_size: int = 10_000_000, power: float = 0.75) -> torch.Tensor:
    """The C code's table: ``[table_size]`` int32 word ids, word ``w`` filling ``~P_n(w) * size`` cells.

    Built from the cumulative distribution, so each word's share is exact to one cell (the C code
    walks the table with a running threshold and gets the same result up to rounding).
    """
    if not isinstance(table_size, int) or table_size < 1:
        raise ValueError(f"table_size must be a positive int, got {table_size!r}")
    p = noise_distribution(counts, power)
    if table_size < p.numel():
        raise ValueError(f"table_size ({table_size}) must be at least the vocabulary size ({p.numel()})")
    # word w fills the cells from round(size * P(< w)) to round(size * P(<= w)): contiguous runs,
    # each exact to one cell, with O(size) memory
    bounds = torch.round(torch.cumsum(p, 0) * table_size).long()
    bounds[-1] = table_size
    runs = torch.diff(bounds, prepend=torch.zeros(1, dtype=torch.long))
    return torch.repeat_interleave(torch.arange(p.numel(), dtype=torch.int32), runs)


class NoiseSampler:
    """Draws negative words from ``P_n`` with a unigram table.

    Args:
        counts: ``[V]`` word counts.
        power: the exponent (0.75 in word2vec; 1 is the unigram, 0 the uniform distribution).
        table_size: cells of the table (the C code uses 1e8). Default: ``1000 |V|`` cells,
            between 1e5 and 1e7 (40 MB), so every
            share is exact to well under a rare word's probability.
        device: where the table lives and the samples are drawn.
        seed: seed of the sampler's own generator (draws do not disturb the global RNG).
    """

    def __init__(
        self,
        counts: torch.Tensor,
        *,
        power: float = 0.75,
        table_size: int | None = None,
        device: str | torch.device = "cpu",
        seed: int = 0,
    ):
        counts = torch.as_tensor(counts)
        if table_size is None:
            table_size = min(10_000_000, max(100_000, 1000 * int(counts.numel())))
        self.probs = noise_distribution(counts, power)
        self.table = unigram_table(counts, table_size, power).to(device)
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(int(seed))

    @property
    def vocab_size(self) -> int:
        return int(self.probs.numel())

    def to(self, device: str | torch.device) -> "NoiseSampler":
        """Move the table (and a generator continuing from the same seed state) to ``device``."""
        device = torch.device(device)
        if device != self.device:
            state_seed = int(torch.randint(0, 2**62, (1,), generator=self.generator))
            self.table = self.table.to(device)
            self.device = device
            self.generator = torch.Generator(device=device).manual_seed(state_seed)
        return self

    def cells(self, *shape: int) -> torch.Tensor:
        """Uniform random cells of the table (what :meth:`sample` looks up): the draw itself."""
        if any((not isinstance(s, int)) or s < 0 for s in shape):
            raise ValueError(f"shape must be non-negative ints, got {shape}")
        return torch.randint(0, self.table.numel(), shape, generator=self.generator, device=self.device)

    def sample(self, *shape: int) -> torch.Tensor:
        """Word ids of the given shape (int64), i.i.d. from ``P_n``."""
        return self.table[self.cells(*shape)].long()
