"""word2vec's output layers and architectures: hand-written SGD vs autograd, normalisation."""

from __future__ import annotations

import pytest
import torch

from companion.neural_lm.tree import huffman_tree
from companion.word2vec import (
    CBOW,
    FullSoftmax,
    HierarchicalSoftmax,
    NegativeSampling,
    SkipGram,
    Word2VecBatch,
    combine,
)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny batches gain nothing from threads, and on a busy shared CPU an OpenMP thread that
    waits for a descheduled sibling can make them 50x slower; restore the setting afterwards."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

COUNTS = torch.tensor([40, 25, 12, 9, 5, 3, 2])
V, D = 7, 5


def _head(kind: str):
    torch.manual_seed(0)
    if kind == "full":
        head = FullSoftmax(V, D)
    elif kind == "hs":
        head = HierarchicalSoftmax(D, huffman_tree(COUNTS.tolist()))
    else:
        head = NegativeSampling(V, D, COUNTS, negative=3)
    with torch.no_grad():  # word2vec starts output vectors at 0; make the check non-trivial
        head.weight.normal_(0, 0.5)
    return head


@pytest.mark.parametrize("kind", ["full", "hs", "neg"])
def test_head_sgd_update_equals_an_autograd_step_on_the_summed_loss(kind):
    head = _head(kind)
    h = torch.randn(6, D, generator=torch.Generator().manual_seed(1))
    targets = torch.tensor([0, 3, 6, 3, 1, 2])
    extra = {}
    if kind == "neg":
        rows = head.draw(targets)
        rows[1, 2] = targets[1]  # a noise word equal to the target must be skipped
        extra = {"rows": rows}
    hg = h.clone().requires_grad_(True)
    loss = head.loss(hg, targets, **extra).sum()
    loss.backward()
    w0 = head.weight.detach().clone()
    lr = 0.1
    e, manual_loss = head.sgd_update(h, targets, lr, **extra)
    assert manual_loss.item() == pytest.approx(loss.item(), rel=1e-5)
    assert torch.allclose(e, -lr * hg.grad, atol=1e-6)
    assert torch.allclose(head.weight.detach() - w0, -lr * head.weight.grad, atol=1e-6)


def test_neg_skips_a_noise_word_equal_to_the_target():
    head = _head("neg")
    h = torch.randn(1, D)
    t = torch.tensor([2])
    rows_skip = torch.tensor([[2, 2, 4, 5]])
    rows_plain = torch.tensor([[2, 4, 5]])
    head.negative = 3
    a = head.loss(h, t, rows=rows_skip)
    head.negative = 2
    b = head.loss(h, t, rows=rows_plain)
    assert torch.allclose(a, b)


@pytest.mark.parametrize("kind", ["full", "hs"])
def test_probabilities_sum_to_one_and_match_the_loss(kind):
    head = _head(kind)
    h = torch.randn(5, D) * 2
    logp = head.log_probs_all(h)
    assert logp.shape == (5, V)
    assert torch.allclose(logp.exp().sum(1), torch.ones(5, dtype=logp.dtype), atol=1e-5)
    targets = torch.tensor([0, 1, 4, 6, 2])
    assert torch.allclose(head.loss(h, targets), -logp[torch.arange(5), targets], atol=1e-5)


def test_hs_uses_chapter_twos_huffman_tree_frequent_words_get_short_paths():
    head = _head("hs")
    lengths = head.mask.sum(1)
    assert int(lengths[0]) <= int(lengths[-1])
    assert head.weight.shape == (V - 1, D)


def _sg_batch():
    inputs = torch.tensor([1, 1, 4, 0, 6, 1])
    targets = torch.tensor([0, 2, 0, 3, 3, 5])
    return Word2VecBatch(inputs, None, targets, 6, 0.0)


def _cbow_batch():
    inputs = torch.tensor([1, 2, 2, 4, 0, 6, 1, 5])
    owner = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2])
    targets = torch.tensor([3, 3, 0])
    return Word2VecBatch(inputs, owner, targets, 3, 0.0)


def _model(cls, output):
    m = cls(COUNTS, D, output=output, negative=3, seed=4)
    with torch.no_grad():
        m.head.weight.normal_(0, 0.5)
    return m


@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_skipgram_sgd_step_is_a_gradient_step(output):
    m = _model(SkipGram, output)
    batch = _sg_batch()
    m.head.sampler.generator.manual_seed(9) if output == "neg" else None
    loss = m.example_loss(batch).sum()
    loss.backward()
    v0, u0 = m.in_vectors.detach().clone(), m.out_vectors.detach().clone()
    m.head.sampler.generator.manual_seed(9) if output == "neg" else None
    lr = 0.05
    mean = m.sgd_step(batch, lr)
    assert mean == pytest.approx(loss.item() / 6, rel=1e-5)
    assert torch.allclose(m.in_vectors.detach() - v0, -lr * m.in_vectors.grad, atol=1e-6)
    assert torch.allclose(m.out_vectors.detach() - u0, -lr * m.out_vectors.grad, atol=1e-6)


@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_cbow_sgd_step_follows_the_c_code(output):
    """Output side: the exact gradient step. Context side: the whole error to every context
    word, i.e. |C| times the gradient of the mean (the C code's and gensim's convention)."""
    m = _model(CBOW, output)
    batch = _cbow_batch()
    m.head.sampler.generator.manual_seed(9) if output == "neg" else None
    h = m.hidden(batch)
    h.retain_grad()
    loss = m.head.loss(h, batch.targets).sum()
    loss.backward()
    counts = torch.bincount(batch.owner).float()
    # autograd's gradient of the mean: dL/dh / |C| to each context word
    exact = torch.zeros_like(m.in_vectors).index_add_(0, batch.inputs, (h.grad / counts[:, None])[batch.owner])
    assert torch.allclose(m.in_vectors.grad, exact, atol=1e-6)
    v0, u0 = m.in_vectors.detach().clone(), m.out_vectors.detach().clone()
    m.head.sampler.generator.manual_seed(9) if output == "neg" else None
    lr = 0.05
    m.sgd_step(batch, lr)
    c_code = torch.zeros_like(m.in_vectors).index_add_(0, batch.inputs, h.grad[batch.owner])
    assert torch.allclose(m.in_vectors.detach() - v0, -lr * c_code, atol=1e-6)
    assert torch.allclose(m.out_vectors.detach() - u0, -lr * m.out_vectors.grad, atol=1e-6)


def test_cbow_hidden_is_the_mean_of_the_context_vectors():
    m = _model(CBOW, "neg")
    b = _cbow_batch()
    h = m.hidden(b)
    v = m.in_vectors.detach()
    assert torch.allclose(h[0], v[[1, 2, 2]].mean(0))
    assert torch.allclose(h[2], v[[6, 1, 5]].mean(0))


def test_initialisation_as_in_the_c_code_and_seeded():
    a, b = SkipGram(COUNTS, 10, seed=1), SkipGram(COUNTS, 10, seed=1)
    assert torch.equal(a.in_vectors, b.in_vectors)
    assert float(a.in_vectors.detach().abs().max()) <= 0.5 / 10
    assert float(a.out_vectors.detach().abs().max()) == 0.0
    assert not torch.equal(a.in_vectors, SkipGram(COUNTS, 10, seed=2).in_vectors)


def test_combine_input_output_average_and_hs_refuses():
    m = _model(SkipGram, "neg")
    v, u = m.in_vectors.detach(), m.out_vectors.detach()
    assert torch.equal(combine(m), v)
    assert torch.allclose(combine(m, "average"), (v + u) / 2)
    assert torch.allclose(combine(m, "sum"), v + u)
    assert torch.equal(m.vectors("output"), u)
    with pytest.raises(ValueError, match="tree node"):
        combine(_model(SkipGram, "hs"), "average")
    with pytest.raises(ValueError, match="which"):
        combine(m, "both")
    with pytest.raises(TypeError, match="word2vec model"):
        combine(torch.nn.Linear(2, 2))


def test_bad_inputs_rejected_clearly():
    with pytest.raises(ValueError, match="output"):
        SkipGram(COUNTS, 4, output="nce")
    with pytest.raises(ValueError, match="dim"):
        SkipGram(COUNTS, 0)
    with pytest.raises(ValueError, match="counts"):
        CBOW(torch.tensor([3]), 4)
    with pytest.raises(ValueError, match="negative"):
        SkipGram(COUNTS, 4, negative=0)
    m = SkipGram(COUNTS, 4)
    with pytest.raises(ValueError, match="outside"):
        m.loss(Word2VecBatch(torch.tensor([0, 7]), None, torch.tensor([1, 2]), 2, 0.0))
    with pytest.raises(TypeError, match="Word2VecBatch"):
        m.loss((torch.tensor([0]), torch.tensor([1])))
    with pytest.raises(ValueError, match="lr"):
        m.sgd_step(_sg_batch(), 0.0)
    with pytest.raises(ValueError, match="owner"):
        CBOW(COUNTS, 4).loss(_sg_batch())
    with pytest.raises(TypeError, match="BinaryTree"):
        HierarchicalSoftmax(4, tree="huffman")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", [SkipGram, CBOW])
@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_sgd_step_on_gpu_matches_cpu(cls, output):
    batch = _sg_batch() if cls is SkipGram else _cbow_batch()
    cpu, gpu = _model(cls, output), _model(cls, output).to("cuda")
    if output == "neg":  # same noise words on both devices
        rows = cpu.head.draw(batch.targets)
        cpu.head.draw = lambda t: rows
        gpu.head.draw = lambda t: rows.cuda()
    cpu.sgd_step(batch, 0.1)
    gpu.sgd_step(Word2VecBatch(*(x.cuda() if isinstance(x, torch.Tensor) else x for x in batch)), 0.1)
    assert torch.allclose(cpu.in_vectors, gpu.in_vectors.cpu(), atol=1e-5)
    assert torch.allclose(cpu.out_vectors, gpu.out_vectors.cpu(), atol=1e-5)
