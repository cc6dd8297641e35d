"""NNLM and log-bilinear LM: shapes, distributions, parameter counts, bad inputs, seeding,
and a tiny training run through companion.train.fit."""

from __future__ import annotations

import math

import pytest
import torch

from companion.neural_lm import (
    LBL,
    NNLM,
    LBLConfig,
    NNLMConfig,
    SennaConfig,
    balanced_tree,
    clustered_tree,
    iterate_minibatches,
    ngram_examples,
    paper_parameter_count,
    perplexity_evaluator,
    perplexity_of_model,
    token_log_probs,
)
from companion.train import TrainConfig, fit

V = 30


def markov_stream(n_tokens: int, seed: int) -> torch.Tensor:
    """A Markov source: next = perm[prev] + one of {0, 1, 2} (mod V), uniformly. The best possible
    perplexity is 3; a uniform guess scores V = 30."""
    perm = torch.randperm(V, generator=torch.Generator().manual_seed(123)).tolist()
    g = torch.Generator().manual_seed(seed)
    noise = torch.randint(0, 3, (n_tokens,), generator=g).tolist()
    ids = [0]
    for t in range(n_tokens - 1):
        ids.append((perm[ids[-1]] + noise[t]) % V)
    return torch.tensor(ids)


def counts_of(ids: torch.Tensor) -> list[int]:
    return (torch.bincount(ids, minlength=V) + 1).tolist()


MODELS = {
    "nnlm-full-direct": lambda: NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, direct=True)),
    "nnlm-full": lambda: NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, direct=False)),
    "nnlm-h0": lambda: NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=0, direct=True)),
    "nnlm-hs-huffman": lambda: NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, output="hsoftmax"), counts=list(range(1, V + 1))),
    "nnlm-hs-balanced": lambda: NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, output="hsoftmax", tree="balanced")),
    "nnlm-hs-clustered": lambda: NNLM(
        NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, output="hsoftmax"),
        tree=clustered_tree(torch.randn(V, 4, generator=torch.Generator().manual_seed(0))),
    ),
    "lbl-full": lambda: LBL(LBLConfig(vocab_size=V, n=3, dim=8)),
    "lbl-untied": lambda: LBL(LBLConfig(vocab_size=V, n=3, dim=8, tie=False)),
    "lbl-hs": lambda: LBL(LBLConfig(vocab_size=V, n=3, dim=8, output="hsoftmax", tree="balanced")),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shapes_and_distributions(name):
    model = MODELS[name]()
    ctx = torch.randint(0, V, (6, 2), generator=torch.Generator().manual_seed(0))
    tgt = torch.randint(0, V, (6,), generator=torch.Generator().manual_seed(1))
    lp = model.log_prob(ctx, tgt)
    assert lp.shape == (6,) and (lp <= 0).all()
    table = model.log_probs_all(ctx)
    assert table.shape == (6, V)
    assert torch.allclose(table.exp().sum(1), torch.ones(6), atol=1e-5)
    assert torch.allclose(table.gather(1, tgt[:, None]).squeeze(1), lp, atol=1e-5)
    assert torch.allclose(model(ctx, tgt), lp) and torch.allclose(model(ctx), table)
    p = model.next_word_distribution([3, 4])
    assert p.shape == (V,) and abs(float(p.sum()) - 1) < 1e-5 and (p >= 0).all()
    assert model.next_word_distribution(ctx).shape == (6, V)
    loss = model.loss((ctx, tgt))
    assert loss.dim() == 0 and torch.isclose(loss, -lp.mean(), atol=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    assert model.embeddings.shape == (V, 8)


def test_nnlm_logits_are_b_plus_Wx_plus_U_tanh():
    torch.manual_seed(0)
    model = NNLM(NNLMConfig(vocab_size=V, n=4, dim=5, hidden=7, direct=True))
    with torch.no_grad():
        model.out.bias.normal_()
    ctx = torch.randint(0, V, (3, 3))
    x = torch.cat([model.C.weight[ctx[:, i]] for i in range(3)], dim=1)  # concatenation, by hand
    a = torch.tanh(x @ model.H.weight.T + model.H.bias)
    y = model.out.bias + x @ model.W.T + a @ model.U.T
    assert model.U.shape == (V, 7) and model.W.shape == (V, 15)
    assert torch.allclose(model.logits(ctx), y, atol=1e-5)
    assert torch.allclose(torch.log_softmax(y, -1), model.log_probs_all(ctx), atol=1e-5)
    no_direct = NNLM(NNLMConfig(vocab_size=V, n=4, dim=5, hidden=7, direct=False))
    with pytest.raises(ValueError, match="no direct"):
        no_direct.W


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("n,m,h", [(5, 60, 50), (3, 4, 9), (2, 1, 1)])
def test_parameter_count_matches_the_paper_formula(n, m, h, direct):
    model = NNLM(NNLMConfig(vocab_size=97, n=n, dim=m, hidden=h, direct=direct))
    assert model.num_parameters() == paper_parameter_count(97, n, m, h, direct)
    # the chapter's bias-free version, (n m + h)|V| + (n-1) m h, differs by the |V| + h biases
    if direct:
        assert paper_parameter_count(97, n, m, h) - (97 + h) == (n * m + h) * 97 + (n - 1) * m * h


def test_lbl_prediction_is_sum_of_position_matrices():
    model = LBL(LBLConfig(vocab_size=V, n=4, dim=6))
    ctx = torch.randint(0, V, (5, 3))
    r = model.R.weight
    r_hat = sum(r[ctx[:, i]] @ model.Q[i].T for i in range(3))
    assert torch.allclose(model.features(ctx), r_hat, atol=1e-6)
    scores = r_hat @ r.T + model.out.bias  # tied: the output vectors are the word vectors
    assert model.out.weight is model.R.weight
    assert torch.allclose(model.log_probs_all(ctx), torch.log_softmax(scores, -1), atol=1e-5)


@pytest.mark.parametrize("cls,cfg", [(NNLM, NNLMConfig), (LBL, LBLConfig)])
def test_bad_inputs_give_clear_errors(cls, cfg):
    model = cls(cfg(vocab_size=V, n=3, dim=4))
    good = torch.zeros(2, 2, dtype=torch.long)
    with pytest.raises(ValueError, match=r"\[N, 2\]"):
        model.log_prob(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        model.loss((torch.full((2, 2), V), torch.zeros(2, dtype=torch.long)))
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        model.loss((good, torch.tensor([0, -1])))
    with pytest.raises(TypeError, match="integer"):
        model.loss((good.float(), torch.zeros(2, dtype=torch.long)))
    with pytest.raises(TypeError, match="pair"):
        model.loss(good)
    with pytest.raises(ValueError, match="n must be >= 2"):
        cls(cfg(vocab_size=V, n=1))
    with pytest.raises(ValueError, match="vocab_size"):
        cls(cfg(vocab_size=1))
    with pytest.raises(ValueError, match="output"):
        cls(cfg(vocab_size=V, output="softmax"))
    with pytest.raises(ValueError, match="counts"):
        cls(cfg(vocab_size=V, output="hsoftmax", tree="huffman"))
    with pytest.raises(ValueError, match="leaves"):
        cls(cfg(vocab_size=V, output="hsoftmax"), tree=balanced_tree(V + 1))
    with pytest.raises(TypeError, match="int"):
        cls(cfg(vocab_size=V, dim=2.5))
    with pytest.raises(TypeError, match="Config"):
        cls({"vocab_size": V})


def test_paper_letters_are_aliases_of_the_book_names():
    """m, h (Bengio et al.'s letters) set dim, hidden (the book's d, d_h); nothing else changes."""
    old = NNLMConfig(vocab_size=V, n=3, m=7, h=9)
    assert (old.dim, old.hidden) == (7, 9) and old == NNLMConfig(vocab_size=V, n=3, dim=7, hidden=9)
    assert LBLConfig(vocab_size=V, m=5).dim == 5
    assert SennaConfig(vocab_size=V, m=3, h=4) == SennaConfig(vocab_size=V, dim=3, hidden=4)


def test_nnlm_specific_bad_inputs():
    with pytest.raises(ValueError, match="direct=True"):
        NNLM(NNLMConfig(vocab_size=V, hidden=0, direct=False))
    with pytest.raises(ValueError, match="h"):
        NNLM(NNLMConfig(vocab_size=V, hidden=-1))
    with pytest.raises(ValueError, match="n must be >= 2"):
        ngram_examples([1, 2, 3], 1)
    with pytest.raises(ValueError, match="at least"):
        ngram_examples([1, 2], 3)


def test_seeded_construction_and_training_are_deterministic():
    a = NNLM(NNLMConfig(vocab_size=V, n=3, dim=4, hidden=5), seed=3)
    b = NNLM(NNLMConfig(vocab_size=V, n=3, dim=4, hidden=5), seed=3)
    c = NNLM(NNLMConfig(vocab_size=V, n=3, dim=4, hidden=5), seed=4)
    for (k, p), q, r in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values()):
        assert torch.equal(p, q), k
    assert not all(torch.equal(p, r) for p, r in zip(a.state_dict().values(), c.state_dict().values()))
    ctx, tgt = ngram_examples(markov_stream(400, 0), 3)
    cfg = TrainConfig(epochs=1, lr=1e-2, progress=False, device="cpu")
    h1 = fit(a, lambda e: iterate_minibatches(ctx, tgt, batch_size=64, seed=e), config=cfg)
    h2 = fit(b, lambda e: iterate_minibatches(ctx, tgt, batch_size=64, seed=e), config=cfg)
    assert h1.step_loss == h2.step_loss


@pytest.mark.parametrize("kind", ["nnlm-full-direct", "nnlm-hs-huffman", "lbl-full"])
def test_tiny_training_run_beats_uniform(kind):
    torch.manual_seed(0)
    train_ids, valid_ids = markov_stream(3000, 0), markov_stream(600, 1)
    ctx, tgt = ngram_examples(train_ids, 3)
    vctx, vtgt = ngram_examples(valid_ids, 3)
    if kind == "nnlm-hs-huffman":
        model = NNLM(NNLMConfig(vocab_size=V, n=3, dim=16, hidden=32, output="hsoftmax"), counts=counts_of(train_ids))
    elif kind == "lbl-full":
        model = LBL(LBLConfig(vocab_size=V, n=3, dim=16))
    else:
        model = NNLM(NNLMConfig(vocab_size=V, n=3, dim=16, hidden=32))
    before = perplexity_of_model(model, vctx, vtgt)
    hist = fit(
        model,
        lambda e: iterate_minibatches(ctx, tgt, batch_size=64, seed=e),
        config=TrainConfig(epochs=6, lr=2e-2, progress=False, device="cpu", monitor="val_ppl"),
        evaluate=perplexity_evaluator(vctx, vtgt),
    )
    after = perplexity_of_model(model, vctx, vtgt)
    assert before > 0.8 * V  # starts near uniform
    # the source has 3 equally likely next words; a good model approaches perplexity 3
    assert 3.0 < after < 4.0, (kind, before, after)
    assert hist.best is not None and math.isclose(hist.best["val_ppl"], after, rel_tol=1e-5)
    lp = token_log_probs(model, vctx, vtgt, batch_size=100)
    assert lp.dtype == torch.float64 and lp.shape == vtgt.shape


def test_iterate_minibatches_covers_everything_once():
    x = torch.arange(10)
    y = torch.arange(10) * 2
    seen = torch.cat([a for a, _ in iterate_minibatches(x, y, batch_size=3, seed=1)])
    assert sorted(seen.tolist()) == list(range(10))
    for a, b in iterate_minibatches(x, y, batch_size=4, seed=1):
        assert torch.equal(b, a * 2)
    with pytest.raises(ValueError, match="same first"):
        list(iterate_minibatches(x, y[:3], batch_size=2))


@pytest.mark.gpu
@pytest.mark.parametrize("output", ["full", "hsoftmax"])
def test_nnlm_on_cuda_matches_cpu(output):
    cpu = NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, output=output, tree="balanced"))
    gpu = NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16, output=output, tree="balanced"), device="cuda")
    ctx, tgt = ngram_examples(markov_stream(200, 0), 3)
    assert torch.allclose(cpu.log_prob(ctx, tgt), gpu.log_prob(ctx.cuda(), tgt.cuda()).cpu(), atol=1e-4)
    gpu.loss((ctx.cuda(), tgt.cuda())).backward()
    hist = fit(gpu, [(ctx, tgt)] * 5, config=TrainConfig(epochs=2, progress=False, device="cuda"))
    assert hist.steps == 10 and next(gpu.parameters()).device.type == "cuda"
    p = gpu.next_word_distribution([1, 2])
    assert p.device.type == "cuda" and abs(float(p.sum()) - 1) < 1e-4


# ---------------------------------------------------------------------------- recipes


def tiny_corpus():
    from companion.data import Vocab

    sents = [["the", "cat", "sat"], ["a", "dog", "ran", "far"], ["the", "end"]]
    vocab = Vocab([w for s in sents for w in s], specials=("</s>",))
    return sents, vocab


def test_lm_examples_predict_the_same_tokens_as_the_ngram_models():
    from companion.counting import ModifiedKneserNey
    from companion.neural_lm import lm_examples

    sents, vocab = tiny_corpus()
    ctx, tgt = lm_examples(sents, vocab, n=3)
    expected = [w for s in sents for w in s + ["</s>"]]
    assert vocab.decode(tgt) == expected
    assert vocab.decode(ctx[0]) == ["</s>", "</s>"] and vocab.decode(ctx[4]) == ["sat", "</s>"]
    import warnings

    with warnings.catch_warnings():  # tiny data: chapter 1 warns about its discount fallback
        warnings.simplefilter("ignore")
        lm = ModifiedKneserNey.fit(sents, 3)
    assert len(lm.token_logprobs(sents)) == tgt.shape[0]
    with pytest.raises(ValueError, match="<eos>"):
        lm_examples(sents, vocab, n=3, eos="<eos>")
    with pytest.raises(ValueError, match="n must be"):
        lm_examples(sents, vocab, n=1)


def test_train_lm_sample_words_and_presets():
    from companion.neural_lm import TrainPlan, lbl_preset, nnlm_preset, sample_words, train_lm

    ctx, tgt = ngram_examples(markov_stream(2000, 0), 3)
    vctx, vtgt = ngram_examples(markov_stream(400, 1), 3)
    model = NNLM(NNLMConfig(vocab_size=V, n=3, dim=8, hidden=16))
    hist = train_lm(model, (ctx, tgt), (vctx, vtgt), TrainPlan(batch_size=128, epochs=1.5, lr=1e-2), device="cpu", progress=False)
    assert hist.steps == round(1.5 * math.ceil(ctx.shape[0] / 128))
    assert len(hist.evals) >= 4 and hist.best["val_ppl"] < 20
    a = sample_words(model, [1, 2], 20, seed=3)
    assert a == sample_words(model, [1, 2], 20, seed=3) and len(a) == 20 and all(0 <= i < V for i in a)
    with pytest.raises(ValueError, match="context"):
        sample_words(model, [1], 5)
    for variant in ("hsoftmax", "hsoftmax_direct", "full", "direct"):
        for scale in ("ci", "laptop", "gpu"):
            cfg, plan = nnlm_preset(100, variant, scale=scale)
            cfg.validate()
            assert plan.epochs > 0
    assert nnlm_preset(100, "hsoftmax", scale="ci")[1].epochs < nnlm_preset(100, "hsoftmax", scale="laptop")[1].epochs
    lbl_preset(100, scale="ci")[0].validate()
    with pytest.raises(ValueError, match="variant"):
        nnlm_preset(100, "huge")


@pytest.mark.parametrize("output", ["full", "hsoftmax"])
def test_sparse_gradients_equal_dense_ones(output):
    kw = dict(vocab_size=V, n=3, m=6, h=5, direct=True, output=output, tree="balanced")
    dense, sparse = NNLM(NNLMConfig(**kw), seed=1), NNLM(NNLMConfig(**kw, sparse=True), seed=1)
    ctx, tgt = ngram_examples(markov_stream(100, 0), 3)
    dense.loss((ctx, tgt)).backward()
    sparse.loss((ctx, tgt)).backward()
    assert sparse.C.weight.grad.is_sparse
    for (name, p), q in zip(dense.named_parameters(), sparse.parameters()):
        g = q.grad.to_dense() if q.grad.is_sparse else q.grad
        assert torch.allclose(p.grad, g, atol=1e-6), name
    opt = torch.optim.SGD(sparse.parameters(), lr=0.5)
    before = float(sparse.loss((ctx, tgt)).detach())
    for _ in range(5):
        opt.zero_grad()
        sparse.loss((ctx, tgt)).backward()
        opt.step()
    assert float(sparse.loss((ctx, tgt)).detach()) < before
