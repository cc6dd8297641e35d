"""Bookkeeping for chapter 7a's experiments and figures, kept out of the notebook's cells.

* :func:`softmax_saturation` -- entropy and largest weight of dot-product attention, scaled and
  unscaled, as the head size d grows (the claim behind the ``1/sqrt(d)``);
* :func:`sinusoid_plot` -- the sinusoidal position table as an image and a few of its columns;
* :func:`attention_maps`, :func:`head_roles`, :func:`head_grid` -- the attention weights of a
  BERT encoder (all-MiniLM-L6-v2) on sentences, and which heads look at the previous token,
  at themselves, at ``[CLS]`` or ``[SEP]``;
* :func:`word_level_unk_share`, :func:`oov_by_fold` -- unknown tokens on held-out text for a
  word-level vocabulary and for subword tokenizers of the same size, over folds;
* :func:`tiktoken_parity` -- our GPT-2 encoder against tiktoken on the same sentences.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import pandas as pd
import torch

from ..plot import _figure_and_axes, _plt
from .attention import dot_product_attention, scaled_dot_product_attention
from .blocks import SinusoidalPositions

# ------------------------------------------------------------------------- softmax saturation


def softmax_saturation(dims: Sequence[int], *, n_keys: int = 64, n_queries: int = 256,
                       seeds: Sequence[int] = range(5)) -> pd.DataFrame:
    """For each head size d and seed: random q, k with unit-variance entries (what a layer norm
    followed by a well-initialised projection gives, roughly), attention over ``n_keys`` keys.

    Columns: ``d``, ``seed``, ``scaled`` (bool), ``entropy`` (mean over queries, in nats; the
    uniform distribution has ``log n_keys``), ``max_weight`` (mean largest weight), ``score_std``
    (standard deviation of the scores fed to the softmax)."""
    if not dims or any(not isinstance(d, int) or d < 1 for d in dims):
        raise ValueError(f"dims must be positive ints, got {dims!r}")
    rows = []
    for d in dims:
        for seed in seeds:
            g = torch.Generator().manual_seed(1000 * d + seed)
            q = torch.randn(n_queries, d, generator=g)
            k = torch.randn(n_keys, d, generator=g)
            v = torch.zeros(n_keys, 1)
            for scaled, fn in ((False, dot_product_attention), (True, scaled_dot_product_attention)):
                _, w = fn(q, k, v)
                ent = -(w * w.clamp_min(1e-30).log()).sum(-1)
                std = (q @ k.T / (math.sqrt(d) if scaled else 1.0)).std()
                rows.append({"d": d, "seed": seed, "scaled": scaled, "entropy": ent.mean().item(),
                             "max_weight": w.max(-1).values.mean().item(), "score_std": std.item()})
    return pd.DataFrame(rows)


def saturation_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of entropy and max weight, one row per (scaled, d)."""
    out = frame.groupby(["scaled", "d"])[["entropy", "max_weight", "score_std"]].agg(["mean", "std"])
    out.columns = [f"{a} {b}" for a, b in out.columns]
    return out.round(3)


def saturation_plot(frame: pd.DataFrame, n_keys: int = 64):
    """Entropy of the attention weights against d, scaled vs unscaled, error bars = 1 sd."""
    fig, ax = _figure_and_axes(None, (5.0, 3.0))
    for scaled, color in ((False, "#d95f02"), (True, "#1b9e77")):
        g = frame[frame.scaled == scaled].groupby("d")["entropy"]
        m, s = g.mean(), g.std()
        ax.errorbar(m.index, m.values, yerr=s.values, marker="o", color=color, capsize=3,
                    label="q·k / √d (scaled)" if scaled else "q·k (unscaled)")
    ax.axhline(math.log(n_keys), color="#9e9e9e", ls="--", lw=1, label=f"uniform: log {n_keys}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("head size d")
    ax.set_ylabel("entropy of the weights (nats)")
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------- positions


def sinusoid_plot(max_len: int = 100, d_model: int = 64, columns: Sequence[int] = (0, 2, 10, 30)):
    """Left: the ``[max_len, d_model]`` sinusoidal table as an image. Right: a few of its columns
    against the position (low dimensions oscillate fast, high ones slowly)."""
    table = SinusoidalPositions(max_len, d_model)(torch.arange(max_len)).numpy()
    fig, axes = _plt().subplots(1, 2, figsize=(9.0, 3.0), dpi=80, layout="constrained")
    im = axes[0].imshow(table, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
    axes[0].set_xlabel("dimension")
    axes[0].set_ylabel("position p")
    fig.colorbar(im, ax=axes[0], shrink=0.8)
    for c in columns:
        axes[1].plot(table[:, c], label=f"dim {c}")
    axes[1].set_xlabel("position p")
    axes[1].legend(fontsize=7, loc="lower left")
    return fig


# ------------------------------------------------------------------------- attention maps


@torch.no_grad()
def attention_maps(encoder, ids: Sequence[int]) -> torch.Tensor:
    """The attention weights of every layer and head on one sentence: ``[n_layer, n_head, T, T]``.
    Runs our explicit attention (``use_sdpa=False``) so the weights are kept, then restores SDPA."""
    blocks = list(encoder.blocks)
    for b in blocks:
        b.attn.use_sdpa = False
    try:
        encoder(torch.tensor([list(ids)]))
        return torch.stack([b.attn.last_weights[0] for b in blocks])
    finally:
        for b in blocks:
            b.attn.use_sdpa = True


def head_roles(encoder, wordpiece, sentences: Sequence[str], *, max_len: int = 64) -> pd.DataFrame:
    """For every (layer, head): the mean attention weight a token (other than ``[CLS]``/``[SEP]``)
    puts on the previous token, itself, the next token, ``[CLS]`` and ``[SEP]``, averaged over
    ``sentences``. Also the head's ``role``: the largest of the five if it is above 0.5."""
    sep_id = wordpiece.vocab["[SEP]"]
    sums, n = None, 0
    for s in sentences:
        ids = wordpiece.encode(s)[:max_len]
        T = len(ids)
        if T < 4 or ids[-1] != sep_id:
            continue
        w = attention_maps(encoder, ids)  # [L, H, T, T]
        rows = torch.arange(1, T - 1)
        parts = torch.stack([w[:, :, rows, rows - 1], w[:, :, rows, rows], w[:, :, rows, rows + 1],
                             w[:, :, rows, 0], w[:, :, rows, T - 1]], -1).sum(2)  # [L, H, 5]
        sums = parts if sums is None else sums + parts
        n += len(rows)
    if not n:
        raise ValueError("no sentence gave at least 4 tokens ending in [SEP]; pass longer sentences")
    mean = (sums / n).numpy()
    names = ["previous", "self", "next", "[CLS]", "[SEP]"]
    L, H, _ = mean.shape
    frame = pd.DataFrame([{"layer": i, "head": h, **dict(zip(names, mean[i, h].round(3)))}
                          for i in range(L) for h in range(H)])
    best = frame[names].idxmax(axis=1)
    frame["role"] = [b if frame.loc[r, b] > 0.5 else "mixed" for r, b in zip(frame.index, best)]
    return frame


def head_grid(weights: torch.Tensor, tokens: Sequence[str], heads: Sequence[tuple[int, int]]):
    """Draw the ``[T, T]`` maps of the given (layer, head) pairs side by side."""
    fig, axes = _plt().subplots(1, len(heads), figsize=(3.0 * len(heads), 3.2), dpi=80,
                                layout="constrained", squeeze=False)
    T = len(tokens)
    for ax, (layer, head) in zip(axes[0], heads):
        ax.imshow(weights[layer, head].numpy(), cmap="Greys", vmin=0, vmax=1)
        ax.set_xticks(range(T), tokens, rotation=90, fontsize=7)
        ax.set_yticks(range(T), tokens, fontsize=7)
        ax.set_title(f"layer {layer}, head {head}", fontsize=9)
    return fig


# ------------------------------------------------------------------------- unknown tokens


def word_level_unk_share(train: Sequence[str], test: Sequence[str], vocab_size: int) -> float:
    """Share of the whitespace tokens of ``test`` outside the ``vocab_size - 1`` most frequent
    words of ``train`` (one entry is ``<unk>``): the word-level baseline of chapter 1."""
    counts = Counter(w for s in train for w in s.split())
    vocab = {w for w, _ in counts.most_common(vocab_size - 1)}
    words = [w for s in test for w in s.split()]
    return sum(w not in vocab for w in words) / len(words)


def folds(n: int, k: int) -> list[tuple[list[int], list[int]]]:
    """``k`` contiguous (train, test) index splits of ``range(n)`` (contiguous: sentences of one
    text stay together, so test words really are new text)."""
    if k < 2 or n < k:
        raise ValueError(f"need 2 <= k <= n, got k={k}, n={n}")
    edges = np.linspace(0, n, k + 1).astype(int)
    return [([i for i in range(n) if not a <= i < b], list(range(a, b))) for a, b in pairwise(edges)]


def oov_by_fold(sentences: Sequence[str], k: int, vocab_size: int, *, max_train: int | None = None,
                extra: dict[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Train word-level, BPE, WordPiece and byte-level BPE vocabularies of ``vocab_size`` on each
    fold's training sentences (at most ``max_train`` of them) and measure, on the held-out fold
    (and on each ``extra`` text), the share of unknown tokens and tokens per word; for byte-level
    BPE the unknown share is measured as the share of sentences that do not round-trip."""
    from .tokenizers import BPE, ByteLevelBPE, WordPiece

    rows = []
    for fold, (tr, te) in enumerate(folds(len(sentences), k)):
        train = [sentences[i] for i in tr][:max_train]
        tests = {"held-out fold": [sentences[i] for i in te], **(extra or {})}
        toks = {"BPE": BPE.train(train, vocab_size=vocab_size),
                "WordPiece": WordPiece.train(train, vocab_size),
                "byte-level BPE": ByteLevelBPE.train(train, vocab_size)}
        for tname, test in tests.items():
            words = sum(len(s.split()) for s in test)
            rows.append({"fold": fold, "text": tname, "tokenizer": "word-level",
                         "unk_share": word_level_unk_share(train, test, vocab_size), "tokens_per_word": 1.0})
            for name, tok in toks.items():
                n = unk = 0
                for s in test:
                    if isinstance(tok, ByteLevelBPE):
                        ids = tok.encode_ordinary(s)
                        unk += tok.decode(ids) != s  # lossless: every byte has a token
                    else:
                        ids = tok.encode(s) if isinstance(tok, BPE) else tok.ids(s)
                        unk += ids.count(tok.vocab[tok.unk])
                    n += len(ids)
                rows.append({"fold": fold, "text": tname, "tokenizer": name,
                             "unk_share": unk / (len(test) if isinstance(tok, ByteLevelBPE) else n),
                             "tokens_per_word": n / words})
    return pd.DataFrame(rows)


def oov_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max over folds of the unknown share and tokens per word."""
    out = frame.groupby(["text", "tokenizer"], sort=False)[["unk_share", "tokens_per_word"]]
    out = out.agg(["mean", "min", "max"])
    out.columns = [f"{a} {b}" for a, b in out.columns]
    return out.round(4)


# ------------------------------------------------------------------------- parity


def tiktoken_parity(sentences: Sequence[str]) -> dict | None:
    """Encode ``sentences`` with our GPT-2 byte-level BPE and with tiktoken's ``gpt2``; count the
    sentences with identical ids. ``None`` when tiktoken is not installed (it is a peer)."""
    try:
        import tiktoken
    except ImportError:
        return None
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    from .tokenizers import GPT2_PATTERN, ByteLevelBPE
    from .tokenizers._files import gpt2_files

    encoder_json, vocab_bpe = gpt2_files()  # the same files, offline (get_encoding downloads)
    ranks = data_gym_to_mergeable_bpe_ranks(str(vocab_bpe), str(encoder_json))
    theirs = tiktoken.Encoding("gpt2-files", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                               special_tokens={"<|endoftext|>": 50256})
    ours = ByteLevelBPE.gpt2()
    same = tokens = 0
    for s in sentences:
        a, b = ours.encode_ordinary(s), theirs.encode_ordinary(s)
        same += a == b
        tokens += len(b)
    return {"sentences": len(sentences), "identical": same, "tokens": tokens}


__all__ = ["attention_maps", "folds", "head_grid", "head_roles", "oov_by_fold", "oov_summary",
           "saturation_plot", "saturation_summary", "sinusoid_plot", "softmax_saturation",
           "tiktoken_parity", "word_level_unk_share"]
