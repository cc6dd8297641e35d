"""companion.evaluate.finetune: frozen vs fine-tuned vectors under a bag-of-embeddings classifier."""

from __future__ import annotations

import doctest
import math
from dataclasses import dataclass

import pytest
import torch

from companion.evaluate import finetune
from companion.evaluate.finetune import (
    BagConfig,
    GenreTask,
    genre_task,
    learning_curve,
    sample_balanced,
    train_bag_of_embeddings,
)

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = BagConfig(steps=60, batch_size=8, lr=0.05)


def toy(seed: int = 0, dim: int = 6):
    """A separable toy task. Words p0..p9 lie near +e0 and n0..n9 near -e0; f0..f9 are noise
    fillers; z0, z1 occur nowhere. Training texts use p0-p4 / n0-n4, held-out texts p5-p9 / n5-n9,
    so the held-out sentiment words were never seen in training: only their pretrained vectors
    can tell the classes apart."""
    g = torch.Generator().manual_seed(seed)
    words = [f"p{i}" for i in range(10)] + [f"n{i}" for i in range(10)] + [f"f{i}" for i in range(10)] + ["z0", "z1"]
    index = {w: i for i, w in enumerate(words)}
    vecs = torch.randn(len(words), dim, generator=g) * 0.3
    vecs[:10, 0] += 2.0
    vecs[10:20, 0] -= 2.0

    def texts(lo: int, hi: int, n: int, offset: int):
        docs, labels = [], []
        for k in range(n):
            label = k % 2
            key = "p" if label else "n"
            docs.append([f"{key}{lo + (k + offset) % (hi - lo)}", f"f{(3 * k + offset) % 10}", f"f{(7 * k + 1) % 10}"])
            labels.append(label)
        return docs, labels

    train = texts(0, 5, 40, 0)
    test = texts(5, 10, 30, 1)
    return vecs, index, train, test


def test_toy_task_is_learned_frozen_and_fine_tuned():
    vecs, index, (tr, ytr), (te, yte) = toy()
    for ft in (False, True):
        r = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=ft, config=FAST)
        assert r.accuracy == 1.0 and r.train_accuracy == 1.0, (ft, r)
        assert r.n_train == 40 and r.n_test == 30 and r.known == 1.0


def test_chance_without_signal():
    # the same texts with shuffled labels: nothing to learn, held-out accuracy stays near chance
    vecs, index, (tr, ytr), (te, yte) = toy()
    g = torch.Generator().manual_seed(1)
    ytr = [ytr[i] for i in torch.randperm(len(ytr), generator=g).tolist()]
    r = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=False, config=FAST)
    assert r.accuracy < 0.9


def test_frozen_leaves_every_vector_bit_identical():
    vecs, index, (tr, ytr), (te, yte) = toy()
    before = vecs.clone()
    r = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=False, config=FAST, return_vectors=True)
    assert torch.equal(r.vectors, before) and torch.equal(vecs, before)
    assert r.rows_moved == 0 and r.mean_shift == 0.0


def test_fine_tuning_moves_exactly_the_training_words():
    vecs, index, (tr, ytr), (te, yte) = toy()
    before = vecs.clone()
    r = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, config=FAST, return_vectors=True)
    assert torch.equal(vecs, before), "the caller's matrix must not be modified"
    seen = {w for d in tr for w in d}
    changed = {w for w, i in index.items() if not torch.equal(r.vectors[i], before[i])}
    assert changed == seen  # every training word moved, nothing else (held-out-only and unused words)
    assert r.rows_moved == r.train_words == len(seen)
    rows = torch.tensor([index[w] for w in sorted(seen)])
    shift = ((r.vectors[rows] - before[rows]).norm(dim=1) / before[rows].norm(dim=1)).mean()
    assert math.isclose(r.mean_shift, float(shift), rel_tol=1e-5)


def test_embedding_lr_scales_the_movement():
    vecs, index, (tr, ytr), (te, yte) = toy()
    slow = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True,
                                   config=BagConfig(steps=60, batch_size=8, lr=0.05, embedding_lr=0.005))
    fast = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, config=FAST)
    assert 0 < slow.mean_shift < fast.mean_shift / 3


def test_coverage_counts_held_out_tokens_seen_in_training():
    vecs = torch.eye(4)
    index = {"a": 0, "b": 1, "c": 2, "d": 3}
    tr, ytr = [["a", "b"], ["b", "xx"]], [0, 1]
    te, yte = [["a", "c", "oov"], ["c", "c", "d"], ["oov"]], [0, 1, 0]
    r = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=False, config=BagConfig(steps=2))
    # 7 held-out tokens, 5 with a vector (a c c c d), 1 of those seen in training (a)
    assert r.known == pytest.approx(5 / 7) and r.coverage == pytest.approx(1 / 5)
    assert r.text_coverage[:2].tolist() == pytest.approx([0.5, 0.0]) and math.isnan(r.text_coverage[2])
    assert r.correct.shape == (3,) and r.correct.dtype == torch.bool
    assert r.train_words == 2


def test_runs_repeat_exactly_and_seeds_differ():
    vecs, index, (tr, ytr), (te, yte) = toy()
    a, b = (train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, config=FAST, return_vectors=True)
            for _ in range(2))
    assert torch.equal(a.vectors, b.vectors) and a.accuracy == b.accuracy
    c = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, return_vectors=True,
                                config=BagConfig(steps=60, batch_size=8, lr=0.05, seed=1))
    assert not torch.equal(a.vectors, c.vectors)


def test_accepts_a_vocab_and_numpy_vectors():
    from companion.data import Vocab

    vocab = Vocab(["good", "bad", "film"], specials=())
    vecs = torch.zeros(len(vocab), 2)
    vecs[vocab.stoi["good"], 0], vecs[vocab.stoi["bad"], 0] = 1.0, -1.0
    docs = [["good", "film"], ["bad", "film"]] * 4
    r = train_bag_of_embeddings(vecs.numpy(), vocab, docs, [1, 0] * 4, [["good"], ["bad"]], [1, 0],
                                finetune=False, config=BagConfig(steps=50, lr=0.1))
    assert r.accuracy == 1.0


def test_docstring_example():
    assert doctest.testmod(finetune, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(train_labels=[0]), ValueError, "labels"),
    (dict(train_docs=[], train_labels=[]), ValueError, "empty"),
    (dict(train_docs="good bad", train_labels=[0] * 8), TypeError, "list of token lists"),
    (dict(train_docs=["good", "bad"], train_labels=[0, 1]), TypeError, "list of tokens"),
    (dict(train_labels=[0, -1]), ValueError, "non-negative"),
    (dict(train_labels=[0, 0], test_labels=[0]), ValueError, "single class"),
    (dict(train_docs=[["zzz"], ["yyy"]]), ValueError, "no training text"),
    (dict(index={"good": 0, "bad": 9}), ValueError, "outside"),
    (dict(index=["good", "bad"]), TypeError, "index"),
    (dict(config=BagConfig(steps=0)), ValueError, "steps"),
    (dict(config=BagConfig(lr=-1.0)), ValueError, "lr"),
    (dict(config=BagConfig(embedding_lr=float("nan"))), ValueError, "embedding_lr"),
    (dict(config=BagConfig(optimizer="rmsprop")), ValueError, "optimizer"),
    (dict(config={"steps": 3}), TypeError, "BagConfig"),
    (dict(vectors=torch.zeros(2)), ValueError, "2-D"),
])
def test_bad_input_gives_a_clear_error(kwargs, error, match):
    args = dict(vectors=torch.eye(2), index={"good": 0, "bad": 1}, train_docs=[["good"], ["bad"]],
                train_labels=[1, 0], test_docs=[["good"]], test_labels=[1], finetune=False, config=BagConfig(steps=2))
    args.update(kwargs)
    with pytest.raises(error, match=match):
        train_bag_of_embeddings(**args)


def test_sample_balanced():
    labels = [0] * 30 + [1] * 10 + [2] * 5
    pick = sample_balanced(labels, 11, seed=3)
    assert len(set(pick)) == 11 and sorted(labels[i] for i in pick) == [0] * 4 + [1] * 4 + [2] * 3
    assert pick == sample_balanced(labels, 11, seed=3) and pick != sample_balanced(labels, 11, seed=4)
    with pytest.raises(ValueError, match="fewer"):
        sample_balanced(labels, 18)
    with pytest.raises(ValueError, match="positive"):
        sample_balanced(labels, 0)


@dataclass
class FakeFile:
    fileid: str
    genre: str
    sents: list


class FakeCorpus:
    """Genre-tagged files of 6 sentences each: genre a/b files say 'report ...', k/l files 'story ...'."""

    def __init__(self):
        self.files = []
        for g, word in (("a", "report"), ("b", "report"), ("k", "story"), ("l", "story"), ("z", "other")):
            for n in range(4):
                sents = [[word.title(), f"{g}{n}", "item", str(j), "."] for j in range(6)] + [["Hi", "!"]]
                self.files.append(FakeFile(f"c{g}{n:02d}", g, sents))


def test_genre_task_holds_out_whole_files():
    task = genre_task(FakeCorpus(), held_out=10, classes=("ab", "kl"), class_names=("fact", "fiction"), seed=1)
    assert task.class_names == ("fact", "fiction")
    assert task.test_labels.count(0) == task.test_labels.count(1) == 5
    # every file has 6 usable sentences ("Hi !" is below min_tokens; genre z is in no class), so one
    # file per class fills the 5 held-out sentences and the other 7 files of the class are the pool
    assert len(task.train_docs) == 2 * 7 * 6 and task.train_labels.count(0) == 42
    held_words = {d[1] for d in task.test_docs}
    train_words = {d[1] for d in task.train_docs}
    assert held_words.isdisjoint(train_words)  # the file-specific word never crosses the split
    assert {w[:1] for w in held_words} | {w[:1] for w in train_words} == {"a", "b", "k", "l"}
    assert len(task.test_files) == 2
    assert all(d[0] == ("report" if y == 0 else "story") for d, y in zip(task.test_docs, task.test_labels))
    again = genre_task(FakeCorpus(), held_out=10, classes=("ab", "kl"), seed=1)
    assert again.test_docs == task.test_docs


def test_genre_task_errors():
    with pytest.raises(ValueError, match="multiple"):
        genre_task(FakeCorpus(), held_out=9, classes=("ab", "kl"))
    with pytest.raises(ValueError, match="two classes"):
        genre_task(FakeCorpus(), held_out=10, classes=("ab", "bk"))
    with pytest.raises(ValueError, match="too few"):
        genre_task(FakeCorpus(), held_out=100, classes=("ab", "kl"))
    with pytest.raises(TypeError, match="files"):
        genre_task(object(), held_out=10)


def test_learning_curve_pairs_the_variants():
    vecs, index, (tr, ytr), (te, yte) = toy()
    task = GenreTask(tr, ytr, te, yte, ("neg", "pos"), ())
    rows = learning_curve(vecs, index, task, sizes=[4, 20], seeds=[0, 1], config=FAST, embedding_lrs=(None, 0.005))
    assert len(rows) == 2 * 2 * 3
    assert [r["vectors"] for r in rows[:3]] == ["frozen", "fine-tuned", "fine-tuned"]
    assert [r["embedding_lr"] for r in rows[:3]] == [None, 0.05, 0.005]
    for k in range(0, len(rows), 3):  # the three variants of a (size, seed) share the sample
        trio = rows[k:k + 3]
        assert len({(r["size"], r["seed"], r["coverage"], r["train_words"]) for r in trio}) == 1
        assert trio[0]["rows_moved"] == 0 and trio[1]["rows_moved"] == trio[1]["train_words"]
    cov = {r["size"]: r["coverage"] for r in rows if r["seed"] == 0}
    assert cov[4] < cov[20]
    assert "correct" not in rows[0]
    assert "correct" in learning_curve(vecs, index, task, [4], [0], FAST, per_text=True)[0]
    with pytest.raises(ValueError, match="at least one"):
        learning_curve(vecs, index, task, [], [0])


@pytest.mark.gpu
def test_cuda_matches_cpu():
    vecs, index, (tr, ytr), (te, yte) = toy()
    cpu = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, config=FAST, return_vectors=True)
    cfg = BagConfig(steps=60, batch_size=8, lr=0.05, device="cuda")
    gpu = train_bag_of_embeddings(vecs, index, tr, ytr, te, yte, finetune=True, config=cfg, return_vectors=True)
    assert gpu.accuracy == cpu.accuracy and gpu.rows_moved == cpu.rows_moved
    assert torch.allclose(gpu.vectors, cpu.vectors, atol=1e-4)
