"""Chapter 2's exercises, of six kinds: predict the perplexity of a uniform model (predict),
the softmax gradient (derive), a numerically stable log-softmax with a planted bug (debug),
the NNLM's size, the tree's path probability, Huffman code lengths and the perplexity of a
mixture (implement), why the tree costs O(log |V|) (concept), and a three-model mixture (extend).
Notation as in book/notation.md: d word-vector size, d_h hidden units."""

from __future__ import annotations

import math

import numpy as np

from ..neural_lm.tree import huffman_tree
from .core import Case, Exercise, numeric_gradient, register

# ---------------------------------------------------------------- 1. counting parameters


def nnlm_parameter_count(vocab_size: int, n: int, dim: int, hidden: int, direct: bool) -> int:
    """Return the number of free parameters of Bengio's NNLM (full softmax), biases included;
    dim is the word-vector size d, hidden the number of hidden units d_h."""
    # Your code here: add up the sizes of C, H and b_h, U and b, and W (only if direct).
    raise NotImplementedError("write nnlm_parameter_count")


def _count_cases() -> list[Case]:
    def ref(V, n, d, d_h, direct):
        c = V * d  # C
        hid = d_h * (n - 1) * d + d_h  # H and b_h
        out = V * d_h + V  # U and b
        w = V * (n - 1) * d if direct else 0
        return c + hid + out + w

    cases = [
        ((16383, 5, 60, 50, True), "Bengio et al.'s MLP1 (|V| = 16,383, n = 5, d = 60, d_h = 50, direct)"),
        ((16383, 5, 30, 100, False), "MLP9-like: no direct connections"),
        ((10, 2, 3, 4, True), "a tiny bigram model"),
        ((10, 2, 3, 4, False), "the same without direct connections"),
        ((1000, 6, 1, 0, True), "no hidden layer at all (d_h = 0): only C, W and b"),
    ]
    return [Case(args=a, expected=ref(*a), label=label) for a, label in cases]


register(Exercise(
    id="ch02.nnlm_parameter_count",
    title="How many parameters does the NNLM have?",
    prompt="""
        Bengio et al.'s model has: word vectors C (|V| x d); a hidden layer H ((n-1)d inputs,
        d_h outputs) with bias b_h; hidden-to-output weights U (|V| x d_h) with output bias b;
        and, optionally, direct connections W from the concatenated word vectors to the output
        (|V| x (n-1)d).

        Write `nnlm_parameter_count(vocab_size, n, dim, hidden, direct)` (dim = d,
        hidden = d_h) returning the total number of parameters, biases included. Then use it:
        doubling n roughly doubles the count only when there are direct connections. Why?
    """,
    cases=_count_cases,
    stub=nnlm_parameter_count,
    hint=("Count block by block: C, then H and b_h, then U and b, then W.",
          "With direct connections the paper's total is |V|(1 + n d + d_h) + d_h(1 + (n-1) d)."),
    outputs=("number of parameters",),
))

# ---------------------------------------------------------------- 3. path probability in a tree


def path_probability(scores: list[float], codes: list[int]) -> float:
    """Return P(word | h) = prod_j sigma(+s_j) if codes[j] == 1 else sigma(-s_j),
    where scores[j] = u_v . h + beta_v is the score of the j-th node v on the word's path."""
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
        (([0.0], [1]), "one decision with score 0"),
        (([2.0], [1]), "one decision, branch 1"),
        (([2.0], [0]), "the same node, branch 0"),
        (([0.5, -1.0, 3.0], [1, 0, 1]), "a path of three decisions"),
        (([], []), "the empty path (a one-word vocabulary)"),
        (([-30.0, 30.0], [1, 0]), "very confident wrong turns"),
    ]
    return [Case(args=a, expected=ref(*a), label=label) for a, label in raw]


register(Exercise(
    id="ch02.path_probability",
    title="The hierarchical softmax: a word's probability is a path",
    prompt="""
        In a hierarchical softmax, each internal node v of a binary tree over the vocabulary has
        a vector u_v and a bias beta_v. To reach a word we take, at each node on its path,
        branch 1 with probability sigma(u_v . h + beta_v) and branch 0 with probability
        sigma(-(u_v . h + beta_v)) (sigma is the logistic function). P(word | h) is the product
        over the path.

        Write `path_probability(scores, codes)` where scores[j] = u_v . h + beta_v at the j-th
        node of the path and codes[j] is 0 or 1, the branch taken there.
    """,
    cases=_path_cases,
    stub=path_probability,
    hint=("Multiply one sigmoid per node; the sign of its argument depends on the branch.",
          "sigma(-z) = 1 - sigma(z): the two branches of a node always add up to 1, which is why "
          "the leaves' probabilities sum to 1 without a sum over the vocabulary."),
    outputs=("P(word | h)",),
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
        ([1, 1], "two words"),
        ([1, 1, 1, 1], "four equally frequent words"),
        ([5, 4, 3, 2, 1], "five words of different frequencies"),
        ([1000, 1, 1, 1], "one very frequent word"),
        (zipf, "200 words following Zipf's law"),
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
    hint=("You do not need the tree itself, only the cost of the merges.",
          "Each merge of weights a and b adds one decision to every token below it: the total "
          "cost is the sum of all merged weights (a + b), divided by the number of tokens."),
    outputs=("decisions per token",),
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
        (([0.1, 0.1], [0.1, 0.1], 0.5), "two identical models"),
        (([0.5, 0.01], [0.01, 0.5], 0.5), "each model is good where the other is bad"),
        (([0.5, 0.01], [0.01, 0.5], 1.0), "weight 1"),
        (([0.2, 0.3, 0.25], [0.0, 0.1, 0.2], 0.3), "model b gives a token probability 0"),
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
    hint=("Perplexity is exp of the mean negative log-probability of the mixed model.",
          "Mix the probabilities first, then take logs: averaging log-probabilities would be a "
          "product of the models, not a mixture."),
    outputs=("perplexity",),
))

# ---------------------------------------------------------------- 6. predict: a model that knows nothing

register(Exercise(
    id="ch02.uniform_perplexity",
    title="Predict: the perplexity of a model that knows nothing",
    kind="predict",
    prompt="""
        A "model" gives every one of the |V| symbols of chapter 2's Brown vocabulary the same
        probability, whatever the context. Before you run the next cell, write down its test
        perplexity (a number). The cell scores Brown's test split with it.
    """,
    hint=("What probability does the model give the token that actually came next?",
          "Every token gets 1/|V|. Take the mean of the logs, then exp of minus that."),
    explanation="Every token has probability 1/|V|, so the mean log-probability is -log |V| and "
                "the perplexity is exactly |V|. That is the ceiling any trained model must get "
                "far below: perplexity is the number of equally likely words the model is as "
                "unsure as.",
    rtol=0.05,
    unit=",.0f",
))

# ---------------------------------------------------------------- 7. derive: the softmax gradient


def softmax_gradient(y: np.ndarray, target: int) -> np.ndarray:
    """Return dL/dy for L = -log softmax(y)[target], where y is a 1-D array of |V| scores."""
    # Your code here: derive it on paper first (it is short), then write it with NumPy.
    raise NotImplementedError("write softmax_gradient")


def _neg_log_softmax(y: np.ndarray, target: int) -> float:
    z = y - y.max()
    return float(np.log(np.exp(z).sum()) - z[target])


def _gradient_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    raw = [
        (np.array([2.0, 1.0, 0.0, 0.0]), 0, "the chapter's first example: scores (2, 1, 0, 0), target 0"),
        (np.zeros(5), 3, "all scores equal (a uniform prediction)"),
        (rng.normal(size=7), 6, "7 random scores"),
        (rng.normal(scale=5.0, size=12), 2, "12 large random scores"),
    ]
    return [Case(args=(y, t), expected=numeric_gradient(lambda v: _neg_log_softmax(v, t), y),
                 label=label) for y, t, label in raw]


register(Exercise(
    id="ch02.softmax_gradient",
    title="Derive: the gradient of the cross-entropy through the softmax",
    kind="derive",
    prompt="""
        Section 1's loss for one token is L = -log softmax(y)_i, where y holds the scores of all
        |V| words and i is the word that came next. Derive dL/dy_j for every j (two cases:
        j = i and j != i), then write `softmax_gradient(y, target)` returning the whole vector.
        check() compares it with a finite-difference gradient of L.
    """,
    cases=_gradient_cases,
    stub=softmax_gradient,
    hint=("Write log softmax(y)_i = y_i - log sum_k exp(y_k) and differentiate each term.",
          "The derivative of log sum_k exp(y_k) with respect to y_j is softmax(y)_j."),
    outputs=("dL/dy",),
    rtol=1e-4,
    atol=1e-6,
))

# ---------------------------------------------------------------- 8. debug: a log-softmax that overflows


def stable_log_softmax(y: np.ndarray) -> np.ndarray:
    """Return log softmax(y) along the last axis, for scores of any size (no overflow)."""
    top = y.max(axis=-1, keepdims=True)  # subtract the largest score so exp cannot overflow
    return y - top - np.log(np.exp(y).sum(axis=-1, keepdims=True))


def _log_softmax_cases() -> list[Case]:
    def ref(y):
        z = y - y.max(axis=-1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

    raw = [
        (np.array([2.0, 1.0, 0.0, 0.0]), "small scores (2, 1, 0, 0)"),
        (np.zeros(4), "all scores zero"),
        (np.array([1000.0, 999.0, 0.0]), "large scores, as an untrained output layer can produce"),
        (np.array([[0.0, 3.0, 0.0, -1.0], [50.0, 50.0, 49.0, -20.0]]), "two rows at once"),
    ]
    return [Case(args=(y,), expected=ref(y), label=label) for y, label in raw]


register(Exercise(
    id="ch02.stable_log_softmax",
    title="Debug: a log-softmax that should never overflow",
    kind="debug",
    prompt="""
        The function below is meant to compute log softmax(y) the safe way, as the package's
        `log_softmax` does (section 1): subtract the largest score before exponentiating, so
        that exp never overflows. It is wrong even for small scores, and for large ones it
        returns -inf or nan. Find the bug and fix it.
    """,
    cases=_log_softmax_cases,
    stub=stable_log_softmax,
    hint=("Compare what is subtracted outside the log with what is exponentiated inside it.",
          "log sum_k exp(y_k) = top + log sum_k exp(y_k - top): the shift must happen inside "
          "the exponential too."),
    outputs=("log softmax(y)",),
))

# ---------------------------------------------------------------- 9. concept: why the tree is cheap

register(Exercise(
    id="ch02.tree_cost",
    title="Concept: why a tree makes a token cost O(log |V|)",
    kind="concept",
    prompt="""
        With a hierarchical softmax over a balanced binary tree, training on one token costs
        about log2 |V| dot products instead of |V|. Which statement explains why?
    """,
    choices={
        "a": "The tree has only log2 |V| internal nodes, so there are fewer parameters.",
        "b": "The tree groups similar words under shared nodes, so rare words can be skipped "
             "during training and the model only has to learn the frequent part of the "
             "vocabulary.",
        "c": "Only the ~log2 |V| nodes on the word's path are scored, and as each node's two "
             "branches share its probability, nothing sums over the vocabulary.",
        "d": "A sigmoid is cheaper to compute than an exponential.",
    },
    answer="c",
    hint=("How many internal nodes does a binary tree with |V| leaves have?",
          "What does the full softmax need all |V| scores for?"),
    explanation="The full softmax must compute all |V| scores because its denominator sums over "
                "them. In the tree, sigma(z) + sigma(-z) = 1 at every node, so the leaves' "
                "probabilities sum to one by construction, and a word's probability needs only "
                "the L(w) ~ log2 |V| nodes on its path. The tree still has |V| - 1 internal "
                "nodes (option a is false), and the speed has nothing to do with the cost of a "
                "sigmoid (d) or with skipping words (b).",
))

# ---------------------------------------------------------------- 10. extend: three models in one mixture


def mixture_weights(log_probs: list[np.ndarray], steps: int = 50) -> np.ndarray:
    """Return weights (non-negative, summing to 1) for mixing k models, tuned by EM to maximise
    the mean log-probability of the mixture on the tokens given (log_probs[j][t] is model j's
    natural-log probability of token t)."""
    # Your code here: generalise the chapter's two-model EM update to k models.
    raise NotImplementedError("write mixture_weights")


def _weights_checker(log_probs: list[np.ndarray]):
    def mean_log(w):
        return float(np.log(np.exp(np.stack(log_probs)).T @ np.asarray(w)).mean())

    def checker(w) -> tuple[bool, str]:
        w = np.asarray(w, dtype=float)
        if w.shape != (len(log_probs),):
            return False, f"expected {len(log_probs)} weights, got shape {w.shape}"
        if (w < -1e-9).any() or abs(w.sum() - 1) > 1e-6:
            return False, f"weights must be >= 0 and sum to 1, got {w.round(4).tolist()}"
        best_single = max(float(lp.mean()) for lp in log_probs)
        if mean_log(w) < best_single - 1e-6:
            return False, "the mixture's mean log-probability is below the best single model's"
        return True, ""

    return checker


def _weights_cases() -> list[Case]:
    rng = np.random.default_rng(5)
    a, b = np.log(rng.uniform(0.01, 0.5, 200)), np.log(rng.uniform(0.01, 0.5, 200))
    three = [a, b, np.log(0.5 * np.exp(a) + 0.5 * np.exp(b))]
    out = []
    for lps, label in (([a, b], "two random models"), (three, "three models, the third a blend")):
        out.append(Case(args=(lps,), checker=_weights_checker(lps), label=label))
    return out


register(Exercise(
    id="ch02.mixture_weights",
    title="Extend: mix three models (tree NNLM, LBL and trigram)",
    kind="extend",
    prompt="""
        Section 7 mixes one neural model with the trigram. Generalise the EM update to k models
        (`mixture_weights`), tune the weights of the tree NNLM, the LBL and the trigram on the
        validation tokens (`nn_logp[(name, "valid")]`, `kn_eval[(TRIGRAM, "valid")]`), and score
        the three-way mixture on the test tokens. Does the LBL add anything the NNLM does not
        already know? How large is the gain next to the bootstrap spread of section 7?
        check() runs a loose sanity check (weights that sum to one and a mixture no worse than
        the best single model on the tokens it was tuned on).
    """,
    cases=_weights_cases,
    stub=mixture_weights,
    hint=("The two-model update is lambda <- mean_t of lambda p_a / (lambda p_a + (1-lambda) p_b).",
          "For k models: w_j <- mean_t of w_j p_j(t) / sum_k w_k p_k(t), repeated until the "
          "weights stop moving."),
))
