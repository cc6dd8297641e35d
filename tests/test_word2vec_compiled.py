"""The compiled word2vec step (numba) computes the same update as the readable torch step the
chapter shows: same seed, one thread, equal vectors to float tolerance; and without numba the
torch step is used."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from companion.word2vec import _compiled, encode_corpus, train_word2vec
from companion.word2vec.pairs import epoch_batches
from companion.word2vec.trainer import Word2VecConfig, make_model

pytestmark = pytest.mark.usefixtures("one_thread")
needs_numba = pytest.mark.skipif(not _compiled.AVAILABLE, reason="numba is not installed")


def _sentences(n=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    words = [f"w{i}" for i in range(30)]
    out = []
    for _ in range(n):
        length = int(torch.randint(1, 25, (1,), generator=g))
        top = int(torch.randint(3, 31, (1,), generator=g))  # a Zipf-ish mix: low ids are frequent
        out.append([words[int(torch.randint(0, top, (1,), generator=g))] for _ in range(length)])
    return out


@needs_numba
@pytest.mark.parametrize("arch", ["sg", "cbow"])
@pytest.mark.parametrize("output", ["neg", "hs"])
@pytest.mark.parametrize("cap", [64.0, 2.0, None])
def test_compiled_and_torch_steps_train_the_same_vectors(arch, output, cap):
    kw = {"arch": arch, "output": output, "dim": 12, "window": 3, "min_count": 1, "epochs": 2,
          "sample": 1e-2, "batch_size": 48, "update_cap": cap, "seed": 3}
    ref = train_word2vec(_sentences(), kernel="torch", **kw)
    fast = train_word2vec(_sentences(), kernel="numba", **kw)
    # cap=2 makes the per-row cap bind for most rows: the case where a wrong count shows
    init = make_model(ref.vocab.counts, ref.config).in_vectors.detach()
    assert (ref.vectors() - init).abs().max() > 1e-3  # trained: the comparison is not of the init
    torch.testing.assert_close(fast.vectors(), ref.vectors(), rtol=1e-4, atol=2e-6)
    torch.testing.assert_close(fast.model.out_vectors, ref.model.out_vectors, rtol=1e-4, atol=2e-6)
    assert fast.history.epoch_loss == pytest.approx(ref.history.epoch_loss, rel=1e-5)
    assert fast.history.items == ref.history.items


@needs_numba
def test_one_compiled_step_equals_sgd_step_and_a_wrong_update_is_caught():
    corpus = encode_corpus(_sentences(), min_count=1)
    batch = next(epoch_batches(corpus, window=3, sample=0, batch_size=64, seed=1))
    a = make_model(corpus.vocab.counts, Word2VecConfig(dim=8, seed=2))
    a.out_vectors.data.normal_(0, 0.3)  # non-zero output vectors: every term of the step counts
    b = make_model(corpus.vocab.counts, Word2VecConfig(dim=8, seed=2))
    b.load_state_dict(a.state_dict())
    loss_a, n_a = a.sgd_step(batch, 0.1, 4.0)
    loss_b, n_b = _compiled.compiled_sgd_step(b, batch, 0.1, 4.0)
    assert n_a == n_b > 0 and loss_b == pytest.approx(loss_a, rel=1e-5)
    torch.testing.assert_close(b.in_vectors, a.in_vectors)
    torch.testing.assert_close(b.out_vectors, a.out_vectors)
    # the comparison can fail: a step at another learning rate is told apart
    c = make_model(corpus.vocab.counts, Word2VecConfig(dim=8, seed=2))
    c.load_state_dict(b.state_dict())
    _compiled.compiled_sgd_step(c, batch, 0.2, 4.0)
    _compiled.compiled_sgd_step(b, batch, 0.1, 4.0)
    assert not torch.allclose(c.in_vectors, b.in_vectors, atol=1e-6)


def test_kernel_choice_and_its_errors():
    m = make_model(torch.tensor([5, 3, 2]), Word2VecConfig(dim=4, output="full"))
    cpu = torch.device("cpu")
    assert _compiled.resolve_kernel("torch", m, cpu) is False
    assert _compiled.resolve_kernel("auto", m, cpu) is False  # the full softmax stays on torch
    with pytest.raises(ValueError, match="kernel='numba' cannot be used"):
        _compiled.resolve_kernel("numba", m, cpu)
    with pytest.raises(ValueError, match="kernel must be one of"):
        Word2VecConfig(kernel="cython").validate()
    neg = make_model(torch.tensor([5, 3, 2]), Word2VecConfig(dim=4))
    assert _compiled.resolve_kernel("auto", neg, cpu) is _compiled.AVAILABLE


@pytest.mark.slow  # a fresh interpreter imports torch
def test_without_numba_the_torch_step_trains():
    code = (
        "from companion.word2vec import _compiled, train_word2vec\n"
        "assert not _compiled.AVAILABLE\n"
        "r = train_word2vec([['a', 'b', 'c', 'a', 'b']] * 40, dim=4, window=2, min_count=1, epochs=1, sample=0)\n"
        "print(r.history.steps)\n"
    )
    env = {**__import__("os").environ, "BOOK_NO_NUMBA": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) > 0
