"""Training examples from a token stream: subsampling, the dynamic window, batches.

**Subsampling of frequent words.** A token of a word with corpus frequency ``f = count/total``
is thrown away before the windows are formed. Two rules exist:

* the paper (Mikolov et al. 2013b, eq. 5) *discards* a token with probability
  ``1 - sqrt(t / f)``, i.e. keeps it with ``sqrt(t / f)``;
* the C code (and gensim) *keeps* it with
  ``(sqrt(f / t) + 1) * t / f = sqrt(t / f) + t / f``
  (written there with counts: ``(sqrt(c / (t T)) + 1) (t T) / c``).

The C rule keeps a little more of every word (the extra ``t/f``) and is the one whose
``t = 1e-3`` default everybody uses; this package uses it everywhere (``rule="c"``) so that it
can be compared with gensim, and offers the paper's rule for the notebook's comparison. Both are
clipped to at most 1 (words with ``f <= t`` are always kept).

**Dynamic window.** For every centre token the C code draws ``b`` uniformly from
``0 .. window-1`` and uses the window ``window - b``: nearby words are seen more often (a word
at distance ``k`` is in the window with probability ``(window - k + 1) / window``).

**Which vector predicts which.** As in the C code and gensim, the skip-gram pair for centre
``w_t`` and context word ``w_{t+j}`` uses the *context* word's input vector to predict the centre
word (the window belongs to the centre). Summed over the corpus this is the same set of
(input, output) pairs as "centre predicts context", up to the window's asymmetry.

Everything here is vectorised with torch: a whole chunk of centres becomes a ``[n, 2 window]``
matrix of context ids and a validity mask, without a Python loop per token.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import torch

from .corpus import EncodedCorpus

__all__ = [
    "keep_probability",
    "subsample",
    "reduced_windows",
    "context_matrix",
    "Word2VecBatch",
    "epoch_batches",
    "count_training_words",
]

RULES = ("c", "paper")


def keep_probability(counts: torch.Tensor, sample: float = 1e-3, *, rule: str = "c") -> torch.Tensor:
    """Probability of keeping one token of each word under frequent-word subsampling.

    Args:
        counts: ``[V]`` corpus counts.
        sample: the threshold ``t`` (``0`` switches subsampling off: everything is kept).
        rule: ``"c"`` (the C code's keep rule, used by this package) or ``"paper"`` (keep with
            ``sqrt(t/f)``, i.e. discard with ``1 - sqrt(t/f)``).

    Returns:
        ``[V]`` float64 probabilities in ``(0, 1]``.

    Example:
        >>> keep_probability(torch.tensor([900, 100]), sample=0.01, rule="paper").tolist()
        [0.10540925533894598, 0.31622776601683794]
    """
    counts = torch.as_tensor(counts)
    if counts.dim() != 1 or counts.numel() == 0:
        raise ValueError(f"counts must be a non-empty 1-D tensor, got shape {tuple(counts.shape)}")
    c = counts.double()
    if bool((c <= 0).any()):
        raise ValueError("every count must be positive (words with count 0 cannot be in the vocabulary)")
    if not isinstance(sample, (int, float)) or sample < 0 or sample != sample:
        raise ValueError(f"sample must be a number >= 0 (e.g. 1e-3; 0 switches subsampling off), got {sample!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if sample == 0:
        return torch.ones_like(c)
    f = c / c.sum()
    ratio = sample / f
    keep = ratio.sqrt() + ratio if rule == "c" else ratio.sqrt()
    return keep.clamp(max=1.0)


def subsample(ids: torch.Tensor, keep_prob: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Boolean mask: which tokens survive subsampling (one uniform draw per token).

    Args:
        ids: ``[N]`` word ids.
        keep_prob: ``[V]`` from :func:`keep_probability`.
        generator: a seeded ``torch.Generator`` for reproducible draws.
    """
    if ids.dim() != 1:
        raise ValueError(f"ids must be 1-D, got shape {tuple(ids.shape)}")
    u = torch.rand(ids.shape, generator=generator, dtype=torch.float64)
    return u < keep_prob.to(ids.device)[ids]


def reduced_windows(n: int, window: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """The C code's dynamic window: for each of ``n`` centres a size uniform in ``1 .. window``."""
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return window - torch.randint(0, window, (n,), generator=generator)


def context_matrix(
    ids: torch.Tensor,
    sentence: torch.Tensor,
    eff: torch.Tensor,
    window: int,
    start: int = 0,
    stop: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Context ids of the centres ``start..stop-1`` of a token stream.

    Args:
        ids, sentence: ``[N]`` word ids and sentence numbers of the (already subsampled) stream.
        eff: ``[N]`` window size of every centre (``window`` everywhere for a fixed window).
        window: the largest window; the matrix has ``2 * window`` columns, for the offsets
            ``-window .. -1, 1 .. window`` in that order.

    Returns:
        ``(ctx, valid)``: ``[n, 2 window]`` context ids (garbage where not valid) and a mask
        that is True where the offset is within the centre's window and in its sentence.
    """
    N = int(ids.numel())
    stop = N if stop is None else stop
    if not 0 <= start <= stop <= N:
        raise ValueError(f"need 0 <= start <= stop <= {N}, got start={start}, stop={stop}")
    dev = ids.device
    pos = torch.arange(start, stop, device=dev)
    off = torch.cat([torch.arange(-window, 0, device=dev), torch.arange(1, window + 1, device=dev)])
    j = pos[:, None] + off[None, :]
    valid = (j >= 0) & (j < N)
    jc = j.clamp(0, max(N - 1, 0))
    valid &= sentence[jc] == sentence[pos][:, None]
    valid &= off.abs()[None, :] <= eff[pos][:, None]
    return ids[jc], valid


class Word2VecBatch(NamedTuple):
    """One batch of training examples.

    Attributes:
        inputs: skip-gram: ``[B]`` input (context) word of each pair; CBOW: ``[P]`` all context
            words of the batch, flattened.
        owner: CBOW: ``[P]`` the example (row of ``targets``) each context word belongs to;
            ``None`` for skip-gram.
        targets: ``[B]`` the word to predict (the centre word).
        words: how many corpus words this batch accounts for (for words/second and the
            learning-rate schedule; summed over an epoch it is the corpus size).
        progress: fraction of the whole training run (all epochs) done before this batch.
    """

    inputs: torch.Tensor
    owner: torch.Tensor | None
    targets: torch.Tensor
    words: int
    progress: float


def count_training_words(batch: Word2VecBatch) -> int:
    """``count_fn`` for :func:`companion.train.fit`: corpus words (before subsampling) per batch,
    the unit gensim and the C code report their speed in."""
    return int(batch.words)


def epoch_batches(
    corpus: EncodedCorpus,
    *,
    arch: str = "sg",
    window: int = 5,
    sample: float = 1e-3,
    batch_size: int = 4096,
    epoch: int = 0,
    epochs: int = 1,
    seed: int = 0,
    shuffle: bool = False,
    dynamic_window: bool = True,
    rule: str = "c",
    chunk: int = 1 << 16,
) -> Iterator[Word2VecBatch]:
    """Yield the batches of one epoch, in corpus order (as the C code walks its file).

    Each epoch subsamples afresh and draws fresh window sizes from a generator seeded by
    ``(seed, epoch)``, so an epoch's batches are reproducible on their own.

    Args:
        corpus: the encoded corpus (:func:`~.corpus.encode_corpus`).
        arch: ``"sg"`` (a batch holds ``batch_size`` pairs) or ``"cbow"`` (``batch_size``
            centres, each with all its context words).
        window: maximum distance between centre and context word.
        sample: subsampling threshold ``t`` (``0``: off).
        batch_size: examples per batch.
        epoch, epochs: this epoch's index and the total, for ``Word2VecBatch.progress``.
        seed: base seed.
        shuffle: shuffle the examples within each chunk of ``chunk`` centres (the C code does
            not shuffle; a shuffled batch holds fewer repeats of the same word).
        dynamic_window: draw the window size per centre (``False``: always ``window``).
        rule: subsampling rule, see :func:`keep_probability`.
        chunk: centres turned into examples at once (memory ~ ``chunk * 2 window`` ids).
    """
    if arch not in ("sg", "cbow"):
        raise ValueError(f"arch must be 'sg' (skip-gram) or 'cbow', got {arch!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(epochs, int) or epochs < 1 or not isinstance(epoch, int) or not 0 <= epoch < epochs:
        raise ValueError(f"need 0 <= epoch < epochs, got epoch={epoch!r}, epochs={epochs!r}")
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + epoch)
    ids_all, sent_all = corpus.ids, corpus.sentence
    n_raw = int(ids_all.numel())
    if sample > 0:
        keep = subsample(ids_all, keep_probability(corpus.vocab.counts, sample, rule=rule), gen)
        raw_pos = keep.nonzero().squeeze(1)
        ids, sent = ids_all[raw_pos], sent_all[raw_pos]
    else:
        raw_pos = torch.arange(n_raw)
        ids, sent = ids_all, sent_all
    N = int(ids.numel())
    if dynamic_window:
        eff = reduced_windows(N, window, gen)
    else:
        eff = torch.full((N,), window, dtype=torch.int64)
    # Corpus words are credited chunk by chunk: a chunk of centres spans the raw corpus from
    # the token after the previous chunk's last centre to its own last centre, and its words
    # are spread over its batches in proportion to their examples (exact sums, monotone).
    raw_end = torch.cat([raw_pos[1:], torch.tensor([n_raw])]) if N else torch.tensor([n_raw])
    total = float(n_raw * epochs)
    done = epoch * n_raw  # raw words of the whole run done before the next batch
    carry = 0  # words of chunks that produced no example yet
    pending: Word2VecBatch | None = None
    prev_end = 0
    for a in range(0, N, chunk):
        b = min(N, a + chunk)
        chunk_end = n_raw if b == N else int(raw_end[b - 1])
        span, prev_end = chunk_end - prev_end + carry, chunk_end
        ctx, valid = context_matrix(ids, sent, eff, window, a, b)
        n_ctx = valid.sum(1)
        centres = torch.arange(a, b)
        parts: list[tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]] = []
        if arch == "sg":
            inputs = ctx[valid]
            targets = ids[centres.repeat_interleave(n_ctx)]
            if shuffle:
                perm = torch.randperm(inputs.numel(), generator=gen)
                inputs, targets = inputs[perm], targets[perm]
            for s in range(0, inputs.numel(), batch_size):
                parts.append((inputs[s : s + batch_size], None, targets[s : s + batch_size]))
        else:
            rows = n_ctx > 0  # a centre alone in its sentence has no context: skipped, as in C
            ctx, valid, centres = ctx[rows], valid[rows], centres[rows]
            if shuffle:
                perm = torch.randperm(centres.numel(), generator=gen)
                ctx, valid, centres = ctx[perm], valid[perm], centres[perm]
            for s in range(0, centres.numel(), batch_size):
                v = valid[s : s + batch_size]
                owner = torch.arange(v.shape[0]).repeat_interleave(v.sum(1))
                parts.append((ctx[s : s + batch_size][v], owner, ids[centres[s : s + batch_size]]))
        if not parts:
            carry = span
            continue
        carry = 0
        n_ex = sum(int(p[2].numel()) for p in parts)
        seen = 0
        for inputs_, owner_, targets_ in parts:
            start_w = span * seen // n_ex
            seen += int(targets_.numel())
            words = span * seen // n_ex - start_w
            if pending is not None:
                yield pending
                done += pending.words
            pending = Word2VecBatch(inputs_, owner_, targets_, words, done / total)
    if pending is not None:
        yield pending._replace(words=pending.words + carry)
