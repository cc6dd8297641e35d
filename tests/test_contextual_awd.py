"""Chapter 6: the masks of AWD-LSTM's dropouts (rates, whole rows, one mask across time)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from companion.contextual.awd import (
    DroppedEmbedding,
    LockedDropout,
    WeightDropLSTM,
    bernoulli_mask,
    embedding_dropout,
)


def test_bernoulli_mask_rate_and_scale():
    g = torch.Generator().manual_seed(0)
    m = bernoulli_mask((200_000,), 0.3, like=torch.zeros(1), generator=g)
    assert m.unique().tolist() == [0.0, pytest.approx(1 / 0.7)]
    assert (m == 0).float().mean().item() == pytest.approx(0.3, abs=0.005)
    assert m.mean().item() == pytest.approx(1.0, abs=0.01)  # expectation kept


def test_embedding_dropout_zeroes_whole_rows_at_the_rate():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(20_000, 8) + 5.0  # no entry is zero by chance
    d = embedding_dropout(w, 0.25, generator=g)
    zero_rows = (d == 0).all(dim=1)
    partly = (d == 0).any(dim=1) & ~zero_rows
    assert not partly.any()  # a word is dropped whole or not at all
    assert zero_rows.float().mean().item() == pytest.approx(0.25, abs=0.01)
    torch.testing.assert_close(d[~zero_rows], w[~zero_rows] / 0.75)


def test_dropped_embedding_drops_every_occurrence_of_a_word_and_not_in_eval():
    torch.manual_seed(0)
    emb = DroppedEmbedding(50, 4, p=0.5)
    ids = torch.arange(50).repeat(3)[None, :]  # each word three times
    out = emb(ids)[0].view(3, 50, 4)
    dropped = (out == 0).all(dim=-1)  # [3, 50]
    assert dropped.any() and (dropped[0] == dropped[1]).all() and (dropped[0] == dropped[2]).all()
    emb.eval()
    torch.testing.assert_close(emb(ids), emb.weight[ids])


def test_locked_dropout_same_mask_at_every_step():
    ld = LockedDropout(0.4)
    ld.generator = torch.Generator().manual_seed(2)
    x = torch.ones(64, 30, 16)
    y = ld(x)
    assert (y == y[:, :1, :]).all()  # identical across time
    assert (y[:, 0] == 0).float().mean().item() == pytest.approx(0.4, abs=0.03)
    assert not (y[0, 0] == y[1, 0]).all()  # but different across sequences
    ld.eval()
    assert ld(x) is x


def test_weight_drop_masks_w_hh_once_per_forward_and_matches_nn_lstm():
    torch.manual_seed(0)
    wd = WeightDropLSTM(3, 5, p=0.5)
    x = torch.randn(2, 7, 3)
    y, _ = wd(x)
    w = wd.last_weight
    raw = wd.lstm.weight_hh_l0.detach()
    zero = w == 0
    assert 0.35 < zero.float().mean().item() < 0.65
    torch.testing.assert_close(w[~zero], raw[~zero] / 0.5)
    ref = nn.LSTM(3, 5, batch_first=True)
    ref.load_state_dict(wd.lstm.state_dict())
    with torch.no_grad():
        ref.weight_hh_l0.copy_(w)  # one masked matrix explains every time step's output
    torch.testing.assert_close(ref(x)[0], y)
    y.sum().backward()
    g = wd.lstm.weight_hh_l0.grad
    assert (g[zero] == 0).all() and (g[~zero] != 0).any()  # dropped weights get no gradient
    assert wd.lstm.weight_ih_l0.grad is not None
    wd.eval()
    torch.testing.assert_close(wd(x)[0], nn.LSTM.forward(wd.lstm, x)[0])


def test_masks_repeat_with_a_seeded_generator_and_bad_rates_are_refused():
    a = embedding_dropout(torch.ones(10, 2), 0.5, generator=torch.Generator().manual_seed(3))
    b = embedding_dropout(torch.ones(10, 2), 0.5, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(a, b)
    for bad in (1.0, -0.1, "0.5"):
        with pytest.raises(ValueError, match="dropout rate"):
            LockedDropout(bad)
    with pytest.raises(ValueError, match="embedding matrix"):
        embedding_dropout(torch.ones(3), 0.1)
    with pytest.raises(ValueError, match=r"\[batch, time, features\]"):
        LockedDropout(0.1)(torch.ones(3, 4))
