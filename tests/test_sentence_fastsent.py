"""Chapter 5: FastSent (and +AE) -- the loss by hand, a tiny run learns."""

import math

import pytest
import torch

from companion.sentence._text import OrderedSentences, sentence_vocab
from companion.sentence.fastsent import (
    FastSent,
    FastSentConfig,
    make_batches,
    train_fastsent,
)

pytestmark = pytest.mark.usefixtures("one_thread")

DOCS = [["a b", "c", "b d"]]


@pytest.mark.parametrize("autoencode", [False, True])
def test_loss_by_hand(autoencode):
    corpus = OrderedSentences(DOCS)
    vocab = sentence_vocab(corpus.tokens)
    cfg = FastSentConfig(dim=3, batch_size=3, autoencode=autoencode)
    torch.manual_seed(0)
    model = FastSent(len(vocab), cfg)
    batch = next(iter(make_batches(corpus, vocab, cfg)(0)))
    U, V = model.u.weight.detach(), model.v.weight.detach()
    ids = [[vocab.stoi[w] for w in s.split()] for s in DOCS[0]]
    terms = []
    for i, s in enumerate(ids):
        h = U[s].sum(0)
        logz = math.log(float(torch.exp(V @ h).sum()))
        tgt = [w for j in (i - 1, i + 1) if 0 <= j < 3 for w in ids[j]] + (s if autoencode else [])
        terms += [-(float(V[w] @ h) - logz) for w in tgt]
    assert model.loss(batch).item() == pytest.approx(sum(terms) / len(terms), rel=1e-5)


@pytest.mark.slow
def test_tiny_run_lowers_the_loss_and_encodes():
    from test_sentence_quickthoughts import story_documents

    res = train_fastsent(story_documents(4), FastSentConfig(dim=16, min_count=1, epochs=10, lr=2e-2, batch_size=16))
    h = res.history.epoch_loss
    assert h[-1] < h[0] - 0.3, h
    X = res.encode(["the cat eats fish", "", "zzz"])
    assert X.shape == (3, 16) and torch.equal(X[1], torch.zeros(16))


def test_bad_input():
    with pytest.raises(ValueError, match="dim"):
        FastSentConfig(dim=0).validate()
    with pytest.raises(TypeError, match="list of sentences"):
        train_fastsent(["not a list of sentences"], FastSentConfig(min_count=1))
