"""Chapter 3's exercises agree with the package they teach."""

from __future__ import annotations

import numpy as np
import torch

from companion.exercises import ch03
from companion.neural_lm.tree import huffman_tree
from companion.word2vec import HierarchicalSoftmax, keep_probability


def test_keep_probability_exercise_matches_the_package():
    counts = torch.tensor([50_000, 2_000, 300, 7])
    pkg = keep_probability(counts, 1e-3, rule="c")
    total = int(counts.sum())
    for c, p in zip(counts.tolist(), pkg.tolist()):
        assert ch03._keep_ref(c, total, 1e-3) == p or abs(ch03._keep_ref(c, total, 1e-3) - p) < 1e-12


def test_chapter_two_huffman_tree_passes_the_huffman_exercise():
    counts = [int(1000 / r) for r in range(1, 60)]
    tree = huffman_tree(counts)
    codes = [tree.code_string(w) for w in range(len(counts))]
    assert ch03._huffman_checker(counts)(codes) is True


def test_hs_probability_exercise_matches_the_layer():
    counts = [40, 25, 12, 9, 5, 3, 2]
    tree = huffman_tree(counts)
    head = HierarchicalSoftmax(4, tree)
    with torch.no_grad():
        head.weight.normal_()
    h = torch.randn(4)
    with torch.no_grad():
        logp = head.log_probs_all(h.view(1, 4))[0]
    U = head.weight.detach().double().numpy()
    for w in range(len(counts)):
        n = int(tree.lengths[w])
        p = ch03._hs_ref(h.double().numpy(), U, tree.paths[w, :n].tolist(), tree.codes[w, :n].long().tolist())
        assert np.isclose(p, float(logp[w].exp()), rtol=1e-5)
