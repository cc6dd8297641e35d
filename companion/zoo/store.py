"""Stored models: bf16 safetensors beside a provenance file, loaded only after a sha256 check.

``models/<name>/model.safetensors`` holds the weights in bfloat16 (half the bytes of float32; a
model is used in float32 after loading). ``models/<name>/provenance.json`` says how they were
made: the command, the commit, the data's fingerprint, the seed, steps, tokens, CPU time, the
held-out loss curve, the unigram loss of the same tokenizer on the same held-out text, and the
weights' sha256, which :func:`load` checks before it reads a byte of the tensors.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ..fileio import umask_mode
from .corpus import MODELS_DIR, book_tokenizer
from .specs import get_spec
from .trainer import build_model

MAX_BYTES = 20 * 1024 * 1024


def model_dir(name: str) -> Path:
    get_spec(name)
    return MODELS_DIR / name


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def save(name: str, model: torch.nn.Module, provenance: dict) -> Path:
    """Write ``model``'s weights (bf16) and ``provenance`` (plus the weights' sha256 and size)
    into ``models/<name>/``, each file atomically."""
    folder = model_dir(name)
    folder.mkdir(parents=True, exist_ok=True)
    tensors, seen = {}, set()
    for k, v in model.state_dict().items():
        if v.data_ptr() in seen:  # a tied weight (the output layer is the token embedding): stored once
            continue
        seen.add(v.data_ptr())
        tensors[k] = v.detach().to("cpu", torch.bfloat16).contiguous()
    tmp = folder / ".model.safetensors.tmp"
    save_file(tensors, str(tmp), metadata={"name": name, "dtype": "bfloat16"})
    size = tmp.stat().st_size
    if size > MAX_BYTES:
        tmp.unlink()
        raise ValueError(f"{name}: {size:,} bytes of weights, over the {MAX_BYTES:,}-byte limit of a stored model")
    prov = dict(provenance, weights_sha256=sha256_file(tmp), weights_bytes=size)
    os.chmod(tmp, umask_mode())  # a stored model is plain data, readable like the rest of the tree
    os.replace(tmp, folder / "model.safetensors")
    ptmp = folder / ".provenance.json.tmp"
    ptmp.write_text(json.dumps(prov, indent=1) + "\n", encoding="utf-8")
    os.replace(ptmp, folder / "provenance.json")
    return folder


def provenance(name: str) -> dict:
    """The stored provenance of ``name`` (a clear error when the model is not stored)."""
    path = model_dir(name) / "provenance.json"
    if not path.is_file():
        raise FileNotFoundError(f"{name} is not stored ({path} is missing); `python -m companion.zoo train {name}`")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"{path} is not valid JSON ({err})") from err


def verify(name: str) -> dict:
    """Check that the stored weights are the ones the provenance names; return the provenance."""
    prov = provenance(name)
    path = model_dir(name) / "model.safetensors"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    got = sha256_file(path)
    if got != prov.get("weights_sha256"):
        raise ValueError(f"{path}: sha256 {got} is not the stored {prov.get('weights_sha256')}; "
                         "the file is damaged or was replaced")
    return prov


def _is_tied(model: torch.nn.Module, key: str) -> bool:
    """Whether ``key`` shares its storage with another entry of the state dict."""
    sd = model.state_dict()
    return any(k != key and v.data_ptr() == sd[key].data_ptr() for k, v in sd.items())


def load(name: str, device: str = "cpu") -> torch.nn.Module:
    """The stored model ``name`` in float32 on ``device``, in eval mode, after a sha256 check.

    Example::

        from companion import zoo
        gpt = zoo.load("gpt-book")
        tok = zoo.tokenizer()
    """
    verify(name)
    spec = get_spec(name)
    path = model_dir(name) / "model.safetensors"
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{path} is not a readable safetensors file ({err})") from err
    model = build_model(spec, book_tokenizer(), seed=None)
    state = {k: v.float() for k, v in tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = {k for k, v in model.state_dict().items() if k not in state}
    missing = [k for k in missing if k not in tied or not _is_tied(model, k)]
    if missing or unexpected:
        raise ValueError(f"{path} does not fit {name}'s network: missing {missing[:5]}, unexpected {unexpected[:5]}")
    return model.to(device).eval()
