"""Chapter 12a's experiments: sizes per scale, one seed of every arm, the stored multi-seed run
and its summaries.

One *seed* is a world (generated from the seed), TransE on its KG, and every arm trained from
the same BERT initialisation on the same batches. The arms:

* ``plain``: MLM on the text;
* ``ernie``: TransE vectors fused at the entity tokens, MLM + dEA;
* ``ernie_shuffled``: the same with the people's TransE vectors permuted among the people (the
  negative anchor: knowledge-shaped vectors that carry the wrong facts); the trained ``ernie``
  model is also probed with the shuffled vectors (``ernie_wrong_vectors``);
* ``kepler``: MLM + the KE loss on the model's own description encodings;
* ``kbert``: the KG's triples injected as branches (soft positions, visible matrix); probed also
  with a KB whose birthplaces are permuted among the people (``kbert_wrong_kb``).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..scale import pick
from . import inject as K
from . import transe as T
from .world import RELATIONS, World, WorldConfig, make_world, vocabulary

RESULTS = Path(__file__).with_name("ch12a_results.json")
ARMS: tuple[str, ...] = ("plain", "ernie", "ernie_shuffled", "kepler", "kbert")


@dataclass(frozen=True)
class Sizes:
    world: WorldConfig
    transe: T.TransEConfig
    arm: K.ArmConfig


def sizes(scale: str | None = None) -> Sizes:
    """The chapter's sizes at this ``BOOK_SCALE`` (``ci`` is a smoke test of the same code)."""
    world = WorldConfig(n_people=pick(ci=40, laptop=100, scale=scale), n_countries=3, cities_per_country=3)
    transe = T.TransEConfig(epochs=pick(ci=40, laptop=200, scale=scale))
    arm = K.ArmConfig(steps=pick(ci=30, laptop=600, scale=scale), batch_size=128, lr=5e-3, fuse_at=0)
    return Sizes(world, transe, arm)


def shuffled_people(vectors: torch.Tensor, world: World, seed: int = 0) -> torch.Tensor:
    """``vectors`` with the people's rows permuted among the people (cities and countries kept)."""
    people = [i for i, k in enumerate(world.kind) if k == "person"]
    perm = torch.tensor(people)[torch.randperm(len(people), generator=torch.Generator().manual_seed(seed))]
    out = vectors.clone()
    out[people] = vectors[perm]
    return out


def wrong_kb_triples(world: World, seed: int = 0) -> list[tuple[int, int, int]]:
    """The KG with every person's facts (birthplace, citizenship) moved to another person."""
    people = [i for i, k in enumerate(world.kind) if k == "person"]
    rng = np.random.default_rng(seed)
    to = dict(zip(people, rng.permutation(people).tolist()))
    return [(to.get(h, h), r, t) for h, r, t in world.triples]


def link_prediction(world: World, config: T.TransEConfig, device="cpu") -> dict[str, dict[str, float]]:
    """TransE on 90 % of the KG, ranked on the other 10 % (filtered), against an untrained TransE
    (random vectors) and the frequency baseline."""
    train, test = T.split_triples(world.triples, 0.1, seed=world.config.seed)
    n_rel = len(RELATIONS)
    model, _ = T.train_transe(train, world.n_entities, n_rel, config, device=device)
    untrained = T.TransE(world.n_entities, n_rel, config, device=device)
    return {"TransE": T.ranking_metrics(T.transe_ranks(model, test, world.triples)),
            "random vectors": T.ranking_metrics(T.transe_ranks(untrained, test, world.triples)),
            "frequency": T.ranking_metrics(T.frequency_ranks(train, test, world.triples, world.n_entities))}


def run_seed(seed: int, s: Sizes | None = None, arms=ARMS, device="cpu", log=None, link: bool = True) -> dict:
    """Every arm on the world of ``seed``: cloze precision@1 per held-out person (facts in the KG
    only) and on the people whose birthplace the text states, the baselines, and (``link``)
    TransE's link prediction."""
    s = s or sizes()
    world = make_world(dataclasses.replace(s.world, seed=seed))
    vocab = vocabulary(world)
    arm_cfg = dataclasses.replace(s.arm, seed=seed)
    out = {"seed": seed, "held_out": {}, "seen": {}, "final_loss": {}, "seconds": {}}
    if link:
        out["link_prediction"] = link_prediction(world, dataclasses.replace(s.transe, seed=seed), device)
    vectors = None if not {"ernie", "ernie_shuffled"} & set(arms) else T.train_transe(world.triples, world.n_entities, len(RELATIONS),
                             dataclasses.replace(s.transe, seed=seed), device=device)[0].entity.detach().cpu()
    out["held_out"]["frequency"] = K.frequency_cloze(world, world.held_out).tolist()
    out["held_out"]["country frequency"] = K.country_frequency_cloze(world, world.held_out).tolist()
    for arm in arms:
        vec = shuffled_people(vectors, world, seed) if arm == "ernie_shuffled" else vectors
        run = K.train_arm(world, vocab, arm.replace("_shuffled", ""), arm_cfg, entity_vectors=vec, device=device)
        out["held_out"][arm] = K.cloze(run.model, world, vocab, world.held_out, kb=run.kb).tolist()
        out["seen"][arm] = K.cloze(run.model, world, vocab, world.seen, kb=run.kb).tolist()
        out["final_loss"][arm] = float(np.mean(run.losses[-50:]))
        out["seconds"][arm] = round(run.seconds, 1)
        if arm == "ernie":  # the same model, each person given another person's vector
            run.model.entities.copy_(shuffled_people(vectors, world, seed))
            out["held_out"]["ernie_wrong_vectors"] = K.cloze(run.model, world, vocab, world.held_out).tolist()
        if arm == "kbert":
            wrong = K.kb_from_triples(world, wrong_kb_triples(world, seed))
            out["held_out"]["kbert_wrong_kb"] = K.cloze(run.model, world, vocab, world.held_out, kb=wrong).tolist()
        if log:
            log(f"seed {seed} {arm}: held-out {np.mean(out['held_out'][arm]):.3f}, "
                f"seen {np.mean(out['seen'][arm]):.3f}, {run.seconds:.0f} s")
    return out


def load_results(path: Path = RESULTS) -> dict:
    """The stored multi-seed run (see its ``command``, ``date`` and ``machine``)."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no stored results at {path}")
    return json.loads(Path(path).read_text(encoding="utf-8"))


def accuracy_table(runs: list[dict], key: str = "held_out") -> dict[str, dict[str, float]]:
    """Per arm: mean precision@1 over the seeds that ran it, its min and max, and how many."""
    names = list(dict.fromkeys(n for r in runs for n in r[key]))
    out = {}
    for n in names:
        acc = [float(np.mean(r[key][n])) for r in runs if n in r[key]]
        out[n] = {"mean": float(np.mean(acc)), "min": float(np.min(acc)), "max": float(np.max(acc)),
                  "seeds": len(acc)}
    return out


def paired_gain(runs: list[dict], arm: str, base: str = "plain", key: str = "held_out"
                ) -> tuple[float, tuple[float, float], list[float]]:
    """``arm`` minus ``base`` precision@1 per seed: mean and a t interval (95 %) over seeds."""
    from scipy import stats

    d = np.array([np.mean(r[key][arm]) - np.mean(r[key][base]) for r in runs
                  if arm in r[key] and base in r[key]])
    if len(d) == 0:
        raise ValueError(f"paired_gain: no seed ran both {arm!r} and {base!r}")
    if len(d) < 2:  # no spread from one seed: a zero-width interval, to be marked not testable
        return float(d.mean()), (float(d.mean()), float(d.mean())), d.tolist()
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean()), (float(d.mean() - half), float(d.mean() + half)), d.tolist()


def seen_frequency(stored: dict) -> float:
    """The frequency baseline on the people whose birthplace the text states, averaged over the
    stored seeds (the worlds are rebuilt from the stored sizes): what a model that learned no
    fact of the text would get on them."""
    cfg = WorldConfig(**stored["sizes"]["world"])
    acc = [K.frequency_cloze(w, w.seen).mean()
           for w in (make_world(dataclasses.replace(cfg, seed=r["seed"])) for r in stored["runs"])]
    return float(np.mean(acc))


def unigram_entropy(stored: dict) -> float:
    """The unigram plateau: the entropy (nats) of the text's word distribution, averaged over the
    stored worlds -- the masked-LM loss of a model that predicts every masked word from its
    frequency alone."""
    cfg = WorldConfig(**stored["sizes"]["world"])
    out = []
    for r in stored["runs"]:
        w = make_world(dataclasses.replace(cfg, seed=r["seed"]))
        counts = np.array(list(Counter(t for s in w.sentences for t in s).values()), dtype=float)
        p = counts / counts.sum()
        out.append(float(-(p * np.log(p)).sum()))
    return float(np.mean(out))
