"""Chapter 4's exercises: GloVe's weighting, counts and loss; fastText's n-grams and hash; the
association score behind WEAT."""

from __future__ import annotations

import math

import numpy as np

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- GloVe's weighting


def glove_weight(x: float, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """Return GloVe's weight f(x) of a co-occurrence count x."""
    # Your code here: (x / x_max) ** alpha, but never more than 1.
    raise NotImplementedError("write glove_weight")


def _weight_ref(x, x_max=100.0, alpha=0.75):
    return min(1.0, (x / x_max) ** alpha)


def _weight_cases() -> list[Case]:
    return [
        Case(args=(10.0,), expected=_weight_ref(10.0), label="x = 10 with the defaults"),
        Case(args=(100.0,), expected=1.0, label="x = x_max"),
        Case(args=(5000.0,), expected=1.0, label="far above x_max: capped at 1"),
        Case(args=(0.5, 10.0), expected=_weight_ref(0.5, 10.0), label="a 1/distance-weighted count below 1, x_max = 10"),
        Case(args=(3.0, 10.0, 1.0), expected=0.3, label="alpha = 1: a straight line"),
        Case(args=(0.0,), expected=0.0, label="x = 0 (never together)"),
    ]


register(Exercise(
    id="ch04.glove_weight",
    title="GloVe's weighting function",
    prompt="""
        GloVe weights the squared error of each co-occurrence count x by

            f(x) = (x / x_max) ** alpha   if x < x_max,   else 1

        (alpha = 3/4, x_max = 100 in the paper): rare, noisy counts matter less, and very
        frequent pairs do not dominate. Write `glove_weight(x, x_max=100.0, alpha=0.75)`.
    """,
    cases=_weight_cases,
    stub=glove_weight,
    hint="min(1.0, (x / x_max) ** alpha) does it in one line.",
))

# --------------------------------------------------------------------------- co-occurrence counts


def cooccurrence_counts(tokens: list[str], window: int) -> dict[tuple[str, str], float]:
    """Return {(word, context): weight}, each pair d words apart adding 1/d, in both directions."""
    # Your code here: for each position i and each d = 1..window with i - d >= 0, the words at
    # i and i - d add 1/d to (tokens[i], tokens[i-d]) and to (tokens[i-d], tokens[i]).
    raise NotImplementedError("write cooccurrence_counts")


def _cooc_ref(tokens, window):
    out: dict[tuple[str, str], float] = {}
    for i, w in enumerate(tokens):
        for d in range(1, window + 1):
            if i - d < 0:
                break
            c = tokens[i - d]
            out[(w, c)] = out.get((w, c), 0.0) + 1.0 / d
            out[(c, w)] = out.get((c, w), 0.0) + 1.0 / d
    return out


def _cooc_cases() -> list[Case]:
    s = "the cat sat on the mat".split()
    long = [f"w{(i * 7) % 5}" for i in range(30)]
    return [
        Case(args=(["a", "b", "c"], 2), expected=_cooc_ref(["a", "b", "c"], 2), label="a, b, c with window 2"),
        Case(args=(s, 1), expected=_cooc_ref(s, 1), label="window 1"),
        Case(args=(s, 3), expected=_cooc_ref(s, 3), label="window 3: the two 'the's are 4 apart, not counted"),
        Case(args=(s, 5), expected=_cooc_ref(s, 5), label="window 5: ('the', 'the') gets 1/4 from each direction"),
        Case(args=(["alone"], 4), expected={}, label="one word: no pairs"),
        Case(args=(long, 4), expected=_cooc_ref(long, 4), label="30 tokens of 5 words"),
    ]


register(Exercise(
    id="ch04.cooccurrence_counts",
    title="Windowed co-occurrence counts with 1/distance weights",
    prompt="""
        GloVe's matrix X counts, for every word, the words around it, weighting a pair that is
        d words apart by 1/d (so a neighbour counts 1, the word after next 1/2, ...), up to
        `window` words away on each side. The counts are symmetric.

        Write `cooccurrence_counts(tokens, window)` returning a dict mapping (word, context)
        to its weight. Example: for ["a", "b", "c"] and window 2,
        {("b","a"): 1, ("a","b"): 1, ("c","b"): 1, ("b","c"): 1, ("c","a"): 0.5, ("a","c"): 0.5}.
        A word next to itself ("x", "x") counts too.
    """,
    cases=_cooc_cases,
    stub=cooccurrence_counts,
    hint="Look only to the left (d = 1..window) and add every pair in both directions: each pair is then counted once per direction.",
))

# --------------------------------------------------------------------------- GloVe's loss of one entry


def glove_entry_loss(w, c, b: float, bc: float, x: float, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """Return f(x) * (w . c + b + bc - log x) ** 2 for one co-occurrence entry."""
    # Your code here: the dot product of the word and context vectors, plus both biases, minus
    # the log of the count; square it and weight it with glove_weight.
    raise NotImplementedError("write glove_entry_loss")


def _entry_ref(w, c, b, bc, x, x_max=100.0, alpha=0.75):
    diff = float(np.dot(np.asarray(w, float), np.asarray(c, float))) + b + bc - math.log(x)
    return _weight_ref(x, x_max, alpha) * diff * diff


def _entry_cases() -> list[Case]:
    rng = np.random.default_rng(4)
    w, c = rng.normal(size=5), rng.normal(size=5)
    cases = [
        Case(args=([1.0, 0.0], [2.0, 3.0], 0.5, -0.5, math.e ** 2), expected=0.0,
             label="a perfect fit: w.c + b + b~ = log x"),
        Case(args=([1.0, 1.0], [1.0, 1.0], 0.0, 0.0, 1.0), expected=_entry_ref([1, 1], [1, 1], 0, 0, 1.0),
             label="log 1 = 0; small weight"),
        Case(args=(w.tolist(), c.tolist(), 0.3, 0.1, 250.0), expected=_entry_ref(w, c, 0.3, 0.1, 250.0),
             label="x above x_max: weight 1"),
        Case(args=(w, c, -1.0, 2.0, 7.0, 10.0), expected=_entry_ref(w, c, -1.0, 2.0, 7.0, 10.0),
             label="numpy vectors, x_max = 10"),
    ]
    return cases


register(Exercise(
    id="ch04.glove_entry_loss",
    title="GloVe's loss for one co-occurrence",
    prompt="""
        GloVe fits, for every non-zero count X_ij, the word vector w_i, the context vector c_j and
        two biases so that w_i . c_j + b_i + b~_j is close to log X_ij. One entry's term of the loss is

            f(X_ij) * (w_i . c_j + b_i + b~_j - log X_ij) ** 2

        Write `glove_entry_loss(w, c, b, bc, x, x_max=100.0, alpha=0.75)`; w and c are lists or
        numpy arrays of equal length.
    """,
    cases=_entry_cases,
    stub=glove_entry_loss,
    hint="diff = sum(wi * ci for wi, ci in zip(w, c)) + b + bc - math.log(x); return glove_weight(x, x_max, alpha) * diff ** 2.",
))

# --------------------------------------------------------------------------- fastText's n-grams


def char_ngrams(word: str, minn: int = 3, maxn: int = 6) -> list[str]:
    """Return the character n-grams of '<' + word + '>' with minn <= n <= maxn, in fastText's order."""
    # Your code here: wrap the word, then for each start position i and each length n from
    # minn to maxn (while the n-gram fits) take the slice.
    raise NotImplementedError("write char_ngrams")


def _ngram_cases() -> list[Case]:
    from ..static.subwords import char_ngrams as ref

    args = [("where", 3, 3), ("where", 3, 6), ("on", 3, 6), ("a", 3, 6), ("naïve", 3, 4), ("embedding", 5, 5)]
    labels = ["the paper's example: where, n = 3", "fastText's default range 3-6", "a short word: '<on>' is itself an n-gram",
              "one letter: only '<a>'", "non-ASCII: n counts characters, not bytes", "only 5-grams"]
    return [Case(args=a, expected=ref(*a), label=lab) for a, lab in zip(args, labels)]


register(Exercise(
    id="ch04.char_ngrams",
    title="fastText's character n-grams",
    prompt="""
        fastText represents a word by its character n-grams. The word is wrapped in '<' and '>'
        first, so that prefixes and suffixes are told apart from the inside of words. For "where"
        and n = 3 the n-grams are  <wh, whe, her, ere, re>.

        Write `char_ngrams(word, minn=3, maxn=6)` returning all n-grams with minn <= n <= maxn of
        '<' + word + '>', ordered by start position and, for the same start, by length (fastText's
        order): for "on" with 3..6 that is ['<on', '<on>', 'on>'].
    """,
    cases=_ngram_cases,
    stub=char_ngrams,
    hint="w = '<' + word + '>'; for i in range(len(w)): for n in range(minn, maxn + 1): if i + n <= len(w): keep w[i:i + n].",
))

# --------------------------------------------------------------------------- fastText's hash


def fnv1a_32(text: str) -> int:
    """Return fastText's 32-bit FNV-1a hash of the UTF-8 bytes of ``text``."""
    # Your code here: start from 2166136261; for each byte, XOR then multiply by 16777619,
    # keeping 32 bits. Careful with bytes >= 128 (see the prompt).
    raise NotImplementedError("write fnv1a_32")


def _fnv_cases() -> list[Case]:
    from ..static.subwords import fnv1a_32 as ref

    words = ["", "a", "foobar", "<wh", "where>", "naïve", "東京"]
    labels = ["the empty string: the offset basis", "one letter", "a published test vector", "an n-gram",
              "another n-gram", "non-ASCII: the signed-char quirk", "three bytes per character"]
    return [Case(args=(w,), expected=ref(w), label=lab) for w, lab in zip(words, labels)]


register(Exercise(
    id="ch04.fnv1a_32",
    title="fastText's FNV-1a hash (with its quirk)",
    prompt="""
        fastText stores n-gram vectors in a fixed number of buckets: bucket = hash(n-gram) % buckets,
        with the 32-bit FNV-1a hash of the n-gram's UTF-8 bytes:

            h = 2166136261
            for each byte c:  h = (h XOR c) * 16777619   (keep the low 32 bits)

        fastText's C++ code reads each byte as a *signed* char, so a byte c >= 128 enters the XOR as
        c - 256 taken modulo 2**32 (that is c | 0xFFFFFF00), not as c. Released models depend on this,
        so it was never fixed. Write `fnv1a_32(text)`.
    """,
    cases=_fnv_cases,
    stub=fnv1a_32,
    hint="for c in text.encode('utf-8'): h ^= c if c < 128 else c | 0xFFFFFF00; h = (h * 16777619) & 0xFFFFFFFF",
))

# --------------------------------------------------------------------------- WEAT's association


def weat_association(w, A, B) -> float:
    """Return s(w, A, B): mean cosine of w with the vectors of A minus mean cosine with those of B."""
    # Your code here: cosine(u, v) = u . v / (|u| |v|).
    raise NotImplementedError("write weat_association")


def _assoc_ref(w, A, B):
    w = np.asarray(w, float)

    def cos(u):
        u = np.asarray(u, float)
        return float(u @ w / (np.linalg.norm(u) * np.linalg.norm(w)))

    return float(np.mean([cos(a) for a in A]) - np.mean([cos(b) for b in B]))


def _assoc_cases() -> list[Case]:
    rng = np.random.default_rng(7)
    A, B = rng.normal(size=(4, 6)), rng.normal(size=(5, 6))
    w = rng.normal(size=6)
    return [
        Case(args=([1.0, 0.0], [[2.0, 0.0]], [[0.0, 3.0]]), expected=1.0, label="w along A, orthogonal to B"),
        Case(args=([1.0, 1.0], [[1.0, 0.0]], [[0.0, 1.0]]), expected=0.0, label="halfway: no association"),
        Case(args=([0.0, 1.0], [[1.0, 0.0], [3.0, 0.0]], [[0.0, 0.5], [0.0, 9.0]]), expected=-1.0,
             label="lengths do not matter, only angles"),
        Case(args=(w, A, B), expected=_assoc_ref(w, A, B), label="random vectors, 4 and 5 attribute words"),
    ]


register(Exercise(
    id="ch04.weat_association",
    title="The association score behind WEAT",
    prompt="""
        The Word Embedding Association Test (Caliskan et al. 2017) measures how much a word w leans
        towards one set of attribute words A rather than another set B:

            s(w, A, B) = mean over a in A of cos(w, a)  -  mean over b in B of cos(w, b)

        Write `weat_association(w, A, B)`; w is a vector, A and B are lists of vectors (lists or
        numpy arrays).
    """,
    cases=_assoc_cases,
    stub=weat_association,
    hint="Write cos(u, v) first (np.dot and np.linalg.norm), then average it over A and over B.",
))
