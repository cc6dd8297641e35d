"""Knowledge injection (chapter 12a): ERNIE's fusion, KEPLER's KE loss, K-BERT inputs, the probe."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from companion.knowledge import inject as K
from companion.knowledge.world import WorldConfig, make_world, vocabulary


@pytest.fixture(scope="module")
def world():
    w = make_world(WorldConfig(n_people=30, n_countries=2, cities_per_country=3, seed=2))
    return w, vocabulary(w)


def test_fusion_shapes_and_entities_matter():
    torch.manual_seed(0)
    f = K.ErnieFusion(16, 8)
    w, e = torch.randn(2, 5, 16), torch.randn(2, 5, 8)
    out, ent = f(w, e)
    assert out.shape == (2, 5, 16) and ent.shape == (2, 5, 8)
    shuffled, _ = f(w, e[:, torch.tensor([1, 0, 3, 4, 2])])
    assert (out - shuffled).abs().max() > 1e-3
    with pytest.raises(ValueError, match=r"\[B, T, 8\]"):
        f(w, e[..., :4])
    with pytest.raises(ValueError, match="token states"):
        f(w[..., :3], e)


def test_shuffled_entity_vectors_change_the_outputs(world):
    w, v = world
    vec = torch.randn(w.n_entities, 8, generator=torch.Generator().manual_seed(0))
    cfg = K.ArmConfig(d_model=16, n_head=2, steps=1)
    a = K.KnowledgeBert(len(v), cfg, "ernie", entity_vectors=vec)
    b = K.KnowledgeBert(len(v), cfg, "ernie", entity_vectors=vec[torch.randperm(len(vec))])
    data = K.encode(w.sentences[:4], v, w)
    batch = K.make_batch(data, torch.arange(4), v)
    ha, _ = a(batch.ids, batch.entity_ids)
    hb, _ = b(batch.ids, batch.entity_ids)
    assert (ha - hb).abs().max() > 1e-4
    plain = K.KnowledgeBert(len(v), cfg, "plain")  # same BERT initialisation for every arm
    assert torch.equal(plain.encoder.embeddings.tok.weight, a.encoder.embeddings.tok.weight)


def test_masked_tokens_lose_their_entity(world):
    w, v = world
    data = K.encode(w.sentences[:8], v, w)
    b = K.make_batch(data, torch.arange(8), v, mask_p=0.5, generator=torch.Generator().manual_seed(0))
    masked = b.labels != -100
    assert masked.any()
    assert (b.entity_ids[masked] == -1).all()
    assert not masked[:, 0].any()  # [CLS] is never masked


def test_kbert_inputs_reuse_the_visible_matrix(world):
    w, v = world
    kb = K.kb_from_triples(w)
    p = w.held_out[0] if w.held_out else w.seen[0]
    sents, _ = w.probe([p])
    enc = K.encode(sents, v, w, kb=kb)
    n_branch = len(enc.ids[0]) - len(sents[0]) - 2
    assert n_branch > 0  # the person's triples hang from it
    vis = enc.visible[0]
    mask_at = sents[0].index("[MASK]") + 1 + n_branch  # branches follow the person (word 0)
    assert v["[MASK]"] == int(enc.ids[0, mask_at])
    assert not vis[mask_at, 2]  # the [MASK] does not see the branch...
    assert vis[1, 2] and vis[2, 1]  # ...but the person and its branch see each other
    assert enc.pos[0, 2] == 2 and enc.pos[0, mask_at] == 1 + sents[0].index("[MASK]")


def test_a_short_run_is_deterministic_and_probes(world):
    w, v = world
    cfg = K.ArmConfig(d_model=16, n_head=2, steps=3, batch_size=8, ke_batch=4, ke_negatives=2)
    for arm in K.ARMS:
        vec = torch.randn(w.n_entities, 8, generator=torch.Generator().manual_seed(0))
        r1 = K.train_arm(w, v, arm, cfg, entity_vectors=vec)
        r2 = K.train_arm(w, v, arm, cfg, entity_vectors=vec)
        assert r1.losses == r2.losses and np.isfinite(r1.losses).all()
        acc = K.cloze(r1.model, w, v, w.seen[:5], kb=r1.kb)
        assert acc.shape == (5,) and set(acc.tolist()) <= {0.0, 1.0}
    assert K.frequency_cloze(w, w.seen).shape == (len(w.seen),)
    assert 0 <= K.country_frequency_cloze(w, w.seen).mean() <= 1


def test_bad_inputs_raise_clear_errors(world):
    w, v = world
    with pytest.raises(ValueError, match="arm must be one of"):
        K.KnowledgeBert(len(v), K.ArmConfig(), "ernie2")
    with pytest.raises(ValueError, match="needs entity_vectors"):
        K.KnowledgeBert(len(v), K.ArmConfig(), "ernie")
    with pytest.raises(ValueError, match="fuse_at"):
        K.ArmConfig(fuse_at=5).validate()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        K.encode([["zzzz", "was"]], v, w)
    with pytest.raises(ValueError, match="not people"):
        w.probe([w.n_entities - 1])
    with pytest.raises(ValueError, match="people is empty"):
        K.cloze(K.KnowledgeBert(len(v), K.ArmConfig(d_model=16, n_head=2)), w, v, [])


def test_a_masked_entity_loses_its_branches(world):
    w, v = world
    kb = K.kb_from_triples(w)
    p = w.seen[0]
    data = K.encode([[w.entities[p], "was", "born", "in", w.entities[w.born[p]], "."]], v, w, kb=kb)
    assert (data.anchor[0] == 1).any()  # the person's branch tokens hang from token 1
    b = K.make_batch(data, torch.tensor([0]), v, mask_at=torch.tensor([1]))
    branch = (data.anchor[0] == 1).nonzero().ravel()
    assert not b.visible[0, 1][branch].any() and not b.visible[0][branch, 1].any()
    keep = K.make_batch(data, torch.tensor([0]), v, mask_at=torch.tensor([3]))
    assert keep.visible[0, 1][branch].all()


def test_the_diagram_draws_and_validates():
    from companion.knowledge.diagram import draw_arms

    fig = draw_arms()
    assert fig.axes and len(fig.axes[0].patches) >= 10
    with pytest.raises(ValueError, match="at least one word"):
        draw_arms(())
