"""Knowledge: what a masked LM knows (LAMA-style cloze probes) and one way to inject what it does
not (K-BERT, Liu et al. 2020).

**Cloze probes** (Petroni et al. 2019): a fact ``(subject, relation, object)`` becomes a sentence
with the object masked ("the capital of france is [MASK] ."); the model knows the fact if the
object is its top prediction (P@1). Only objects that are one token of the vocabulary count.

**K-BERT** injects triples from a knowledge base into the input at run time. Each entity of the
sentence found in the knowledge base grows a *branch* -- the relation and object tokens -- and
the sentence becomes a tree. Two devices keep the branch from changing the sentence's meaning
("knowledge noise"):

* **soft positions**: the branch continues the entity's position (``cook(1) ceo(2) apple(3)``)
  and the rest of the sentence continues from the entity too (``is(2) visiting(3)``), so the
  trunk keeps the positions it had without the branch;
* the **visible matrix** ``M``: trunk tokens see each other; a branch token sees its own branch
  and the entity it hangs from; nothing else sees a branch. ``M`` is the attention mask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    obj: str


def knowledge_base(triples: Sequence[Triple]) -> dict[str, list[tuple[str, str]]]:
    """Lower-cased subject -> ``[(relation, object), ...]`` in the order given."""
    kb: dict[str, list[tuple[str, str]]] = {}
    for t in triples:
        if not (t.subject and t.relation and t.obj):
            raise ValueError(f"a triple needs a subject, a relation and an object, got {t}")
        kb.setdefault(t.subject.lower(), []).append((t.relation, t.obj))
    return kb


@dataclass
class SentenceTree:
    """A sentence with branches, flattened in K-BERT's order (each branch right after its entity).

    Attributes:
        words: every token, trunk and branch, in reading order.
        soft: soft position of each token.
        branch: ``-1`` for a trunk token, else the branch's number.
        anchor: for each branch, the index (in ``words``) of the entity it hangs from, or the
            list of indices of its pieces (an entity split into word pieces: every piece of it
            sees the branch, as in K-BERT's code).
    """

    words: list[str]
    soft: list[int]
    branch: list[int]
    anchor: list[int | list[int]]
    source: list[int] | None = None  # piece trees: the sentence word each trunk piece comes from (-1: branch)

    @property
    def trunk(self) -> list[int]:
        return [i for i, b in enumerate(self.branch) if b < 0]


def sentence_tree(words: Sequence[str], kb: Mapping[str, Sequence[tuple[str, str]]], max_branches: int = 2,
                  start: int = 0) -> SentenceTree:
    """Attach up to ``max_branches`` triples to each word found (lower-cased) in ``kb``; a
    branch's tokens are the relation's and the object's words (split on spaces). ``start`` is
    the first soft position (1 after a [CLS] at 0)."""
    out, soft, branch, anchor = [], [], [], []
    pos = start
    for w in words:
        at = len(out)
        out.append(w)
        soft.append(pos)
        branch.append(-1)
        for rel, obj in list(kb.get(w.lower(), ()))[:max_branches]:
            b = len(anchor)
            anchor.append(at)
            for k, tok in enumerate((rel + " " + obj).split()):
                out.append(tok)
                soft.append(pos + 1 + k)
                branch.append(b)
        pos += 1
    return SentenceTree(out, soft, branch, anchor)


def visible_matrix(tree: SentenceTree) -> np.ndarray:
    """``[n, n]`` booleans, True where token ``i`` may attend to token ``j`` (K-BERT's ``M_ij = 0``)."""
    b = np.asarray(tree.branch)
    trunk = b < 0
    m = trunk[:, None] & trunk[None, :]
    same = (b[:, None] == b[None, :]) & ~trunk[:, None]
    m |= same
    for k, a in enumerate(tree.anchor):  # a branch and its entity see each other
        mem = b == k
        for i in np.atleast_1d(a):
            m[i, mem] = True
            m[mem, i] = True
    return m


@dataclass
class Encoded:
    ids: torch.Tensor          # [1, T]
    positions: torch.Tensor    # [1, T]
    visible: torch.Tensor      # [1, T, T] bool
    word_of_piece: list[int]   # index into tree.words, -1 for [CLS]/[SEP]


def encode_tree(tree: SentenceTree, pieces: Callable[[str, int], list[int]], cls_id: int, sep_id: int,
                soft: bool = True, visible: bool = True) -> Encoded:
    """Pieces, positions and mask for a BERT. ``soft=False`` numbers positions in reading order
    (hard positions); ``visible=False`` lets every token see every token -- together they are the
    naive way to inject knowledge (concatenate the triple into the sentence)."""
    ids, wop, pos = [cls_id], [-1], [0]
    for i, w in enumerate(tree.words):
        p = pieces(w, i) or []
        if not p:
            raise ValueError(f"the word {w!r} has no pieces")
        base = tree.soft[i] if soft else None
        for k, t in enumerate(p):
            ids.append(t)
            wop.append(i)
            pos.append(base + k if soft else len(pos))  # soft: a word's later pieces follow it
        if soft and len(p) > 1:
            raise ValueError("soft positions here need one piece per word; split words into pieces first")
    ids.append(sep_id)
    wop.append(-1)
    trunk_pos = [pos[k] for k in range(1, len(pos)) if tree.branch[wop[k]] < 0]
    pos.append((max(trunk_pos, default=0) + 1) if soft else len(pos))
    mw = visible_matrix(tree) if visible else np.ones((len(tree.words),) * 2, bool)
    w = np.asarray(wop)
    m = np.ones((len(ids), len(ids)), bool)
    inner = w >= 0
    m[np.ix_(inner, inner)] = mw[np.ix_(w[inner], w[inner])]
    # [CLS]/[SEP] are trunk: they see the trunk only and only the trunk sees them
    trunk_words = np.asarray(tree.branch) < 0
    is_trunk = np.where(inner, trunk_words[np.maximum(w, 0)], True)
    if visible:
        m[~inner, :] = is_trunk[None, :]
        m[:, ~inner] = is_trunk[:, None]
    return Encoded(torch.tensor([ids]), torch.tensor([pos]), torch.as_tensor(m)[None], wop)


def piece_tree(words: Sequence[str], kb: Mapping[str, Sequence[tuple[str, str]]],
               pieces: Callable[[str, int], list[int]], max_branches: int = 2) -> tuple[SentenceTree, list[int]]:
    """:func:`sentence_tree` at the level of pieces (soft positions count pieces; a branch's
    positions follow its entity's last piece, and every piece of the entity sees the branch). ``pieces(word, i)`` gives a word's ids (``i = 0`` for the first
    word; branch words are passed ``i = 1``). Returns the tree (its ``words`` are the piece ids as
    strings; :func:`encode_tree` reads them back with one piece each) and the ids."""
    ids: list[int] = []
    soft, branch, anchor, source = [], [], [], []
    pos = 1  # after [CLS]
    for i, w in enumerate(words):
        p = pieces(w, i)
        if not p:
            raise ValueError(f"the word {w!r} has no pieces")
        for t in p:
            ids.append(t)
            soft.append(pos)
            branch.append(-1)
            source.append(i)
            pos += 1
        entity = list(range(len(ids) - len(p), len(ids)))
        for rel, obj in list(kb.get(w.lower(), ()))[:max_branches]:
            b, q = len(anchor), pos
            anchor.append(entity)
            for tok in (rel + " " + obj).split():
                for t in pieces(tok, 1):
                    ids.append(t)
                    soft.append(q)
                    branch.append(b)
                    source.append(-1)
                    q += 1
    return SentenceTree([str(t) for t in ids], soft, branch, anchor, source), ids


@torch.no_grad()
def kbert_hidden(encoder, enc: Encoded) -> torch.Tensor:
    """Last hidden states ``[1, T, d]`` of our BertEncoder with the given positions and mask."""
    e = encoder.embeddings
    dev = next(encoder.parameters()).device
    ids, pos, mask = enc.ids.to(dev), enc.positions.to(dev), enc.visible.to(dev)
    x = e.drop(e.ln(e.tok(ids) + e.seg(torch.zeros_like(ids)) + e.pos(pos)))
    for block in encoder.blocks:
        x = block(x, mask)
    return x


def trunk_drift(encoder, words: Sequence[str], kb, pieces: Callable[[str, int], list[int]], cls_id: int,
                sep_id: int, soft: bool, visible: bool) -> float:
    """Knowledge noise: mean cosine *distance* between each trunk piece's last hidden state with
    and without the injected branches (entity pieces excluded). 0 = the sentence reads the same."""
    ptree, _ = piece_tree(words, kb, pieces)
    if not ptree.anchor:
        raise ValueError("no word of the sentence is in the knowledge base")
    plain_tree, _ = piece_tree(words, {}, pieces)
    one = lambda t, _i: [int(t)]
    with_k = kbert_hidden(encoder, encode_tree(ptree, one, cls_id, sep_id, soft=soft, visible=visible))[0]
    without = kbert_hidden(encoder, encode_tree(plain_tree, one, cls_id, sep_id))[0]
    trunk = [i + 1 for i in ptree.trunk]            # +1: [CLS]
    anchors = {int(i) + 1 for a in ptree.anchor for i in np.atleast_1d(a)}
    keep = [k for k, i in enumerate(trunk) if i not in anchors]
    a = with_k[[trunk[k] for k in keep]]
    b = without[[k + 1 for k in keep]]             # the plain tree is all trunk
    return float((1 - torch.nn.functional.cosine_similarity(a, b, dim=-1)).mean())
