"""Chapter 5: Skip-thoughts -- padding-free loss, a tiny run learns, vocabulary expansion."""

import pytest
import torch

from companion.sentence._text import OrderedSentences, oov_share, sentence_vocab
from companion.sentence.skipthoughts import (
    SkipThoughts,
    SkipThoughtsConfig,
    fit_linear_map,
    heldout_map_quality,
    make_triples,
    train_skipthoughts,
)

pytestmark = pytest.mark.usefixtures("one_thread")

from test_sentence_quickthoughts import story_documents


def test_batched_loss_equals_one_triple_at_a_time():
    docs = story_documents(2)
    corpus = OrderedSentences(docs)
    vocab = sentence_vocab(corpus.tokens)
    cfg = SkipThoughtsConfig(emb_dim=6, hidden=5, batch_size=5)
    torch.manual_seed(0)
    model = SkipThoughts(len(vocab), cfg, vocab.stoi["<pad>"])
    batch = next(iter(make_triples(corpus, vocab, 5, 30, seed=0)(0)))
    total, tokens = 0.0, 0
    for i in range(5):  # each triple alone, without any padding
        L = int(batch["lengths"][i])
        one = {"ids": batch["ids"][i:i + 1, :L], "lengths": batch["lengths"][i:i + 1]}
        for k in ("prev", "next"):
            n = int((batch[f"{k}_out"][i] != 1).sum())
            one[f"{k}_in"], one[f"{k}_out"] = batch[f"{k}_in"][i:i + 1, :n], batch[f"{k}_out"][i:i + 1, :n]
            tokens += n
        ntok = (one["prev_out"] != 1).sum() + (one["next_out"] != 1).sum()
        total += float(model.loss(one).detach()) * int(ntok)
    assert float(model.loss(batch).detach()) == pytest.approx(total / tokens, rel=1e-5)


@pytest.mark.slow
def test_tiny_run_lowers_the_loss_and_encodes():
    cfg = SkipThoughtsConfig(emb_dim=16, hidden=16, batch_size=16, min_count=1, epochs=4, lr=1e-2)
    res = train_skipthoughts(story_documents(3), cfg)
    h = res.history.epoch_loss
    assert h[-1] < h[0] - 0.5, h
    X = res.encode(["the cat eats fish", "words never seen", ""])
    assert X.shape == (3, 16) and torch.isfinite(X).all()


def test_fit_linear_map_recovers_an_exact_relation():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(40, 5, generator=g)
    W = torch.randn(5, 3, generator=g)
    assert torch.allclose(fit_linear_map(X, X @ W), W, atol=1e-5)
    with pytest.raises(ValueError, match="shared words"):
        fit_linear_map(X[:3], (X @ W)[:3])
    with pytest.raises(ValueError, match="same n"):
        fit_linear_map(X, W)


def test_vocabulary_expansion_gives_unseen_words_the_mapped_embedding():
    docs = story_documents(2)
    res = train_skipthoughts(docs, SkipThoughtsConfig(emb_dim=4, hidden=4, batch_size=8, min_count=1))
    g = torch.Generator().manual_seed(1)
    known = [w for w in res.vocab.itos[4:]]
    words = known + ["kitten", "puppy"]
    X = torch.randn(len(words), 6, generator=g)
    W_true = torch.randn(6, 4, generator=g)
    with torch.no_grad():  # make the encoder's embeddings an exact linear image of the w2v space
        for i, w in enumerate(known):
            res.model.embedding.weight[res.vocab.stoi[w]] = X[i] @ W_true
    big, W = res.expand_vocabulary(X, words)
    assert torch.allclose(W, W_true, atol=1e-4)
    kitten = big.model.embedding.weight[big.vocab.stoi["kitten"]]
    assert torch.allclose(kitten, X[-2] @ W_true, atol=1e-4)
    assert "kitten" not in res.vocab.stoi  # the original is untouched
    a = big.encode(["the kitten eats fish"])
    b = res.encode(["the kitten eats fish"])  # kitten is <unk> there
    assert not torch.allclose(a, b)
    assert torch.allclose(big.encode(["the cat eats fish"]), res.encode(["the cat eats fish"]), atol=1e-6)
    with pytest.raises(ValueError, match="one word per row"):
        res.expand_vocabulary(X, words[:-1])


def test_heldout_map_quality_tells_a_linear_relation_from_noise():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 8, generator=g)
    Y = X @ torch.randn(8, 6, generator=g)
    exact = heldout_map_quality(X.numpy(), Y, holdout=0.25, k=5)  # NumPy rows too
    assert exact["cosine"] > 0.999 and exact["top_k"] == 1.0
    assert exact["n_test"] == 50 and exact["n_fit"] == 150 and exact["chance"] < 0.5
    noise = heldout_map_quality(X, torch.randn(200, 6, generator=g), holdout=0.25, k=5)
    assert noise["cosine"] < 0.3 and noise["top_k"] < 0.3
    with pytest.raises(ValueError, match="share between 0 and 1"):
        heldout_map_quality(X, Y, holdout=1.5)


def test_oov_share_counts_unknown_tokens():
    vocab = sentence_vocab([["the", "cat"]])
    assert oov_share(vocab, ["the cat", "the dog"]) == 0.25
    assert oov_share(vocab, ["The CAT"]) == 0.0  # the book's tokenizer lower-cases
    with pytest.raises(TypeError, match="not one string"):
        oov_share(vocab, "the cat")
    with pytest.raises(ValueError, match="no tokens"):
        oov_share(vocab, ["", "?"])
