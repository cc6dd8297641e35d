"""Reference solutions for chapter 0."""

from __future__ import annotations

from collections.abc import Sequence


def type_token_ratio(tokens: Sequence[str]) -> float:
    """Distinct tokens divided by tokens; 0.0 for no tokens."""
    if len(tokens) == 0:
        return 0.0
    return len(set(tokens)) / len(tokens)
