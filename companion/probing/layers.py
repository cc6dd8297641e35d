"""Layer-wise analysis: where in the network does a property become decodable?

Tenney, Das & Pavlick (2019, "BERT rediscovers the classical NLP pipeline") give two statistics:

* **Scalar-mix weights** -- a probe reads ``gamma * sum_l softmax(w)_l h_l`` (ELMo's scalar mix);
  the *center of gravity* ``sum_l l * s_l`` says which layers the probe leans on.
* **Cumulative scores** -- a probe on the mix of layers ``0..l`` only, for every ``l``; the gain
  ``Delta_l = score(0..l) - score(0..l-1)`` is what layer ``l`` adds, and the *expected layer*
  ``E[l] = sum_l l * Delta_l / sum_l Delta_l`` is where the gains happen on average.

:func:`layer_scores` is the plain version: one independent probe per layer.
:func:`layer_spread` runs both for several probe seeds and keeps each test item's outcome, so that
:class:`LayerSpread` gives the seeds' spread and a bootstrap over test items of every statistic,
and :func:`compare_expected` says whether one task's expected layer is above another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .probes import ProbeConfig, check_probe_data, fit_probe, make_probe, train_probe


def _check_layers(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                  y_test: np.ndarray, n_classes: int | None = None) -> int:
    """:func:`~.probes.check_probe_data` for every layer; the number of classes."""
    if not train_layers or len(train_layers) != len(test_layers):
        raise ValueError(f"need the same non-zero number of train and test layers, got {len(train_layers)} "
                         f"and {len(test_layers)}")
    for a, b in zip(train_layers, test_layers):
        n = check_probe_data(a, y_train, b, y_test, n_classes)
    return n


def layer_scores(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                 y_test: np.ndarray, config: ProbeConfig | None = None, one_by_one: bool = False) -> np.ndarray:
    """Test accuracy of one probe per layer (same config and seed for every layer). Linear
    probes without dropout are trained side by side in one module (:class:`_AllProbes`, the
    same training as one by one); ``one_by_one=True`` calls :func:`fit_probe` per layer."""
    config = config or ProbeConfig()
    _check_layers(train_layers, y_train, test_layers, y_test)
    if one_by_one or config.kind != "linear" or config.dropout or not config.standardize or not train_layers:
        return np.array([fit_probe(a, y_train, b, y_test, config).test_acc
                         for a, b in zip(train_layers, test_layers)])
    mean = np.stack([a.mean(0) for a in train_layers])
    std = np.stack([a.std(0) + 1e-6 for a in train_layers])
    pred, _, _ = _fit_all(_stack(train_layers, mean, std), y_train, _stack(test_layers, mean, std),
                          int(y_train.max()) + 1, config, mixes=False)
    return (pred == y_test).mean(-1)


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


def _mix_predict(x_train: torch.Tensor, y_train: np.ndarray, x_test: torch.Tensor, n_classes: int,
                 config: ProbeConfig) -> tuple[np.ndarray, np.ndarray]:
    """Train a scalar-mix probe on standardised stacks ``[n, L, d]``; return ``(test predictions,
    mix weights)``."""
    device = torch.device(config.device)
    x, y = x_train.to(device), torch.as_tensor(y_train, dtype=torch.long, device=device)
    model = ScalarMixProbe(x.shape[1], x.shape[2], n_classes, config).to(device)
    train_probe(model, x, y, config)
    with torch.no_grad():
        pred = model(x_test.to(device)).argmax(-1).cpu().numpy()
    return pred, model.weights()


def fit_scalar_mix(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                   y_test: np.ndarray, config: ProbeConfig | None = None,
                   n_classes: int | None = None) -> tuple[float, np.ndarray]:
    """Train a scalar-mix probe; return ``(test accuracy, mix weights)``. Each layer is
    standardised with its own training statistics (so the mix weights compare like with like)."""
    config = config or ProbeConfig()
    n_classes = _check_layers(train_layers, y_train, test_layers, y_test, n_classes)
    mean = np.stack([a.mean(0) for a in train_layers])
    std = np.stack([a.std(0) + 1e-6 for a in train_layers])
    pred, w = _mix_predict(_stack(train_layers, mean, std), y_train, _stack(test_layers, mean, std),
                           n_classes, config)
    return float((pred == y_test).mean()), w


def cumulative_scores(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                      y_test: np.ndarray, config: ProbeConfig | None = None) -> np.ndarray:
    """Scalar-mix probe accuracy on layers ``0..l`` for every ``l`` (Tenney et al.'s cumulative
    scoring; feed it to :func:`expected_layer`)."""
    n = int(max(y_train.max(), 0)) + 1
    return np.array([fit_scalar_mix(train_layers[:k], y_train, test_layers[:k], y_test, config, n)[0]
                     for k in range(1, len(train_layers) + 1)])


# ------------------------------------------------------------------------- seeds and bootstrap


@dataclass
class LayerSpread:
    """Layer-wise probes of one representation on one task, for several probe seeds.

    Attributes:
        seeds: the probe seeds (initialisation and batch order).
        layer_correct: ``[seeds, L, n_test]`` -- did layer ``l``'s own probe get test item ``i`` right?
        cum_correct: ``[seeds, L, n_test]`` -- the same for the scalar mix of layers ``0..l``.
        weights: ``[seeds, L]`` -- the mix weights of the mix of all layers.
    """

    seeds: tuple[int, ...]
    layer_correct: np.ndarray
    cum_correct: np.ndarray
    weights: np.ndarray

    @property
    def per_layer(self) -> np.ndarray:
        """``[seeds, L]`` test accuracy of one probe per layer."""
        return self.layer_correct.mean(-1)

    @property
    def cumulative(self) -> np.ndarray:
        """``[seeds, L]`` test accuracy of the mix of layers ``0..l``."""
        return self.cum_correct.mean(-1)

    def expected_layers(self) -> np.ndarray:
        """The expected layer of each seed (NaN where no layer adds anything)."""
        return np.array([_expected_or_nan(c) for c in self.cumulative])

    def centres(self) -> np.ndarray:
        """The mix weights' centre of gravity for each seed."""
        return np.array([center_of_gravity(w) for w in self.weights])

    def _draws(self, n_boot: int, seed: int) -> np.ndarray:
        n = self.layer_correct.shape[-1]
        return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))

    def boot_layers(self, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
        """``[n_boot, L]``: seed-averaged per-layer accuracy on test items drawn with replacement
        (the same draw for every layer, so differences between layers are paired)."""
        hit = self.layer_correct.mean(0)  # [L, n]: the seeds' average per item
        return np.stack([hit[:, i].mean(-1) for i in self._draws(n_boot, seed)])

    def boot_expected(self, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
        """``[n_boot]``: the expected layer of the seed-averaged cumulative scores on test items
        drawn with replacement (NaN for a draw where no layer adds anything)."""
        hit = self.cum_correct.mean(0)
        return np.array([_expected_or_nan(hit[:, i].mean(-1)) for i in self._draws(n_boot, seed)])


    def boot_gain(self, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
        """``[n_boot]``: last layer's minus first layer's accuracy (what depth adds), on test items
        drawn with replacement (Peters et al.'s comparison of a biLM's layers)."""
        layers = self.boot_layers(n_boot, seed)
        return layers[:, -1] - layers[:, 0]


def _expected_or_nan(cumulative: np.ndarray) -> float:
    try:
        return expected_layer(cumulative)
    except ValueError:
        return float("nan")


class _AllProbes(nn.Module):
    """Every linear probe :func:`layer_spread` needs, as one module: a probe per layer and a
    scalar-mix probe per prefix ``0..k``. Their parameters are disjoint and the loss is the sum
    of their losses, so with Adam (elementwise) each is trained exactly as it would be alone --
    same start (one seed), same minibatches -- but in one pass of tensor operations instead of
    ``2 L`` Python loops (a test checks that the two ways agree)."""

    def __init__(self, n_layers: int, d: int, n_classes: int, seed: int, mixes: bool = True):
        super().__init__()
        self.mixes = mixes
        torch.manual_seed(seed)  # as make_probe: every probe starts from this nn.Linear
        start = nn.Linear(d, n_classes)
        w0, b0 = start.weight.detach().T, start.bias.detach()
        self.w_layer = nn.Parameter(w0.expand(n_layers, d, n_classes).clone())
        self.b_layer = nn.Parameter(b0.expand(n_layers, n_classes).clone())
        self.w_mix = nn.Parameter(w0.expand(n_layers, d, n_classes).clone())
        self.b_mix = nn.Parameter(b0.expand(n_layers, n_classes).clone())
        self.mix = nn.Parameter(torch.zeros(n_layers, n_layers))  # row k: weights of layers 0..k
        self.gamma = nn.Parameter(torch.ones(n_layers))
        self.register_buffer("hidden", torch.ones(n_layers, n_layers).triu(1).bool())

    def weights(self) -> torch.Tensor:
        return self.mix.masked_fill(self.hidden, float("-inf")).softmax(-1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [B, L, d]`` -> logits ``[B, L, C]`` of the per-layer probes and of the mixes."""
        per = torch.einsum("bld,ldc->blc", x, self.w_layer) + self.b_layer
        if not self.mixes:
            return per, per[:, :0]
        mixed = self.gamma[:, None] * torch.einsum("kl,bld->bkd", self.weights(), x)
        return per, torch.einsum("bkd,kdc->bkc", mixed, self.w_mix) + self.b_mix


def _fit_all(x_train: torch.Tensor, y_train: np.ndarray, x_test: torch.Tensor, n_classes: int,
             config: ProbeConfig, mixes: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train :class:`_AllProbes`; return test predictions ``[L, n]`` per layer and per prefix,
    and the mix weights of the prefix of all layers (``mixes=False``: the per-layer probes only)."""
    device = torch.device(config.device)
    x, y = x_train.to(device), torch.as_tensor(y_train, dtype=torch.long, device=device)
    n_layers = x.shape[1]
    model = _AllProbes(n_layers, x.shape[2], n_classes, config.seed, mixes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed)
    for _ in range(config.epochs):
        for idx in torch.randperm(len(x), generator=gen).split(config.batch_size):
            idx = idx.to(device)
            per, cum = model(x[idx])
            yy = y[idx].repeat_interleave(n_layers)  # [B * L], matching per.reshape(-1, C)
            # the sum over probes of each probe's batch-mean loss
            loss = n_layers * F.cross_entropy(per.reshape(-1, n_classes), yy)
            if mixes:
                loss = loss + n_layers * F.cross_entropy(cum.reshape(-1, n_classes), yy)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        per, cum = model(x_test.to(device))
        w = model.weights()[-1].cpu().numpy() if mixes else np.full(n_layers, np.nan)
    return per.argmax(-1).T.cpu().numpy(), cum.argmax(-1).T.cpu().numpy(), w


def layer_spread(train_layers: Sequence[np.ndarray], y_train: np.ndarray, test_layers: Sequence[np.ndarray],
                 y_test: np.ndarray, config: ProbeConfig | None = None, seeds: Sequence[int] = (0, 1, 2),
                 one_by_one: bool = False) -> LayerSpread:
    """Per-layer probes and cumulative scalar mixes (Tenney et al.) for every seed in ``seeds``.

    The layers are standardised once (each with its training statistics) and shared by every
    seed and every mix. Linear probes without dropout are trained all at once
    (:class:`_AllProbes`); ``one_by_one=True`` trains them one at a time with :func:`fit_probe`
    and the scalar-mix code, as :func:`layer_scores` and :func:`cumulative_scores` do."""
    config = config or ProbeConfig()
    _check_layers(train_layers, y_train, test_layers, y_test)
    if not seeds:
        raise ValueError("give at least one probe seed")
    n_classes = int(y_train.max()) + 1  # as fit_probe does
    mean = np.stack([a.mean(0) for a in train_layers])
    std = np.stack([a.std(0) + 1e-6 for a in train_layers])
    x_tr, x_te = _stack(train_layers, mean, std), _stack(test_layers, mean, std)
    n_layers = len(train_layers)
    lay = np.zeros((len(seeds), n_layers, len(y_test)), bool)
    cum = np.zeros_like(lay)
    weights = np.zeros((len(seeds), n_layers))
    plain = ProbeConfig(**{**config.__dict__, "standardize": False})  # already standardised
    joint = config.kind == "linear" and config.dropout == 0 and not one_by_one
    for s, seed in enumerate(seeds):
        cfg = ProbeConfig(**{**plain.__dict__, "seed": int(seed)})
        if joint:  # all 2 L probes in one module: the same training, far fewer Python steps
            p_lay, p_cum, weights[s] = _fit_all(x_tr, y_train, x_te, n_classes, cfg)
            lay[s], cum[s] = p_lay == y_test, p_cum == y_test
            continue
        for k in range(n_layers):
            r = fit_probe(x_tr[:, k].numpy(), y_train, x_te[:, k].numpy(), y_test, cfg, n_classes)
            lay[s, k] = r.predict(x_te[:, k].numpy()) == y_test
            pred, w = _mix_predict(x_tr[:, : k + 1], y_train, x_te[:, : k + 1], n_classes, cfg)
            cum[s, k] = pred == y_test
        weights[s] = w
    return LayerSpread(tuple(int(x) for x in seeds), lay, cum, weights)


def compare_expected(later: np.ndarray, earlier: np.ndarray) -> tuple[float, float, float, str]:
    """Is the first task's expected layer above the second's? From two bootstrap samples of
    independent test sets (:meth:`LayerSpread.boot_expected`), paired draw by draw: returns
    ``(mean difference, 2.5 %, 97.5 %, verdict)``, the verdict ``"holds"`` when the interval is
    above 0, ``"reversed"`` when below, else ``"not separable"``."""
    later, earlier = np.asarray(later, float), np.asarray(earlier, float)
    if later.shape != earlier.shape or later.ndim != 1:
        raise ValueError(f"need two bootstrap samples of the same length, got {later.shape} and {earlier.shape}")
    d = later - earlier
    d = d[~np.isnan(d)]
    if len(d) < 0.9 * len(later):
        return float("nan"), float("nan"), float("nan"), "undefined (no layer adds anything)"
    lo, hi = np.percentile(d, [2.5, 97.5])
    verdict = "holds" if lo > 0 else "reversed" if hi < 0 else "not separable"
    return float(d.mean()), float(lo), float(hi), verdict
