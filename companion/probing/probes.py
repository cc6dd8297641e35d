"""Probes: small classifiers trained on frozen vectors, and the control tasks that keep them honest.

A *probe* reads a property (a word's part of speech, its chunk, its entity type) off a frozen
representation with a small classifier. A high probe accuracy says the property can be *decoded*;
it does not say the representation *encodes* it -- a strong enough probe memorises the task.
Hewitt & Liang (2019) pair every task with a **control task**: each word type gets a random
label, drawn once from the task's label distribution and fixed, so the only way to solve it is to
memorise word identities. **Selectivity** = task accuracy - control accuracy: a good probe on a
good representation is accurate *and* selective.

Representations reach the probes through :data:`FEATURE_EXTRACTORS`, a registry of functions
``sentences (list of token lists) -> list of arrays, one per layer, each [n_tokens, d]`` (the
tokens of all sentences, in order). The chapter registers the Part I vectors (static: one
layer), chapter 7's GPT/BERT layers and all-MiniLM-L6-v2's layers; chapter 6's ELMo can be added
with :func:`register_extractor` without touching this file.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_finite, check_int, check_rate, check_token_lists

Extractor = Callable[[Sequence[Sequence[str]]], list[np.ndarray]]
FEATURE_EXTRACTORS: dict[str, Extractor] = {}


def register_extractor(name: str, fn: Extractor, *, replace: bool = True) -> Extractor:
    """Add a representation under ``name`` (``replace=False`` refuses to overwrite one)."""
    if not callable(fn):
        raise TypeError(f"an extractor must be callable (sentences -> list of layer arrays), got {type(fn).__name__}")
    if not replace and name in FEATURE_EXTRACTORS:
        raise ValueError(f"an extractor named {name!r} is already registered; pass replace=True to overwrite it")
    FEATURE_EXTRACTORS[name] = fn
    return fn


def extract(name: str, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """The layers of representation ``name`` for ``sentences``, checked for shape."""
    if name not in FEATURE_EXTRACTORS:
        raise KeyError(f"no representation {name!r}; registered: {sorted(FEATURE_EXTRACTORS)} "
                       f"(add one with register_extractor)")
    check_token_lists(sentences)
    layers = FEATURE_EXTRACTORS[name](sentences)
    n = sum(len(s) for s in sentences)
    for i, a in enumerate(layers):
        if a.ndim != 2 or a.shape[0] != n:
            raise ValueError(f"extractor {name!r} layer {i} has shape {a.shape}; expected [{n} tokens, d]")
    return layers


# ------------------------------------------------------------------------ static representations


def static_extractor(vectors: np.ndarray | torch.Tensor, index: Mapping[str, int], *,
                     lowercase: bool = True) -> Extractor:
    """One layer: each token's row of ``vectors`` (zeros for a word outside ``index``)."""
    table = np.asarray(vectors.detach().cpu() if isinstance(vectors, torch.Tensor) else vectors,
                       dtype=np.float32)

    def run(sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        out = np.zeros((sum(len(s) for s in sentences), table.shape[1]), dtype=np.float32)
        i = 0
        for s in sentences:
            for w in s:
                row = index.get(w.lower() if lowercase else w)
                if row is not None:
                    out[i] = table[row]
                i += 1
        return [out]

    return run


def random_extractor(dim: int = 300, seed: int = 0, lowercase: bool = False) -> Extractor:
    """A random vector per word *type* (standard normal, the same for every occurrence): the
    representation that knows nothing but word identity -- Hewitt & Liang's and Conneau et al.'s
    baseline. Vectors are derived from a hash of the word, so every call agrees."""
    import zlib

    def vec(w: str) -> np.ndarray:
        key = (w.lower() if lowercase else w).encode("utf-8")
        return np.random.default_rng([seed, zlib.crc32(key)]).standard_normal(dim).astype(np.float32)

    def run(sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        cache: dict[str, np.ndarray] = {}
        for w in {w for s in sentences for w in s} - cache.keys():
            cache[w] = vec(w)
        rows = [cache[w] for s in sentences for w in s]
        return [np.stack(rows) if rows else np.zeros((0, dim), np.float32)]

    return run


# -------------------------------------------------------------------- contextual representations


def _chunks(pieces: list[list[int]], room: int) -> list[tuple[int, int]]:
    """Split a sentence's words into runs whose pieces fit in ``room`` (no word is split)."""
    out, start, used = [], 0, 0
    for i, p in enumerate(pieces):
        if len(p) > room:
            raise ValueError(f"word {i} has {len(p)} pieces, more than the {room} a row can hold")
        if used + len(p) > room:
            out.append((start, i))
            start, used = i, 0
        used += len(p)
    out.append((start, len(pieces)))
    return out


def contextual_extractor(run_layers: Callable[[torch.Tensor, torch.Tensor], list[torch.Tensor]],
                         word_pieces: Callable[[str, int], list[int]], *, prefix: Sequence[int] = (),
                         suffix: Sequence[int] = (), pad_id: int = 0, max_len: int = 512,
                         pool: str = "mean", batch_size: int = 32) -> Extractor:
    """Word vectors per layer from a subword model.

    Args:
        run_layers: ``(ids [B, T], attention_mask [B, T]) -> [layer 0 (embeddings), layer 1, ...]``,
            each ``[B, T, d]``.
        word_pieces: ``(word, position in sentence) -> piece ids`` (position 0 lets a byte-level
            BPE leave out the leading space).
        prefix, suffix: ids around each row (``[CLS]`` ... ``[SEP]``; GPT's start token).
        pool: a word's vector is the ``"mean"`` of its pieces' or its ``"first"`` piece's.
        max_len: the model's longest row; longer sentences are cut into runs of whole words,
            each encoded on its own.
    """
    if pool not in ("mean", "first"):
        raise ValueError(f"pool must be 'mean' or 'first', got {pool!r}")
    room = max_len - len(prefix) - len(suffix)

    @torch.no_grad()
    def run(sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        rows: list[tuple[int, list[list[int]]]] = []  # (sentence, word pieces of one run)
        for si, s in enumerate(sentences):
            pieces = [word_pieces(w, i) or [pad_id] for i, w in enumerate(s)]
            rows += [(si, pieces[a:b]) for a, b in _chunks(pieces, room)] if pieces else []
        per_row: list[list[np.ndarray]] = [None] * len(rows)  # type: ignore[list-item]
        order = sorted(range(len(rows)), key=lambda r: sum(map(len, rows[r][1])))
        for b0 in range(0, len(order), batch_size):
            batch = order[b0:b0 + batch_size]
            seqs = [list(prefix) + [t for p in rows[r][1] for t in p] + list(suffix) for r in batch]
            T = max(map(len, seqs))
            ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
            mask = torch.zeros((len(seqs), T), dtype=torch.long)
            for j, q in enumerate(seqs):
                ids[j, :len(q)], mask[j, :len(q)] = torch.tensor(q), 1
            layers = [h.float().cpu() for h in run_layers(ids, mask)]
            for j, r in enumerate(batch):
                spans, at = [], len(prefix)
                for p in rows[r][1]:
                    spans.append((at, at + len(p)))
                    at += len(p)
                per_row[r] = [torch.stack([h[j, a] if pool == "first" else h[j, a:b].mean(0) for a, b in spans]).numpy()
                              for h in layers]
        if not rows:
            return []
        return [np.concatenate([per_row[r][k] for r in range(len(rows))]) for k in range(len(per_row[0]))]

    return run


def bert_layers(encoder) -> Callable[[torch.Tensor, torch.Tensor], list[torch.Tensor]]:
    """Hidden states of our :class:`~companion.transformer.bert.BertEncoder` after the embeddings
    and after each block (``n_layer + 1`` arrays)."""
    from ..transformer.attention import padding_mask

    def run(ids: torch.Tensor, attention_mask: torch.Tensor) -> list[torch.Tensor]:
        device = next(encoder.parameters()).device
        ids, attention_mask = ids.to(device), attention_mask.to(device)
        mask = None if bool(attention_mask.all()) else padding_mask(attention_mask)
        x = encoder.embeddings(ids, torch.zeros_like(ids))
        out = [x]
        for block in encoder.blocks:
            x = block(x, mask)
            out.append(x)
        return out

    return run


def gpt_layers(gpt) -> Callable[[torch.Tensor, torch.Tensor], list[torch.Tensor]]:
    """Hidden states of our :class:`~companion.transformer.gpt.GPT` after the embeddings and after
    each block (causal, so right padding changes nothing before it)."""

    def run(ids: torch.Tensor, attention_mask: torch.Tensor) -> list[torch.Tensor]:
        ids = ids.to(gpt.device)
        x = gpt.wte(ids) + gpt.wpe(torch.arange(ids.shape[1], device=ids.device))
        out = [x]
        for block in gpt.blocks:
            x = block(x, causal=True)
            out.append(x)
        return out

    return run


def wordpiece_extractor(encoder, wordpiece, *, pool: str = "mean", batch_size: int = 32) -> Extractor:
    """Layers of a BERT with a WordPiece vocabulary (all-MiniLM-L6-v2): ``[CLS] pieces [SEP]``."""
    c = encoder.config
    cache: dict[str, list[int]] = {}

    def pieces(word: str, _: int) -> list[int]:
        if word not in cache:
            cache[word] = wordpiece.ids(word) or [c.unk_id]
        return cache[word]

    encoder.eval()
    return contextual_extractor(bert_layers(encoder), pieces, prefix=[c.cls_id], suffix=[c.sep_id],
                                pad_id=c.pad_id, max_len=c.max_len, pool=pool, batch_size=batch_size)


def bpe_extractor(model, bpe, *, kind: str, pool: str = "mean", batch_size: int = 32) -> Extractor:
    """Layers of chapter 7's GPT (``kind="gpt"``: a start token, then the words) or BERT
    (``kind="bert"``: ``[CLS] ... [SEP]``), both over a byte-level BPE; a word after the first
    is encoded with its leading space, as the models saw it in running text."""
    def pieces(word: str, i: int) -> list[int]:
        return bpe.encode_ordinary(word if i == 0 else " " + word)

    sp = bpe.special_tokens
    model.eval()
    if kind == "gpt":
        return contextual_extractor(gpt_layers(model), pieces, prefix=[sp["<|endoftext|>"]],
                                    pad_id=sp.get("[PAD]", 0), max_len=model.config.block_size, pool=pool,
                                    batch_size=batch_size)
    if kind == "bert":
        enc = getattr(model, "encoder", model)
        return contextual_extractor(bert_layers(enc), pieces, prefix=[sp["[CLS]"]], suffix=[sp["[SEP]"]],
                                    pad_id=sp["[PAD]"], max_len=enc.config.max_len, pool=pool,
                                    batch_size=batch_size)
    raise ValueError(f"kind must be 'gpt' or 'bert', got {kind!r}")


def minilm_extractor(pool: str = "mean") -> Extractor:
    """all-MiniLM-L6-v2's real weights in our BERT: its 7 layers (embeddings + 6 blocks)."""
    from ..transformer.hf import load_minilm, minilm_dir
    from ..transformer.tokenizers import WordPiece

    directory = minilm_dir()
    return wordpiece_extractor(load_minilm(directory), WordPiece.from_file(directory / "vocab.txt"), pool=pool)


# ------------------------------------------------------------------------------ control tasks


def control_task(train_tags: Sequence[Sequence[str]], train_words: Sequence[Sequence[str]],
                 all_words: Sequence[Sequence[str]], seed: int = 0) -> dict[str, str]:
    """Hewitt & Liang's control task: each word type of ``all_words`` gets one label, sampled once
    from the empirical label distribution of the training tokens and kept for every occurrence.

    Types are visited in sorted order, so the mapping depends only on ``seed`` and the data.
    The labels exist only in word identity: a probe can solve the control task only by
    memorising which type has which label.
    """
    if len(train_tags) != len(train_words):
        raise ValueError(f"train_tags has {len(train_tags)} sentences but train_words {len(train_words)}")
    counts = Counter(t for s in train_tags for t in s)
    if not counts:
        raise ValueError("train_tags holds no tag: the control task needs the task's label distribution")
    labels = sorted(counts)
    p = np.array([counts[t] for t in labels], dtype=np.float64)
    types = sorted({w for s in all_words for w in s} | {w for s in train_words for w in s})
    draws = np.random.default_rng(seed).choice(len(labels), size=len(types), p=p / p.sum())
    return {w: labels[k] for w, k in zip(types, draws)}


def control_labels(mapping: Mapping[str, str], sentences: Sequence[Sequence[str]]) -> list[list[str]]:
    """The control task's labels for ``sentences`` (every word must be in ``mapping``)."""
    missing = sorted({w for s in sentences for w in s if w not in mapping})
    if missing:
        raise KeyError(f"{len(missing)} word types have no control label (e.g. {missing[:3]}); build the "
                       f"control task with these sentences in all_words")
    return [[mapping[w] for w in s] for s in sentences]


def encode_labels(train: Sequence[Sequence[str]], *others: Sequence[Sequence[str]]
                  ) -> tuple[list[str], list[np.ndarray]]:
    """Flatten tag sequences into class ids over the training labels (sorted); a label unseen in
    training gets id ``len(labels)``, which no probe predicts (so it counts as an error)."""
    labels = sorted({t for s in train for t in s})
    idx = {t: i for i, t in enumerate(labels)}
    out = [np.array([idx.get(t, len(labels)) for s in seqs for t in s], dtype=np.int64) for seqs in (train, *others)]
    return labels, out


# ------------------------------------------------------------------------------------- probes


@dataclass
class ProbeConfig:
    """A probe and its training.

    ``kind="linear"`` is softmax regression; ``"mlp"`` has one hidden ReLU layer of ``hidden``
    units (Hewitt & Liang's MLP-1). ``weight_decay`` and ``dropout`` are the complexity controls
    they study; ``epochs`` of Adam on minibatches.
    """

    kind: str = "linear"
    hidden: int = 256
    epochs: int = 10
    lr: float = 1e-3
    weight_decay: float = 0.0
    dropout: float = 0.0
    batch_size: int = 256
    standardize: bool = True
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.kind not in ("linear", "mlp"):
            raise ValueError(f"kind must be 'linear' or 'mlp', got {self.kind!r}")
        for name in ("hidden", "epochs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        check_rate(self.dropout, "dropout")
        check_finite(self.weight_decay, "weight_decay")
        check_finite(self.lr, "lr")
        if self.lr == 0:
            raise ValueError("lr must be > 0, got 0")


def make_probe(d: int, n_classes: int, config: ProbeConfig) -> nn.Module:
    """The classifier: linear, or Linear-ReLU-Dropout-Linear."""
    check_int(d, "d")
    check_int(n_classes, "n_classes")
    torch.manual_seed(config.seed)
    if config.kind == "linear":
        return nn.Sequential(nn.Dropout(config.dropout), nn.Linear(d, n_classes))
    return nn.Sequential(nn.Linear(d, config.hidden), nn.ReLU(), nn.Dropout(config.dropout),
                         nn.Linear(config.hidden, n_classes))


@dataclass
class ProbeResult:
    train_acc: float
    test_acc: float
    model: nn.Module
    mean: np.ndarray
    std: np.ndarray

    def predict(self, X: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.as_tensor((X - self.mean) / self.std, dtype=torch.float32)
            dev = next(self.model.parameters()).device
            return self.model(x.to(dev)).argmax(-1).cpu().numpy()


def train_probe(model: nn.Module, x: torch.Tensor, y: torch.Tensor, config: ProbeConfig) -> None:
    """Adam on cross-entropy, ``config.epochs`` seeded shuffles of ``(x, y)`` in minibatches;
    leaves ``model`` in eval mode. Shared by every probe of the chapter."""
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed)
    for _ in range(config.epochs):
        model.train()
        for idx in torch.randperm(len(x), generator=gen).split(config.batch_size):
            idx = idx.to(x.device)
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()


def _check_xy(X: np.ndarray, y: np.ndarray, what: str) -> None:
    if X.ndim != 2:
        raise ValueError(f"{what} features must be [n, d], got shape {X.shape}")
    if len(X) != len(y):
        raise ValueError(f"{what}: {len(X)} feature rows but {len(y)} labels")
    if not np.isfinite(X).all():
        raise ValueError(f"{what} features hold NaN or infinite values")


def check_probe_data(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                     n_classes: int | None = None) -> int:
    """What every probe needs: ``[n, d]`` finite features with one label each, training labels
    that are class indices inside ``n_classes`` (default: the largest label + 1, returned)."""
    _check_xy(X_train, y_train, "train")
    _check_xy(X_test, y_test, "test")
    if len(y_train) == 0:
        raise ValueError("train: no examples to fit a probe on")
    labels = np.asarray(y_train)
    if labels.dtype.kind not in "iuf" or labels.min() < 0 or (labels != np.round(labels)).any():
        raise ValueError(f"y_train must hold class indices (ints >= 0), got dtype {labels.dtype} "
                         f"({labels[:3]!r}...); encode string labels with encode_labels")
    n_classes = n_classes or int(labels.max()) + 1
    if labels.max() >= n_classes:
        raise ValueError(f"y_train holds class {int(labels.max())}, outside n_classes={n_classes}")
    return n_classes


def fit_probe(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
              config: ProbeConfig | None = None, n_classes: int | None = None) -> ProbeResult:
    """Train a probe on ``(X_train, y_train)`` and report train and test accuracy.

    Features are standardised with the training mean and spread (``config.standardize``).
    Deterministic on CPU for a given ``config.seed``.
    """
    config = config or ProbeConfig()
    n_classes = check_probe_data(X_train, y_train, X_test, y_test, n_classes)
    mean = X_train.mean(0) if config.standardize else np.zeros(X_train.shape[1], np.float32)
    std = X_train.std(0) + 1e-6 if config.standardize else np.ones(X_train.shape[1], np.float32)
    device = torch.device(config.device)
    x = torch.as_tensor((X_train - mean) / std, dtype=torch.float32, device=device)
    y = torch.as_tensor(y_train, dtype=torch.long, device=device)
    model = make_probe(x.shape[1], n_classes, config).to(device)
    train_probe(model, x, y, config)
    res = ProbeResult(0.0, 0.0, model, mean.astype(np.float32), std.astype(np.float32))
    res.train_acc = float((res.predict(X_train) == y_train).mean())
    res.test_acc = float((res.predict(X_test) == y_test).mean()) if len(y_test) else float("nan")
    return res


@dataclass
class Selectivity:
    """A probe's accuracy on the task and on its control task; ``selectivity`` = the difference."""

    task_acc: float
    control_acc: float

    @property
    def selectivity(self) -> float:
        return self.task_acc - self.control_acc


def probe_with_control(X_train: np.ndarray, X_test: np.ndarray, words_train: Sequence[Sequence[str]],
                       tags_train: Sequence[Sequence[str]], words_test: Sequence[Sequence[str]],
                       tags_test: Sequence[Sequence[str]], config: ProbeConfig | None = None,
                       control_seed: int = 0) -> Selectivity:
    """Train the same probe on the task and on its control task (Hewitt & Liang 2019)."""
    _, (y_tr, y_te) = encode_labels(tags_train, tags_test)
    task = fit_probe(X_train, y_tr, X_test, y_te, config).test_acc
    mapping = control_task(tags_train, words_train, list(words_train) + list(words_test), seed=control_seed)
    _, (c_tr, c_te) = encode_labels(control_labels(mapping, words_train), control_labels(mapping, words_test))
    control = fit_probe(X_train, c_tr, X_test, c_te, config).test_acc
    return Selectivity(task, control)


def bootstrap_acc(correct: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """A 95 % percentile interval of an accuracy from per-item 0/1 ``correct``."""
    correct = np.asarray(correct, dtype=np.float64)
    if correct.size == 0:
        raise ValueError("no items to bootstrap")
    rng = np.random.default_rng(seed)
    means = correct[rng.integers(0, len(correct), size=(n_boot, len(correct)))].mean(1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def cached_extractor(fn: Extractor, max_tokens: int = 200_000) -> Extractor:
    """Remember each sentence's layers (float16) so that tasks sharing sentences extract once;
    sentences are keyed by their words. Beyond ``max_tokens`` stored tokens nothing new is kept."""
    store: dict[tuple[str, ...], list[np.ndarray]] = {}
    held = [0]

    def run(sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        todo = list(dict.fromkeys(tuple(s) for s in sentences if tuple(s) not in store))
        fresh: dict[tuple[str, ...], list[np.ndarray]] = {}
        if todo:
            layers = fn([list(s) for s in todo])
            at = 0
            for s in todo:
                fresh[s] = [a[at:at + len(s)].astype(np.float16) for a in layers]
                at += len(s)
            for s, v in fresh.items():
                if held[0] + len(s) <= max_tokens:
                    store[s] = v
                    held[0] += len(s)
        parts = [store.get(tuple(s)) or fresh[tuple(s)] for s in sentences]
        if not parts:
            return []
        return [np.concatenate([p[k] for p in parts]).astype(np.float32) for k in range(len(parts[0]))]

    return run
