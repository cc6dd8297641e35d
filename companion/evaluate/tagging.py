"""Sequence labelling: token accuracy, span F1 as ``seqeval`` computes it, and token probes.

Chapters 6 and 11 tag Brown (part of speech), CoNLL-2000 (chunks) and CoNLL-2003 (named
entities). Part-of-speech tagging is scored by token accuracy; chunking and NER by the F1 of the
*spans* (a chunk or an entity counts only if its type and both ends are right), micro-averaged
over all spans -- the CoNLL ``conlleval`` score, which ``seqeval``'s default mode reproduces.

Span extraction (:func:`get_entities`) follows ``seqeval.metrics.sequence_labeling.get_entities``
(seqeval 1.2.2, default non-strict mode) rule for rule, so IOB1 (CoNLL-2003 as distributed: ``I-``
starts an entity unless it continues one of the same type), IOB2 (``B-`` starts every chunk) and
IOE/IOBES tags are read alike: a span ends before a ``B``/``S``/``O`` tag or a change of type, or
after an ``E``/``S`` tag; it starts at ``B``/``S``, at ``I``/``E`` after ``O``/``E``/``S``, or at a
change of type. Unlike seqeval (which warns and goes on), a tag that is not ``O`` or
``B|I|E|S[-TYPE]`` is an error. Sentences are scored separately: no span crosses a sentence end
(seqeval gets the same by joining sentences with ``O``).

Example::

    from companion.evaluate.tagging import evaluate_tagger, token_probe
    res = evaluate_tagger(my_tagger, data["test"], spans=True)   # my_tagger(list of token tuples)
    res.f1, res.accuracy
    probe = token_probe(encode_tokens, data["train"], data["test"], dev=data["dev"], spans=True)
"""

from __future__ import annotations

import numbers
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..checks import check_int, check_optional_size
from ..data.tasks import TaggedSentence
from ..scale import pick

SPAN_TASKS: tuple[str, ...] = ("conll2000_chunk", "conll2003_ner")  # scored by span F1
_TAG = re.compile(r"^(O|[BIES](-.+)?)$")

TagSeqs = Sequence[Sequence[str]]


def _check_tags(tags: Sequence[str], where: str) -> None:
    for i, t in enumerate(tags):
        if not isinstance(t, str) or not _TAG.match(t):
            raise ValueError(f"{where}, token {i}: {t!r} is not a span tag; span tags are 'O' or "
                             "B-/I-/E-/S- plus a type (IOB1, IOB2, IOE, IOBES). For part-of-speech "
                             "tags use spans=False (token accuracy only)")


def _split(tag: str) -> tuple[str, str]:
    """(prefix letter, type) as seqeval reads them: 'B-PER' -> ('B', 'PER'); 'O' -> ('O', '_')."""
    return tag[0], tag[1:].split("-", maxsplit=1)[-1] or "_"


def _ends(prev: str, tag: str, prev_type: str, type_: str) -> bool:
    return (prev in ("E", "S") or (prev in ("B", "I") and tag in ("B", "S", "O"))
            or (prev != "O" and prev_type != type_))


def _starts(prev: str, tag: str, prev_type: str, type_: str) -> bool:
    return (tag in ("B", "S") or (prev in ("E", "S", "O") and tag in ("E", "I"))
            or (tag != "O" and prev_type != type_))


def get_entities(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The spans of one sentence's tags as ``(type, first, last)`` (``last`` inclusive), in order.

    Example:
        >>> get_entities(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"])
        [('PER', 0, 1), ('LOC', 3, 3), ('LOC', 4, 4)]
    """
    if isinstance(tags, str):
        raise TypeError("get_entities takes a sequence of tags, not one string")
    _check_tags(tags, "tags")
    spans = []
    prev, prev_type, begin = "O", "_", 0
    for i, t in enumerate([*tags, "O"]):  # the closing "O" ends a span still open
        tag, type_ = _split(t)
        if _ends(prev, tag, prev_type, type_):
            spans.append((prev_type, begin, i - 1))
        if _starts(prev, tag, prev_type, type_):
            begin = i
        prev, prev_type = tag, type_
    return spans


@dataclass
class SpanScores:
    """Micro-averaged span precision, recall and F1 (as fractions), with the counts behind them,
    and the same per type in ``per_type`` (type -> dict of precision, recall, f1, support)."""

    precision: float
    recall: float
    f1: float
    n_true: int
    n_pred: int
    n_correct: int
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)


def _prf(correct: int, n_pred: int, n_true: int) -> tuple[float, float, float]:
    p = correct / n_pred if n_pred else 0.0  # seqeval's zero_division: 0
    r = correct / n_true if n_true else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _check_pairs(y_true: TagSeqs, y_pred: TagSeqs) -> None:
    if isinstance(y_true, str) or isinstance(y_pred, str) or (y_true and isinstance(y_true[0], str)):
        raise TypeError("give lists of sentences, each a list of tags (wrap one sentence in a list)")
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold sentences but {len(y_pred)} predicted ones")
    for i, (t, p) in enumerate(zip(y_true, y_pred)):
        if len(t) != len(p):
            raise ValueError(f"sentence {i}: {len(t)} gold tags but {len(p)} predicted tags")


def span_scores(y_true: TagSeqs, y_pred: TagSeqs) -> SpanScores:
    """Span precision / recall / F1 over many sentences (seqeval's ``f1_score``, default mode,
    ``average="micro"``; per-type scores as its ``classification_report``).

    Raises:
        ValueError: if the lists or a sentence's tags differ in length, or for a non-span tag.
    """
    _check_pairs(y_true, y_pred)
    true_sets: dict[str, set] = {}
    pred_sets: dict[str, set] = {}
    for i, (t, p) in enumerate(zip(y_true, y_pred)):
        _check_tags(t, f"gold sentence {i}")
        _check_tags(p, f"predicted sentence {i}")
        for typ, a, b in get_entities(t):
            true_sets.setdefault(typ, set()).add((i, a, b))
        for typ, a, b in get_entities(p):
            pred_sets.setdefault(typ, set()).add((i, a, b))
    per_type, totals = {}, [0, 0, 0]
    for typ in sorted(set(true_sets) | set(pred_sets)):
        ts, ps = true_sets.get(typ, set()), pred_sets.get(typ, set())
        c = len(ts & ps)
        p, r, f = _prf(c, len(ps), len(ts))
        per_type[typ] = {"precision": p, "recall": r, "f1": f, "support": len(ts)}
        totals[0] += c
        totals[1] += len(ps)
        totals[2] += len(ts)
    p, r, f = _prf(*totals)
    return SpanScores(p, r, f, n_true=totals[2], n_pred=totals[1], n_correct=totals[0], per_type=per_type)


def token_accuracy(y_true: TagSeqs, y_pred: TagSeqs) -> float:
    """The share of tokens whose predicted tag equals the gold tag (seqeval's ``accuracy_score``).

    Raises:
        ValueError: if the lists or a sentence's tags differ in length, or there are no tokens.
    """
    _check_pairs(y_true, y_pred)
    n = sum(len(t) for t in y_true)
    if n == 0:
        raise ValueError("no tokens to score")
    return sum(a == b for t, p in zip(y_true, y_pred) for a, b in zip(t, p)) / n


@dataclass
class TaggingResult:
    """A tagger's scores on a set of sentences (fractions; ``f1`` etc. ``None`` without spans)."""

    accuracy: float
    n_sentences: int
    n_tokens: int
    f1: float | None = None
    precision: float | None = None
    recall: float | None = None
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def scores(self, prefix: str = "") -> dict[str, float]:
        """Percent scores for a ``tagging`` table row: ``{prefix}acc`` and, with spans, ``{prefix}F1``."""
        out = {f"{prefix}acc": round(100 * self.accuracy, 2)}
        if self.f1 is not None:
            out[f"{prefix}F1"] = round(100 * self.f1, 2)
        return out


def _check_sentences(sentences: Sequence[TaggedSentence], what: str) -> None:
    if not sentences:
        raise ValueError(f"{what}: no sentences")
    for i, s in enumerate(sentences):
        if not isinstance(s, TaggedSentence):
            raise TypeError(f"{what}[{i}] is a {type(s).__name__}, not a TaggedSentence")


def score_tags(sentences: Sequence[TaggedSentence], predicted: TagSeqs, *, spans: bool) -> TaggingResult:
    """Score predicted tags against the sentences' gold tags."""
    _check_sentences(sentences, "sentences")
    gold = [list(s.tags) for s in sentences]
    pred = [list(p) for p in predicted]
    acc = token_accuracy(gold, pred)
    res = TaggingResult(acc, len(gold), sum(map(len, gold)))
    if spans:
        sc = span_scores(gold, pred)
        res.f1, res.precision, res.recall, res.per_type = sc.f1, sc.precision, sc.recall, sc.per_type
    return res


def evaluate_tagger(
    predict: Callable[[list[tuple[str, ...]]], TagSeqs],
    sentences: Sequence[TaggedSentence],
    *,
    spans: bool,
    batch_size: int = 256,
) -> TaggingResult:
    """Run a tagger (``predict(list of token tuples) -> list of tag lists``) and score it.

    Args:
        predict: the tagger; called on batches of ``batch_size`` sentences.
        sentences: gold tagged sentences (e.g. ``load_tagging("conll2003_ner")["test"]``).
        spans: also score span F1 (chunks, entities); ``False`` for part of speech.

    Raises:
        ValueError: if the tagger returns the wrong number of sentences or tags.
    """
    _check_sentences(sentences, "sentences")
    check_int(batch_size, "batch_size")
    pred: list[list[str]] = []
    for start in range(0, len(sentences), batch_size):
        batch = [s.tokens for s in sentences[start:start + batch_size]]
        out = list(predict(batch))
        if len(out) != len(batch):
            raise ValueError(f"the tagger returned {len(out)} sentences for a batch of {len(batch)}")
        pred.extend(list(p) for p in out)
    return score_tags(sentences, pred, spans=spans)


# --------------------------------------------------------------------------- token probes
EncodeTokens = Callable[[list[tuple[str, ...]]], Sequence[Any]]


def _token_features(encode: EncodeTokens, sentences: Sequence[TaggedSentence], batch_size: int) -> np.ndarray:
    blocks = []
    for start in range(0, len(sentences), batch_size):
        batch = [s.tokens for s in sentences[start:start + batch_size]]
        out = encode(batch)
        if len(out) != len(batch):
            raise ValueError(f"encode_tokens returned {len(out)} sentences for a batch of {len(batch)}")
        for toks, vecs in zip(batch, out):
            arr = vecs.detach().to("cpu", torch.float32).numpy() if isinstance(vecs, torch.Tensor) \
                else np.asarray(vecs, np.float32)
            if arr.ndim != 2 or arr.shape[0] != len(toks):
                raise ValueError(f"encode_tokens returned shape {arr.shape} for a sentence of {len(toks)} "
                                 "tokens; it must return one [n_tokens, d] array per sentence")
            blocks.append(arr)
    x = np.concatenate(blocks)
    if not np.isfinite(x).all():
        raise ValueError("encode_tokens returned NaN or infinite values")
    return x


def _subsample_sentences(sentences: Sequence[TaggedSentence], max_tokens: int | None, seed: int):
    if max_tokens is None or sum(len(s.tokens) for s in sentences) <= max_tokens:
        return list(sentences)
    order = np.random.default_rng(seed).permutation(len(sentences))
    out, n = [], 0
    for i in order:
        if n >= max_tokens:
            break
        out.append(i)
        n += len(sentences[i].tokens)
    return [sentences[i] for i in sorted(out)]


def token_probe(
    encode_tokens: EncodeTokens,
    train: Sequence[TaggedSentence],
    test: Sequence[TaggedSentence],
    *,
    dev: Sequence[TaggedSentence] | None = None,
    spans: bool,
    c_grid: Sequence[float] = (0.1, 1.0, 10.0),
    max_train_tokens: int | None = None,
    max_eval_tokens: int | None = None,
    seed: int = 0,
    batch_size: int = 64,
) -> TaggingResult:
    """A linear probe per token: logistic regression from each token's vector to its tag.

    ``encode_tokens(list of token tuples)`` returns one ``[n_tokens, d]`` array (or tensor) per
    sentence -- a contextual encoder's hidden states, or static word vectors. ``C`` is chosen on
    ``dev`` by token accuracy (without ``dev``: the middle of ``c_grid``). Sizes default to
    ``BOOK_SCALE`` (ci 3k / laptop 30k training tokens; evaluation 2k / 20k; gpu: all); the
    sentences kept are drawn with ``seed``. Tags never seen in training are never predicted.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    _check_sentences(train, "train")
    _check_sentences(test, "test")
    check_int(batch_size, "batch_size")
    check_optional_size(max_train_tokens, "max_train_tokens", "by BOOK_SCALE")
    check_optional_size(max_eval_tokens, "max_eval_tokens", "by BOOK_SCALE")
    if isinstance(c_grid, str) or len(c_grid) == 0 or not all(
            isinstance(c, numbers.Real) and not isinstance(c, bool) and 0 < c < float("inf") for c in c_grid):
        raise ValueError(f"c_grid must be a non-empty list of positive, finite C values, got {c_grid!r}")
    if max_train_tokens is None:
        max_train_tokens = pick(ci=3_000, laptop=30_000, gpu=None)
    if max_eval_tokens is None:
        max_eval_tokens = pick(ci=2_000, laptop=20_000, gpu=None)
    t0 = time.perf_counter()
    tr = _subsample_sentences(train, max_train_tokens, seed)
    te = _subsample_sentences(test, max_eval_tokens, 0)
    x_tr = _token_features(encode_tokens, tr, batch_size)
    y_tr = np.array([t for s in tr for t in s.tags])
    x_te = _token_features(encode_tokens, te, batch_size)
    mu, sd = x_tr.mean(0), x_tr.std(0)
    sd[sd < 1e-8] = 1.0
    x_tr, x_te = (x_tr - mu) / sd, (x_te - mu) / sd
    if len(set(y_tr)) < 2:
        raise ValueError("the training sentences hold a single tag; a probe needs at least two")

    def fit(c: float) -> LogisticRegression:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return LogisticRegression(C=c, max_iter=300).fit(x_tr, y_tr)

    grid = sorted(c_grid)
    if dev:
        dv = _subsample_sentences(dev, max_eval_tokens, 0)
        x_dv = (_token_features(encode_tokens, dv, batch_size) - mu) / sd
        y_dv = np.array([t for s in dv for t in s.tags])
        accs = [float((fit(c).predict(x_dv) == y_dv).mean()) for c in grid]
        c_best = grid[int(np.argmax(accs))]
    else:
        c_best = grid[len(grid) // 2]
    flat = fit(c_best).predict(x_te)
    pred, k = [], 0
    for s in te:
        pred.append(list(flat[k:k + len(s.tokens)]))
        k += len(s.tokens)
    res = score_tags(te, pred, spans=spans)
    res.meta = {"C": c_best, "train_tokens": int(y_tr.size), "train_sentences": len(tr),
                "tags_seen": len(set(y_tr)), "seconds": round(time.perf_counter() - t0, 2)}
    return res


def tag_counts(sentences: Sequence[TaggedSentence]) -> Counter:
    """How often each tag occurs (the majority-tag baseline reads it)."""
    return Counter(t for s in sentences for t in s.tags)


__all__ = [
    "SPAN_TASKS", "SpanScores", "TaggingResult", "evaluate_tagger", "get_entities", "score_tags",
    "span_scores", "tag_counts", "token_accuracy", "token_probe",
]
