"""What each stored model of the book is: architecture, sizes, data, budget.

One :class:`ModelSpec` per model. Its :meth:`ModelSpec.key` hashes everything that decides the
weights, so a resumed run continues only the run it started, and the stored provenance names it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

TOKENIZER_VOCAB = 4096  # byte-level BPE, the six special tokens of chapter 7b included


@dataclass(frozen=True)
class Budget:
    """A training budget: ``steps`` of ``batch_size`` rows of ``block_size`` tokens, AdamW at
    ``lr`` with ``warmup`` linear steps and a cosine decay to ``lr * final_lr_fraction``."""

    steps: int
    batch_size: int = 32
    lr: float = 1e-3
    warmup: int = 300
    final_lr_fraction: float = 0.1
    weight_decay: float = 0.01
    clip: float = 1.0
    eval_every: int = 200

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "warmup", "eval_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Budget.{name} must be a positive int, got {v!r}")
        if not (self.lr > 0 and 0 <= self.final_lr_fraction <= 1 and self.clip > 0):
            raise ValueError(f"Budget: lr > 0, 0 <= final_lr_fraction <= 1 and clip > 0, got {self}")


@dataclass(frozen=True)
class ModelSpec:
    """One stored model.

    Attributes:
        name: the zoo's key (``python -m companion.zoo train NAME``).
        arch: ``"gpt"`` (next-token LM) or ``"bert"`` (masked LM, single segments, dynamic masks).
        d_model, n_layer, n_head, block_size: the network (vocabulary: the book's 4k BPE + 3).
        budget: per scale (``laptop`` is the CPU run that is stored; ``ci`` a seconds-long smoke
            run; ``gpu`` the preset for a lent GPU).
        mask_p: BERT's masking rate.
        seed: initialisation, data order and masks.
        description: one line for ``list``.
    """

    name: str
    arch: str
    d_model: int
    n_layer: int
    n_head: int
    block_size: int
    budget: dict[str, Budget] = field(default_factory=dict)
    mask_p: float = 0.15
    seed: int = 0
    description: str = ""

    def __post_init__(self) -> None:
        if self.arch not in ("gpt", "bert"):
            raise ValueError(f"ModelSpec.arch must be 'gpt' or 'bert', got {self.arch!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_head={self.n_head}")

    def key(self, scale: str) -> str:
        """A short hash of everything that decides the weights at ``scale``."""
        if scale not in self.budget:
            raise ValueError(f"{self.name} has no budget for scale {scale!r}; it has {sorted(self.budget)}")
        d = asdict(self)
        d["budget"] = asdict(self.budget[scale])
        d.pop("description")
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def _budgets(laptop_steps: int, gpu_steps: int, lr: float) -> dict[str, Budget]:
    return {"ci": Budget(steps=6, batch_size=4, lr=lr, warmup=2, eval_every=3),
            "laptop": Budget(steps=laptop_steps, lr=lr),
            "gpu": Budget(steps=gpu_steps, batch_size=128, lr=lr, warmup=500, eval_every=500)}


# Sizes: d=256, 4 layers, 128-token rows. On one thread of a 2-core x86 machine (AVX-512,
# torch 2.13) a training step of 32 x 128 tokens took 1.22 s for the GPT (4.2M parameters) and
# 0.84 s for the BERT (4.4M; its output layer sees only the masked 15 %); measured 2026-12-03
# with the other core busy. The laptop budgets (14.7M and 19.7M tokens) are what one such thread does in about two hours beside other work.
SPECS: dict[str, ModelSpec] = {s.name: s for s in (
    ModelSpec("gpt-book", "gpt", 256, 4, 4, 128, _budgets(3600, 6000, 1e-3),
              description="GPT (next-token LM) on the Part II corpus + IMDb train/unlabelled reviews"),
    ModelSpec("bert-book", "bert", 256, 4, 4, 128, _budgets(4800, 6000, 1e-3),
              description="BERT (masked LM, single segments, dynamic masking) on the same text"),
)}


def get_spec(name: str) -> ModelSpec:
    """The spec of ``name``; a clear error lists the known names."""
    if not isinstance(name, str) or name not in SPECS:
        raise ValueError(f"unknown stored model {name!r}; the zoo has: {', '.join(SPECS)}")
    return SPECS[name]
