"""fastText skip-gram: subword vectors, the hand-written update against autograd, OOV vectors."""

from __future__ import annotations

import copy
import random

import pytest
import torch

from companion.static.fasttext import FastTextConfig, FastTextSkipGram, train_fasttext
from companion.static.subwords import char_ngrams, fnv1a_32
from companion.word2vec import encode_corpus, epoch_batches

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread

STEMS_A = ["zarb", "quil", "morv", "tesk"]
STEMS_B = ["plon", "gweb", "fuds", "kaxi"]
SUFFIXES = ["", "ing", "ed", "er", "s"]
HELD_OUT = "zarbed"


def _morph_corpus(n: int = 500, seed: int = 0) -> list[list[str]]:
    """Two topics; each topic's words are its stems with five suffixes. One word is held out."""
    rng = random.Random(seed)
    a = [s + x for s in STEMS_A for x in SUFFIXES if s + x != HELD_OUT]
    b = [s + x for s in STEMS_B for x in SUFFIXES]
    return [[rng.choice(a if t % 2 else b) for _ in range(8)] for t in range(n)]


@pytest.fixture(scope="module")
def trained():
    return train_fasttext(_morph_corpus(), dim=16, bucket=5000, min_count=1, epochs=8, sample=0.0, window=3,
                          batch_size=64, seed=0)


def _tiny_model(seed: int = 0) -> tuple[FastTextSkipGram, list]:
    sents = [["the", "cat", "sat", "on", "the", "mat"], ["a", "cat", "ate", "the", "rat"]] * 3
    corpus = encode_corpus(sents, min_count=1)
    m = FastTextSkipGram(corpus.vocab.itos, corpus.vocab.counts, 6, bucket=50, negative=3, seed=seed).double()
    with torch.no_grad():
        m.head.weight.normal_(0, 0.3)  # non-zero output vectors, so input gradients are non-zero
    batches = list(epoch_batches(corpus, window=2, sample=0.0, batch_size=8, block=4))
    return m, batches


def test_input_vector_is_the_mean_of_the_subword_rows():
    m, _ = _tiny_model()
    wid = m.stoi["cat"]
    rows = [wid] + [m.vocab_size + fnv1a_32(g) % 50 for g in char_ngrams("cat")]
    torch.testing.assert_close(m.hidden(torch.tensor([wid]))[0], m.in_vectors[rows].mean(0))
    assert m.table.rows_of(wid).tolist() == rows


def test_sgd_step_matches_autograd_with_fasttexts_input_rule():
    m, batches = _tiny_model(seed=1)
    batch = batches[0]
    twin = copy.deepcopy(m)  # same noise generator state: same noise words
    lr = 0.1
    # autograd reference: hidden vectors of the distinct centres as leaves
    nb, g = batch.targets.shape
    uw, inv = torch.unique(batch.targets.reshape(-1), return_inverse=True)
    H = twin.hidden(uw).detach().requires_grad_(True)
    X = H[inv].view(nb, g, -1)
    A = batch.mask.transpose(1, 2).double()
    loss = twin.head.loss(X, A, batch.tokens).sum()
    loss.backward()
    in_before, out_before = m.in_vectors.detach().clone(), m.head.weight.detach().clone()
    mean_loss, n_pairs = m.sgd_step(batch, lr)
    assert n_pairs == int(batch.mask.sum()) and mean_loss == pytest.approx(loss.item() / n_pairs, rel=1e-10)
    torch.testing.assert_close(m.head.weight - out_before, -lr * twin.head.weight.grad)
    expected = torch.zeros_like(in_before)
    for k, w in enumerate(uw.tolist()):  # fastText: the whole hidden-vector gradient to every row
        for r in m.table.rows_of(w).tolist():
            expected[r] -= lr * H.grad[k]
    torch.testing.assert_close(m.in_vectors - in_before, expected)


def test_pair_loss_counts_every_pair_once():
    m, batches = _tiny_model()
    twin = copy.deepcopy(m)  # the same noise words
    total, n = m.pair_loss(batches[0])
    assert int(n) == int(batches[0].mask.sum()) > 0 and total.item() > 0
    assert twin.loss(batches[0]).item() == pytest.approx(total.item() / int(n))


def test_oov_vectors_are_nonzero_and_built_from_ngrams_only():
    m, _ = _tiny_model()
    v = m.vectors_of(["catt"])[0]
    rows = [m.vocab_size + fnv1a_32(g) % 50 for g in char_ngrams("catt")]
    assert v.abs().sum() > 0
    torch.testing.assert_close(v, m.in_vectors[rows].mean(0).float())
    # an in-vocabulary word gets its table vector (with its own row)
    torch.testing.assert_close(m.vectors_of(["cat"])[0], m.hidden(torch.tensor([m.stoi["cat"]]))[0].float())


def test_word_without_ngrams_in_range_gets_zero():
    corpus = encode_corpus([["hello", "world"]] * 3, min_count=1)
    m = FastTextSkipGram(corpus.vocab.itos, corpus.vocab.counts, 4, bucket=10, minn=5, maxn=6)
    assert not m.vectors_of(["a"])[0].any()  # "<a>" is 3 characters < minn


def test_plain_skipgram_when_maxn_is_zero():
    corpus = encode_corpus([["hello", "world"]] * 3, min_count=1)
    m = FastTextSkipGram(corpus.vocab.itos, corpus.vocab.counts, 4, bucket=10, minn=0, maxn=0)
    assert m.table.lengths().tolist() == [1, 1]


@pytest.mark.parametrize("typo,word", [("quilinng", "quiling"), ("morvr", "morv"), ("kaxxis", "kaxis"), ("teskin", "tesking")])
def test_misspelling_lands_next_to_the_word(trained, typo, word):
    assert typo not in trained.index
    top = [w for w, _ in trained.nearest(typo, 3)]
    assert word in top
    assert top[0].startswith(word[:4])  # the nearest word shares the stem


def _mean_cos(v: torch.Tensor, others: torch.Tensor) -> float:
    return float((torch.nn.functional.normalize(others, dim=1) @ torch.nn.functional.normalize(v, dim=0)).mean())


def test_unseen_word_inherits_its_topic(trained):
    assert HELD_OUT not in trained.index
    v = trained.vector(HELD_OUT)
    vecs, s = trained.vectors(), trained.index
    # compare with words of the other stems only: shared characters cannot explain the result
    same = vecs[[s[st + x] for st in STEMS_A[1:] for x in SUFFIXES]]
    other = vecs[[s[st + x] for st in STEMS_B for x in SUFFIXES]]
    assert _mean_cos(v, same) > _mean_cos(v, other) + 0.2


def test_with_oov_covers_every_word(trained):
    mat, index = trained.with_oov(["zarb", HELD_OUT, "unheardof", HELD_OUT])
    assert mat.shape[0] == len(trained.vocab) + 2
    assert index[HELD_OUT] == len(trained.vocab) and index["unheardof"] == len(trained.vocab) + 1
    torch.testing.assert_close(mat[index[HELD_OUT]], trained.vector(HELD_OUT))
    assert trained.summary()["buckets"] == 5000


def test_training_lowers_the_loss_and_is_seeded():
    sents = _morph_corpus(n=80)
    kw = dict(dim=8, bucket=500, min_count=1, epochs=3, sample=0.0, window=2, batch_size=32)
    r1, r2, r3 = train_fasttext(sents, seed=4, **kw), train_fasttext(sents, seed=4, **kw), train_fasttext(sents, seed=5, **kw)
    assert torch.equal(r1.vectors(), r2.vectors()) and not torch.equal(r1.vectors(), r3.vectors())
    assert r1.history.epoch_loss[-1] < r1.history.epoch_loss[0]


def test_autograd_engine_trains():
    sents = _morph_corpus(n=80)
    res = train_fasttext(sents, dim=8, bucket=500, min_count=1, epochs=3, sample=0.0, window=2, batch_size=32,
                         engine="autograd", lr=0.05)
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0]
    assert torch.isfinite(res.vectors()).all()


@pytest.mark.parametrize("field,value", [
    ("dim", 0), ("window", 0), ("negative", -1), ("bucket", 0), ("epochs", 0), ("minn", 7), ("maxn", -1),
    ("lr", 0), ("sample", 1.5), ("engine", "cuda"), ("seed", -2), ("max_vocab", 1), ("block", 0), ("update_cap", 0),
])
def test_bad_config_rejected(field, value):
    cfg = FastTextConfig(**{field: value})
    with pytest.raises(ValueError):
        cfg.validate()


def test_bad_inputs_rejected():
    m, batches = _tiny_model()
    with pytest.raises(ValueError, match="lr"):
        m.sgd_step(batches[0], 0.0)
    with pytest.raises(TypeError, match="Word2VecBatch"):
        m.sgd_step((1, 2), 0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="word ids"):
        m.hidden(torch.tensor([m.vocab_size]))
    with pytest.raises(ValueError, match="non-empty"):
        m.vectors_of([""])
    with pytest.raises(ValueError, match="one count per word"):
        FastTextSkipGram(["a", "b"], torch.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="list of"):
        train_fasttext("not a corpus", min_count=1)  # type: ignore[arg-type]


@pytest.mark.gpu
def test_cuda_matches_cpu():
    sents = _morph_corpus(n=60)
    kw = dict(dim=8, bucket=500, min_count=1, epochs=2, sample=0.0, window=2, batch_size=32, seed=2)
    cpu = train_fasttext(sents, device="cpu", **kw)
    gpu = train_fasttext(sents, device="cuda", **kw)
    # the noise words are drawn by each device's own generator, so compare quality, not numbers
    assert torch.isfinite(gpu.vectors()).all()
    assert gpu.history.epoch_loss[-1] == pytest.approx(cpu.history.epoch_loss[-1], rel=0.2)


def test_hogwild_workers_and_threads_are_restored():
    sents = _morph_corpus(n=80)
    before = torch.get_num_threads()
    res = train_fasttext(sents, dim=8, bucket=500, min_count=1, epochs=2, sample=0.0, window=2, batch_size=16,
                         workers=2, threads=None)
    assert torch.isfinite(res.vectors()).all() and res.history.epoch_loss[-1] < res.history.epoch_loss[0]
    assert torch.get_num_threads() == before
    for bad in (dict(workers=0), dict(threads=0), dict(workers=2, engine="autograd")):
        with pytest.raises(ValueError, match="workers|threads"):
            FastTextConfig(**bad).validate()


def test_update_cap_scales_busy_rows_only():
    m, batches = _tiny_model(seed=2)
    batch = batches[0]
    plain, capped = copy.deepcopy(m), copy.deepcopy(m)  # same noise words for both
    before = m.in_vectors.detach().clone()
    plain.sgd_step(batch, 0.1)
    capped.sgd_step(batch, 0.1, cap=2.0)
    # pairs behind each input row, by a loop over the batch's centres
    pairs_per_centre = batch.mask.sum(1).reshape(-1).tolist()
    uses: dict[int, float] = {}
    for w in set(batch.targets.reshape(-1).tolist()):
        n_w = sum(p for t, p in zip(batch.targets.reshape(-1).tolist(), pairs_per_centre) if t == w)
        for r in m.table.rows_of(w).tolist():
            uses[r] = uses.get(r, 0.0) + n_w
    assert any(n > 2 for n in uses.values()) and any(n <= 2 for n in uses.values())
    for r, n in uses.items():
        want = (plain.in_vectors[r] - before[r]) * min(1.0, 2.0 / n)
        torch.testing.assert_close(capped.in_vectors[r] - before[r], want)
    with pytest.raises(ValueError, match="cap"):
        m.sgd_step(batch, 0.1, cap=0)
