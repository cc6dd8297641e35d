"""MASS (Song et al. 2019): mask one contiguous span in the encoder, decode that span.

The encoder reads the row with a fragment ``x[u:v]`` replaced by ``[MASK]`` tokens (the length
is kept); the decoder predicts the fragment left to right, reading only the fragment's own
previous tokens: ``L = -sum_{t=u}^{v-1} log P(x_t | x_{u:t}, x_{\\u:v})``. The decoder cannot lean
on the unmasked text directly, so it has to pull it through cross-attention -- the encoder
learns to understand and the decoder to generate, jointly.

The span length ``k`` interpolates between BERT and GPT (the paper's Table 1): ``k = 1`` is a
masked LM with one masked token and a decoder that reads nothing; ``k = m`` (the whole row)
leaves the encoder nothing and makes the decoder a left-to-right LM. The paper chose
``k = m / 2``, the default here.

One simplification: our decoder numbers its positions from 0, where MASS gives the decoder the
fragment's positions in the row (``u .. v-1``); the encoder's masks still tell it where the
fragment is.
"""

from __future__ import annotations

import torch

from .harness import Objective, Vocab
from .seq2seq import Seq2SeqObjective


def mass_span(n: int, ratio: float, gen: torch.Generator) -> tuple[int, int]:
    """``(start, length)`` of the fragment: ``max(1, round(ratio * n))`` tokens at a uniform start."""
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    k = max(1, round(ratio * n))
    return int(torch.randint(0, n - k + 1, (1,), generator=gen)), k


def mass_pair(ids: list[int], mask_id: int, gen: torch.Generator, ratio: float = 0.5) -> tuple[list[int], list[int]]:
    """One row's ``(encoder input, fragment)``."""
    u, k = mass_span(len(ids), ratio, gen)
    return ids[:u] + [mask_id] * k + ids[u + k:], ids[u:u + k]


class MASS(Seq2SeqObjective, Objective):
    """MASS as a harness objective: encoder input of the row's length, target the fragment."""

    def __init__(self, vocab: Vocab, ratio: float = 0.5, name: str | None = None):
        mass_span(8, ratio, torch.Generator())  # validates the ratio
        self.vocab, self.ratio = vocab, ratio
        self.name = name or f"MASS (k = {ratio:g} m)"

    def lengths(self, T: int) -> tuple[int, int]:
        return T, max(1, round(self.ratio * T))

    def pairs(self, row: list[int], gen: torch.Generator) -> tuple[list[int], list[int]]:
        return mass_pair(row, self.vocab.mask, gen, self.ratio)
