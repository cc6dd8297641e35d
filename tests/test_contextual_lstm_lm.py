"""Chapter 6: our LSTM cell against torch.nn.LSTM, the LSTM LM, TBPTT and stream scoring."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from companion.contextual.lstm_lm import (
    LSTMLM,
    LMPlan,
    LSTMCell,
    LSTMLMConfig,
    ManualLSTM,
    plan_lr,
    sentence_stream,
    stream_log_probs,
    train_lstm_lm,
)
from companion.data import Vocab


@pytest.mark.parametrize("layers", [1, 2])
def test_manual_lstm_equals_torch_outputs_and_gradients(layers):
    torch.manual_seed(0)
    ref = nn.LSTM(5, 7, layers, batch_first=True).double()
    ours = ManualLSTM(5, 7, layers).double().copy_from(ref)
    x = torch.randn(3, 6, 5, dtype=torch.float64)
    h0 = torch.randn(layers, 3, 7, dtype=torch.float64)
    c0 = torch.randn(layers, 3, 7, dtype=torch.float64)
    out_r, (h_r, c_r) = ref(x, (h0, c0))
    out_o, (h_o, c_o) = ours(x, (h0, c0))
    torch.testing.assert_close(out_o, out_r)
    torch.testing.assert_close(h_o, h_r)
    torch.testing.assert_close(c_o, c_r)
    w = torch.randn_like(out_r)
    (out_r * w).sum().backward()
    (out_o * w).sum().backward()
    for k, cell in enumerate(ours.cells):
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            torch.testing.assert_close(getattr(cell, name).grad, getattr(ref, f"{name}_l{k}").grad)


def test_cell_gates_by_hand():
    # one unit, one input: every gate's pre-activation is a single number we can write down
    cell = LSTMCell(1, 1)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.tensor([[1.0], [2.0], [3.0], [4.0]]))
        cell.weight_hh.zero_()
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
    h, c = cell(torch.tensor([[0.5]]), (torch.zeros(1, 1), torch.tensor([[2.0]])))
    i, f, g, o = torch.sigmoid(torch.tensor(0.5)), torch.sigmoid(torch.tensor(1.0)), \
        torch.tanh(torch.tensor(1.5)), torch.sigmoid(torch.tensor(2.0))
    assert c.item() == pytest.approx((f * 2.0 + i * g).item())
    assert h.item() == pytest.approx((o * torch.tanh(f * 2.0 + i * g)).item())


def test_lm_with_our_cell_equals_lm_with_torch_cell():
    cfg = LSTMLMConfig(vocab_size=30, emb_dim=8, hidden=12, n_layers=2, dropout=0.0)
    fast = LSTMLM(cfg, seed=1)
    slow = LSTMLM(LSTMLMConfig(**{**cfg.__dict__, "cell": "ours"}), seed=2)
    slow.load_state_dict({k: v for k, v in fast.state_dict().items() if not k.startswith("rnn.")},
                         strict=False)
    slow.rnn.copy_from(fast.rnn)
    x = torch.randint(0, 30, (2, 9))
    y = torch.randint(0, 30, (2, 9))
    assert fast.loss((x, y)).item() == pytest.approx(slow.loss((x, y)).item(), rel=1e-5)


def test_stream_log_probs_scores_every_token_once_and_matches_one_pass():
    cfg = LSTMLMConfig(vocab_size=20, emb_dim=6, hidden=10, dropout=0.0)
    m = LSTMLM(cfg, seed=0)
    ids = torch.randint(0, 20, (37,))
    one = stream_log_probs(m, ids, n_streams=1, seq_len=5)  # carried state: one long pass
    assert one.shape == (36,) and one.dtype == torch.float64
    h, _ = m.features(ids[None, :-1])
    direct = m.out.log_prob(h[0], ids[1:]).double()
    torch.testing.assert_close(one, direct.detach(), rtol=1e-5, atol=1e-5)
    many = stream_log_probs(m, ids, n_streams=4, seq_len=3)
    assert many.shape == (36,)
    torch.testing.assert_close(many[:9], one[:9], rtol=1e-5, atol=1e-5)  # the first of 4 streams (36 / 4)


def test_sentence_stream_targets_match_chapter2_examples():
    from companion.neural_lm import lm_examples

    sents = [["the", "cat"], ["a", "dog", "ran"]]
    v = Vocab(sents, specials=("</s>",))
    ids = sentence_stream(sents, v)
    _, targets = lm_examples(sents, v, 3)
    assert ids[1:] == targets.tolist()


def test_training_lowers_perplexity_hsoftmax_and_tied():
    torch.manual_seed(0)
    pattern = [2, 3, 4, 5, 6, 1] * 200  # a deterministic cycle: an LSTM learns it quickly
    counts = [1] + [200] * 6
    for cfg in (LSTMLMConfig(vocab_size=7, emb_dim=8, hidden=16, output="hsoftmax", dropout=0.0),
                LSTMLMConfig(vocab_size=7, emb_dim=8, hidden=16, tie_weights=True, dropout=0.0)):
        m = LSTMLM(cfg, counts=counts, seed=0)
        before = math.exp(-stream_log_probs(m, pattern[:200]).mean().item())
        hist = train_lstm_lm(m, pattern, pattern[:200],
                             LMPlan(batch_size=4, seq_len=10, lr=2e-2, clip=1.0, epochs=5,
                                    eval_tokens=199),
                             progress=False)
        assert hist.best["val_ppl"] < 1.5 < before


def test_plan_lr_linear_decay_and_zaremba_halving():
    plan = LMPlan(lr=1e-2, lr_final=1e-3)
    assert plan_lr(plan, 0, 11, 100) == pytest.approx(1e-2)
    assert plan_lr(plan, 5, 11, 100) == pytest.approx(5.5e-3)
    assert plan_lr(plan, 10, 11, 100) == pytest.approx(1e-3)
    assert plan_lr(LMPlan(lr=3e-3), 7, 11, 100) == 3e-3  # no decay set: constant
    # Zaremba et al.'s small model: lr 1 for four epochs, then halved at every epoch's start
    z = LMPlan(lr=1.0, optimizer="sgd", halve_after=4, epochs=13)
    per = 10
    got = [plan_lr(z, e * per, 13 * per, per) for e in range(7)]
    assert got == [1.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.125]
    assert plan_lr(z, 5 * per - 1, 13 * per, per) == 0.5  # the last step of epoch 5
    with pytest.raises(ValueError, match="per_epoch"):
        plan_lr(z, 0, 10, 0)


def test_sgd_plan_trains():
    pattern = [2, 3, 4, 5, 6, 1] * 100
    m = LSTMLM(LSTMLMConfig(vocab_size=7, emb_dim=8, hidden=16, output="hsoftmax", dropout=0.0),
               counts=[1] + [100] * 6, seed=0)
    before = math.exp(-stream_log_probs(m, pattern[:100]).mean().item())
    plan = LMPlan(batch_size=4, seq_len=10, lr=3.0, optimizer="sgd", clip=5.0, epochs=3,
                  halve_after=2, eval_tokens=99)
    hist = train_lstm_lm(m, pattern, pattern[:100], plan, progress=False)
    assert hist.best["val_ppl"] < 1.5 < before


def test_bad_inputs():
    with pytest.raises(ValueError, match="cell"):
        LSTMLMConfig(vocab_size=10, cell="gru").validate()
    with pytest.raises(ValueError, match="tie_weights"):
        LSTMLMConfig(vocab_size=10, output="hsoftmax", tie_weights=True).validate()
    with pytest.raises(ValueError, match="dropout"):
        LSTMLMConfig(vocab_size=10, dropout=1.0).validate()
    m = LSTMLM(LSTMLMConfig(vocab_size=10, emb_dim=4, hidden=4))
    with pytest.raises(ValueError, match=r"\[0, 10\)"):
        m.features(torch.tensor([[3, 10]]))
    with pytest.raises(ValueError, match="LongTensor"):
        m.features(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="at least 2"):
        stream_log_probs(m, [1])
    with pytest.raises(ValueError, match="same"):
        ManualLSTM(4, 5).copy_from(nn.LSTM(4, 6))
    with pytest.raises(ValueError, match="</s>"):
        sentence_stream([["a"]], Vocab([["a"]]))
