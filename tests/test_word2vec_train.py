"""Training word2vec end to end on tiny generated text: it learns, it repeats, engines agree,
the exported vectors load in gensim."""

from __future__ import annotations

import pytest
import torch

from companion.word2vec import (
    Word2VecConfig,
    encode_corpus,
    learning_rate,
    load_word2vec_format,
    save_word2vec_format,
    train_word2vec,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread


def topic_sentences(n_sent=300, length=10, topics=4, per_topic=8, seed=0):
    """Sentences that each talk about one topic: its words, mixed with shared function words."""
    g = torch.Generator().manual_seed(seed)
    function = ["the", "of", "and", "a"]
    out = []
    for _ in range(n_sent):
        t = int(torch.randint(0, topics, (1,), generator=g))
        s = []
        for _ in range(length):
            if float(torch.rand(1, generator=g)) < 0.3:
                s.append(function[int(torch.randint(0, 4, (1,), generator=g))])
            else:
                s.append(f"k{t}w{int(torch.randint(0, per_topic, (1,), generator=g))}")
        out.append(s)
    return out


def topic_separation(vectors: torch.Tensor, itos: list[str]) -> float:
    """Mean cosine of same-topic word pairs minus that of different-topic pairs."""
    rows = [i for i, w in enumerate(itos) if w.startswith("k")]
    topic = torch.tensor([int(itos[i][1]) for i in rows])
    x = torch.nn.functional.normalize(vectors[rows], dim=1)
    cos = x @ x.t()
    same = topic[:, None] == topic[None, :]
    off = ~torch.eye(len(rows), dtype=torch.bool)
    return float(cos[same & off].mean() - cos[~same].mean())


SENTS = topic_sentences()


@pytest.mark.parametrize("arch", ["sg", "cbow"])
@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_every_variant_learns_the_topics(arch, output):
    res = train_word2vec(SENTS, arch=arch, output=output, dim=16, window=3, min_count=1,
                         epochs=3, sample=0, batch_size=32, device="cpu", seed=1)
    sep = topic_separation(res.vectors(), res.vocab.itos)
    assert sep > 0.25, f"{arch}/{output}: same-topic words are not closer ({sep:.3f})"
    assert res.history.items == 3 * len(encode_corpus(SENTS, min_count=1))
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0]


def test_untrained_vectors_do_not_separate_topics():
    """The test above can fail: random vectors have no topic structure."""
    res = train_word2vec(SENTS, dim=16, min_count=1, epochs=1, sample=0, device="cpu", lr=1e-9)
    assert abs(topic_separation(res.vectors(), res.vocab.itos)) < 0.1


def test_training_is_deterministic_on_cpu():
    kw = dict(dim=8, window=3, min_count=1, epochs=2, sample=1e-2, batch_size=32, device="cpu", seed=3)
    a = train_word2vec(SENTS[:100], **kw).vectors()
    b = train_word2vec(SENTS[:100], **kw).vectors()
    assert torch.equal(a, b)
    c = train_word2vec(SENTS[:100], **{**kw, "seed": 4}).vectors()
    assert not torch.equal(a, c)


@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_engines_agree_for_skipgram(output):
    """fit + torch.optim.SGD on sparse gradients computes the hand-written update."""
    kw = dict(arch="sg", output=output, dim=8, window=2, min_count=1, epochs=2, sample=1e-2,
              batch_size=16, device="cpu", seed=2)
    a = train_word2vec(SENTS[:60], engine="sgd", update_cap=None, **kw)
    b = train_word2vec(SENTS[:60], engine="autograd", **kw)
    assert torch.allclose(a.vectors(), b.vectors(), atol=1e-4)
    assert a.history.items == b.history.items
    assert a.history.step_loss == pytest.approx(b.history.step_loss, rel=1e-4)


def test_learning_rate_decays_linearly_to_the_floor():
    c = Word2VecConfig(arch="sg")
    assert learning_rate(c, 0.0) == pytest.approx(0.025)
    assert learning_rate(c, 0.5) == pytest.approx(0.0125)
    assert learning_rate(c, 1.0) == pytest.approx(0.025 * 1e-4)
    assert Word2VecConfig(arch="cbow").start_lr == 0.05


@pytest.mark.parametrize("field, value", [
    ("arch", "skipgram"), ("output", "nce"), ("engine", "adam"), ("dim", 0), ("window", 1.5),
    ("sample", 1.0), ("lr", -1.0), ("epochs", 0), ("min_lr_fraction", 0.0), ("subsample_rule", "x"),
    ("update_cap", 0), ("workers", 0), ("threads", 0), ("block", 0),
])
def test_bad_config_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        train_word2vec(SENTS[:5], min_count=1, **{field: value})


def test_unknown_config_field_rejected():
    with pytest.raises(TypeError):
        train_word2vec(SENTS[:5], vector_size=10)


def test_export_round_trip_and_gensim_loads_it(tmp_path):
    res = train_word2vec(SENTS[:50], dim=6, min_count=1, epochs=1, device="cpu")
    path = res.save(tmp_path / "vec.txt")
    words, vecs = load_word2vec_format(path)
    assert words == res.vocab.itos
    assert torch.allclose(vecs, res.vectors(), rtol=1e-5, atol=1e-7)
    gensim = pytest.importorskip("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path), binary=False)
    assert kv.index_to_key == res.vocab.itos
    assert torch.allclose(torch.tensor(kv["the"]), res.vectors()[res.index["the"]], atol=1e-6)


def test_export_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="whitespace"):
        save_word2vec_format(tmp_path / "a.txt", ["ok", "not ok"], torch.zeros(2, 3))
    with pytest.raises(ValueError, match="2 words for 3"):
        save_word2vec_format(tmp_path / "a.txt", ["a", "b"], torch.zeros(3, 3))
    with pytest.raises(ValueError, match="NaN"):
        save_word2vec_format(tmp_path / "a.txt", ["a"], torch.tensor([[float("nan")]]))
    (tmp_path / "bad.txt").write_text("2 3\na 1 2 3\n")
    with pytest.raises(ValueError, match="promises 2"):
        load_word2vec_format(tmp_path / "bad.txt")
    with pytest.raises(FileNotFoundError):
        load_word2vec_format(tmp_path / "missing.txt")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("arch", ["sg", "cbow"])
@pytest.mark.parametrize("output", ["hs", "neg"])
def test_trains_on_gpu(arch, output):
    # the CPU test's settings: with batches of 256 this tiny corpus gives too few updates for
    # skip-gram with negative sampling to separate the topics in 3 epochs, on any device (measured)
    res = train_word2vec(SENTS, arch=arch, output=output, dim=16, window=3, min_count=1, epochs=3,
                         sample=0, batch_size=32, device="cuda", seed=1)
    assert res.model.in_vectors.device.type == "cuda"
    assert topic_separation(res.vectors(), res.vocab.itos) > 0.25


def test_train_variants_and_table():
    from companion.word2vec import train_variants, variant_table

    corpus = encode_corpus(SENTS[:80], min_count=1)
    seen = []
    res = train_variants(corpus, outputs=("neg",), samples=(1e-2, 0.0), dim=8, epochs=1, device="cpu",
                         progress=seen.append)
    assert list(res) == ["sg/neg/sub", "sg/neg/nosub", "cbow/neg/sub", "cbow/neg/nosub"] == seen
    pairs = [("k0w1", "k0w2", 9.0), ("k0w1", "k1w2", 1.0), ("k1w3", "k1w4", 8.0), ("k2w0", "k3w1", 0.5)]
    table = variant_table(res, similarity={"toy": pairs},
                          reference={"random": (torch.randn(len(corpus.vocab), 8), corpus.vocab.stoi)})
    assert list(table.index) == list(res) + ["random"]
    assert {"s/epoch", "words/s", "toy rho", "toy coverage"} <= set(table.columns)
    assert table.loc["sg/neg/sub", "toy coverage"] == 1.0
    with pytest.raises(ValueError, match="samples"):
        train_variants(corpus, sample=0.0)
    with pytest.raises(TypeError, match="EncodedCorpus"):
        train_variants(SENTS)
