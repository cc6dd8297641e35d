"""Trees for the hierarchical softmax: prefix codes, Huffman optimality, balanced depth."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.neural_lm.tree import BinaryTree, balanced_tree, clustered_tree, huffman_tree
# Huffman's optimum by the textbook heap algorithm (sum of merged weights / total), independent of huffman_tree
from solutions.ch02 import huffman_average_length as optimal_average_length


def codes_of(tree: BinaryTree) -> list[str]:
    return [tree.code_string(w) for w in range(tree.n_leaves)]


def assert_valid_tree(tree: BinaryTree) -> None:
    V = tree.n_leaves
    assert tree.n_internal == V - 1
    codes = codes_of(tree)
    # prefix code: sorted codes, each differs from the next before either ends
    s = sorted(codes)
    for a, b in zip(s, s[1:]):
        assert not b.startswith(a), f"{a!r} is a prefix of {b!r}"
    # a full binary tree's code lengths satisfy Kraft with equality
    assert sum(2.0 ** -len(c) for c in codes) == pytest.approx(1.0)
    # every path starts at the root, uses valid internal ids, padding is 0 and masked
    assert torch.all(tree.paths[:, 0] == tree.root)
    assert int(tree.paths.max()) <= V - 2 and int(tree.paths.min()) >= 0
    assert torch.equal(tree.mask.sum(1), tree.lengths)
    assert torch.all(tree.paths[~tree.mask] == 0) and torch.all(tree.codes[~tree.mask] == 0)
    # every internal node is used, and (node, branch) pairs lead to distinct subtrees consistently
    assert set(tree.paths[tree.mask].tolist()) == set(range(V - 1))
    assert tree.paths.dtype == torch.long and tree.codes.dtype == torch.float32
    assert tree.mask.dtype == torch.bool


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=1000), min_size=2, max_size=40))
def test_huffman_is_prefix_code_with_minimal_expected_length(counts):
    tree = huffman_tree(counts)
    assert_valid_tree(tree)
    assert tree.expected_length(counts) == pytest.approx(optimal_average_length(counts), rel=1e-12)


def brute_force_optimal_length(counts: list[int]) -> float:
    """Minimal expected code length by trying every full binary tree shape (tiny V only)."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def best(items: tuple[float, ...]) -> float:
        # cost of a forest: repeatedly merge any two subtrees; cost = sum of merged weights
        if len(items) == 1:
            return 0.0
        out = math.inf
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                rest = [x for k, x in enumerate(items) if k not in (i, j)]
                merged = items[i] + items[j]
                out = min(out, merged + best(tuple(sorted(rest + [merged]))))
        return out

    return best(tuple(sorted(float(c) for c in counts))) / sum(counts)


def test_huffman_matches_brute_force_on_tiny_vocabularies():
    rng = np.random.default_rng(0)
    for _ in range(10):
        counts = rng.integers(1, 50, size=int(rng.integers(2, 7))).tolist()
        assert huffman_tree(counts).expected_length(counts) == pytest.approx(brute_force_optimal_length(counts))


def test_huffman_gives_frequent_words_short_codes():
    counts = [1000, 500, 100, 50, 10, 5, 1, 1]
    tree = huffman_tree(counts)
    lengths = tree.lengths.tolist()
    assert lengths == sorted(lengths)  # non-decreasing as counts decrease
    assert lengths[0] == 1


def test_huffman_matches_word2vec_c_codes_on_a_hand_example():
    # counts sorted by decreasing frequency, as word2vec's vocabulary is.
    # merges, by hand following word2vec.c (first pick -> bit 0, second pick -> bit 1):
    #   n0 = (w4:1, w3:2) = 3;  n1 = (n0:3, w2:3) = 6  (tie: the internal node is taken first);
    #   n2 = (w1:4, w0:5) = 9;  n3 = root = (n1:6, n2:9) = 15
    tree = huffman_tree([5, 4, 3, 2, 1])
    assert tree.root == 3
    assert codes_of(tree) == ["11", "10", "01", "001", "000"]
    assert tree.paths[4, :3].tolist() == [3, 1, 0]
    assert tree.paths[0, :2].tolist() == [3, 2]


def test_huffman_is_deterministic_and_order_invariant_in_shape():
    counts = [3, 3, 3, 3, 3, 1]
    a, b = huffman_tree(counts), huffman_tree(counts)
    assert torch.equal(a.paths, b.paths) and torch.equal(a.codes, b.codes)
    perm = [5, 0, 1, 2, 3, 4]
    c = huffman_tree([counts[p] for p in perm])
    assert c.expected_length([counts[p] for p in perm]) == pytest.approx(a.expected_length(counts))


@pytest.mark.peers
def test_huffman_equals_gensim_when_there_are_no_ties():
    from gensim.models import word2vec as gw
    from gensim.models.keyedvectors import KeyedVectors

    rng = np.random.default_rng(1)
    counts = sorted(rng.choice(np.arange(1, 10**6), size=60, replace=False).tolist(), reverse=True)
    kv = KeyedVectors(4)
    kv.index_to_key = [f"w{i}" for i in range(len(counts))]
    kv.key_to_index = {w: i for i, w in enumerate(kv.index_to_key)}
    kv.allocate_vecattrs(attrs=["count"], types=[np.int64])
    for i, c in enumerate(counts):
        kv.set_vecattr(i, "count", c)
    gw._assign_binary_codes(kv)
    tree = huffman_tree(counts)
    for i in range(len(counts)):
        code = "".join(str(int(x)) for x in kv.get_vecattr(i, "code"))
        point = [int(x) for x in kv.get_vecattr(i, "point")]
        assert tree.code_string(i) == code
        assert tree.paths[i, : len(point)].tolist() == point


@pytest.mark.parametrize("V", [2, 3, 4, 5, 7, 8, 9, 100, 1000, 1025])
def test_balanced_tree_depth(V):
    tree = balanced_tree(V)
    assert_valid_tree(tree)
    assert tree.max_depth <= math.ceil(math.log2(V))
    assert int(tree.lengths.min()) >= math.floor(math.log2(V))


def test_clustered_tree_groups_similar_vectors():
    rng = np.random.default_rng(0)
    centres = np.array([[10.0, 0.0], [-10.0, 0.0], [0.0, 10.0], [0.0, -10.0]])
    X = np.concatenate([c + rng.normal(0, 0.1, size=(5, 2)) for c in centres])
    tree = clustered_tree(X)
    assert_valid_tree(tree)
    # words of the same cluster share their first two decisions
    for k in range(4):
        firsts = {tree.code_string(w)[:2] for w in range(5 * k, 5 * k + 5)}
        assert len(firsts) == 1
    assert tree.max_depth <= 5
    # identical vectors still give a valid (balanced-ish) tree
    assert_valid_tree(clustered_tree(torch.zeros(9, 3)))


def test_to_device_and_bad_inputs():
    tree = huffman_tree([3, 2, 1]).to("cpu")
    assert tree.paths.device.type == "cpu"
    with pytest.raises(ValueError, match="at least 2"):
        huffman_tree([5])
    with pytest.raises(ValueError, match="non-negative"):
        huffman_tree([3, -1])
    with pytest.raises(ValueError, match="1-D"):
        huffman_tree([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="at least 2"):
        balanced_tree(1)
    with pytest.raises(TypeError):
        balanced_tree(3.5)
    with pytest.raises(ValueError, match=r"\[V, d\]"):
        clustered_tree(np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        clustered_tree(np.full((3, 2), np.nan))
    with pytest.raises(IndexError):
        tree.code_string(3)
    with pytest.raises(ValueError, match="one entry per leaf"):
        tree.expected_length([1, 2])
