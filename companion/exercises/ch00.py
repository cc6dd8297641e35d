"""Chapter 0's exercises: one of each kind, on the chapter's own material (Brown's counts,
Zipf's law, the type/token ratio), so that a reader meets every exercise mechanism once."""

from __future__ import annotations

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement


def type_token_ratio(tokens: list[str]) -> float:
    """Return the number of distinct tokens divided by the number of tokens (0.0 if there are none)."""
    # Your code here. A Python set keeps one copy of each distinct token.
    raise NotImplementedError("write type_token_ratio")


def _ttr_cases() -> list[Case]:
    long_text = [f"w{i % 37}" for i in range(1000)]
    return [
        Case(args=(["the", "cat", "sat", "on", "the", "mat"],), expected=5 / 6, label="a short sentence"),
        Case(args=(["a", "a", "a", "a"],), expected=0.25, label="one word repeated"),
        Case(args=(["The", "the"],), expected=1.0, label="tokens are compared exactly: 'The' is not 'the'"),
        Case(args=([],), expected=0.0, label="an empty list"),
        Case(args=(long_text,), expected=37 / 1000, label="1,000 tokens of 37 distinct words"),
        Case(args=(("x", "y", "x"),), expected=2 / 3, label="a tuple instead of a list"),
    ]


register(Exercise(
    id="ch00.type_token_ratio",
    title="Type/token ratio",
    kind="implement",
    prompt="""
        A *token* is one occurrence of a word in a text; a *type* is a distinct word. The
        type/token ratio (TTR) is the number of types divided by the number of tokens: 1.0 when no
        word repeats, close to 0 for a long, repetitive text.

        Write `type_token_ratio(tokens)` that takes a list (or any sequence) of tokens and returns
        the TTR as a float. Compare tokens exactly ('The' and 'the' are two types) and return 0.0
        for an empty list.
    """,
    cases=_ttr_cases,
    stub=type_token_ratio,
    outputs=("the type/token ratio",),
    hint=(
        "A Python set keeps one copy of each distinct element.",
        "len(set(tokens)) counts the types and len(tokens) the tokens; guard against dividing by zero.",
    ),
))

# --------------------------------------------------------------------------- debug


def coverage(counts: dict[str, int], k: int) -> float:
    """Return the share of all tokens that belong to the k most frequent types."""
    top = sorted(counts.values())[:k]
    return sum(top) / sum(counts.values())


def _coverage_cases() -> list[Case]:
    zipf = {f"w{r}": 1000 // r for r in range(1, 51)}
    total = sum(zipf.values())
    return [
        Case(args=({"the": 6, "cat": 3, "sat": 1}, 1), expected=0.6, label="the top type of three"),
        Case(args=({"the": 6, "cat": 3, "sat": 1}, 2), expected=0.9, label="the top two types of three"),
        Case(args=({"a": 2, "b": 2}, 5), expected=1.0, label="k larger than the number of types"),
        Case(args=(zipf, 10), expected=sum(1000 // r for r in range(1, 11)) / total,
             label="50 types with Zipf counts, k = 10"),
        Case(args=({"x": 1, "y": 5, "z": 4}, 1), expected=0.5, label="counts not in order"),
    ]


register(Exercise(
    id="ch00.coverage",
    title="How much text do the most frequent words cover?",
    kind="debug",
    prompt="""
        `coverage(counts, k)` should return the share of all tokens that belong to the k most
        frequent types; with it you can measure how much of Brown its 100 most frequent word
        forms cover. The version below runs, but its answers are wrong. Find the bug and fix it.
    """,
    cases=_coverage_cases,
    stub=coverage,
    outputs=("coverage",),
    hint=(
        "Try sorted([3, 1, 2]). Which end of the list holds the most frequent types?",
        "sorted() puts the smallest counts first: sort with reverse=True (or take the last k).",
    ),
))

# --------------------------------------------------------------------------- derive


def zipf_exponent(r1: float, f1: float, r2: float, f2: float) -> float:
    """Return Zipf's exponent s from two points (rank, frequency) of f(r) = C * r ** -s."""
    # Your code here: derive s on paper first (take logarithms of both sides).
    raise NotImplementedError("write zipf_exponent")


def _zipf_cases() -> list[Case]:
    out = []
    for s, c, r1, r2, label in [(1.0, 60_000, 1, 2, "s = 1, ranks 1 and 2"),
                                (1.0, 60_000, 10, 1000, "s = 1, ranks 10 and 1,000"),
                                (0.8, 500.0, 3, 7, "s = 0.8"), (1.25, 2.0e6, 100, 20, "s = 1.25, r2 < r1"),
                                (2.0, 1.0, 1, 10, "s = 2, C = 1")]:
        # the expected value is the exponent the points were generated with, not a formula
        out.append(Case(args=(r1, c * r1 ** -s, r2, c * r2 ** -s), expected=s, label=label))
    return out


register(Exercise(
    id="ch00.zipf_exponent",
    title="Zipf's exponent from two points",
    kind="derive",
    prompt="""
        Zipf's law says the word of rank r has frequency f(r) = C r^(-s). Derive, on paper, how
        log f depends on log r, and from that the exponent s given two points (r1, f1) and
        (r2, f2) of the curve. (Why is s the negative of the slope the chapter fits on log-log
        axes?) Then write `zipf_exponent(r1, f1, r2, f2)` returning s.
    """,
    cases=_zipf_cases,
    stub=zipf_exponent,
    outputs=("s",),
    rtol=1e-9,
    atol=1e-12,
    hint=(
        "Take the logarithm of both sides of f = C r^(-s). What shape is that in the (log r, log f) plane?",
        "log f = log C - s log r. Write it at r1 and at r2 and subtract: log C cancels.",
    ),
))

# --------------------------------------------------------------------------- predict

register(Exercise(
    id="ch00.hapax_share",
    title="How many words occur only once?",
    kind="predict",
    prompt="""
        A word that occurs exactly once in a corpus is a *hapax legomenon*. Before you run the
        cell that counts them: what share of Brown's distinct word forms (types) occur exactly
        once? Write your guess as a number between 0 and 1.
    """,
    rtol=0.0,
    atol=0.05,
    unit=".0%",
    hint=("Zipf's law: a handful of types are very frequent. How long is the tail of rare ones?",),
    explanation="""
        Zipf's law with an exponent near 1 puts close to half of a corpus's types in the tail of
        words seen once: every new text brings names, numbers, rare words and misprints. This is
        the sparsity every count-based model of chapter 1 has to cope with.
    """,
))

# --------------------------------------------------------------------------- concept

register(Exercise(
    id="ch00.ttr_sample_size",
    title="Why does the type/token ratio fall?",
    kind="concept",
    prompt="""
        The type/token ratio of Brown's first 10,000 tokens is several times the ratio of the
        whole corpus (compute both with your `type_token_ratio`). Which statement explains that
        best?
    """,
    choices={
        "a": "The first 10,000 tokens were lower-cased before counting.",
        "b": "Rare words are removed from the whole corpus before its types are counted.",
        "c": "Tokens grow in proportion to the text, but new types turn up more and more rarely.",
        "d": "The first files (press reportage) use a richer vocabulary than the rest of Brown.",
    },
    answer="c",
    hint=("Read another 10,000 tokens. How many tokens did you add? How many new types, roughly?",),
    explanation="""
        (c). The number of types grows more slowly than the number of tokens (Heaps' law,
        V(n) ~ K n^beta with beta < 1), so V(n) / n falls as a text gets longer, whatever its
        genre. Type/token ratios of texts can only be compared at the same length.
    """,
))

# --------------------------------------------------------------------------- extend


def heaps_curve(tokens: list[str], every: int) -> list[tuple[int, int]]:
    """Return (n, number of types in the first n tokens) for n = every, 2 * every, ..., len(tokens)."""
    # Your code here: one pass over the tokens with a set of the types seen so far.
    raise NotImplementedError("write heaps_curve")


def _heaps_checker(tokens: list[str], every: int):
    def check(curve):
        try:
            pairs = [(int(n), int(v)) for n, v in curve]
        except (TypeError, ValueError):
            return False, "return a list of (n, types) pairs"
        if not pairs:
            return False, "the curve is empty"
        ns, vs = [n for n, _ in pairs], [v for _, v in pairs]
        if any(b <= a for a, b in zip(ns, ns[1:])):
            return False, "n must increase along the curve"
        if any(b < a for a, b in zip(vs, vs[1:])):
            return False, "the number of types seen can never go down"
        if any(v > n or v < 1 for n, v in pairs):
            return False, "after n tokens there are between 1 and n types"
        if pairs[-1] != (len(tokens), len(set(tokens))):
            return False, f"the last point should be (len(tokens), types) = ({len(tokens)}, {len(set(tokens))})"
        if len(pairs) < len(tokens) // every:
            return False, f"expected a point every {every} tokens"
        return True

    return check


def _heaps_cases() -> list[Case]:
    text = [f"w{(i * i) % 101}" for i in range(1000)]
    sets = [(["a", "b", "a", "c"], 2, "four tokens"), (text, 100, "1,000 tokens"), (text, 7, "a step that does not divide")]
    return [Case(args=(t, e), checker=_heaps_checker(t, e), label=lab) for t, e, lab in sets]


register(Exercise(
    id="ch00.heaps_curve",
    title="Heaps' law: how the vocabulary grows",
    kind="extend",
    prompt="""
        The concept question above has a law behind it: the number of types V(n) in the first n
        tokens of a text grows roughly as K n^beta with beta < 1 (Heaps' law). Measure it.

        1. Write `heaps_curve(tokens, every)` returning the pairs (n, V(n)) for n = every,
           2 every, ... and the end of the text (check() runs a loose sanity check on it).
        2. Plot the curve for Brown on log-log axes and fit beta (np.polyfit on the logs).
        3. Does beta differ between genres (`brown.words(genre="a")`, ...)? Between word forms
           as printed and lower-cased words?
    """,
    cases=_heaps_cases,
    stub=heaps_curve,
    hint=("Keep a set of the types seen so far; record (n, len(seen)) every `every` tokens, and at the end.",),
))

