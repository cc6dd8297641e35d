"""Tests of companion.scale (the BOOK_SCALE knob) and companion.device (where tensors live)."""

from __future__ import annotations

import pytest
import torch

from companion import device as device_mod
from companion.device import describe, get_device
from companion.scale import DEFAULT_SCALE, SCALES, get_scale, pick


@pytest.mark.parametrize("scale, expected", [("ci", 1), ("laptop", 10), ("gpu", 100)])
def test_pick_follows_the_environment(monkeypatch, scale, expected):
    monkeypatch.setenv("BOOK_SCALE", scale)
    assert get_scale() == scale
    assert pick(ci=1, laptop=10, gpu=100) == expected


def test_default_scale_and_normalisation(monkeypatch):
    monkeypatch.delenv("BOOK_SCALE", raising=False)
    assert get_scale() == DEFAULT_SCALE == "laptop"
    monkeypatch.setenv("BOOK_SCALE", "  CI ")
    assert get_scale() == "ci"
    monkeypatch.setenv("BOOK_SCALE", "")
    assert get_scale() == "laptop"


def test_gpu_defaults_to_the_laptop_value(monkeypatch):
    monkeypatch.setenv("BOOK_SCALE", "gpu")
    assert pick(ci=1, laptop=10) == 10
    assert pick(ci=1, laptop=10, gpu=0) == 0  # a falsy gpu value is still used


def test_explicit_scale_overrides_the_environment(monkeypatch):
    monkeypatch.setenv("BOOK_SCALE", "gpu")
    assert pick(ci="a", laptop="b", gpu="c", scale="ci") == "a"


def test_unknown_scale_errors(monkeypatch):
    monkeypatch.setenv("BOOK_SCALE", "huge")
    with pytest.raises(ValueError, match="BOOK_SCALE='huge' is not a known scale.*ci, laptop, gpu"):
        get_scale()
    with pytest.raises(ValueError):
        pick(ci=1, laptop=2)
    monkeypatch.delenv("BOOK_SCALE")
    with pytest.raises(ValueError, match="unknown scale 'tiny'"):
        pick(ci=1, laptop=2, scale="tiny")
    assert SCALES == ("ci", "laptop", "gpu")


def test_pick_needs_ci_and_laptop():
    with pytest.raises(TypeError):
        pick(laptop=2)  # type: ignore[call-arg]


# ------------------------------------------------------------------------ device


def test_override_and_environment(monkeypatch):
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")
    assert get_device("cpu") == torch.device("cpu")
    assert get_device(torch.device("cpu")) == torch.device("cpu")
    monkeypatch.setenv("BOOK_DEVICE", "")
    assert get_device().type in ("cpu", "cuda", "mps")


def test_override_beats_the_environment(monkeypatch):
    monkeypatch.setenv("BOOK_DEVICE", "not-a-device")
    assert get_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="not a valid torch device"):
        get_device()


@pytest.mark.parametrize("bad", ["gpu0", "cuda:x", "banana"])
def test_bad_device_names(bad):
    with pytest.raises(ValueError, match="not a valid torch device"):
        get_device(bad)


def test_unavailable_devices_are_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="CUDA is not available"):
        get_device("cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        get_device("cuda:1")


def test_automatic_choice_prefers_cuda(monkeypatch):
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    mps = getattr(torch.backends, "mps", None)
    if mps is not None:
        monkeypatch.setattr(mps, "is_available", lambda: False)
    assert get_device() == torch.device("cpu")
    if mps is not None:
        monkeypatch.setattr(mps, "is_available", lambda: True)
        assert get_device() == torch.device("mps")


def test_describe_cpu():
    assert describe(torch.device("cpu")).startswith("cpu (")
    assert device_mod.ENV_VAR == "BOOK_DEVICE"


@pytest.mark.gpu
def test_cuda_when_present(monkeypatch):
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    assert get_device().type == "cuda"
    assert describe(torch.device("cuda")).startswith("cuda (")
