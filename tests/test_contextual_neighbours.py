"""Chapter 6b's neighbours widget (its callback, its error then recovery) and figures."""

from __future__ import annotations

import numpy as np
import pytest

from companion.contextual.figures import (
    context_notes,
    draw_bilm,
    occurrences,
    pca_2d,
    plot_attention,
    plot_context_map,
    plot_mix_weights,
)
from companion.contextual.neighbours import (
    ContextPool,
    contextual_neighbours,
    neighbours_widget,
)

POOL = [["the", "river", "bank", "flooded"], ["the", "bank", "lent", "money"], ["a", "river", "ran"]]


def _encode(sentences):
    """A fake 2-layer encoder: layer 0 hashes the word alone; layer 1 adds the next word, so
    'bank' before 'flooded' and 'bank' before 'lent' differ only there."""
    def vec(w):
        return np.random.default_rng(sum(map(ord, w))).standard_normal(6)

    out = []
    for s in sentences:
        l0 = np.stack([vec(w) for w in s])
        nxt = np.stack([vec(s[j + 1]) if j + 1 < len(s) else np.zeros(6) for j in range(len(s))])
        out.append(np.stack([l0, l0 + 2 * nxt]))
    return out


def test_neighbours_follow_the_context_at_the_upper_layer():
    pool = ContextPool(POOL, _encode)
    assert pool.n_layers == 2 and pool.vectors.shape == (2, 11, 6)
    r1 = contextual_neighbours(pool, "The bank lent it", "bank", layer=1, k=2)
    assert r1.error is None and (r1.neighbours[0].sentence, r1.neighbours[0].position) == (POOL[1], 1)
    r2 = contextual_neighbours(pool, "The bank flooded", "BANK", layer=1, k=1)
    assert (r2.neighbours[0].sentence, r2.neighbours[0].position) == (POOL[0], 2)
    r0 = contextual_neighbours(pool, "The bank flooded", "bank", layer=0, k=2)
    assert {n.word for n in r0.neighbours} == {"bank"} and r0.neighbours[0].cosine == pytest.approx(1.0)
    other = contextual_neighbours(pool, "The bank flooded", "bank", layer=0, k=3, exclude_same=True)
    assert all(n.word != "bank" for n in other.neighbours) and len(other.neighbours) == 3


def test_unusable_input_is_an_error_message_not_an_exception():
    pool = ContextPool(POOL, _encode)
    assert "not a word of the sentence" in contextual_neighbours(pool, "a river", "bank", layer=1).error
    assert "type a sentence" in contextual_neighbours(pool, "   ", "bank", layer=1).error
    assert "layer must be" in contextual_neighbours(pool, "a bank", "bank", layer=5).error
    with pytest.raises(ValueError, match="k must be"):
        contextual_neighbours(pool, "a bank", "bank", k=0)
    with pytest.raises(ValueError, match="at least one sentence"):
        ContextPool([], _encode)


def test_widget_shows_an_error_then_recovers():
    pytest.importorskip("ipywidgets")
    w = neighbours_widget(ContextPool(POOL, _encode), sentence="the bank lent money", word="bank", layer=1)
    assert "<table>" in w.output.value and w.calls == 1
    w.word.value = "whale"
    assert "Cannot answer" in w.output.value and "whale" in w.output.value
    w.word.value = "money"  # the next change answers again
    assert w.last.error is None and "<b>money</b>" in w.output.value and w.calls == 3


def test_figures_draw(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    fig = draw_bilm()
    assert len(fig.axes[0].patches) > 20
    plot_mix_weights(None, {"NER": [0.2, 0.3, 0.5], "chunks": [0.5, 0.3, 0.2]})
    with pytest.raises(ValueError, match="no weights"):
        plot_mix_weights(None, {})
    pts = pca_2d(np.random.default_rng(0).standard_normal((6, 5)))
    assert pts.shape == (6, 2)
    plot_context_map(None, pts, ["a", "a", "b", "b", "c", "c"], notes=["x", "", "", "", "", "y"])
    plot_attention(None, np.eye(3), ["a", "b", "c"], ["x", "y"])
    occ = occurrences(POOL, ["bank", "river"], per_word=5)
    assert sorted(occ) == [(0, 1, "river"), (0, 2, "bank"), (1, 1, "bank"), (2, 1, "river")]
    assert context_notes(POOL, occ, every=2) == ["the river bank flooded", "", "the river bank", ""]
    with pytest.raises(ValueError, match="does not occur"):
        occurrences(POOL, ["whale"], per_word=2)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_the_pool_is_centred_so_a_shared_component_does_not_make_every_cosine_one():
    """A language model's states share a large common component; raw cosines are then all near
    1. Centring the pool (and the query) on the pool's mean shows the differences again."""
    offset = np.full(6, 50.0)

    def shifted(sentences):
        return [f + offset for f in _encode(sentences)]

    raw = contextual_neighbours(ContextPool(POOL, shifted, centre=False), "a river ran", "river", layer=1, k=11)
    assert min(n.cosine for n in raw.neighbours) > 0.9  # every token looks alike
    res = contextual_neighbours(ContextPool(POOL, shifted), "a river ran", "river", layer=1, k=11)
    assert res.neighbours[0].word == "river" and res.neighbours[0].cosine == pytest.approx(1.0, abs=1e-5)
    assert min(n.cosine for n in res.neighbours) < 0.5
