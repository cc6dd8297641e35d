"""Bookkeeping for chapter 2's notebook, so that its cells stay short: the toy corpus and its
comparison table, a bootstrap over test sentences for the claim check, the genre of every
scored token, and the loss-curve and speed plots.

Nothing here is a model; the models are in :mod:`.nnlm`, :mod:`.lbl`, :mod:`.hsoftmax`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ToyCorpus", "toy_corpus", "toy_comparison", "sentence_index", "bootstrap_reduction",
    "token_genres", "genre_table", "speed_plot",
]


@dataclass
class ToyCorpus:
    """Three-word sentences: every determiner-animal-verb combination but two held-out pairs."""

    train: list[list[str]]
    valid: list[list[str]]
    test: list[list[str]]
    held_out: tuple[tuple[str, str], ...]


def toy_corpus() -> ToyCorpus:
    """*the*/*a*, four animals, four verbs, minus *dog walks* (test) and *horse sleeps*
    (validation), plus a few sentences about a man and a woman who read and write."""
    animals, verbs = ["cat", "dog", "mouse", "horse"], ["sleeps", "runs", "eats", "walks"]
    held_out = (("dog", "walks"), ("horse", "sleeps"))
    train = [[det, a, v] for det in ("the", "a") for a in animals for v in verbs
             if (a, v) not in held_out]
    train += [["the", "man", "reads"], ["a", "man", "reads"], ["the", "man", "writes"],
              ["a", "woman", "writes"], ["the", "woman", "reads"]]
    valid = [["the", "horse", "sleeps"], ["a", "horse", "sleeps"]]
    test = [["the", "dog", "walks"], ["a", "dog", "walks"]]
    return ToyCorpus(train, valid, test, held_out)


def toy_comparison(model, vocab, kn, corpus: ToyCorpus) -> tuple[pd.DataFrame, dict[str, float]]:
    """P(word | two-word context) under the NNLM and a Kneser-Ney trigram for a few contexts,
    and the perplexity of the final word of the test sentences under each."""

    def nnlm(context, word):
        return float(model.next_word_distribution(vocab.encode(context))[vocab.stoi[word]])

    seen = {tuple(s[1:]) for s in corpus.train}
    rows = []
    for context in (["the", "dog"], ["the", "cat"], ["the", "man"]):
        for word in ("walks", "sleeps", "reads"):
            rows.append({"context": " ".join(context), "next word": word,
                         "seen in training": (context[1], word) in seen,
                         "NNLM": nnlm(context, word),
                         "Kneser-Ney trigram": kn.prob(word, ["<s>", *context])})
    table = pd.DataFrame(rows).set_index(["context", "next word"])
    ppl = {
        "NNLM": math.exp(-np.mean([math.log(nnlm(s[:2], s[2])) for s in corpus.test])),
        "Kneser-Ney trigram": math.exp(-np.mean([kn.logprob(s[2], ["<s>", *s[:2]])
                                                 for s in corpus.test])),
    }
    return table, ppl


def sentence_index(sentences: Sequence[Sequence[str]]) -> np.ndarray:
    """For every token the chapter's models score (each word and one ``</s>`` per sentence),
    the index of its sentence."""
    return np.repeat(np.arange(len(sentences)), [len(s) + 1 for s in sentences])


def bootstrap_reduction(logp_new: np.ndarray, logp_old: np.ndarray, sentence: np.ndarray, *,
                        n_boot: int = 1000, seed: int = 0) -> dict[str, float]:
    """How much lower the new model's perplexity is than the old one's, ``1 - PPL_new/PPL_old``,
    with a bootstrap over sentences (tokens of one sentence are resampled together).

    Returns ``reduction`` (on the tokens given), ``mean``, ``lo`` and ``hi`` (the 2.5 % and
    97.5 % quantiles over ``n_boot`` resamples) and ``sd``.
    """
    logp_new, logp_old = np.asarray(logp_new, float), np.asarray(logp_old, float)
    sentence = np.asarray(sentence)
    if not (logp_new.shape == logp_old.shape == sentence.shape) or logp_new.ndim != 1:
        raise ValueError("logp_new, logp_old and sentence must be 1-D arrays of one length "
                         f"(got {logp_new.shape}, {logp_old.shape}, {sentence.shape})")
    ids, inverse = np.unique(sentence, return_inverse=True)
    diff = np.bincount(inverse, weights=logp_new - logp_old)  # per sentence: sum of log ratios
    n_tok = np.bincount(inverse).astype(float)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(ids), size=(n_boot, len(ids)))
    boot = 1 - np.exp(-diff[pick].sum(1) / n_tok[pick].sum(1))
    return {"reduction": float(1 - math.exp(-diff.sum() / n_tok.sum())), "mean": float(boot.mean()),
            "lo": float(np.quantile(boot, 0.025)), "hi": float(np.quantile(boot, 0.975)),
            "sd": float(boot.std(ddof=1))}


def token_genres(split, split_name: str, genre_of_word: Sequence[str]) -> np.ndarray:
    """The Brown genre of every token chapter 1's models score in ``split_name`` (each word and
    each sentence's ``</s>``); ``genre_of_word`` holds one genre per corpus word, in order."""
    sizes = split.sizes()
    pos = {"train": 0, "valid": sizes["train"], "test": sizes["train"] + sizes["valid"]}[split_name]
    out = []
    for s in getattr(split, split_name):
        out += [genre_of_word[pos]] * (len(s) + 1)
        pos += len(s)
    return np.array(out)


def genre_table(split, genre_of_word: Sequence[str], logp: dict[str, np.ndarray]) -> pd.DataFrame:
    """Tokens per genre in each split and, for validation and test, the perplexity of the model
    whose per-token log-probabilities ``logp[split_name]`` are given."""
    rows = {}
    for split_name in ("train", "valid", "test"):
        g = token_genres(split, split_name, genre_of_word)
        for genre in dict.fromkeys(g):  # in corpus order
            row = {"tokens": int((g == genre).sum())}
            if split_name in logp:
                row["trigram PPL"] = math.exp(-logp[split_name][g == genre].mean())
            rows[(split_name, genre)] = row
    return pd.DataFrame(rows).T.rename_axis(["split", "genre"])


def speed_plot(speed: pd.DataFrame, device_name: str):
    """Training tokens/s of the full and the tree softmax against |V| (log-log)."""
    from ..plot import DPI, PALETTE, _plt

    fig, ax = _plt().subplots(figsize=(6, 3.6), dpi=DPI, layout="constrained")
    ax.loglog(speed.vocab_size, speed.full_tokens_per_s, "o-", color=PALETTE[1],
              label="full softmax")
    ax.loglog(speed.vocab_size, speed.hsoftmax_tokens_per_s, "s-", color=PALETTE[0],
              label="hierarchical softmax (Huffman)")
    for _, r in speed.iterrows():
        ax.annotate(f"{r.speedup:.0f}x", (r.vocab_size, r.hsoftmax_tokens_per_s), xytext=(0, 6),
                    textcoords="offset points", ha="center", fontsize=8)
    ax.set(xlabel="vocabulary size |V|", ylabel="training tokens / s",
           title=f"NNLM training throughput ({device_name})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig
