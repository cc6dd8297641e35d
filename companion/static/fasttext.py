"""fastText's skip-gram with subword information (Bojanowski, Grave, Joulin & Mikolov 2017).

Skip-gram (chapter 3) gives every word one input vector, learned only from that word's own
occurrences: a word seen twice gets a poor vector and an unseen word none at all. fastText
builds the input vector of a word from pieces shared with other words:

    v(w) = (1 / |S(w)|) sum_{s in S(w)} z_s

where ``S(w)`` is the word itself plus its character n-grams (3 to 6 characters, with ``<``
``>`` marking the word's boundaries; :mod:`.subwords`), each n-gram hashed into one of
``bucket`` rows. The paper writes the score as a *sum* over ``S(w)``; the code averages, and
so do we. Everything else is skip-gram with negative sampling: the centre word's ``v(w)``
predicts each context word ``c`` through ``log sigma(u_c . v(w)) + sum_k log sigma(-u_k . v(w))``.

**As in fastText's C++ code** (``fasttext.cc``, ``model.cc``, ``loss.cc``):

* the centre word's subwords predict the context word (the window size is drawn per centre
  from ``1..window``);
* the input rows start uniform in ``[-1/d, 1/d]``, the output vectors at 0;
* the gradient for the hidden vector is added *whole* to every subword row (not divided by
  ``|S(w)|``, although the hidden vector is a mean) -- the same convention as word2vec's CBOW;
* noise words come from ``count^0.5`` (word2vec: ``^0.75``), ``lr = 0.05`` decays linearly
  to 0, subsampling with ``t = 1e-4`` and the C rule (chapter 3's :mod:`~companion.word2vec.pairs`).

Batches come from chapter 3's :func:`~companion.word2vec.epoch_batches`: blocks of ``g``
consecutive centres with the ``window`` tokens either side and a mask of which token is a
context of which centre. fastText's direction reads that mask transposed: the ``g`` centres'
subword vectors are the hidden vectors, the block's tokens the words to predict, so one small
matrix product per block scores every pair. The negative sampling is chapter 3's
:class:`~companion.word2vec.NegativeSampling` (noise table, hand-written update), reused.

Differences from the C++ code: a batch is one step (the C++ code updates after every pair,
with threads); the ``k`` noise words are drawn once per (block, context token) and shared by
the centres of that block that predict it (chapter 3 does the same per centre); a noise word
equal to the target is skipped rather than redrawn; no ``</s>`` token ends each sentence.

**Out-of-vocabulary words** get the mean of their n-gram rows (no word row): a misspelling
shares most n-grams with the word, so it lands next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..device import get_device
from ..train import History, seed_everything
from ..word2vec._loop import (
    check_max_vocab, check_positive_ints, check_run_fields, check_update_cap, intra_op_threads, train_epochs,
)
from ..word2vec.corpus import EncodedCorpus
from ..word2vec.export import save_word2vec_format
from ..word2vec.heads import NegativeSampling
from ..word2vec.model import PairModel
from ..word2vec.pairs import Word2VecBatch, epoch_batches
from ..word2vec.trainer import CorpusResult, as_corpus, fit_sgd_schedule, resolve_config
from .subwords import SubwordTable, build_subword_table, char_ngrams, ngram_buckets

__all__ = ["FastTextConfig", "FastTextSkipGram", "FastTextResult", "train_fasttext", "ENGINES"]

ENGINES = ("sgd", "autograd")


@dataclass
class FastTextConfig:
    """Hyperparameters, named and defaulted as fastText's ``skipgram`` command.

    Attributes:
        dim: vector size (``-dim 100``).
        window: maximum window (``-ws 5``).
        negative: noise words per pair (``-neg 5``).
        minn, maxn: n-gram lengths (``-minn 3 -maxn 6``; ``maxn = 0``: plain skip-gram).
        bucket: hash buckets (``-bucket 2000000``; 2e6 x 100 floats = 800 MB).
        epochs: passes (``-epoch 5``).
        lr: starting learning rate (``-lr 0.05``), decaying linearly to 0.
        sample: subsampling threshold (``-t 1e-4``).
        min_count: drop rarer words (``-minCount 5``).
        max_vocab: keep at most this many words (``None``: all).
        noise_power: exponent of the noise distribution (fastText 0.5, word2vec 0.75).
        batch_size: centres per step (about ``2 x mean window`` pairs each). A batch is one
            step, and fastText's rule adds each centre's whole error to every one of its rows, so
            an n-gram shared by many words of a batch ("ing>") gets their summed steps at once
            (see ``update_cap``).
        block: centres per block (see :class:`~companion.word2vec.Word2VecBatch`).
        update_cap: a row (output vector, word row or n-gram bucket) updated by more than this
            many pairs in one batch moves ``update_cap / n`` of its summed step -- chapter 3's
            safeguard for batched updates (:func:`companion.word2vec.heads.row_scale`); ``None``:
            fastText's update as is. Measured on the chapter corpus (5 epochs, seed 1): batch
            1024 without the cap WS353 0.41 / analogies 51.0 %, with 64 0.42 / 51.7 %; batch 4096
            diverged without it and trained with it (0.44 / 47.5 %).
        engine: ``"sgd"`` (hand-written, fastText's update) or ``"autograd"`` (``companion.train.fit``
            with ``torch.optim.SGD``; exact gradients, i.e. the subword rows get ``1/|S(w)|``
            of fastText's step).
        workers: Hogwild threads taking whole batches (fastText's ``-thread``); more than 1
            makes runs non-deterministic. Ignored (1) on a GPU.
        threads: torch's intra-op threads while training (``None``: leave torch's setting; see
            :mod:`companion.word2vec._loop` for why the default is 1).
        seed: seeds the initial vectors, subsampling, windows and noise.
        device: ``None`` picks cuda > mps > cpu.
        progress: show a progress bar.
    """

    dim: int = 100
    window: int = 5
    negative: int = 5
    minn: int = 3
    maxn: int = 6
    bucket: int = 2_000_000
    epochs: int = 5
    lr: float = 0.05
    sample: float = 1e-4
    min_count: int = 5
    max_vocab: int | None = None
    noise_power: float = 0.5
    batch_size: int = 1024
    block: int = 8
    update_cap: float | None = 64.0
    engine: str = "sgd"
    workers: int = 1
    threads: int | None = 1
    seed: int = 0
    device: str | None = None
    progress: bool = False

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field and what it accepts."""
        check_positive_ints(self, ("dim", "window", "negative", "bucket", "epochs", "min_count", "batch_size", "block"))
        for name in ("minn", "maxn"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        if self.maxn and self.minn > self.maxn:
            raise ValueError(f"minn ({self.minn}) must be <= maxn ({self.maxn}); fastText uses 3 and 6")
        if self.maxn and self.minn < 1:
            raise ValueError("minn must be >= 1 when maxn > 0")
        check_max_vocab(self.max_vocab)
        if not (isinstance(self.lr, (int, float)) and 0 < self.lr < 10 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number (fastText: 0.05), got {self.lr!r}")
        if not isinstance(self.sample, (int, float)) or not 0 <= self.sample < 1:
            raise ValueError(f"sample must be in [0, 1) (fastText: 1e-4; 0 = off), got {self.sample!r}")
        if not isinstance(self.noise_power, (int, float)) or not math.isfinite(self.noise_power):
            raise ValueError(f"noise_power must be a finite number (fastText 0.5, word2vec 0.75), got {self.noise_power!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        check_update_cap(self.update_cap)
        check_run_fields(self, "sgd")


class FastTextSkipGram(PairModel):
    """Subword input vectors (words + hash buckets) and a negative-sampling output layer.

    Args:
        words: the vocabulary in id order (row ``i`` = ``words[i]``).
        counts: ``[V]`` word counts (noise distribution).
        dim, bucket, minn, maxn, negative, noise_power: see :class:`FastTextConfig`.
        seed: seeds the initial input vectors and the noise sampler.
    """

    def __init__(
        self,
        words: Sequence[str],
        counts: torch.Tensor,
        dim: int = 100,
        *,
        bucket: int = 2_000_000,
        minn: int = 3,
        maxn: int = 6,
        negative: int = 5,
        noise_power: float = 0.5,
        seed: int = 0,
    ):
        super().__init__()
        counts = torch.as_tensor(counts)
        if counts.dim() != 1 or counts.numel() != len(words) or len(words) < 2:
            raise ValueError(f"need >= 2 words and one count per word, got {len(words)} words and counts of shape {tuple(counts.shape)}")
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        table = build_subword_table(list(words), bucket=bucket, minn=minn, maxn=maxn)
        self.words = list(words)
        self.stoi = {w: i for i, w in enumerate(self.words)}
        self.vocab_size, self.dim, self.bucket, self.minn, self.maxn = len(words), dim, bucket, minn, maxn
        self.register_buffer("sub_ptr", table.ptr)
        self.register_buffer("sub_ids", table.ids)
        gen = torch.Generator().manual_seed(int(seed))
        # fastText: input matrix uniform in [-1/dim, 1/dim]
        self.in_vectors = nn.Parameter((torch.rand(table.n_rows, dim, generator=gen) * 2 - 1) / dim)
        self.head = NegativeSampling(len(words), dim, counts, negative=negative, power=noise_power, seed=seed + 1)
        self.sparse_grad = False

    @property
    def table(self) -> SubwordTable:
        """The :class:`~.subwords.SubwordTable` (on the model's device)."""
        return SubwordTable(self.sub_ptr, self.sub_ids, self.vocab_size, self.bucket, self.minn, self.maxn)

    def _check_words(self, words: torch.Tensor) -> None:
        if words.numel() and (int(words.min()) < 0 or int(words.max()) >= self.vocab_size):
            raise ValueError(f"word ids must be in 0..{self.vocab_size - 1}; encode with the model's vocabulary")

    def hidden(self, words: torch.Tensor) -> torch.Tensor:
        """``[n, d]`` input vectors ``v(w)`` (mean of the subword rows) of vocabulary ids (differentiable)."""
        self._check_words(words)
        rows, owner = self.table.gather(words)
        lengths = (self.sub_ptr[words + 1] - self.sub_ptr[words])
        offsets = torch.cumsum(lengths, 0) - lengths
        return F.embedding_bag(rows, self.in_vectors, offsets, mode="mean", sparse=self.sparse_grad)

    def _check_batch(self, batch: Word2VecBatch) -> None:
        self._check_batch_shape(batch)
        self._check_words(batch.tokens)
        self._check_words(batch.targets)

    def pair_loss(self, batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(summed loss, number of pairs)`` through autograd: each centre's ``v(w)`` predicts
        its context tokens (NEG draws fresh noise words)."""
        self._check_batch(batch)
        nb, g = batch.targets.shape
        X = self.hidden(batch.targets.reshape(-1)).view(nb, g, self.dim)
        A = batch.mask.transpose(1, 2).to(X.dtype)  # [nb, g, L]: centre i predicts token t
        return self.head.loss(X, A, batch.tokens).sum(), batch.mask.sum()

    @torch.no_grad()
    def sgd_step(self, batch: Word2VecBatch, lr: float, cap: float | None = None) -> tuple[float, int]:
        """One step of fastText's update on a batch; returns ``(mean loss per pair, pairs)``.

        Each distinct centre word of the batch is built once from its subword rows; the errors
        of all its pairs are summed and added *whole* to each of its rows (fastText's rule).
        With ``cap``, a row updated by more than ``cap`` pairs of the batch moves ``cap / n`` of
        its summed step (output vectors and input rows alike; see ``FastTextConfig.update_cap``).
        """
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        check_update_cap(cap, "cap")
        self._check_batch(batch)
        nb, g = batch.targets.shape
        uw, inv = torch.unique(batch.targets.reshape(-1), return_inverse=True)
        rows, owner = self.table.gather(uw)
        lengths = (self.sub_ptr[uw + 1] - self.sub_ptr[uw]).to(self.in_vectors.dtype)
        H = torch.zeros(uw.numel(), self.dim, dtype=self.in_vectors.dtype, device=self.in_vectors.device)
        H.index_add_(0, owner, self.in_vectors.index_select(0, rows)).div_(lengths.unsqueeze(1))
        X = H.index_select(0, inv).view(nb, g, self.dim)
        A = batch.mask.transpose(1, 2).to(X.dtype)
        E, loss = self.head.sgd_update(X, A, batch.tokens, lr, cap=cap)
        Eu = torch.zeros_like(H).index_add_(0, inv, E.reshape(-1, self.dim))
        push = Eu.index_select(0, owner)
        if cap is not None:
            # pairs behind each row's summed step: the pairs of every centre word that has the row
            pairs = torch.zeros(uw.numel(), dtype=X.dtype, device=X.device).index_add_(0, inv, A.sum(2).reshape(-1))
            ur, rinv = torch.unique(rows, return_inverse=True)
            n = torch.zeros(ur.numel(), dtype=X.dtype, device=X.device).index_add_(0, rinv, pairs[owner])
            push.mul_((cap / n.clamp(min=cap))[rinv].unsqueeze(1))
        self.in_vectors.index_add_(0, rows, push)
        n_pairs = int(batch.mask.sum())
        return float(loss) / max(1, n_pairs), n_pairs

    @torch.no_grad()
    def word_vectors(self, batch_size: int = 8192) -> torch.Tensor:
        """``[V, d]`` float32 CPU vectors of the vocabulary: ``v(w)``, what fastText saves in ``.vec``."""
        out = []
        for s in range(0, self.vocab_size, batch_size):
            ids = torch.arange(s, min(self.vocab_size, s + batch_size), device=self.in_vectors.device)
            out.append(self.hidden(ids).float().cpu())
        return torch.cat(out)

    def subword_rows(self, word: str) -> torch.Tensor:
        """Rows of ``word``: its table entry if in the vocabulary, else its hashed n-grams only."""
        if not isinstance(word, str) or not word:
            raise ValueError(f"word must be a non-empty str, got {word!r}")
        if word in self.stoi:
            return self.table.rows_of(self.stoi[word])
        if self.maxn == 0:
            return torch.zeros(0, dtype=torch.long, device=self.sub_ids.device)
        grams = char_ngrams(word, self.minn, self.maxn)
        return torch.from_numpy(self.vocab_size + ngram_buckets(grams, self.bucket)).to(self.sub_ids.device)

    @torch.no_grad()
    def vectors_of(self, words: Iterable[str]) -> torch.Tensor:
        """``[n, d]`` float32 CPU vectors of any words, out-of-vocabulary ones included (fastText's
        ``get_word_vector``); a word with no n-gram in range gets the zero vector."""
        words = list(words)
        out = torch.zeros(len(words), self.dim)
        for k, w in enumerate(words):
            rows = self.subword_rows(w)
            if rows.numel():
                out[k] = self.in_vectors.index_select(0, rows).mean(0).float().cpu()
        return out


@dataclass
class FastTextResult(CorpusResult):
    """A trained fastText model with its vocabulary and training record.

    Attributes:
        model: the :class:`FastTextSkipGram`.
        vocab: row ``i`` of :meth:`vectors` is ``vocab.itos[i]``.
        history: ``companion.train.History`` (``items`` = corpus words).
        config: the :class:`FastTextConfig`.
    """

    def vectors(self) -> torch.Tensor:
        """``[V, d]`` vocabulary vectors (mean of each word's subword rows)."""
        return self.model.word_vectors()

    def vector(self, word: str) -> torch.Tensor:
        """``[d]`` vector of any word, in the vocabulary or not."""
        return self.model.vectors_of([word])[0]

    def with_oov(self, words: Iterable[str]) -> tuple[torch.Tensor, dict[str, int]]:
        """The vocabulary's vectors plus rows for the ``words`` that are not in it (appended
        after the vocabulary, in first-seen order): ``(vectors, index)`` for ``companion.evaluate``,
        so that every evaluation word is covered.

        (In :func:`companion.evaluate.analogy` the appended rows are candidates too unless
        ``restrict_vocab <= len(vocab)``.)
        """
        new: list[str] = []
        seen = set(self.vocab.stoi)
        for w in words:
            if isinstance(w, str) and w and w not in seen:
                seen.add(w)
                new.append(w)
        base = self.vectors()
        index = dict(self.vocab.stoi)
        if not new:
            return base, index
        extra = self.model.vectors_of(new)
        for k, w in enumerate(new):
            index[w] = len(self.vocab) + k
        return torch.cat([base, extra]), index

    def nearest(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` vocabulary words closest (cosine) to any word's vector -- try a misspelling."""
        from ..evaluate import nearest_neighbours

        vecs = self.vectors()
        if word in self.vocab.stoi:
            return nearest_neighbours(vecs, self.vocab.stoi, word, k, case_insensitive=False)
        q = self.vector(word)
        if not bool(q.any()):
            raise ValueError(f"{word!r} has no character n-gram of length {self.config.minn}..{self.config.maxn}; it has no vector")
        return nearest_neighbours(vecs, self.vocab.stoi, q, k)

    def save(self, path: str) -> Any:
        """Write the vocabulary vectors in the word2vec text format (fastText's ``.vec``)."""
        return save_word2vec_format(path, self.vocab.itos, self.vectors())

    def summary(self) -> dict[str, Any]:
        """One row for a results table."""
        return {
            "model": "fastText",
            "vocab": len(self.vocab),
            "buckets": self.config.bucket,
            "epochs": len(self.history.epoch_loss),
            "final loss": self._final_loss(),
            "s/epoch": self.seconds_per_epoch,
            "words/s": self.words_per_second,
        }


def _batches(corpus: EncodedCorpus, config: FastTextConfig, epoch: int):
    return epoch_batches(corpus, window=config.window, sample=config.sample, batch_size=config.batch_size,
                         block=config.block, epoch=epoch, epochs=config.epochs, seed=config.seed, rule="c")


def _lr(config: FastTextConfig, progress: float) -> float:
    # fastText: lr * (1 - progress); a floor keeps the very last steps from being exactly 0
    return config.lr * max(1.0 - progress, 1e-4)


def _train_sgd(model: FastTextSkipGram, corpus: EncodedCorpus, config: FastTextConfig, device: torch.device) -> History:
    def step(batch: Word2VecBatch) -> tuple[float, int, int]:
        loss, n = model.sgd_step(batch, _lr(config, batch.progress), config.update_cap)
        return loss, n, batch.words

    return train_epochs(lambda epoch: _batches(corpus, config, epoch), step, epochs=config.epochs, device=device,
                        workers=config.workers if device.type == "cpu" else 1, threads=config.threads,
                        progress_total=len(corpus) * config.epochs if config.progress else None, unit="word")


def _train_autograd(model: FastTextSkipGram, corpus: EncodedCorpus, config: FastTextConfig) -> History:
    # each pair gets fastText's step size (see fit_sgd_schedule)
    with intra_op_threads(config.threads):
        return fit_sgd_schedule(model, lambda epoch: _batches(corpus, config, epoch),
                                lambda progress: _lr(config, progress), start_lr=config.lr, config=config)


def train_fasttext(
    sentences: Sequence[Sequence[str]] | EncodedCorpus,
    config: FastTextConfig | None = None,
    **overrides: Any,
) -> FastTextResult:
    """Build the vocabulary and the subword table, train, return a :class:`FastTextResult`.

    Args:
        sentences: a list of token lists, or an :class:`~companion.word2vec.EncodedCorpus`.
        config: a :class:`FastTextConfig`; ``overrides`` replace its fields.

    Example:
        >>> sents = [["the", "cat", "sat"], ["the", "cats", "sat"]] * 30
        >>> res = train_fasttext(sents, dim=8, min_count=1, bucket=1000, epochs=1, sample=0)
        >>> res.vector("catz").shape          # an unseen word still has a vector
        torch.Size([8])
    """
    config = resolve_config(FastTextConfig, config, overrides)
    corpus = as_corpus(sentences, config)
    device = get_device(config.device)
    seed_everything(config.seed)
    model = FastTextSkipGram(corpus.vocab.itos, corpus.vocab.counts, config.dim, bucket=config.bucket, minn=config.minn,
                             maxn=config.maxn, negative=config.negative, noise_power=config.noise_power,
                             seed=config.seed).to(device)
    if config.engine == "sgd":
        hist = _train_sgd(model, corpus, config, device)
    else:
        hist = _train_autograd(model, corpus, config)
    return FastTextResult(model, corpus.vocab, hist, config)
