"""Instruction-style multitask prompted fine-tuning in miniature (FLAN, Wei et al. 2022; T0,
Sanh et al. 2022).

FLAN and T0 fine-tune a language model on many tasks, each *written as a prompt* with its answer
as words, and then ask it a task it never saw, zero-shot. Here the model is a masked LM and a
prompted task is a :class:`PromptedTask`: a pattern with one blank and a word per label. The
loss is the language-modelling loss at the blank over the *whole* vocabulary,
``-log P([MASK] = v(y) | pattern(x))`` -- the model is taught to answer in words, not to pick
among a fixed set of labels (:func:`prompted_batches`, :func:`instruction_tune`). A held-out
task is then scored zero-shot with its own pattern and words (:func:`zero_shot_accuracy`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..data.tasks import Example
from .finetune import FTConfig, train
from .prompts import ClozeModel, cloze_inputs, label_distribution, mask_logits


@dataclass(frozen=True)
class PromptedTask:
    """A task written as a prompt: its examples, a pattern (``{text}``, one ``[MASK]``) and one
    single-token word per label."""

    name: str
    examples: tuple[Example, ...]
    pattern: str
    words: tuple[str, ...]


def prompted_batches(cloze: ClozeModel, tasks: Sequence[PromptedTask], batch_size: int, max_len: int, seed: int):
    """``epoch -> batches``: each batch holds examples of one task in its pattern, with
    ``target`` = the id of the gold label's word; the batches of all tasks are shuffled
    together (a uniform mixture by examples)."""
    word_ids = [[cloze.word_id(w) for w in t.words] for t in tasks]

    def make(e: int) -> list[dict]:
        g = torch.Generator().manual_seed(seed * 1000 + e)
        out = []
        for t, ids in zip(tasks, word_ids):
            order = torch.randperm(len(t.examples), generator=g).tolist()
            for i in range(0, len(order), batch_size):
                chunk = [t.examples[j] for j in order[i:i + batch_size]]
                b = cloze_inputs(cloze, t.pattern, chunk, max_len)
                b["target"] = torch.tensor([ids[int(x.label)] for x in chunk])
                out.append(b)
        return [out[i] for i in torch.randperm(len(out), generator=g).tolist()]

    return make


class _Tuner(torch.nn.Module):
    def __init__(self, cloze: ClozeModel):
        super().__init__()
        self.cloze = copy.copy(cloze)
        self.encoder = copy.deepcopy(cloze.encoder)
        self.head = copy.deepcopy(cloze.head) if isinstance(cloze.head, torch.nn.Module) else cloze.head
        if isinstance(self.head, torch.nn.Module) and hasattr(self.head, "embedding"):
            self.head.embedding = self.encoder.embeddings.tok  # a tied head stays tied to the copy
        self.cloze.encoder, self.cloze.head = self.encoder, self.head
        for p in self.parameters():
            p.requires_grad_(True)

    def loss(self, batch: dict) -> torch.Tensor:
        return F.cross_entropy(self.cloze.logits(batch).float(), batch["target"])


def instruction_tune(cloze: ClozeModel, tasks: Sequence[PromptedTask], config: FTConfig) -> ClozeModel:
    """A copy of ``cloze`` fine-tuned on the mixture of prompted ``tasks`` (the original is left
    untouched). Returns the tuned model as a :class:`ClozeModel` (eval mode)."""
    if not tasks:
        raise ValueError("give at least one PromptedTask to tune on")
    tuner = _Tuner(cloze)
    train(tuner, prompted_batches(tuner.cloze, tasks, config.batch_size, config.max_len, config.seed), config)
    tuner.eval()
    return tuner.cloze


def zero_shot_accuracy(cloze: ClozeModel, task: PromptedTask, max_len: int = 64) -> float:
    """Accuracy (x 100) of ``task``'s pattern and words with no training on it."""
    p = label_distribution(mask_logits(cloze, task.pattern, list(task.examples), max_len=max_len),
                           cloze.word_ids(list(task.words)))
    gold = np.array([int(e.label) for e in task.examples])
    return 100 * float((p.argmax(-1).numpy() == gold).mean())
