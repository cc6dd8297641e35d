"""TagLM's tagger: casing, the LM feature cache, that LM features reach the tagger in both
placements (a toy where only they carry the tag), the scalar mix's weights, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from companion.contextual.taglm import (
    LMFeatureCache,
    TaggerConfig,
    TaggerData,
    casing,
    glove_rows_for,
    train_tagger,
)
from companion.data.tasks import TaggedSentence

TAGS = ["B-X", "O"]


def _toy(n, seed):
    """Tokens unknown to 'GloVe' and all lower-case, tagged B-X or O at random: to the tagger's
    word and casing inputs every token looks the same."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(2, 6))
        toks = tuple(f"u{seed}x{i}x{j}" for j in range(k))
        out.append(TaggedSentence(toks, tuple(rng.choice(TAGS, k))))
    return out


ORACLE = {}


def _oracle(sentences):
    """An 'LM' whose layer 2 knows the tag (looked up), layers 0 and 1 are noise."""
    out = []
    for s in sentences:
        tags = ORACLE[tuple(s)]
        arr = np.random.default_rng(len(s)).standard_normal((3, len(s), 4)).astype(np.float32)
        arr[2, :, 0] = [3.0 if t == "B-X" else -3.0 for t in tags]
        out.append(arr)
    return out


def test_casing():
    assert [casing(w) for w in ["the", "Paris", "NATO", "1996", "3rd", "--"]] == [1, 2, 3, 4, 4, 5]


def test_cache_computes_once_and_checks_shapes():
    calls = []

    def extract(sents):
        calls.append(len(sents))
        return [np.ones((3, len(s), 2)) for s in sents]

    cache = LMFeatureCache(extract)
    a = cache([["a", "b"], ["c"], ["a", "b"]])
    cache([["c"]])
    assert calls == [2] and len(cache) == 2 and a[0].dtype == np.float16 and a[0].shape == (3, 2, 2)
    with pytest.raises(ValueError, match="one \\[n_layers, n_tokens, d\\] array"):
        LMFeatureCache(lambda s: [np.ones((3, 5, 2))])([["x"]])


@pytest.mark.parametrize("mix,at", [("top", "first"), ("mix", "input")])
def test_lm_features_reach_the_tagger(mix, at):
    train, test = _toy(100, 0), _toy(30, 1)
    ORACLE.clear()
    ORACLE.update({s.tokens: s.tags for s in train + test})
    rows, index = glove_rows_for([s.tokens for s in train], np.ones((1, 3), np.float32), ["w"])
    data = TaggerData(index, TAGS, LMFeatureCache(_oracle))
    cfg = {"d_hidden": 8, "d_case": 2, "epochs": 5, "lr": 3e-2, "dropout": 0.0}
    base = train_tagger(train, test, data, rows, TaggerConfig(**cfg), seed=0)
    with_lm = train_tagger(train, test, data, rows, TaggerConfig(lm_mix=mix, lm_at=at, **cfg), seed=0)
    acc = {k: np.mean([p == g for s, ps in zip(test, r.predict([s.tokens for s in test]))
                       for p, g in zip(ps, s.tags)]) for k, r in (("base", base), ("lm", with_lm))}
    assert acc["lm"] > 0.95 and acc["base"] < 0.7, acc
    if mix == "mix":
        w = with_lm.mix_weights()
        assert w.sum() == pytest.approx(1, abs=1e-6) and w.argmax() == 2  # it found the useful layer
    else:
        assert with_lm.mix_weights() is None


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="lm_mix"):
        TaggerConfig(lm_mix="all")
    with pytest.raises(ValueError, match="lm_at"):
        TaggerConfig(lm_at="output")
    rows, index = glove_rows_for([("w",)], np.ones((1, 3), np.float32), ["w"])
    data = TaggerData(index, TAGS)
    s = _toy(3, 0)
    with pytest.raises(ValueError, match="LMFeatureCache"):
        train_tagger(s, s, data, rows, TaggerConfig(lm_mix="top"))
    with pytest.raises(ValueError, match="training and dev"):
        train_tagger([], s, data, rows, TaggerConfig())
