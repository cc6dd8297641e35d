"""Chapter 3's exercises: word2vec's pieces by hand (pairs, subsampling, Huffman codes, the
hierarchical-softmax probability, the negative-sampling gradient)."""

from __future__ import annotations

import math

import numpy as np

from ..neural_lm.tree import huffman_tree
from .core import Case, Exercise, numeric_gradient, register

# --------------------------------------------------------------------------- skip-gram pairs


def skipgram_pairs(tokens: list[str], window: int) -> list[tuple[str, str]]:
    """Return every (centre, context) pair of ``tokens`` with a fixed window."""
    # Your code here: for each position i, every position j with 0 < |i - j| <= window.
    raise NotImplementedError("write skipgram_pairs")


def _pairs_ref(tokens, window):
    out = []
    for i, c in enumerate(tokens):
        for j in range(max(0, i - window), min(len(tokens), i + window + 1)):
            if j != i:
                out.append((c, tokens[j]))
    return out


def _pairs_cases() -> list[Case]:
    s = "the quick brown fox jumps".split()
    long = [f"w{i % 7}" for i in range(40)]
    return [
        Case(args=(s, 1), expected=_pairs_ref(s, 1), label="window 1"),
        Case(args=(s, 2), expected=_pairs_ref(s, 2), label="window 2: up to 2 words on each side"),
        Case(args=(["alone"], 3), expected=[], label="a one-word sentence has no pairs"),
        Case(args=(s, 10), expected=_pairs_ref(s, 10), label="a window longer than the sentence"),
        Case(args=(long, 3), expected=_pairs_ref(long, 3), label="40 tokens, window 3"),
    ]


register(Exercise(
    id="ch03.skipgram_pairs",
    title="Skip-gram training pairs",
    prompt="""
        Skip-gram turns a sentence into (centre, context) pairs: every word is paired with each
        word at distance 1..window on either side (not with itself, and not past the ends).

        Write `skipgram_pairs(tokens, window)` returning the list of `(centre, context)` tuples,
        centres in sentence order and, for each centre, its contexts from left to right.
        Example: `skipgram_pairs(["a", "b", "c"], 1)` is
        `[("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")]`.
    """,
    cases=_pairs_cases,
    stub=skipgram_pairs,
    hint=(
        "For each centre position i, which positions j are its contexts? Mind both ends.",
        "Two loops: j from max(0, i - window) to min(len, i + window + 1), skipping j == i.",
    ),
))

# --------------------------------------------------------------------------- subsampling


def keep_probability(count: int, total: int, t: float) -> float:
    """The C code's probability of keeping one token of a word seen ``count`` times in ``total``."""
    # Your code here: f = count / total; keep = (sqrt(f / t) + 1) * t / f, at most 1.
    raise NotImplementedError("write keep_probability")


def _keep_ref(count, total, t):
    f = count / total
    return min(1.0, (math.sqrt(f / t) + 1) * t / f)


def _keep_cases() -> list[Case]:
    args = [(50_000, 1_000_000, 1e-3), (1_000, 1_000_000, 1e-3), (1, 1_000_000, 1e-3),
            (900, 1000, 0.01), (30, 1000, 0.01), (123_456, 3_000_000, 1e-5)]
    labels = ["a frequent word (5%)", "f equal to t: kept", "a rare word: always kept",
              "f = 0.9, t = 0.01", "f = 0.03, t = 0.01", "t = 1e-5, as in the paper's experiments"]
    return [Case(args=a, expected=_keep_ref(*a), label=lab) for a, lab in zip(args, labels)]


register(Exercise(
    id="ch03.keep_probability",
    title="Subsampling frequent words (the C code's rule)",
    prompt="""
        word2vec throws away tokens of frequent words before it forms windows. The paper says a
        token is *discarded* with probability 1 - sqrt(t / f), where f = count / total is the
        word's frequency; the C code (and gensim) instead *keeps* it with probability

            (sqrt(f / t) + 1) * t / f

        Write `keep_probability(count, total, t)` for the C code's rule. A probability cannot
        exceed 1: clip it.
    """,
    cases=_keep_cases,
    stub=keep_probability,
    hint=(
        "The rule is written in terms of the frequency f, not the count.",
        "f = count / total; then clip the formula with min(1.0, ...).",
    ),
))

# --------------------------------------------------------------------------- Huffman codes


def huffman_codes(counts: list[int]) -> list[str]:
    """Return one binary code ('0'/'1' string) per word, shorter for frequent words."""
    # Your code here: repeatedly merge the two lightest nodes (heapq helps); a word's code is
    # the sequence of branches from the root down to its leaf.
    raise NotImplementedError("write huffman_codes")


def _optimal_length(counts):
    """Total weighted code length of an optimal prefix code: the book's Huffman tree's (chapter 2)."""
    return sum(c * n for c, n in zip(counts, huffman_tree(counts).lengths.tolist()))


def _huffman_checker(counts):
    def check(codes):
        if not isinstance(codes, (list, tuple)) or len(codes) != len(counts):
            return False, f"expected a list of {len(counts)} code strings, got {codes!r}"
        if not all(isinstance(c, str) and c and set(c) <= {"0", "1"} for c in codes):
            return False, "every code must be a non-empty string of '0' and '1'"
        for i, a in enumerate(codes):
            for j, b in enumerate(codes):
                if i != j and b.startswith(a):
                    return False, f"not a prefix code: {a!r} (word {i}) starts {b!r} (word {j})"
        got = sum(c * len(code) for c, code in zip(counts, codes))
        best = _optimal_length(counts)
        if got > best + 1e-9:
            return False, f"a prefix code, but not an optimal one: sum(count * length) = {got:g}, Huffman gets {best:g}"
        return True

    return check


def _huffman_cases() -> list[Case]:
    sets = [([5, 3], "two words"), ([10, 6, 3, 1], "four words"), ([1, 1, 1, 1], "equal counts: all codes of length 2"),
            ([40, 25, 12, 9, 5, 3, 2, 1], "eight Zipf-like words"),
            ([int(1000 / r) for r in range(1, 60)], "59 words with Zipf counts")]
    return [Case(args=(c,), checker=_huffman_checker(c), label=lab) for c, lab in sets]


register(Exercise(
    id="ch03.huffman_codes",
    title="Build the Huffman codes",
    prompt="""
        The hierarchical softmax walks a binary tree from the root to the target word; word2vec
        uses a Huffman tree so that frequent words have short paths. Huffman's algorithm: start
        with one node per word weighted by its count; repeatedly remove the two lightest nodes
        and add a parent whose weight is their sum, until one node (the root) is left. A word's
        code is the string of branches ('0' for one child, '1' for the other) from the root to it.

        Write `huffman_codes(counts)` returning the list of code strings, one per word, in the
        order of `counts`. Ties may be broken any way: the checker accepts every optimal prefix
        code (no code is the start of another, and sum(count * len(code)) is minimal).
    """,
    cases=_huffman_cases,
    stub=huffman_codes,
    hint=(
        "heapq pops the lightest node; give each new parent an id and remember its children.",
        (
            "Keep (weight, tie_breaker, node) tuples in the heap; then walk down from the root, "
            "appending '0' for one child and '1' for the other."
        ),
    ),
))

# --------------------------------------------------------------------------- HS probability


def hs_probability(h: np.ndarray, node_vectors: np.ndarray, path: list[int], code: list[int]) -> float:
    """Return p(word | h) under the hierarchical softmax for a word with this path and code."""
    # Your code here: the product over j of sigma((2 * code[j] - 1) * node_vectors[path[j]] @ h)
    raise NotImplementedError("write hs_probability")


def _hs_ref(h, U, path, code):
    p = 1.0
    for n, c in zip(path, code):
        x = (2 * c - 1) * float(U[n] @ h)
        p *= 1.0 / (1.0 + math.exp(-x))
    return p


def _hs_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    h = rng.normal(size=4)
    U = rng.normal(size=(3, 4))
    cases = [
        Case(args=(h, U, [2], [1]), expected=_hs_ref(h, U, [2], [1]), label="a path of one node, code 1"),
        Case(args=(h, U, [2], [0]), expected=_hs_ref(h, U, [2], [0]), label="a path of one node, code 0"),
        Case(args=(h, U, [2, 0, 1], [1, 0, 0]), expected=_hs_ref(h, U, [2, 0, 1], [1, 0, 0]), label="three nodes"),
        Case(args=(np.zeros(4), U, [2, 1], [0, 1]), expected=0.25, label="h = 0: every branch is 1/2"),
    ]
    return cases


register(Exercise(
    id="ch03.hs_probability",
    title="A word's probability under the hierarchical softmax",
    prompt="""
        In the hierarchical softmax each internal node n of the tree has a vector u_n. At each
        node on the way to the word, the branch with code 1 is taken with probability
        sigma(u_n . h) and the branch with code 0 with sigma(-u_n . h), where sigma(x) = 1 / (1 + e^-x).
        So p(word | h) = prod_j sigma((2 code_j - 1) u_{path_j} . h).

        Write `hs_probability(h, node_vectors, path, code)`: `h` is a 1-D array, `node_vectors`
        a 2-D array (row n is u_n), `path` the node ids from the root, `code` the branches.
    """,
    cases=_hs_cases,
    stub=hs_probability,
    hint=(
        "One factor per node on the path; code 0 flips the sign of the score.",
        "sigma(x) = 1 / (1 + math.exp(-x)); multiply sigma((2 * c - 1) * u_n @ h) over the path.",
    ),
))

# --------------------------------------------------------------------------- NEG gradient


def neg_gradient(v: np.ndarray, u_pos: np.ndarray, u_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of L = -log sigma(u_pos.v) - sum_k log sigma(-u_neg[k].v) w.r.t. v, u_pos, u_neg."""
    # Your code here: use d/dx log sigma(x) = 1 - sigma(x) = sigma(-x).
    raise NotImplementedError("write neg_gradient")


def _neg_ref(v, u_pos, u_neg):
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    gp = sig(u_pos @ v) - 1.0  # dL/ds_pos
    gn = sig(u_neg @ v)  # dL/ds_k
    return gp * u_pos + gn @ u_neg, gp * v, gn[:, None] * v[None, :]


def _neg_loss(v, u_pos, u_neg) -> float:
    """L = -log sigma(u_pos.v) - sum_k log sigma(-u_neg[k].v), computed stably."""
    return float(np.logaddexp(0.0, -(u_pos @ v)) + np.logaddexp(0.0, u_neg @ v).sum())


def _neg_numeric(v, u_pos, u_neg):
    """The three gradients by central finite differences of the loss (no formula typed in)."""
    return (numeric_gradient(lambda x: _neg_loss(x, u_pos, u_neg), v),
            numeric_gradient(lambda x: _neg_loss(v, x, u_neg), u_pos),
            numeric_gradient(lambda x: _neg_loss(v, u_pos, x), u_neg))


def _neg_cases() -> list[Case]:
    rng = np.random.default_rng(7)
    out = []
    for k, d, lab in [(1, 3, "one noise word"), (5, 4, "five noise words"), (3, 10, "d = 10")]:
        v, up, un = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(k, d))
        out.append(Case(args=(v, up, un), expected=_neg_numeric(v, up, un), label=lab))
    d = 4
    z = np.zeros(d)
    un = rng.normal(size=(2, d))
    out.append(Case(args=(z, z, un), expected=_neg_numeric(z, z, un), label="word2vec's start: v and u_pos zero"))
    return out


register(Exercise(
    id="ch03.neg_gradient",
    title="The negative-sampling gradient for one pair",
    kind="derive",
    rtol=1e-5,
    atol=1e-7,
    prompt="""
        For one (input word, output word) pair with input vector v, the output word's vector
        u_pos and k noise words' vectors u_neg (a k x d array), negative sampling minimises

            L = -log sigma(u_pos . v) - sum_k log sigma(-u_neg[k] . v).

        Derive and write `neg_gradient(v, u_pos, u_neg)` returning the three gradients
        (dL/dv, dL/du_pos, dL/du_neg) as NumPy arrays of shapes (d,), (d,) and (k, d).
        (word2vec's update is minus the learning rate times these.)
    """,
    cases=_neg_cases,
    stub=neg_gradient,
    outputs=("dL/dv", "dL/du_pos", "dL/du_neg"),
    hint=(
        "Write each term as a function of one score s = u . v; d/dx log sigma(x) = sigma(-x).",
        (
            "dL/ds_pos = sigma(s_pos) - 1 and dL/ds_k = sigma(s_k); then the chain rule with "
            "ds/dv = u and ds/du = v."
        ),
    ),
))

# --------------------------------------------------------------------------- predict

register(Exercise(
    id="ch03.subsample_shrink",
    title="How much does subsampling shrink an epoch?",
    kind="predict",
    prompt="""
        With the C code's default t = 10^-3, subsampling keeps a token of a word with frequency
        f with probability min(1, (sqrt(f / t) + 1) t / f). Before you run the cell of section
        6: what share of the chapter corpus's tokens does one epoch keep (a number between 0 and
        1)? Think about which words are frequent enough to be touched at all.
    """,
    rtol=0.0,
    atol=0.05,
    unit=".0%",
    hint=(
        "Only words with f above roughly t are thinned. How many words have f > 0.001?",
        "A word with f = 0.05 (like 'the') keeps about (sqrt(50) + 1) / 50 of its tokens.",
    ),
    explanation="""
        Only a few dozen words are more frequent than t = 10^-3, but they carry about two
        fifths of the tokens, and the C code's rule keeps only a fraction of each: about a
        quarter of the tokens go. The paper's t = 10^-5 was meant for a corpus of billions of
        words.
    """,
))

# --------------------------------------------------------------------------- concept

register(Exercise(
    id="ch03.neg_rows",
    title="Which output vectors does one NEG step change?",
    kind="concept",
    prompt="""
        Skip-gram with negative sampling, k = 5 noise words, |V| = 20,000. One (input word,
        output word) pair is trained. How many rows of the output matrix U (one row u_w per
        word) receive a non-zero gradient from this pair, at most?
    """,
    choices={
        "a": "1: only the output word's row.",
        "b": "6: the output word's row and the 5 noise words' rows.",
        "c": "about log2 |V| = 14: the rows on the output word's Huffman path.",
        "d": "20,000: the normaliser of the softmax involves every word.",
    },
    answer="b",
    hint=(
        "Which vectors appear in the NEG loss of one pair? A row that is absent has zero gradient.",
    ),
    explanation="""
        (b). The NEG loss -log sigma(u_pos.v) - sum_k log sigma(-u_k.v) contains only k + 1
        output vectors (and the input vector v): no normaliser sums over the vocabulary, so
        every other row's gradient is exactly zero. (c) is the hierarchical softmax, (d) the
        full softmax. That is why a step costs O(k d), not O(|V| d).
    """,
))

# --------------------------------------------------------------------------- extend


def noise_share(counts: list[int], power: float, top: int) -> float:
    """Return the share of noise draws that fall on the `top` most frequent words when noise
    words are drawn with probability proportional to count ** power."""
    # Your code here: weight each count by count ** power, normalise, sum the `top` largest.
    raise NotImplementedError("write noise_share")


def _noise_share_checker(counts: list[int], top: int, power: float):
    def check(share):
        try:
            share = float(share)
        except (TypeError, ValueError):
            return False, "return one number, the share of noise draws"
        if not 0.0 <= share <= 1.0 + 1e-9:
            return False, f"a share lies between 0 and 1, got {share}"
        uniform = top / len(counts)
        if power == 0.0 and abs(share - uniform) > 1e-6:
            return False, f"power 0 draws every word alike: the share should be {uniform:.4f}"
        if power == 1.0:
            unigram = sum(sorted(counts, reverse=True)[:top]) / sum(counts)
            if abs(share - unigram) > 1e-6:
                return False, f"power 1 is the unigram distribution: the share should be {unigram:.4f}"
        return True

    return check


def _noise_share_cases() -> list[Case]:
    zipf = [int(100_000 / r) for r in range(1, 2001)]  # a Zipf-like vocabulary of 2,000 words
    return [
        Case(args=(zipf, p, 20), checker=_noise_share_checker(zipf, 20, p), label=f"power {p}")
        for p in (0.0, 0.5, 0.75, 1.0)
    ]


register(Exercise(
    id="ch03.noise_share",
    title="How much does the 3/4 power flatten the noise?",
    kind="extend",
    prompt="""
        word2vec draws negative samples from counts ** 0.75 (section 8), not from the counts
        themselves. Measure what that exponent does, then what it buys.

        1. Write `noise_share(counts, power, top)`: the share of noise draws that land on the
           `top` most frequent words (check() runs loose sanity checks: power 0 is uniform,
           power 1 the unigram distribution).
        2. On the chapter's corpus counts, plot the share of the 20 most frequent words
           against power from 0 to 1. How much of the noise do they take at 1, at 0.75?
        3. Train skip-gram with NEG at power 0, 0.75 and 1 (through
           `NegativeSampling(..., power=...)` or a small change to `make_model`) with two
           seeds each and compare the analogy and WordSim columns with their bootstrap
           intervals. Is the paper's choice better than the unigram at this scale, or
           inside the noise?
    """,
    cases=_noise_share_cases,
    stub=noise_share,
    hint=(
        "Raise every count to the power, divide by the sum, and add up the largest `top` values.",
        "sorted(weights, reverse=True)[:top] gives the largest weights; power 0 gives each word "
        "weight 1.",
    ),
))
