"""Reference solutions for chapter 12 (try the exercises first!)."""

from __future__ import annotations

# --- 12b ---
from .ch12b import (  # noqa: F401
    b_coattention_params,
    b_hierarchical_kmeans,
    b_lloyd_step,
    b_purity,
    b_recall_at_1,
)

# --- 12a ---
from .ch12a import (  # noqa: F401
    a_corrupt,
    a_filtered_rank,
    a_lives_in,
    a_margin_loss,
)
