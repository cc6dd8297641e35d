"""Turning id sequences into tensors and mini-batches (torch ``LongTensor``\\ s throughout).

* :func:`ngram_windows` -- (context, next word) pairs for n-gram-style models (Bengio's NNLM);
* :func:`minibatches` -- seeded shuffled mini-batches over aligned tensors;
* :func:`stream_batches` -- the recurrent-LM layout: the text cut into ``batch_size`` parallel
  streams, walked ``seq_len`` steps at a time (hidden states carry over between batches).

The batch iterables have a length (for progress bars) and can be iterated again, giving the
same batches in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch


def _as_ids(ids: Sequence[int] | torch.Tensor, device: torch.device | str | None) -> torch.Tensor:
    """A 1-D LongTensor on ``device`` from a list of ints or a 1-D integer tensor."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1:
            raise ValueError(f"ids must be 1-D, got a tensor of shape {tuple(ids.shape)}; "
                             f"flatten it or concatenate the sentences first")
        if ids.dtype.is_floating_point or ids.dtype == torch.bool or ids.is_complex():
            raise TypeError(f"ids must be integers, got dtype {ids.dtype}")
        t = ids.to(dtype=torch.long)
    else:
        if isinstance(ids, (str, bytes)):
            raise TypeError("ids must be a sequence of ints; encode the tokens with a Vocab first")
        ids = list(ids)
        if ids and not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            bad = next(i for i in ids if not isinstance(i, int) or isinstance(i, bool))
            raise TypeError(f"ids must be ints (encode tokens with Vocab.encode), found {bad!r}")
        t = torch.tensor(ids, dtype=torch.long)
    return t if device is None else t.to(device)


def ngram_windows(ids: Sequence[int] | torch.Tensor, context: int, *, pad_id: int | None = None,
                  device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (``context`` previous ids, next id) pair of a sequence.

    Args:
        ids: the token ids, a list or a 1-D tensor.
        context: how many previous ids each example sees (n - 1 for an n-gram model).
        pad_id: if given, ``context`` copies of it are put in front, so every id becomes a
            target; otherwise the first ``context`` ids are only ever context.
        device: where the tensors are created (default: where ``ids`` is, or the CPU).

    Returns:
        ``(contexts, targets)``: LongTensors of shapes ``[N, context]`` and ``[N]``, where
        ``N = len(ids) - context`` (``len(ids)`` with ``pad_id``); row ``i`` of ``contexts`` is
        ``ids[i : i + context]`` and ``targets[i] == ids[i + context]``.

    Example:
        >>> x, y = ngram_windows([5, 6, 7, 8], context=2)
        >>> x.tolist(), y.tolist()
        ([[5, 6], [6, 7]], [7, 8])
    """
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"context must be an int >= 1, got {context!r}")
    t = _as_ids(ids, device)
    if pad_id is not None:
        if isinstance(pad_id, bool) or not isinstance(pad_id, int):
            raise TypeError(f"pad_id must be an int id, got {pad_id!r}")
        t = torch.cat([torch.full((context,), pad_id, dtype=torch.long, device=t.device), t])
    if t.numel() <= context:
        raise ValueError(f"need more than context={context} ids to make one window, got {t.numel()}"
                         + ("" if pad_id is not None else " (pass pad_id to pad the start)"))
    windows = t.unfold(0, context + 1, 1)  # a view [N, context + 1]; copied below
    return windows[:, :-1].contiguous(), windows[:, -1].contiguous()


def _check_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return value


class MiniBatches:
    """The iterable :func:`minibatches` returns: ``len()`` batches, the same ones each time."""

    def __init__(self, tensors: tuple[torch.Tensor, ...], batch_size: int, shuffle: bool, seed: int,
                 drop_last: bool, device: torch.device | str | None):
        self.tensors, self.batch_size, self.shuffle = tensors, batch_size, shuffle
        self.seed, self.drop_last, self.device = seed, drop_last, device
        self.n = tensors[0].shape[0]

    def __len__(self) -> int:
        full, rest = divmod(self.n, self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        if self.shuffle:
            # A private generator on the CPU: the order depends only on the seed, not on the
            # global RNG state or the device.
            g = torch.Generator().manual_seed(self.seed)
            order = torch.randperm(self.n, generator=g)
        else:
            order = torch.arange(self.n)
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            batch = tuple(t[idx.to(t.device)] for t in self.tensors)
            if self.device is not None:
                batch = tuple(t.to(self.device, non_blocking=True) for t in batch)
            yield batch


def minibatches(*tensors: torch.Tensor, batch_size: int, shuffle: bool = True, seed: int = 0,
                drop_last: bool = False, device: torch.device | str | None = None) -> MiniBatches:
    """Mini-batches over tensors that share their first dimension (e.g. contexts and targets).

    Args:
        tensors: one or more tensors with the same length along dim 0.
        batch_size: rows per batch (the last batch may be smaller unless ``drop_last``).
        shuffle: visit the rows in a random order fixed by ``seed`` (pass the epoch number as
            the seed for a new order each epoch).
        device: move each batch there (default: leave the tensors where they are).

    Returns:
        An iterable of tuples ``(t1[idx], t2[idx], ...)`` with a ``len()``.

    Example:
        >>> x, y = ngram_windows(list(range(10)), context=3)
        >>> [b[1].tolist() for b in minibatches(x, y, batch_size=3, shuffle=False)]
        [[3, 4, 5], [6, 7, 8], [9]]
    """
    if not tensors:
        raise ValueError("minibatches needs at least one tensor")
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"argument {i} is a {type(t).__name__}, not a tensor; "
                            f"use torch.as_tensor first")
        if t.dim() == 0:
            raise ValueError(f"argument {i} is a 0-d tensor; batching needs a first dimension")
    lengths = [t.shape[0] for t in tensors]
    if len(set(lengths)) != 1:
        raise ValueError(f"the tensors must have the same length along dim 0, got {lengths}")
    _check_positive("batch_size", batch_size)
    if lengths[0] == 0:
        raise ValueError("cannot batch empty tensors (length 0 along dim 0)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return MiniBatches(tuple(tensors), batch_size, bool(shuffle), seed, bool(drop_last), device)


class StreamBatches:
    """The iterable :func:`stream_batches` returns."""

    def __init__(self, data: torch.Tensor, seq_len: int):
        self.data, self.seq_len = data, seq_len  # data: [batch_size, L]

    def __len__(self) -> int:
        return -(-(self.data.shape[1] - 1) // self.seq_len)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        L = self.data.shape[1]
        for start in range(0, L - 1, self.seq_len):
            end = min(start + self.seq_len, L - 1)
            yield self.data[:, start:end], self.data[:, start + 1:end + 1]


def stream_batches(ids: Sequence[int] | torch.Tensor, batch_size: int, seq_len: int, *,
                   device: torch.device | str | None = None) -> StreamBatches:
    """Batches for a recurrent language model (truncated back-propagation through time).

    The id sequence is trimmed to a multiple of ``batch_size`` and cut into ``batch_size``
    contiguous streams (row ``b`` holds the ``b``-th slice of the text); batches walk along
    the streams ``seq_len`` steps at a time, so row ``b`` of one batch continues row ``b`` of the
    previous one.

    Args:
        ids: token ids (list or 1-D tensor), e.g. a whole split with ``</s>`` between sentences.
        batch_size: number of parallel streams.
        seq_len: time steps per batch (the last batch may be shorter).
        device: where the tensors are created.

    Returns:
        An iterable of ``(inputs, targets)``, LongTensors ``[batch_size, <= seq_len]``, with
        ``targets`` the inputs shifted one step ahead.

    Example:
        >>> [(x.tolist(), y.tolist()) for x, y in stream_batches(list(range(8)), 2, 2)]
        [([[0, 1], [4, 5]], [[1, 2], [5, 6]]), ([[2], [6]], [[3], [7]])]
    """
    _check_positive("batch_size", batch_size)
    _check_positive("seq_len", seq_len)
    t = _as_ids(ids, device)
    per_stream = t.numel() // batch_size
    if per_stream < 2:
        raise ValueError(f"{t.numel()} ids are too few for {batch_size} streams: each stream needs "
                         f"at least 2 ids (an input and its target); lower batch_size")
    return StreamBatches(t[: per_stream * batch_size].view(batch_size, per_stream), seq_len)
