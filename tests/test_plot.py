"""Tests of companion.plot: the figures draw what they claim, deterministically."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from companion.plot import (
    HIGHLIGHT,
    TIMELINE,
    embedding_scatter,
    heatmap,
    loss_curves,
    pca_2d,
    timeline,
    zipf_plot,
    zipf_slope,
)
from companion.train import History


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def test_timeline_covers_the_book_in_order():
    chapters = [e.chapter for e in TIMELINE]
    assert chapters == sorted(chapters)
    assert sorted(set(chapters)) == list(range(1, 13))
    assert [e.title for e in TIMELINE][:5] == ["statistical LMs", "NNLM", "word2vec", "GloVe", "fastText"]


@pytest.mark.parametrize("chapter", [1, 4, 10])
def test_timeline_highlights_exactly_the_chapter(chapter):
    fig = timeline(chapter)
    assert isinstance(fig, Figure) and fig.dpi == 80
    boxes = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(boxes) == len(TIMELINE)
    lit = [to_hex(b.get_facecolor()) == HIGHLIGHT for b in boxes]
    assert lit == [e.chapter == chapter for e in TIMELINE]


def test_timeline_is_deterministic_and_validates():
    assert _png(timeline(3)) == _png(timeline(3))
    assert _png(timeline(3)) != _png(timeline(5))
    assert not any(to_hex(p.get_facecolor()) == HIGHLIGHT for p in timeline().axes[0].patches)
    for bad in (0, 13, "3", True):
        with pytest.raises(ValueError, match="chapter number"):
            timeline(bad)


def test_pca_2d_matches_numpy_svd_up_to_sign():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 6)) @ np.diag([5, 3, 1, 0.5, 0.2, 0.1])
    got = pca_2d(x)
    xc = x - x.mean(0)
    _, _, vt = np.linalg.svd(xc, full_matrices=False)
    ref = xc @ vt[:2].T
    for k in range(2):
        assert np.allclose(np.abs(got[:, k]), np.abs(ref[:, k]), atol=1e-9)
    assert got[:, 0].var() >= got[:, 1].var()
    # deterministic signs: flipping the input's axes' signs or permuting rows does not flip the picture
    perm = rng.permutation(30)
    assert np.allclose(pca_2d(x[perm]), got[perm], atol=1e-9)
    assert np.allclose(pca_2d(torch.tensor(x, dtype=torch.float32)), got, atol=1e-4)
    with pytest.raises(ValueError, match="n >= 2"):
        pca_2d(np.ones((1, 3)))


def test_embedding_scatter_labels_arrows_and_index():
    rng = np.random.default_rng(1)
    big = rng.normal(size=(10, 4))
    words = ["man", "woman", "king", "queen"]
    index = {f"w{i}": i for i in range(10)} | {"man": 2, "woman": 5, "king": 7, "queen": 9}
    fig = embedding_scatter(big, words, index=index, arrows=[("man", "woman"), ("king", "queen")], highlight=["queen"])
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts if t.get_text()]
    assert labels == words
    assert sum(1 for t in ax.texts if t.arrow_patch is not None) == 2
    same = embedding_scatter(big[[2, 5, 7, 9]], words)
    assert np.allclose(same.axes[0].collections[0].get_offsets(), ax.collections[0].get_offsets())
    with pytest.raises(ValueError, match="not among the words"):
        embedding_scatter(big[:4], words, arrows=[("man", "paris")])
    with pytest.raises(KeyError, match="not in the index"):
        embedding_scatter(big, ["man", "paris"], index=index)
    with pytest.raises(ValueError, match="index="):
        embedding_scatter(big, words)


def test_zipf_slope_recovers_a_power_law():
    ranks = np.arange(1, 2001)
    counts = {f"w{r}": 1e6 * r ** -1.2 for r in ranks}
    assert zipf_slope(counts) == pytest.approx(-1.2, abs=1e-9)
    bent = [1e6 * r ** -1.0 if r <= 100 else 1e4 * (r / 100) ** -2.0 for r in ranks]
    assert zipf_slope(bent, fit_range=(1, 100)) == pytest.approx(-1.0, abs=1e-9)
    assert zipf_slope(bent, fit_range=(100, 2000)) == pytest.approx(-2.0, abs=1e-9)
    fig, slope = zipf_plot(list(counts.values()))
    assert isinstance(fig, Figure) and slope == pytest.approx(-1.2, abs=1e-9)
    assert "-1.20" in fig.axes[0].get_legend().get_texts()[1].get_text()
    with pytest.raises(ValueError, match="two"):
        zipf_slope([5])
    with pytest.raises(ValueError, match="non-negative"):
        zipf_slope([3, -1, 2])
    with pytest.raises(ValueError, match="fit_range"):
        zipf_slope(bent, fit_range=(5, 5))
    with pytest.raises(TypeError):
        zipf_slope("the cat")


def test_loss_curves_draws_train_and_eval_lines():
    h = History(step_loss=[3.0, 2.0, 1.5, 1.2, 1.0, 0.9], evals=[{"val_loss": 2.5, "step": 3.0},
                                                                  {"val_loss": 1.9, "step": 6.0}])
    fig = loss_curves({"nnlm": h, "bigram": [4.0, 3.5, 3.4]}, smooth=2)
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["nnlm train", "nnlm val_loss", "bigram train"]
    assert np.allclose(lines[0].get_ydata(), [2.5, 1.75, 1.35, 1.1, 0.95])  # moving average of 2
    assert list(lines[1].get_xdata()) == [3.0, 6.0]
    assert len(loss_curves(h).axes[0].get_lines()) == 2
    with pytest.raises(ValueError, match="no step losses"):
        loss_curves({"empty": History()})
    with pytest.raises(ValueError, match="smooth"):
        loss_curves(h, smooth=0)


def test_heatmap_annotations_and_shape_checks():
    m = np.arange(6, dtype=float).reshape(2, 3) / 10
    fig = heatmap(m, ["r1", "r2"], ["a", "b", "c"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50"]
    assert len(heatmap(torch.rand(20, 20), list("abcdefghijklmnopqrst"), list("abcdefghijklmnopqrst")).axes[0].texts) == 0
    with pytest.raises(ValueError, match="labels"):
        heatmap(m, ["r1"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="2-D"):
        heatmap(np.ones(3), ["a"], ["b"])
