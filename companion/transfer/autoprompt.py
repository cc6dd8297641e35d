"""AutoPrompt (Shin et al. 2020): trigger tokens for a cloze prompt, found by gradients.

A pattern such as ``"{text} [T] [T] [T] [MASK]."`` has trigger slots ``[T]`` that no person
fills: a search does. Each step of the search

1. back-propagates the loss of the label words at the blank (the cross-entropy of
   :func:`~.prompts.label_scores`) to the *input embeddings* of the trigger slots, averaged over
   the search examples: ``g = dL/de_t``;
2. takes the first-order estimate of the change in loss when token ``w`` replaces the trigger
   in slot ``t``, ``(e_w - e_t) . g``, and keeps the ``k`` tokens with the largest ``-e_w . g``
   (:func:`hotflip_candidates`, HotFlip's step; Ebrahimi et al. 2018);
3. evaluates each candidate exactly (a forward pass on the same examples) and swaps in the
   best one only if it lowers the loss.

So the loss on the search examples never rises. The model is frozen; only the discrete
triggers change. :func:`insert_triggers` writes trigger ids in front of the blank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ..data.tasks import Example
from .prompts import ClozeModel, cloze_inputs, label_scores


def insert_triggers(batch: dict[str, torch.Tensor], triggers: Sequence[int], pad_id: int
                    ) -> dict[str, torch.Tensor]:
    """A copy of a :func:`~.prompts.cloze_inputs` batch with the ``triggers`` ids written right
    before each row's ``[MASK]`` (``mask_pos`` moves accordingly); rows stay padded with
    ``pad_id``."""
    t = torch.as_tensor(list(triggers), dtype=torch.long)
    n = len(t)
    ids, att, pos = batch["ids"], batch["attention_mask"], batch["mask_pos"]
    B, T = ids.shape
    out_ids = torch.full((B, T + n), pad_id, dtype=torch.long)
    out_att = torch.zeros(B, T + n, dtype=torch.long)
    for i in range(B):
        p, L = int(pos[i]), int(att[i].sum())
        row = torch.cat([ids[i, :p], t, ids[i, p:L]])
        out_ids[i, : L + n] = row
        out_att[i, : L + n] = 1
    return {"ids": out_ids, "attention_mask": out_att, "segments": torch.zeros_like(out_ids),
            "mask_pos": pos + n}


def hotflip_candidates(grad: torch.Tensor, embeddings: torch.Tensor, k: int,
                       allowed: torch.Tensor | None = None) -> list[int]:
    """The ``k`` token ids with the largest ``-grad . e_w`` (``embeddings [V, d]``,
    ``grad [d]``): the swaps that lower the loss most to first order. ``allowed`` is a bool
    mask ``[V]`` of tokens that may be chosen."""
    score = -(embeddings @ grad)
    if allowed is not None:
        score = score.masked_fill(~allowed, float("-inf"))
    return score.topk(k).indices.tolist()


@dataclass
class SearchResult:
    """The triggers found, the search loss after each step (the first entry: before any swap),
    the accepted swaps ``(step, slot, old id, new id)`` and each step's candidate ids."""

    triggers: list[int]
    losses: list[float]
    swaps: list[tuple[int, int, int, int]] = field(default_factory=list)
    candidates: list[list[int]] = field(default_factory=list)


class _Grab:
    """A forward hook that keeps the token-embedding output with its gradient."""

    def __init__(self, module: torch.nn.Module):
        self.out: torch.Tensor | None = None
        self.handle = module.register_forward_hook(self)

    def __call__(self, module, inputs, output):
        if output.requires_grad:  # only in the gradient pass, not in the scoring passes
            output.retain_grad()
        self.out = output


def _loss(cloze: ClozeModel, batch: dict, label_ids, gold: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(label_scores(cloze.logits(batch), label_ids), gold)


def search(cloze: ClozeModel, pattern: str, words: Sequence[str], examples: Sequence[Example], n_triggers: int = 3,
           steps: int = 10, k: int = 10, init: int | None = None, allowed: torch.Tensor | None = None,
           max_len: int = 64, seed: int = 0) -> SearchResult:
    """AutoPrompt's search: ``n_triggers`` slots inserted before the ``[MASK]`` of ``pattern``
    (e.g. ``"{text} [MASK]."``), ``steps`` rounds, each on one slot (chosen at random, seeded),
    with ``k`` gradient candidates scored on ``examples`` (the search set). ``init`` is the
    starting token of every slot (default: the first allowed id). Special tokens are never
    candidates unless ``allowed`` (a bool mask over the vocabulary) says otherwise. Returns the
    triggers and the loss history."""
    if steps < 0 or k < 1 or n_triggers < 1:
        raise ValueError(f"need steps >= 0, k >= 1, n_triggers >= 1; got {steps}, {k}, {n_triggers}")
    c = cloze.config
    emb = cloze.encoder.embeddings.tok
    V = emb.weight.shape[0]
    if allowed is None:
        allowed = torch.ones(V, dtype=torch.bool)
        allowed[[c.pad_id, c.cls_id, c.sep_id, c.mask_id]] = False
    if init is None:
        init = int(torch.nonzero(allowed)[0])
    label_ids = cloze.word_ids(list(words))
    base = cloze_inputs(cloze, pattern, examples, max_len - n_triggers)
    gold = torch.tensor([int(e.label) for e in examples])
    dev = next(cloze.encoder.parameters()).device
    gold = gold.to(dev)
    triggers = [init] * n_triggers
    rng = np.random.default_rng(seed)
    was = cloze.encoder.training
    cloze.encoder.eval()
    req = [p.requires_grad for p in cloze.encoder.parameters()]
    for p in cloze.encoder.parameters():
        p.requires_grad_(False)  # frozen: only the embedding output needs a gradient
    grab = _Grab(emb)
    try:
        def batch(trig):
            return {k_: v.to(dev) for k_, v in insert_triggers(base, trig, c.pad_id).items()}

        with torch.no_grad():
            current = float(_loss(cloze, batch(triggers), label_ids, gold))
        out = SearchResult(list(triggers), [current])
        for step in range(steps):
            slot = int(rng.integers(n_triggers))
            b = batch(triggers)
            emb.weight.requires_grad_(True)  # so that the hook's output is part of the graph
            loss = _loss(cloze, b, label_ids, gold)
            loss.backward()
            emb.weight.requires_grad_(False)
            emb.weight.grad = None
            pos = b["mask_pos"] - n_triggers + slot
            g = grab.out.grad[torch.arange(len(pos), device=dev), pos].mean(0)
            cand = hotflip_candidates(g, emb.weight.detach(), k, allowed.to(dev))
            out.candidates.append(cand)
            best, best_loss = None, current
            with torch.no_grad():
                for w in cand:
                    trial = list(triggers)
                    trial[slot] = w
                    val = float(_loss(cloze, batch(trial), label_ids, gold))
                    if val < best_loss:
                        best, best_loss = w, val
            if best is not None:
                out.swaps.append((step, slot, triggers[slot], best))
                triggers[slot] = best
                current = best_loss
            out.losses.append(current)
        out.triggers = list(triggers)
        return out
    finally:
        grab.handle.remove()
        for p, r in zip(cloze.encoder.parameters(), req):
            p.requires_grad_(r)
        cloze.encoder.train(was)


@torch.no_grad()
def trigger_label_scores(cloze: ClozeModel, pattern: str, words: Sequence[str], triggers: Sequence[int],
                         examples: Sequence[Example], max_len: int = 64, batch_size: int = 64) -> torch.Tensor:
    """``[n, L]`` label scores of ``examples`` under ``pattern`` with ``triggers`` before the
    blank (``triggers=[]``: the pattern as written)."""
    cloze.encoder.eval()
    dev = next(cloze.encoder.parameters()).device
    ids = cloze.word_ids(list(words))
    out = []
    for i in range(0, len(examples), batch_size):
        b = cloze_inputs(cloze, pattern, examples[i:i + batch_size], max_len - len(triggers))
        if len(triggers):
            b = insert_triggers(b, triggers, cloze.config.pad_id)
        out.append(label_scores(cloze.logits({k: v.to(dev) for k, v in b.items()}), ids).cpu())
    return torch.cat(out)
