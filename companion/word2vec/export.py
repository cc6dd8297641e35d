"""Getting the vectors out: which matrix, and the word2vec text format.

**Which vectors?** The input vectors ``v`` are what word2vec writes out. For negative sampling
(and the full softmax) every word also has an output vector ``u``; Levy, Goldberg & Dagan
(2015) found ``v + u`` sometimes a little better, and the seed mentions averaging the two. With
the hierarchical softmax the output vectors belong to tree *nodes*, not words, so only the input
vectors exist per word.

**The word2vec text format** (``-binary 0`` of the C code): a header line ``"<V> <d>"``, then
one line per word: the word and its ``d`` numbers separated by single spaces. gensim reads it
with ``KeyedVectors.load_word2vec_format(path, binary=False)``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from ..fileio import umask_mode

__all__ = ["combine", "save_word2vec_format", "load_word2vec_format", "COMBINE"]

COMBINE = ("input", "output", "sum", "average")


def combine(model: nn.Module, which: str = "input") -> torch.Tensor:
    """Word vectors from a word2vec model: ``[V, d]`` float32 on the CPU, detached.

    Args:
        model: a :class:`~.skipgram.SkipGram` or :class:`~.cbow.CBOW`.
        which: ``"input"`` (``v``, the default, what word2vec saves), ``"output"`` (``u``),
            ``"sum"`` (``v + u``) or ``"average"`` (``(v + u) / 2``).

    Raises:
        ValueError: for an unknown ``which``, or ``output``/``sum``/``average`` with the
            hierarchical softmax (its output vectors belong to tree nodes, not words).
    """
    if which not in COMBINE:
        raise ValueError(f"which must be one of {COMBINE}, got {which!r}")
    for attr in ("in_vectors", "out_vectors", "output"):
        if not hasattr(model, attr):
            raise TypeError(f"combine needs a word2vec model (SkipGram or CBOW), got {type(model).__name__}")
    v = model.in_vectors.detach()
    if which == "input":
        return v.float().cpu().clone()
    if model.output == "hs":
        raise ValueError(
            "the hierarchical softmax has one output vector per tree node, not per word; "
            "use which='input' (or train with output='neg' or 'full')"
        )
    u = model.out_vectors.detach()
    out = {"output": u, "sum": v + u, "average": (v + u) / 2}[which]
    return out.float().cpu().clone()


def _check_words(words: Sequence[str], n: int) -> None:
    if len(words) != n:
        raise ValueError(f"{len(words)} words for {n} vectors; they must match")
    for w in words:
        if not isinstance(w, str) or not w or any(ch.isspace() for ch in w):
            raise ValueError(f"word {w!r} cannot be written in the word2vec text format (empty or contains whitespace)")


def save_word2vec_format(path: str | os.PathLike, words: Sequence[str], vectors: torch.Tensor, *, precision: int = 6) -> Path:
    """Write ``vectors`` ([V, d]) with their ``words`` in the word2vec text format, atomically.

    Raises:
        ValueError: mismatched sizes, non-finite values, or a word with whitespace.
    """
    vec = torch.as_tensor(vectors).detach().cpu().double()
    if vec.dim() != 2:
        raise ValueError(f"vectors must be [V, d], got shape {tuple(vec.shape)}")
    _check_words(words, vec.shape[0])
    if not bool(torch.isfinite(vec).all()):
        raise ValueError("vectors contain NaN or inf; the model diverged (lower the learning rate)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = f"%.{precision}g"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"{vec.shape[0]} {vec.shape[1]}\n")
            for w, row in zip(words, vec.numpy()):
                f.write(w + " " + " ".join(fmt % x for x in row) + "\n")
        os.chmod(tmp, umask_mode())  # mkstemp made it 0600: give it the mode of any new file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_word2vec_format(path: str | os.PathLike) -> tuple[list[str], torch.Tensor]:
    """Read a word2vec text file: ``(words, vectors [V, d] float32)``.

    Raises:
        FileNotFoundError: no such file. ValueError: a malformed header or line.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no word2vec file at {path}")
    with open(path, encoding="utf-8") as f:
        header = f.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise ValueError(f"{path}: the first line must be '<vocab size> <dim>', got {' '.join(header)!r}")
        V, d = int(header[0]), int(header[1])
        words, rows = [], []
        for i, line in enumerate(f, start=2):
            parts = line.rstrip("\n").split(" ")
            if len(parts) != d + 1:
                raise ValueError(f"{path}:{i}: expected a word and {d} numbers, got {len(parts)} fields")
            words.append(parts[0])
            rows.append([float(x) for x in parts[1:]])
    if len(words) != V:
        raise ValueError(f"{path}: the header promises {V} words but the file has {len(words)}")
    return words, torch.tensor(rows, dtype=torch.float32).reshape(V, d)
