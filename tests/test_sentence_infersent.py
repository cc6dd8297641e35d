"""Chapter 5: InferSent -- pooling, pair features, a tiny NLI run learns."""

import random

import pytest
import torch

from companion.sentence.infersent import (
    POOLINGS,
    BiLSTMEncoder,
    InferSentConfig,
    masked_pool,
    nli_features,
    train_infersent,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_masked_pool_ignores_padding():
    h = torch.tensor([[[-3.0, 1.0], [-1.0, 5.0], [0.0, 0.0]], [[-2.0, -4.0], [0.0, 0.0], [0.0, 0.0]]])
    lengths = torch.tensor([2, 1])
    assert torch.equal(masked_pool(h, lengths, "max"), torch.tensor([[-1.0, 5.0], [-2.0, -4.0]]))
    assert torch.equal(masked_pool(h, lengths, "mean"), torch.tensor([[-2.0, 3.0], [-2.0, -4.0]]))


def test_nli_features_layout():
    u, v = torch.tensor([[1.0, -2.0]]), torch.tensor([[3.0, 4.0]])
    assert nli_features(u, v).tolist() == [[1.0, -2.0, 3.0, 4.0, 2.0, 6.0, 3.0, -8.0]]


@pytest.mark.parametrize("pooling", POOLINGS)
def test_encoders_shapes_and_padding_invariance(pooling):
    torch.manual_seed(0)
    enc = BiLSTMEncoder(20, InferSentConfig(emb_dim=4, hidden=3, pooling=pooling))
    ids = torch.tensor([[5, 6, 7, 1, 1], [8, 9, 1, 1, 1]])
    out = enc(ids, torch.tensor([3, 2]))
    assert out.shape == (2, enc.dim) and enc.dim == (3 if pooling == "last" else 6)
    alone = enc(ids[1:, :2], torch.tensor([2]))  # the same sentence without padding
    assert torch.allclose(out[1], alone[0], atol=1e-6)


def synthetic_nli(n=160, seed=0):
    """Label 0 if the hypothesis repeats the premise's animal, 2 if it names another one, 1 if none."""
    rng = random.Random(seed)
    animals = ["cat", "dog", "bird", "fish"]
    out = []
    for _ in range(n):
        a = rng.choice(animals)
        y = rng.randrange(3)
        b = a if y == 0 else rng.choice([x for x in animals if x != a]) if y == 2 else "thing"
        out.append((f"the {a} sleeps here", f"a {b} is here", y))
    return out


@pytest.mark.slow
def test_tiny_nli_run_learns():
    data = synthetic_nli()
    res = train_infersent(data, InferSentConfig(emb_dim=8, hidden=8, mlp=16, epochs=8, lr=1e-2, batch_size=16))
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0] - 0.3
    assert res.accuracy(synthetic_nli(60, seed=1)) >= 0.7
    assert res.encode(["the cat sleeps", ""]).shape == (2, 16)


def test_bad_input():
    with pytest.raises(ValueError, match="pooling"):
        InferSentConfig(pooling="min").validate()
    with pytest.raises(TypeError, match="sentence pair"):
        train_infersent([("only one", None, 0)])
    with pytest.raises(ValueError, match="n_classes"):
        train_infersent([("a", "b", 5)], InferSentConfig(epochs=1))
