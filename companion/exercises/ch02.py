"""Chapter 2's exercises: the NNLM's size, its direct connections, the tree's path
probability, Huffman code lengths, and the NNLM + trigram mixture."""

from __future__ import annotations

import math

import numpy as np

from ..neural_lm.tree import huffman_tree
from .core import Case, Exercise, register

# ---------------------------------------------------------------- 1. counting parameters


def nnlm_parameter_count(vocab_size: int, n: int, m: int, h: int, direct: bool) -> int:
    """Return the number of free parameters of Bengio's NNLM (full softmax), biases included."""
    # Your code here: add up the sizes of C, H and d, U, b, and W (only if direct).
    raise NotImplementedError("write nnlm_parameter_count")


def _count_cases() -> list[Case]:
    def ref(V, n, m, h, direct):
        c = V * m  # C
        hid = h * (n - 1) * m + h  # H and d
        out = V * h + V  # U and b
        w = V * (n - 1) * m if direct else 0
        return c + hid + out + w

    cases = [
        ((16383, 5, 60, 50, True), "Bengio et al.'s MLP1 on their Brown (|V| = 16,383, n = 5, m = 60, h = 50, direct)"),
        ((16383, 5, 30, 100, False), "MLP9-like: no direct connections"),
        ((10, 2, 3, 4, True), "a tiny bigram model"),
        ((10, 2, 3, 4, False), "the same without direct connections"),
        ((1000, 6, 1, 0, True), "no hidden layer at all (h = 0): only C, W and b"),
    ]
    return [Case(args=a, expected=ref(*a), label=label) for a, label in cases]


register(Exercise(
    id="ch02.nnlm_parameter_count",
    title="How many parameters does the NNLM have?",
    prompt="""
        Bengio et al.'s model has: word vectors C (|V| x m); a hidden layer H ((n-1)m inputs,
        h outputs) with bias d; hidden-to-output weights U (|V| x h) with output bias b; and,
        optionally, direct connections W from the concatenated word vectors to the output
        (|V| x (n-1)m).

        Write `nnlm_parameter_count(vocab_size, n, m, h, direct)` returning the total number of
        parameters, biases included. (Check: it grows linearly in |V| and in n.)
    """,
    cases=_count_cases,
    stub=nnlm_parameter_count,
    hint="With direct connections the paper's total is |V|(1 + n m + h) + h(1 + (n-1) m).",
))

# ---------------------------------------------------------------- 2. the direct connections


def nnlm_logits(x: np.ndarray, H: np.ndarray, d: np.ndarray, U: np.ndarray, b: np.ndarray, W: np.ndarray | None) -> np.ndarray:
    """Return the NNLM's output scores y = b + W x + U tanh(d + H x) for a batch of rows x.

    Shapes: x [N, (n-1)m], H [h, (n-1)m], d [h], U [V, h], b [V], W [V, (n-1)m] or None
    (None: no direct connections). Return [N, V].
    """
    # Your code here (NumPy is enough).
    raise NotImplementedError("write nnlm_logits")


def _logit_cases() -> list[Case]:
    rng = np.random.default_rng(2)
    out = []
    for N, k, h, V, direct in [(1, 4, 3, 5, True), (6, 9, 2, 7, True), (6, 9, 2, 7, False), (3, 2, 5, 1, True)]:
        x = rng.normal(size=(N, k))
        H, d = rng.normal(size=(h, k)), rng.normal(size=h)
        U, b = rng.normal(size=(V, h)), rng.normal(size=V)
        W = rng.normal(size=(V, k)) if direct else None
        y = b + np.tanh(x @ H.T + d) @ U.T + (x @ W.T if direct else 0.0)
        label = f"N={N} rows, |V|={V}, " + ("with" if direct else "without") + " direct connections"
        out.append(Case(args=(x, H, d, U, b, W), expected=y, label=label))
    return out


register(Exercise(
    id="ch02.nnlm_logits",
    title="The NNLM's output layer, direct connections included",
    prompt="""
        The NNLM scores every word i of the vocabulary with y = b + W x + U tanh(d + H x), where
        x is the concatenation of the context's word vectors. W x is the *direct connection*:
        a linear path from the word vectors to the output that skips the hidden layer.

        Write `nnlm_logits(x, H, d, U, b, W)` for a batch of rows x ([N, (n-1)m]) returning the
        [N, |V|] scores. When W is None, leave the direct term out.
    """,
    cases=_logit_cases,
    stub=nnlm_logits,
    hint="Rows are examples, so H x becomes x @ H.T; the biases broadcast over the rows.",
))

# ---------------------------------------------------------------- 3. path probability in a tree


def path_probability(scores: list[float], codes: list[int]) -> float:
    """Return P(word | h) = prod_j sigma(+s_j) if codes[j] == 1 else sigma(-s_j),
    where scores[j] = u_{n_j} . h is the score of the j-th node on the word's path."""
    # Your code here.
    raise NotImplementedError("write path_probability")


def _path_cases() -> list[Case]:
    sig = lambda z: 1.0 / (1.0 + math.exp(-z))

    def ref(s, c):
        p = 1.0
        for z, b in zip(s, c):
            p *= sig(z) if b == 1 else sig(-z)
        return p

    raw = [
        (([0.0], [1]), "one decision with score 0: a coin flip"),
        (([2.0], [1]), "one decision, branch 1"),
        (([2.0], [0]), "the same node, branch 0: the two must sum to 1"),
        (([0.5, -1.0, 3.0], [1, 0, 1]), "a path of three decisions"),
        (([], []), "the empty path (a one-word vocabulary): probability 1"),
        (([-30.0, 30.0], [1, 0]), "very confident wrong turns: a tiny probability, not an error"),
    ]
    return [Case(args=a, expected=ref(*a), label=label) for a, label in raw]


register(Exercise(
    id="ch02.path_probability",
    title="The hierarchical softmax: a word's probability is a path",
    prompt="""
        In a hierarchical softmax, each internal node n of a binary tree over the vocabulary has
        a vector u_n. To reach a word we take, at each node on its path, branch 1 with
        probability sigma(u_n . h) and branch 0 with probability sigma(-u_n . h) (sigma is the
        logistic function). P(word | h) is the product over the path.

        Write `path_probability(scores, codes)` where scores[j] = u_n . h at the j-th node of the
        path and codes[j] is 0 or 1, the branch taken there.
    """,
    cases=_path_cases,
    stub=path_probability,
    hint="sigma(-z) = 1 - sigma(z): the two branches of a node always add up to 1, which is why "
         "the leaves' probabilities sum to 1 without a sum over the vocabulary.",
    rtol=1e-9,
    atol=1e-300,
))

# ---------------------------------------------------------------- 4. Huffman code lengths


def huffman_average_length(counts: list[int]) -> float:
    """Return the average number of tree decisions per token, sum_w count_w * depth_w / sum_w count_w,
    for the Huffman tree built from these word counts (at least two words)."""
    # Your code here: repeatedly merge the two lightest nodes (heapq helps).
    raise NotImplementedError("write huffman_average_length")


def _huffman_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    zipf = [int(10000 / r) for r in range(1, 201)]
    raw = [
        ([1, 1], "two words: one decision each"),
        ([1, 1, 1, 1], "four equally frequent words: a balanced tree, 2 decisions"),
        ([5, 4, 3, 2, 1], "five words of different frequencies"),
        ([1000, 1, 1, 1], "one very frequent word gets a one-decision code"),
        (zipf, "200 words following Zipf's law (compare with log2(200) = 7.6)"),
        (rng.integers(1, 100, size=30).tolist(), "30 random counts"),
    ]
    # the expected values come from the book's own Huffman tree (chapter 2's hierarchical softmax)
    return [Case(args=(c,), expected=huffman_tree(c).expected_length(c), label=label) for c, label in raw]


register(Exercise(
    id="ch02.huffman_average_length",
    title="Why a Huffman tree: frequent words, short paths",
    prompt="""
        The cost of a hierarchical softmax is the length of the word's path. A Huffman tree
        (built by repeatedly merging the two least frequent nodes into a new node whose count is
        their sum) minimises the average path length over the tokens of the corpus.

        Write `huffman_average_length(counts)`: the expected number of decisions per token,
        sum_w count_w * depth_w / sum_w count_w, for the Huffman tree of these counts.
    """,
    cases=_huffman_cases,
    stub=huffman_average_length,
    hint="Each merge of weights a and b adds one decision to every token below it: the total "
         "cost is the sum of all merged weights (a + b), divided by the number of tokens.",
))

# ---------------------------------------------------------------- 5. mixing two models


def mixture_perplexity(p_a: list[float], p_b: list[float], weight: float) -> float:
    """Return the perplexity of the mixture weight * p_a + (1 - weight) * p_b, given the
    probability each model gave to every token of a text."""
    # Your code here.
    raise NotImplementedError("write mixture_perplexity")


def _mixture_cases() -> list[Case]:
    def ref(a, b, w):
        return math.exp(-np.mean([math.log(w * x + (1 - w) * y) for x, y in zip(a, b)]))

    rng = np.random.default_rng(1)
    pa, pb = rng.uniform(0.001, 0.3, 50).tolist(), rng.uniform(0.001, 0.3, 50).tolist()
    raw = [
        (([0.1, 0.1], [0.1, 0.1], 0.5), "two identical models: perplexity 10"),
        (([0.5, 0.01], [0.01, 0.5], 0.5), "each model is good where the other is bad"),
        (([0.5, 0.01], [0.01, 0.5], 1.0), "weight 1: model a alone"),
        (([0.2, 0.3, 0.25], [0.0, 0.1, 0.2], 0.3), "model b gives a token probability 0; the mixture does not"),
        ((pa, pb, 0.7), "50 random tokens"),
    ]
    return [Case(args=a, expected=ref(*a), label=label) for a, label in raw]


register(Exercise(
    id="ch02.mixture_perplexity",
    title="NNLM + trigram: the perplexity of a mixture",
    prompt="""
        Bengio et al. obtained their best result by averaging the NNLM's probabilities with a
        trigram model's: p = w p_a + (1 - w) p_b for every token. The perplexity of a text of N
        tokens is exp(-(1/N) sum_t log p_t).

        Write `mixture_perplexity(p_a, p_b, weight)` where p_a[t] and p_b[t] are the
        probabilities the two models gave to token t.
    """,
    cases=_mixture_cases,
    stub=mixture_perplexity,
    hint="Mix the probabilities first, then take logs: averaging log-probabilities would be a "
         "product of the models, not a mixture.",
))
