"""companion.parallel.map_jobs: results in order, the same numbers in one process or two."""

from __future__ import annotations

import os

import pytest
import torch

from companion.parallel import map_jobs


def _train_tiny(shared: dict, seed: int) -> list[float]:
    """A seeded little regression: its weights after a few Adam steps on the shared data."""
    torch.manual_seed(seed)
    x, y = shared["x"], shared["y"]
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(20):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return [round(float(v), 7) for v in model[2].weight.detach().flatten()[:4]] + [os.getpid()]


def _echo(shared, job):
    return (shared, job)


def _fail(shared, job):
    if job == 2:
        raise RuntimeError("job 2 broke")
    return job


@pytest.fixture()
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers run one thread: so must the in-process run compared
    yield
    torch.set_num_threads(before)


def test_in_process_keeps_order_and_passes_shared():
    assert map_jobs(_echo, [3, 1, 2], shared="s", workers=1) == [("s", 3), ("s", 1), ("s", 2)]


def test_two_processes_give_the_numbers_of_one(one_thread):
    g = torch.Generator().manual_seed(0)
    shared = {"x": torch.randn(64, 8, generator=g), "y": torch.randn(64, 1, generator=g)}
    seeds = [0, 1, 2, 3]
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    here = map_jobs(_train_tiny, seeds, shared=shared, workers=1)
    there = map_jobs(_train_tiny, seeds, shared=shared, workers=2)
    assert {k: os.environ.get(k) for k in env} == env  # the workers' thread caps stay theirs
    assert [r[:-1] for r in here] == [r[:-1] for r in there]  # same weights, same order
    assert {r[-1] for r in here} == {os.getpid()}
    assert os.getpid() not in {r[-1] for r in there}  # ... computed elsewhere
    assert len({r[-1] for r in there}) == 2
    assert here[0][:-1] != here[1][:-1]  # the seeds matter: the comparison is not vacuous


def test_a_failing_job_raises_its_error():
    with pytest.raises(RuntimeError, match="job 2 broke"):
        map_jobs(_fail, [1, 2, 3], workers=2)
    with pytest.raises(RuntimeError, match="job 2 broke"):
        map_jobs(_fail, [1, 2, 3], workers=1)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="positive int"):
        map_jobs(_echo, [1], workers=bad)
