"""GloVe: the loss and its gradients against a direct loop, AdaGrad against the C code and torch,
training, determinism, bad inputs."""

from __future__ import annotations

import copy
import math
import random

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from companion.static.cooccur import Cooccurrence, cooccurrence_matrix
from companion.static.glove import GloVe, GloVeConfig, glove_batches, train_glove, weighting
from companion.word2vec import Word2VecVocab

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread


def _tiny(V: int = 4, d: int = 3, seed: int = 0, x_max: float = 5.0) -> tuple[GloVe, np.ndarray]:
    torch.manual_seed(seed)
    m = GloVe(V, d, x_max=x_max, seed=seed).double()
    with torch.no_grad():  # values of order 1 so that the test is not dominated by tiny numbers
        for p in m.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    rng = np.random.default_rng(seed)
    X = rng.gamma(1.0, 4.0, size=(V, V)) * (rng.random((V, V)) < 0.7)
    X[0, 1] = 12.0  # one entry above x_max: f = 1
    return m, X


def _loop_J(W, C, b, bc, X, x_max, alpha) -> float:
    """The paper's J, one entry at a time in plain Python."""
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            x = X[i, j]
            if x <= 0:
                continue
            f = min(1.0, (x / x_max) ** alpha)
            dot = sum(W[i][k] * C[j][k] for k in range(len(W[i])))
            total += f * (dot + b[i] + bc[j] - math.log(x)) ** 2
    return total


def _params(m: GloVe):
    return [m.w.detach().tolist(), m.c.detach().tolist(), m.b.detach().tolist(), m.bc.detach().tolist()]


def _cooc(X: np.ndarray) -> Cooccurrence:
    V = X.shape[0]
    vocab = Word2VecVocab([f"w{i}" for i in range(V)], torch.ones(V, dtype=torch.int64))
    return Cooccurrence(sp.csr_matrix(X), vocab, window=1, symmetric=False, distance_weighting=True)


def test_weighting_function():
    f = weighting(torch.tensor([0.0, 1.0, 50.0, 100.0, 300.0]), x_max=100.0, alpha=0.75)
    expected = [0.0, 0.01 ** 0.75, 0.5 ** 0.75, 1.0, 1.0]
    np.testing.assert_allclose(f.tolist(), expected, rtol=1e-6)
    assert weighting(torch.tensor([5.0]), x_max=10.0, alpha=1.0).item() == pytest.approx(0.5)
    for bad in (dict(x_max=0), dict(x_max=float("inf")), dict(alpha=0)):
        with pytest.raises(ValueError):
            weighting(torch.tensor([1.0]), **bad)
    with pytest.raises(ValueError, match=">= 0"):
        weighting(torch.tensor([-1.0]))


def test_objective_equals_the_loop_definition():
    m, X = _tiny()
    J = m.objective(_cooc(X))
    assert J == pytest.approx(_loop_J(*_params(m), X, m.x_max, m.alpha), rel=1e-12)


def test_gradients_match_finite_differences_of_the_loop():
    m, X = _tiny(seed=1)
    i, j = np.nonzero(X)
    batch = (torch.from_numpy(i), torch.from_numpy(j), torch.from_numpy(X[i, j]))
    m.zero_grad()
    m.loss(batch).backward()  # loss = J / 2 (the C code's cost)
    eps = 1e-6
    for name in ("w", "c", "b", "bc"):
        p = getattr(m, name)
        flat = p.detach().view(-1)
        for k in range(flat.numel()):
            old = float(flat[k])
            with torch.no_grad():
                flat[k] = old + eps
                up = _loop_J(*_params(m), X, m.x_max, m.alpha)
                flat[k] = old - eps
                down = _loop_J(*_params(m), X, m.x_max, m.alpha)
                flat[k] = old
            numeric = (up - down) / (2 * eps) / 2
            assert float(p.grad.view(-1)[k]) == pytest.approx(numeric, rel=1e-5, abs=1e-7), (name, k)


def _c_code_step(P, G, i, j, x, eta, x_max, alpha):
    """The inner loop of glove.c for one entry, on nested lists (P = [W, C, b, bc], G alike)."""
    W, C, b, bc = P
    GW, GC, Gb, Gbc = G
    d = len(W[0])
    diff = sum(W[i][k] * C[j][k] for k in range(d)) + b[i] + bc[j] - math.log(x)
    fdiff = diff if x > x_max else (x / x_max) ** alpha * diff
    fdiff *= eta
    for k in range(d):
        t1, t2 = fdiff * C[j][k], fdiff * W[i][k]
        W[i][k] -= t1 / math.sqrt(GW[i][k])
        C[j][k] -= t2 / math.sqrt(GC[j][k])
        GW[i][k] += t1 * t1
        GC[j][k] += t2 * t2
    b[i] -= fdiff / math.sqrt(Gb[i])
    bc[j] -= fdiff / math.sqrt(Gbc[j])
    Gb[i] += fdiff * fdiff
    Gbc[j] += fdiff * fdiff


def test_batch_of_one_is_the_c_code():
    m, X = _tiny(V=5, d=4, seed=2)
    P = _params(m)
    G = [[[1.0] * 4 for _ in range(5)], [[1.0] * 4 for _ in range(5)], [1.0] * 5, [1.0] * 5]
    i, j = np.nonzero(X)
    order = np.random.default_rng(0).permutation(len(i))
    for _ in range(3):  # three passes, so the accumulators matter
        for k in order:
            _c_code_step(P, G, int(i[k]), int(j[k]), float(X[i[k], j[k]]), 0.05, m.x_max, m.alpha)
            m.adagrad_step(torch.tensor([int(i[k])]), torch.tensor([int(j[k])]), torch.tensor([float(X[i[k], j[k]])],
                           dtype=torch.float64), 0.05, "c")
    for got, want in zip(_params(m), P):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.G_w.numpy(), np.array(G[0]), rtol=1e-10)
    np.testing.assert_allclose(m.G_bc.numpy(), np.array(G[3]), rtol=1e-10)


def test_batched_c_rule_freezes_the_accumulator_within_a_batch():
    m, _ = _tiny(V=4, d=2, seed=3)
    i = torch.tensor([0, 0, 1, 0])
    j = torch.tensor([1, 2, 1, 1])  # repeated rows on both sides
    x = torch.tensor([3.0, 8.0, 1.5, 3.0], dtype=torch.float64)
    W, C, b, bc = (np.array(p) for p in _params(m))
    GW = np.ones_like(W) * 2.0
    with torch.no_grad():
        m.G_w.fill_(2.0)
    lr = 0.1
    f = np.minimum(1.0, (x.numpy() / m.x_max) ** m.alpha)
    diff = (W[i] * C[j]).sum(1) + b[i] + bc[j] - np.log(x.numpy())
    gW = np.zeros_like(W)
    sqW = np.zeros_like(W)
    for e in range(4):
        g = f[e] * diff[e] * C[j[e]]
        gW[i[e]] += g
        sqW[i[e]] += g * g
    m.adagrad_step(i, j, x, lr, "c")
    np.testing.assert_allclose(m.w.detach().numpy(), W - lr * gW / np.sqrt(GW), rtol=1e-12)
    np.testing.assert_allclose(m.G_w.numpy(), GW + lr * lr * sqW, rtol=1e-12)


def test_duchi_rule_equals_torch_adagrad():
    m, X = _tiny(V=6, d=3, seed=4)
    twin = copy.deepcopy(m)
    opt = torch.optim.Adagrad(twin.parameters(), lr=0.05, initial_accumulator_value=1.0, eps=1e-10)
    i, j = np.nonzero(X)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):  # batches with repeated rows
        pick = torch.randint(0, len(i), (7,), generator=gen)
        bi, bj = torch.from_numpy(i)[pick], torch.from_numpy(j)[pick]
        bx = torch.from_numpy(X[i, j])[pick]
        m.adagrad_step(bi, bj, bx, 0.05, "duchi")
        opt.zero_grad()
        twin.loss((bi, bj, bx)).backward()
        opt.step()
    for name in ("w", "c", "b", "bc"):
        torch.testing.assert_close(getattr(m, name), getattr(twin, name), rtol=1e-10, atol=1e-12)


def test_the_two_rules_differ():
    m, X = _tiny(seed=5)
    twin = copy.deepcopy(m)
    i, j = (torch.from_numpy(a) for a in np.nonzero(X))
    x = torch.from_numpy(X[np.nonzero(X)])
    m.adagrad_step(i, j, x, 0.05, "c")
    twin.adagrad_step(i, j, x, 0.05, "duchi")
    assert not torch.allclose(m.w, twin.w)


def test_recovers_a_planted_low_rank_log_matrix():
    g = torch.Generator().manual_seed(0)
    V, r = 60, 3
    U, W = torch.randn(V, r, generator=g) * 0.7, torch.randn(V, r, generator=g) * 0.7
    L = U @ W.T + torch.randn(V, 1, generator=g) + torch.randn(1, V, generator=g) + 2
    mask = torch.rand(V, V, generator=g) < 0.5
    i, j = mask.nonzero(as_tuple=True)
    x = L[i, j].exp()
    m = GloVe(V, 6, x_max=100.0)
    first = None
    for epoch in range(40):
        cost = sum(m.adagrad_step(*b, 0.05, "c") for b in glove_batches(i, j, x, 256, epoch=epoch)) / i.numel()
        first = cost if first is None else first
    assert cost < 0.01 * first and cost < 5e-3


def _topic_corpus(seed: int = 0, n: int = 400) -> tuple[list[list[str]], list[str], list[str]]:
    rng = random.Random(seed)
    a = [f"a{k}" for k in range(8)]
    b = [f"b{k}" for k in range(8)]
    sents = [[rng.choice(a if t % 2 else b) for _ in range(8)] for t in range(n)]
    return sents, a, b


def _mean_cos(v: torch.Tensor, rows1, rows2) -> float:
    u = torch.nn.functional.normalize(v, dim=1)
    s = u[rows1] @ u[rows2].T
    if rows1 == rows2:
        s = s[~torch.eye(len(rows1), dtype=torch.bool)]
    return float(s.mean())


def test_learns_topics_on_a_synthetic_corpus():
    sents, a, b = _topic_corpus()
    res = train_glove(sents, dim=10, window=3, min_count=1, epochs=30, x_max=10.0, batch_size=64)
    v, s = res.vectors(), res.index
    ra, rb = [s[w] for w in a], [s[w] for w in b]
    assert _mean_cos(v, ra, ra) > _mean_cos(v, ra, rb) + 0.3
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0]
    assert res.summary()["nonzeros"] == res.cooc.nnz


def test_autograd_engine_equals_the_hand_written_duchi_rule():
    sents, _, _ = _topic_corpus(n=60)
    kw = dict(dim=5, window=2, min_count=1, epochs=2, batch_size=32, x_max=10.0, seed=3)
    a = train_glove(sents, engine="autograd", **kw)
    b = train_glove(sents, engine="adagrad", adagrad="duchi", **kw)
    torch.testing.assert_close(a.vectors(), b.vectors(), rtol=1e-4, atol=1e-6)


def test_seeded_determinism_and_vector_choices():
    sents, _, _ = _topic_corpus(n=50)
    kw = dict(dim=4, window=2, min_count=1, epochs=2, batch_size=16)
    r1, r2, r3 = train_glove(sents, seed=7, **kw), train_glove(sents, seed=7, **kw), train_glove(sents, seed=8, **kw)
    assert torch.equal(r1.vectors(), r2.vectors())
    assert not torch.equal(r1.vectors(), r3.vectors())
    torch.testing.assert_close(r1.vectors("sum"), r1.vectors("word") + r1.vectors("context"))
    with pytest.raises(ValueError, match="which"):
        r1.vectors("both")


def test_accepts_a_precomputed_matrix(tmp_path):
    sents, _, _ = _topic_corpus(n=40)
    cooc = cooccurrence_matrix(sents, 2, min_count=1)
    res = train_glove(cooc, dim=3, epochs=1)
    assert res.cooc is cooc and res.vectors().shape == (len(cooc.vocab), 3)
    path = res.save(str(tmp_path / "glove.txt"))
    assert open(path).readline().split() == [str(len(cooc.vocab)), "3"]


@pytest.mark.parametrize("field,value", [
    ("dim", 0), ("window", -1), ("epochs", 1.5), ("x_max", 0.0), ("alpha", -1.0), ("lr", 0.0),
    ("adagrad", "adam"), ("engine", "gpu"), ("seed", -1), ("max_vocab", 1),
])
def test_bad_config_rejected(field, value):
    with pytest.raises(ValueError, match=field.split("_")[0]):
        GloVeConfig(**{field: value}).validate()


def test_bad_entries_rejected():
    m = GloVe(3, 2)
    with pytest.raises(ValueError, match="> 0"):
        m.adagrad_step(torch.tensor([0]), torch.tensor([1]), torch.tensor([0.0]))
    with pytest.raises(ValueError, match="0..2"):
        m.adagrad_step(torch.tensor([0]), torch.tensor([3]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="equally long"):
        m.adagrad_step(torch.tensor([0, 1]), torch.tensor([1]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="rule"):
        m.adagrad_step(torch.tensor([0]), torch.tensor([1]), torch.tensor([1.0]), rule="adam")
    with pytest.raises(ValueError, match="vocab_size"):
        GloVe(1, 2)
    with pytest.raises(ValueError, match="empty"):
        train_glove([["a"], ["b"]], min_count=1, epochs=1)


@pytest.mark.gpu
def test_cuda_matches_cpu():
    sents, _, _ = _topic_corpus(n=60)
    kw = dict(dim=6, window=2, min_count=1, epochs=2, batch_size=64, seed=1)
    cpu = train_glove(sents, device="cpu", **kw)
    gpu = train_glove(sents, device="cuda", **kw)
    torch.testing.assert_close(cpu.vectors(), gpu.vectors(), rtol=1e-3, atol=1e-5)


def test_hogwild_workers():
    sents, a, b = _topic_corpus()
    res = train_glove(sents, dim=10, window=3, min_count=1, epochs=20, x_max=10.0, batch_size=64, workers=2)
    v, s = res.vectors(), res.index
    ra, rb = [s[w] for w in a], [s[w] for w in b]
    assert _mean_cos(v, ra, ra) > _mean_cos(v, ra, rb) + 0.3
    for bad in (dict(workers=0), dict(threads=-1), dict(workers=2, engine="autograd")):
        with pytest.raises(ValueError, match="workers|threads"):
            GloVeConfig(**bad).validate()
