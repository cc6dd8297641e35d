"""Chapter 11's exercises: control tasks, the structural probe's tree metric, UUAS, K-BERT's
visible matrix, and what a probe's accuracy does and does not say."""

from __future__ import annotations

from collections import Counter

import numpy as np

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: control task


def control_task(train_tags: list[list[str]], train_words: list[list[str]], seed: int = 0) -> dict[str, str]:
    """Return Hewitt & Liang's control task: a dict word type -> label, each type's label drawn
    once from the empirical distribution of the training tags."""
    # Your code here
    raise NotImplementedError("write control_task")


def _control_checker(tags, words, share_a):
    def check(result):
        if not isinstance(result, dict):
            return False, f"expected a dict word -> label, got {type(result).__name__}"
        types = {w for s in words for w in s}
        if set(result) != types:
            return False, f"the dict should have one entry per word type ({len(types)}), has {len(result)}"
        if not set(result.values()) <= {t for s in tags for t in s}:
            return False, "some labels are not labels of the task"
        got = Counter(result.values())["A"] / len(result)
        if abs(got - share_a) > 0.04:
            return False, f"share of types labelled 'A' = {got:.3f}; the tags are {share_a:.0%} 'A'"
        return True

    return check


def _control_cases() -> list[Case]:
    words = [[f"w{i}" for i in range(j, j + 10)] for j in range(0, 4000, 10)]
    tags70 = [["A"] * 7 + ["B"] * 3 for _ in words]
    tags20 = [["A"] * 2 + ["B"] * 8 for _ in words]
    return [Case(args=(tags70, words, 0), checker=_control_checker(tags70, words, 0.7), label="70 % A"),
            Case(args=(tags20, words, 1), checker=_control_checker(tags20, words, 0.2), label="20 % A")]


register(Exercise(
    id="ch11.control_task",
    title="Build a control task",
    kind="implement",
    prompt="""
        Hewitt & Liang (2019) give every word *type* one random label, drawn from the task's
        label distribution, and keep it for all of the type's occurrences. Write
        `control_task(train_tags, train_words, seed)` returning a dict word -> label for every
        word type of `train_words`; draw with `np.random.default_rng(seed)`. The check looks at
        the mapping's shape and whether the share of each label across types follows the tags'
        distribution (4,000 types).
    """,
    cases=_control_cases,
    stub=control_task,
    outputs=("control mapping",),
    hint=(
        "Count the tags with collections.Counter; their relative frequencies are the probabilities.",
        ("rng.choice(labels, size=len(types), p=probabilities) draws all types at once; zip the "
        "sorted types with the draws."),
    ),
))

# --------------------------------------------------------------------------- derive: tree embedding


def tree_embedding(heads: list[int]) -> np.ndarray:
    """Return vectors [n, n - 1] whose squared Euclidean distances equal the tree distances of
    the dependency tree ``heads`` (-1 = root)."""
    # Your code here: one dimension per edge
    raise NotImplementedError("write tree_embedding")


def _tree_checker(heads):
    from ..probing.structural import tree_distances

    gold = tree_distances(heads)

    def check(x):
        x = np.asarray(x, dtype=float)
        n = len(heads)
        if x.shape[0] != n or x.ndim != 2:
            return False, f"expected {n} vectors, got shape {x.shape}"
        if x.shape[1] > max(n - 1, 1):
            return False, f"use at most n - 1 = {n - 1} dimensions, got {x.shape[1]}"
        d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
        bad = np.argwhere(np.abs(d2 - gold) > 1e-6)
        if len(bad):
            i, j = bad[0]
            return False, f"squared distance between words {i} and {j} is {d2[i, j]:.3f}, tree distance {gold[i, j]}"
        return True

    return check


def _tree_cases() -> list[Case]:
    trees = {"a chain": [-1, 0, 1, 2], "a star": [1, -1, 1, 1, 1], "the cat sat on the mat": [1, 2, -1, 2, 5, 3],
             "two words": [-1, 0]}
    return [Case(args=(h,), checker=_tree_checker(h), label=k) for k, h in trees.items()]


register(Exercise(
    id="ch11.tree_embedding",
    title="Squared distances can be tree distances",
    kind="derive",
    prompt="""
        Hewitt & Manning's probe fits *squared* distances to tree distances. Show that this is
        possible exactly: for any tree of n words there are vectors h_1..h_n in R^(n-1) with
        ||h_i - h_j||^2 = d_T(i, j). Derive a construction on paper, then write
        `tree_embedding(heads)`. Why could plain (unsquared) Euclidean distances not do this for
        the star tree with 3 leaves?
    """,
    cases=_tree_cases,
    stub=tree_embedding,
    outputs=("vectors",),
    hint=(
        "Let word i's vector be the sum of unit vectors e_edge over the edges on its path to the root.",
        ("Then h_i - h_j has a +-1 in exactly the dimensions of the edges between i and j, so its "
        "squared length counts them. Index each edge by its child word, skipping the root."),
    ),
))

# --------------------------------------------------------------------------- implement: UUAS


def uuas(pred_edges: list[tuple[int, int]], heads: list[int]) -> float:
    """Return the unlabelled undirected attachment score of predicted edges against the gold
    tree ``heads`` (-1 = root): the share of gold edges that are predicted, in either direction."""
    # Your code here
    raise NotImplementedError("write uuas")


def _uuas_cases() -> list[Case]:
    heads = [1, 2, -1, 2, 5, 3, 2]
    chain = [(i, i + 1) for i in range(6)]
    return [Case(args=(chain, heads), expected=4 / 6, label="the chain 0-1-2-...-6"),
            Case(args=([(1, 0), (2, 1), (3, 2), (5, 3), (5, 4), (6, 2)], heads), expected=1.0,
                 label="the gold edges, some reversed"),
            Case(args=([(0, 6), (1, 5), (2, 4), (3, 4), (0, 1), (2, 3)], heads), expected=2 / 6,
                 label="mostly wrong")]


register(Exercise(
    id="ch11.uuas",
    title="Score a predicted tree",
    kind="implement",
    prompt="""
        The structural probe predicts a tree as the minimum spanning tree of its distances. Write
        `uuas(pred_edges, heads)`: the share of the gold tree's edges (i, heads[i]) for every
        non-root word that appear among `pred_edges`, ignoring direction.
    """,
    cases=_uuas_cases,
    stub=uuas,
    outputs=("UUAS",),
    hint=("Store edges as (min(i, j), max(i, j)) so direction does not matter; then intersect two sets.",),
))

# --------------------------------------------------------------------------- debug: visible matrix


def visible_matrix(branch: list[int], anchor: list[int]) -> np.ndarray:
    """K-BERT's visible matrix: ``branch[i]`` is -1 for a trunk token, else its branch's number;
    ``anchor[b]`` is the index of the entity branch b hangs from. True = may attend."""
    b = np.asarray(branch)
    trunk = b < 0
    m = trunk[:, None] | trunk[None, :]
    m |= (b[:, None] == b[None, :])
    for k, a in enumerate(anchor):
        m[a, b == k] = True
        m[b == k, a] = True
    return m


def _visible_cases() -> list[Case]:
    from ..probing.knowledge import SentenceTree
    from ..probing.knowledge import visible_matrix as ours

    trees = {"Tim Cook (CEO Apple) is visiting Beijing (capital China) now":
             ([-1, -1, 0, 0, -1, -1, -1, 1, 1, -1], [1, 6]),
             "one entity, one branch of one token": ([-1, -1, 0, -1], [1]),
             "no branch at all": ([-1, -1, -1], [])}
    return [Case(args=(br, an), expected=ours(SentenceTree(["w"] * len(br), list(range(len(br))), br, an)),
                 label=k) for k, (br, an) in trees.items()]


register(Exercise(
    id="ch11.visible_matrix",
    title="A visible matrix that leaks knowledge",
    kind="debug",
    prompt="""
        `visible_matrix(branch, anchor)` should build K-BERT's mask: trunk tokens see each other,
        a branch's tokens see each other and the entity they hang from, and nothing else sees a
        branch. It returns a matrix of the right shape, but the injected knowledge leaks into
        the sentence. Find the bug and fix it.
    """,
    cases=_visible_cases,
    stub=visible_matrix,
    outputs=("visible matrix",),
    hint=("Which pairs does the first line make visible? Try a trunk token and a branch token.",
          "Trunk-to-trunk needs both tokens on the trunk: an and, not an or."),
))

# --------------------------------------------------------------------------- predict: random vectors


register(Exercise(
    id="ch11.random_mlp_pos",
    title="How well does an MLP tag parts of speech from random vectors?",
    kind="predict",
    prompt="""
        Every word type gets a random vector (the same for all its occurrences): the vectors
        know word identity and nothing else. An MLP probe with one hidden layer is trained on
        them to tag Brown's parts of speech. Before the cell runs: what test accuracy will it
        reach (a number between 0 and 1)? Tagging every word with its most frequent training tag
        gets the majority baseline printed in section 3.
    """,
    rtol=0.0,
    atol=0.08,
    unit=".0%",
    hint=("Most tokens are frequent words with one usual tag. What about words unseen in training?",),
    explanation="""
        Most of POS tagging is remembering each word's usual tag, which random vectors allow:
        the MLP memorises type -> tag for the training vocabulary, and the frequent words cover
        most tokens. It fails on words never seen in training (a random vector says nothing
        about them), which is why its accuracy stays near the majority baseline -- and why
        accuracy alone cannot say that a representation "knows" parts of speech.
    """,
))

# --------------------------------------------------------------------------- concept: selectivity


register(Exercise(
    id="ch11.selectivity",
    title="Which probe tells you more?",
    kind="concept",
    prompt="""
        On the same representation, probe A (linear) has 95 % POS accuracy and 40 % on the
        control task; probe B (a wide MLP) has 97 % POS accuracy and 90 % on the control task.
        Which statement is right?
    """,
    choices={
        "a": "A tells you more: its accuracy owes more to the representation than to the probe's "
             "capacity to memorise (selectivity 55 points vs 7).",
        "b": "B is better: it is more accurate on the task, and task accuracy is what tells how "
             "much the representation encodes.",
        "c": "Both say the same: the control task measures the representation, not the probe.",
        "d": "Neither says anything: a control task makes probes useless.",
    },
    answer="a",
    hint=("Selectivity = task accuracy - control accuracy. What does a high control accuracy show?",),
    explanation="""
        The control task can only be solved by memorising word types, so a probe that does well
        on it can memorise; its task accuracy may come from the probe rather than from the
        representation. Hewitt & Liang recommend reporting selectivity and preferring probes
        that are accurate *and* selective.
    """,
))

# --------------------------------------------------------------------------- concept: expected layer


register(Exercise(
    id="ch11.expected_layer",
    title="Where does the gain happen?",
    kind="concept",
    prompt="""
        Cumulative scalar-mix scores on layers 0..l of a 4-layer model are
        [0.60, 0.80, 0.90, 0.95, 0.95] for l = 0..4. What is Tenney et al.'s expected layer
        (a number)?
    """,
    answer=1.57142857,
    atol=0.01,
    hint=(("Delta_l = score(0..l) - score(0..l-1) for l = 1..4; the expected layer is the Delta-weighted "
          "mean of l."),),
    explanation="""
        The gains are 0.20, 0.10, 0.05 and 0 at layers 1-4, so E[l] = (1 * 0.20 + 2 * 0.10 + 3 * 0.05) /
        0.35 = 0.55 / 0.35 = 1.571: most of what the probe needs is added by the first layer.
    """,
))

# --------------------------------------------------------------------------- extend: a representation


def my_extractor(sentences: list[list[str]]) -> list[np.ndarray]:
    """Return one array per layer, each [n_tokens, d], for the tokens of ``sentences`` in order."""
    # Your code here
    raise NotImplementedError("write my_extractor")


def _extend_checker(result):
    if not isinstance(result, list) or not result:
        return False, "return the list of layer arrays your extractor gives for the sentences"
    if any(np.asarray(a).shape[0] != 5 for a in result):
        return False, "each layer needs one row per token (5 tokens in the check's sentences)"
    return True


register(Exercise(
    id="ch11.my_extractor",
    title="Probe a representation the chapter left out",
    kind="extend",
    prompt="""
        The probes read representations through `FEATURE_EXTRACTORS`. Add one the chapter did
        not probe and place it in the layer table:

        1. Write `my_extractor(sentences)` returning one array per layer, each
           [n_tokens, d] (check() calls it on [["The", "cat", "sat"], ["Dogs", "bark"]]).
           Ideas: chapter 7's BERT after fine-tuning on SST-2; MiniLM with "first" instead of
           "mean" word pooling; GloVe 6B 50d (`companion.data.pretrained.load_glove_6b_50d`);
           the book's stored `bert-book` (`companion.zoo.load("bert-book")`).
        2. `register_extractor("mine", my_extractor)` and run `run_token_probes` and
           `run_layer_probes` on it. Does it beat MiniLM's best layer on POS? Is it more
           selective? Which layer is best, and what is the expected layer?
    """,
    cases=[Case(args=([["The", "cat", "sat"], ["Dogs", "bark"]],), checker=_extend_checker,
                label="two sentences, five tokens")],
    stub=my_extractor,
    hint=("`static_extractor(vectors, index)` wraps any word-vector table in one line.",),
))
