"""Three ways to put a knowledge graph into a small BERT, trained side by side on one world.

* ``"plain"``: masked-LM training on the text only (BERT).
* ``"ernie"`` (Zhang et al. 2019): frozen TransE vectors of the entities are *fused* into the
  hidden states at the tokens that name them, between two Transformer blocks::

      h_j = GELU(W_t w_j + W_e e_k + b),   w_j' = LN(w_j + W_o h_j),   e_k' = W_d h_j

  and a second loss, the *denoising entity auto-encoder* (dEA), asks ``e_k'`` to pick the aligned
  entity among all entities after 15 % of the alignments were dropped and 5 % replaced.
* ``"kepler"`` (Wang et al. 2021): no entity vectors enter the model; instead the model's own
  encoding of each entity's description (here ``[CLS] name [SEP]``, read at ``[CLS]``) is
  trained with a TransE-style knowledge-embedding (KE) loss on the KG, jointly with the MLM loss::

      L_KE = -log sigma(gamma - d(h, t)) - mean_i log sigma(d(h'_i, t'_i) - gamma),
      d(h, t) = ||E(h) + r - E(t)||_2

* ``"kbert"`` (Liu et al. 2020): each entity's KG triples are injected into the sentence as a
  branch, with soft positions and the visible matrix of :mod:`companion.probing.knowledge`.

Every arm starts from the same BERT initialisation and sees the same MLM batches and masks in
the same order (the arm's own modules are initialised from another seed); only the knowledge
differs. The cloze probe asks ``"X was born in [MASK] ."`` and scores precision@1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..device import get_device
from ..probing import knowledge as kn
from ..transformer.bert import BertConfig, BertEncoder, MLMHead
from ..transformer.blocks import init_weights
from .world import RELATIONS, World

ARMS: tuple[str, ...] = ("plain", "ernie", "kepler", "kbert")


@dataclass(frozen=True)
class ArmConfig:
    """The BERT and its training, shared by every arm.

    Attributes:
        d_model, n_layer, n_head, max_len: the tiny BERT.
        steps, batch_size, lr, warmup: AdamW with a linear warm-up, then constant.
        mask_p: the MLM masking rate (80/10/10 as in BERT).
        fuse_at: ERNIE fuses entities into the input of this block (0 = before the first).
        dea_weight, ke_weight: weights of the dEA and KE losses next to the MLM loss.
        ke_batch, ke_negatives, ke_margin: triples per step, corruptions per triple and
            ``gamma`` of KEPLER's loss.
        seed: the BERT's initialisation, the batches and the masks.
    """

    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4
    max_len: int = 32
    steps: int = 1500
    batch_size: int = 64
    lr: float = 2e-3
    warmup: int = 100
    mask_p: float = 0.15
    fuse_at: int = 1
    dea_weight: float = 1.0
    ke_weight: float = 1.0
    ke_batch: int = 32
    ke_negatives: int = 4
    ke_margin: float = 4.0
    seed: int = 0

    def validate(self) -> None:
        for name in ("d_model", "n_layer", "n_head", "max_len", "steps", "batch_size", "ke_batch",
                     "ke_negatives"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"ArmConfig.{name} must be a positive int, got {v!r}")
        if not 0 <= self.fuse_at < self.n_layer:
            raise ValueError(f"ArmConfig.fuse_at must be in [0, n_layer={self.n_layer}), got {self.fuse_at}")
        if not 0 < self.mask_p < 1:
            raise ValueError(f"ArmConfig.mask_p must be in (0, 1), got {self.mask_p}")

    def bert(self, vocab_size: int) -> BertConfig:
        return BertConfig(vocab_size=vocab_size, max_len=self.max_len, n_layer=self.n_layer,
                          n_head=self.n_head, d_model=self.d_model)


class ErnieFusion(nn.Module):
    """ERNIE's information fusion for one layer: token states ``w [B, T, d]`` and aligned entity
    vectors ``e [B, T, k]`` (zeros where no entity is aligned) give new token states and the
    entity outputs used by the dEA loss."""

    def __init__(self, d_model: int, d_entity: int):
        super().__init__()
        self.w_t = nn.Linear(d_model, d_model)
        self.w_e = nn.Linear(d_entity, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model)
        self.w_d = nn.Linear(d_model, d_entity)
        self.ln = nn.LayerNorm(d_model, eps=1e-12)
        self.d_model, self.d_entity = d_model, d_entity

    def forward(self, w: torch.Tensor, e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if w.dim() != 3 or w.shape[-1] != self.d_model:
            raise ValueError(f"token states must be [B, T, {self.d_model}], got {tuple(w.shape)}")
        if e.shape != (*w.shape[:2], self.d_entity):
            raise ValueError(f"entity vectors must be [B, T, {self.d_entity}] to match the tokens, got {tuple(e.shape)}")
        h = F.gelu(self.w_t(w) + self.w_e(e))
        return self.ln(w + self.w_o(h)), self.w_d(h)


class KnowledgeBert(nn.Module):
    """Our BERT (:class:`~companion.transformer.bert.BertEncoder` + MLM head) with one arm's
    knowledge machinery.

    Args:
        vocab_size: the word vocabulary (specials at ids 0-4).
        config: an :class:`ArmConfig`.
        arm: one of :data:`ARMS`.
        entity_vectors: ``[n_entities, k]`` frozen TransE vectors (``"ernie"`` only).
        n_relations: for KEPLER's relation vectors.
        device: where to put the model.
    """

    def __init__(self, vocab_size: int, config: ArmConfig, arm: str = "plain",
                 entity_vectors: torch.Tensor | None = None, n_relations: int = len(RELATIONS),
                 device: str | torch.device | None = None):
        super().__init__()
        if arm not in ARMS:
            raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
        config.validate()
        self.arm, self.config = arm, config
        bc = config.bert(vocab_size)
        self.encoder = BertEncoder(bc, seed=config.seed)
        torch.manual_seed(config.seed)
        self.head = MLMHead(bc, self.encoder.embeddings.tok)
        init_weights(self.head)
        self.head.decoder.weight = self.encoder.embeddings.tok.weight
        torch.manual_seed(config.seed + 10_000)  # the arm's own modules: another stream
        if arm == "ernie":
            if entity_vectors is None or entity_vectors.dim() != 2:
                raise ValueError("arm 'ernie' needs entity_vectors, a [n_entities, k] tensor")
            self.register_buffer("entities", entity_vectors.detach().float().clone())
            self.fusion = ErnieFusion(bc.d_model, entity_vectors.shape[1])
        elif arm == "kepler":
            self.relations = nn.Embedding(n_relations, bc.d_model)
            nn.init.normal_(self.relations.weight, std=0.1)
        self.to(get_device(device))

    @property
    def device(self) -> torch.device:
        return self.encoder.embeddings.tok.weight.device

    def forward(self, ids: torch.Tensor, entity_ids: torch.Tensor | None = None,
                positions: torch.Tensor | None = None, visible: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Hidden states ``[B, T, d]`` and (ERNIE) the entity outputs ``[B, T, k]``.

        ``entity_ids [B, T]`` (-1: no entity) is read by ERNIE; ``positions [B, T]`` and
        ``visible [B, T, T]`` (True: may attend) are K-BERT's soft positions and visible matrix
        (default: 0, 1, 2, ... and everyone sees every non-pad token)."""
        e = self.encoder.embeddings
        if ids.dim() != 2:
            raise ValueError(f"ids must be [batch, length], got shape {tuple(ids.shape)}")
        pad = ids == self.encoder.config.pad_id
        if positions is None:
            positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        if positions.shape != ids.shape:
            raise ValueError(f"positions must have the shape of ids {tuple(ids.shape)}, got {tuple(positions.shape)}")
        if visible is None:
            visible = ~pad[:, None, :].expand(-1, ids.shape[1], -1)
        if visible.shape != (*ids.shape, ids.shape[1]):
            raise ValueError(f"visible must be [B, T, T] for ids {tuple(ids.shape)}, got {tuple(visible.shape)}")
        x = e.drop(e.ln(e.tok(ids) + e.seg(torch.zeros_like(ids)) + e.pos(positions)))
        ent_out = None
        for i, block in enumerate(self.encoder.blocks):
            if self.arm == "ernie" and i == self.config.fuse_at:
                if entity_ids is None or entity_ids.shape != ids.shape:
                    raise ValueError("arm 'ernie' needs entity_ids with the shape of ids (-1: no entity)")
                vec = self.entities[entity_ids.clamp(min=0)] * (entity_ids >= 0).unsqueeze(-1)
                x, ent_out = self.fusion(x, vec)
            x = block(x, visible)
        return x, ent_out

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head(hidden)

    def describe(self, entity: torch.Tensor, cls_id: int, sep_id: int, name_ids: torch.Tensor) -> torch.Tensor:
        """KEPLER's entity vector: the ``[CLS]`` state of ``[CLS] name [SEP]`` (``[N, d]``)."""
        n = len(entity)
        ids = torch.stack([torch.full((n,), cls_id, device=self.device), name_ids[entity],
                           torch.full((n,), sep_id, device=self.device)], dim=1)
        return self(ids)[0][:, 0]


# ------------------------------------------------------------------------------------ the data


@dataclass
class Batch:
    ids: torch.Tensor        # [B, T] inputs (masked)
    labels: torch.Tensor     # [B, T] targets, -100 where not predicted
    entity_ids: torch.Tensor  # [B, T] aligned entity, -1 none
    positions: torch.Tensor  # [B, T]
    visible: torch.Tensor    # [B, T, T]

    def to(self, device) -> Batch:
        return Batch(*(t.to(device) for t in (self.ids, self.labels, self.entity_ids, self.positions,
                                               self.visible)))


def kb_from_triples(world: World, triples: Sequence[tuple[int, int, int]] | None = None
                    ) -> dict[str, list[tuple[str, str]]]:
    """K-BERT's knowledge base from the KG: entity name -> ``[(relation, object name)]``."""
    triples = world.triples if triples is None else triples
    return kn.knowledge_base([kn.Triple(world.entities[h], RELATIONS[r], world.entities[t])
                              for h, r, t in triples])


@dataclass
class Encoded:
    """Sentences as padded tensors: ids, entity alignment (-1 none), positions, visible matrices
    and which tokens may be masked (trunk words)."""

    ids: torch.Tensor       # [N, T]
    entity: torch.Tensor    # [N, T]
    pos: torch.Tensor       # [N, T]
    visible: torch.Tensor   # [N, T, T]
    maskable: torch.Tensor  # [N, T]
    anchor: torch.Tensor | None = None  # [N, T] the entity a branch token hangs from, -1 trunk

    def __len__(self) -> int:
        return len(self.ids)


def encode(sentences: Sequence[Sequence[str]], vocab: Mapping[str, int], world: World,
           kb: Mapping | None = None, max_len: int = 32) -> Encoded:
    """Each sentence as ``[CLS] words [SEP]``, padded to the longest; with ``kb``, K-BERT's
    branches are injected (soft positions, visible matrix). Pads see only themselves."""
    if not len(sentences):
        raise ValueError("encode: no sentences")
    one = lambda w, _i: [vocab[w]]
    rows = []
    for s in sentences:
        unknown = [w for w in s if w not in vocab]
        if unknown:
            raise ValueError(f"words not in the vocabulary: {unknown[:5]}")
        tree = kn.sentence_tree(list(s), kb or {}, max_branches=2, start=1)
        enc = kn.encode_tree(tree, one, vocab["[CLS]"], vocab["[SEP]"])
        if enc.ids.shape[1] > max_len:
            raise ValueError(f"a sentence with its branches has {enc.ids.shape[1]} tokens > max_len={max_len}")
        words = ["[CLS]"] + tree.words + ["[SEP]"]
        trunk = [False] + [b < 0 for b in tree.branch] + [False]
        ent = [world.index.get(w, -1) if t else -1 for w, t in zip(words, trunk)]
        first = [a if isinstance(a, int) else int(a[0]) for a in tree.anchor]
        anchor = [-1] + [-1 if b < 0 else first[b] + 1 for b in tree.branch] + [-1]  # +1: [CLS]
        rows.append((enc.ids[0], ent, enc.positions[0], enc.visible[0], trunk, anchor))
    N, T = len(rows), max(len(r[0]) for r in rows)
    out = Encoded(torch.zeros(N, T, dtype=torch.long), torch.full((N, T), -1, dtype=torch.long),
                  torch.zeros(N, T, dtype=torch.long), torch.eye(T, dtype=torch.bool).repeat(N, 1, 1),
                  torch.zeros(N, T, dtype=torch.bool), torch.full((N, T), -1, dtype=torch.long))
    for b, (ids, ent, pos, vis, trunk, anchor) in enumerate(rows):
        n = len(ids)
        out.ids[b, :n], out.pos[b, :n] = ids, pos
        out.entity[b, :n] = torch.tensor(ent)
        out.visible[b, :n, :n] = vis
        out.maskable[b, :n] = torch.tensor(trunk)
        out.anchor[b, :n] = torch.tensor(anchor)
    return out


def make_batch(data: Encoded, idx: torch.Tensor, vocab: Mapping[str, int], mask_p: float = 0.0,
               generator: torch.Generator | None = None, mask_at: torch.Tensor | None = None) -> Batch:
    """Rows ``idx`` of ``data``; trunk words masked at rate ``mask_p`` (80 % ``[MASK]``, 10 % a
    random word, 10 % kept), or exactly at the positions ``mask_at`` (one per row, always
    ``[MASK]``: the cloze probe). A masked token loses its entity alignment, and the K-BERT
    branches of a masked entity are cut off (as if the masked word had not been looked up)."""
    ids, ent = data.ids[idx], data.entity[idx]
    may = data.maskable[idx]
    B, T = ids.shape
    labels = torch.full_like(ids, -100)
    if mask_at is not None:
        chosen = torch.zeros_like(may)
        chosen[torch.arange(B), torch.as_tensor(mask_at)] = True
        labels[chosen] = ids[chosen]
        ids = ids.masked_fill(chosen, vocab["[MASK]"])
    else:
        chosen = may & (torch.rand(B, T, generator=generator) < mask_p)
        labels[chosen] = ids[chosen]
        u = torch.rand(B, T, generator=generator)
        rand = torch.randint(5, len(vocab), (B, T), generator=generator)
        ids = torch.where(chosen & (u < 0.8), torch.full_like(ids, vocab["[MASK]"]), ids)
        ids = torch.where(chosen & (u >= 0.8) & (u < 0.9), rand, ids)
    visible = data.visible[idx]
    if data.anchor is not None:  # a masked entity's branches are hidden: they would give it away
        anchor = data.anchor[idx]
        hide = (anchor >= 0) & chosen.gather(1, anchor.clamp(min=0))
        if hide.any():
            visible = visible & ~hide[:, None, :] & ~hide[:, :, None]
            visible = visible | torch.eye(T, dtype=torch.bool)
    return Batch(ids, labels, ent.masked_fill(chosen, -1), data.pos[idx], visible)


# ------------------------------------------------------------------------------------ training


@dataclass
class ArmRun:
    model: KnowledgeBert
    losses: list[float]
    seconds: float
    kb: dict | None


def _ke_loss(model: KnowledgeBert, triples: torch.Tensor, n_entities: int, name_ids: torch.Tensor,
             cls_id: int, sep_id: int, g: torch.Generator) -> torch.Tensor:
    c = model.config
    k = c.ke_negatives
    pick = triples[torch.randint(len(triples), (c.ke_batch,), generator=g)]
    h, r, t = pick.T
    neg = torch.randint(n_entities, (c.ke_batch, k), generator=g)
    head_side = torch.rand(c.ke_batch, k, generator=g) < 0.5
    nh = torch.where(head_side, neg, h[:, None])
    nt = torch.where(head_side, t[:, None], neg)
    ents = torch.cat([h, t, nh.ravel(), nt.ravel()])
    uniq, inv = torch.unique(ents, return_inverse=True)
    dev = model.device
    vec = model.describe(uniq.to(dev), cls_id, sep_id, name_ids)[inv.to(dev)]
    B = c.ke_batch
    eh, et = vec[:B], vec[B:2 * B]
    enh, ent = vec[2 * B:2 * B + B * k].view(B, k, -1), vec[2 * B + B * k:].view(B, k, -1)
    rel = model.relations(r.to(dev))
    d_pos = (eh + rel - et).norm(dim=-1)
    d_neg = (enh + rel[:, None] - ent).norm(dim=-1)
    return (-F.logsigmoid(c.ke_margin - d_pos) - F.logsigmoid(d_neg - c.ke_margin).mean(1)).mean()


def train_arm(world: World, vocab: Mapping[str, int], arm: str, config: ArmConfig | None = None,
              entity_vectors: torch.Tensor | None = None, kb_triples=None,
              device: str | torch.device | None = None) -> ArmRun:
    """Train one arm on the world's text (and, by arm, its KG) for ``config.steps`` steps.

    ``entity_vectors`` (ERNIE) are the TransE vectors, possibly shuffled for a control;
    ``kb_triples`` (K-BERT) the triples injected as branches (default: the whole KG)."""
    c = config or ArmConfig()
    c.validate()
    model = KnowledgeBert(len(vocab), c, arm, entity_vectors=entity_vectors, device=device)
    kb = kb_from_triples(world, kb_triples) if arm == "kbert" else None
    data = encode(world.sentences, vocab, world, kb=kb, max_len=c.max_len)
    g = torch.Generator().manual_seed(c.seed)       # batches and masks: the same for every arm
    g_arm = torch.Generator().manual_seed(c.seed + 1)  # dEA noise, KE samples
    opt = torch.optim.AdamW(model.parameters(), lr=c.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / c.warmup))
    triples = torch.as_tensor(world.triples)
    name_ids = torch.tensor([vocab[n] for n in world.entities], device=model.device)
    losses, t0 = [], time.perf_counter()
    model.train()
    for _ in range(c.steps):
        idx = torch.randint(len(data), (c.batch_size,), generator=g)
        batch = make_batch(data, idx, vocab, c.mask_p, generator=g).to(model.device)
        ent_in = batch.entity_ids
        if arm == "ernie":  # dEA: drop 15 % of the alignments, replace 5 %, predict them all
            u = torch.rand(ent_in.shape, generator=g_arm).to(model.device)
            rnd = torch.randint(world.n_entities, ent_in.shape, generator=g_arm).to(model.device)
            has = ent_in >= 0
            ent_in = torch.where(has & (u < 0.15), torch.full_like(ent_in, -1), ent_in)
            ent_in = torch.where(has & (u >= 0.15) & (u < 0.2), rnd, ent_in)
        hidden, ent_out = model(batch.ids, ent_in, batch.positions, batch.visible)
        logits = model.logits(hidden)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), batch.labels.view(-1), ignore_index=-100)
        if arm == "ernie":
            has = batch.entity_ids >= 0
            dea = ent_out[has] @ model.entities.T
            loss = loss + c.dea_weight * F.cross_entropy(dea, batch.entity_ids[has])
        elif arm == "kepler":
            loss = loss + c.ke_weight * _ke_loss(model, triples, world.n_entities, name_ids,
                                                 vocab["[CLS]"], vocab["[SEP]"], g_arm)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return ArmRun(model, losses, time.perf_counter() - t0, kb)


@torch.no_grad()
def cloze(model: KnowledgeBert, world: World, vocab: Mapping[str, int], people: Sequence[int],
          kb: Mapping | None = None, candidates: Sequence[int] | None = None) -> np.ndarray:
    """The cloze probe ``"X was born in [MASK] ."`` for each person: 1 where the model's top word
    is the person's birthplace (over the whole vocabulary, or over ``candidates``' names)."""
    if not len(people):
        raise ValueError("cloze: people is empty")
    sents, gold = world.probe(list(people))
    data = encode(sents, vocab, world, kb=kb, max_len=model.config.max_len)
    at = (data.ids == vocab["[MASK]"]).int().argmax(1)  # the probe's [MASK]
    b = make_batch(data, torch.arange(len(data)), vocab, mask_at=at).to(model.device)
    hidden, _ = model(b.ids, b.entity_ids, b.positions, b.visible)
    logits = model.logits(hidden[torch.arange(len(at)), at.to(model.device)])
    if candidates is not None:
        keep = torch.tensor([vocab[world.entities[e]] for e in candidates])
        mask = torch.full((logits.shape[-1],), -math.inf, device=logits.device)
        mask[keep] = 0
        logits = logits + mask
    top = logits.argmax(-1).cpu()
    want = torch.tensor([vocab[world.entities[g]] for g in gold])
    return (top == want).numpy().astype(float)


def frequency_cloze(world: World, people: Sequence[int]) -> np.ndarray:
    """The frequency baseline: always answer the city most often a birthplace in the text."""
    from .world import birth_frequency

    top = birth_frequency(world).most_common(1)[0][0]
    return np.array([float(world.born[p] == top) for p in people])


def country_frequency_cloze(world: World, people: Sequence[int]) -> np.ndarray:
    """A stronger shortcut: the most frequent birthplace *in the person's country* (what the
    text's "X is a citizen of K" sentences allow; people without one get the overall top)."""
    from .world import birth_frequency

    freq = birth_frequency(world)
    rel = RELATIONS.index("citizen_of")
    country = {h: t for h, r, t in world.triples if r == rel}
    located = {h: t for h, r, t in world.triples if r == RELATIONS.index("located_in")}
    stated = {s[0] for s in world.sentences if " ".join(s[1:5]) == "is a citizen of"}
    out = []
    for p in people:
        pool = [c for c in freq if world.entities[p] in stated and located[c] == country[p]] or list(freq)
        best = max(pool, key=lambda c: (freq[c], -c))
        out.append(float(best == world.born[p]))
    return np.array(out)
