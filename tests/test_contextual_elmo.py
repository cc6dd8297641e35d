"""ELMo's pieces: character ids, the char-CNN's shapes, the highway gate, the biLM's directions
(each sees only its own side), the tied softmax, ScalarMix's gradients, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from companion.contextual.elmo import (
    BOW,
    EOW,
    BiLM,
    BiLMConfig,
    CharCNN,
    ElmoLayers,
    Highway,
    ScalarMix,
    WordVocab,
    char_ids,
    lm_batches,
    reverse_padded,
    word_tokens,
)
from companion.train import TrainConfig, fit

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

SENTS = [["The", "cat", "sat", "."], ["A", "dog", "ran", "home", "."], ["The", "dog", "sat", "."]] * 4


def _tiny(vocab):
    return BiLM(BiLMConfig(vocab_size=len(vocab), d=8, cells=12, char_dim=4, filters=((1, 4), (2, 4), (3, 8)),
                           max_chars=8, dropout=0.0), seed=0)


def test_char_ids_layout():
    ids = char_ids([["ab", "é"], ["a"]], max_chars=6)
    assert ids.shape == (2, 4, 6)
    assert ids[0, 1].tolist() == [BOW, 5 + ord("a"), 5 + ord("b"), EOW, 0, 0]
    assert ids[0, 2, :4].tolist() == [BOW, 5 + 0xC3, 5 + 0xA9, EOW]  # UTF-8 bytes of é
    assert (ids[1, 3] == 0).all()  # the shorter sentence is padded after its </S>
    assert char_ids([["abcdefgh"]], max_chars=5)[0, 1].tolist() == [BOW, *(5 + ord(c) for c in "abc"), EOW]
    assert word_tokens("Don't stop, U.S. mid-year!") == ["Don't", "stop", ",", "U.S", ".", "mid-year", "!"]


def test_char_cnn_shapes():
    cnn = CharCNN(d=10, char_dim=4, filters=((1, 3), (3, 5)), n_highway=1)
    x = char_ids([["a", "bb"], ["ccc"]], max_chars=7)
    assert cnn(x).shape == (2, 4, 10)
    assert cnn(x[0, 1]).shape == (10,) or cnn(x[0, 1:2]).shape == (1, 10)
    with pytest.raises(ValueError, match="at least 3 character slots"):
        cnn(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="long character ids"):
        cnn(x.float())


def test_highway_gate_carries_or_transforms():
    torch.manual_seed(0)
    hw = Highway(4, n_layers=1)
    x = torch.randn(5, 4)
    lin = hw.layers[0]
    assert torch.allclose(lin.bias[4:], torch.ones(4))  # starts leaning towards carrying
    with torch.no_grad():
        lin.bias[4:] = 30.0  # gate open: y = x
    assert torch.allclose(hw(x), x, atol=1e-6)
    with torch.no_grad():
        lin.bias[4:] = -30.0  # gate shut: y = relu(W_h x + b_h)
    assert torch.allclose(hw(x), torch.relu(x @ lin.weight[:4].T + lin.bias[:4]), atol=1e-6)


def test_reverse_padded():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]]).unsqueeze(-1)
    assert reverse_padded(x, torch.tensor([3, 2])).squeeze(-1).tolist() == [[3, 2, 1, 0], [5, 4, 0, 0]]


def test_each_direction_sees_only_its_side():
    vocab = WordVocab.build(SENTS, 20)
    model = _tiny(vocab).eval()
    a = char_ids([["The", "cat", "sat", "on", "mats"]], 8)
    b = char_ids([["The", "cat", "ran", "on", "mats"]], 8)  # token 3 (after <S>) changed
    _, fa, ba = model.directions(a)
    _, fb, bb = model.directions(b)
    for h_a, h_b in zip(fa, fb):  # forward: positions before 3 unchanged, 3 and later changed
        assert torch.allclose(h_a[:, :3], h_b[:, :3]) and not torch.allclose(h_a[:, 3:], h_b[:, 3:])
    for h_a, h_b in zip(ba, bb):  # backward: positions after 3 unchanged
        assert torch.allclose(h_a[:, 4:], h_b[:, 4:]) and not torch.allclose(h_a[:, :4], h_b[:, :4])


def test_layers_shapes_padding_and_tied_softmax():
    vocab = WordVocab.build(SENTS, 20)
    model = _tiny(vocab).eval()
    lay = model.layers(char_ids([["a", "b", "c"], ["d"]], 8))
    assert lay.shape == (3, 2, 3, 16)
    assert (lay[:, 1, 1:] == 0).all()  # beyond the shorter sentence
    assert torch.allclose(lay[0, :, :, :8], lay[0, :, :, 8:])  # layer 0 is [x; x]
    alone = model.layers(char_ids([["d"]], 8))
    assert torch.allclose(alone[:, 0], lay[:, 1, :1], atol=1e-6)  # padding does not leak in
    feats = ElmoLayers(model).tokens([["a", "b", "c"], ["d"]])
    assert feats[0].shape == (3, 3, 16) and feats[1].shape == (3, 1, 16)
    # one softmax matrix, shared by both directions; the LSTMs are separate
    names = [n for n, _ in model.named_parameters()]
    assert sum(n.startswith("softmax.weight") for n in names) == 1
    assert any(n.startswith("fwd.") for n in names) and any(n.startswith("bwd.") for n in names)


def test_untrained_loss_is_near_log_v_and_training_lowers_it():
    vocab = WordVocab.build(SENTS, 20)
    model = _tiny(vocab)
    batches = lm_batches(SENTS, vocab, 4, max_chars=8)
    before = math.log(model.perplexity(batches))
    assert abs(before - math.log(len(vocab))) < 0.5
    fit(model, batches, config=TrainConfig(epochs=8, lr=2e-2, progress=False))
    assert math.log(model.perplexity(batches)) < before - 1.0


def test_scalar_mix_value_and_gradients():
    torch.manual_seed(0)
    mix = ScalarMix(3).double()
    with torch.no_grad():
        mix.s.copy_(torch.tensor([0.5, -1.0, 2.0]))
        mix.gamma.fill_(1.7)
    h = torch.randn(3, 2, 4, dtype=torch.float64)
    a = torch.softmax(mix.s.detach(), 0)
    out = mix(h)
    assert torch.allclose(out, 1.7 * (a[:, None, None] * h).sum(0))
    assert torch.allclose(mix(list(h)), out)
    # analytic: d(sum out)/ds_j = gamma a_j (sum h_j - sum_k a_k sum h_k); d/dgamma = sum (a . h)
    out.sum().backward()
    tot = h.sum((1, 2))
    assert torch.allclose(mix.s.grad, 1.7 * a * (tot - (a * tot).sum()))
    assert torch.allclose(mix.gamma.grad, (a * tot).sum())
    # and numerically, through autograd's own finite differences
    s = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    g = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    hh = h.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda s, g, hh: g * (torch.softmax(s, 0)[:, None, None] * hh).sum(0),
                                    (s, g, hh))
    assert torch.allclose(ScalarMix(4).weights, torch.full((4,), 0.25))


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="list of token lists"):
        char_ids(["The", "cat"])
    with pytest.raises(ValueError, match="no sentences"):
        char_ids([])
    with pytest.raises(ValueError, match="cells"):
        BiLMConfig(vocab_size=10, d=16, cells=16)
    with pytest.raises(ValueError, match="vocab_size"):
        BiLMConfig(vocab_size=0)
    with pytest.raises(ValueError, match="built for 3 layers but got 2"):
        ScalarMix(3)(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="n_layers"):
        ScalarMix(0)
    with pytest.raises(ValueError, match="starts with"):
        WordVocab(["a"])
    with pytest.raises(ValueError, match=r"\[B, T, n_chars\]"):
        _tiny(WordVocab.build(SENTS, 5)).directions(torch.zeros(3, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="layer must be"):
        ElmoLayers(_tiny(WordVocab.build(SENTS, 5))).layer(3)
    assert np.isfinite(ElmoLayers(_tiny(WordVocab.build(SENTS, 5))).sentence_encoder()(["Hi there.", ""])).all()
