"""The runs of chapter 12b, shared by the notebook and the multi-seed benchmark.

:func:`sizes` gives every size per ``BOOK_SCALE``; :func:`run_arm` trains one arm (same data,
batches and initialisation seed for every arm); :func:`evaluate_run` measures it on the
held-out splits. Arms:

* ``single``, ``two``: the parameter-matched single- and two-stream models, all objectives;
* ``single_no_mrm``, ``two_no_mrm``: the same without masked region modelling;
* ``text_only``: the single-stream model shown no regions (MLM only);
* ``visual_words``: the single-stream model reading k-means visual words (VideoBERT).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..scale import pick
from . import pretrain as pt
from . import scenes as sc
from .models import MultimodalConfig, matched_single
from .visual_words import assign, kmeans

ARMS = ("single", "two", "text_only", "single_no_mrm", "two_no_mrm", "visual_words")


@dataclass(frozen=True)
class Sizes:
    """Every size of the chapter's runs."""

    n_train: int
    n_test: int
    steps: int
    batch_size: int
    d_model: int
    n_co_layers: int
    n_single_layers: int
    k_words: int
    seeds: tuple[int, ...]
    n_boot: int


def sizes(scale: str | None = None) -> Sizes:
    """The chapter's sizes at ``scale`` (default ``BOOK_SCALE``)."""
    return Sizes(
        n_train=pick(ci=600, laptop=3000, scale=scale),
        n_test=pick(ci=40, laptop=100, scale=scale),
        steps=pick(ci=120, laptop=800, scale=scale),
        batch_size=64,
        d_model=32,
        n_co_layers=1,
        n_single_layers=3,
        k_words=16,
        seeds=pick(ci=(0,), laptop=(0, 1, 2), scale=scale),
        n_boot=pick(ci=200, laptop=1000, scale=scale),
    )


def configs(S: Sizes) -> tuple[MultimodalConfig, MultimodalConfig]:
    """(single-stream, two-stream) configs with matched parameter counts."""
    two = MultimodalConfig(d_model=S.d_model, n_head=4, n_layer=S.n_co_layers)
    return matched_single(two, S.n_single_layers), two


@dataclass
class Data:
    """The scenes of the chapter: training, held-out (same compositions), compositional."""

    train: sc.SceneBatch
    test: sc.SceneBatch
    comp: sc.SceneBatch


def make_data(S: Sizes) -> Data:
    """The chapter's scenes (fixed seed 0 for the data; the arms' seeds vary the training)."""
    return Data(sc.make_scenes(S.n_train, "train", 0), sc.make_scenes(S.n_test, "test", 0),
                sc.make_scenes(S.n_test, "compositional", 0))


def region_rows(batch: sc.SceneBatch) -> tuple[np.ndarray, np.ndarray]:
    """The real regions' features ``[n, F]`` and classes ``[n]``."""
    m = batch.region_mask.numpy()
    return batch.regions.numpy()[m], batch.labels.numpy()[m]


def visual_words(batch: sc.SceneBatch, centres: np.ndarray) -> torch.Tensor:
    """Each region's visual word (its nearest centre) as ``[B, R]`` ids (padding: 0)."""
    B, R, F = batch.regions.shape
    ids = assign(batch.regions.reshape(-1, F).numpy(), centres).reshape(B, R)
    return torch.from_numpy(ids).long().masked_fill(~batch.region_mask, 0)


def vocabulary(data: Data, S: Sizes, seed: int = 0) -> np.ndarray:
    """k-means centres of the training regions (VideoBERT's visual vocabulary)."""
    x, _ = region_rows(data.train)
    centres, _, _ = kmeans(x, S.k_words, seed=seed)
    return centres


def run_arm(arm: str, seed: int, data: Data, S: Sizes, device=None, centres: np.ndarray | None = None
            ) -> tuple[pt.Run, dict[str, torch.Tensor] | None]:
    """Train one arm with ``seed``; returns the run and, for ``visual_words``, the visual-word
    ids of every split (``{"train", "test", "comp"}``)."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    single, two = configs(S)
    cfg = pt.PretrainConfig(steps=S.steps, batch_size=S.batch_size, seed=seed, lr=2e-3)
    kind, mcfg, words = ("two" if arm.startswith("two") else "single"), (two if arm.startswith("two") else single), None
    if arm.endswith("no_mrm"):
        cfg = dataclasses.replace(cfg, mrm=False)
    if arm == "text_only":
        cfg = dataclasses.replace(cfg, use_image=False, mrm=False, itm=False)
    if arm == "visual_words":
        centres = vocabulary(data, S) if centres is None else centres
        words = {k: visual_words(getattr(data, k), centres) for k in ("train", "test", "comp")}
        mcfg = dataclasses.replace(single, n_visual_words=len(centres))
    run = pt.pretrain(kind, mcfg, data.train, cfg, visual_words=None if words is None else words["train"],
                      device=device)
    return run, words


def evaluate_run(run: pt.Run, data: Data, words: dict[str, torch.Tensor] | None = None,
                 retrieval: bool = True) -> dict[str, np.ndarray]:
    """Per-item 0/1 arrays: cloze (own image, shuffled image) and, for image models, ITM and
    retrieval hits (rank 1), on the held-out and compositional splits."""
    out = {}
    image = run.config.use_image
    for split in ("test", "comp"):
        d = getattr(data, split)
        vw = None if words is None else words[split]
        out[f"{split}_cloze"] = pt.colour_cloze(run.model, d, visual_words=vw, use_image=image)
        if image:
            out[f"{split}_cloze_shuffled"] = pt.colour_cloze(run.model, d, shuffle_images=True,
                                                             visual_words=vw)
            out[f"{split}_itm"] = pt.itm_accuracy(run.model, d, visual_words=vw)
            if retrieval:
                out[f"{split}_r1"] = (pt.retrieval_ranks(run.model, d, visual_words=vw) == 1).astype(float)
    return out


def run_and_evaluate(arm: str, seed: int, data: Data, S: Sizes, device=None) -> dict:
    """One arm, one seed: per-item results, losses and CPU seconds (what the benchmark stores)."""
    t0 = time.process_time()
    run, words = run_arm(arm, seed, data, S, device)
    items = evaluate_run(run, data, words)
    return {"arm": arm, "seed": seed, "items": {k: v.tolist() for k, v in items.items()},
            "final_loss": float(np.mean(run.losses[-50:])), "cpu_s": time.process_time() - t0,
            "params": run.model.n_parameters()}


# ----------------------------------------------------------------------------- stored results

RESULTS_DIR = __import__("pathlib").Path(__file__).resolve().parent / "results"
METRICS = {"test_cloze": "cloze %", "test_cloze_shuffled": "cloze, shuffled images %",
           "comp_cloze": "cloze, new compositions %", "test_itm": "ITM %", "test_r1": "R@1 %",
           "comp_r1": "R@1, new compositions %"}


def load_results(scale: str = "laptop") -> dict:
    """The stored multi-seed results (written by the chapter's benchmark)."""
    import json

    path = RESULTS_DIR / f"ch12b_{scale}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run the chapter's benchmark (see the book's "
                                "'Reproducing the book' page)")
    return json.loads(path.read_text())


def items(results: dict, arm: str, metric: str) -> np.ndarray:
    """Per-item 0/1 results of ``arm`` on ``metric``, seeds concatenated in seed order."""
    rows = sorted((r for r in results["rows"] if r["arm"] == arm), key=lambda r: r["seed"])
    if not rows or metric not in rows[0]["items"]:
        raise KeyError(f"no stored {metric!r} for arm {arm!r}")
    return np.concatenate([np.asarray(r["items"][metric], dtype=float) for r in rows])


def per_seed(results: dict, arm: str, metric: str) -> list[float]:
    """The mean of ``metric`` for each seed of ``arm``."""
    rows = sorted((r for r in results["rows"] if r["arm"] == arm), key=lambda r: r["seed"])
    return [float(np.mean(r["items"][metric])) for r in rows if metric in r["items"]]


def summary_table(results: dict):
    """Arms x metrics: the mean over seeds, in %, with the per-seed range."""
    import pandas as pd

    out = {}
    for arm in ARMS:
        row = {}
        for m, name in METRICS.items():
            try:
                v = 100 * np.array(per_seed(results, arm, m))
            except KeyError:
                continue
            if len(v):
                row[name] = f"{v.mean():.1f} [{v.min():.1f}, {v.max():.1f}]"
        params = [r["params"] for r in results["rows"] if r["arm"] == arm]
        row["parameters"] = f"{params[0]:,}" if params else ""
        out[arm] = row
    return pd.DataFrame(out).T[["parameters", *[n for n in METRICS.values()]]].fillna("")


def paired_difference(a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 0
                      ) -> tuple[float, float, float]:
    """Mean of ``a - b`` (paired items) and its 95 % bootstrap interval, in points (x 100)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"paired items must align, got {a.shape} and {b.shape}")
    mean, lo, hi = pt.bootstrap(a - b, n_boot, seed)
    return 100 * mean, 100 * lo, 100 * hi


def compare(results: dict, arms_a: tuple[str, ...], arms_b: tuple[str, ...], metric: str,
            n_boot: int = 1000) -> dict:
    """The paired difference ``arms_a - arms_b`` on ``metric`` (each side's arms' items
    concatenated in the same order), as ``claim_check`` keywords: ``effect``, ``interval``,
    ``valid``, ``why`` and ``method``. Arms missing from the stored run make it not valid."""
    have = {r["arm"] for r in results["rows"]}
    missing = [a for a in (*arms_a, *arms_b) if a not in have]
    if missing:
        return {"effect": None, "interval": None, "valid": False,
                "why": f"the stored run holds no {', '.join(missing)} arm",
                "method": "paired bootstrap over seeds x held-out items"}
    a = np.concatenate([items(results, x, metric) for x in arms_a])
    b = np.concatenate([items(results, x, metric) for x in arms_b])
    d, lo, hi = paired_difference(a, b, n_boot)
    seeds = sorted({r["seed"] for r in results["rows"] if r["arm"] == arms_a[0]})
    n_items = len(a) // (len(seeds) * len(arms_a))
    where = f"{len(arms_a)} architectures x " if len(arms_a) > 1 else ""
    return {"effect": d, "interval": (lo, hi), "valid": True, "why": "",
            "method": f"paired bootstrap ({n_boot} resamples) over {where}{len(seeds)} seeds x "
                      f"{n_items} held-out items"}


def arms(results: dict) -> set[str]:
    """The arms a stored result holds."""
    return {r["arm"] for r in results["rows"]}
