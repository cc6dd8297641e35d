"""Chapter 12b's models and objectives: shapes, co-attention, masks, ITM negatives, errors."""

import numpy as np
import pytest
import torch

from companion.multimodal import models as mm
from companion.multimodal import pretrain as pt
from companion.multimodal import scenes as sc

SMALL = mm.MultimodalConfig(d_model=16, n_head=2, n_layer=1)


@pytest.fixture(scope="module")
def data():
    return sc.make_scenes(40, "train", 0)


@pytest.mark.parametrize("kind", ["single", "two"])
def test_shapes(kind, data):
    torch.manual_seed(0)
    m = mm.build(kind, SMALL)
    t, v, p = m(data.text, data.regions, data.boxes, data.region_mask)
    assert t.shape == (40, 12, 16) and v.shape == (40, 3, 16) and p.shape == (40, 16)
    assert torch.isfinite(t).all() and torch.isfinite(v).all()
    assert m.mlm_head(t).shape[-1] == len(sc.VOCAB) and m.itm_head(p).shape == (40, 2)


def test_matched_parameter_counts():
    two = mm.MultimodalConfig(d_model=32, n_layer=2)
    one = mm.matched_single(two)
    a, b = mm.SingleStream(one).n_parameters(), mm.TwoStream(two).n_parameters()
    assert abs(a - b) / b < 0.01


def test_two_stream_text_sees_the_image_only_through_co_attention(data):
    torch.manual_seed(0)
    m = mm.TwoStream(SMALL).eval()
    other = data.regions.flip(0)
    t1, _, _ = m(data.text, data.regions, data.boxes, data.region_mask)
    t2, _, _ = m(data.text, other, data.boxes, data.region_mask)
    assert (t1 - t2).abs().max() > 1e-4  # the image changes the words' states
    with torch.no_grad():
        for layer in m.layers:  # cut the text stream's co-attention
            layer.text_from_vision.proj.weight.zero_()
            layer.text_from_vision.proj.bias.zero_()
    t1, _, _ = m(data.text, data.regions, data.boxes, data.region_mask)
    t2, _, _ = m(data.text, other, data.boxes, data.region_mask)
    assert (t1 - t2).abs().max() < 1e-6  # ... and only through it
    w = m.layers[0].text_from_vision.last_weights
    assert w.shape == (40, 2, 12, 3) and torch.allclose(w.sum(-1), torch.ones(40, 2, 12))


def test_padding_regions_are_ignored(data):
    torch.manual_seed(0)
    for kind in ("single", "two"):
        m = mm.build(kind, SMALL).eval()
        i = int(np.flatnonzero(~data.region_mask[:, 2].numpy())[0])  # a scene with 2 objects
        one = data.subset([i])
        junk = one.regions.clone()
        junk[0, 2] = 5.0
        a = m(one.text, one.regions, one.boxes, one.region_mask)[0]
        b = m(one.text, junk, one.boxes, one.region_mask)[0]
        assert (a - b).abs().max() < 1e-6, kind


def test_itm_negatives_never_equal_the_positive(data):
    rng = np.random.default_rng(0)
    idx = np.arange(len(data))
    for _ in range(20):
        neg = pt.itm_negatives(data.captions, idx, rng)
        assert all(data.captions[j] != data.captions[i] for i, j in zip(idx, neg))
    with pytest.raises(ValueError, match="two different captions"):
        pt.itm_negatives(["a", "a"], np.arange(2), rng)


def test_masks(data):
    gen = torch.Generator().manual_seed(0)
    inputs, labels = pt.mask_words(data.text, 0.15, gen)
    special = (data.text == sc.CLS) | (data.text == sc.SEP)
    assert (labels[special] == -100).all()
    assert ((labels != -100).sum(1) >= 1).all()  # at least one word per row
    kept = labels == -100
    assert torch.equal(inputs[kept], data.text[kept])
    big = sc.make_scenes(400, "train", 1).text
    _, lab = pt.mask_words(big, 0.15, torch.Generator().manual_seed(1))
    rate = float((lab != -100).float().sum() / (big.numel() - 2 * len(big)))
    assert 0.13 < rate < 0.2
    cfg = pt.PretrainConfig(batch_size=40)
    b = pt.make_batch(data, np.arange(40), cfg, np.random.default_rng(0), gen)
    mismatched = b["itm"] == 0
    assert 5 < int(mismatched.sum()) < 35
    assert (b["mlm_labels"][mismatched] == -100).all() and not b["hide"][mismatched].any()
    assert (b["text"] == sc.MASK).any(1)[mismatched].float().mean() > 0.5  # no ITM give-away
    hidden = b["hide"]
    assert (b["regions"][hidden] == 0).all() and (b["region_labels"][hidden] >= 0).all()


def test_text_only_batches_show_no_regions(data):
    cfg = pt.PretrainConfig(use_image=False, batch_size=8)
    b = pt.make_batch(data, np.arange(8), cfg, np.random.default_rng(0), torch.Generator())
    assert not b["region_mask"].any() and (b["itm"] == 1).all() and not b["hide"].any()


def test_a_short_run_is_deterministic_and_evaluates(data):
    cfg = pt.PretrainConfig(steps=3, batch_size=8)
    r1 = pt.pretrain("two", SMALL, data, cfg)
    r2 = pt.pretrain("two", SMALL, data, cfg)
    assert r1.losses == r2.losses and set(r1.parts) == {"mlm", "itm", "mrm_class", "mrm_feature"}
    small = data.subset(np.arange(10))
    assert pt.itm_accuracy(r1.model, small).shape == (20,)
    ranks = pt.retrieval_ranks(r1.model, small)
    assert ranks.shape == (10,) and ranks.min() >= 1 and ranks.max() <= 10
    assert pt.colour_cloze(r1.model, small, shuffle_images=True).shape == (20,)


def test_bad_inputs_raise(data):
    m = mm.build("single", SMALL)
    with pytest.raises(ValueError, match="text must be a LongTensor"):
        m(data.text.float(), data.regions, data.boxes, data.region_mask)
    with pytest.raises(ValueError, match="regions must have shape"):
        m(data.text, data.regions[..., :5], data.boxes, data.region_mask)
    with pytest.raises(ValueError, match="text ids must be in"):
        m(data.text + 100, data.regions, data.boxes, data.region_mask)
    with pytest.raises(ValueError, match="region_mask must be a bool"):
        m(data.text, data.regions, data.boxes, data.region_mask.long())
    with pytest.raises(ValueError, match="divisible"):
        mm.MultimodalConfig(d_model=10, n_head=4)
    with pytest.raises(ValueError, match="kind must be"):
        mm.build("three", SMALL)
    with pytest.raises(ValueError, match="at least one of"):
        pt.PretrainConfig(mlm=False, mrm=False, itm=False)
    with pytest.raises(ValueError, match="visual_words exactly"):
        pt.pretrain("single", SMALL, data, pt.PretrainConfig(steps=1), visual_words=torch.zeros(40, 3))
