"""The book's scale knob.

``BOOK_SCALE`` chooses how big every run in the book is:

* ``ci``     -- continuous integration: a whole notebook in about a minute or two;
* ``laptop`` -- the default, and what the stored notebook outputs show (<= ~5 min per chapter
  on 2 CPU cores);
* ``gpu``    -- bigger runs for readers with an accelerator.

Chapters never test ``if scale == ...`` by hand; they call :func:`pick`::

    epochs = pick(ci=1, laptop=5, gpu=20)
"""

from __future__ import annotations

import os
from typing import TypeVar

SCALES: tuple[str, ...] = ("ci", "laptop", "gpu")
DEFAULT_SCALE = "laptop"
ENV_VAR = "BOOK_SCALE"

T = TypeVar("T")


def get_scale() -> str:
    """Return the current scale, read from ``$BOOK_SCALE`` (default ``laptop``).

    Raises:
        ValueError: if the variable holds anything but ``ci``, ``laptop`` or ``gpu``.
    """
    raw = os.environ.get(ENV_VAR, DEFAULT_SCALE)
    value = raw.strip().lower() or DEFAULT_SCALE
    if value not in SCALES:
        raise ValueError(
            f"{ENV_VAR}={raw!r} is not a known scale. Use one of {', '.join(SCALES)} "
            f"(for example `export {ENV_VAR}=ci`), or unset it for the default '{DEFAULT_SCALE}'."
        )
    return value


def pick(*, ci: T, laptop: T, gpu: T | None = None, scale: str | None = None) -> T:
    """Pick the value that belongs to the current scale.

    Args:
        ci, laptop, gpu: the value for each scale; ``gpu`` defaults to the laptop value.
        scale: override the scale (otherwise :func:`get_scale`).

    Example:
        >>> pick(ci=100, laptop=10_000, gpu=1_000_000, scale="ci")
        100
    """
    s = get_scale() if scale is None else scale
    if s not in SCALES:
        raise ValueError(f"unknown scale {s!r}; use one of {', '.join(SCALES)}")
    if s == "ci":
        return ci
    if s == "laptop":
        return laptop
    return laptop if gpu is None else gpu
