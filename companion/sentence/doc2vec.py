"""Paragraph vectors -- Doc2Vec (Le & Mikolov 2014, *Distributed Representations of Sentences
and Documents*).

Every document ``d`` gets a vector ``D_d`` trained like a word vector:

* **PV-DBOW** (``mode="dbow"``): ``D_d`` alone predicts each word of the document -- skip-gram
  with the paragraph in place of the centre word. With ``dbow_words=True`` (gensim's
  ``dbow_words``) skip-gram word pairs are interleaved, so word vectors are trained too, in the
  same space, through the same output layer.
* **PV-DM** (``mode="dm_mean"``): the mean of ``D_d`` and the window's word vectors predicts the
  centre word -- CBOW with the paragraph as one more context word.
  ``mode="dm_concat"``: the concatenation ``[D_d, w_{i-c}, ..., w_{i+c}]`` (fixed window, a
  null word pads the document's edges) -- the paper's preferred variant, with a
  ``(2c + 1) d``-wide output layer, much slower.

The output layer is Part I's word2vec machinery, reused unchanged: negative sampling with the
unigram^0.75 noise table, or the hierarchical softmax over the Huffman tree
(:mod:`companion.word2vec.heads`). Training is the C code's SGD by hand: the heads' ``sgd_update``
steps the output vectors and returns the error for the inputs, which we add to the paragraph
(and word) vectors. The learning rate decays linearly from ``lr`` to ``min_lr`` (as gensim).
That batched step (:meth:`Doc2VecModel.sgd_step`) is the readable reference; on the CPU, training
and inference run a compiled copy that applies it one example at a time, as gensim does
(:mod:`companion.sentence._doc2vec_kernel`; about gensim's speed, ``benchmarks/bench_doc2vec.py``).

**Inference** (the paper's "inference stage"): for an unseen document, a new paragraph vector
is trained by the same steps with every word and output vector frozen. This is what makes
Doc2Vec an *encoder*, and also what makes it slow and noisy at test time.

Quick start::

    res = train_doc2vec(token_lists, Doc2VecConfig(mode="dbow", dim=100, epochs=10))
    res.doc_vectors                         # [n_docs, d] trained paragraph vectors
    res.encode(["a new sentence"])          # inferred vectors: what the harness calls
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_texts
from ..data.text import tokenize
from ..device import get_device
from ..neural_lm.tree import huffman_tree
from ..train import History
from ..word2vec._loop import check_positive_ints, train_epochs
from ..word2vec.corpus import Word2VecVocab, build_vocab, encode_corpus
from ..word2vec.heads import (
    HierarchicalSoftmax,
    NegativeSampling,
    logistic_block_loss,
    logistic_block_update,
    row_scale,
)
from ..word2vec.pairs import keep_probability, subsample

__all__ = ["MODES", "Doc2VecConfig", "Doc2VecModel", "Doc2VecResult", "epoch_examples", "train_doc2vec"]

MODES = ("dbow", "dm_mean", "dm_concat")


@dataclass
class Doc2VecConfig:
    """Hyperparameters (defaults: gensim's ``Doc2Vec`` defaults where they exist).

    Attributes:
        mode: ``"dbow"``, ``"dm_mean"`` or ``"dm_concat"``.
        dim: vector size.
        window: context words on each side (PV-DM, and ``dbow_words``'s skip-gram).
        output: ``"neg"`` (negative sampling) or ``"hs"`` (hierarchical softmax).
        negative: noise words per example.
        dbow_words: PV-DBOW only: interleave skip-gram training of the word vectors.
        min_count: words rarer than this are dropped.
        sample: frequent-word subsampling threshold (0: off).
        epochs, lr, min_lr: passes and the linearly decaying learning rate.
        infer_epochs, infer_lr: inference's passes and starting rate (default: training's).
        batch_size: (input, target) pairs per step of the batched torch step, about (the compiled
            step, which updates one example at a time, takes batches of at least 8,192).
        block: PV-DBOW: consecutive words of a document that share one row of a step (see
            :func:`epoch_examples`); their summed step moves the paragraph vector.
        update_cap: a row updated by more than this many examples in one batch moves
            ``cap / n`` of its summed step (Part I's safeguard for batched SGD; the torch step only;
            ``None``: off).
        seed: seeds the initialisation, subsampling, shuffling and noise.
        device: where to train (``None``: :func:`companion.device.get_device`).
        threads: torch intra-op threads while training (``None``: leave as is).
        kernel: ``"auto"``: on the CPU, when numba is installed, train and infer with the
            compiled step (:mod:`companion.sentence._doc2vec_kernel`): plain SGD one example at
            a time, as gensim, every mode and output layer; ``tests/test_sentence_doc2vec.py``
            checks it equals :meth:`Doc2VecModel.sgd_step` applied example by example.
            ``"torch"``: the batched torch step the chapter prints (the reference).
    """

    mode: str = "dbow"
    dim: int = 100
    window: int = 5
    output: str = "neg"
    negative: int = 5
    dbow_words: bool = False
    min_count: int = 5
    sample: float = 1e-3
    epochs: int = 10
    lr: float = 0.025
    min_lr: float = 1e-4
    infer_epochs: int | None = None
    infer_lr: float | None = None
    batch_size: int = 1024
    block: int = 16
    update_cap: float | None = 64.0
    seed: int = 0
    device: str | None = None
    threads: int | None = 1
    kernel: str = "auto"

    def validate(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.output not in ("neg", "hs"):
            raise ValueError(f"output must be 'neg' or 'hs', got {self.output!r}")
        check_positive_ints(self, ("dim", "window", "negative", "min_count", "epochs", "batch_size", "block"))
        if self.infer_epochs is not None and (not isinstance(self.infer_epochs, int) or self.infer_epochs < 1):
            raise ValueError(f"infer_epochs must be a positive int or None, got {self.infer_epochs!r}")
        for name in ("lr", "min_lr") + (("infer_lr",) if self.infer_lr is not None else ()):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if self.min_lr > self.lr:
            raise ValueError(f"min_lr ({self.min_lr}) must not exceed lr ({self.lr})")
        if not (isinstance(self.sample, (int, float)) and self.sample >= 0):
            raise ValueError(f"sample must be >= 0 (0 switches subsampling off), got {self.sample!r}")
        if self.dbow_words and self.mode != "dbow":
            raise ValueError("dbow_words=True needs mode='dbow' (PV-DM trains word vectors anyway)")
        if self.update_cap is not None and not self.update_cap > 0:
            raise ValueError(f"update_cap must be positive or None, got {self.update_cap!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if self.kernel not in ("auto", "torch"):
            raise ValueError(f"kernel must be 'auto' or 'torch', got {self.kernel!r}")


# --------------------------------------------------------------------------- examples
def _window_offsets(window: int) -> torch.Tensor:
    return torch.tensor([o for o in range(-window, window + 1) if o != 0])


def epoch_examples(
    ids: torch.Tensor, doc: torch.Tensor, keep_prob: torch.Tensor, config: Doc2VecConfig,
    generator: torch.Generator, *, null_id: int, words: bool = True,
) -> dict[str, torch.Tensor]:
    """One epoch's training examples as shuffled *blocks*: a dict of tensors with one row each.

    A block is one input and up to ``G`` target words it predicts: ``src`` (a paragraph id, or a
    word id where ``is_word``), ``targets [n, G]`` and ``mask [n, G]`` (1 for a real target),
    and for PV-DM the context ``ctx [n, 2 window]`` (word ids; ``null_id`` marks an empty slot:
    outside the reduced window for ``dm_mean``, beyond the document's edge for ``dm_concat``).

    Why blocks: PV-DBOW's input is the same paragraph vector for every word of the document, so
    ``block`` consecutive words share one row and one matrix product scores them all (as Part I's
    skip-gram blocks do). ``dbow_words``'s skip-gram pairs come as one block per input word,
    its (reduced) window's words as targets. PV-DM has a different input per word: ``G = 1``.
    Frequent words are subsampled first (windows then span the kept tokens, as in the C code).

    Args:
        ids, doc: ``[N]`` word ids and document ids of the corpus tokens (doc-contiguous).
        words: add ``dbow_words``'s skip-gram blocks (switched off for inference).
    """
    kept = subsample(ids, keep_prob, generator) if config.sample > 0 else torch.ones_like(ids, dtype=torch.bool)
    t, d = ids[kept], doc[kept]
    n, W = t.numel(), config.window
    if config.mode == "dbow":
        G = max(config.block, 2 * W) if config.dbow_words and words else config.block
        # block number of each token: a new block every G tokens and at every document start
        starts = torch.ones(n, dtype=torch.bool)
        starts[1:] = d[1:] != d[:-1]
        first = torch.cummax(torch.where(starts, torch.arange(n), torch.zeros(n, dtype=torch.long)), 0).values
        k = torch.arange(n) - first  # position inside the (kept) document
        new_block = starts | (k % G == 0)
        blk = torch.cumsum(new_block.long(), 0) - 1
        nb = int(blk[-1]) + 1 if n else 0
        targets = torch.zeros(nb, G, dtype=torch.long)
        mask = torch.zeros(nb, G)
        targets[blk, k % G] = t
        mask[blk, k % G] = 1
        out = {"src": d[new_block], "is_word": torch.zeros(nb, dtype=torch.bool), "targets": targets, "mask": mask}
        if config.dbow_words and words:
            pos, inside = _neighbours(d, n, W, generator)
            nbr = torch.where(inside, t[pos.clamp(0, max(n - 1, 0))], torch.zeros_like(pos))
            wt = torch.zeros(n, G, dtype=torch.long)
            wm = torch.zeros(n, G)
            wt[:, : 2 * W], wm[:, : 2 * W] = nbr, inside.float()
            has = inside.any(1)
            out = {
                "src": torch.cat([out["src"], t[has]]),
                "is_word": torch.cat([out["is_word"], torch.ones(int(has.sum()), dtype=torch.bool)]),
                "targets": torch.cat([targets, wt[has]]),
                "mask": torch.cat([mask, wm[has]]),
            }
    else:
        pos, inside = _neighbours(d, n, W, generator, reduced=config.mode == "dm_mean")
        ctx = torch.where(inside, t[pos.clamp(0, max(n - 1, 0))], torch.full_like(pos, null_id))
        out = {"src": d, "is_word": torch.zeros(n, dtype=torch.bool), "targets": t.unsqueeze(1),
               "mask": torch.ones(n, 1), "ctx": ctx}
    order = torch.randperm(out["src"].numel(), generator=generator)
    return {k: v[order] for k, v in out.items()}


def _neighbours(d: torch.Tensor, n: int, W: int, generator: torch.Generator,
                reduced: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions ``[n, 2W]`` of each token's window and whether each is inside the document
    (and, if ``reduced``, inside word2vec's dynamic window: ``b ~ U{1..W}`` words a side)."""
    offs = _window_offsets(W)
    pos = torch.arange(n).unsqueeze(1) + offs
    inside = (pos >= 0) & (pos < n)
    inside &= d[pos.clamp(0, max(n - 1, 0))] == d.unsqueeze(1)
    if reduced:
        b = torch.randint(1, W + 1, (n,), generator=generator)
        inside &= offs.abs().unsqueeze(0) <= b.unsqueeze(1)
    return pos, inside


# --------------------------------------------------------------------------- the model
class Doc2VecModel(nn.Module):
    """Paragraph vectors, word vectors and a word2vec output layer.

    Args:
        n_docs: number of training documents.
        counts: ``[V]`` word counts (the noise distribution / the Huffman tree).
        config: a :class:`Doc2VecConfig`.
    """

    def __init__(self, n_docs: int, counts: torch.Tensor, config: Doc2VecConfig):
        super().__init__()
        config.validate()
        if n_docs < 1:
            raise ValueError("need at least one document")
        self.config, self.mode = config, config.mode
        V, d = int(counts.numel()), config.dim
        self.vocab_size, self.dim = V, d
        g = torch.Generator().manual_seed(config.seed)
        # gensim's initialisation: uniform in (-0.5/d, 0.5/d); row V is the null (padding) word
        self.doc_vectors = nn.Parameter((torch.rand(n_docs, d, generator=g) - 0.5) / d)
        words = (torch.rand(V + 1, d, generator=g) - 0.5) / d
        words[V] = 0
        self.word_vectors = nn.Parameter(words)
        width = (2 * config.window + 1) * d if config.mode == "dm_concat" else d
        self.head: nn.Module
        if config.output == "neg":
            self.head = NegativeSampling(V, width, counts, negative=config.negative, seed=config.seed)
        else:
            self.head = HierarchicalSoftmax(width, huffman_tree(counts.tolist()))

    # ---- the forward pass, shared by autograd (tests, exercises) and the hand-written step
    def hidden(self, batch: dict[str, torch.Tensor], doc_vectors: torch.Tensor | None = None) -> torch.Tensor:
        """The vector ``h [B, width]`` that predicts each block's target words."""
        D = self.doc_vectors if doc_vectors is None else doc_vectors
        src, is_word = batch["src"], batch["is_word"]
        if self.mode == "dbow":  # a paragraph, or (dbow_words) an input word
            dv = D[torch.where(is_word, 0, src)]
            if not bool(is_word.any()):
                return dv
            return torch.where(is_word.unsqueeze(1), self.word_vectors[torch.where(is_word, src, 0)], dv)
        dv, ctx = D[src], batch["ctx"]
        if self.mode == "dm_concat":
            return torch.cat([dv, self.word_vectors[ctx].flatten(1)], 1)
        # mean of the paragraph and the window's words; the null row is zero, so a fused
        # gather-and-sum (embedding_bag) needs no mask
        n = (ctx != self.vocab_size).sum(1, keepdim=True).to(dv.dtype)
        return (dv + F.embedding_bag(ctx, self.word_vectors, mode="sum", padding_idx=self.vocab_size)) / (1 + n)

    def _block(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.hidden(batch).unsqueeze(1)  # [B, 1, width]: one hidden vector per block
        return h, batch["mask"].unsqueeze(1), batch["targets"]

    def loss(self, batch: dict[str, torch.Tensor], slots: Any = None) -> torch.Tensor:
        """Summed loss of the batch through autograd (exact gradients; ``slots`` fixes the noise)."""
        h, A, targets = self._block(batch)
        rows, labels, weights = slots if slots is not None else self.head.slots(targets)
        return logistic_block_loss(self.head.weight, h, A, rows, labels, weights).sum()

    @torch.no_grad()
    def sgd_step(self, batch: dict[str, torch.Tensor], lr: float, slots: Any = None,
                 cap: float | None = None) -> float:
        """One hand-written SGD step on the batch; returns the summed loss before the step.

        The head steps the output vectors and returns ``E = lr * (-dL/dh)``. PV-DBOW adds ``E``
        to the paragraph (or input word) vector: exactly SGD. PV-DM mean adds the whole ``E`` to
        every input, as the C code and gensim do (see :mod:`companion.word2vec.cbow`): ``1 + n``
        times the exact gradient of the mean. PV-DM concat gives each input its slice of ``E``.
        """
        h, A, targets = self._block(batch)
        if slots is None:
            slots = self.head.slots(targets)
        E, loss = logistic_block_update(self.head.weight, h, A, *slots, lr, cap)
        self.push_error(batch, E.squeeze(1), self.doc_vectors, cap, words=True)
        return float(loss)

    @property
    def compiled(self) -> bool:
        """Whether training and inference use the compiled one-example-at-a-time step
        (:mod:`companion.sentence._doc2vec_kernel`; see ``Doc2VecConfig.kernel``)."""
        from . import _doc2vec_kernel as K

        return (self.config.kernel == "auto" and K.AVAILABLE and self.doc_vectors.device.type == "cpu"
                and self.doc_vectors.dtype == torch.float32)

    def numpy_slots(self, targets: torch.Tensor) -> tuple[Any, Any, Any]:
        """The head's slots ``(rows, labels, weights)`` as numpy arrays, drawn from the same
        generator as :meth:`NegativeSampling.slots` (the compiled step's input)."""
        import numpy as np

        from ..word2vec import _compiled as C

        head = self.head
        if isinstance(head, NegativeSampling):
            cells = head.sampler.cells(*targets.shape, head.negative)
            return C._neg_slots(targets.numpy(), cells.numpy(), head.sampler.table.numpy())
        rows, labels, weights = (t.contiguous().numpy() for t in head.slots(targets))
        return rows.astype(np.int64, copy=False), labels.astype(np.float32), weights.astype(np.float32)

    @torch.no_grad()
    def sequential_step(self, batch: dict[str, torch.Tensor], lr: float, slots: Any = None,
                        D: torch.Tensor | None = None) -> float:
        """The compiled step: :meth:`sgd_step` applied to the batch's (input, target) examples
        one at a time, each from the parameters the previous one left (gensim's loop). With
        ``D`` (inference) only ``D`` moves. Returns the summed loss."""
        from . import _doc2vec_kernel as K

        slots = self.numpy_slots(batch["targets"]) if slots is None else slots
        loss, _ = K.sequential_step(self.doc_vectors if D is None else D, self.word_vectors, self.head.weight,
                                    batch, slots, lr, self.mode, train=D is None)
        return float(loss)

    def push_error(self, batch: dict[str, torch.Tensor], E: torch.Tensor, D: torch.Tensor,
                   cap: float | None, *, words: bool) -> None:
        """Add the input error ``E [B, width]`` to the paragraph rows of ``D`` (and, if
        ``words``, to the word vectors)."""
        src, is_word = batch["src"], batch["is_word"]
        d, V = self.dim, self.vocab_size
        Ed = E[:, :d] if self.mode == "dm_concat" else E
        uses = batch["mask"].sum(1)  # pairs behind each block's error, for the cap
        if bool(is_word.any()):
            is_doc = ~is_word
            self._add(D, src[is_doc], Ed[is_doc], uses[is_doc], cap)
            if words:
                self._add(self.word_vectors, src[is_word], E[is_word], uses[is_word], cap)
        else:
            self._add(D, src, Ed, uses, cap)
        if not words or self.mode == "dbow":
            return
        ctx = batch["ctx"]
        real = ctx != V  # the null word pads; it is not trained
        ids = ctx[real]  # row-major: the real context words of example 0, then 1, ...
        if self.mode == "dm_mean":  # the whole error to every context word
            per_example = real.sum(1)
            Ew = E.repeat_interleave(per_example, dim=0)
            use = uses.repeat_interleave(per_example)
        else:  # concat: slice j + 1 of E belongs to context slot j
            Ew = E[:, d:].reshape(E.shape[0], -1, d)[real]
            use = uses.unsqueeze(1).expand_as(ctx)[real]
        if ids.numel():
            self._add(self.word_vectors, ids, Ew, use, cap)

    @staticmethod
    def _add(table: torch.Tensor, ids: torch.Tensor, E: torch.Tensor, uses: torch.Tensor, cap: float | None) -> None:
        s = row_scale(ids, uses, table.shape[0], cap)
        table.index_add_(0, ids, E if s is None else E * s.unsqueeze(1))

    @torch.no_grad()
    def input_error(self, h: torch.Tensor, batch: dict[str, torch.Tensor], lr: float) -> torch.Tensor:
        """``lr * (-dL/dh)`` for ``h [B, width]`` with the output vectors *frozen* (inference)."""
        rows, labels, weights = self.head.slots(batch["targets"])  # [B, G, J]
        B = rows.shape[0]
        U = self.head.weight[rows.reshape(B, -1)]  # [B, G J, width]
        S = torch.einsum("bkd,bd->bk", U, h)
        coef = (weights * batch["mask"].unsqueeze(2)).reshape(B, -1)
        G = lr * coef * (labels.reshape(B, -1) - torch.sigmoid(S))
        return torch.einsum("bk,bkd->bd", G, U)


# --------------------------------------------------------------------------- training / result
def _lr(lr: float, min_lr: float, progress: float) -> float:
    return lr - (lr - min_lr) * min(max(progress, 0.0), 1.0)


def _pairs_per_step(config: Doc2VecConfig, fast: bool) -> int:
    """Examples per step: ``batch_size`` for the batched torch step; the compiled step updates
    one example at a time whatever the batch, so it takes larger batches (fewer Python calls;
    the learning rate then decays in steps of at least 8,192 examples, gensim's are 10,000 words)."""
    return max(config.batch_size, 8192) if fast else config.batch_size


def _check_documents(documents: Sequence[Sequence[str]]) -> None:
    if isinstance(documents, str) or not isinstance(documents, Sequence) or not documents:
        raise TypeError("documents must be a non-empty list of token lists, e.g. [['a', 'cat'], ...]")
    for i, doc in enumerate(documents[:1000]):
        if isinstance(doc, str):
            raise TypeError(f"document {i} is a str; pass token lists (e.g. companion.data.tokenize(text))")
        if not isinstance(doc, Sequence):
            raise TypeError(f"document {i} is a {type(doc).__name__}, not a list of tokens")


@dataclass
class Doc2VecResult:
    """A trained Doc2Vec: the model, its vocabulary, the training history, and inference."""

    model: Doc2VecModel
    vocab: Word2VecVocab
    config: Doc2VecConfig
    history: History = field(default_factory=History)

    @property
    def doc_vectors(self) -> torch.Tensor:
        """``[n_docs, d]`` trained paragraph vectors (a detached copy on the CPU)."""
        return self.model.doc_vectors.detach().cpu().clone()

    @property
    def word_vectors(self) -> torch.Tensor:
        """``[V, d]`` input word vectors (meaningful for PV-DM and ``dbow_words``)."""
        return self.model.word_vectors.detach()[: self.model.vocab_size].cpu().clone()

    @torch.no_grad()
    def infer(self, documents: Sequence[Sequence[str]], *, epochs: int | None = None,
              lr: float | None = None, seed: int = 0) -> torch.Tensor:
        """Paragraph vectors ``[n, d]`` for new token lists; the trained weights stay untouched.

        Each new vector starts random (as in training) and takes the training steps with every
        word and output vector frozen; all documents are inferred together, in batches. A
        document with no known word keeps its small random start.
        """
        _check_documents(documents)
        cfg, m = self.config, self.model
        epochs = epochs or cfg.infer_epochs or cfg.epochs
        lr0 = lr or cfg.infer_lr or cfg.lr
        dev = m.doc_vectors.device
        # a stream of its own, so a new vector never starts where a training vector started
        g = torch.Generator().manual_seed(1_000_003 * (seed + 1))
        D = ((torch.rand(len(documents), m.dim, generator=g) - 0.5) / m.dim).to(dev)
        enc = encode_corpus([list(d) for d in documents], self.vocab) if any(
            t in self.vocab.stoi for d in documents for t in d) else None
        if enc is None:
            return D.cpu()
        keep = keep_probability(self.vocab.counts, cfg.sample)
        if isinstance(m.head, NegativeSampling):  # the same noise draws every time: deterministic
            m.head.sampler.generator.manual_seed(seed)
        fast = m.compiled
        for epoch in range(epochs):
            ex = epoch_examples(enc.ids, enc.sentence, keep, cfg, g, null_id=m.vocab_size, words=False)
            n = ex["src"].numel()
            rows = max(1, _pairs_per_step(cfg, fast) // ex["targets"].shape[1])
            for start in range(0, n, rows):
                batch = {k: v[start:start + rows].to(dev) for k, v in ex.items()}
                rate = _lr(lr0, cfg.min_lr, (epoch + start / max(n, 1)) / epochs)
                if fast:
                    m.sequential_step(batch, rate, D=D)
                else:
                    E = m.input_error(m.hidden(batch, D), batch, rate)
                    m.push_error(batch, E, D, None, words=False)
        return D.cpu()

    def encode(self, sentences: Sequence[str]) -> torch.Tensor:
        """Inferred vectors of raw sentences (tokenised with :func:`companion.data.tokenize`):
        the ``encode`` the SentEval-style harness calls."""
        check_texts(sentences)
        return self.infer([tokenize(s) for s in sentences])


def train_doc2vec(documents: Sequence[Sequence[str]], config: Doc2VecConfig | None = None,
                  vocab: Word2VecVocab | None = None) -> Doc2VecResult:
    """Train paragraph vectors on ``documents`` (token lists; one vector per document).

    Raises:
        TypeError: if ``documents`` is not a list of token lists.
        ValueError: for a bad config or a corpus too small for the vocabulary/window.
    """
    config = config or Doc2VecConfig()
    config.validate()
    _check_documents(documents)
    docs = [list(d) for d in documents]
    vocab = vocab or build_vocab(docs, min_count=config.min_count)
    enc = encode_corpus(docs, vocab)
    device = get_device(config.device)
    model = Doc2VecModel(len(docs), vocab.counts, config).to(device)
    keep = keep_probability(vocab.counts, config.sample)
    g = torch.Generator().manual_seed(config.seed)
    n_words = len(enc)
    fast = model.compiled

    def batches(epoch: int):
        ex = epoch_examples(enc.ids, enc.sentence, keep, config, g, null_id=model.vocab_size)
        n = ex["src"].numel()
        rows = max(1, _pairs_per_step(config, fast) // ex["targets"].shape[1])  # blocks per step
        for start in range(0, n, rows):
            batch = {k: v[start:start + rows] for k, v in ex.items()}
            batch["progress"] = torch.tensor((epoch + start / max(n, 1)) / config.epochs)
            # the corpus words this batch stands for (for words/s: the corpus, as gensim counts)
            batch["words"] = torch.tensor(round(n_words * min(rows, n - start) / max(n, 1)))
            yield batch

    def step(batch: dict[str, torch.Tensor]) -> tuple[float, int, int]:
        rate = _lr(config.lr, config.min_lr, float(batch["progress"]))
        n = int(batch["mask"].sum())
        if fast:
            loss = model.sequential_step(batch, rate)
        else:
            loss = model.sgd_step(batch, rate, cap=config.update_cap)
        return loss / n, n, int(batch["words"])

    hist = train_epochs(batches, step, epochs=config.epochs, device=device, threads=config.threads)
    return Doc2VecResult(model, vocab, config, hist)
