"""Choosing where tensors live: CUDA, then Apple's MPS, then the CPU.

Every model and training function in the package takes a ``device`` argument; pass
``None`` to get :func:`get_device`'s choice. Set ``BOOK_DEVICE=cpu`` (or ``cuda``,
``cuda:1``, ``mps``) to override the automatic choice.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "BOOK_DEVICE"


def get_device(override: str | torch.device | None = None) -> torch.device:
    """Return the device to compute on.

    Order: the ``override`` argument, then ``$BOOK_DEVICE``, then cuda > mps > cpu.

    Raises:
        ValueError: if the requested device is malformed or not available on this machine.
    """
    req = override if override is not None else os.environ.get(ENV_VAR) or None
    if req is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(req)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            f"device {req!r} is not a valid torch device; use 'cpu', 'cuda', 'cuda:0' or 'mps'"
        ) from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {req!r} was requested but CUDA is not available here; use 'cpu'")
    if dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError(f"device {req!r} was requested but MPS is not available here; use 'cpu'")
    return dev


def describe(device: torch.device | None = None) -> str:
    """A one-line description of the device, for notebooks that report timings."""
    dev = get_device() if device is None else device
    if dev.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(dev)})"
    if dev.type == "cpu":
        return f"cpu ({torch.get_num_threads()} threads)"
    return dev.type
