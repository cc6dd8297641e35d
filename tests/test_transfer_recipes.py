"""Chapter 10d's recipes: feature extraction, chain-thaw, L2-SP, teacher annealing, SeqAE."""

from __future__ import annotations

import copy

import pytest
import torch

from companion.transfer import recipes as R
from companion.transfer import seqae as S
from companion.transfer.finetune import MultiTask, batch, encoder_layers, epoch_batches
from companion.transformer.bert import BertConfig, BertEncoder, BertForSequence

torch.set_num_threads(1)


def tiny_classifier(seed: int = 0, n_layer: int = 2) -> BertForSequence:
    enc = BertEncoder(BertConfig(vocab_size=30, max_len=16, n_layer=n_layer, d_model=16, n_head=2), seed=seed)
    model = BertForSequence(enc, 2, pooling="mean", seed=seed)
    model.pooler.requires_grad_(False)
    return model


def tiny_batches(model, n: int = 16, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    enc = [(torch.randint(5, 30, (6,), generator=g).tolist(), None) for _ in range(n)]
    labels = [int(a[0] > 17) for a, _ in enc]
    return epoch_batches(model.encoder.config, enc, labels, 8, seed)


# ------------------------------------------------------------------------- feature extraction

def test_freeze_encoder_freezes_every_encoder_parameter():
    model = tiny_classifier()
    n = R.freeze_encoder(model)
    enc = [p for layer in encoder_layers(model) for p in layer.parameters()]
    assert n == sum(p.numel() for p in enc) > 0
    assert not any(p.requires_grad for p in enc)
    assert all(p.requires_grad for p in model.head.parameters())


def test_scalar_mix_trains_only_on_features():
    g = torch.Generator().manual_seed(0)
    feats = torch.randn(40, 3, 8, generator=g)
    y = (feats[:, 2, 0] > 0).long().tolist()
    head = R.train_scalar_mix(feats, y, 2, epochs=40, lr=3e-2, batch_size=8)
    acc = (R.predict_scalar_mix(head, feats).argmax(-1) == torch.tensor(y).numpy()).mean()
    assert acc > 0.9
    with pytest.raises(ValueError, match="one row per label"):
        R.train_scalar_mix(feats, y[:3], 2)


# --------------------------------------------------------------------------------- chain-thaw

def test_chain_thaw_unfreezes_exactly_one_layer_per_stage():
    model = tiny_classifier(n_layer=3)
    stages = R.chain_thaw_stages(model)
    assert [s.name for s in stages] == ["new layers", "embeddings", "block 1", "block 2", "block 3", "all"]
    layers = encoder_layers(model)
    for i, stage in enumerate(stages[1:-1]):
        R.thaw(model, stage)
        trainable = [k for k, layer in enumerate(layers) if any(p.requires_grad for p in layer.parameters())]
        assert trainable == [i]
        assert not any(p.requires_grad for p in model.head.parameters())
    R.thaw(model, stages[0])
    assert all(p.requires_grad for p in model.head.parameters())
    assert not any(p.requires_grad for layer in layers for p in layer.parameters())
    R.thaw(model, stages[-1])
    assert not any(p.requires_grad for p in model.pooler.parameters())  # frozen pooler stays frozen


def test_stage_steps_split_the_budget():
    assert R.stage_steps(20, 6) == [4, 4, 3, 3, 3, 3]
    assert sum(R.stage_steps(48, 9)) == 48
    with pytest.raises(ValueError, match="total >= n_stages"):
        R.stage_steps(3, 5)


def test_chain_thaw_moves_only_its_stage_and_keeps_the_budget():
    model = tiny_classifier(n_layer=2)
    batches = tiny_batches(model)
    before = copy.deepcopy(model.state_dict())
    hist = R.chain_thaw(model, batches, R.RecipeConfig(lr=1e-3, head_lr=1e-2), total_steps=10)
    assert [name for name, _ in hist] == ["new layers", "embeddings", "block 1", "block 2", "all"]
    assert sum(h.steps for _, h in hist) == 10
    changed = [k for k in before if not torch.equal(before[k], model.state_dict()[k])]
    assert any(k.startswith("head") for k in changed) and any(k.startswith("encoder.blocks.1") for k in changed)


# ------------------------------------------------------------------------------------- L2-SP

def test_l2sp_penalty_is_zero_at_start_and_its_gradient_points_back():
    model = tiny_classifier()
    pull = R.PullTowards(model, 2.0, "pretrained")
    assert float(pull.penalty().detach()) == 0.0
    w0 = [p.detach().clone() for p in pull.params]
    with torch.no_grad():
        for p in pull.params:
            p.add_(0.1 * torch.randn_like(p))
    model.zero_grad()
    pull.penalty().backward()
    for p, t in zip(pull.params, w0):
        assert torch.allclose(p.grad, 2.0 * (p.detach() - t), atol=1e-6)
        step = p.detach() - 0.1 * p.grad
        assert (step - t).norm() < (p.detach() - t).norm()  # a gradient step moves towards w0


def test_pull_step_anchors_differ_only_in_target():
    model = tiny_classifier()
    pre = R.PullTowards(model, 1.0, "pretrained")
    zero = R.PullTowards(model, 1.0, "zero")
    assert float(zero.penalty()) > 0
    head = {id(p) for p in model.head.parameters()}
    assert not any(id(p) in head for p in pre.params)  # the head is not pulled
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    w = pre.params[-1]
    before = w.detach().clone()
    zero.step(opt)
    assert torch.allclose(w.detach(), 0.5 * before)
    pre_ref = R.PullTowards(model, 1.0, "pretrained")
    pre_ref.step(opt)  # at its own anchor: no move
    assert torch.allclose(w.detach(), 0.5 * before)
    with pytest.raises(ValueError, match="anchor"):
        R.PullTowards(model, 1.0, "origin")
    with pytest.raises(ValueError, match="strength"):
        R.PullTowards(model, -1.0)


def test_finetune_with_l2sp_stays_nearer_than_without():
    dist = {}
    for name, strength in (("free", 0.0), ("l2sp", 300.0)):
        model = tiny_classifier()
        pull = R.PullTowards(model, strength, "pretrained")
        R.finetune(model, tiny_batches(model), R.RecipeConfig(epochs=3, lr=3e-3, head_lr=1e-2), pull=pull)
        dist[name] = pull.distance()
    assert 0 < dist["l2sp"] < dist["free"]


# ------------------------------------------------------------------------- teacher annealing

def test_teacher_annealing_weights():
    assert [R.teacher_annealing(t, 5) for t in range(5)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert R.teacher_annealing(0, 1) == 1.0
    with pytest.raises(ValueError):
        R.teacher_annealing(5, 5)


def test_annealed_loss_mixes_teacher_and_gold():
    out = torch.tensor([[2.0, 0.0]])
    y = torch.tensor([1])
    teacher = torch.tensor([[0.8, 0.2]])
    logp = out.log_softmax(-1)[0]
    for lam in (0.0, 0.5, 1.0):
        want = -((lam * torch.tensor([0.0, 1.0]) + (1 - lam) * teacher[0]) * logp).sum()
        assert torch.allclose(R.annealed_loss(out, y, teacher, lam), want)
    # regression: MSE against the mixed score
    r = R.annealed_loss(torch.tensor([[1.0]]), torch.tensor([3.0]), torch.tensor([2.0]), 0.5)
    assert torch.allclose(r, torch.tensor((1.0 - 2.5) ** 2))
    assert torch.allclose(R.annealed_loss(out, y, None, 0.3), torch.nn.functional.cross_entropy(out, y))


def test_bam_student_trains_on_teacher_batches():
    enc = BertEncoder(BertConfig(vocab_size=30, max_len=16, n_layer=1, d_model=16, n_head=2), seed=0)
    mt = MultiTask(enc, {"a": 2, "r": 1})
    g = torch.Generator().manual_seed(0)
    ex = [(torch.randint(5, 30, (5,), generator=g).tolist(), None) for _ in range(8)]
    data = {"a": (ex, [i % 2 for i in range(8)], torch.full((8, 2), 0.5)),
            "r": (ex, [float(i) for i in range(8)], torch.arange(8.0))}
    mb = R.multitask_teacher_batches(enc.config, data, 4, 0)
    assert len(mb(0)) == 4 and {b["task"] for b in mb(0)} == {"a", "r"}
    assert all("teacher" in b for b in mb(0))
    h = R.finetune(mt, mb, R.RecipeConfig(epochs=2, lr=1e-3), loss_fn=R.bam_loss(8))
    assert h.steps == 8
    with pytest.raises(ValueError, match="teacher outputs"):
        R.multitask_teacher_batches(enc.config, {"a": (ex, [0] * 8, torch.zeros(3, 2))}, 4, 0)
    assert batch(enc.config, ex[:2])["ids"].shape[0] == 2


# ---------------------------------------------------------------------------------- SeqAE

def test_seqae_reconstructs_a_tiny_sequence_set():
    c = S.SeqAEConfig(vocab_size=12, d_emb=16, d_hidden=48, dropout=0.0, pad_id=1, go_id=2)
    seqs = [[3, 4, 5, 6], [7, 8, 9], [10, 11, 3, 4, 5], [6, 5, 4]]
    ae = S.SeqAutoencoder(c, seed=0)
    before = S.token_accuracy(ae, seqs)
    hist = S.pretrain(ae, seqs, steps=300, batch_size=4, lr=1e-2)
    assert hist.step_loss[-1] < 0.1 * hist.step_loss[0]
    assert S.token_accuracy(ae, seqs) == 1.0 > before
    assert ae.reconstruct(seqs) == seqs


def test_classifier_takes_the_autoencoders_encoder():
    c = S.SeqAEConfig(vocab_size=12, d_emb=8, d_hidden=8)
    ae, clf = S.SeqAutoencoder(c, seed=0), S.LSTMClassifier(c, 2, seed=1)
    S.init_from_autoencoder(clf, ae)
    for k, v in ae.encoder.state_dict().items():
        assert torch.equal(v, clf.encoder.state_dict()[k])
    with pytest.raises(ValueError, match="sizes differ"):
        S.init_from_autoencoder(S.LSTMClassifier(S.SeqAEConfig(vocab_size=12, d_emb=8, d_hidden=4)), ae)


def test_seqae_inputs_are_checked():
    with pytest.raises(ValueError, match="vocab_size"):
        S.SeqAEConfig(vocab_size=0)
    with pytest.raises(ValueError, match="pad_id"):
        S.SeqAEConfig(vocab_size=2, pad_id=5)
    with pytest.raises(ValueError, match="non-empty"):
        S.pad([[]], 0)
    vocab = S.build_vocab(["a good film", "a bad film"], 10)
    assert S.encode_texts(vocab, ["a good good film"], 2) == [[vocab["good"], vocab["film"]]]
    assert S.encode_texts(vocab, ["a good good film"], 2, keep="first") == [[vocab["a"], vocab["good"]]]


def test_recipe_config_rejects_bad_values():
    with pytest.raises(ValueError, match="epochs"):
        R.RecipeConfig(epochs=0)
    with pytest.raises(ValueError, match="warmup"):
        R.RecipeConfig(warmup=1.0)
    with pytest.raises(ValueError, match="head_lr"):
        R.RecipeConfig(head_lr=-1.0)
