"""Perplexity: the language modelling score of chapters 1, 2, 6 and 7.

For a test text of N tokens, a model's cross-entropy (in nats per token) is the mean negative
log-likelihood H = −(1/N) Σ log p(w_t | history), and its perplexity is

    PPL = exp(H) = 2^(H / ln 2)

i.e. the exponential of the cross-entropy that ``torch.nn.functional.cross_entropy`` returns
(which uses natural logarithms). A perplexity of k means the model is, on average, as unsure as
if it chose uniformly among k words. Always sum the NLL over tokens first and divide once by the
token count: averaging per-batch perplexities (or per-batch means of unequal batches) is wrong.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import torch
from torch import nn

from ..device import get_device
from ..train import to_device

NllFn = Callable[[nn.Module, Any], tuple[torch.Tensor | float, int]]


def _check(nll_sum: float, n_tokens: int) -> float:
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive int (the number of predicted tokens), got {n_tokens!r}")
    value = float(nll_sum)
    if math.isnan(value):
        raise ValueError("nll_sum is NaN; the model produced invalid log-probabilities")
    if value < 0:
        raise ValueError(
            f"nll_sum = {value} is negative, but a negative log-likelihood of discrete tokens is >= 0; "
            "did you pass the log-likelihood (sum of log p) instead of its negative?"
        )
    return value


def cross_entropy_nats(nll_sum: float | torch.Tensor, n_tokens: int) -> float:
    """Mean negative log-likelihood per token, in nats (natural log)."""
    return _check(float(nll_sum), n_tokens) / n_tokens


def bits_per_token(nll_sum: float | torch.Tensor, n_tokens: int) -> float:
    """Cross-entropy in bits per token: H / ln 2 (so that PPL = 2 ** bits)."""
    return cross_entropy_nats(nll_sum, n_tokens) / math.log(2)


def perplexity(nll_sum: float | torch.Tensor, n_tokens: int) -> float:
    """``exp(nll_sum / n_tokens)`` with ``nll_sum`` the summed NLL in nats.

    An infinite ``nll_sum`` (a model that gave some test token probability 0, like an
    unsmoothed n-gram model) gives an infinite perplexity.

    Example:
        >>> round(perplexity(4 * math.log(10), 4), 6)   # every token had p = 1/10
        10.0
    """
    h = cross_entropy_nats(nll_sum, n_tokens)
    return math.exp(h) if h < 709.0 else math.inf  # exp overflows a float beyond ~709


def evaluate_nll(
    model: nn.Module,
    batches: Iterable[Any],
    nll_fn: NllFn,
    *,
    device: str | torch.device | None = None,
) -> tuple[float, int]:
    """Sum ``nll_fn(model, batch) -> (summed NLL in nats, tokens)`` over ``batches``.

    The model runs in eval mode under ``torch.no_grad()`` (its mode is restored afterwards).
    ``device=None`` keeps the model where it is; otherwise the model is moved there. Batches are
    moved to the model's device. Sums are accumulated in float64.

    Raises:
        ValueError: if there are no batches, or ``nll_fn`` returns something malformed.
    """
    if not callable(nll_fn):
        raise TypeError("nll_fn must be a function (model, batch) -> (summed_nll, n_tokens)")
    if device is not None:
        dev = get_device(device)
        model.to(dev)
    else:
        p = next(iter(model.parameters()), None)
        dev = p.device if p is not None else torch.device("cpu")
    was_training = model.training
    model.eval()
    total, tokens, n_batches = 0.0, 0, 0
    try:
        with torch.no_grad():
            for batch in batches:
                out = nll_fn(model, to_device(batch, dev))
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise ValueError(
                        "nll_fn must return a pair (summed_nll, n_tokens); e.g. "
                        "(F.cross_entropy(logits, y, reduction='sum'), y.numel())"
                    )
                nll, n = out
                nll = float(nll.double().sum()) if isinstance(nll, torch.Tensor) else float(nll)
                n = int(n)
                _check(nll, max(n, 1))
                total += nll
                tokens += n
                n_batches += 1
    finally:
        model.train(was_training)
    if n_batches == 0 or tokens == 0:
        raise ValueError("evaluate_nll got no batches (or no tokens); is the evaluation data empty?")
    return total, tokens


def perplexity_of(
    model: nn.Module,
    batches: Iterable[Any],
    nll_fn: NllFn,
    *,
    device: str | torch.device | None = None,
) -> float:
    """Perplexity of ``model`` over ``batches``: ``perplexity(*evaluate_nll(...))``.

    Example::

        def nll(model, batch):
            x, y = batch
            return F.cross_entropy(model(x), y, reduction="sum"), y.numel()

        ppl = perplexity_of(model, valid_batches, nll)
    """
    return perplexity(*evaluate_nll(model, batches, nll_fn, device=device))
