"""Labelled sentence tasks and tagged text for Part II, as plain Python data.

Every task loads the same way, ``load_task(name) -> TaskData``: a name, splits of
:class:`Example` (one sentence, or a pair), the label names, the task's kind and main metric.
Tasks without a standard split (MR, CR, SUBJ, MPQA, following SentEval) have the single split
``"all"`` and are evaluated by seeded, stratified 10-fold cross-validation (:func:`cv_folds`).
Tagged text loads as ``load_tagging(name) -> {split: [TaggedSentence]}``.

The files come from the registry (``companion.data.registry``): canonical URLs pinned by sha256,
or the local mirror ``$BOOK_DATA_MIRROR``; nothing is downloaded at import time.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .errors import UnknownDatasetError


@dataclass(frozen=True)
class Example:
    """One labelled example.

    Attributes:
        text: the sentence (the first one of a pair task).
        label: a class index into the task's ``label_names``, or a real score (STS-B, SICK-R).
        text_b: the second sentence of a pair task (MRPC, STS-B, SICK, RTE), else ``None``.
    """

    text: str
    label: int | float
    text_b: str | None = None


@dataclass
class TaskData:
    """A task: its splits, label set, kind and main metric.

    Attributes:
        name: the task name (one of :data:`TASK_NAMES`).
        splits: ``"train"`` / ``"dev"`` / ``"test"`` lists of examples; a task with no standard
            split (MR, CR, SUBJ, MPQA) has the single split ``"all"``.
        label_names: the class names (``label`` indexes them), ``None`` for regression tasks.
        kind: ``"single"`` or ``"pair"`` (one or two sentences per example).
        metric: the main metric: ``"accuracy"``, ``"f1"`` or ``"spearman"``.
        cv_folds: 10 for the SentEval tasks without a split, else ``None``.
        license: one line, from the registry entry.
    """

    name: str
    splits: dict[str, list[Example]]
    label_names: tuple[str, ...] | None
    kind: str
    metric: str
    cv_folds: int | None = None
    license: str = ""

    def sizes(self) -> dict[str, int]:
        """Examples per split."""
        return {k: len(v) for k, v in self.splits.items()}

    def label_counts(self) -> dict[str, dict[str, int]]:
        """Per split, examples per label name (empty for a regression task)."""
        if self.label_names is None:
            return {}
        out = {}
        for split, exs in self.splits.items():
            counts = dict.fromkeys(self.label_names, 0)
            for ex in exs:
                counts[self.label_names[int(ex.label)]] += 1
            out[split] = counts
        return out


@dataclass(frozen=True)
class TaggedSentence:
    """A sentence with one tag per token (POS, chunk or NER tags exactly as in the file)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.tags):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.tags)} tags: {self.tokens[:5]}...")


# name -> loader; filled in as the loaders land (see the functions below).
_TASKS: dict[str, Callable[[], TaskData]] = {}
_TAGGING: dict[str, Callable[[], dict[str, list[TaggedSentence]]]] = {}

TASK_NAMES: tuple[str, ...] = (
    "mr", "cr", "subj", "mpqa", "trec", "sst2", "sst5", "sst2_glue", "mrpc", "stsb",
    "sick_r", "sick_e", "rte", "ag_news", "fewglue_boolq", "fewglue_cb", "fewglue_rte",
    "chnsenticorp", "ocnli", "thucnews",
)
TAGGING_NAMES: tuple[str, ...] = ("brown_pos", "conll2000_chunk", "conll2003_ner", "ptb_pos")


def load_task(name: str) -> TaskData:
    """Load a labelled sentence task by name (the files are fetched and verified on first use).

    Raises:
        UnknownDatasetError: for a name not in :data:`TASK_NAMES` (the message lists them).
    """
    if name not in TASK_NAMES:
        raise UnknownDatasetError(f"unknown task {name!r}; known tasks: {', '.join(TASK_NAMES)}")
    if name not in _TASKS:
        raise NotImplementedError(f"the loader of task {name!r} has not landed yet "
                                  f"(wired so far: {', '.join(_TASKS) or 'none'})")
    return _TASKS[name]()


def load_tagging(name: str) -> dict[str, list[TaggedSentence]]:
    """Load a tagged corpus by name: ``{"train": [...], "dev": [...], "test": [...]}``.

    Raises:
        UnknownDatasetError: for a name not in :data:`TAGGING_NAMES`.
    """
    if name not in TAGGING_NAMES:
        raise UnknownDatasetError(f"unknown tagging set {name!r}; known: {', '.join(TAGGING_NAMES)}")
    if name not in _TAGGING:
        raise NotImplementedError(f"the loader of tagging set {name!r} has not landed yet "
                                  f"(wired so far: {', '.join(_TAGGING) or 'none'})")
    return _TAGGING[name]()


def cv_folds(examples: list[Example], k: int = 10, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """SentEval-style k-fold cross-validation: ``k`` pairs ``(train_idx, test_idx)``.

    Stratified by label: the indices of each label are shuffled with ``random.Random(seed)``
    and dealt round-robin into the folds (continuing where the previous label stopped), so every
    fold holds each label's share to within one example and the fold sizes differ by at most one.
    Deterministic for a given ``seed``; every index is in exactly one test fold.

    Raises:
        ValueError: if ``k < 2`` or there are fewer examples than folds.
    """
    if k < 2:
        raise ValueError(f"cross-validation needs k >= 2 folds, got {k}")
    if len(examples) < k:
        raise ValueError(f"{len(examples)} examples cannot be split into {k} folds")
    rng = random.Random(seed)
    by_label: dict[object, list[int]] = {}
    for i, ex in enumerate(examples):
        by_label.setdefault(ex.label, []).append(i)
    folds: list[list[int]] = [[] for _ in range(k)]
    slot = 0
    for label in sorted(by_label, key=repr):
        idx = by_label[label]
        rng.shuffle(idx)
        for i in idx:
            folds[slot % k].append(i)
            slot += 1
    out = []
    for f in range(k):
        test = sorted(folds[f])
        train = sorted(i for g in range(k) if g != f for i in folds[g])
        out.append((train, test))
    return out
