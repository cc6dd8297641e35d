"""Tests of companion.train: the one training loop every model of the book uses."""

from __future__ import annotations

from collections import namedtuple

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from companion.train import History, TrainConfig, fit, load_checkpoint, save_checkpoint, seed_everything, to_device

TRUE_W = torch.tensor([[2.0], [-1.0], [0.5]])


def regression_data(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    y = x @ TRUE_W + 0.3
    return x, y


def batches_of(x, y, size=8):
    return [(x[i:i + size], y[i:i + size]) for i in range(0, len(x), size)]


def mse(model, batch):
    x, y = batch
    return F.mse_loss(model(x), y)


def cfg(**kw):
    kw.setdefault("progress", False)
    kw.setdefault("device", "cpu")
    return TrainConfig(**kw)


def scripted(values):
    """An evaluate() that returns the given val_loss values in turn and snapshots the weights."""
    it = iter(values)
    snaps = []

    def evaluate(model):
        snaps.append({k: v.clone() for k, v in model.state_dict().items()})
        return {"val_loss": next(it)}

    return evaluate, snaps


def test_learns_a_tiny_regression():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    hist = fit(model, batches_of(x, y), config=cfg(epochs=40, lr=0.05), loss_fn=mse)
    assert hist.steps == 40 * 8 and len(hist.epoch_loss) == 40
    assert hist.epoch_loss[-1] < 1e-3 < hist.epoch_loss[0]
    assert torch.allclose(model.weight.detach(), TRUE_W.T, atol=0.02)
    assert abs(model.bias.item() - 0.3) < 0.02
    assert hist.items == 40 * 64 and hist.items_per_second > 0


class Noisy(nn.Module):
    """Dropout makes the result depend on the RNG that fit() seeds."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Dropout(0.3), nn.ReLU(), nn.Linear(16, 1))

    def loss(self, batch):
        return mse(self.net, batch)


def _shuffled(x, y):
    def epoch_batches(epoch):
        perm = torch.randperm(len(x))  # global RNG: seeded by fit()
        return batches_of(x[perm], y[perm])

    return epoch_batches


def _run(seed):
    torch.manual_seed(123)  # same initial weights every time
    model = Noisy()
    x, y = regression_data()
    hist = fit(model, _shuffled(x, y), config=cfg(epochs=3, seed=seed, optimizer="sgd", lr=0.05, momentum=0.9))
    return hist, [p.detach().clone() for p in model.parameters()]


def test_seeded_runs_repeat_exactly():
    h1, p1 = _run(7)
    h2, p2 = _run(7)
    h3, _ = _run(8)
    assert h1.step_loss == h2.step_loss
    assert all(torch.equal(a, b) for a, b in zip(p1, p2))
    assert h1.step_loss != h3.step_loss


def test_early_stopping_with_patience():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    evaluate, _ = scripted([5.0, 4.0, 4.5, 4.6, 4.7, 1.0, 1.0])
    hist = fit(model, batches_of(x, y), config=cfg(epochs=10, patience=3), loss_fn=mse, evaluate=evaluate)
    assert hist.stopped_early
    assert [e["val_loss"] for e in hist.evals] == [5.0, 4.0, 4.5, 4.6, 4.7]
    assert len(hist.epoch_loss) == 5
    assert hist.best["val_loss"] == 4.0 and hist.best["step"] == 16.0


def test_early_stopping_mode_max_and_eval_every():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    it = iter([0.1, 0.5, 0.4, 0.3, 0.9])
    hist = fit(model, batches_of(x, y), config=cfg(epochs=5, eval_every=3, patience=2, monitor="acc", mode="max"),
               loss_fn=mse, evaluate=lambda m: {"acc": next(it)})
    assert hist.stopped_early and hist.steps == 12
    assert [e["step"] for e in hist.evals] == [3.0, 6.0, 9.0, 12.0]
    assert hist.best == {"acc": 0.5, "step": 6.0}


@pytest.mark.parametrize("restore", [True, False])
def test_restore_best(restore):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    evaluate, snaps = scripted([3.0, 1.0, 2.0, 2.5])
    fit(model, batches_of(x, y), config=cfg(epochs=4, lr=0.05, restore_best=restore), loss_fn=mse, evaluate=evaluate)
    expected = snaps[1] if restore else snaps[-1]
    assert all(torch.equal(model.state_dict()[k], expected[k]) for k in expected)
    assert not torch.equal(snaps[1]["weight"], snaps[-1]["weight"])  # the test can tell them apart


class RecordingSGD(torch.optim.SGD):
    """Records the global gradient norm the optimizer sees at each step (after clipping)."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.norms = []

    def step(self, closure=None):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        self.norms.append(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item())
        return super().step(closure)


@pytest.mark.parametrize("clip", [0.5, None])
def test_gradient_clipping_bounds_the_norm(clip):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    opt = RecordingSGD(model.parameters(), lr=1e-4)
    fit(model, batches_of(x, 100 * y), config=cfg(epochs=2, clip_grad_norm=clip), loss_fn=mse, optimizer=opt)
    assert len(opt.norms) == 16
    if clip is None:
        assert max(opt.norms) > 10  # the gradients are big: clipping has work to do
    else:
        assert max(opt.norms) <= clip * (1 + 1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epochs": 0}, "epochs"),
        ({"epochs": 1.5}, "epochs"),
        ({"lr": -1.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"mode": "up"}, "mode"),
        ({"clip_grad_norm": 0.0}, "clip_grad_norm"),
        ({"patience": 0}, "patience"),
        ({"eval_every": 2.5}, "eval_every"),
        ({"max_steps": -3}, "max_steps"),
        ({"seed": -1}, "seed"),
        ({"device": "tpu9"}, "device"),
    ],
)
def test_bad_configs_raise_clear_errors(kwargs, message):
    x, y = regression_data()
    with pytest.raises(ValueError, match=message):
        fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(**kwargs), loss_fn=mse)


def test_other_misuse_raises_clear_errors():
    x, y = regression_data()
    with pytest.raises(TypeError, match="loss_fn"):
        fit(nn.Linear(3, 1), batches_of(x, y), config=cfg())
    frozen = nn.Linear(3, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        fit(frozen, batches_of(x, y), config=cfg(), loss_fn=mse)
    with pytest.raises(ValueError, match="monitor"):
        fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(), loss_fn=mse, evaluate=lambda m: {"loss": 1.0})
    with pytest.raises(ValueError, match="scalar"):
        fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(),
            loss_fn=lambda m, b: F.mse_loss(m(b[0]), b[1], reduction="none"))


def test_empty_batches_raise():
    with pytest.raises(ValueError, match="no batches"):
        fit(nn.Linear(3, 1), [], config=cfg(), loss_fn=mse)
    x, y = regression_data()
    one_shot = iter(batches_of(x, y))  # a generator is exhausted after the first epoch
    with pytest.raises(ValueError, match="epoch 1 produced no batches"):
        fit(nn.Linear(3, 1), one_shot, config=cfg(epochs=2), loss_fn=mse)


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_non_finite_loss_raises(bad):
    x, y = regression_data()

    def loss(model, batch):
        return mse(model, batch) * bad

    with pytest.raises(ValueError, match="loss became"):
        fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(), loss_fn=loss)


def test_max_steps_stops_and_the_final_weights_are_evaluated():
    x, y = regression_data()
    calls = []
    hist = fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(epochs=5, max_steps=3), loss_fn=mse,
               evaluate=lambda m: calls.append(1) or {"val_loss": 1.0})
    assert hist.steps == 3 and len(hist.epoch_loss) == 1
    assert [e["step"] for e in hist.evals] == [3.0] and hist.best is not None
    hist = fit(nn.Linear(3, 1), batches_of(x, y), config=cfg(epochs=1, eval_every=3), loss_fn=mse,
               evaluate=lambda m: {"val_loss": 1.0})
    assert [e["step"] for e in hist.evals] == [3.0, 6.0, 8.0]  # step 8 = the end


def test_batches_callable_gets_the_epoch_number():
    x, y = regression_data()
    seen = []

    def make(epoch):
        seen.append(epoch)
        return batches_of(x, y)

    fit(nn.Linear(3, 1), make, config=cfg(epochs=3), loss_fn=mse)
    assert seen == [0, 1, 2]


def test_to_device_handles_nested_batches():
    Pair = namedtuple("Pair", "a b")
    batch = {"x": [torch.ones(2), (torch.zeros(1), "label")], "p": Pair(torch.ones(1), 3)}
    moved = to_device(batch, torch.device("cpu"))
    assert isinstance(moved["p"], Pair) and moved["p"].b == 3
    assert moved["x"][1][1] == "label" and torch.equal(moved["x"][0], torch.ones(2))


def test_seed_everything_validates():
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)
    seed_everything(3)
    a = torch.rand(3)
    seed_everything(3)
    assert torch.equal(a, torch.rand(3))


def test_history_to_dict():
    h = History(step_loss=[1.0], steps=1, items=10, seconds=2.0)
    assert h.items_per_second == 5.0 and h.to_dict()["items"] == 10


# ------------------------------------------------------------------------ checkpoints


def test_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    a = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    path = save_checkpoint(a, tmp_path / "sub" / "m.safetensors", metadata={"epoch": "3"})
    b = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    meta = load_checkpoint(b, path)
    assert meta == {"epoch": "3"}
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    assert not list(path.parent.glob("*.tmp"))


def test_fit_keeps_the_best_weights_in_a_checkpoint(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    evaluate, snaps = scripted([3.0, 1.0, 2.0])
    path = tmp_path / "best.safetensors"
    fit(model, batches_of(x, y), config=cfg(epochs=3, checkpoint=str(path)), loss_fn=mse, evaluate=evaluate)
    fresh = nn.Linear(3, 1)
    meta = load_checkpoint(fresh, path)
    assert float(meta["val_loss"]) == 1.0 and float(meta["step"]) == 16.0
    assert torch.equal(fresh.weight, snaps[1]["weight"])


def test_bad_checkpoints_raise(tmp_path):
    model = nn.Linear(3, 1)
    with pytest.raises(FileNotFoundError):
        load_checkpoint(model, tmp_path / "missing.safetensors")
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    with pytest.raises(ValueError, match="not a readable safetensors"):
        load_checkpoint(model, corrupt)
    good = save_checkpoint(nn.Linear(3, 1), tmp_path / "good.safetensors")
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(good.read_bytes()[:-8])
    with pytest.raises(ValueError, match="not a readable safetensors"):
        load_checkpoint(model, truncated)
    wrong = save_checkpoint(nn.Linear(5, 1), tmp_path / "wrong.safetensors")
    with pytest.raises(ValueError, match="does not fit Linear"):
        load_checkpoint(model, wrong)


@pytest.mark.gpu
def test_trains_on_cuda(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = regression_data()
    hist = fit(model, batches_of(x, y), config=cfg(epochs=20, lr=0.05, device="cuda"), loss_fn=mse,
               evaluate=lambda m: {"val_loss": mse(m, to_device((x, y), torch.device("cuda"))).item()})
    assert next(model.parameters()).is_cuda
    assert hist.epoch_loss[-1] < hist.epoch_loss[0] / 10
    load_checkpoint(model, save_checkpoint(model, tmp_path / "c.safetensors"), device="cuda")


def test_schedule_sets_the_rate_before_each_step():
    # SGD with one weight: w <- w - lr * grad, grad of (w * x).sum() is x.sum(); the schedule's
    # rates (0, 1, 0, 2) must each act on the step they were set for, and nothing else changes.
    from companion.train import TrainConfig, fit

    w = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        w.weight.fill_(0.0)
    seen, rates = [], [0.0, 1.0, 0.0, 2.0]

    def schedule(step, opt):
        seen.append(step)
        for g in opt.param_groups:
            g["lr"] = rates[step]

    batches = [torch.ones(1, 1)] * 4
    cfg = TrainConfig(optimizer="sgd", lr=5.0, clip_grad_norm=None, progress=False)
    fit(w, batches, config=cfg, loss_fn=lambda m, b: m(b).sum(), schedule=schedule)
    assert seen == [0, 1, 2, 3]
    assert w.weight.item() == -3.0  # -(0 + 1 + 0 + 2) * 1; lr=5 never used
    w2 = torch.nn.Linear(1, 1, bias=False)  # without a schedule the configured rate is used
    with torch.no_grad():
        w2.weight.fill_(0.0)
    fit(w2, batches, config=cfg, loss_fn=lambda m, b: m(b).sum())
    assert w2.weight.item() == -20.0
