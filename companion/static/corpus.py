"""The corpus of chapters 3 and 4: Brown + State of the Union + Moby Dick, lower-cased.

About 3.0 million tokens in 129,000 sentences, every text through the book's one tokenizer
(:func:`companion.data.tokenize`: lower-cased words, punctuation dropped). Brown comes
tokenized (with its own punctuation tokens), so each of its sentences is re-joined and passed
through the same tokenizer, which makes the three sources agree on what a word is.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

__all__ = ["chapter_corpus", "corpus_counts", "SOURCES"]

SOURCES = ("brown", "sotu", "moby_dick")


@lru_cache(maxsize=4)
def _load(sources: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    from ..data import load_brown, load_moby_dick, load_sotu, tokenize

    out: list[tuple[str, ...]] = []
    for name in sources:
        if name == "brown":
            out.extend(tuple(t) for s in load_brown().sents() if (t := tokenize(" ".join(s))))
        elif name == "sotu":
            out.extend(tuple(s) for s in load_sotu().sentences())
        else:
            out.extend(tuple(s) for s in load_moby_dick().sentences())
    return tuple(out)


def chapter_corpus(sources: tuple[str, ...] | list[str] = SOURCES, *, max_tokens: int | None = None) -> list[list[str]]:
    """The chapter's sentences as lists of lower-cased tokens (fetched and cached on first use).

    Args:
        sources: any of ``"brown"``, ``"sotu"``, ``"moby_dick"`` (in that order by default).
        max_tokens: keep whole sentences from the start until this many tokens (for small
            scales); ``None`` keeps everything.

    Raises:
        ValueError: for an unknown source or a bad ``max_tokens``.
        companion.data.DataUnavailableError: if a corpus cannot be fetched.
    """
    sources = tuple(sources)
    bad = [s for s in sources if s not in SOURCES]
    if bad or not sources:
        raise ValueError(f"sources must be a non-empty subset of {SOURCES}, got {sources!r}")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise ValueError(f"max_tokens must be a positive int or None, got {max_tokens!r}")
    sents = _load(sources)
    out: list[list[str]] = []
    n = 0
    for s in sents:
        if max_tokens is not None and n >= max_tokens:
            break
        out.append(list(s))
        n += len(s)
    return out


def corpus_counts(sentences: list[list[str]]) -> Counter:
    """Token counts of a corpus (for the rare-word slice of :mod:`companion.evaluate.rare`)."""
    c: Counter = Counter()
    for s in sentences:
        c.update(s)
    return c
