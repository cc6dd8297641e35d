"""TransE (Bordes et al. 2013): a relation is a translation in the embedding space.

A triple ``(h, r, t)`` is plausible when ``e_h + r_r`` lies close to ``e_t``; its *energy* is
``d(h, r, t) = || e_h + r_r - e_t ||_p``. Training lowers the energy of true triples below that of
*corrupted* ones (head or tail replaced by a random entity) by a margin ``gamma``::

    L = sum over (h, r, t) and its corruption (h', r, t') of  [gamma + d(h, r, t) - d(h', r, t')]_+

with every entity vector renormalised to unit length before each step (the norm constraint that
keeps the loss from being minimised by blowing the vectors up). Link prediction ranks, for a test
triple, the true tail (or head) among all entities by energy; the *filtered* rank skips the other
entities that also make a true triple.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..device import get_device

Triples = Sequence[tuple[int, int, int]]


@dataclass(frozen=True)
class TransEConfig:
    """Sizes and training settings of TransE.

    Attributes:
        dim: the embedding size ``k``.
        margin: ``gamma`` of the margin ranking loss.
        p: the norm of the energy (1 or 2).
        lr: SGD learning rate per triple (the batch's loss is summed, so a step moves each
            triple's vectors as Bordes et al.'s one-triple SGD would); epochs, batch_size: how
            long and in what batches.
        seed: seeds the initialisation and the corruptions.
    """

    dim: int = 32
    margin: float = 1.0
    p: int = 2
    lr: float = 0.01
    epochs: int = 300
    batch_size: int = 128
    seed: int = 0

    def validate(self) -> None:
        if not isinstance(self.dim, int) or self.dim < 1:
            raise ValueError(f"TransEConfig.dim must be a positive int, got {self.dim!r}")
        if self.p not in (1, 2):
            raise ValueError(f"TransEConfig.p must be 1 or 2, got {self.p!r}")
        if not self.margin > 0:
            raise ValueError(f"TransEConfig.margin must be > 0, got {self.margin!r}")
        if self.epochs < 0 or self.batch_size < 1 or not self.lr > 0:
            raise ValueError(f"TransEConfig needs epochs >= 0, batch_size >= 1, lr > 0; got "
                             f"{self.epochs}, {self.batch_size}, {self.lr}")


def check_triples(triples, n_entities: int, n_relations: int, name: str = "triples") -> torch.Tensor:
    """``triples`` as a ``[N, 3]`` long tensor, with a clear error for a wrong shape or id."""
    t = torch.as_tensor(np.asarray(triples, dtype=np.int64) if not torch.is_tensor(triples) else triples)
    if t.dim() != 2 or t.shape[1] != 3 or len(t) == 0:
        raise ValueError(f"{name} must be a non-empty list of (head, relation, tail), got shape {tuple(t.shape)}")
    if t.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must hold integer ids, got {t.dtype}")
    ent, rel = t[:, [0, 2]], t[:, 1]
    if ent.min() < 0 or ent.max() >= n_entities:
        raise ValueError(f"{name}: entity ids must be in [0, {n_entities}), got {int(ent.min())}..{int(ent.max())}")
    if rel.min() < 0 or rel.max() >= n_relations:
        raise ValueError(f"{name}: relation ids must be in [0, {n_relations}), got {int(rel.min())}..{int(rel.max())}")
    return t.long()


class TransE(nn.Module):
    """Entity and relation embeddings; ``energy(h, r, t) = ||e_h + r_r - e_t||_p``."""

    def __init__(self, n_entities: int, n_relations: int, config: TransEConfig | None = None,
                 device: str | torch.device | None = None):
        super().__init__()
        self.config = c = config or TransEConfig()
        c.validate()
        if n_entities < 2 or n_relations < 1:
            raise ValueError(f"TransE needs n_entities >= 2 and n_relations >= 1, got {n_entities}, {n_relations}")
        g = torch.Generator().manual_seed(c.seed)
        bound = 6 / c.dim ** 0.5  # Bordes et al.'s uniform initialisation
        self.entity = nn.Parameter((torch.rand(n_entities, c.dim, generator=g) * 2 - 1) * bound)
        rel = (torch.rand(n_relations, c.dim, generator=g) * 2 - 1) * bound
        self.relation = nn.Parameter(rel / rel.norm(dim=1, keepdim=True))
        self.normalise()
        self.to(get_device(device))

    @torch.no_grad()
    def normalise(self) -> None:
        """The norm constraint: every entity vector back to unit length."""
        self.entity.div_(self.entity.norm(dim=1, keepdim=True).clamp(min=1e-12))

    def energy(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``||e_h + r_r - e_t||_p`` for id tensors of the same shape."""
        return (self.entity[h] + self.relation[r] - self.entity[t]).norm(p=self.config.p, dim=-1)

    def tail_energies(self, h: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """``[N, E]``: the energy of ``(h, r, e)`` for every entity ``e``."""
        q = self.entity[h] + self.relation[r]
        return torch.cdist(q, self.entity, p=self.config.p)

    def head_energies(self, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``[N, E]``: the energy of ``(e, r, t)`` for every entity ``e``."""
        q = self.entity[t] - self.relation[r]
        return torch.cdist(q, self.entity, p=self.config.p)


def margin_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float) -> torch.Tensor:
    """Mean of ``[margin + pos - neg]_+``: zero once each true triple's energy is ``margin`` below
    its corruption's."""
    if pos.shape != neg.shape:
        raise ValueError(f"pos and neg energies must have the same shape, got {tuple(pos.shape)} and {tuple(neg.shape)}")
    return torch.clamp(margin + pos - neg, min=0).mean()


def corrupt(triples: torch.Tensor, n_entities: int, generator: torch.Generator) -> torch.Tensor:
    """Replace the head or the tail (each with probability 1/2) of every triple by a uniformly
    drawn entity (Bordes et al.'s corruption; a draw may hit a true triple, as in the paper)."""
    out = triples.clone()
    swap_head = torch.rand(len(out), generator=generator) < 0.5
    new = torch.randint(n_entities, (len(out),), generator=generator)
    out[swap_head, 0] = new[swap_head]
    out[~swap_head, 2] = new[~swap_head]
    return out


def train_transe(triples: Triples, n_entities: int, n_relations: int, config: TransEConfig | None = None,
                 device: str | torch.device | None = None) -> tuple[TransE, list[float]]:
    """Train TransE by SGD on the margin loss; returns the model and the mean loss per epoch."""
    c = config or TransEConfig()
    model = TransE(n_entities, n_relations, c, device=device)
    data = check_triples(triples, n_entities, n_relations).to(model.entity.device)
    g = torch.Generator().manual_seed(c.seed + 1)
    opt = torch.optim.SGD(model.parameters(), lr=c.lr)
    losses = []
    for _ in range(c.epochs):
        perm = torch.randperm(len(data), generator=g)
        total = 0.0
        for i in range(0, len(data), c.batch_size):
            batch = data[perm[i:i + c.batch_size].to(data.device)]
            neg = corrupt(batch.cpu(), n_entities, g).to(data.device)
            model.normalise()
            loss = margin_loss(model.energy(*batch.T), model.energy(*neg.T), c.margin)
            opt.zero_grad()
            (loss * len(batch)).backward()  # summed: one SGD step per triple's worth
            opt.step()
            total += float(loss.detach()) * len(batch)
        losses.append(total / len(data))
    model.normalise()
    return model, losses


def known_answers(triples: Triples) -> tuple[dict, dict]:
    """``(h, r) -> {t}`` and ``(r, t) -> {h}`` over all true triples (for filtered ranking)."""
    tails, heads = defaultdict(set), defaultdict(set)
    for h, r, t in triples:
        tails[(int(h), int(r))].add(int(t))
        heads[(int(r), int(t))].add(int(h))
    return tails, heads


def filtered_ranks(energies: torch.Tensor, gold: Sequence[int], others: Sequence[set[int]]) -> np.ndarray:
    """Rank (1 = best) of ``gold[i]`` in row ``i`` of ``energies`` (lower is better), ignoring the
    entities in ``others[i]`` (the other true answers) but never the gold one. Ties count against
    the gold entity (an entity with the same energy ranks before it), so a constant scorer gets
    no credit."""
    e = torch.as_tensor(energies, dtype=torch.float64)
    if e.dim() != 2 or len(e) != len(gold) or len(gold) != len(others):
        raise ValueError(f"energies must be [N, E] with N = len(gold) = len(others), got {tuple(e.shape)}, "
                         f"{len(gold)}, {len(others)}")
    ranks = np.empty(len(gold), dtype=np.int64)
    for i, g in enumerate(gold):
        if not 0 <= int(g) < e.shape[1]:
            raise ValueError(f"gold[{i}] = {g} is not an entity id in [0, {e.shape[1]})")
        row = e[i].clone()
        skip = [o for o in others[i] if o != g]
        if skip:
            row[skip] = float("inf")
        ranks[i] = int((row <= row[int(g)]).sum())
    return ranks


def ranking_metrics(ranks: np.ndarray) -> dict[str, float]:
    """MRR and Hits@1/@10 of an array of ranks."""
    ranks = np.asarray(ranks, dtype=float)
    if ranks.size == 0 or ranks.min() < 1:
        raise ValueError("ranks must be a non-empty array of ranks >= 1")
    return {"MRR": float(np.mean(1 / ranks)), "Hits@1": float(np.mean(ranks <= 1)),
            "Hits@10": float(np.mean(ranks <= 10))}


def link_prediction_ranks(score_tails, score_heads, test: Triples, all_triples: Triples) -> np.ndarray:
    """Filtered ranks of every test triple's tail and head (2 ranks a triple). ``score_tails(h, r)``
    and ``score_heads(r, t)`` return ``[N, E]`` energies (lower = more plausible)."""
    tails, heads = known_answers(all_triples)
    t = torch.as_tensor(np.asarray(test, dtype=np.int64))
    h, r, tt = t.T
    with torch.no_grad():
        rt = filtered_ranks(score_tails(h, r).cpu(), tt.tolist(), [tails[(int(a), int(b))] for a, b in zip(h, r)])
        rh = filtered_ranks(score_heads(r, tt).cpu(), h.tolist(), [heads[(int(b), int(c))] for b, c in zip(r, tt)])
    return np.concatenate([rt, rh])


def transe_ranks(model: TransE, test: Triples, all_triples: Triples) -> np.ndarray:
    """:func:`link_prediction_ranks` with TransE's energies."""
    dev = model.entity.device
    return link_prediction_ranks(lambda h, r: model.tail_energies(h.to(dev), r.to(dev)),
                                 lambda r, t: model.head_energies(r.to(dev), t.to(dev)), test, all_triples)


def frequency_ranks(train: Triples, test: Triples, all_triples: Triples, n_entities: int) -> np.ndarray:
    """The frequency baseline: for relation ``r``, rank candidate tails by how often they are a
    tail of ``r`` in the training triples (heads likewise), whatever the query entity."""
    tail_count, head_count = defaultdict(Counter), defaultdict(Counter)
    for h, r, t in train:
        tail_count[int(r)][int(t)] += 1
        head_count[int(r)][int(h)] += 1

    def table(counts, rels):
        out = torch.zeros(len(rels), n_entities)
        for i, r in enumerate(rels.tolist()):
            for e, n in counts[r].items():
                out[i, e] = -n  # lower energy = more frequent
        return out

    return link_prediction_ranks(lambda h, r: table(tail_count, r), lambda r, t: table(head_count, r),
                                 test, all_triples)


def split_triples(triples: Triples, test_share: float = 0.1, seed: int = 0
                  ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """A random train/test split of the KG; a test triple whose head or tail never occurs in the
    training triples is moved back to training (its embedding could not be learnt)."""
    if not 0 < test_share < 1:
        raise ValueError(f"test_share must be in (0, 1), got {test_share!r}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(triples))
    n_test = int(round(test_share * len(triples)))
    test = [tuple(map(int, triples[i])) for i in order[:n_test]]
    train = [tuple(map(int, triples[i])) for i in order[n_test:]]
    seen = Counter(e for h, _, t in train for e in (h, t))
    keep = []
    for h, r, t in test:
        (keep if seen[h] and seen[t] else train).append((h, r, t))
    return train, keep
