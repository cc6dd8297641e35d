"""Chapter 5: Quick-thoughts -- the loss by hand, shapes, a tiny run learns."""

import math
import random

import pytest
import torch

from companion.sentence._text import OrderedSentences, pad_batch
from companion.sentence.quickthoughts import (
    QuickThoughts,
    QuickThoughtsConfig,
    context_targets,
    train_quickthoughts,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def story_documents(n_docs=6, seed=0):
    """Documents whose sentences follow a fixed cycle, so a sentence predicts its neighbours."""
    rng = random.Random(seed)
    cycle = ["the cat wakes up", "the cat eats fish", "the cat sleeps on the mat",
             "the dog barks at the door", "the dog runs in the park", "the dog sleeps too"]
    docs = []
    for _ in range(n_docs):
        start = rng.randrange(len(cycle))
        docs.append([cycle[(start + k) % len(cycle)] for k in range(24)])
    return docs


def test_context_targets():
    T = context_targets(torch.tensor([0, 0, 0, 1]), context=1)
    expected = torch.tensor([[0, 1, 0, 0], [0.5, 0, 0.5, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
    assert torch.equal(T, expected)


def test_loss_equals_hand_computed_cross_entropy():
    torch.manual_seed(0)
    cfg = QuickThoughtsConfig(emb_dim=4, hidden=3, batch_size=3)
    model = QuickThoughts(10, cfg)
    ids, lengths = pad_batch([[4, 5, 6], [7, 8], [9]], pad_id=1)
    batch = {"ids": ids, "lengths": lengths, "doc": torch.tensor([0, 0, 0])}
    u = model.f(ids, lengths).tolist()
    v = model.g(ids, lengths).tolist()

    def logp(i, j):  # log softmax over the candidates j' != i
        s = {k: sum(a * b for a, b in zip(u[i], v[k])) for k in range(3) if k != i}
        return s[j] - math.log(sum(math.exp(x) for x in s.values()))

    # sentence 0's context is 1; sentence 1's are 0 and 2 (half each); sentence 2's is 1
    hand = -(logp(0, 1) + 0.5 * (logp(1, 0) + logp(1, 2)) + logp(2, 1)) / 3
    assert model.loss(batch).item() == pytest.approx(hand, rel=1e-5)


@pytest.mark.slow
def test_tiny_run_lowers_the_loss_and_encodes():
    docs = story_documents(4)
    cfg = QuickThoughtsConfig(emb_dim=16, hidden=16, batch_size=12, min_count=1, epochs=5, lr=5e-3)
    res = train_quickthoughts(docs, cfg)
    h = res.history.epoch_loss
    assert h[-1] < h[0] - 0.3, h
    X = res.encode(["the cat eats fish", "an unseen sentence entirely", ""])
    assert X.shape == (3, 32) and torch.isfinite(X).all()
    one = QuickThoughtsConfig(emb_dim=8, hidden=8, batch_size=12, min_count=1)
    a, b = train_quickthoughts(docs[:2], one), train_quickthoughts(docs[:2], one)
    assert torch.equal(a.encode(["the cat eats fish"]), b.encode(["the cat eats fish"])), "seeded"


def test_bad_input():
    with pytest.raises(ValueError, match="batch_size"):
        QuickThoughtsConfig(batch_size=2).validate()
    with pytest.raises(TypeError, match="list of sentences"):
        OrderedSentences(["one document as a string"])
    with pytest.raises(ValueError, match="two sentences"):
        OrderedSentences([["only one"]])
    res = train_quickthoughts(story_documents(2), QuickThoughtsConfig(emb_dim=4, hidden=4, batch_size=8, min_count=1))
    with pytest.raises(TypeError, match="list of sentences"):
        res.encode("a string")
