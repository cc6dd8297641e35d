"""The first rows of the ``brown_ppl`` running table, read from what chapters 1 and 2 printed.

Chapters 1 and 2 were written before the running tables existed; their measured perplexities
are in the stored outputs of their notebooks (and, for the GPU run of chapter 2, in
``benchmarks/gpu/results/h200_ch02_gpu_scale.json``). :func:`brown_rows` parses them, so the
seeded rows are read, never typed; ``tests/test_evaluate_tables.py`` re-reads the notebooks and
checks the stored rows still agree. Each row's ``source`` names the notebook and cell id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CH01 = "notebooks/01_counting.ipynb"
CH02 = "notebooks/02_neural_lm.ipynb"
GPU_RESULT = "benchmarks/gpu/results/h200_ch02_gpu_scale.json"
CELL_NGRAM = "5384e1b5"  # ch01: perplexity_table(...) -- test perplexity, method x n
CELL_KN_VALID = "1c994b04"  # ch02: modified KN n = 3 / 5, valid and test
CELL_MIX = "84698b51"  # ch02: the five neural models alone (valid) and mixed with the trigram
CELL_CLAIM = "82228422"  # ch02: the best model alone on test
GPU_NAMES = {"full": "NNLM, full softmax", "direct": "NNLM, full softmax + direct", "hsoftmax": "NNLM, tree",
             "hsoftmax_direct": "NNLM, tree + direct", "lbl": "LBL, tree"}
_NUM = r"[-+]?\d+(?:\.\d+)?"


def _cell(notebook: Path, cell_id: str) -> tuple[int, str]:
    """(index, stored text output) of the cell ``cell_id``."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell.get("id") == cell_id:
            parts = []
            for out in cell.get("outputs", []):
                if "text" in out:
                    parts.append("".join(out["text"]))
                elif "text/plain" in out.get("data", {}):
                    parts.append("".join(out["data"]["text/plain"]))
            return i, "\n".join(parts)
    raise ValueError(f"{notebook} has no cell with id {cell_id!r}; re-seed the brown_ppl table by hand")


def brown_rows(root: Path = ROOT) -> list[dict[str, Any]]:
    """The measured rows of chapters 1 and 2 as ``RunningTable.add`` keyword dicts."""
    rows: list[dict[str, Any]] = []
    # chapter 1: test perplexity of every smoothing method at n = 3 and n = 5
    idx, text = _cell(root / CH01, CELL_NGRAM)
    ngram: dict[str, dict[int, float]] = {}
    for line in text.splitlines():
        m = re.match(rf"^(\S.*?)\s+({_NUM})\s+({_NUM})\s+({_NUM})\s+({_NUM})\s*$", line)
        if m and not line.startswith("n "):
            ngram[m.group(1)] = dict(zip((2, 3, 4, 5), map(float, m.groups()[1:])))
    if not {"add-1", "KN", "modified KN"} <= set(ngram):
        raise ValueError(f"{CH01} cell {CELL_NGRAM}: could not read the perplexity table from {text!r}")
    _, kn_text = _cell(root / CH02, CELL_KN_VALID)
    kn_valid = {}
    for line in kn_text.splitlines():
        m = re.match(rf"^(modified KN, n = \d)\s+({_NUM})\s+({_NUM})\s*$", line)
        if m:
            kn_valid[m.group(1)] = float(m.group(2))
    for method, by_n in ngram.items():
        for n in (3, 5):
            name = f"{method}, n = {n}"
            scores: dict[str, float] = {"test": by_n[n]}
            source = f"{CH01} cell {idx} (id {CELL_NGRAM})"
            if name in kn_valid:
                scores = {"valid": kn_valid[name], **scores}
                source += f"; valid: {CH02} cell id {CELL_KN_VALID}"
            rows.append({"model": name, "chapter": "01", "scores": scores, "scale": "laptop", "params": None, "source": source})
    # chapter 2: the neural models alone (valid) and mixed with the modified-KN trigram
    idx, text = _cell(root / CH02, CELL_MIX)
    numbers: dict[str, list[float]] = {}
    for line in text.splitlines():
        m = re.match(r"^((?:NNLM|LBL)[^)]*\))\s+(.*?)\s*\\?\s*$", line)
        if m:
            numbers.setdefault(m.group(1), []).extend(float(x) for x in re.findall(_NUM, m.group(2)))
    if len(numbers) != 5 or any(len(v) != 5 for v in numbers.values()):
        raise ValueError(f"{CH02} cell {CELL_MIX}: expected 5 models x 5 numbers, read {numbers}")
    _, claim = _cell(root / CH02, CELL_CLAIM)
    best = re.search(rf"^\s+(.+?) alone: ({_NUM})", claim, re.MULTILINE)
    source = f"{CH02} cell {idx} (id {CELL_MIX})"
    for name, (weight, alone_valid, _tri_valid, mix_valid, mix_test) in numbers.items():
        alone: dict[str, float] = {"valid": alone_valid}
        alone_source = source
        if best and best.group(1) == name:
            alone["test"] = float(best.group(2))
            alone_source += f"; test: cell id {CELL_CLAIM}"
        rows.append({"model": name, "chapter": "02", "scores": alone, "scale": "laptop", "source": alone_source})
        rows.append({"model": f"{name} + modified KN trigram", "chapter": "02",
                         "scores": {"valid": mix_valid, "test": mix_test}, "scale": "laptop", "source": source,
                         "meta": {"nnlm_weight": weight}})
    # chapter 2 at gpu scale (one H200 run, stored by benchmarks/gpu/ch02_gpu_scale.py)
    gpu = json.loads((root / GPU_RESULT).read_text(encoding="utf-8"))
    for variant, res in gpu["models"].items():
        name = f"{GPU_NAMES[variant]} (gpu preset, {res['epochs']:g} epochs)"
        meta = {"device": gpu["device"], "tokens_per_s": round(res["tokens_per_s"])}
        rows.append({"model": name, "chapter": "02", "scale": "gpu", "source": GPU_RESULT, "meta": meta,
                         "scores": {"valid": round(res["valid_ppl"], 2), "test": round(res["test_ppl"], 2)},
                         "train_time_s": round(res["train_s"], 1)})
        rows.append({"model": f"{name} + modified KN trigram", "chapter": "02", "scale": "gpu", "source": GPU_RESULT,
                         "scores": {"test": round(res["mix_test_ppl"], 2)},
                         "meta": {"nnlm_weight": round(res["mix_weight"], 3)}})
    return rows
