"""TransE (chapter 12a): energy, margin loss, corruption, filtered ranking, the synthetic world."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from companion.knowledge import transe as T
from companion.knowledge.world import RELATIONS, WorldConfig, make_world, vocabulary


def _tiny() -> T.TransE:
    m = T.TransE(3, 1, T.TransEConfig(dim=2, p=1))
    with torch.no_grad():
        m.entity.copy_(torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
        m.relation.copy_(torch.tensor([[1.0, 0.0]]))
    return m


def test_energy_by_hand():
    m = _tiny()
    # e0 + r = (1, 0) = e1: energy 0; to e2: |1 - 0| + |0 - 1| = 2 (L1)
    e = m.energy(torch.tensor([0, 0]), torch.tensor([0, 0]), torch.tensor([1, 2]))
    assert e.tolist() == pytest.approx([0.0, 2.0])
    assert m.tail_energies(torch.tensor([0]), torch.tensor([0]))[0].tolist() == pytest.approx([1.0, 0.0, 2.0])
    # e1 - r = (0, 0): distances 0, 1, 1 to e0, e1, e2
    assert m.head_energies(torch.tensor([0]), torch.tensor([1]))[0].tolist() == pytest.approx([0.0, 1.0, 1.0])


def test_margin_loss_by_hand():
    pos, neg = torch.tensor([0.0, 2.0, 1.0]), torch.tensor([3.0, 2.5, 0.5])
    # [1 + 0 - 3]+ = 0, [1 + 2 - 2.5]+ = 0.5, [1 + 1 - 0.5]+ = 1.5 -> mean 2/3
    assert float(T.margin_loss(pos, neg, 1.0)) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="same shape"):
        T.margin_loss(pos, neg[:2], 1.0)


def test_corrupt_changes_exactly_one_side():
    t = torch.tensor([[0, 0, 1]] * 200)
    c = T.corrupt(t, 50, torch.Generator().manual_seed(0))
    assert (c[:, 1] == 0).all()
    head_same, tail_same = c[:, 0] == 0, c[:, 2] == 1
    assert (head_same | tail_same).all()
    assert 60 < int((~head_same).sum() + (head_same & tail_same).sum() // 2) < 140


def test_norm_constraint_and_training_lowers_loss():
    w = make_world(WorldConfig(n_people=40, n_countries=3, cities_per_country=2, seed=1))
    m, losses = T.train_transe(w.triples, w.n_entities, len(RELATIONS), T.TransEConfig(dim=8, epochs=30))
    assert torch.allclose(m.entity.norm(dim=1), torch.ones(w.n_entities), atol=1e-5)
    assert losses[-1] < losses[0]


def test_filtered_ranks_by_hand():
    e = torch.tensor([[0.5, 0.1, 0.3, 0.9], [0.2, 0.2, 0.4, 0.1]])
    # row 0: gold 2 (0.3); entity 1 (0.1) is another true answer -> filtered: rank 1
    # row 1: gold 0 (0.2); entity 1 ties (counts against), entity 3 (0.1) better -> rank 3
    ranks = T.filtered_ranks(e, [2, 0], [{1, 2}, {0}])
    assert ranks.tolist() == [1, 3]
    assert T.filtered_ranks(e, [2, 0], [set(), set()]).tolist() == [2, 3]
    m = T.ranking_metrics(np.array([1, 2, 20]))
    assert m["MRR"] == pytest.approx((1 + 0.5 + 0.05) / 3)
    assert m["Hits@10"] == pytest.approx(2 / 3)


def test_link_prediction_filters_other_true_tails():
    m = _tiny()
    # (0, 0, 1) is true; (0, 0, 0) is also true: the filtered rank of 1 stays 1
    ranks = T.transe_ranks(m, [(0, 0, 1)], [(0, 0, 1), (0, 0, 0)])
    assert ranks[0] == 1  # tail
    assert ranks[1] == 1  # head: e0 is the closest to e1 - r


def test_frequency_baseline_ignores_the_query():
    train = [(0, 0, 2), (1, 0, 2), (3, 0, 1)]
    ranks = T.frequency_ranks(train, [(4, 0, 2), (4, 0, 1)], train + [(4, 0, 2), (4, 0, 1)], 5)
    assert ranks[:2].tolist() == [1, 1]  # filtered: the other true tail is skipped


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="relation ids"):
        T.check_triples([(0, 5, 1)], 3, 2)
    with pytest.raises(ValueError, match="entity ids"):
        T.check_triples([(0, 0, 9)], 3, 2)
    with pytest.raises(ValueError, match="head, relation, tail"):
        T.check_triples([(0, 1)], 3, 2)
    with pytest.raises(ValueError, match="p must be 1 or 2"):
        T.TransE(3, 1, T.TransEConfig(p=3))
    with pytest.raises(ValueError, match="gold"):
        T.filtered_ranks(torch.zeros(1, 3), [7], [set()])
    with pytest.raises(ValueError, match="test_share"):
        T.split_triples([(0, 0, 1)], 1.5)
    with pytest.raises(ValueError, match="n_people"):
        make_world(WorldConfig(n_people=0))


def test_world_is_deterministic_and_holds_out_text():
    a, b = make_world(WorldConfig(n_people=50, seed=3)), make_world(WorldConfig(n_people=50, seed=3))
    assert a.sentences == b.sentences and a.triples == b.triples
    v = vocabulary(a)
    assert [v[s] for s in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 1, 2, 3, 4]
    text = {" ".join(s) for s in a.sentences}
    for p in a.held_out:  # the held-out birthplaces are in the KG but in no sentence
        city = a.entities[a.born[p]]
        name = a.entities[p]
        assert not any(t.startswith(name + " ") and city in t.split() and "born" in t or
                       t == f"the birthplace of {name} is {city} ." or t == f"{name} comes from {city} ."
                       for t in text)
        assert (p, RELATIONS.index("born_in"), a.born[p]) in a.triples
    train, test = T.split_triples(a.triples, 0.2, seed=0)
    assert sorted(train + test) == sorted(a.triples)
