"""Chapter 4's exercises agree with the package they teach."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import solutions.ch04 as sol
from companion.evaluate.bias import association
from companion.static import GloVe, char_ngrams, cooccurrence_matrix, fnv1a_32, weighting


def test_cooccurrence_exercise_matches_the_package():
    tokens = [f"w{(i * 5) % 7}" for i in range(50)]
    c = cooccurrence_matrix([tokens], window=4, min_count=1)
    got = sol.cooccurrence_counts(tokens, 4)
    assert len(got) == c.nnz
    for (w, ctx), v in got.items():
        assert c.get(w, ctx) == pytest.approx(v)


def test_glove_exercises_match_the_model():
    m = GloVe(5, 3, x_max=10.0).double()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_()
    i, j, x = torch.tensor([1, 4]), torch.tensor([2, 0]), torch.tensor([3.5, 40.0], dtype=torch.float64)
    with torch.no_grad():
        losses = m.entry_loss(i, j, x).tolist()
        w, c, b, bc = m.w.tolist(), m.c.tolist(), m.b.tolist(), m.bc.tolist()
    for k in range(2):
        ref = sol.glove_entry_loss(w[i[k]], c[j[k]], b[i[k]], bc[j[k]], float(x[k]), 10.0)
        assert losses[k] == pytest.approx(ref, rel=1e-12)
    for v in (0.3, 9.0, 10.0, 77.0):
        assert sol.glove_weight(v, 10.0) == pytest.approx(float(weighting(torch.tensor([v]), 10.0)[0]), rel=1e-6)


def test_subword_exercises_match_the_package():
    for w in ("where", "a", "naïve", "東京", "representations"):
        for lo, hi in ((3, 6), (2, 4)):  # (n = 1 differs: fastText drops a lone '<' or '>')
            assert sol.char_ngrams(w, lo, hi) == char_ngrams(w, lo, hi)
        assert sol.fnv1a_32(w) == fnv1a_32(w)


def test_association_exercise_matches_the_package():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(9, 4))
    index = {f"v{k}": k for k in range(9)}
    pkg = association(vecs, index, ["v0"], ["v1", "v2", "v3"], ["v4", "v5"])["v0"]
    assert sol.weat_association(vecs[0], vecs[1:4], vecs[4:6]) == pytest.approx(pkg, rel=1e-9)
