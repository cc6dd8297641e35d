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
    hint=(
        "What is f at x = x_max? And at 10 x_max? The formula alone would keep growing.",
        "Compute (x / x_max) ** alpha, then cap the result at 1.",
    ),
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
    hint=(
        "Count each pair once, from its right-hand word: look only to the left (d = 1..window).",
        "Every pair you find adds 1/d twice: to (word, context) and to (context, word).",
    ),
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
    hint=(
        "Compute the bracket first: the dot product, plus both biases, minus the log of the count.",
        "Square the bracket and multiply it by f(x) from the first exercise (x_max and alpha passed on).",
    ),
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
    hint=(
        "Wrap the word first; '<on>' has 4 characters, so its 3-grams are '<on' and 'on>'.",
        "Two loops: the start position outside, the length n (minn..maxn) inside; keep a slice only if it fits.",
    ),
))

# --------------------------------------------------------------------------- fastText's hash


def fnv1a_32(text: str) -> int:
    """Return fastText's 32-bit FNV-1a hash of the UTF-8 bytes of ``text``."""
    h = 2166136261
    for c in text.encode("utf-8"):
        h ^= c
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def _fnv_cases() -> list[Case]:
    from ..static.subwords import fnv1a_32 as ref

    words = ["", "a", "foobar", "<wh", "where>", "naïve", "東京"]
    labels = ["the empty string: the offset basis", "one letter", "a published test vector", "an n-gram",
              "another n-gram", "non-ASCII: the signed-char quirk", "three bytes per character"]
    return [Case(args=(w,), expected=ref(w), label=lab) for w, lab in zip(words, labels)]


register(Exercise(
    id="ch04.fnv1a_32",
    title="fastText's FNV-1a hash (with its quirk)",
    kind="debug",
    prompt="""
        fastText stores n-gram vectors in a fixed number of buckets: bucket = hash(n-gram) % buckets,
        with the 32-bit FNV-1a hash of the n-gram's UTF-8 bytes:

            h = 2166136261
            for each byte c:  h = (h XOR c) * 16777619   (keep the low 32 bits)

        The function below is that textbook FNV-1a, and it agrees with fastText on every English
        n-gram. But fastText's released models put some n-grams of *naïve* or *東京* in other
        buckets than this function does. Section 3.2 says why; find the difference and fix it.
    """,
    cases=_fnv_cases,
    stub=fnv1a_32,
    outputs=("hash",),
    hint=(
        "Which checks fail? What do their strings have that the passing ones lack?",
        "fastText's C++ code reads each byte as a signed char: a byte c >= 128 becomes c - 256, "
        "which is c | 0xFFFFFF00 in 32 bits.",
    ),
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
    hint=(
        "Write cos(u, v) first (np.dot and np.linalg.norm).",
        "Average cos(w, a) over the vectors of A, the same over B, and subtract.",
    ),
))

# --------------------------------------------------------------------------- buckets: derive


def shared_bucket_share(n_ngrams: int, buckets: int) -> float:
    """Return the chance that one given n-gram shares its bucket with at least one other of the
    ``n_ngrams`` n-grams, when every n-gram lands in one of ``buckets`` buckets at random."""
    # Your code here: derive it on paper first. When does a given n-gram have its bucket alone?
    raise NotImplementedError("write shared_bucket_share")


def _enumerated_share(n: int, b: int) -> float:
    """The share by brute force: every one of the b**n assignments, n-gram 0's bucket shared?"""
    from itertools import product

    hits = sum(any(a[0] == x for x in a[1:]) for a in product(range(b), repeat=n))
    return hits / b**n


def _bucket_cases() -> list[Case]:
    small = [(1, 3, "one n-gram: nothing to share with"), (2, 2, "two n-grams, two buckets"),
             (3, 2, "three n-grams, two buckets"), (4, 3, "four n-grams, three buckets"),
             (5, 7, "five n-grams, seven buckets")]
    out = [Case(args=(n, b), expected=_enumerated_share(n, b), label=lab) for n, b, lab in small]
    # large sizes cannot be enumerated: the expected value is the mean of a seeded simulation,
    # compared loosely (rtol below covers its sampling error)
    rng = np.random.default_rng(0)
    n, b = 2_000, 10_000
    sims = []
    for _ in range(200):
        a = rng.integers(0, b, size=n)
        sims.append(float(np.mean(np.bincount(a, minlength=b)[a] > 1)))
    out.append(Case(args=(n, b), expected=float(np.mean(sims)), label="2,000 n-grams, 10,000 buckets"))
    return out


register(Exercise(
    id="ch04.shared_bucket_share",
    title="How often do two n-grams share a bucket?",
    kind="derive",
    prompt="""
        Suppose N distinct n-grams are hashed into B buckets, each independently and uniformly
        at random. Derive the probability that one given n-gram shares its bucket with at least
        one of the other N - 1. Then write `shared_bucket_share(n_ngrams, buckets)`; section
        3.2's table compares your formula with fastText's real hash on our vocabulary.
    """,
    cases=_bucket_cases,
    stub=shared_bucket_share,
    outputs=("share",),
    rtol=0.01,
    atol=1e-9,
    hint=(
        "Compute the opposite: the chance that the given n-gram is alone in its bucket.",
        "Each of the other N - 1 n-grams misses that bucket with probability 1 - 1/B, independently.",
    ),
))

# --------------------------------------------------------------------------- predict and concept

register(Exercise(
    id="ch04.syntactic_gap",
    title="Do subwords help the syntactic analogies?",
    kind="predict",
    prompt="""
        Section 4 trains skip-gram and fastText on the same tokens for the same number of
        passes and scores both on the Google analogies. Before you run it: by how much will
        fastText's accuracy on the *syntactic* questions (walk : walking, great : greatest)
        exceed skip-gram's? Give a difference of shares, e.g. 0.05 for five points (negative if
        you expect skip-gram ahead).
    """,
    rtol=0.0,
    atol=0.10,
    unit="+.1%",
    hint=("Most syntactic questions change a word's ending. Which model sees endings?",),
    explanation="""
        On three million tokens, word-level vectors are barely trained for analogies, while
        fastText's n-gram vectors are shared by every word with the same ending: each -ing word
        teaches the vector of 'ing>' for all of them. The paper, on far more text, measured a
        gap of about five points; on a small corpus the gap is far larger.
    """,
))

register(Exercise(
    id="ch04.zero_counts",
    title="Why only the non-zero counts?",
    kind="concept",
    prompt="""
        GloVe's loss sums over the pairs with X_ij > 0 only: a small share of the |V|^2 cells
        (section 2.1 measures it). Which statement explains best why the empty cells can be
        left out?
    """,
    choices={
        "a": "f(0) = 0: the weighting function makes an empty cell's term, f(0) times a term with "
             "log 0, vanish by definition.",
        "b": "X is symmetric, so half of the cells are redundant.",
        "c": "AdaGrad cannot update the rows of words that have a zero count: their accumulated "
             "squared gradient stays 0, and the step would divide by it.",
        "d": "The empty cells are handled separately, by negative sampling as in word2vec: a few "
             "of them are drawn at random for every non-empty cell.",
    },
    answer="a",
    hint=("What is log X_ij when X_ij = 0? And what is f(0)?",),
    explanation="""
        (a). log 0 is undefined, so the model could not fit an empty cell anyway; f(0) = 0 drops
        those terms by definition. GloVe has no negatives at all: what pushes unrelated words
        apart is only that their small counts ask for small (log) values.
    """,
))

register(Exercise(
    id="ch04.shortcut_share",
    title="Analogies without the exclusion",
    kind="predict",
    prompt="""
        3CosAdd answers a : b :: c : ? with the word nearest to b - a + c, excluding a, b and c.
        Drop the exclusion. For section 4's skip-gram vectors, on what share of the analogy
        questions will the nearest word be c itself? Write a share between 0 and 1.
    """,
    rtol=0.0,
    atol=0.15,
    unit=".0%",
    hint=("Compare the length of the offset b - a with the length of c.",),
    explanation="""
        The offset b - a is short next to the word vectors, so b - a + c stays near c, and c is
        its own nearest neighbour. The published accuracies measure the nearest word other than
        the inputs.
    """,
))

register(Exercise(
    id="ch04.related_or_similar",
    title="Related or similar?",
    kind="concept",
    prompt="""
        WordSim-353 asked people how *related* two words are, SimLex-999 how *similar* they are.
        Both rated the four pairs below (out of 10). For which pair is WordSim-353's score
        furthest above SimLex-999's?
    """,
    choices={"a": "coast - shore", "b": "professor - student", "c": "aluminum - metal",
             "d": "psychology - science"},
    answer="b",
    hint=("Which pair are words that go together without meaning the same thing?",),
    explanation="""
        (b). A professor and a student occur together all the time (related: 6.81 in
        WordSim-353) but are not the same kind of person (similar: 1.95 in SimLex-999). Coast
        and shore are both related and similar, so both benchmarks rate them high.
    """,
))

# --------------------------------------------------------------------------- extend


def weat_flowers_insects(spaces: dict) -> object:
    """Return, for each named (vectors, index), the flowers/insects WEAT test's effect size,
    p-value and how many of its words were found."""
    # Your code here: companion.evaluate.bias has WEAT_TESTS and weat.
    raise NotImplementedError("write weat_flowers_insects")


register(Exercise(
    id="ch04.weat_flowers_insects",
    title="The flowers/insects test, and words the corpus lacks",
    kind="extend",
    prompt="""
        Caliskan et al.'s first test (flowers vs insects, pleasant vs unpleasant words) is a
        sanity check: people and 840-billion-token vectors agree on it (effect size 1.50).
        1. Run it (`WEAT_TESTS["flowers-insects / pleasant-unpleasant"]`) on the chapter's
           skip-gram, GloVe and fastText vectors. How many of its words does our vocabulary lack?
        2. fastText can give the missing words vectors (`ft.with_oov(words)`). Does the effect
           size change? Should one trust a vector built from the n-grams of *aphid*?
        3. Repeat with the GloVe 6B vectors (`load_glove_6b_50d`). What does the corpus buy?
    """,
    stub=weat_flowers_insects,
    hint=("weat(vectors, index, X, Y, A, B, n_permutations=10_000, seed=0) returns effect_size, "
          "p_value and sizes.",),
))

# --------------------------------------------------------------------------- 4b: evaluation


def spearman_rho(x, y):
    """Spearman's rank correlation of two equally long sequences, ties given average ranks."""
    # Your code here: rank each sequence (ties share the mean of their positions), then the
    # Pearson correlation of the two rank vectors.
    raise NotImplementedError("write spearman_rho")


def _spearman_cases() -> list[Case]:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(4)
    out = []
    x = rng.normal(size=12)
    data = [
        ([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0], "the same order"),
        ([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], "the reverse order"),
        ([1.0, 2.0, 2.0, 3.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0], "a tie in x"),
        ([0.5, 0.5, 0.5, 2.0, 3.0, 3.0], [1.0, 3.0, 2.0, 6.0, 5.0, 4.0], "a triple and a pair tied"),
        (list(x), list(x ** 3 + 0.5 * rng.normal(size=12)), "12 noisy pairs"),
    ]
    for a, b, label in data:
        out.append(Case(args=(a, b), expected=float(spearmanr(a, b).statistic), label=label,
                        outputs=("rho",)))
    return out


register(Exercise(
    id="ch04.spearman_rho",
    title="Spearman's rho, with ties",
    prompt="""
        Every similarity benchmark in this chapter scores a model by Spearman's rho between the
        human ratings and the model's cosines: the Pearson correlation of their *ranks*. Human
        ratings have many ties (WordSim-353 has several pairs at 7.5); tied values get the
        average of the positions they occupy (ranks 2 and 3 tied: both get 2.5).

        Write `spearman_rho(x, y)` with NumPy only.
    """,
    cases=_spearman_cases,
    stub=spearman_rho,
    rtol=1e-9,
    atol=1e-12,
    hint=(("np.argsort(np.argsort(x)) gives ranks 0..n-1 without ties; group equal values and "
           "give each group its mean rank."),
          "Then centre both rank vectors and take u . v / sqrt(u . u * v . v)."),
))


def analogy_3cosadd(vectors, words, a, b, c):
    """3CosAdd: the word nearest by cosine to b - a + c, excluding a, b and c."""
    v = np.asarray(vectors, dtype=float)
    idx = {w: i for i, w in enumerate(words)}
    target = v[idx[b]] - v[idx[a]] + v[idx[c]]
    scores = v @ target / (np.linalg.norm(v, axis=1) * np.linalg.norm(target))
    for w in (a, b, c):
        scores[idx[w]] = -np.inf
    return words[int(np.argmax(scores))]


def _analogy_cases() -> list[Case]:
    """Spaces whose word lengths differ a lot, so that where the arithmetic is done matters."""
    out = []
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(30)]
    while len(out) < 4:
        v = rng.normal(size=(30, 5)) * rng.lognormal(0.0, 1.5, size=(30, 1))
        unit = v / np.linalg.norm(v, axis=1, keepdims=True)
        a, b, c = (words[i] for i in rng.choice(30, 3, replace=False))
        target = unit[words.index(b)] - unit[words.index(a)] + unit[words.index(c)]
        scores = unit @ target / np.linalg.norm(target)
        for w in (a, b, c):
            scores[words.index(w)] = -np.inf
        expected = words[int(np.argmax(scores))]
        if expected != analogy_3cosadd(v, words, a, b, c):  # keep the questions the bug gets wrong
            out.append(Case(args=(v, words, a, b, c), expected=expected,
                            label=f"{a} : {b} :: {c} : ? in a 30-word space", outputs=("the answer",)))
    v = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 0.2], [0.3, 2.0], [-1.0, 1.0]])
    out.append(Case(args=(v, ["man", "woman", "king", "queen", "x"], "man", "woman", "king"),
                    expected="queen", label="man : woman :: king : ?", outputs=("the answer",)))
    return out


register(Exercise(
    id="ch04.analogy_3cosadd",
    kind="debug",
    title="3CosAdd that listens to frequency",
    prompt="""
        Section 3's analogies use 3CosAdd (Mikolov et al. 2013; Levy & Goldberg 2014): the
        answer to a : b :: c : ? is the word w, other than a, b and c, that maximises

            cos(w, b) - cos(w, a) + cos(w, c)

        which equals cos(w, b* - a* + c*) up to a constant, where x* is x / |x|. The function
        below has one bug. On word vectors whose lengths grow with frequency it prefers the
        directions of the long vectors. Find it and fix it.
    """,
    cases=_analogy_cases,
    stub=analogy_3cosadd,
    hint=("Expand cos(w, b) - cos(w, a) + cos(w, c): which vectors are divided by their length?",
          "The offset must be built from unit vectors, before the sum."),
))

register(Exercise(
    id="ch04.rare_neighbours",
    title="Why fastText's neighbours ignore frequency",
    kind="concept",
    prompt="""
        Section 4 found that a word-level model's nearest neighbours have about the frequency of
        the query word (rare words near rare words), while fastText's much less so. Which
        explanation fits best?
    """,
    choices={
        "a": "fastText drops the rarest words from its vocabulary, so no rare neighbours remain.",
        "b": "fastText normalises every vector to unit length during training.",
        "c": "fastText's hierarchical softmax gives frequent and rare words the same number of "
             "updates, so a rare word's vector is trained as long as a frequent word's and no "
             "longer sits among the other rare words.",
        "d": "A rarely updated word-level vector stays near its random start; fastText builds "
             "every word from n-gram vectors shared with many words, so a rare word is made of "
             "well-trained parts.",
    },
    answer="d",
    hint=("Where does the vector of a word seen 5 times come from in each model?",),
    explanation="""
        (d). A word seen a handful of times receives a handful of updates, so its word-level
        vector keeps much of its random start and sits with the other barely-trained rare
        words. fastText sums n-gram vectors that were trained on every word containing them,
        so frequency leaves less of a mark. (The book's fastText, like skip-gram, uses
        negative sampling and the same minimum count.)
    """,
))
