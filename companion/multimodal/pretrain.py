"""Vision-language pre-training objectives, the training run, and the evaluations (ch. 12b).

Objectives (each switchable in :class:`PretrainConfig`):

* **MLM conditioned on the image**: hide caption words (BERT's 80/10/10 rule) and predict them
  from the other words *and the regions*;
* **masked region modelling (MRM)**: zero a region's feature and predict its class (a
  detector's label; LXMERT's and UNITER's classification variant) and regress the feature
  itself (the regression variant); for visual words (VideoBERT) the class is the word's id;
* **image-text matching (ITM)**: half the pairs get the caption of another scene, never one
  equal to the scene's own caption; a head on the pooled vector says matched or not.

As in LXMERT and UNITER, words and regions are masked only in matched pairs.

Evaluations: ITM accuracy, image-to-text retrieval (rank every caption of a held-out set for
each image by the ITM score) and the colour **cloze** ("a small [MASK] circle ..."), which only
the image can answer, with shuffled images as a control.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..train import TrainConfig, fit, seed_everything
from . import scenes as sc
from .models import MultimodalConfig, build


@dataclass(frozen=True)
class PretrainConfig:
    """One pre-training run.

    Attributes:
        steps, batch_size, lr, warmup: the optimisation (AdamW, linear warm-up, then constant).
        mlm, mrm, itm: which objectives are on (MLM is always on for the text-only model).
        use_image: False trains a text-only model: no regions are shown, MLM only.
        word_mask_prob: share of caption words hidden (at least one per matched caption).
        region_mask_prob: share of regions hidden for MRM.
        feature_weight: weight of MRM's feature-regression loss (its class loss has weight 1).
        seed: seeds the initialisation and every batch.
    """

    steps: int = 600
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 50
    mlm: bool = True
    mrm: bool = True
    itm: bool = True
    use_image: bool = True
    word_mask_prob: float = 0.15
    region_mask_prob: float = 0.15
    feature_weight: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"PretrainConfig.{name} must be a positive int, got {v!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"PretrainConfig.warmup must be an int >= 0, got {self.warmup!r}")
        for name in ("word_mask_prob", "region_mask_prob"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"PretrainConfig.{name} must be in [0, 1], got {v!r}")
        if not self.lr > 0:
            raise ValueError(f"PretrainConfig.lr must be > 0, got {self.lr!r}")
        if not (self.mlm or self.mrm or self.itm):
            raise ValueError("PretrainConfig: switch on at least one of mlm, mrm, itm")


def itm_negatives(captions: list[str], index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each scene ``index[i]``, the index of another scene whose caption differs from its
    own (a mismatched pair is never secretly a match)."""
    n = len(captions)
    if len(set(captions)) < 2:
        raise ValueError("ITM needs at least two different captions to draw negatives from")
    out = np.empty(len(index), dtype=int)
    for k, i in enumerate(index):
        j = int(rng.integers(n))
        while captions[j] == captions[i]:
            j = int(rng.integers(n))
        out[k] = j
    return out


def mask_words(text: torch.Tensor, prob: float, gen: torch.Generator,
               rows: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking of caption words (never [CLS], [SEP] or [PAD]): each word is chosen with
    ``prob`` and at least one per row in ``rows`` (default all rows); a chosen word becomes
    [MASK] 80 % of the time, a random word 10 %, itself 10 %. Rows outside ``rows`` are left
    alone. Returns ``(inputs, labels)`` with labels -100 where nothing is predicted."""
    B, T = text.shape
    rows = torch.ones(B, dtype=torch.bool) if rows is None else rows
    is_word = (text != sc.CLS) & (text != sc.SEP) & (text != sc.PAD)
    chosen = (torch.rand(B, T, generator=gen) < prob) & is_word
    none = ~chosen.any(1)
    if none.any():  # one word at random in rows that drew none
        score = torch.rand(B, T, generator=gen).masked_fill(~is_word, -1.0)
        pick = F.one_hot(score.argmax(1), T).bool()
        chosen = chosen | (pick & none[:, None])
    chosen &= rows[:, None]
    labels = text.masked_fill(~chosen, -100)
    u = torch.rand(B, T, generator=gen)
    inputs = text.clone()
    inputs[chosen & (u < 0.8)] = sc.MASK
    rand = chosen & (u >= 0.8) & (u < 0.9)
    first_word = len(sc.SPECIALS)
    inputs[rand] = torch.randint(first_word, len(sc.VOCAB), (int(rand.sum()),), generator=gen)
    return inputs, labels


def make_batch(data: sc.SceneBatch, index: np.ndarray, cfg: PretrainConfig, rng: np.random.Generator,
               gen: torch.Generator, visual_words: torch.Tensor | None = None,
               n_visual_words: int = 0) -> dict[str, torch.Tensor]:
    """One training batch of the scenes ``index``: ITM negatives swapped in, words and regions
    masked (in matched pairs only). ``visual_words [N, R]`` replaces the region features by
    visual-word ids (VideoBERT), ``n_visual_words`` being the id of the masked visual word."""
    B = len(index)
    text = data.text[index].clone()
    itm = torch.ones(B, dtype=torch.long)
    if cfg.itm and cfg.use_image:
        neg = torch.from_numpy(rng.random(B) < 0.5)
        other = itm_negatives(data.captions, index, rng)
        text[neg] = data.text[other[neg.numpy()]]
        itm = (~neg).long()
    matched = itm.bool()
    region_mask = data.region_mask[index].clone()
    if not cfg.use_image:
        region_mask[:] = False
    # masks are drawn in every row (a mismatched row without [MASK] would give ITM away);
    # the MLM and MRM losses count only the matched rows
    text_in, mlm_labels = mask_words(text, cfg.word_mask_prob, gen)
    mlm_labels = mlm_labels.masked_fill(~matched[:, None], -100)
    if not cfg.mlm:
        text_in, mlm_labels = text, torch.full_like(text, -100)
    hide = (torch.rand(region_mask.shape, generator=gen) < cfg.region_mask_prob) & region_mask
    if not (cfg.mrm and cfg.use_image):
        hide[:] = False
    if visual_words is not None:
        regions = visual_words[index].clone()
        cls_target = regions.masked_fill(~hide, -100)
        regions[hide] = n_visual_words
    else:
        regions = data.regions[index].clone()
        cls_target = data.labels[index].masked_fill(~hide, -100)
        regions[hide] = 0.0
    hide = hide & matched[:, None]  # the loss: matched rows only
    return {"text": text_in, "mlm_labels": mlm_labels, "regions": regions,
            "boxes": data.boxes[index], "region_mask": region_mask, "hide": hide,
            "region_labels": cls_target, "region_targets": data.regions[index], "itm": itm}


def losses(model, batch: dict[str, torch.Tensor], cfg: PretrainConfig) -> dict[str, torch.Tensor]:
    """The switched-on objectives' losses (nats; feature regression as mean squared error)."""
    t, v, pooled = model(batch["text"], batch["regions"], batch["boxes"], batch["region_mask"])
    out = {}
    if cfg.mlm:
        out["mlm"] = F.cross_entropy(model.mlm_head(t).flatten(0, 1), batch["mlm_labels"].flatten(),
                                     ignore_index=-100)
    if cfg.use_image and cfg.itm:
        out["itm"] = F.cross_entropy(model.itm_head(pooled), batch["itm"])
    if cfg.use_image and cfg.mrm and bool(batch["hide"].any()):
        out["mrm_class"] = F.cross_entropy(model.region_cls_head(v)[batch["hide"]],
                                           batch["region_labels"][batch["hide"]])
        if not model.config.n_visual_words and cfg.feature_weight > 0:
            pred = model.region_feat_head(v)[batch["hide"]]
            out["mrm_feature"] = cfg.feature_weight * F.mse_loss(pred, batch["region_targets"][batch["hide"]])
    return out


@dataclass
class Run:
    """A trained model with its step losses (total and per objective) and CPU seconds."""

    model: torch.nn.Module
    losses: list[float]
    parts: dict[str, list[float]]
    cpu_seconds: float
    kind: str
    config: PretrainConfig


def pretrain(kind: str, model_config: MultimodalConfig, data: sc.SceneBatch,
             cfg: PretrainConfig = PretrainConfig(), *, visual_words: torch.Tensor | None = None,
             device=None, progress: bool = False) -> Run:
    """Train a ``"single"`` or ``"two"`` stream model on ``data`` with ``companion.train.fit``.

    The initialisation and every batch (scenes, negatives, masks) depend only on ``cfg.seed``,
    so two arms with the same seed see the same scenes in the same order.

    Raises:
        ValueError: bad ``kind``, empty data, or visual words that do not fit the config.
    """
    if len(data) < 2:
        raise ValueError(f"pre-training needs at least 2 scenes, got {len(data)}")
    if (visual_words is None) != (model_config.n_visual_words == 0):
        raise ValueError("pass visual_words exactly when model_config.n_visual_words > 0")
    seed_everything(cfg.seed)
    model = build(kind, model_config)
    rng = np.random.default_rng([cfg.seed, 12])
    gen = torch.Generator().manual_seed(cfg.seed)
    batches = [make_batch(data, rng.integers(0, len(data), cfg.batch_size), cfg, rng, gen,
                          visual_words, model_config.n_visual_words) for _ in range(cfg.steps)]
    parts: dict[str, list[float]] = {}

    def loss_fn(m, batch):
        ls = losses(m, batch, cfg)
        for k, v in ls.items():
            parts.setdefault(k, []).append(float(v.detach()))
        return sum(ls.values())

    def schedule(step, opt):
        for g in opt.param_groups:
            g["lr"] = cfg.lr * min(1.0, (step + 1) / max(1, cfg.warmup))

    cpu0 = time.process_time()
    hist = fit(model, batches, loss_fn=loss_fn, schedule=schedule,
               config=TrainConfig(epochs=1, lr=cfg.lr, optimizer="adamw", weight_decay=0.01,
                                  seed=cfg.seed, device=None if device is None else str(device),
                                  progress=progress, restore_best=False),
               count_fn=lambda b: int(b["text"].shape[0]))
    model.eval()
    return Run(model, list(hist.step_loss), parts, time.process_time() - cpu0, kind, cfg)


# ----------------------------------------------------------------------------- evaluation


def _device(model) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def itm_scores(model, data: sc.SceneBatch, text: torch.Tensor, *, use_image: bool = True,
               visual_words: torch.Tensor | None = None, chunk: int = 512) -> torch.Tensor:
    """log p(match) - log p(no match) of scene i with caption ``text[i]`` (``[N]``)."""
    model.eval()
    dev = _device(model)
    out = []
    for s in range(0, len(data), chunk):
        sl = slice(s, s + chunk)
        regions = (data.regions if visual_words is None else visual_words)[sl]
        rm = data.region_mask[sl] if use_image else torch.zeros_like(data.region_mask[sl])
        _, _, pooled = model(text[sl].to(dev), regions.to(dev), data.boxes[sl].to(dev), rm.to(dev))
        lp = model.itm_head(pooled).log_softmax(-1)
        out.append((lp[:, 1] - lp[:, 0]).cpu())
    return torch.cat(out)


def itm_accuracy(model, data: sc.SceneBatch, seed: int = 0, *,
                 visual_words: torch.Tensor | None = None) -> np.ndarray:
    """Per-pair correctness (0/1) on every scene with its own caption and with one mismatched
    caption (drawn by ``seed``): ``2N`` pairs, half matched, so chance is 0.5."""
    rng = np.random.default_rng([seed, 7])
    other = itm_negatives(data.captions, np.arange(len(data)), rng)
    pos = itm_scores(model, data, data.text, visual_words=visual_words)
    neg = itm_scores(model, data, data.text[other], visual_words=visual_words)
    return np.concatenate([(pos > 0).numpy(), (neg <= 0).numpy()]).astype(float)


def retrieval_ranks(model, data: sc.SceneBatch, *, visual_words: torch.Tensor | None = None) -> np.ndarray:
    """Image-to-text retrieval: for each image, the rank (1 = best) of its own caption among the
    N captions of ``data`` by ITM score. Captions with the same text as the true one are not
    counted as competitors. Chance R@1 is about 1/N."""
    N = len(data)
    S = torch.empty(N, N)
    for i in range(N):
        idx = torch.full((N,), i, dtype=torch.long)
        img = data.subset(idx)
        S[i] = itm_scores(model, img, data.text, visual_words=None if visual_words is None
                          else visual_words[idx])
    same = np.array([[a == b for b in data.captions] for a in data.captions])
    S = S.numpy()
    own = np.diag(S)
    better = (S > own[:, None]) & ~same
    return 1 + better.sum(1)


COLOUR_IDS = torch.tensor([sc.TOKEN_ID[c] for c in sc.COLOURS])


@torch.no_grad()
def colour_cloze(model, data: sc.SceneBatch, *, shuffle_images: bool = False, use_image: bool = True,
                 seed: int = 0, visual_words: torch.Tensor | None = None,
                 positions: tuple[int, ...] = (sc.FIRST_COLOUR, sc.SECOND_COLOUR)) -> np.ndarray:
    """Per-item correctness of filling a masked colour word, choosing among the colours
    ("a small [MASK] circle left of ..."). Each caption gives one item per colour position.

    ``shuffle_images`` pairs every caption with another scene's regions (a derangement drawn by
    ``seed``): the control whose accuracy should fall to the text-only level. ``use_image=False``
    hides the regions (text-only reading)."""
    model.eval()
    dev = _device(model)
    N = len(data)
    perm = np.arange(N)
    if shuffle_images:
        rng = np.random.default_rng([seed, 11])
        perm = rng.permutation(N)
        while N > 1 and (perm == np.arange(N)).any():
            perm = rng.permutation(N)
    regions = (data.regions if visual_words is None else visual_words)[perm]
    rm = data.region_mask[perm] if use_image else torch.zeros_like(data.region_mask)
    out = []
    for p in positions:
        text = data.text.clone()
        gold = text[:, p].clone()
        text[:, p] = sc.MASK
        t, _, _ = model(text.to(dev), regions.to(dev), data.boxes[perm].to(dev), rm.to(dev))
        logits = model.mlm_head(t[:, p]).cpu()[:, COLOUR_IDS]
        out.append((COLOUR_IDS[logits.argmax(1)] == gold).numpy())
    return np.concatenate(out).astype(float)


def bootstrap(x: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``x`` and its 95 % percentile bootstrap interval."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap needs at least one value")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, (n_boot, x.size))].mean(1)
    return float(x.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))
