"""Sampling text from an n-gram model: seeded, with a temperature."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .ngram import BOS, BOS_ID, EOS_ID, UNK_ID


def _prompt_tokens(prompt: str | Sequence[str] | None) -> list[str]:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        from companion.data import tokenize

        return tokenize(prompt, keep_punct=True)
    if not all(isinstance(w, str) for w in prompt):
        raise TypeError("prompt must be a string or a list of str tokens")
    return list(prompt)


def apply_temperature(p: np.ndarray, temperature: float) -> np.ndarray:
    """Re-weight a distribution: ``p^(1/T)`` renormalised; T = 0 puts all mass on the argmax.

    T < 1 sharpens (safer, more repetitive text), T > 1 flattens (more surprising text).
    """
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature) \
            or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (1 = the model as it is), got {temperature!r}")
    p = np.asarray(p, dtype=np.float64)
    if p.sum() <= 0:
        raise ValueError("the distribution has no mass left to sample from")
    if temperature == 0:
        out = np.zeros_like(p)
        out[int(np.argmax(p))] = 1.0
        return out
    with np.errstate(divide="ignore"):
        logp = np.log(p) / temperature
    logp -= logp.max()
    out = np.exp(logp)
    return out / out.sum()


def sample(model, prompt: str | Sequence[str] | None = None, max_words: int = 30, *, temperature: float = 1.0,
           seed: int = 0, allow_unk: bool = False) -> list[str]:
    """Sample words after ``prompt`` until ``</s>`` or ``max_words`` words.

    Args:
        model: an :class:`~companion.counting.lm.NGramLM`.
        prompt: the sentence start (a string is tokenized with ``companion.data.tokenize``, which
            lower-cases and keeps punctuation, like Bengio's split of Brown), or a token list.
        max_words: the most words to generate (>= 1).
        temperature: see :func:`apply_temperature`.
        seed: the random seed (same seed, same text).
        allow_unk: allow the unknown symbol to be generated (off by default: it reads badly).

    Returns:
        The generated words (without the prompt, without ``</s>``).
    """
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ValueError(f"max_words must be a positive int, got {max_words!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    apply_temperature(np.ones(1), temperature)  # validate early
    rng = np.random.default_rng(int(seed))
    context = [BOS_ID] + [model.vocab.id(w) for w in _prompt_tokens(prompt)]
    keep = model.order - 1
    out: list[int] = []
    for _ in range(max_words):
        ctx = context[len(context) - keep:] if keep > 0 else []
        p = model._next_probs(ctx)
        p[BOS_ID] = 0.0
        if not allow_unk:
            p[UNK_ID] = 0.0
            if p.sum() <= 0:  # only <unk> was possible: let the sentence end
                p[EOS_ID] = 1.0
        q = apply_temperature(p / p.sum(), temperature)
        w = int(np.searchsorted(np.cumsum(q), rng.random() * q.sum(), side="right"))
        w = min(w, len(q) - 1)
        while q[w] == 0:  # guard against landing on a zero at a float edge
            w -= 1
        if w == EOS_ID:
            break
        out.append(w)
        context.append(w)
    return model.vocab.decode(out)


def generate_text(model, prompt: str | Sequence[str] | None = None, max_words: int = 30, *,
                  temperature: float = 1.0, seed: int = 0) -> str:
    """The prompt and its sampled continuation as one string (for display)."""
    words = sample(model, prompt, max_words, temperature=temperature, seed=seed)
    start = _prompt_tokens(prompt)
    return " ".join([w for w in start if w != BOS] + words)
