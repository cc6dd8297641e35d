"""Interpolating two language models: Bengio et al.'s NNLM + trigram mixture.

Two models that make different mistakes are better together. For per-token probabilities
``p_a`` (say the NNLM) and ``p_b`` (say chapter 1's smoothed trigram) of the *same* tokens,

    p(w | context) = lam * p_a(w | context) + (1 - lam) * p_b(w | context),

a proper distribution for any ``0 <= lam <= 1``. The weight is chosen on the validation split
(EM or a grid) and the mixture is scored on the test split.

Everything here takes per-token natural-log probabilities (arrays, tensors, or zero-argument
callables returning them), so any model -- including ones outside this package -- can be mixed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np
import torch

from ..evaluate import perplexity

__all__ = ["LogProbs", "as_log_probs", "interpolate", "tune_weight", "MixtureResult", "mix"]

LogProbs = Union[Sequence[float], np.ndarray, torch.Tensor, Callable[[], object]]


def as_log_probs(x: LogProbs, name: str = "log-probs") -> torch.Tensor:
    """A 1-D float64 CPU tensor of per-token log-probabilities (callables are called first)."""
    if callable(x) and not isinstance(x, (torch.Tensor, np.ndarray)):
        x = x()
    t = x.detach().double().cpu() if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
    if t.dim() != 1 or t.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of per-token log-probabilities, got shape {tuple(t.shape)}")
    if torch.isnan(t).any() or (t > 1e-9).any():
        raise ValueError(f"{name} must be log-probabilities (<= 0, no NaN); did you pass probabilities or NLLs?")
    return t


def _pair(a: LogProbs, b: LogProbs, split: str) -> tuple[torch.Tensor, torch.Tensor]:
    ta, tb = as_log_probs(a, f"{split} log-probs of model a"), as_log_probs(b, f"{split} log-probs of model b")
    if ta.shape != tb.shape:
        raise ValueError(
            f"the two models scored different numbers of {split} tokens ({ta.numel()} vs {tb.numel()}); "
            "both must score exactly the same tokens in the same order"
        )
    return ta, tb


def interpolate(logp_a: LogProbs, logp_b: LogProbs, weight: float) -> torch.Tensor:
    """``log(weight * p_a + (1 - weight) * p_b)`` per token, computed in log space."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must lie in [0, 1], got {weight}")
    a, b = _pair(logp_a, logp_b, "")
    if weight == 0.0:
        return b
    if weight == 1.0:
        return a
    return torch.logaddexp(a + math.log(weight), b + math.log1p(-weight))


def _ppl(logp: torch.Tensor) -> float:
    return perplexity(-float(logp.sum()), logp.numel())


def tune_weight(
    val_a: LogProbs, val_b: LogProbs, *, method: str = "em", grid: int = 101, max_iter: int = 200, tol: float = 1e-9
) -> float:
    """The weight of model ``a`` that minimises validation perplexity.

    ``method="em"``: the classic EM update ``lam <- mean(lam p_a / (lam p_a + (1 - lam) p_b))``,
    which never increases the validation NLL (the objective is concave in ``lam``). ``"grid"``:
    the best of ``grid`` evenly spaced weights in [0, 1].
    """
    a, b = _pair(val_a, val_b, "validation")
    if method == "grid":
        if grid < 2:
            raise ValueError(f"grid must be >= 2, got {grid}")
        weights = torch.linspace(0, 1, grid, dtype=torch.float64)
        nll = torch.stack([-interpolate(a, b, float(w)).mean() for w in weights])
        return float(weights[int(torch.argmin(nll))])
    if method != "em":
        raise ValueError(f"method must be 'em' or 'grid', got {method!r}")
    lam = 0.5
    for _ in range(max_iter):
        la, lb = a + math.log(lam), b + math.log1p(-lam)
        post = torch.exp(la - torch.logaddexp(la, lb))  # responsibility of model a per token
        new = float(post.mean())
        new = min(max(new, 1e-12), 1 - 1e-12)
        if abs(new - lam) < tol:
            lam = new
            break
        lam = new
    return lam


@dataclass
class MixtureResult:
    """The tuned weight of model ``a`` and the perplexities of a, b and the mixture."""

    weight: float
    val_ppl: float
    test_ppl: float
    val_ppl_a: float
    val_ppl_b: float
    test_ppl_a: float
    test_ppl_b: float

    @property
    def test_reduction_vs_b(self) -> float:
        """Relative test-perplexity reduction of the mixture over model b (e.g. 0.24 = 24 %)."""
        return 1.0 - self.test_ppl / self.test_ppl_b


def mix(
    val_a: LogProbs, val_b: LogProbs, test_a: LogProbs, test_b: LogProbs, *, method: str = "em"
) -> MixtureResult:
    """Tune the mixture weight on validation, return every perplexity (test with that weight)."""
    va, vb = _pair(val_a, val_b, "validation")
    ta, tb = _pair(test_a, test_b, "test")
    w = tune_weight(va, vb, method=method)
    return MixtureResult(
        weight=w,
        val_ppl=_ppl(interpolate(va, vb, w)),
        test_ppl=_ppl(interpolate(ta, tb, w)),
        val_ppl_a=_ppl(va),
        val_ppl_b=_ppl(vb),
        test_ppl_a=_ppl(ta),
        test_ppl_b=_ppl(tb),
    )
