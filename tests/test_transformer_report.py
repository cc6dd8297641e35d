"""Chapter 7a's bookkeeping and its diagram: the experiments measure what they say, the
figures draw."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

from companion.transformer import report
from companion.transformer.diagram import draw_stack, draw_transformers, stack_boxes

matplotlib.use("Agg")


def test_stack_boxes_follow_the_norm_placement():
    post = [b.label for b in stack_boxes(pre_ln=False, causal=False)]
    pre = [b.label for b in stack_boxes(pre_ln=True, causal=True)]
    assert post[1].startswith("multi-head") and post[2:4] == ["add", "LayerNorm"]
    assert pre[1] == "LayerNorm" and pre[2].startswith("masked") and "final LayerNorm" in pre
    assert post[-1].startswith("MLM") and pre[-1].startswith("LM head")


def test_diagrams_draw():
    fig = draw_transformers()
    assert len(fig.axes) == 2
    labels = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("masked" in t for t in labels) and "N ×" in labels
    assert len(draw_stack(True, False).axes[0].patches) == len(stack_boxes(True, False))


def test_softmax_saturation_measures_the_scaling():
    f = report.softmax_saturation([4, 256], n_keys=16, n_queries=64, seeds=range(2))
    assert len(f) == 2 * 2 * 2
    scaled = f[f.scaled]
    assert (scaled.score_std - 1).abs().max() < 0.2  # unit-scale scores whatever d
    unscaled = f[~f.scaled & (f.d == 256)]
    assert (unscaled.score_std - 16).abs().max() < 2  # sqrt(d)
    assert unscaled.entropy.max() < scaled.entropy.min() <= math.log(16)
    assert set(report.saturation_summary(f).columns) >= {"entropy mean", "entropy std"}
    report.saturation_plot(f, n_keys=16)
    with pytest.raises(ValueError, match="positive ints"):
        report.softmax_saturation([0])


def test_folds_and_word_level_unk():
    fs = report.folds(10, 3)
    assert sorted(i for _, te in fs for i in te) == list(range(10))
    assert all(not set(tr) & set(te) for tr, te in fs)
    with pytest.raises(ValueError):
        report.folds(3, 1)
    assert report.word_level_unk_share(["a a b c"], ["a b d d"], 3) == 0.5  # vocab {a, b} + <unk>


def test_oov_by_fold_byte_level_is_lossless():
    sents = [f"the {w} sat on the mat" for w in ["cat", "dog", "bird", "cow", "zebra", "yak"]] * 3
    f = report.oov_by_fold(sents, 2, 280, extra={"new": ["quixotic qwerty"]})
    byte = f[f.tokenizer == "byte-level BPE"]
    assert (byte.unk_share == 0).all()
    word = f[(f.tokenizer == "word-level") & (f.text == "new")]
    assert (word.unk_share == 1).all()
    assert set(report.oov_summary(f).index.get_level_values(1)) == {"word-level", "BPE", "WordPiece",
                                                                    "byte-level BPE"}


def test_attention_maps_and_head_roles_on_a_tiny_bert():
    from companion.transformer import BertConfig, BertEncoder
    from companion.transformer.tokenizers import WordPiece

    wp = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "mat", "on"])
    enc = BertEncoder(BertConfig(vocab_size=len(wp), n_layer=2, n_head=2, d_model=8)).eval()
    ids = wp.encode("the cat sat on the mat")
    w = report.attention_maps(enc, ids)
    assert w.shape == (2, 2, len(ids), len(ids))
    assert torch.allclose(w.sum(-1), torch.ones(2, 2, len(ids)))
    assert all(b.attn.use_sdpa for b in enc.blocks)  # restored
    roles = report.head_roles(enc, wp, ["the cat sat on the mat", "the mat"])
    assert len(roles) == 4 and set(roles.role) <= {"previous", "self", "next", "[CLS]", "[SEP]", "mixed"}
    parts = roles[["previous", "self", "next", "[CLS]", "[SEP]"]].sum(axis=1)
    assert (parts <= 1.0 + 1e-6).all()
    report.head_grid(w, wp.tokenize("the cat sat on the mat") + ["x", "y"], [(0, 0), (1, 1)])
    with pytest.raises(ValueError, match="no sentence"):
        report.head_roles(enc, wp, ["cat"])


def test_sinusoid_plot_draws():
    fig = report.sinusoid_plot(20, 8, columns=(0, 2))
    assert len(fig.axes) == 3  # image, its colour bar, the curves


def test_tiktoken_parity_counts_identical_sentences():
    pytest.importorskip("tiktoken")
    out = report.tiktoken_parity(["Hello world", "  odd  spaces\n\n", "naïve café 東京"])
    assert out["sentences"] == 3 and out["identical"] == 3 and out["tokens"] > 5


def _tiny_bert():
    from companion.transformer import BertConfig, BertEncoder
    from companion.transformer.tokenizers import WordPiece

    wp = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "mat", "on"])
    return BertEncoder(BertConfig(vocab_size=len(wp), n_layer=2, n_head=2, d_model=8)).eval(), wp


def test_head_html_shades_each_weight():
    from companion.transformer.head_picker import head_html

    w = torch.zeros(1, 1, 3, 3)
    w[0, 0, :, 1] = 1.0
    out = head_html(w, ["a", "<b>", "c"], 0, 0)
    assert out.count("rgba(0,0,0,1.00)") == 3 and out.count("rgba(0,0,0,0.00)") == 6
    assert "&lt;b&gt;" in out and "a→&lt;b&gt;" in out
    with pytest.raises(ValueError, match="layer must be"):
        head_html(w, ["a", "b", "c"], 1, 0)
    with pytest.raises(ValueError, match="tokens"):
        head_html(w, ["a"], 0, 0)


def test_head_picker_widget_errors_and_recovers():
    pytest.importorskip("ipywidgets")
    from companion.transformer.head_picker import head_picker_widget

    enc, wp = _tiny_bert()
    p = head_picker_widget(enc, wp, sentence="the cat sat")
    assert p.calls == 1 and "layer 0, head 0" in p.output.value and "[CLS]" in p.output.value
    p.head.value = 1
    assert "layer 0, head 1" in p.output.value and p.calls == 2
    p.sentence.value = "   "  # an error: shown, not raised
    assert "Cannot draw" in p.output.value
    p.layer.value = 1  # another control moves: still the message, no crash
    assert "Cannot draw" in p.output.value
    p.sentence.value = "the mat"  # then a good sentence: the widget answers again
    assert "layer 1, head 1" in p.output.value and "mat" in p.output.value
    assert all(b.attn.use_sdpa for b in enc.blocks)
