"""Chapter 5: Doc2Vec (PV-DBOW, PV-DM mean/concat), its hand-written SGD and inference."""

import copy
import random

import pytest
import torch

from companion.sentence.doc2vec import (
    MODES,
    Doc2VecConfig,
    Doc2VecModel,
    epoch_examples,
    train_doc2vec,
)
from companion.word2vec.pairs import keep_probability

pytestmark = pytest.mark.usefixtures("one_thread")

SPORT = ["ball", "game", "team", "score", "win", "player", "coach", "season", "goal", "match"]
MONEY = ["stock", "market", "price", "bank", "trade", "money", "profit", "share", "fund", "rate"]
COMMON = ["the", "a", "of", "and", "to", "in", "is", "it"]


def two_topics(n_docs=120, length=20, seed=0):
    """A toy two-topic corpus: half topic words, half function words."""
    rng = random.Random(seed)
    docs, labels = [], []
    for i in range(n_docs):
        pool = SPORT if i % 2 == 0 else MONEY
        docs.append([rng.choice(pool) if rng.random() < 0.5 else rng.choice(COMMON) for _ in range(length)])
        labels.append(i % 2)
    return docs, labels


TOY = {"dim": 16, "window": 2, "min_count": 1, "sample": 0, "lr": 0.05, "batch_size": 256}


def probe_accuracy(X, labels, n_train=80):
    from sklearn.linear_model import LogisticRegression

    X = torch.as_tensor(X).numpy()
    clf = LogisticRegression(max_iter=1000).fit(X[:n_train], labels[:n_train])
    return clf.score(X[n_train:], labels[n_train:])


def tiny_batch(mode, dbow_words=False, seed=0, output="neg"):
    docs, _ = two_topics(6, 8, seed)
    cfg = Doc2VecConfig(mode=mode, dbow_words=dbow_words, output=output, **TOY)
    from companion.word2vec.corpus import build_vocab, encode_corpus

    vocab = build_vocab(docs, min_count=1)
    enc = encode_corpus(docs, vocab)
    model = Doc2VecModel(len(docs), vocab.counts, cfg)
    with torch.no_grad():  # non-zero output vectors so every gradient is non-trivial
        model.head.weight.normal_(0, 0.3, generator=torch.Generator().manual_seed(seed))
    ex = epoch_examples(enc.ids, enc.sentence, keep_probability(vocab.counts, 0), cfg,
                        torch.Generator().manual_seed(seed), null_id=model.vocab_size)
    return model, {k: v[:40] for k, v in ex.items()}


@pytest.mark.parametrize("mode,dbow_words", [("dbow", False), ("dbow", True), ("dm_concat", False), ("dm_mean", False)])
def test_sgd_step_matches_autograd(mode, dbow_words):
    model, batch = tiny_batch(mode, dbow_words)
    slots = model.head.slots(batch["targets"])
    ref = copy.deepcopy(model)
    ref.loss(batch, slots).backward()
    lr = 0.1
    model.sgd_step(batch, lr, slots=slots, cap=None)
    dU = model.head.weight.detach() - ref.head.weight.detach()
    assert torch.allclose(dU, -lr * ref.head.weight.grad, atol=1e-6), "dL/dU (output vectors)"
    dD = model.doc_vectors.detach() - ref.doc_vectors.detach()
    dW = model.word_vectors.detach() - ref.word_vectors.detach()
    if mode == "dm_mean":
        # the C code's convention: each input gets the whole error of the mean, (1 + n) x the gradient
        m = batch["ctx"] != model.vocab_size
        n = m.sum(1, keepdim=True).float()
        h = ref.hidden(batch).detach().requires_grad_(True)
        A = batch["mask"].unsqueeze(1)
        from companion.word2vec.heads import logistic_block_loss

        logistic_block_loss(ref.head.weight.detach(), h.unsqueeze(1), A, *slots).sum().backward()
        E = -lr * h.grad
        expected = torch.zeros_like(dD).index_add_(0, batch["src"], E)
        assert torch.allclose(dD, expected, atol=1e-6), "doc vectors get the whole error"
        E_words = E.unsqueeze(1).expand(-1, m.shape[1], -1)[m]
        expected_w = torch.zeros_like(dW).index_add_(0, batch["ctx"][m], E_words)
        assert torch.allclose(dW, expected_w, atol=1e-6), "each context word gets the whole error"
        # ... which is (1 + n) times the exact gradient of the mean
        assert torch.allclose(-lr * ref.doc_vectors.grad, torch.zeros_like(dD).index_add_(0, batch["src"], E / (1 + n)), atol=1e-6)
    else:
        assert torch.allclose(dD, -lr * ref.doc_vectors.grad, atol=1e-6), "dL/dD (paragraph vectors)"
        gW = ref.word_vectors.grad
        if mode == "dm_concat":
            gW = gW.clone()
            gW[-1] = 0  # the null (padding) word is not trained
        if gW is None:
            assert torch.equal(dW, torch.zeros_like(dW))
        else:
            assert torch.allclose(dW, -lr * gW, atol=1e-6), "dL/dW (word vectors)"
        if mode == "dbow" and not dbow_words:
            assert torch.equal(dW, torch.zeros_like(dW))
        if dbow_words:
            assert dW.abs().sum() > 0


@pytest.mark.parametrize("mode", MODES)
def test_probe_accuracy_and_inference(mode):
    docs, labels = two_topics()
    res = train_doc2vec(docs, Doc2VecConfig(mode=mode, epochs=15, **TOY))
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0]
    assert probe_accuracy(res.doc_vectors, labels) >= 0.9
    before = {k: v.clone() for k, v in res.model.state_dict().items()}
    inferred = res.infer(docs[:20])
    for k, v in res.model.state_dict().items():
        assert torch.equal(v, before[k]), f"inference changed {k}"
    D = torch.nn.functional.normalize(res.doc_vectors, dim=1)
    I = torch.nn.functional.normalize(inferred, dim=1)
    cos = I @ D.t()  # [20, n_docs]
    own = cos[torch.arange(20), torch.arange(20)]
    other = torch.tensor([[cos[i, j] for j in range(len(docs)) if labels[j] == labels[i] and j != i] for i in range(20)])
    # an inferred training document lands closer to its own trained vector than to its
    # topic's other documents
    assert float(own.mean()) > float(other.mean(1).mean()) + 0.05
    assert torch.equal(inferred, res.infer(docs[:20])), "inference is deterministic"
    enc = res.encode(["the ball game", "bank and money", "zzz unknown"])
    assert enc.shape == (3, 16) and torch.isfinite(enc).all()


def test_deterministic_with_seed_and_hs():
    docs, _labels = two_topics(60)
    cfg = Doc2VecConfig(mode="dbow", epochs=3, output="hs", dbow_words=True, **TOY)
    a, b = train_doc2vec(docs, cfg), train_doc2vec(docs, cfg)
    assert torch.equal(a.doc_vectors, b.doc_vectors)
    assert torch.equal(a.word_vectors, b.word_vectors)
    c = train_doc2vec(docs, Doc2VecConfig(mode="dbow", epochs=3, output="hs", dbow_words=True, seed=1, **TOY))
    assert not torch.equal(a.doc_vectors, c.doc_vectors)
    assert a.history.epoch_loss[-1] < a.history.epoch_loss[0]


def test_bad_input():
    docs, _ = two_topics(10)
    with pytest.raises(ValueError, match="mode"):
        train_doc2vec(docs, Doc2VecConfig(mode="pv"))
    with pytest.raises(ValueError, match="dbow_words"):
        train_doc2vec(docs, Doc2VecConfig(mode="dm_mean", dbow_words=True))
    with pytest.raises(TypeError, match="token lists"):
        train_doc2vec(["the ball game", "bank money"], Doc2VecConfig(min_count=1))
    with pytest.raises(TypeError, match="non-empty"):
        train_doc2vec([], Doc2VecConfig())
    with pytest.raises(ValueError, match="min_lr"):
        Doc2VecConfig(lr=1e-3, min_lr=1e-2).validate()
    res = train_doc2vec(docs, Doc2VecConfig(epochs=1, **TOY))
    with pytest.raises(TypeError, match="list of sentences"):
        res.encode("one string")


@pytest.mark.peers
def test_gensim_parity_on_toy_probe():
    """gensim's Doc2Vec and ours, same corpus and hyperparameters: probe accuracy within noise."""
    pytest.importorskip("gensim")
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    docs, labels = two_topics(200, 20, seed=3)
    ours, theirs = [], []
    for seed in range(3):
        for dm in (0, 1):
            res = train_doc2vec(docs, Doc2VecConfig(mode="dm_mean" if dm else "dbow", epochs=15, seed=seed, **TOY))
            g = Doc2Vec([TaggedDocument(d, [i]) for i, d in enumerate(docs)], dm=dm, vector_size=16, window=2,
                        min_count=1, sample=0, alpha=0.05, epochs=15, workers=1, seed=seed)
            ours.append(probe_accuracy(res.doc_vectors, labels, 150))
            theirs.append(probe_accuracy(torch.tensor(g.dv.vectors), labels, 150))
    assert min(ours) >= 0.9 and min(theirs) >= 0.9
    assert abs(sum(ours) / len(ours) - sum(theirs) / len(theirs)) <= 0.05


def one_by_one(model, batch, slots, lr, D=None):
    """The reference for the compiled step: the torch step on each (block, target) example
    in order (``D``: inference, through ``input_error``/``push_error`` with frozen weights)."""
    rows, labels, weights = (torch.as_tensor(x) for x in slots)
    for b in range(batch["src"].numel()):
        for i in range(batch["targets"].shape[1]):
            if batch["mask"][b, i] == 0:
                continue
            one = {k: v[b : b + 1] for k, v in batch.items()}
            one["targets"], one["mask"] = one["targets"][:, i : i + 1], one["mask"][:, i : i + 1]
            s = (rows[b : b + 1, i : i + 1], labels[b : b + 1, i : i + 1], weights[b : b + 1, i : i + 1])
            if D is None:
                model.sgd_step(one, lr, slots=s, cap=None)
            else:
                h = model.hidden(one, D).unsqueeze(1)
                from companion.word2vec.heads import logistic_block_update

                head_w = model.head.weight.detach().clone()  # frozen: step a copy, keep E
                E, _ = logistic_block_update(head_w, h, one["mask"].unsqueeze(1), *s, lr, None)
                model.push_error(one, E.squeeze(1), D, None, words=False)


@pytest.mark.parametrize("mode,output,dbow_words", [("dbow", "neg", False), ("dbow", "hs", False),
                                                    ("dbow", "neg", True), ("dm_mean", "neg", False),
                                                    ("dm_mean", "hs", False), ("dm_concat", "neg", False)])
def test_compiled_step_equals_the_torch_step_example_by_example(mode, output, dbow_words):
    """The compiled step (gensim's loop) = the readable torch step applied one example at a time,
    in training (every table moves) and in inference (only the new paragraph vectors move)."""
    from companion.sentence import _doc2vec_kernel as K

    if not K.AVAILABLE:
        pytest.skip("numba is not installed")
    model, batch = tiny_batch(mode, dbow_words, output=output)
    assert model.compiled
    slots = model.numpy_slots(batch["targets"])
    ref, before = copy.deepcopy(model), model.doc_vectors.detach().clone()
    lr = 0.1
    model.sequential_step(batch, lr, slots=slots)
    one_by_one(ref, batch, slots, lr)
    for name in ("doc_vectors", "word_vectors"):
        assert torch.allclose(getattr(model, name), getattr(ref, name), atol=1e-6), name
    assert torch.allclose(model.head.weight, ref.head.weight, atol=1e-6), "output vectors"
    assert not torch.equal(model.doc_vectors, before), "the step moved the paragraph vectors"
    # inference: fresh vectors, frozen words and outputs
    if dbow_words:
        return
    D0 = torch.randn(model.doc_vectors.shape, generator=torch.Generator().manual_seed(1)) * 0.1
    frozen = [t.detach().clone() for t in (model.word_vectors, model.head.weight)]
    D1, D2 = D0.clone(), D0.clone()
    model.sequential_step(batch, lr, slots=slots, D=D1)
    one_by_one(model, batch, slots, lr, D=D2)
    assert torch.allclose(D1, D2, atol=1e-6) and not torch.equal(D1, D0), "inferred vectors"
    assert torch.equal(frozen[0], model.word_vectors) and torch.equal(frozen[1], model.head.weight)


def test_compiled_training_matches_the_torch_step_in_quality():
    """The whole run: compiled and torch training both separate the two topics; kernel='torch'
    keeps the batched step; a bad kernel name is refused."""
    from companion.sentence import _doc2vec_kernel as K

    if not K.AVAILABLE:
        pytest.skip("numba is not installed")
    docs, labels = two_topics()
    cfg = {**TOY, "mode": "dm_mean", "epochs": 10}
    ref = train_doc2vec(docs, Doc2VecConfig(kernel="torch", **cfg))
    got = train_doc2vec(docs, Doc2VecConfig(kernel="auto", **cfg))
    assert got.model.compiled and not ref.model.compiled
    assert probe_accuracy(got.doc_vectors, labels) >= 0.9 and probe_accuracy(ref.doc_vectors, labels) >= 0.9
    with pytest.raises(ValueError, match="kernel"):
        Doc2VecConfig(kernel="numba").validate()
