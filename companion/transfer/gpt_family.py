"""A family of GPT sizes for chapter 10b's "in-context learning vs model size".

Chapter 9 trains a family of GPTs (:func:`companion.efficiency.scaling.train_family`) to fit
scaling laws; chapter 10b asks the other question GPT-3 asked of its family: does in-context
learning appear as the model grows? Training the family in the notebook would not fit its
five minutes, so ``benchmarks/ch10b_gpt_family.py`` trains it once with chapter 9's code
(same token stream, same number of tokens, cosine schedule, Kaplan et al.'s learning rate per
size) over chapter 7b's stored tokenizer (``checkpoints/ch07_laptop``, so that prompts read the
same as for the chapter's other GPT), and stores each member here as bf16 safetensors with the
configs, the measured held-out losses, the command and each file's sha256
(``checkpoints/ch09_family/meta.json``). :func:`load_family` loads it at every scale and
refuses a file whose sha256 does not match.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..fileio import verified_meta

FAMILY_DIR = Path(__file__).resolve().parent / "checkpoints" / "ch09_family"
CREATE = "nice -n 10 python -m benchmarks.ch10b_gpt_family"


def member_file(name: str) -> str:
    """The safetensors file of the member called ``name`` (e.g. ``d64-L2``)."""
    return f"gpt-{name}.safetensors"


def load_family(directory: str | os.PathLike = FAMILY_DIR, device: str | None = None):
    """``(models, meta)``: ``{name: GPT}`` in float32 (eval mode), smallest first, and the meta
    (``members`` with each one's config, non-embedding parameters and held-out loss). Raises if
    a file is missing or its sha256 differs from ``meta.json``. The tokenizer is chapter 7b's
    stored one (:func:`companion.transfer.small_models.load_small`)."""
    from safetensors.torch import load_file

    from ..transformer.gpt import GPT, GPTConfig

    directory = Path(directory)
    meta_path = directory / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"{meta_path} is missing; create it with `{CREATE}`")
    import json

    names = [m["name"] for m in json.loads(meta_path.read_text(encoding="utf-8"))["members"]]
    meta = verified_meta(directory, tuple(member_file(n) for n in names), create=CREATE)
    models = {}
    for m in meta["members"]:
        model = GPT(GPTConfig(**m["config"]), seed=None)
        state = {k: v.float() for k, v in load_file(str(directory / member_file(m["name"]))).items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - {"lm_head.weight"}:
            raise ValueError(f"{m['name']}: checkpoint does not fit the model (missing {missing}, "
                             f"unexpected {unexpected})")
        if device is not None:
            model.to(device)
        models[m["name"]] = model.eval()
    return models, meta
