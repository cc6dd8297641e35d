"""Chapter 12b's scenes: deterministic, splits disjoint, captions true to the scene; k-means."""

import numpy as np
import pytest
import torch

from companion.multimodal import scenes as sc
from companion.multimodal import visual_words as vw


def test_scenes_are_deterministic_by_seed():
    a, b = sc.make_scenes(20, "train", 3), sc.make_scenes(20, "train", 3)
    assert torch.equal(a.images, b.images) and torch.equal(a.text, b.text) and a.captions == b.captions
    c = sc.make_scenes(20, "train", 4)
    assert not torch.equal(a.images, c.images)


def test_splits_are_disjoint_and_compositional():
    train = sc.make_scenes(400, "train", 0)
    test = sc.make_scenes(100, "test", 0)
    comp = sc.make_scenes(100, "compositional", 0)
    held = set(sc.DEFAULT_HELD_OUT)
    assert not sc.pairs_in(train) & held and not sc.pairs_in(test) & held
    assert all(any((o.colour, o.shape) in held for o in objs) for objs in comp.scenes)
    # the same seed gives different scenes in different splits
    assert not any(torch.equal(train.images[i], test.images[i]) for i in range(100))
    keys = {objs for objs in train.scenes}
    assert not keys & {objs for objs in comp.scenes}


def test_captions_describe_the_scene():
    b = sc.make_scenes(50, "train", 1)
    for objs, cap, ids in zip(b.scenes, b.captions, b.text):
        words = cap.split()
        assert len(ids) == sc.TEXT_LEN and sc.decode(ids) == cap
        first = [o for o in objs if o.shape == words[3]]
        second = [o for o in objs if o.shape == words[9]]
        assert len(first) == len(second) == 1  # shapes are distinct within a scene
        a, z = first[0], second[0]
        assert (a.size, a.colour) == (words[1], words[2]) and (z.size, z.colour) == (words[7], words[8])
        assert (words[4] == "left") == (a.cx < z.cx)
        assert sc.VOCAB[int(ids[sc.FIRST_COLOUR])] == a.colour  # the cloze's two positions
        assert sc.VOCAB[int(ids[sc.SECOND_COLOUR])] == z.colour


def test_regions_hold_the_objects():
    b = sc.make_scenes(30, "train", 2)
    for i, objs in enumerate(b.scenes):
        assert int(b.region_mask[i].sum()) == len(objs)
        assert (b.labels[i, len(objs):] == -100).all() and (b.regions[i, len(objs):] == 0).all()
        for r, o in enumerate(objs):
            assert int(b.labels[i, r]) == o.label
            centre = b.regions[i, r].view(8, 8, 3)[3:5, 3:5].mean((0, 1))
            if o.shape != "triangle":  # the centre of a circle or square is its colour
                assert torch.allclose(centre, torch.tensor(sc.COLOURS[o.colour], dtype=torch.float32),
                                      atol=0.1)


@pytest.mark.parametrize("kw, match", [
    ({"n": 0}, "n must be"), ({"n": 5, "split": "dev"}, "split must"),
    ({"n": 5, "seed": -1}, "seed must"),
])
def test_bad_inputs_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        sc.make_scenes(**kw)


def test_bad_configs_and_words_raise():
    with pytest.raises(ValueError, match="size"):
        sc.SceneConfig(size=8)
    with pytest.raises(ValueError, match="held-out pair"):
        sc.SceneConfig(held_out=(("pink", "circle"),))
    with pytest.raises(ValueError, match="not in the scene vocabulary"):
        sc.encode(["a", "purple", "circle"])
    with pytest.raises(ValueError, match="held-out pairs"):
        sc.make_scenes(3, "compositional", 0, sc.SceneConfig(held_out=()))


def test_kmeans_matches_scikit_learn_and_purity_beats_chance():
    from sklearn.cluster import KMeans

    b = sc.make_scenes(300, "train", 0)
    m = b.region_mask.numpy()
    x, y = b.regions.numpy()[m], b.labels.numpy()[m]
    init = vw.kmeans_pp(x, 12, np.random.default_rng(0))
    _, labels, inertia = vw.kmeans(x, 12, init=init, n_iter=300, tol=0)
    km = KMeans(12, init=init, n_init=1, max_iter=300, tol=0).fit(x)
    assert (km.labels_ == labels).mean() == 1.0
    assert abs(km.inertia_ - inertia) / inertia < 1e-4
    p = vw.purity(labels, y)
    assert p > vw.random_purity(labels, y, 50).max() + 0.3


def test_purity_by_hand_and_errors():
    assert vw.purity(np.array([0, 0, 1, 1]), np.array([5, 5, 5, 7])) == 0.75
    with pytest.raises(ValueError, match="k must be"):
        vw.kmeans(np.zeros((3, 2)), 4)
    with pytest.raises(ValueError, match="equal, non-empty"):
        vw.purity(np.array([0, 1]), np.array([0]))
