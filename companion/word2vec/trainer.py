"""Training word2vec end to end: ``train_word2vec(sentences, Word2VecConfig(...))``.

Two engines compute the same model:

* ``engine="sgd"`` (default): the C code's plain SGD with a learning rate that decays linearly
  from ``lr`` to ``lr * 1e-4`` over all epochs, written by hand for a batch of examples
  (:meth:`~.model.Word2VecModel.sgd_step`): gather the rows the batch touches, a few small
  batched products, ``index_add_`` the updates back.
* ``engine="autograd"``: the book's one loop, :func:`companion.train.fit`, with
  ``torch.optim.SGD`` on the mean loss (the learning rate is multiplied by the batch size so
  that each example gets the same step as in the C code, and decays the same way). The
  embedding lookups produce *sparse* gradients (only the touched rows), so the optimizer
  never touches the whole matrices.

The ``sgd`` step itself runs compiled (numba, :mod:`._compiled`) when numba is installed: the
same update over the real pairs only, without the GIL (``Word2VecConfig.kernel``; ``"torch"``
keeps the readable step). ``tests/test_word2vec_compiled.py`` checks that both give the same
vectors.

Why a second loop (measured, ``benchmarks/bench_word2vec.py`` times both in one run): the book's
loop trains one batch at a time through autograd, and on a 300k-token slice (skip-gram + NEG,
one thread, shared CPU) it ran at 239k words/s against 303k for the hand-written step -- the
graph, the sparse gradient tensors and the optimizer's pass cost ~25% on top of arithmetic that
is tiny per example (``~(k+2) d`` numbers). More importantly, the hand-written step can run in
several threads at once on different batches, sharing the vectors without locks ("Hogwild", as
the C code and gensim do: ``workers``), which a single optimizer loop cannot; that, not the 25%,
is what keeps pace with gensim's ``workers=2``. So ``fit`` remains the reference (and the engine
of the gradient checks), and ``sgd`` is the default. Both engines are tested to compute the
same update (for CBOW's context words, up to the C code's convention explained in
:mod:`.cbow`; with ``update_cap=None``, the cap being an ``sgd``-engine safeguard).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import torch
from torch import nn

from ..device import get_device
from ..train import History, TrainConfig, fit, seed_everything
from ._compiled import KERNELS, compiled_sgd_step, resolve_kernel, warm_up
from ._loop import (
    check_max_vocab, check_positive_ints, check_run_fields, check_update_cap, intra_op_threads, train_epochs,
)
from .cbow import CBOW
from .corpus import EncodedCorpus, Word2VecVocab, encode_corpus
from .export import combine, save_word2vec_format
from .heads import OUTPUTS
from .model import Word2VecModel
from .pairs import RULES, Word2VecBatch, count_training_words, epoch_batches
from .skipgram import SkipGram

__all__ = ["Word2VecConfig", "Word2VecResult", "train_word2vec", "make_model", "ENGINES", "learning_rate"]

ENGINES = ("sgd", "autograd")
ARCHS = ("sg", "cbow")


@dataclass
class Word2VecConfig:
    """Hyperparameters, named and defaulted as in word2vec.c / gensim where they exist.

    Attributes:
        arch: ``"sg"`` (skip-gram) or ``"cbow"``.
        output: ``"neg"`` (negative sampling), ``"hs"`` (hierarchical softmax) or ``"full"``.
        dim: vector size (``-size``).
        window: maximum window (``-window``); the actual one is drawn per centre.
        negative: noise words per example (``-negative``, NEG only).
        sample: subsampling threshold ``t`` (``-sample``; 0 = off).
        subsample_rule: ``"c"`` (the C code's, as gensim) or ``"paper"``.
        min_count: drop rarer words (``-min-count``).
        max_vocab: keep at most this many words (``None``: all).
        epochs: passes over the corpus (``-iter``).
        lr: starting learning rate (``-alpha``); ``None``: 0.025 for skip-gram, 0.05 for CBOW.
        min_lr_fraction: the rate decays linearly to ``lr * min_lr_fraction``.
        batch_size: centres per step (skip-gram: about ``2 x mean window`` pairs each). A
            batch's updates are computed from the same parameters and summed, so a frequent
            word's vector gets hundreds of summed steps at once: on the chapter corpus 512
            matched gensim's quality, 1024 lost ~0.02 WordSim Spearman and 4096 diverged.
        update_cap: a vector updated by more than this many pairs in one batch moves
            ``update_cap / n`` of its summed step (:func:`~.heads.row_scale`): only the most
            frequent words are affected. Measured on the chapter corpus (skip-gram + NEG, 3
            epochs, batch 512): without subsampling, plain summed SGD reached WordSim 0.22 and
            0.5% analogies (and diverged on another run), capped at 64 it reached 0.35 and
            6.5%; with subsampling the cap changed nothing beyond seed noise. ``None``: plain
            summed SGD. ``sgd`` engine only.
        block: centres per block (see :class:`~.pairs.Word2VecBatch`).
        engine: ``"sgd"`` (hand-written updates) or ``"autograd"`` (through ``companion.train.fit``).
        kernel: how the ``sgd`` engine computes its step: ``"torch"`` (the readable
            :meth:`~.model.Word2VecModel.sgd_step` the chapter shows), ``"numba"`` (the same
            update compiled, :mod:`._compiled`: only the real pairs, no GIL, ~3x faster) or
            ``"auto"`` (numba when it is installed and covers the model: CPU, NEG or HS).
        workers: CPU threads that train on different batches at once, sharing the vectors without
            locks ("Hogwild", as the C code's and gensim's threads). More than 1 makes runs
            non-deterministic; ignored (1) on a GPU.
        threads: torch's intra-op threads during training (``None``: leave torch's setting).
            The default 1 is deliberate: word2vec's operations are too small to split across
            cores, and on a busy machine a second OpenMP thread that spins waiting for its
            sibling made training >10x slower (measured); use ``workers`` for parallelism.
        seed: seeds the initial vectors, subsampling, windows and noise words.
        device: ``None`` picks cuda > mps > cpu.
        progress: show a progress bar (autograd engine: ``fit``'s bar).
    """

    arch: str = "sg"
    output: str = "neg"
    dim: int = 100
    window: int = 5
    negative: int = 5
    sample: float = 1e-3
    subsample_rule: str = "c"
    min_count: int = 5
    max_vocab: int | None = None
    epochs: int = 5
    lr: float | None = None
    min_lr_fraction: float = 1e-4
    batch_size: int = 512
    update_cap: float | None = 64.0
    block: int = 8
    engine: str = "sgd"
    kernel: str = "auto"
    workers: int = 1
    threads: int | None = 1
    seed: int = 0
    device: str | None = None
    progress: bool = False

    @property
    def start_lr(self) -> float:
        """The starting learning rate (the arch's default when ``lr`` is ``None``)."""
        if self.lr is not None:
            return float(self.lr)
        return 0.025 if self.arch == "sg" else 0.05

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field and what it accepts."""
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS} (skip-gram, CBOW), got {self.arch!r}")
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {self.output!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        if self.subsample_rule not in RULES:
            raise ValueError(f"subsample_rule must be one of {RULES}, got {self.subsample_rule!r}")
        check_positive_ints(self, ("dim", "window", "negative", "min_count", "epochs", "batch_size", "block", "workers"))
        check_max_vocab(self.max_vocab)
        if not isinstance(self.sample, (int, float)) or not 0 <= self.sample < 1:
            raise ValueError(f"sample must be in [0, 1) (1e-3 or 1e-5 are usual; 0 = off), got {self.sample!r}")
        if self.lr is not None and not (isinstance(self.lr, (int, float)) and 0 < self.lr < 10 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number (0.025 skip-gram, 0.05 CBOW) or None, got {self.lr!r}")
        if not 0 < self.min_lr_fraction <= 1:
            raise ValueError(f"min_lr_fraction must be in (0, 1], got {self.min_lr_fraction!r}")
        check_update_cap(self.update_cap)
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS} (auto: numba when installed), got {self.kernel!r}")
        check_run_fields(self, "sgd")


def learning_rate(config: Word2VecConfig, progress: float) -> float:
    """The C code's schedule: ``lr * max(1 - progress, min_lr_fraction)``, progress in [0, 1]."""
    return config.start_lr * max(1.0 - progress, config.min_lr_fraction)


def make_model(counts: torch.Tensor, config: Word2VecConfig) -> Word2VecModel:
    """The :class:`~.skipgram.SkipGram` or :class:`~.cbow.CBOW` the config describes."""
    config.validate()
    cls = SkipGram if config.arch == "sg" else CBOW
    return cls(counts, config.dim, output=config.output, negative=config.negative, seed=config.seed)


class TrainedVectors:
    """What the results of word2vec, GloVe and fastText share; the class that mixes it in has
    ``vocab`` (a :class:`~.corpus.Word2VecVocab`) and ``history`` (a ``companion.train.History``)."""

    @property
    def index(self) -> dict[str, int]:
        """word -> row, the index ``companion.evaluate`` takes."""
        return self.vocab.stoi  # type: ignore[attr-defined]

    @property
    def seconds_per_epoch(self) -> float:
        """Training time per epoch (wall clock)."""
        return self.history.seconds / max(1, len(self.history.epoch_loss))  # type: ignore[attr-defined]

    def _final_loss(self) -> float:
        losses = self.history.epoch_loss  # type: ignore[attr-defined]
        return losses[-1] if losses else float("nan")


@dataclass
class CorpusResult(TrainedVectors):
    """The record of a model trained on a corpus by word2vec's pipeline (word2vec, fastText):
    the model, its vocabulary, the training :class:`companion.train.History` (``items`` = corpus
    words) and the config."""

    model: nn.Module
    vocab: Word2VecVocab
    history: History
    config: Any
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def words_per_second(self) -> float:
        """Corpus words per second of training, counted as gensim counts them: every word of
        the corpus, before ``min_count`` and subsampling (``corpus_total_words``)."""
        return self.history.items_per_second


@dataclass
class Word2VecResult(CorpusResult):
    """A trained model with its vocabulary and training record.

    Attributes:
        model: the trained :class:`~.model.Word2VecModel`.
        vocab: its :class:`~.corpus.Word2VecVocab` (row ``i`` of the vectors is ``vocab.itos[i]``).
        history: :class:`companion.train.History` (``items`` = corpus words, ``seconds``).
        config: the :class:`Word2VecConfig` used.
    """

    def vectors(self, which: str = "input") -> torch.Tensor:
        """``[V, d]`` word vectors; ``which`` as in :func:`~.export.combine`."""
        return combine(self.model, which)

    def save(self, path: str, which: str = "input") -> Any:
        """Write the vectors in the word2vec text format (gensim's ``load_word2vec_format`` reads it)."""
        return save_word2vec_format(path, self.vocab.itos, self.vectors(which))

    def summary(self) -> dict[str, Any]:
        """One row for a results table."""
        return {
            "arch": self.config.arch,
            "output": self.config.output,
            "sample": self.config.sample,
            "epochs": len(self.history.epoch_loss),
            "final loss": self._final_loss(),
            "s/epoch": self.seconds_per_epoch,
            "words/s": self.words_per_second,
        }


def _train_sgd(model: Word2VecModel, corpus: EncodedCorpus, config: Word2VecConfig, device: torch.device) -> History:
    """The hand-written loop; ``config.workers`` threads share the batches (Hogwild, as the C code)."""
    sgd_step = model.sgd_step
    if resolve_kernel(config.kernel, model, device):
        warm_up()  # compile (or load numba's cache) before the clock starts

        def sgd_step(batch: Word2VecBatch, lr: float, cap: float | None) -> tuple[float, int]:
            return compiled_sgd_step(model, batch, lr, cap)

    def step(batch: Word2VecBatch) -> tuple[float, int, int]:
        loss, n_ex = sgd_step(batch, learning_rate(config, batch.progress), config.update_cap)
        return loss, n_ex, batch.words

    # threads=None: train_word2vec pins torch's threads around both engines
    return train_epochs(lambda epoch: _batches(corpus, config, epoch), step, epochs=config.epochs, device=device,
                        workers=config.workers, threads=None,
                        progress_total=corpus.corpus_words * config.epochs if config.progress else None, unit="word")


def fit_sgd_schedule(
    model: nn.Module,
    batches: Callable[[int], Iterable[Word2VecBatch]],
    lr_at: Callable[[float], float],
    *,
    start_lr: float,
    config: Any,
) -> History:
    """Train a model with ``pair_loss`` and ``sparse_grad`` (word2vec's, fastText's) through the
    book's loop :func:`companion.train.fit`: ``torch.optim.SGD`` on the mean loss of each batch,
    its learning rate set before every step to ``lr_at(batch.progress)`` times the batch's
    examples. ``batches(epoch)`` yields an epoch's batches; ``config`` gives ``epochs``,
    ``seed``, ``device`` and ``progress``."""
    if not (callable(batches) and callable(lr_at)):
        raise TypeError("batches (epoch -> batches) and lr_at (progress -> learning rate) must be callables")
    model.sparse_grad = True
    opt = torch.optim.SGD(model.parameters(), lr=start_lr)

    def loss_fn(m: nn.Module, batch: Word2VecBatch) -> torch.Tensor:
        total, n = m.pair_loss(batch)
        n = max(1, int(n))
        # the optimizer steps on the mean loss, so lr x n = a step on the summed loss: every
        # example gets the C code's step
        for g in opt.param_groups:
            g["lr"] = lr_at(batch.progress) * n
        return total / n

    tc = TrainConfig(
        epochs=config.epochs, lr=start_lr, optimizer="sgd", clip_grad_norm=None,
        seed=config.seed, device=config.device, progress=config.progress, restore_best=False,
    )
    try:
        return fit(model, batches, config=tc, loss_fn=loss_fn, optimizer=opt, count_fn=count_training_words)
    finally:
        model.sparse_grad = False


def _train_autograd(model: Word2VecModel, corpus: EncodedCorpus, config: Word2VecConfig) -> History:
    return fit_sgd_schedule(model, lambda epoch: _batches(corpus, config, epoch),
                            lambda progress: learning_rate(config, progress), start_lr=config.start_lr, config=config)


def _batches(corpus: EncodedCorpus, config: Word2VecConfig, epoch: int):
    return epoch_batches(
        corpus, window=config.window, sample=config.sample, batch_size=config.batch_size, block=config.block,
        epoch=epoch, epochs=config.epochs, seed=config.seed, rule=config.subsample_rule,
    )


def resolve_config(cls: type, config: Any, overrides: dict[str, Any]) -> Any:
    """A new, validated ``cls`` config: the fields of ``config`` (``None``: the defaults) with
    ``overrides`` replacing some (``train_word2vec(sents, config, epochs=1)``)."""
    config = cls(**{**asdict(config or cls()), **overrides})
    config.validate()
    return config


def as_corpus(sentences: Sequence[Sequence[str]] | EncodedCorpus, config: Any) -> EncodedCorpus:
    """``sentences`` encoded with the vocabulary ``config.min_count`` and ``config.max_vocab``
    ask for; an :class:`~.corpus.EncodedCorpus` is used as it is (one encoding, many runs)."""
    if isinstance(sentences, EncodedCorpus):
        return sentences
    return encode_corpus(sentences, min_count=config.min_count, max_size=config.max_vocab)


def train_word2vec(
    sentences: Sequence[Sequence[str]] | EncodedCorpus,
    config: Word2VecConfig | None = None,
    **overrides: Any,
) -> Word2VecResult:
    """Build the vocabulary, train, and return a :class:`Word2VecResult`.

    Args:
        sentences: a list of token lists (lower-cased with ``companion.data.tokenize``), or an
            :class:`~.corpus.EncodedCorpus` to reuse one encoding across runs.
        config: a :class:`Word2VecConfig`; ``overrides`` replace its fields
            (``train_word2vec(sents, arch="cbow", epochs=1)``).

    Example:
        >>> sents = [["a", "b", "c", "a", "b"]] * 50
        >>> res = train_word2vec(sents, dim=8, window=2, min_count=1, epochs=1, sample=0)
        >>> res.vectors().shape
        torch.Size([3, 8])
    """
    config = resolve_config(Word2VecConfig, config, overrides)
    corpus = as_corpus(sentences, config)
    device = get_device(config.device)
    seed_everything(config.seed)
    model = make_model(corpus.vocab.counts, config).to(device)
    if device.type != "cpu" and config.workers != 1:
        config.workers = 1  # one stream of batches feeds an accelerator
    with intra_op_threads(config.threads if device.type == "cpu" else None):
        if config.engine == "sgd":
            hist = _train_sgd(model, corpus, config, device)
        else:
            hist = _train_autograd(model, corpus, config)
    return Word2VecResult(model, corpus.vocab, hist, config)
