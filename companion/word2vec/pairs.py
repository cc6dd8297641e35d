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

**Batches of blocks.** Everything is vectorised with torch, without a Python loop per token.
:func:`context_matrix` shows the pairs plainly (a ``[n, 2 window]`` matrix of context ids and a
mask). Training reads them in *blocks* (:class:`Word2VecBatch`): ``g`` consecutive centres plus
``window`` tokens on either side, with a ``[L, g]`` mask saying which token is in which centre's
window. All pairs of a block are then scored by one small matrix product, and each token's
vector is read and written once per block rather than once per pair -- the difference between
being slower and faster than gensim on a CPU (see ``benchmarks/bench_word2vec.py``).
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
    "pairs_of",
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
        >>> keep_probability(torch.tensor([900, 100]), sample=0.01, rule="paper").round(decimals=4).tolist()
        [0.1054, 0.3162]
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
    """A batch of ``nb`` *blocks*, each ``g`` consecutive centres plus ``window`` tokens either side.

    Every pair (context word, centre) of a block lies inside its ``L = g + 2 window`` tokens, so
    one small matrix product per block scores all of them (see :mod:`.heads`): the tokens are
    gathered once per block instead of once per pair.

    Attributes:
        tokens: ``[nb, L]`` word ids of each block's tokens (padding at the corpus ends is
            id 0 and never a context).
        mask: ``[nb, L, g]`` bool: ``mask[b, t, i]`` is True when token ``t`` is a context word
            of centre ``i`` (inside the centre's dynamic window and sentence, not the centre).
        targets: ``[nb, g]`` the centre words (the words to predict); padding is id 0 with an
            empty window.
        words: corpus words this batch accounts for, counted as gensim counts them (before
            ``min_count`` and subsampling, :attr:`~.corpus.EncodedCorpus.corpus_words`): the
            speed unit; summed over an epoch it is the corpus size.
        progress: fraction of the whole run (all epochs) done before this batch.
    """

    tokens: torch.Tensor
    mask: torch.Tensor
    targets: torch.Tensor
    words: int
    progress: float


def pairs_of(batch: Word2VecBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The batch's (context word, centre word) pairs as two 1-D id tensors, in block order."""
    b, t, i = batch.mask.nonzero(as_tuple=True)
    return batch.tokens[b, t], batch.targets[b, i]


def count_training_words(batch: Word2VecBatch) -> int:
    """``count_fn`` for :func:`companion.train.fit`: corpus words (before subsampling) per batch,
    the unit gensim and the C code report their speed in."""
    return int(batch.words)


def epoch_batches(
    corpus: EncodedCorpus,
    *,
    window: int = 5,
    sample: float = 1e-3,
    batch_size: int = 512,
    block: int = 8,
    epoch: int = 0,
    epochs: int = 1,
    seed: int = 0,
    dynamic_window: bool = True,
    rule: str = "c",
) -> Iterator[Word2VecBatch]:
    """Yield the batches of one epoch, in corpus order (as the C code walks its file).

    Each epoch subsamples afresh and draws fresh window sizes from a generator seeded by
    ``(seed, epoch)``, so an epoch's batches are reproducible on their own. The same batches
    serve skip-gram (each masked (token, centre) pair is an example) and CBOW (each centre with
    a non-empty window is an example).

    Args:
        corpus: the encoded corpus (:func:`~.corpus.encode_corpus`).
        window: maximum distance between centre and context word.
        sample: subsampling threshold ``t`` (``0``: off).
        batch_size: centres per batch (rounded down to a multiple of ``block``, at least one block).
        block: centres per block ``g``. Larger blocks mean fewer, bigger matrix products but a
            larger share of scored-and-masked (token, centre) combinations:
            ``(2 window + 1) / (g + 2 window)`` of them are real pairs.
        epoch, epochs: this epoch's index and the total, for ``Word2VecBatch.progress``.
        seed: base seed.
        dynamic_window: draw the window size per centre (``False``: always ``window``).
        rule: subsampling rule, see :func:`keep_probability`.
    """
    if not isinstance(corpus, EncodedCorpus):
        raise TypeError(f"corpus must be an EncodedCorpus (see encode_corpus), got {type(corpus).__name__}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        raise ValueError(f"block must be a positive int, got {block!r}")
    if not isinstance(epochs, int) or epochs < 1 or not isinstance(epoch, int) or not 0 <= epoch < epochs:
        raise ValueError(f"need 0 <= epoch < epochs, got epoch={epoch!r}, epochs={epochs!r}")
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + epoch)
    n_raw = len(corpus)
    if sample > 0:
        keep = subsample(corpus.ids, keep_probability(corpus.vocab.counts, sample, rule=rule), gen)
        raw_pos = keep.nonzero().squeeze(1)
        ids, sent = corpus.ids[raw_pos], corpus.sentence[raw_pos]
    else:
        raw_pos = torch.arange(n_raw)
        ids, sent = corpus.ids, corpus.sentence
    N = int(ids.numel())
    eff = reduced_windows(N, window, gen) if dynamic_window else torch.full((N,), window, dtype=torch.int64)
    g = block
    n = max(g, batch_size - batch_size % g)
    L = g + 2 * window
    # pad the stream so that every block can read `window` tokens past both ends; padding has
    # sentence ids no real token has, so it is never a context
    ids_p = torch.cat([torch.zeros(window, dtype=ids.dtype), ids, torch.zeros(window + n, dtype=ids.dtype)])
    sent = sent.to(torch.int32)  # (narrow types: the masks below are the loop's largest tensors)
    sent_p = torch.cat([torch.full((window,), -1, dtype=torch.int32), sent,
                        torch.full((window + n,), -2, dtype=torch.int32)])
    offsets = torch.arange(L)
    # distance of token t from centre i is the same in every block: t - window - i; the centre
    # itself gets a distance no window reaches
    dist = (offsets[:, None] - window - torch.arange(g)[None, :]).abs()
    dist = dist.masked_fill(dist == 0, 1 << 14).to(torch.int16)  # [L, g]
    total = float(n_raw * epochs)
    done = epoch * n_raw  # the learning-rate clock, in in-vocabulary tokens
    # words are reported in the corpus's own count (with the rare words min_count dropped),
    # spread over the batches in proportion, so that an epoch sums to corpus.corpus_words
    to_corpus = corpus.corpus_words / max(1, n_raw)
    prev_end = 0
    # masks are built for many batches at once (fewer, larger tensor operations), then sliced
    per_chunk = max(1, (1 << 15) // n)
    for a0 in range(0, N, n * per_chunk):
        m0 = min(n * per_chunk, N - a0)
        nb0 = -(-m0 // g)
        cen = a0 + torch.arange(nb0 * g).view(nb0, g)  # stream index of each centre (>= N: padding)
        real = cen < N
        cen_c = cen.clamp(max=N - 1)
        tok = (a0 - window + torch.arange(nb0)[:, None] * g) + offsets[None, :]  # [nb, L], may be < 0
        reach = torch.where(real, eff[cen_c], 0).to(torch.int16)  # a padding centre reaches nothing
        mask = dist[None, :, :] <= reach[:, None, :]
        mask &= sent_p[tok + window][:, :, None] == sent[cen_c][:, None, :]
        targets = torch.where(real, ids[cen_c], torch.zeros_like(cen_c))
        tokens = ids_p[tok + window]
        per_batch = n // g
        for s in range(0, nb0, per_batch):
            a = a0 + s * g
            m = min(n, N - a)
            end = n_raw if a + m == N else int(raw_pos[a + m])  # raw words up to the next kept token
            words = round(end * to_corpus) - round(prev_end * to_corpus)
            sl = slice(s, s + per_batch)
            yield Word2VecBatch(tokens[sl], mask[sl], targets[sl], words, done / total)
            done += end - prev_end
            prev_end = end
