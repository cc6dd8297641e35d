"""Argument checks shared by the public entry points of Part II (tokenizers, Transformer models
and their configs, generation, sentence encoders, the Hugging Face import/export).

Each check raises a ``ValueError`` (a wrong value) or a ``TypeError`` (a wrong kind of object)
whose message names the argument, what it got and what it expects. The tensor checks cost one
reduction and one host sync per call (a ``min``/``max`` of the ids), so models run them once per
forward, never inside a loop over positions.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["check_finite", "check_ids", "check_int", "check_like", "check_optional_size", "check_rate", "check_texts",
           "check_token_lists", "id_list"]


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum`` (a numpy int is one; a bool or a float is not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return int(value)


def check_optional_size(value: Any, name: str, default: str) -> None:
    """``None`` (meaning ``default``, described in words) or a positive int; 0 is not a size."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int, or None for the default ({default}), got {value!r}")


def check_rate(value: Any, name: str) -> None:
    """A probability in ``[0, 1]`` (dropout rates; NaN is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")


def check_ids(ids: Any, name: str, vocab_size: int, what: str = "the vocabulary size", dim: int | None = 2) -> None:
    """``ids`` is an integer tensor of ``dim`` dimensions (``None``: any) whose values lie in
    ``[0, vocab_size)``.

    One ``aminmax`` and one host sync: cheap enough for every forward pass."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(ids).__name__}")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer ids (torch.long), got dtype {ids.dtype}")
    if dim is not None and ids.dim() != dim:
        shape = "[batch, length]" if dim == 2 else f"{dim}-D"
        hint = "; add a batch dimension with ids[None]" if dim == 2 and ids.dim() == 1 else ""
        raise ValueError(f"{name} must be a {shape} tensor, got shape {tuple(ids.shape)}{hint}")
    if ids.numel() == 0:
        return
    lo, hi = torch.aminmax(ids)
    if bool((lo < 0) | (hi >= vocab_size)):
        bad = int(lo) if int(lo) < 0 else int(hi)
        raise ValueError(f"{name} holds {bad}, outside [0, {vocab_size}) ({what} is {vocab_size})")


def check_like(t: Any, name: str, ids: torch.Tensor, ids_name: str = "ids") -> None:
    """``t`` is ``None`` or a tensor of exactly ``ids``' shape (segments, attention masks)."""
    if t is None:
        return
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor shaped like {ids_name}, got {type(t).__name__}")
    if t.shape != ids.shape:
        raise ValueError(f"{name} must have the shape of {ids_name}, {tuple(ids.shape)}, got {tuple(t.shape)}")


def check_texts(texts: Any, name: str = "sentences") -> None:
    """A list (or tuple) of strings; one string is refused (it would be read as its characters)."""
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of sentences (a list of strings), not one string ({texts[:40]!r}); "
                        "wrap it: [text]")
    if not isinstance(texts, Sequence):
        raise TypeError(f"{name} must be a list of sentences (a list of strings), got {type(texts).__name__}")
    for i, s in enumerate(texts):
        if not isinstance(s, str):
            raise TypeError(f"{name}[{i}] is not a str: got {type(s).__name__} {s!r:.60}")


def check_token_lists(sentences: Any, name: str = "sentences") -> None:
    """A list of sentences, each a list (or tuple) of token strings. A sentence given as one string
    is refused: iterating it would give its characters as tokens."""
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise TypeError(f"{name} must be a list of tokenised sentences (lists of str), got {type(sentences).__name__}")
    for i, s in enumerate(sentences):
        if isinstance(s, str) or not isinstance(s, Sequence):
            raise TypeError(f"{name}[{i}] must be a list of token strings, got {type(s).__name__} {s!r:.60}; "
                            "split the text into tokens first")
        for j, w in enumerate(s):
            if not isinstance(w, str):
                raise TypeError(f"{name}[{i}][{j}] must be a token string, got {type(w).__name__} {w!r:.40}")


def id_list(ids: Any, name: str = "ids") -> list[int]:
    """Token ids to decode as a list of ints: an iterable of ints (numpy ints too) or a 0-/1-D
    integer tensor. A string, a float (``1.7`` would silently decode id 1) or a 2-D tensor (a
    batch: decode each row) raise ``TypeError``/``ValueError``."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{name} must be a list of int token ids, got {type(ids).__name__} {ids[:40]!r}")
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise TypeError(f"{name} must hold integer token ids, got a tensor of dtype {ids.dtype}")
        if ids.dim() > 1:
            raise ValueError(f"{name} must be one sequence of ids, got shape {tuple(ids.shape)}; decode each row")
        return ids.reshape(-1).tolist()
    out = []
    for k, i in enumerate(ids):
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise TypeError(f"{name}[{k}] must be an int token id, got {type(i).__name__} {i!r:.40}")
        out.append(int(i))
    return out


def check_finite(value: Any, name: str, minimum: float = 0.0) -> None:
    """A finite real number ``>= minimum`` (temperatures)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be a finite number >= {minimum:g}, got {value!r}")
