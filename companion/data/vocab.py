"""A vocabulary: words <-> integer ids, built from counts.

Order of ids: the unknown token (if any) is 0, then the ``specials`` in the order given,
then the other words by decreasing count, ties broken by the words themselves (code-point
order) so that the same counts always give the same ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import torch


class UnknownTokenError(KeyError):
    """A token outside a vocabulary that has no unknown token."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


def _count(tokens_or_counter: Any) -> Counter:
    if isinstance(tokens_or_counter, str):
        raise TypeError("Vocab got a single string; pass a list of tokens (e.g. tokenize(text)) "
                        "or a list of sentences")
    if isinstance(tokens_or_counter, Mapping):
        counts = Counter()
        for w, c in tokens_or_counter.items():
            if not isinstance(w, str) or not isinstance(c, int) or isinstance(c, bool) or c < 0:
                raise TypeError(f"a counts mapping must map str -> non-negative int, got {w!r}: {c!r}")
            if c:
                counts[w] = c
        return counts
    if not isinstance(tokens_or_counter, Iterable):
        raise TypeError(f"Vocab needs tokens, sentences or a Counter, got {type(tokens_or_counter).__name__}")
    counts = Counter()
    nested = None
    for item in tokens_or_counter:
        is_str = isinstance(item, str)
        if nested is None:
            nested = not is_str
        if is_str and not nested:
            counts[item] += 1
        elif not is_str and nested and not isinstance(item, (bytes, Mapping)) and isinstance(item, Iterable):
            for w in item:
                if not isinstance(w, str):
                    raise TypeError(f"sentences must hold str tokens, found {type(w).__name__}: {w!r}")
                counts[w] += 1
        else:
            raise TypeError("Vocab input must be all tokens (str) or all sentences (lists of str), "
                            f"found {type(item).__name__}: {item!r}")
    return counts


class Vocab:
    """Map tokens to ids and back.

    Args:
        tokens_or_counter: a flat iterable of tokens, an iterable of sentences (lists of
            tokens), or a mapping token -> count (e.g. a ``Counter``).
        min_count: drop words seen fewer times than this.
        max_size: keep at most this many entries in total (unknown token and specials
            included); the most frequent words win.
        unk: the unknown token, id 0; unknown words encode to it. ``None``: no unknown token,
            and encoding an unknown word raises.
        specials: further reserved tokens (``"</s>"``, ``"<pad>"``...), ids right after ``unk``.

    Attributes:
        stoi: dict token -> id.  itos: list id -> token.
        counts: a ``Counter`` of every token in the input (before ``min_count``/``max_size``).

    Example:
        >>> v = Vocab("the cat the dog the end".split(), specials=("</s>",))
        >>> v.itos
        ['<unk>', '</s>', 'the', 'cat', 'dog', 'end']
        >>> v.encode(["the", "cow"])
        [2, 0]
    """

    def __init__(self, tokens_or_counter: Any, min_count: int = 1, max_size: int | None = None,
                 unk: str | None = "<unk>", specials: Iterable[str] = ()):
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
        if isinstance(specials, str):
            raise TypeError(f"specials must be a sequence of tokens, not the string {specials!r}; "
                            f"write specials=({specials!r},)")
        reserved = ([unk] if unk is not None else []) + list(specials)
        if any(not isinstance(s, str) or not s for s in reserved):
            raise TypeError(f"unk and specials must be non-empty strings, got {reserved!r}")
        if len(set(reserved)) != len(reserved):
            raise ValueError(f"unk and specials must be distinct, got {reserved!r}")
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int)
                                     or max_size < max(len(reserved), 1)):
            raise ValueError(f"max_size must be an int >= the number of reserved tokens "
                             f"({len(reserved)}), got {max_size!r}")
        self.counts: Counter = _count(tokens_or_counter)
        if not self.counts:
            raise ValueError("cannot build a Vocab from an empty corpus: no tokens were given "
                             "(check that the corpus loaded and the tokenizer produced tokens)")
        self.unk = unk
        self.specials = tuple(specials)
        self.min_count = min_count
        self.max_size = max_size
        words = sorted((w for w, c in self.counts.items() if c >= min_count and w not in reserved),
                       key=lambda w: (-self.counts[w], w))
        if max_size is not None:
            words = words[: max_size - len(reserved)]
        self.itos: list[str] = reserved + words
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown token (0), or ``None`` when the vocab has none."""
        return None if self.unk is None else self.stoi[self.unk]

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        """The id of one token (the unknown id for an unknown token)."""
        return self.encode([token])[0]

    def __repr__(self) -> str:
        return (f"Vocab(size={len(self)}, unk={self.unk!r}, specials={self.specials!r}, "
                f"min_count={self.min_count}, corpus tokens={sum(self.counts.values())})")

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Token ids for a sequence of tokens.

        Raises:
            TypeError: if given a single string (wrap it in a list, or tokenize first).
            UnknownTokenError: (a ``KeyError``) for an unknown token when the vocab has no unknown token.
        """
        if isinstance(tokens, str):
            raise TypeError(f"encode takes a sequence of tokens, not the string {tokens[:30]!r}; "
                            f"use vocab.encode(tokenize(text)) or vocab.encode([word])")
        stoi = self.stoi
        if self.unk is not None:
            unk = stoi[self.unk]
            return [stoi.get(t, unk) for t in tokens]
        out = []
        for t in tokens:
            try:
                out.append(stoi[t])
            except KeyError:
                raise UnknownTokenError(f"token {t!r} is not in the vocabulary and it has no unknown token; "
                               f"build it with unk='<unk>' or filter the tokens first") from None
        return out

    def decode(self, ids: Iterable[int] | torch.Tensor) -> list[str]:
        """Tokens for a sequence of ids (a list or a 1-D tensor).

        Raises:
            IndexError: for an id outside ``0 .. len(vocab) - 1``.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode takes a 1-D tensor of ids, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        n = len(self.itos)
        out = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
                raise IndexError(f"id {i!r} is not a valid id of this vocabulary (0..{n - 1})")
            out.append(self.itos[i])
        return out

    def id_counts(self) -> list[int]:
        """Corpus count per id; the unknown token's count includes every dropped word's count
        (what unigram noise distributions and rare-word statistics need)."""
        out = [self.counts.get(w, 0) for w in self.itos]
        if self.unk is not None:
            out[self.stoi[self.unk]] = sum(c for w, c in self.counts.items()
                                           if w not in self.stoi or w == self.unk)
        return out

    def to_dict(self) -> dict:
        """A JSON-serialisable description (``Vocab.from_dict`` rebuilds the same ids)."""
        return {"itos": list(self.itos), "unk": self.unk, "specials": list(self.specials),
                "counts": dict(self.counts), "min_count": self.min_count, "max_size": self.max_size}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Vocab":
        """Rebuild a vocab saved with :meth:`to_dict`, checking that the ids come out the same."""
        v = cls(Counter(d["counts"]), min_count=d["min_count"], max_size=d["max_size"],
                unk=d["unk"], specials=tuple(d["specials"]))
        if v.itos != list(d["itos"]):
            raise ValueError("the saved vocabulary does not rebuild to the same ids")
        return v
