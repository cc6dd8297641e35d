"""Chapter 6: ULMFiT's schedule, learning-rate groups, unfreezing, pooling and classifier."""

from __future__ import annotations

import itertools

import pytest
import torch

from companion.contextual.ulmfit import (
    AWDLSTM,
    AWDLSTMLM,
    AWDLSTMConfig,
    ConcatPoolClassifier,
    FineTunePlan,
    accuracy,
    classification_batches,
    concat_pool,
    discriminative_lrs,
    finetune_lm,
    layer_groups,
    set_trainable,
    stlr,
    train_classifier,
    unfreeze_schedule,
)


def test_stlr_matches_the_papers_values():
    # T = 1000, cut_frac 0.1 -> cut = 100; lr_max / ratio at both ends, lr_max at the cut
    lr = 0.01
    assert stlr(0, 1000, lr) == pytest.approx(lr / 32)
    assert stlr(50, 1000, lr) == pytest.approx(lr * (1 + 0.5 * 31) / 32)
    assert stlr(100, 1000, lr) == pytest.approx(lr)
    assert stlr(550, 1000, lr) == pytest.approx(lr * (1 + 0.5 * 31) / 32)  # halfway down
    assert stlr(1000, 1000, lr) == pytest.approx(lr / 32)
    values = [stlr(t, 1000, lr) for t in range(1001)]
    assert max(values) == pytest.approx(lr) and values.index(max(values)) == 100
    ups = sum(b > a for a, b in itertools.pairwise(values))
    assert ups == 100  # short rise, long fall


def test_stlr_bad_input():
    with pytest.raises(ValueError, match="total"):
        stlr(0, 0, 0.1)
    with pytest.raises(ValueError, match=r"\[0, total"):
        stlr(11, 10, 0.1)
    with pytest.raises(ValueError, match="cut_frac"):
        stlr(1, 10, 0.1, cut_frac=1.5)


def test_discriminative_lrs_divide_by_2_6_per_layer():
    lrs = discriminative_lrs(5, 0.01)
    assert lrs[-1] == 0.01
    for lower, upper in itertools.pairwise(lrs):
        assert upper / lower == pytest.approx(2.6)
    assert discriminative_lrs(3, 1.0, factor=1.0) == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError):
        discriminative_lrs(3, -1.0)


def _clf(n_layers=3):
    enc = AWDLSTM(AWDLSTMConfig(vocab_size=40, emb_dim=6, hidden=10, n_layers=n_layers, pad_id=1))
    return ConcatPoolClassifier(enc, 3, head_hidden=5)


def test_layer_groups_cover_every_parameter_once_bottom_to_top():
    torch.manual_seed(0)
    clf = _clf()
    groups = layer_groups(clf)
    assert len(groups) == 5  # embedding, 3 LSTMs, head
    ids = [id(p) for g in groups for p in g]
    assert len(ids) == len(set(ids)) == len(list(clf.parameters()))
    assert groups[0] == [clf.encoder.embed.weight]
    assert groups[-1] == list(clf.head.parameters())
    lm = AWDLSTMLM(AWDLSTMConfig(vocab_size=40, emb_dim=6, hidden=10))
    lm_ids = [id(p) for g in layer_groups(lm) for p in g]
    assert len(lm_ids) == len(set(lm_ids)) == len(list(lm.parameters()))  # tied: no extra group


def test_unfreezing_order_top_group_first():
    assert unfreeze_schedule(5, 7) == [1, 2, 3, 4, 5, 5, 5]
    clf = _clf()
    groups = layer_groups(clf)
    set_trainable(groups, 2)
    flags = [all(p.requires_grad for p in g) for g in groups]
    assert flags == [False, False, False, True, True]


def test_gradual_unfreezing_and_rates_in_training():
    """During training: epoch 1 moves only the head; every group's rate follows STLR x 2.6^-k."""
    torch.manual_seed(0)
    clf = _clf()
    seqs = [[int(x) for x in torch.randint(2, 40, (int(n),))] for n in torch.randint(1, 9, (64,))]
    labels = [s[0] % 3 for s in seqs]
    before = {k: v.clone() for k, v in clf.state_dict().items()}
    train_classifier(clf, seqs, labels, FineTunePlan(epochs=1, batch_size=16, lr=0.01), pad_id=1)
    after = {k: v.clone() for k, v in clf.state_dict().items()}
    moved = {k for k in before if not torch.equal(before[k], after[k]) and "running" not in k
             and "num_batches" not in k}
    assert moved and all(k.startswith("head.") for k in moved)
    # without gradual unfreezing: the lowest group moves from the first epoch
    train_classifier(clf, seqs, labels, FineTunePlan(epochs=1, lr=0.01, gradual_unfreezing=False),
                     pad_id=1)
    assert not torch.equal(after["encoder.embed.weight"], clf.state_dict()["encoder.embed.weight"])


def test_concat_pool_ignores_padding():
    h = torch.tensor([[[1.0], [5.0], [3.0], [99.0]], [[2.0], [-1.0], [-7.0], [-7.0]]])
    out = concat_pool(h, torch.tensor([3, 2]))
    torch.testing.assert_close(out, torch.tensor([[3.0, 5.0, 3.0], [-1.0, 2.0, 0.5]]))
    with pytest.raises(ValueError, match="lengths"):
        concat_pool(h, torch.tensor([0, 2]))


def test_classifier_learns_a_separable_task_and_padding_does_not_change_predictions():
    torch.manual_seed(0)
    clf = _clf(n_layers=2)
    g = torch.Generator().manual_seed(0)
    seqs = [[int(x) for x in torch.randint(2, 40, (int(n),), generator=g)]
            for n in torch.randint(2, 8, (300,), generator=g)]
    for s in seqs[:150]:
        s.insert(int(torch.randint(0, len(s), (1,), generator=g)), 10)
    labels = [int(10 in s) for s in seqs]  # does the text hold word 10?
    base = max(labels.count(c) for c in range(2)) / len(labels)
    # from random weights the lower groups need full rates (discriminative rates are for a
    # pre-trained encoder: with them this run stays at the majority class)
    plan = FineTunePlan(epochs=8, batch_size=16, lr=0.02, gradual_unfreezing=False, discriminative=False)
    train_classifier(clf, seqs, labels, plan, pad_id=1)
    assert accuracy(clf, seqs, labels, pad_id=1) > base + 0.2
    clf.eval()
    a = clf(torch.tensor([[5, 6, 7]]), torch.tensor([3]))
    b = clf(torch.tensor([[5, 6, 7, 1, 1]]), torch.tensor([3]))
    torch.testing.assert_close(a, b)


def test_lm_fine_tuning_lowers_the_loss():
    torch.manual_seed(0)
    # one layer: deeper tiny LSTMs sit on a plateau at the unigram loss for a few hundred steps
    lm = AWDLSTMLM(AWDLSTMConfig(vocab_size=12, emb_dim=16, hidden=16, n_layers=1, weight_p=0.1))
    ids = [2, 3, 4, 5, 6, 7, 8] * 300
    plan = FineTunePlan(epochs=3, lr=0.03, batch_size=8, discriminative=False, clip=5.0)
    hist = finetune_lm(lm, ids, plan, seq_len=10)
    assert hist.epoch_loss[-1] < 0.3 * hist.epoch_loss[0]


def test_every_step_sets_each_groups_rate_to_stlr_times_its_discriminative_rate():
    from companion.contextual.ulmfit import _optimizer, rate_schedule

    clf = _clf()
    groups = layer_groups(clf)
    plan = FineTunePlan(lr=0.01)
    opt, lrs = _optimizer(groups, plan)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx(discriminative_lrs(5, 0.01))
    first, second = rate_schedule(lrs, 50, plan), rate_schedule(lrs, 50, plan, offset=6)
    for t in range(12):  # two fit calls of six steps each: the second continues the schedule
        (first if t < 6 else second)(t % 6, opt)
        want = [lr * stlr(t, 50, 1.0) for lr in discriminative_lrs(5, 0.01)]
        assert [g["lr"] for g in opt.param_groups] == pytest.approx(want)


def test_classifier_training_applies_the_schedule_at_every_step(monkeypatch):
    # through fit's hook: the rates the optimizer steps with are STLR's, step after step
    import companion.contextual.ulmfit as U

    seen = []
    real_step = torch.optim.Adam.step

    def spy(self, *a, **k):
        seen.append(self.param_groups[-1]["lr"])
        return real_step(self, *a, **k)

    monkeypatch.setattr(torch.optim.Adam, "step", spy)
    clf = _clf()
    seqs, labels = [[2, 3], [4, 5, 6], [7], [8, 9]] * 4, [0, 1, 0, 1] * 4
    plan = FineTunePlan(epochs=2, lr=0.01, batch_size=4, gradual_unfreezing=False)
    info = U.train_classifier(clf, seqs, labels, plan, pad_id=1)
    total = int(info["steps"])
    assert total == 8 and seen == pytest.approx([stlr(t, total, 0.01) for t in range(total)])


def test_batches_and_bad_input():
    b = classification_batches([[2], [3, 4], [5, 6, 7]], [0, 1, 0], batch_size=2, pad_id=1)
    assert sum(len(x[2]) for x in b) == 3 and all(len(x[2]) >= 2 for x in b)
    with pytest.raises(ValueError, match="labels"):
        classification_batches([[2]], [0, 1], 2, 1)
    with pytest.raises(ValueError, match="pad_id"):
        AWDLSTMConfig(vocab_size=5, pad_id=7).validate()
    with pytest.raises(ValueError, match="n_classes"):
        ConcatPoolClassifier(_clf().encoder, 1)
    with pytest.raises(TypeError, match="AWD-LSTM"):
        layer_groups(torch.nn.Linear(2, 2))


def test_recipe_helpers():
    from companion.contextual.recipes import (
        build_vocab,
        classifier_epochs,
        encode_texts,
        run_grid,
        sample_documents,
        subset,
        tokenize,
    )

    labels = [0] * 80 + [1] * 20
    idx = subset(10, labels, seed=0)
    assert len(idx) == 10 and sum(labels[i] for i in idx) == 2  # stratified: 8 + 2
    assert subset(None, labels, 0) == list(range(100))
    assert classifier_epochs(100, 32, 5, min_steps=50) == 13  # 4 batches an epoch
    assert classifier_epochs(10_000, 32, 5) == 5
    docs = [["A b c .", "d e"], ["F g"], ["h i j k"]]
    sents = sample_documents(docs, n_tokens=3, seed=0)
    assert sents and all(s == tokenize(" ".join(s)) for s in sents)
    v = build_vocab(sents, [["zz"]], max_size=50)
    assert v.itos[:3] == ["<unk>", "<pad>", "</s>"]
    assert encode_texts(["", "b c"], v, max_len=1) == [[v.stoi["</s>"]], [v.stoi["b"]]]
    with pytest.raises(ValueError, match="unknown method"):
        run_grid({}, AWDLSTMConfig(10), 2, ([[2]], [0]), ([[2]], [0]), FineTunePlan(),
                 sizes=[None], seeds=[0], methods=["magic"], pad_id=1)


def test_output_bias_starts_at_the_unigram_distribution():
    lm = AWDLSTMLM(AWDLSTMConfig(vocab_size=5, emb_dim=4, hidden=6, n_layers=2))
    lm.init_output_bias([3, 0, 1, 7, 4])
    p = torch.softmax(lm.out.logits(torch.zeros(1, 4)), dim=-1)[0]
    torch.testing.assert_close(p, torch.tensor([4.0, 1.0, 2.0, 8.0, 5.0]) / 20)
    with pytest.raises(ValueError, match="vocab_size"):
        lm.init_output_bias([1, 2])


def test_encoder_diagnostics_read_saturation_and_a_frozen_probe():
    from companion.contextual.recipes import encoder_diagnostics

    cfg = AWDLSTMConfig(vocab_size=12, emb_dim=4, hidden=6, n_layers=2, pad_id=1)
    seqs = [[2 + (i % 2), 4, 5, 6, 7, 8][: 3 + i % 3] for i in range(40)]
    labels = [i % 2 for i in range(40)]  # the first word is the label
    rand = encoder_diagnostics(None, cfg, (seqs, labels), (seqs, labels), pad_id=1)
    assert set(rand) == {"mean |h|", "share |h| > 0.9", "spread across sentences", "frozen probe accuracy"}
    assert 0 <= rand["share |h| > 0.9"] <= 1 and rand["frozen probe accuracy"] == 1.0
    state = {k: v.clone() for k, v in AWDLSTM(cfg).state_dict().items()}
    for k, v in state.items():  # a saturated encoder: gates wide open, the memory grows, |h| -> 1
        if "weight_ih" in k:
            state[k] = v.sign() * 5
        if "bias_ih" in k:
            state[k] = torch.full_like(v, 20.0)
    sat = encoder_diagnostics(state, cfg, (seqs, labels), (seqs, labels), pad_id=1)
    assert sat["share |h| > 0.9"] > 0.5 > rand["share |h| > 0.9"]


def test_embedding_start_is_configurable():
    small = AWDLSTM(AWDLSTMConfig(vocab_size=500, emb_dim=8, hidden=6, n_layers=1))
    big = AWDLSTM(AWDLSTMConfig(vocab_size=500, emb_dim=8, hidden=6, n_layers=1, embed_init_std=0.5))
    assert small.embed.weight.abs().max() <= 0.1 and abs(big.embed.weight.std().item() - 0.5) < 0.05
    with pytest.raises(ValueError, match="embed_init_std"):
        AWDLSTMConfig(vocab_size=5, embed_init_std=0.0).validate()
