"""Frozen or fine-tuned? Pretrained word vectors under a small supervised task.

The simplest model that uses word vectors for a task averages the vectors of a text's words
and feeds the mean to a linear classifier (a *bag of embeddings*, as in fastText's classifier):

    h(x) = (1/|x|) sum_{w in x} e_w,        p(y | x) = softmax(W h(x) + b)_y .

The vectors ``e_w`` can stay **frozen** (only ``W`` and ``b`` are trained) or be **fine-tuned**
with the classifier. Fine-tuning can only move the vectors of words that occur in the labelled
training texts: every other word keeps its pretrained vector, which the trained classifier may
no longer read the same way. :func:`train_bag_of_embeddings` trains one classifier either way,
with the same data, initialisation, optimizer and number of steps, and reports the held-out
accuracy, the *coverage* (the share of held-out tokens whose word occurs in the training texts,
i.e. whose vector fine-tuning could move) and how far the vectors moved.

:func:`genre_task` builds the chapter's task from the Brown corpus (informative prose, genres
a-j, against imaginative prose, k-r, with held-out sentences from held-out files), and
:func:`learning_curve` runs both variants over training sets of increasing size and several seeds.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..device import get_device
from ..train import TrainConfig, fit, seed_everything
from ._vectors import as_matrix, word_rows

__all__ = [
    "BagConfig",
    "BagResult",
    "BagOfEmbeddings",
    "GenreTask",
    "INFORMATIVE",
    "IMAGINATIVE",
    "train_bag_of_embeddings",
    "genre_task",
    "sample_balanced",
    "learning_curve",
]

#: Brown's genre letters of informative prose (press, religion, hobbies, lore, belles-lettres,
#: government, learned) and of imaginative prose (fiction of five kinds, humor).
INFORMATIVE = tuple("abcdefghj")
IMAGINATIVE = tuple("klmnpr")


@dataclass
class BagConfig:
    """How a bag-of-embeddings classifier is trained (the same for frozen and fine-tuned vectors).

    Attributes:
        steps: optimizer steps in total, whatever the training-set size (a small set is seen
            many times, a large one a few times), so that both variants and all sizes get the
            same optimisation budget.
        batch_size: texts per step (a set smaller than this is one full batch).
        lr: learning rate of the classifier.
        embedding_lr: learning rate of the vectors when fine-tuning (``None``: ``lr``). A smaller
            rate for the pretrained part is what later methods call discriminative fine-tuning.
        optimizer: one of :data:`companion.train.OPTIMIZERS`.
        seed: seeds the classifier's initialisation and the batch order.
        device: ``None`` picks cuda > mps > cpu.
    """

    steps: int = 300
    batch_size: int = 64
    lr: float = 1e-2
    embedding_lr: float | None = None
    optimizer: str = "adam"
    seed: int = 0
    device: str | None = None

    def validate(self) -> None:
        for name in ("steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        for name in ("lr", "embedding_lr"):
            v = getattr(self, name)
            if name == "embedding_lr" and v is None:
                continue
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")


@dataclass
class BagResult:
    """What one training run measured.

    Attributes:
        finetune: whether the vectors were trained.
        accuracy: accuracy on the held-out texts.
        train_accuracy: accuracy on the training texts (after training).
        coverage: among the held-out tokens that have a vector (the ones the model reads), the
            share whose word occurs in the training texts: the tokens whose vectors fine-tuning
            could move.
        known: share of all held-out tokens that have a vector (the others are skipped).
        rows_moved: vectors that changed (0 when frozen).
        train_words: distinct words with a vector in the training texts (the most that can move).
        mean_shift: mean over the moved vectors of ``||e_new - e_old|| / ||e_old||`` (0 when frozen).
        n_train, n_test: texts in each set.
        seconds: wall time of the training.
        correct: [n_test] bool tensor: which held-out texts were classified right.
        text_coverage: [n_test] float tensor: ``coverage`` of each held-out text alone (NaN for a
            text none of whose tokens has a vector).
        vectors: the whole [V, d] matrix after training, on the CPU, if it was asked for.
    """

    finetune: bool
    accuracy: float
    train_accuracy: float
    coverage: float
    known: float
    rows_moved: int
    train_words: int
    mean_shift: float
    n_train: int
    n_test: int
    seconds: float
    correct: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.bool), repr=False)
    text_coverage: torch.Tensor = field(default_factory=lambda: torch.zeros(0), repr=False)
    vectors: torch.Tensor | None = field(default=None, repr=False)


class BagOfEmbeddings(nn.Module):
    """Mean of word vectors -> linear layer -> class scores.

    The table is split in two: ``trainable`` holds the vectors of the training texts' words (trained
    only when fine-tuning), ``fixed`` those of words met only in the held-out texts (never trained:
    no gradient can reach them). Ids below ``len(trainable)`` index the first part.

    Args:
        trainable: [n_train_words, d] initial vectors of the training words.
        fixed: [n_other_words, d] vectors of the other words (may have 0 rows).
        n_classes: number of classes (>= 2).
        finetune: train ``trainable`` (True) or keep it frozen (False).
    """

    def __init__(self, trainable: torch.Tensor, fixed: torch.Tensor, n_classes: int, finetune: bool):
        super().__init__()
        self.trainable = nn.Parameter(trainable.clone(), requires_grad=finetune)
        self.register_buffer("fixed", fixed.clone())
        self.out = nn.Linear(trainable.shape[1], n_classes)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, *, held_out: bool = False) -> torch.Tensor:
        """Class scores [n_texts, n_classes] for texts given as flat ``ids`` and their ``offsets``
        (``nn.EmbeddingBag``'s layout); ``held_out=True`` allows ids of the fixed part too. A text
        with no ids gets the zero vector (only the bias decides)."""
        table = torch.cat([self.trainable, self.fixed]) if held_out and len(self.fixed) else self.trainable
        return self.out(F.embedding_bag(ids, table, offsets, mode="mean"))


@dataclass
class GenreTask:
    """Labelled sentences for a two-class genre task, split by file.

    Attributes:
        train_docs, train_labels: the pool that training sets are drawn from.
        test_docs, test_labels: the fixed held-out sentences (from files that are not in the pool).
        class_names: label -> name.
        test_files: the held-out files' ids.
    """

    train_docs: list[list[str]]
    train_labels: list[int]
    test_docs: list[list[str]]
    test_labels: list[int]
    class_names: tuple[str, ...]
    test_files: tuple[str, ...]




def _check_labelled(docs: Sequence[Sequence[str]], labels: Sequence[int], what: str) -> None:
    if isinstance(docs, (str, bytes)) or not isinstance(docs, Sequence):
        raise TypeError(f"{what} texts must be a list of token lists, got {type(docs).__name__}")
    if len(docs) == 0:
        raise ValueError(f"{what} set is empty; pass at least one text")
    if len(docs) != len(labels):
        raise ValueError(f"{what}: {len(docs)} texts but {len(labels)} labels; pass one label per text")
    for d in docs[:1]:
        if isinstance(d, str) or not isinstance(d, Sequence):
            raise TypeError(f"each {what} text must be a list of tokens (strings), got {type(d).__name__}")
    for y in labels:
        if isinstance(y, bool) or not isinstance(y, int) or y < 0:
            raise ValueError(f"{what} labels must be non-negative ints (0, 1, ...), got {y!r}")


def _optimizer(groups: list[dict[str, Any]], config: BagConfig, device: torch.device) -> torch.optim.Optimizer:
    # Adam's fused kernel is ~2.5x faster on a CPU for a table of ~10^6 numbers (measured: 1.8 vs
    # 4.7 ms a step for 14,000 x 100); fall back to the default one where it is not available
    if config.optimizer in ("adam", "adamw"):
        cls = torch.optim.Adam if config.optimizer == "adam" else torch.optim.AdamW
        try:
            return cls(groups, lr=config.lr, fused=device.type in ("cpu", "cuda"))
        except (RuntimeError, TypeError, ValueError):
            return cls(groups, lr=config.lr)
    if config.optimizer == "adagrad":
        return torch.optim.Adagrad(groups, lr=config.lr)
    return torch.optim.SGD(groups, lr=config.lr)


def _pack(
    docs: Sequence[Sequence[str]], ids: Mapping[str, int], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    flat: list[int] = []
    offsets: list[int] = []
    for d in docs:
        offsets.append(len(flat))
        flat.extend(ids[w] for w in d if w in ids)
    return (torch.tensor(flat, dtype=torch.long, device=device),
            torch.tensor(offsets, dtype=torch.long, device=device))


def train_bag_of_embeddings(
    vectors: Any,
    index: Any,
    train_docs: Sequence[Sequence[str]],
    train_labels: Sequence[int],
    test_docs: Sequence[Sequence[str]],
    test_labels: Sequence[int],
    *,
    finetune: bool,
    config: BagConfig | None = None,
    return_vectors: bool = False,
) -> BagResult:
    """Train a bag-of-embeddings classifier on pretrained vectors, frozen or fine-tuned.

    Tokens are looked up exactly (no case folding); tokens without a vector are skipped. Only the
    vectors of words that occur in ``train_docs`` are put in the trainable table, so a vector of
    any other word is returned bit-identical, and so is every vector when ``finetune=False``.

    Args:
        vectors: [V, d] tensor or array (not modified).
        index: dict word -> row, or a ``Vocab``.
        train_docs, train_labels: labelled training texts (token lists; labels 0..C-1).
        test_docs, test_labels: labelled held-out texts.
        finetune: train the vectors with the classifier (True) or keep them frozen (False).
        config: a :class:`BagConfig` (defaults if ``None``).
        return_vectors: put the whole matrix after training in the result (``.vectors``).

    Raises:
        TypeError / ValueError: for malformed texts, labels, vectors, index or config, fewer than 2
            classes, or training texts of which none has a word with a vector.

    Example:
        >>> import torch
        >>> vecs = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
        >>> idx = {"good": 0, "bad": 1, "film": 2}
        >>> docs = [["good", "film"], ["bad", "film"]] * 4
        >>> r = train_bag_of_embeddings(vecs, idx, docs, [1, 0] * 4, [["good"], ["bad"]], [1, 0],
        ...                             finetune=False, config=BagConfig(steps=50, lr=0.1))
        >>> r.accuracy, r.rows_moved, r.coverage
        (1.0, 0, 1.0)
    """
    config = config or BagConfig()
    if not isinstance(config, BagConfig):
        raise TypeError(f"config must be a BagConfig, got {type(config).__name__}")
    config.validate()
    TrainConfig(optimizer=config.optimizer).validate()  # a clear error for an unknown optimizer
    _check_labelled(train_docs, train_labels, "training")
    _check_labelled(test_docs, test_labels, "held-out")
    n_classes = max(max(train_labels), max(test_labels)) + 1
    if n_classes < 2:
        raise ValueError("the labels name a single class (all 0); a classifier needs at least 2 classes")
    mat = as_matrix(vectors).float().cpu()
    rows = word_rows(index)
    for w, r in rows.items():
        if isinstance(r, bool) or not hasattr(r, "__index__") or not 0 <= int(r) < mat.shape[0]:
            raise ValueError(f"index maps {w!r} to row {r!r}, outside the {mat.shape[0]} rows of the vectors")

    # local ids: training words first (trainable), then words met only in the held-out texts
    local: dict[str, int] = {}
    for d in train_docs:
        for w in d:
            if w in rows and w not in local:
                local[w] = len(local)
    n_trainable = len(local)
    if n_trainable == 0:
        raise ValueError("no training text has a word with a vector; check the tokenisation against the index")
    for d in test_docs:
        for w in d:
            if w in rows and w not in local:
                local[w] = len(local)
    global_rows = torch.tensor([int(rows[w]) for w in local], dtype=torch.long)
    initial = mat[global_rows]

    seed_everything(config.seed)
    device = get_device(config.device)
    model = BagOfEmbeddings(initial[:n_trainable], initial[n_trainable:], n_classes, finetune).to(device)
    train_ids = [torch.tensor([local[w] for w in d if w in local], dtype=torch.long) for d in train_docs]
    y_train = torch.tensor(list(train_labels), dtype=torch.long)
    n_ids = torch.tensor([len(t) for t in train_ids])
    bs = min(config.batch_size, len(train_docs))
    per_epoch = math.ceil(len(train_docs) / bs)

    def batches(epoch: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        g = torch.Generator().manual_seed(config.seed * 100_003 + epoch)
        order = torch.randperm(len(train_docs), generator=g).tolist()
        out = []
        for s in range(0, len(order), bs):
            chunk = order[s:s + bs]
            lengths = n_ids[chunk]
            offsets = torch.cumsum(lengths, 0) - lengths
            out.append((torch.cat([train_ids[i] for i in chunk]), offsets, y_train[chunk]))
        return out

    def loss_fn(m: nn.Module, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
        ids, offsets, y = batch
        return F.cross_entropy(m(ids, offsets), y)

    tc = TrainConfig(epochs=math.ceil(config.steps / per_epoch), max_steps=config.steps, lr=config.lr,
                     optimizer=config.optimizer, clip_grad_norm=None, seed=config.seed, device=str(device),
                     restore_best=False, progress=False)
    groups = [{"params": list(model.out.parameters())}]
    if finetune:
        groups.append({"params": [model.trainable], "lr": config.embedding_lr or config.lr})
    opt = _optimizer(groups, config, device)
    t0 = time.perf_counter()
    fit(model, batches, config=tc, loss_fn=loss_fn, optimizer=opt, count_fn=lambda b: int(b[2].shape[0]))
    seconds = time.perf_counter() - t0

    model.eval()
    with torch.no_grad():
        def right(docs: Sequence[Sequence[str]], labels: Sequence[int]) -> torch.Tensor:
            ids, offsets = _pack(docs, local, device)
            return model(ids, offsets, held_out=True).argmax(1).cpu() == torch.tensor(list(labels))

        correct = right(test_docs, test_labels)
        acc, train_acc = float(correct.float().mean()), float(right(train_docs, train_labels).float().mean())
        new = model.trainable.detach().cpu()
    old = initial[:n_trainable]
    moved = (new != old).any(1)
    shift = (new - old).norm(dim=1) / old.norm(dim=1).clamp_min(1e-12)
    test_known = [w for d in test_docs for w in d if w in rows]
    per_text = []
    for d in test_docs:
        ks = [local[w] < n_trainable for w in d if w in rows]
        per_text.append(sum(ks) / len(ks) if ks else math.nan)
    n_test_tokens = sum(len(d) for d in test_docs)
    out_vectors = None
    if return_vectors:
        out_vectors = mat.clone()
        out_vectors[global_rows[:n_trainable]] = new
    return BagResult(
        finetune=finetune, accuracy=acc, train_accuracy=train_acc,
        coverage=sum(local[w] < n_trainable for w in test_known) / max(1, len(test_known)),
        known=len(test_known) / max(1, n_test_tokens),
        rows_moved=int(moved.sum()), train_words=n_trainable,
        mean_shift=float(shift[moved].mean()) if bool(moved.any()) else 0.0,
        n_train=len(train_docs), n_test=len(test_docs), seconds=seconds, correct=correct,
        text_coverage=torch.tensor(per_text), vectors=out_vectors,
    )


def sample_balanced(labels: Sequence[int], n: int, seed: int = 0) -> list[int]:
    """Positions of ``n`` items drawn without replacement, as evenly over the classes as ``n``
    allows (the first ``n % C`` classes get one more), in a seeded random order.

    Raises:
        ValueError: if ``n`` is not positive or a class has fewer items than its share.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    classes = sorted(set(labels))
    if not classes:
        raise ValueError("labels is empty")
    by_class = {c: [i for i, y in enumerate(labels) if y == c] for c in classes}
    rng = random.Random(seed)
    out: list[int] = []
    for k, c in enumerate(classes):
        share = n // len(classes) + (1 if k < n % len(classes) else 0)
        if share > len(by_class[c]):
            raise ValueError(f"class {c} has {len(by_class[c])} items, fewer than the {share} asked for; lower n")
        out.extend(rng.sample(by_class[c], share))
    rng.shuffle(out)
    return out


def genre_task(
    corpus: Any,
    *,
    held_out: int = 5000,
    classes: Sequence[Sequence[str]] = (INFORMATIVE, IMAGINATIVE),
    class_names: Sequence[str] = ("informative", "imaginative"),
    min_tokens: int = 3,
    seed: int = 0,
    tokenize: Callable[[str], list[str]] | None = None,
) -> GenreTask:
    """Label each sentence of a genre-tagged corpus by its file's genre group, and hold out whole
    files: ``held_out`` sentences (the same number per class) come from randomly chosen files
    that contribute nothing to the training pool, so no held-out sentence shares a text (its
    characters' names, its topic) with a training sentence.

    Args:
        corpus: a ``BrownCorpus`` (or anything with ``.files``, each with ``fileid``, ``genre``, ``sents``).
        held_out: held-out sentences in total (divisible by the number of classes).
        classes: the genre letters of each class.
        class_names: a name per class.
        min_tokens: drop sentences with fewer tokens after tokenising.
        seed: chooses the held-out files and sentences.
        tokenize: text -> tokens; default the book's tokenizer (as the chapter corpus uses).

    Raises:
        ValueError: for overlapping or unknown-sized classes, a bad ``held_out``, or a class too
            small to hold out ``held_out / C`` sentences and keep a training pool.
    """
    if tokenize is None:
        from ..data import tokenize as book_tokenize  # noqa: PLC0415 (the data package is heavy)

        tokenize = book_tokenize
    classes = [tuple(c) for c in classes]
    if len(classes) < 2 or len(class_names) != len(classes):
        raise ValueError(
            f"need at least 2 classes and one name each; got {len(classes)} classes, {len(class_names)} names"
        )
    letters = [g for c in classes for g in c]
    if len(set(letters)) != len(letters):
        raise ValueError(f"a genre letter is in two classes: {classes}")
    bad_count = isinstance(held_out, bool) or not isinstance(held_out, int)
    if bad_count or held_out < len(classes) or held_out % len(classes):
        raise ValueError(f"held_out must be a positive multiple of the {len(classes)} classes, got {held_out!r}")
    files = getattr(corpus, "files", None)
    if files is None:
        raise TypeError(f"corpus must have .files (e.g. companion.data.load_brown()), got {type(corpus).__name__}")
    label_of = {g: k for k, c in enumerate(classes) for g in c}
    per_class = held_out // len(classes)
    rng = random.Random(seed)
    test_docs: list[list[str]] = []
    test_labels: list[int] = []
    train_docs: list[list[str]] = []
    train_labels: list[int] = []
    test_files: list[str] = []
    for k in range(len(classes)):
        group = sorted((f for f in files if f.genre in label_of and label_of[f.genre] == k), key=lambda f: f.fileid)
        rng.shuffle(group)
        sents_of = [[t for s in f.sents if len(t := tokenize(" ".join(s))) >= min_tokens] for f in group]
        picked: list[list[str]] = []
        n_files = 0
        while len(picked) < per_class and n_files < len(group):
            picked.extend(sents_of[n_files])
            n_files += 1
        pool = [s for ss in sents_of[n_files:] for s in ss]
        if len(picked) < per_class or not pool:
            raise ValueError(f"class {class_names[k]!r} has too few sentences to hold out {per_class} and keep a "
                             "training pool; lower held_out")
        test_docs.extend(rng.sample(picked, per_class))
        test_labels.extend([k] * per_class)
        test_files.extend(f.fileid for f in group[:n_files])
        train_docs.extend(pool)
        train_labels.extend([k] * len(pool))
    return GenreTask(train_docs, train_labels, test_docs, test_labels, tuple(class_names), tuple(sorted(test_files)))


def learning_curve(
    vectors: Any,
    index: Any,
    task: GenreTask,
    sizes: Sequence[int],
    seeds: Sequence[int],
    config: BagConfig | None = None,
    *,
    embedding_lrs: Sequence[float | None] = (None,),
    per_text: bool = False,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Frozen against fine-tuned vectors on training sets of each size, for each seed.

    For a (size, seed) every variant sees the same balanced training sample
    (:func:`sample_balanced` with that seed) and starts from the same classifier weights.

    Args:
        vectors, index: the pretrained vectors and their word -> row index.
        task: a :class:`GenreTask` (training pool and fixed held-out set).
        sizes: training-set sizes (sentences).
        seeds: one run of every variant per seed and size.
        config: the training settings shared by all variants (its ``seed`` is replaced).
        embedding_lrs: one fine-tuned variant per learning rate of the vectors (``None``: the
            classifier's ``config.lr``), run after the frozen one.
        per_text: keep each run's per-text ``correct`` and ``text_coverage`` tensors in its row.
        progress: show a progress bar.

    Returns:
        one dict per run: ``size``, ``seed``, ``vectors`` ("frozen" or "fine-tuned"), ``embedding_lr``
        (``None`` when frozen) and the fields of :class:`BagResult` except ``vectors``.

    Raises:
        ValueError: for no sizes, seeds or variants, or a size the pool cannot fill.
    """
    config = config or BagConfig()
    if not sizes or not seeds or not embedding_lrs:
        raise ValueError("give at least one training-set size, one seed and one embedding learning rate")
    if not isinstance(task, GenreTask):
        raise TypeError(f"task must be a GenreTask (see genre_task), got {type(task).__name__}")
    variants: list[tuple[bool, float | None]] = [(False, None)]
    variants += [(True, config.lr if lr is None else lr) for lr in embedding_lrs]
    runs = [(n, s) for n in sizes for s in seeds]
    skip = ("vectors", "finetune") + (() if per_text else ("correct", "text_coverage"))
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=len(variants) * len(runs), desc="frozen / fine-tuned", leave=False)
    for n, s in runs:
        pick = sample_balanced(task.train_labels, n, seed=s)
        docs = [task.train_docs[i] for i in pick]
        labels = [task.train_labels[i] for i in pick]
        for finetune, elr in variants:
            cfg = dataclasses.replace(config, seed=s, embedding_lr=elr)
            r = train_bag_of_embeddings(vectors, index, docs, labels, task.test_docs, task.test_labels,
                                        finetune=finetune, config=cfg)
            row = {"size": n, "seed": s, "vectors": "fine-tuned" if finetune else "frozen", "embedding_lr": elr}
            row.update({k: v for k, v in r.__dict__.items() if k not in skip})
            rows.append(row)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return rows
