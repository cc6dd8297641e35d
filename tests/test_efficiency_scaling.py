"""Chapter 9: FLOP counts, power-law fits, the compute frontier and allocation, the family runner."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from companion.efficiency.scaling import (
    Allocation,
    FamilyRun,
    JointLaw,
    ModelSpec,
    PowerLaw,
    allocate,
    allocation_html,
    budget_widget,
    compute_frontier,
    converged,
    family_frame,
    family_plan,
    fit_allocation,
    fit_joint,
    fit_power_law,
    flops_per_token,
    grid_frame,
    kaplan_lr,
    leave_one_out,
    matmul_params,
    non_embedding_params,
    smooth_curve,
    step_flops,
    train_family,
    train_grid,
    wsd_factor,
)
from companion.transformer import GPT, GPTConfig
from companion.transformer.blocks import count_parameters


@pytest.mark.parametrize("d,L,V,T", [(16, 2, 50, 16), (24, 1, 37, 8)])
def test_step_flops_equal_6N_plus_the_output_layer(d, L, V, T):
    cfg = GPTConfig(vocab_size=V, block_size=T, n_layer=L, n_head=2, d_model=d)
    model = GPT(cfg, seed=0)
    B = 3
    counted = step_flops(model, torch.randint(0, V - 3, (B, T + 1)))
    per_tok = flops_per_token(cfg)
    # the profiler counts the matrix products: 6 N per token plus the output layer (on a CPU it
    # does not count the fused attention kernel)
    assert counted == (per_tok["6N"] + per_tok["output layer"]) * B * T
    assert matmul_params(cfg) == L * 12 * d * d


def test_non_embedding_params():
    cfg = GPTConfig(vocab_size=50, block_size=16, n_layer=2, n_head=2, d_model=16)
    m = GPT(cfg)
    n = non_embedding_params(m)
    assert n == count_parameters(m) - 50 * 16 - 16 * 16
    # matrices plus biases and norms: 12 L d^2 + 13 L d + final norm 2d
    assert n == 12 * 2 * 16 * 16 + 13 * 2 * 16 + 2 * 16


def test_power_law_fit_recovers_its_exponent():
    rng = np.random.default_rng(0)
    N = np.geomspace(1e4, 1e7, 8)
    L = (8.8e13 / N) ** 0.076 * np.exp(rng.normal(0, 0.002, len(N)))
    law = fit_power_law(N, L)
    assert law.alpha == pytest.approx(0.076, abs=0.003)
    assert abs(law.alpha - 0.076) < 3 * law.alpha_se + 1e-4
    exact = fit_power_law(N, (1e5 / N) ** 0.3)
    assert exact.alpha == pytest.approx(0.3) and exact.x_c == pytest.approx(1e5)
    assert exact(1e5) == pytest.approx(1.0) and exact.inverse(1.0) == pytest.approx(1e5)
    loo = leave_one_out(N, L)
    assert len(loo) == 8 and np.ptp(loo) < 0.01
    with pytest.raises(ValueError, match="positive"):
        fit_power_law([1, 2, 3], [1, 0, 2])
    with pytest.raises(ValueError, match="same length"):
        fit_power_law([1, 2], [1, 2, 3])


def test_smooth_curve():
    assert np.allclose(smooth_curve([1, 2, 3, 4], 2), [1, 1.5, 2.5, 3.5])


def _synthetic_runs():
    """Curves from L(N, D) = (N_c/N)^0.3 + (D_c/D)^0.3 + 1: small models flatten early."""
    runs = []
    for N in (1e3, 4e3, 1.6e4, 6.4e4):
        steps = 3000
        D = 100 * np.arange(1, steps + 1)
        L = (1e5 / N) ** 0.3 + (1e5 / D) ** 0.3 + 1
        runs.append(FamilyRun(ModelSpec(8, 1, 1), int(N), 100, list(L), float(L[-1]), 0.0, 6 * N))
    return runs


def test_frontier_and_allocation_on_synthetic_curves():
    runs = _synthetic_runs()
    fr = compute_frontier(runs, n_points=30, smooth=1)
    assert fr["C"].is_monotonic_increasing and fr["loss"].is_monotonic_decreasing
    # the best size grows with the budget
    assert fr["N"].iloc[0] < fr["N"].iloc[-1] and fr["N"].is_monotonic_increasing
    alloc = fit_allocation(fr)
    assert 0 < alloc.a < 1
    r = allocate(1e9, alloc)
    assert r["N"] == pytest.approx(alloc.k * 1e9**alloc.a)
    assert r["D"] * 6 * r["N"] == pytest.approx(1e9)
    assert r["chinchilla_D"] == pytest.approx(20 * r["chinchilla_N"])
    assert 6 * r["chinchilla_N"] * r["chinchilla_D"] == pytest.approx(1e9)
    for bad in (0, -1.0, float("nan"), "1e9", True):
        with pytest.raises(ValueError, match="positive number of FLOPs"):
            allocate(bad, alloc)


def test_widget_callback_error_then_recovery(monkeypatch):
    pytest.importorskip("ipywidgets")
    from companion.efficiency import scaling

    alloc = Allocation(k=2.0, a=0.5, loss_law=PowerLaw(1e3, 0.1), c_range=(1e6, 1e9))
    assert "Cannot allocate" in allocation_html(alloc, float("inf"))
    w = budget_widget(alloc, log10_C=7.0)
    assert "N = 6,325" in w.output.value  # 2 * sqrt(1e7)
    real, state = scaling.allocate, {"failed": False}

    def flaky(*args, **kwargs):
        if not state["failed"]:
            state["failed"] = True
            raise ValueError("a planted failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(scaling, "allocate", flaky)
    w.budget.value = 8.0
    assert "Cannot allocate" in w.output.value and "planted" in w.output.value
    w.budget.value = 8.5  # the next change answers again
    assert "our fit" in w.output.value and "extrapolation" not in w.output.value
    w.budget.value = 10.5
    assert "extrapolation" in w.output.value and w.calls == 4


def test_train_family_runs_and_reports():
    g = torch.Generator().manual_seed(0)
    rows = torch.randint(0, 20, (40, 9), generator=g)
    specs = [ModelSpec(8, 1, 2), ModelSpec(16, 1, 2)]
    runs = train_family(specs, rows[:32], rows[32:], 23, tokens=8 * 4 * 6, batch_size=4, lr=3e-3,
                        device="cpu")
    assert [len(r.step_loss) for r in runs] == [6, 6]
    assert runs[0].n_params < runs[1].n_params
    assert runs[1].tokens[-1] == 6 * 32 and runs[1].compute[-1] == 6 * matmul_params(
        specs[1].config(23, 8)) * 6 * 32
    assert all(math.isfinite(r.heldout_loss) for r in runs)
    assert list(family_frame(runs).index) == ["d8-L1", "d16-L1"]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        train_family(specs, rows, rows, 10, tokens=100, batch_size=4, lr=1e-3)
    with pytest.raises(ValueError, match="one batch"):
        train_family(specs, rows, rows, 23, tokens=3, batch_size=4, lr=1e-3)


def test_family_plans_grow_with_scale():
    ci, lap, gpu = (family_plan(s) for s in ("ci", "laptop", "gpu"))
    assert len(lap.specs) >= 5 and len(gpu.specs) >= 8
    n = [12 * s.n_layer * s.d_model**2 for s in lap.specs]
    assert n == sorted(n) and n[-1] / n[0] >= 15
    assert gpu.tokens > lap.tokens > ci.tokens
    for plan in (ci, lap, gpu):  # a grid: at least three budgets, doubling or more
        b = sorted(plan.budgets)
        assert len(b) >= 3 and all(y >= 2 * x for x, y in itertools.pairwise(b))


def test_wsd_schedule_and_kaplan_lr():
    f = [wsd_factor(t, 2, 6, 10) for t in range(10)]
    assert f[:6] == [0.5, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert f[6:] == pytest.approx([1.0, 0.75, 0.5, 0.25])
    assert kaplan_lr(10**6) == pytest.approx(0.003239 - 0.0001395 * math.log(1e6))
    assert kaplan_lr(10**4) > kaplan_lr(10**6)
    with pytest.raises(ValueError, match="positive"):
        kaplan_lr(0)


def test_train_grid_branches_do_not_leak_into_the_main_run():
    g = torch.Generator().manual_seed(0)
    rows = torch.randint(0, 20, (48, 9), generator=g)
    specs = [ModelSpec(8, 1, 2), ModelSpec(16, 1, 2)]
    kw = {"batch_size": 4, "lr": 3e-3, "device": "cpu"}
    grid = train_grid(specs, rows[:40], rows[40:], 23, budgets=(4 * 32, 8 * 32), **kw)
    alone = train_grid(specs, rows[:40], rows[40:], 23, budgets=(8 * 32,), **kw)
    short = train_grid(specs, rows[:40], rows[40:], 23, budgets=(4 * 32,), **kw)
    for a, b, c in zip(grid, alone, short):
        assert sorted(a.budget_losses) == [128, 256] and len(a.step_loss) == 8
        # the main run is the run without branches; each branch is the run that stops there
        assert a.step_loss == pytest.approx(b.step_loss) and a.heldout_loss == pytest.approx(b.heldout_loss)
        assert a.budget_losses[128] == pytest.approx(c.heldout_loss)
    frame = grid_frame(grid)
    assert list(frame.columns) == ["N (non-emb.)", "lr", "D=128", "D=256"]
    assert converged(grid).dtype == bool and len(converged(grid)) == 2
    with pytest.raises(ValueError, match="at least 2 batches"):
        train_grid(specs, rows, rows, 23, budgets=(4,), **kw)
    with pytest.raises(ValueError, match="cooldown"):
        train_grid(specs, rows, rows, 23, budgets=(256,), cooldown=1.5, **kw)
    with pytest.raises(ValueError, match="two budgets"):
        converged(alone)


def test_joint_law_fit_recovers_both_exponents():
    law = JointLaw(n_c=1e8, d_c=1e9, alpha_n=0.08, alpha_d=0.1, alpha_n_se=0, alpha_d_se=0)
    N, D = (a.ravel() for a in np.meshgrid(np.geomspace(1e4, 1e6, 5), np.geomspace(1e5, 1e7, 4)))
    rng = np.random.default_rng(0)
    L = law(N, D) * np.exp(rng.normal(0, 0.002, N.shape))
    fit = fit_joint(N, D, L)
    assert fit.alpha_n == pytest.approx(0.08, abs=3 * fit.alpha_n_se + 0.01)
    assert fit.alpha_d == pytest.approx(0.1, abs=3 * fit.alpha_d_se + 0.01)
    assert 0 < fit.alpha_n_se < 0.05 and np.allclose(fit(N, D), L, rtol=0.01)
    with pytest.raises(ValueError, match="two sizes"):
        fit_joint(np.full(6, 1e4), np.geomspace(1e5, 1e7, 6), np.ones(6))


def test_scheduled_loss_warms_up_then_decays():
    from companion.efficiency.scaling import scheduled_loss

    model = GPT(GPTConfig(vocab_size=20, block_size=4, n_layer=1, n_head=1, d_model=4))
    opt = torch.optim.AdamW(model.parameters(), lr=1.0)
    fn = scheduled_loss(opt, steps=100, lr=2.0, warmup=0.1, floor=0.1)
    batch = torch.randint(0, 17, (2, 5))
    lrs = []
    for _ in range(100):
        fn(model, batch)
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs[0] == pytest.approx(0.2) and lrs[9] == pytest.approx(2.0)
    assert all(a >= b for a, b in itertools.pairwise(lrs[9:]))
    assert lrs[-1] == pytest.approx(0.2, rel=1e-3)


def _tiny_grid():
    g = torch.Generator().manual_seed(0)
    rows = torch.randint(0, 20, (48, 9), generator=g)
    return train_grid([ModelSpec(8, 1, 2), ModelSpec(16, 1, 2)], rows[:40], rows[40:], 23,
                      budgets=(2 * 32, 4 * 32, 8 * 32), batch_size=4, lr=3e-3, device="cpu")


def test_sweep_record_round_trips_through_json(tmp_path):
    import json

    from companion.efficiency.scaling import (
        FamilyPlan,
        runs_from_record,
        shared_differences,
        stored_sweep,
        sweep_record,
    )

    runs = _tiny_grid()
    plan = FamilyPlan(tuple(r.spec for r in runs), (64, 128, 256), 4, 8, 23, 0, 0)
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(sweep_record(runs, plan, seed=0, command="test")))
    back, meta = stored_sweep(path)
    assert meta["seed"] == 0 and meta["plan"]["budgets"] == [64, 128, 256]
    for a, b in zip(runs, back):
        assert (a.spec, a.n_params, a.lr, a.tokens_per_step) == (b.spec, b.n_params, b.lr, b.tokens_per_step)
        assert a.budget_losses == b.budget_losses and a.heldout_loss == b.heldout_loss
        assert b.step_loss == pytest.approx(a.step_loss, abs=1e-4)  # rounded to 4 decimals
    assert grid_frame(back).equals(grid_frame(runs))
    assert shared_differences(runs, back) == [0.0, 0.0] and shared_differences(runs, back[:1]) == [0.0]
    with pytest.raises(ValueError, match="not a sweep record"):
        runs_from_record({"runs": [{"d_model": 8}]})
    with pytest.raises(FileNotFoundError, match="ch09_scaling_sweep_cpu.py"):
        stored_sweep(tmp_path / "missing.json")


def test_compare_fits_and_plot_sweeps():
    import matplotlib

    matplotlib.use("Agg")
    from companion.efficiency.scaling import compare_fits, plot_sweeps

    N = [1e3, 3e3, 1e4, 3e4]
    runs = [FamilyRun(ModelSpec(8 * (i + 1), 1, 2), int(n), 64, [6.0, 5.0], 0.0, 0.0, 6 * n, None,
                      {100: 9 * n ** -0.05 * 1.1, 200: 9 * n ** -0.05 * (1 + 0.01 * i)}) for i, n in enumerate(N)]
    for r in runs:
        r.heldout_loss = r.budget_losses[200]
    fits = compare_fits({"a": runs, "b": runs[:3]})
    assert list(fits.index) == ["a", "b"] and fits.loc["a", "sizes"] == 4 and fits.loc["a", "span"] == 30
    assert fits.loc["b", "tokens D"] == 200 and fits.loc["a", "LOO min"] <= fits.loc["a", "alpha_N"]
    assert fits.loc["a", "converged"] == 0  # every last doubling gained more than 2 %
    fig = plot_sweeps({"a": runs, "b": runs[:3]})
    assert len(fig.axes) == 2
    matplotlib.pyplot.close(fig)


def test_the_stored_cpu_sweep_is_the_plan_it_claims():
    from companion.efficiency.scaling import cpu_sweep_plan, stored_sweep

    runs, meta = stored_sweep()
    plan, lap = cpu_sweep_plan(), family_plan("laptop")
    assert meta["complete"] and meta["seed"] == 0 and meta["threads"] == 1 and meta["cpu_s"] > 0
    assert meta["command"].endswith("ch09_scaling_sweep_cpu.py companion/efficiency/scaling_sweep_cpu.json")
    assert {r.spec for r in runs} == set(plan.specs) and set(lap.specs) <= set(plan.specs)
    assert [r.n_params for r in runs] == sorted(r.n_params for r in runs)  # smallest first
    assert meta["plan"]["budgets"] == list(lap.budgets) and plan.corpus_chars == lap.corpus_chars
    assert meta["train_tokens_available"] >= max(plan.budgets)  # no token seen twice
    N = sorted(r.n_params for r in runs)
    assert len(N) >= 8 and N[-1] / N[0] >= 50
    assert all(sorted(r.budget_losses) == list(plan.budgets) for r in runs)
    assert all(len(r.step_loss) == max(plan.budgets) // r.tokens_per_step for r in runs)


def test_gpu_sweep_script_runs_tiny_on_the_cpu(tmp_path):
    import importlib.util
    from pathlib import Path

    from companion.efficiency.scaling import FamilyPlan, stored_sweep

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu" / "ch09_scaling_sweep.py"
    spec = importlib.util.spec_from_file_location("ch09_scaling_sweep", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "its", "red", "hat"]
    rng = np.random.default_rng(0)
    docs = [[" ".join(rng.choice(words, 9)) for _ in range(4)] for _ in range(60)]
    plan = FamilyPlan((ModelSpec(8, 1, 2), ModelSpec(16, 1, 2), ModelSpec(24, 1, 2)), (128, 256, 512), 4, 16, 300,
                      6_000, 3_000)
    rec = mod.main(str(tmp_path / "out.json"), device="cpu", plan=plan, docs=docs, heldout_docs=docs[:5],
                   n_heldout=8)
    runs, meta = stored_sweep(tmp_path / "out.json")
    assert len(runs) == 3 and meta["complete"] and meta["device"].startswith("cpu")
    assert rec["fits"]["alpha_N_se"] >= 0 and len(rec["fits"]["leave_one_out"]) == 3
    assert set(rec["fits"]["alpha_D"]) == {"d8-L1", "d16-L1", "d24-L1"}
