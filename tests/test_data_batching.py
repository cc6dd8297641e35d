"""Batching helpers: shapes, contents, dtypes, seeded determinism, bad input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.data import minibatches, ngram_windows, stream_batches


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=40), st.integers(1, 5))
def test_ngram_windows_are_the_sliding_windows(ids, context):
    if len(ids) <= context:
        with pytest.raises(ValueError, match="need more than"):
            ngram_windows(ids, context)
        return
    x, y = ngram_windows(ids, context)
    assert x.dtype == y.dtype == torch.long
    assert x.shape == (len(ids) - context, context) and y.shape == (len(ids) - context,)
    for i in range(len(y)):
        assert x[i].tolist() == ids[i:i + context] and y[i].item() == ids[i + context]


def test_ngram_windows_padding_and_tensor_input():
    x, y = ngram_windows(torch.tensor([7, 8, 9]), 2, pad_id=0)
    assert x.tolist() == [[0, 0], [0, 7], [7, 8]] and y.tolist() == [7, 8, 9]
    assert x.is_contiguous()


@pytest.mark.parametrize("args, exc", [
    (([1, 2, 3], 0), ValueError), (([1.5, 2.0], 1), TypeError), ((torch.zeros(2, 2, dtype=torch.long), 1), ValueError),
    ((torch.tensor([1.0, 2.0, 3.0]), 1), TypeError), (("abc", 1), TypeError),
])
def test_ngram_windows_rejects_bad_input(args, exc):
    with pytest.raises(exc):
        ngram_windows(*args)


def test_minibatches_cover_every_row_once_and_repeat_by_seed():
    x = torch.arange(23).view(23, 1) * 10
    y = torch.arange(23)
    batches = minibatches(x, y, batch_size=5, seed=3)
    assert len(batches) == 5
    got = list(batches)
    assert [b[1].shape[0] for b in got] == [5, 5, 5, 5, 3]
    seen = torch.cat([b[1] for b in got])
    assert sorted(seen.tolist()) == list(range(23)) and seen.tolist() != list(range(23))
    assert all(torch.equal(bx[:, 0], by * 10) for bx, by in got)  # rows stay aligned
    again = [b[1].tolist() for b in minibatches(x, y, batch_size=5, seed=3)]
    assert again == [b[1].tolist() for b in got] == [b[1].tolist() for b in batches]
    other = [b[1].tolist() for b in minibatches(x, y, batch_size=5, seed=4)]
    assert other != again
    torch.manual_seed(123)  # the global RNG does not matter
    assert [b[1].tolist() for b in minibatches(x, y, batch_size=5, seed=3)] == again


def test_minibatches_in_order_and_drop_last():
    y = torch.arange(7)
    assert [b[0].tolist() for b in minibatches(y, batch_size=3, shuffle=False)] == [[0, 1, 2], [3, 4, 5], [6]]
    b = minibatches(y, batch_size=3, shuffle=False, drop_last=True, device="cpu")
    assert len(b) == 2 and [t[0].tolist() for t in b] == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("tensors, kwargs, match", [
    ((torch.arange(3), torch.arange(4)), {"batch_size": 2}, "same length"),
    ((torch.arange(3),), {"batch_size": 0}, "batch_size"),
    (([1, 2, 3],), {"batch_size": 2}, "not a tensor"),
    ((), {"batch_size": 2}, "at least one"),
    ((torch.arange(0),), {"batch_size": 2}, "empty"),
    ((torch.arange(3),), {"batch_size": 2, "seed": -1}, "seed"),
])
def test_minibatches_rejects_bad_input(tensors, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        minibatches(*tensors, **kwargs)


def test_stream_batches_layout():
    ids = list(range(22))  # 3 streams of 7; the 22nd id is trimmed
    batches = stream_batches(ids, batch_size=3, seq_len=4)
    got = list(batches)
    assert len(batches) == len(got) == 2
    x0, y0 = got[0]
    assert x0.dtype == torch.long and x0.shape == (3, 4)
    assert x0.tolist() == [[0, 1, 2, 3], [7, 8, 9, 10], [14, 15, 16, 17]]
    assert torch.equal(y0, x0 + 1)
    x1, y1 = got[1]
    assert x1.tolist() == [[4, 5], [11, 12], [18, 19]] and torch.equal(y1, x1 + 1)
    # every stream continues across batches: concatenating inputs gives all but the last id
    assert torch.cat([x for x, _ in got], dim=1)[0].tolist() == list(range(6))


def test_stream_batches_rejects_bad_input():
    with pytest.raises(ValueError, match="too few"):
        stream_batches([1, 2, 3], batch_size=2, seq_len=2)
    with pytest.raises(ValueError, match="seq_len"):
        stream_batches(list(range(10)), batch_size=2, seq_len=0)


@pytest.mark.gpu
def test_batches_on_cuda():
    x, y = ngram_windows(list(range(10)), 2, device="cuda")
    assert x.device.type == "cuda"
    b = next(iter(minibatches(x, y, batch_size=4, seed=0)))
    assert b[0].device.type == "cuda"
    assert [t.tolist() for t in b] == [t.tolist() for t in next(iter(minibatches(x.cpu(), y.cpu(), batch_size=4, seed=0)))]
    assert next(iter(stream_batches(list(range(10)), 2, 2, device="cuda")))[0].device.type == "cuda"
