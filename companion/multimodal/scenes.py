"""Synthetic scenes with captions: the chapter's stand-in for an image-caption corpus.

A scene is a small RGB canvas (``size`` x ``size``, default 32) with 2 or 3 objects of distinct
shapes (circle, square, triangle), each with a colour and a size, at different horizontal
positions. Its caption names two of them and how they stand::

    [CLS] a small red circle left of a large blue square [SEP]

Every caption has the same template, so every text row has the same length (12 tokens). The
objects play the part of an object detector's regions: each region is the object's crop,
resampled to ``crop`` x ``crop`` pixels and flattened (its "visual feature"), with its box
(x0, y0, x1, y1, area; all in [0, 1]) and its class (colour x shape) as a detector's label.

Compositional split: some colour-shape pairs (``DEFAULT_HELD_OUT``) never occur in the training
scenes; the ``"compositional"`` test split has at least one of them in every scene.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.9, 0.15, 0.1), "green": (0.1, 0.75, 0.2), "blue": (0.15, 0.3, 0.95),
    "yellow": (0.95, 0.85, 0.1),
}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle")
SIZES: dict[str, int] = {"small": 4, "large": 7}  # half-widths in pixels at size 32
RELATIONS: tuple[str, ...] = ("left", "right")
SPECIALS: tuple[str, ...] = ("[PAD]", "[CLS]", "[SEP]", "[MASK]")
WORDS: tuple[str, ...] = ("a", "of", *SIZES, *COLOURS, *SHAPES, *RELATIONS)
VOCAB: tuple[str, ...] = SPECIALS + WORDS
TOKEN_ID: dict[str, int] = {w: i for i, w in enumerate(VOCAB)}
PAD, CLS, SEP, MASK = (TOKEN_ID[s] for s in SPECIALS)
#: the class of an object: colour index * len(SHAPES) + shape index
N_CLASSES = len(COLOURS) * len(SHAPES)
#: pairs no training scene contains (one per shape, three different colours)
DEFAULT_HELD_OUT: tuple[tuple[str, str], ...] = (("red", "triangle"), ("green", "circle"),
                                                ("blue", "square"))
TEXT_LEN = 12
#: token positions of the two colour words in a caption ([CLS] a size COLOUR shape rel of a size COLOUR ...)
FIRST_COLOUR, SECOND_COLOUR = 3, 9
BOX_DIM = 5
SPLITS = ("train", "test", "compositional")
_SPLIT_OFFSET = {"train": 0, "test": 1_000_003, "compositional": 2_000_003}


@dataclass(frozen=True)
class Obj:
    """One object of a scene: colour and shape names, size name, centre (pixels)."""

    colour: str
    shape: str
    size: str
    cx: int
    cy: int

    @property
    def label(self) -> int:
        """The detector's class of the object (colour x shape)."""
        return list(COLOURS).index(self.colour) * len(SHAPES) + SHAPES.index(self.shape)


@dataclass(frozen=True)
class SceneConfig:
    """How scenes are drawn.

    Attributes:
        size: canvas side in pixels (>= 24).
        min_objects, max_objects: objects per scene (2..3; shapes are distinct within a scene).
        crop: side of a region's resampled crop; its feature has ``3 * crop**2`` numbers.
        noise: standard deviation of the Gaussian pixel noise.
        held_out: colour-shape pairs kept out of the training split.
    """

    size: int = 32
    min_objects: int = 2
    max_objects: int = 3
    crop: int = 8
    noise: float = 0.05
    held_out: tuple[tuple[str, str], ...] = DEFAULT_HELD_OUT

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or self.size < 24:
            raise ValueError(f"SceneConfig.size must be an int >= 24 pixels, got {self.size!r}")
        if not (2 <= self.min_objects <= self.max_objects <= len(SHAPES)):
            raise ValueError(f"need 2 <= min_objects <= max_objects <= {len(SHAPES)}, got "
                             f"{self.min_objects}, {self.max_objects}")
        if not isinstance(self.crop, int) or not 2 <= self.crop <= 16:
            raise ValueError(f"SceneConfig.crop must be an int in 2..16, got {self.crop!r}")
        if not self.noise >= 0:
            raise ValueError(f"SceneConfig.noise must be >= 0, got {self.noise!r}")
        for c, s in self.held_out:
            if c not in COLOURS or s not in SHAPES:
                raise ValueError(f"held-out pair {(c, s)!r} is not (colour, shape) from "
                                 f"{list(COLOURS)} x {list(SHAPES)}")

    @property
    def feature_dim(self) -> int:
        return 3 * self.crop * self.crop


@dataclass
class SceneBatch:
    """Scenes as tensors (B scenes, R = max objects).

    Attributes:
        images: ``[B, size, size, 3]`` float pixels in [0, 1].
        text: ``[B, 12]`` token ids of the captions.
        regions: ``[B, R, feature_dim]`` flattened crops (zeros for padding).
        boxes: ``[B, R, 5]`` x0, y0, x1, y1, area in [0, 1].
        region_mask: ``[B, R]`` True for a real region.
        labels: ``[B, R]`` class of each region (-100 for padding).
        scenes: the objects of each scene; captions: the caption strings.
    """

    images: torch.Tensor
    text: torch.Tensor
    regions: torch.Tensor
    boxes: torch.Tensor
    region_mask: torch.Tensor
    labels: torch.Tensor
    scenes: list[tuple[Obj, ...]] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.text.shape[0])

    def subset(self, index) -> SceneBatch:
        """The scenes at ``index`` (a list, array or tensor of positions)."""
        idx = torch.as_tensor(np.asarray(index), dtype=torch.long)
        return SceneBatch(self.images[idx], self.text[idx], self.regions[idx], self.boxes[idx],
                          self.region_mask[idx], self.labels[idx],
                          [self.scenes[i] for i in idx.tolist()],
                          [self.captions[i] for i in idx.tolist()])

    def to(self, device) -> SceneBatch:
        """The tensors on ``device`` (the scenes and captions stay Python data)."""
        return SceneBatch(self.images.to(device), self.text.to(device), self.regions.to(device),
                          self.boxes.to(device), self.region_mask.to(device),
                          self.labels.to(device), self.scenes, self.captions)


def _shape_mask(shape: str, half: int, n: int, cx: int, cy: int) -> np.ndarray:
    yy, xx = np.mgrid[0:n, 0:n]
    dx, dy = xx - cx, yy - cy
    if shape == "circle":
        return dx * dx + dy * dy <= half * half
    if shape == "square":
        return (np.abs(dx) <= half - 1) & (np.abs(dy) <= half - 1)
    # triangle, apex up: |dx| grows with the distance from the apex
    return (dy >= -half) & (dy <= half) & (np.abs(dx) <= (dy + half) / 2)


def render(objects: tuple[Obj, ...], config: SceneConfig = SceneConfig(),
           rng: np.random.Generator | None = None) -> np.ndarray:
    """Draw objects on a light grey canvas: ``[size, size, 3]`` floats in [0, 1].

    ``rng`` adds the configured pixel noise (``None``: no noise)."""
    n = config.size
    img = np.full((n, n, 3), 0.85)
    scale = n / 32
    for o in objects:
        m = _shape_mask(o.shape, max(2, round(SIZES[o.size] * scale)), n, o.cx, o.cy)
        img[m] = COLOURS[o.colour]
    if rng is not None and config.noise > 0:
        img = img + rng.normal(0.0, config.noise, img.shape)
    return np.clip(img, 0.0, 1.0)


def box(o: Obj, config: SceneConfig = SceneConfig()) -> tuple[int, int, int, int]:
    """The object's pixel box (x0, y0, x1, y1), end exclusive, clipped to the canvas."""
    h = max(2, round(SIZES[o.size] * config.size / 32))
    n = config.size
    return max(0, o.cx - h), max(0, o.cy - h), min(n, o.cx + h + 1), min(n, o.cy + h + 1)


def region_feature(img: np.ndarray, o: Obj, config: SceneConfig = SceneConfig()) -> np.ndarray:
    """The object's crop resampled (nearest pixel) to ``crop`` x ``crop``, flattened."""
    x0, y0, x1, y1 = box(o, config)
    ys = np.linspace(y0, y1 - 1, config.crop).round().astype(int)
    xs = np.linspace(x0, x1 - 1, config.crop).round().astype(int)
    return img[np.ix_(ys, xs)].reshape(-1)


def caption(objects: tuple[Obj, ...], rng: np.random.Generator) -> tuple[list[str], tuple[int, int]]:
    """Words of a caption naming two of the objects (chosen by ``rng``) and their relation,
    and the indices of the two objects."""
    i, j = rng.choice(len(objects), size=2, replace=False)
    a, b = objects[i], objects[j]
    rel = "left" if a.cx < b.cx else "right"
    words = ["a", a.size, a.colour, a.shape, rel, "of", "a", b.size, b.colour, b.shape]
    return words, (int(i), int(j))


def encode(words: list[str]) -> list[int]:
    """Token ids of ``[CLS] words [SEP]``; raises on a word outside the vocabulary."""
    bad = [w for w in words if w not in TOKEN_ID]
    if bad:
        raise ValueError(f"words {bad} are not in the scene vocabulary {list(WORDS)}")
    return [CLS] + [TOKEN_ID[w] for w in words] + [SEP]


def decode(ids) -> str:
    """The words of token ids, without [CLS], [SEP] and [PAD]."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    return " ".join(VOCAB[i] for i in ids if i not in (CLS, SEP, PAD))


def _draw_objects(rng: np.random.Generator, config: SceneConfig, split: str) -> tuple[Obj, ...]:
    held = set(config.held_out)
    while True:
        k = int(rng.integers(config.min_objects, config.max_objects + 1))
        shapes = rng.choice(len(SHAPES), size=k, replace=False)
        colours = rng.integers(0, len(COLOURS), size=k)
        pairs = [(list(COLOURS)[c], SHAPES[s]) for c, s in zip(colours, shapes)]
        n_held = sum(p in held for p in pairs)
        if (split == "compositional") != (n_held > 0):
            continue  # train/test: no held-out pair; compositional: at least one
        n = config.size
        slots = np.linspace(0.2 * n, 0.8 * n, 3).round().astype(int)  # three columns
        xs = rng.choice(slots, size=k, replace=False) + rng.integers(-1, 2, size=k)
        sizes = rng.choice(list(SIZES), size=k)
        ys = rng.integers(int(0.3 * n), int(0.7 * n) + 1, size=k)
        return tuple(Obj(c, s, str(z), int(x), int(y))
                     for (c, s), z, x, y in zip(pairs, sizes, xs, ys))


def make_scenes(n: int, split: str = "train", seed: int = 0,
                config: SceneConfig = SceneConfig()) -> SceneBatch:
    """``n`` scenes of a split, deterministic in ``(split, seed, config)``.

    Args:
        n: number of scenes (>= 1).
        split: ``"train"`` and ``"test"`` draw from the training compositions (different random
            streams); ``"compositional"`` scenes each hold at least one held-out pair.
        seed: the random seed (int >= 0).
        config: how scenes are drawn.

    Raises:
        ValueError: a bad ``n``, ``split`` or ``seed``.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if split == "compositional" and not config.held_out:
        raise ValueError("the compositional split needs held-out pairs (config.held_out is empty)")
    rng = np.random.default_rng([seed, _SPLIT_OFFSET[split]])
    R, F = config.max_objects, config.feature_dim
    images = np.zeros((n, config.size, config.size, 3))
    regions, boxes = np.zeros((n, R, F)), np.zeros((n, R, BOX_DIM))
    mask, labels = np.zeros((n, R), bool), np.full((n, R), -100)
    text, scenes, caps = [], [], []
    for b in range(n):
        objs = _draw_objects(rng, config, split)
        img = render(objs, config, rng)
        for r, o in enumerate(objs):
            regions[b, r] = region_feature(img, o, config)
            x0, y0, x1, y1 = box(o, config)
            s = config.size
            boxes[b, r] = (x0 / s, y0 / s, x1 / s, y1 / s, (x1 - x0) * (y1 - y0) / s**2)
            mask[b, r], labels[b, r] = True, o.label
        words, _ = caption(objs, rng)
        images[b] = img
        scenes.append(objs)
        caps.append(" ".join(words))
        text.append(encode(words))
    f32 = torch.float32
    return SceneBatch(torch.tensor(images, dtype=f32), torch.tensor(text), torch.tensor(regions, dtype=f32),
                      torch.tensor(boxes, dtype=f32), torch.tensor(mask), torch.tensor(labels),
                      scenes, caps)


def pairs_in(batch: SceneBatch) -> set[tuple[str, str]]:
    """The colour-shape pairs that occur in the scenes of ``batch``."""
    return {(o.colour, o.shape) for objs in batch.scenes for o in objs}
