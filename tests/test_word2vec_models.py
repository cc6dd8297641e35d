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

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread

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


def _block_inputs(seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(2, 5, D, generator=g)  # 2 blocks, 5 hidden vectors each
    A = (torch.rand(2, 5, 3, generator=g) < 0.6).float()  # 3 centres per block
    targets = torch.tensor([[0, 3, 6], [3, 1, 3]])
    return X, A, targets


@pytest.mark.parametrize("kind", ["full", "hs", "neg"])
def test_head_sgd_update_equals_an_autograd_step_on_the_summed_loss(kind):
    head = _head(kind)
    X, A, targets = _block_inputs()
    extra = {}
    if kind == "neg":
        rows, labels, weights = head.slots(targets)
        rows[0, 1, 2] = targets[0, 1]  # a noise word equal to the target must be skipped
        weights[0, 1, 2] = 0.0
        extra = {"slots": (rows, labels, weights)}
    Xg = X.clone().requires_grad_(True)
    loss = head.loss(Xg, A, targets, **extra)
    assert loss.shape == A.shape and bool((loss[A == 0] == 0).all())
    loss.sum().backward()
    w0 = head.weight.detach().clone()
    lr = 0.1
    E, manual_loss = head.sgd_update(X, A, targets, lr, **extra)
    assert manual_loss.item() == pytest.approx(loss.sum().item(), rel=1e-5)
    assert torch.allclose(E, -lr * Xg.grad, atol=1e-6)
    assert torch.allclose(head.weight.detach() - w0, -lr * head.weight.grad, atol=1e-6)


@pytest.mark.parametrize("kind", ["full", "hs", "neg"])
def test_head_block_loss_equals_the_loss_of_each_pair(kind):
    """The block product scores exactly the pairs A selects, each as a one-pair problem."""
    head = _head(kind)
    X, A, targets = _block_inputs(2)
    slots = head.slots(targets) if kind == "neg" else None
    block = head.loss(X, A, targets, slots) if kind == "neg" else head.loss(X, A, targets)
    for b, q, i in A.nonzero().tolist():
        x = X[b, q].view(1, 1, D)
        one = torch.ones(1, 1, 1)
        t = targets[b, i].view(1, 1)
        if kind == "neg":
            single = head.loss(x, one, t, tuple(z[b, i].view(1, 1, -1) for z in slots))
        else:
            single = head.loss(x, one, t)
        assert block[b, q, i].item() == pytest.approx(single.item(), rel=1e-5)


def test_neg_skips_a_noise_word_equal_to_the_target():
    head = _head("neg")
    x, one, t = torch.randn(1, 1, D), torch.ones(1, 1, 1), torch.tensor([[2]])
    rows, labels, weights = head.slots(t)
    rows[0, 0, 1] = 2
    weights[0, 0, 1] = 0.0  # what slots() does for such a draw
    keep = [0, 2, 3]
    a = head.loss(x, one, t, (rows, labels, weights))
    b = head.loss(x, one, t, (rows[..., keep], labels[..., keep], weights[..., keep]))
    assert torch.allclose(a, b)
    r, _, w = head.slots(torch.full((1, 1000), 2))
    assert bool(((r[..., 1:] == 2) == (w[..., 1:] == 0)).all())
    assert bool((r[..., 1:] == 2).any())  # the case does occur


@pytest.mark.parametrize("kind", ["full", "hs"])
def test_probabilities_sum_to_one_and_match_the_loss(kind):
    head = _head(kind)
    h = torch.randn(5, D) * 2
    logp = head.log_probs_all(h)
    assert logp.shape == (5, V)
    assert torch.allclose(logp.exp().sum(1), torch.ones(5, dtype=logp.dtype), atol=1e-5)
    targets = torch.tensor([0, 1, 4, 6, 2])
    pair = head.loss(h.view(5, 1, D), torch.ones(5, 1, 1), targets.view(5, 1)).view(5)
    assert torch.allclose(pair, -logp[torch.arange(5), targets], atol=1e-5)


def test_hs_uses_chapter_twos_huffman_tree_frequent_words_get_short_paths():
    head = _head("hs")
    lengths = head.mask.sum(1)
    assert int(lengths[0]) <= int(lengths[-1])
    assert head.weight.shape == (V - 1, D)
    rows, labels, weights = head.slots(torch.tensor([[0]]))
    assert rows.shape[-1] == int(lengths[0])  # trimmed to the longest path asked for


def _batch():
    """Two blocks of 3 centres and 6 tokens; the mask says which token predicts which centre."""
    tokens = torch.tensor([[1, 1, 4, 0, 6, 2], [5, 3, 3, 2, 0, 6]])
    targets = torch.tensor([[0, 2, 3], [3, 5, 1]])
    mask = torch.zeros(2, 6, 3, dtype=torch.bool)
    for b, t, i in [(0, 0, 0), (0, 1, 0), (0, 3, 1), (0, 4, 1), (0, 5, 1), (0, 2, 2),
                    (1, 0, 0), (1, 1, 0), (1, 2, 1), (1, 4, 1), (1, 5, 2)]:
        mask[b, t, i] = True
    return Word2VecBatch(tokens, mask, targets, 6, 0.0)


def _model(cls, output):
    m = cls(COUNTS, D, output=output, negative=3, seed=4)
    with torch.no_grad():
        m.head.weight.normal_(0, 0.5, generator=torch.Generator().manual_seed(5))
    return m


def _reseed(m, output):
    if output == "neg":
        m.head.sampler.generator.manual_seed(9)


@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_skipgram_sgd_step_is_a_gradient_step(output):
    m = _model(SkipGram, output)
    batch = _batch()
    _reseed(m, output)
    total, n = m.pair_loss(batch)
    assert int(n) == 11
    total.backward()
    v0, u0 = m.in_vectors.detach().clone(), m.out_vectors.detach().clone()
    _reseed(m, output)
    lr = 0.05
    mean, n_ex = m.sgd_step(batch, lr)
    assert n_ex == 11 and mean == pytest.approx(total.item() / 11, rel=1e-5)
    assert torch.allclose(m.in_vectors.detach() - v0, -lr * m.in_vectors.grad, atol=1e-6)
    assert torch.allclose(m.out_vectors.detach() - u0, -lr * m.out_vectors.grad, atol=1e-6)


@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_cbow_sgd_step_follows_the_c_code(output):
    """Output side: the exact gradient step. Context side: the whole error to every context
    word, i.e. |C| times the gradient of the mean (the C code's and gensim's convention)."""
    m = _model(CBOW, output)
    batch = _batch()
    _reseed(m, output)
    H, A, n = m.hidden(batch)
    assert int(n) == 6
    H.retain_grad()
    m.head.loss(H, A, batch.targets).sum().backward()
    b, t, i = batch.mask.nonzero(as_tuple=True)
    counts = batch.mask.sum(1).float()  # [nb, g]
    rows = batch.tokens[b, t]
    # autograd's gradient of the mean: dL/dh / |C| to each context word
    exact = torch.zeros_like(m.in_vectors).index_add_(0, rows, H.grad[b, i] / counts[b, i, None])
    assert torch.allclose(m.in_vectors.grad, exact, atol=1e-6)
    v0, u0 = m.in_vectors.detach().clone(), m.out_vectors.detach().clone()
    _reseed(m, output)
    lr = 0.05
    m.sgd_step(batch, lr)
    c_code = torch.zeros_like(m.in_vectors).index_add_(0, rows, H.grad[b, i])
    assert torch.allclose(m.in_vectors.detach() - v0, -lr * c_code, atol=1e-6)
    assert torch.allclose(m.out_vectors.detach() - u0, -lr * m.out_vectors.grad, atol=1e-6)


@pytest.mark.parametrize("cls", [SkipGram, CBOW])
@pytest.mark.parametrize("output", ["hs", "neg"])
def test_update_cap_scales_only_the_rows_used_by_more_pairs_than_the_cap(cls, output):
    batch = _batch()
    plain, capped = _model(cls, output), _model(cls, output)
    v0, u0 = plain.in_vectors.detach().clone(), plain.out_vectors.detach().clone()
    _reseed(plain, output)
    plain.sgd_step(batch, 0.05)
    _reseed(capped, output)
    capped.sgd_step(batch, 0.05, cap=1.5)
    dv_plain, dv_cap = plain.in_vectors.detach() - v0, capped.in_vectors.detach() - v0
    # input side: uses of a row = the pairs (SG) or centres (CBOW) its tokens serve
    uses = torch.zeros(V).index_add_(0, batch.tokens.reshape(-1), batch.mask.sum(2).float().reshape(-1))
    factor = (1.5 / uses.clamp(min=1.5)).unsqueeze(1)
    assert torch.allclose(dv_cap, dv_plain * factor, atol=1e-6)
    assert bool((uses > 1.5).any()) and bool((uses[uses > 0] <= 1.5).any())  # both kinds occur
    du_plain, du_cap = plain.out_vectors.detach() - u0, capped.out_vectors.detach() - u0
    assert not torch.allclose(du_plain, du_cap) and bool((du_cap.norm(dim=1) <= du_plain.norm(dim=1) + 1e-6).all())
    with pytest.raises(ValueError, match="cap"):
        plain.sgd_step(batch, 0.05, cap=0)


def test_cbow_hidden_is_the_mean_of_the_context_vectors():
    m = _model(CBOW, "neg")
    H, A, _ = m.hidden(_batch())
    v = m.in_vectors.detach()
    assert torch.allclose(H[0, 1], v[[0, 6, 2]].mean(0))
    assert torch.allclose(H[1, 2], v[6])
    assert torch.equal(A[0], torch.eye(3))


def test_a_centre_without_context_is_no_example():
    m = _model(CBOW, "neg")
    b = _batch()
    mask = b.mask.clone()
    mask[1, :, 2] = False
    H, A, n = m.hidden(b._replace(mask=mask))
    assert int(n) == 5 and A[1, 2, 2] == 0
    u0 = m.out_vectors.detach().clone()
    m.sgd_step(b._replace(mask=torch.zeros_like(mask)), 0.1)
    assert torch.equal(m.out_vectors.detach(), u0)


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
    b = _batch()
    with pytest.raises(ValueError, match="outside"):
        m.loss(b._replace(tokens=b.tokens + 3))
    with pytest.raises(ValueError, match="mask"):
        m.loss(b._replace(mask=b.mask[:, :, :2]))
    with pytest.raises(TypeError, match="Word2VecBatch"):
        m.loss((torch.tensor([0]), torch.tensor([1])))
    with pytest.raises(ValueError, match="lr"):
        m.sgd_step(b, 0.0)
    with pytest.raises(ValueError, match="X must be"):
        m.head.loss(torch.zeros(2, 3), torch.zeros(2, 3, 1), torch.zeros(2, 1, dtype=torch.long))
    with pytest.raises(TypeError, match="BinaryTree"):
        HierarchicalSoftmax(4, tree="huffman")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", [SkipGram, CBOW])
@pytest.mark.parametrize("output", ["full", "hs", "neg"])
def test_sgd_step_on_gpu_matches_cpu(cls, output):
    batch = _batch()
    cpu, gpu = _model(cls, output), _model(cls, output).to("cuda")
    if output == "neg":  # same noise words on both devices
        slots = cpu.head.slots(batch.targets)
        cpu.head.slots = lambda t: slots
        gpu.head.slots = lambda t: tuple(z.cuda() for z in slots)
    cpu.sgd_step(batch, 0.1)
    gpu.sgd_step(Word2VecBatch(*(x.cuda() if isinstance(x, torch.Tensor) else x for x in batch)), 0.1)
    assert torch.allclose(cpu.in_vectors, gpu.in_vectors.cpu(), atol=1e-5)
    assert torch.allclose(cpu.out_vectors, gpu.out_vectors.cpu(), atol=1e-5)
