"""Chapter 1's bookkeeping: the plots, formatted tables and peer comparisons its notebooks show,
kept here so that the cells a reader sees stay short."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from companion import plot
from companion.portable import round_digits

from .kneser_ney import KneserNey, ModifiedKneserNey
from .ngram import NGramCounts

#: test perplexities on Brown, Bengio et al. (2003), Table 1
BENGIO_2003 = {
    ("interpolated", 3): 336,  # deleted interpolation
    ("KN", 3): 323, ("KN", 4): 321, ("KN", 5): 321,  # back-off Kneser-Ney
    ("class-based back-off (theirs, 500 classes)", 3): 312,  # their best class-based trigram
}


def ngram_rank_plot(word_counts: Mapping[str, int], counts: NGramCounts):
    """Zipf plot of the words (left) and rank-count curves of the n-grams (right).

    Returns ``(figure, fitted Zipf slope, table of distinct n-grams and share seen once)``."""
    fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=plot.DPI, layout="constrained")
    _, slope = plot.zipf_plot(word_counts, fit_range=(10, 10_000), title="Brown, lower-cased words", ax=ax_l)
    rows = {}
    for n in range(1, counts.order + 1):
        c = counts.table(n).counts
        c = np.sort(c[c > 0])[::-1]
        ax_r.loglog(np.arange(1, len(c) + 1), c, "-", lw=1.5, color=plot.PALETTE[n - 1], label=f"{n}-grams")
        rows[n] = {"distinct n-grams": f"{len(c):,}", "seen once": f"{np.mean(c == 1):.1%}"}
    ax_r.set(xlabel="rank", ylabel="count", title="n-grams of the training split")
    ax_r.grid(alpha=0.3, which="both")
    # a fixed corner: loc="best" over 10^6 points is slow and warns on a busy machine
    ax_l.legend(fontsize=8, loc="lower left")
    ax_r.legend(fontsize=8, loc="lower left")
    return fig, slope, pd.DataFrame(rows).rename_axis("n", axis=1)


def unseen_plot(unseen: Mapping[int, float]):
    """The share of test n-grams never seen in training, per n."""
    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=plot.DPI, layout="constrained")
    ax.plot(list(unseen), [100 * s for s in unseen.values()], "o-", color=plot.HIGHLIGHT)
    for n, s in unseen.items():
        ax.annotate(f"{s:.0%}", (n, 100 * s), xytext=(4, -12), textcoords="offset points", fontsize=8)
    ax.set(xlabel="n", ylabel="test n-grams unseen in training (%)", xticks=list(unseen), ylim=(-3, 103),
           title="Brown, Bengio et al.'s split")
    ax.grid(alpha=0.3)
    return fig


def memory_table(mem: pd.DataFrame) -> pd.DataFrame:
    """:func:`~companion.counting.tables.count_memory`'s table, formatted."""
    return pd.DataFrame({
        "distinct n-grams": mem["distinct n-grams"].map("{:,}".format),
        "our table (MB)": mem["table MB"].map("{:.1f}".format),
        "dense |V|^n table": (mem["dense |V|^n MB"] * 2**20).map(lambda b: f"{b:.1e} bytes"),
        "share of possible n-grams seen": mem["share of possible n-grams seen"].map("{:.1e}".format),
    })


def perplexity_plot(ppl: pd.DataFrame, vocab_size: int):
    """Test perplexity per method and n: every method (log scale) and the back-off family."""
    fig, (ax_all, ax_zoom) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=plot.DPI, layout="constrained")
    style = dict(zip(ppl.index, zip(plot.PALETTE, "osd^v")))
    for method, row in ppl.iterrows():
        color, marker = style[method]
        ax_all.plot(ppl.columns, row.values, marker=marker, color=color, label=method)
        if method in ("interpolated", "KN", "modified KN"):
            ax_zoom.plot(ppl.columns, row.values, marker=marker, color=color, label=method)
    ax_all.axhline(vocab_size, color=plot.MUTED, ls="--", lw=1)
    ax_all.annotate(f"uniform model: |V| = {vocab_size:,}", (ppl.columns[0], vocab_size), xytext=(0, -12),
                    textcoords="offset points", fontsize=8, color=plot.MUTED)
    ax_all.set_yscale("log")
    ax_all.set(xlabel="n", ylabel="test perplexity (log scale)", xticks=list(ppl.columns), title="every method")
    ax_zoom.set(xlabel="n", ylabel="test perplexity", xticks=list(ppl.columns),
                title="the methods that back off to shorter contexts")
    for ax in (ax_all, ax_zoom):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle("n-gram models on Brown (Bengio et al.'s split), test split", fontsize=10)
    return fig


def bengio_comparison(ppl: pd.DataFrame, extra: Mapping[tuple[str, int], float] | None = None) -> pd.DataFrame:
    """Our test perplexities (plus ``extra`` rows such as the class-based models) next to
    Bengio et al.'s Table 1."""
    ours = ppl.round(1).astype(object)
    for (m, n), v in (extra or {}).items():
        if m not in ours.index:
            ours.loc[m] = "—"
        ours.loc[m, n] = round(v, 1)
    for m, _ in BENGIO_2003:  # a model of theirs we did not build still gets its row
        if m not in ours.index:
            ours.loc[m] = "—"
    theirs = pd.DataFrame("—", index=ours.index, columns=[3, 4, 5], dtype=object)
    for (m, n), v in BENGIO_2003.items():
        theirs.loc[m, n] = v
    return pd.concat({"ours: n =": ours, "Bengio et al. 2003: n =": theirs}, axis=1)


def mkn3_variants(split, lower_split=None) -> pd.DataFrame:
    """The modified Kneser-Ney trigram scored four ways: lower-cased or not, sentences or one
    running stream; perplexity over all tokens and over words only (without ``</s>``)."""
    from companion.data import bengio_split

    def one(lower: bool, stream: bool) -> dict:
        s = split if lower else (lower_split or bengio_split(lower=False))
        if stream:  # the whole split as one long "sentence": contexts run across sentence ends
            train, test = [s.tokens("train", eos=None)], [s.tokens("test", eos=None)]
        else:
            train, test = s.train, s.test
        lm = ModifiedKneserNey(NGramCounts(train, 3, vocab=s.vocab))
        text = lm.encode(test)
        logp = lm.token_logprobs(text)
        is_word = text.ids[text.predicted] != 1  # id 1 is </s>
        return {"|V|": lm.vocab.n_predictable, "PPL, all tokens": lm.perplexity(text),
                "PPL, words only": float(np.exp(-logp[is_word].mean())),
                "</s> share of tokens": 1 - is_word.mean()}

    return pd.DataFrame({
        "lower-cased, sentences (this chapter)": one(True, False),
        "lower-cased, one stream": one(True, True),
        "case kept, sentences": one(False, False),
        "case kept, one stream (closest to the paper)": one(False, True),
    }).T


def format_variants(v: pd.DataFrame) -> pd.DataFrame:
    """:func:`mkn3_variants`' table, formatted."""
    return pd.DataFrame({
        "|V|": v["|V|"].map("{:,.0f}".format),
        "PPL, all tokens": v["PPL, all tokens"].map("{:.1f}".format),
        "PPL, words only": v["PPL, words only"].map("{:.1f}".format),
        "</s> share of tokens": v["</s> share of tokens"].map("{:.1%}".format),
    })


def nltk_comparison(split, n_train_tokens: int, n_test_tokens: int = 300) -> dict | None:
    """NLTK's ``KneserNeyInterpolated`` trigram against ours on the first ``n_train_tokens``
    training tokens: fit and scoring time, and the share of test tokens NLTK gives probability 0.
    ``None`` where NLTK is not installed."""
    try:
        from nltk.lm import KneserNeyInterpolated
        from nltk.lm.preprocessing import padded_everygram_pipeline
    except ImportError:
        return None
    sample, n = [], 0
    for s in split.train:
        if n >= n_train_tokens:
            break
        sample.append(s)
        n += len(s)
    t0 = time.perf_counter()
    grams, vocab = padded_everygram_pipeline(3, sample)
    nltk_kn = KneserNeyInterpolated(3)
    nltk_kn.fit(grams, vocab)
    nltk_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = KneserNey(NGramCounts(sample, 3))
    ours_fit = time.perf_counter() - t0
    pairs = []  # (word, context) for the first test tokens, NLTK-style padding
    for s in split.test:
        toks = ["<s>", "<s>"] + s + ["</s>"]
        pairs += [(toks[i], tuple(toks[i - 2:i])) for i in range(2, len(toks))]
        if len(pairs) >= n_test_tokens:
            break
    t0 = time.perf_counter()
    nltk_p = np.array([nltk_kn.score(w, c) for w, c in pairs])
    nltk_ms = (time.perf_counter() - t0) / len(pairs) * 1e3
    t0 = time.perf_counter()
    ours_ppl = ours.perplexity(split.test)
    ours_us = (time.perf_counter() - t0) / ours.encode(split.test).n_tokens * 1e6
    out = {"train tokens": n, "NLTK fit s": nltk_fit, "our fit s": ours_fit, "fit ratio": nltk_fit / ours_fit,
            "test tokens scored by NLTK": len(pairs), "NLTK ms per token": nltk_ms,
            "NLTK zero-probability share": float(np.mean(nltk_p == 0)), "our µs per token": ours_us,
            "speed ratio": nltk_ms * 1e3 / ours_us, "our perplexity": ours_ppl,
            "our discounts": ", ".join(f"{d:.2f}" for d in ours.discounts[:, 0])}
    return {k: f"{v:.3g}" if isinstance(v, float) else v for k, v in out.items()}


def bootstrap_mean(values: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95 % bootstrap interval of the mean of ``values`` (items resampled)."""
    hits = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = hits[rng.integers(0, len(hits), (n_boot, len(hits)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def class_table(res, counts: np.ndarray, classes: Sequence[int], top: int = 8) -> pd.DataFrame:
    """Some Brown classes: bit string, size and most frequent words."""
    rows = {}
    for k in classes:
        words = res.members(k, counts)
        rows[res.paths[k]] = {"words": len(words), "most frequent": ", ".join(words[:top])}
    return pd.DataFrame(rows).T.rename_axis("bit string")


def prefix_table(res, counts: np.ndarray, word: str, lengths: Sequence[int] = (2, 4, 6, 8),
                 top: int = 8) -> pd.DataFrame:
    """The words that share ever longer prefixes of ``word``'s bit string (features of growing
    specificity)."""
    path = res.path(word)
    ids = np.flatnonzero(res.cluster >= 0)
    ids = ids[np.argsort(-counts[ids], kind="stable")]
    rows = {}
    for n in [m for m in lengths if m < len(path)] + [len(path)]:
        pre = path[:n]
        same = [res.itos[i] for i in ids if res.paths[res.cluster[i]].startswith(pre) and res.itos[i] != word]
        rows[pre] = {"prefix length": n, "words sharing it": len(same), "most frequent": ", ".join(same[:top])}
    return pd.DataFrame(rows).T.rename_axis(f"{word}: {path}")


def glue_all(**values) -> None:
    """``myst_nb.glue`` each value under its name (not displayed), as a plain Python number or
    string, so that ``{glue:text}`name:.1f``` formats it in the prose. Floats are stored to
    ``MAX_DIGITS`` significant digits (:func:`companion.portable.round_digits`): a glue record is
    a compared output, and its last digits would differ from one CPU to another."""
    from myst_nb import glue

    for name, value in values.items():
        if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
            value = int(value)
        elif isinstance(value, (np.floating, float)):
            value = round_digits(value)
        elif not isinstance(value, str):
            raise TypeError(f"glue_all: {name} must be a number or a string, got {type(value).__name__}")
        glue(name, value, display=False)


def unseen_share_interval(counts: NGramCounts, test: Sequence[Sequence[str]], n: int,
                          n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """The share of test n-grams never seen in training (as
    :func:`~companion.counting.ngram.unseen_ngram_share`) and its 95 % bootstrap interval over
    test sentences: ``(share, low, high)``."""
    text = counts.encode(test)
    h = counts.lookup(text)
    at = np.flatnonzero(text.pos >= max(n - 1, 1))
    unseen = (counts.tables[0].counts[text.ids[at]] == 0) if n == 1 else (h[n - 1][at] < 0)
    sent = (np.cumsum(text.pos == 0) - 1)[at]
    k = np.bincount(sent, weights=unseen, minlength=text.n_sentences)
    m = np.bincount(sent, minlength=text.n_sentences)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(m), (n_boot, len(m)))
    shares = k[idx].sum(axis=1) / m[idx].sum(axis=1)
    lo, hi = np.quantile(shares, [0.025, 0.975])
    return float(k.sum() / m.sum()), float(lo), float(hi)


def add_brown_rows(ppl: pd.DataFrame, class_ppl: Mapping[tuple[str, int], float], n_clusters: int,
                   source: str = "notebooks/01a_ngram_models.ipynb", chapter: str = "01a") -> pd.DataFrame:
    """Write chapter 1's rows into the book's running ``brown_ppl`` table (saved at laptop and
    gpu scale, kept in memory at ci) and return the table as far as this chapter: every smoothing
    method at n = 3 and 5, the class bigram model alone and mixed with modified Kneser-Ney.
    Scores other chapters stored on the same rows (chapter 2's validation perplexities) are kept."""
    from companion.evaluate.tables import RunningTable
    from companion.scale import get_scale

    table = RunningTable("brown_ppl")
    scale = get_scale()
    old = {r.model: r for r in table.rows(scale)}
    rows: dict[str, float] = {f"{m}, n = {n}": ppl.loc[m, n] for m in ppl.index for n in (3, 5)}
    for (model, n), value in class_ppl.items():
        base = "class bigram" if model.startswith("class") else f"modified KN, n = {n} + class bigram"
        rows[f"{base} (Brown clusters, C = {n_clusters})"] = value
    for name, value in rows.items():
        scores = dict(old[name].scores) if name in old else {}
        scores["test"] = round(float(value), 1)
        table.add(name, chapter=chapter, scores=scores, source=source)
    frame = table.frame(scale)
    return frame[frame["chapter"] <= chapter].drop(columns=["scale", "params", "train_time_s"])
