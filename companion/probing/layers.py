"""Layer-wise analysis: where in the network does a property become decodable?

Tenney, Das & Pavlick (2019, "BERT rediscovers the classical NLP pipeline") give two statistics:

* **Scalar-mix weights** -- a probe reads ``gamma * sum_l softmax(w)_l h_l`` (ELMo's scalar mix);
  the *center of gravity* ``sum_l l * s_l`` says which layers the probe leans on.
* **Cumulative scores** -- a probe on the mix of layers ``0..l`` only, for every ``l``; the gain
  ``Delta_l = score(0..l) - score(0..l-1)`` is what layer ``l`` adds, and the *expected layer*
  ``E[l] = sum_l l * Delta_l / sum_l Delta_l`` is where the gains happen on average.

:func:`layer_scores` is the plain version: one independent probe per layer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .probes import ProbeConfig, fit_probe, make_probe


def layer_scores(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                 y_test: np.ndarray, config: ProbeConfig | None = None) -> np.ndarray:
    """Test accuracy of one probe per layer (same config and seed for every layer)."""
    if len(train_layers) != len(test_layers):
        raise ValueError(f"{len(train_layers)} train layers but {len(test_layers)} test layers")
    return np.array([fit_probe(a, y_train, b, y_test, config).test_acc for a, b in zip(train_layers, test_layers)])


def expected_layer(cumulative: Sequence[float]) -> float:
    """Tenney et al.'s expected layer from cumulative scores ``[score(0..0), score(0..1), ...]``:
    ``sum_l l * Delta_l / sum_l Delta_l`` over ``l >= 1``, ``Delta_l = score(0..l) - score(0..l-1)``.

    Example:
        >>> expected_layer([0.5, 0.9, 0.9, 1.0])   # gains 0.4 at layer 1 and 0.1 at layer 3
        1.4
    """
    s = np.asarray(cumulative, dtype=np.float64)
    if s.ndim != 1 or len(s) < 2:
        raise ValueError(f"need cumulative scores for at least two layers, got {s.shape}")
    delta = np.diff(s)
    if abs(delta.sum()) < 1e-12:
        raise ValueError("the cumulative scores do not change: no layer adds anything, so the expected "
                         "layer is undefined")
    return round(float((np.arange(1, len(s)) * delta).sum() / delta.sum()), 10)


def center_of_gravity(weights: Sequence[float]) -> float:
    """``sum_l l * s_l`` for scalar-mix weights ``s`` (normalised here, so raw weights work too)."""
    s = np.asarray(weights, dtype=np.float64)
    if s.ndim != 1 or (s < 0).any() or s.sum() <= 0:
        raise ValueError(f"weights must be a non-negative 1-d array with a positive sum, got {weights!r}")
    return float((np.arange(len(s)) * s).sum() / s.sum())


class ScalarMixProbe(nn.Module):
    """ELMo's scalar mix of layers ``[B, L, d]`` -> ``[B, d]``, then a probe."""

    def __init__(self, n_layers: int, d: int, n_classes: int, config: ProbeConfig):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))
        self.probe = make_probe(d, n_classes, config)

    def weights(self) -> np.ndarray:
        return self.w.detach().softmax(0).cpu().numpy()

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        mixed = self.gamma * torch.einsum("l,bld->bd", self.w.softmax(0), layers)
        return self.probe(mixed)


def _stack(layers: Sequence[np.ndarray], mean: np.ndarray, std: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.stack([(a - mean[i]) / std[i] for i, a in enumerate(layers)], 1), dtype=torch.float32)


def fit_scalar_mix(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                   y_test: np.ndarray, config: ProbeConfig | None = None,
                   n_classes: int | None = None) -> tuple[float, np.ndarray]:
    """Train a scalar-mix probe; return ``(test accuracy, mix weights)``. Each layer is
    standardised with its own training statistics (so the mix weights compare like with like)."""
    config = config or ProbeConfig()
    if not train_layers or len(train_layers) != len(test_layers):
        raise ValueError(f"need the same non-zero number of train and test layers, got {len(train_layers)} "
                         f"and {len(test_layers)}")
    n_classes = n_classes or int(y_train.max()) + 1
    mean = np.stack([a.mean(0) for a in train_layers])
    std = np.stack([a.std(0) + 1e-6 for a in train_layers])
    device = torch.device(config.device)
    x, y = _stack(train_layers, mean, std).to(device), torch.as_tensor(y_train, dtype=torch.long, device=device)
    model = ScalarMixProbe(len(train_layers), x.shape[2], n_classes, config).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed)
    for _ in range(config.epochs):
        model.train()
        for idx in torch.randperm(len(x), generator=gen).split(config.batch_size):
            idx = idx.to(device)
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(_stack(test_layers, mean, std).to(device)).argmax(-1).cpu().numpy()
    return float((pred == y_test).mean()), model.weights()


def cumulative_scores(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                      y_test: np.ndarray, config: ProbeConfig | None = None) -> np.ndarray:
    """Scalar-mix probe accuracy on layers ``0..l`` for every ``l`` (Tenney et al.'s cumulative
    scoring; feed it to :func:`expected_layer`)."""
    n = int(max(y_train.max(), 0)) + 1
    return np.array([fit_scalar_mix(train_layers[:k], y_train, test_layers[:k], y_test, config, n)[0]
                     for k in range(1, len(train_layers) + 1)])
