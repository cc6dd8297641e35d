"""Masked-LM variants: *which* tokens BERT's successors chose to hide, and what they put there.

All of them keep BERT's model and tied softmax (:class:`~.harness.MaskedLM`) and change one thing:

* :class:`StaticMLM` -- BERT (Devlin et al. 2018): each sequence is masked once, when the data
  is written (``dupe_factor`` copies, each masked its own way), and the model sees the same
  masks every epoch. Here the mask is a hash of the row's tokens, so it is fixed without
  storing anything. The harness's :class:`~.harness.MaskedLM` is RoBERTa's *dynamic* masking.
* :class:`WholeWordMLM` -- BERT-wwm (Cui et al. 2019): all subword pieces of a chosen word are
  masked together, so the model cannot recover ``##ing`` from ``play``.
* :class:`EntityMLM` -- ERNIE (Sun et al. 2019): entities are masked as units. We have no
  tagger at pre-training time, so an **entity is a run of capitalised words that does not
  start a sentence** ("Barack Obama", "the United States" -> "United States"); a sentence's
  first word never counts (its capital says nothing). Phrase-level masking is not built.
* :class:`SpanMLM` -- SpanBERT (Joshi et al. 2020): spans of whole words with lengths drawn from
  a geometric distribution (p = 0.2, clipped at 10, mean 3.8 words) until 15 % of the tokens
  are masked, 80/10/10 decided per span; plus the **span boundary objective** (SBO): every token
  of a span is predicted again from the two tokens just outside it and its position in the span.
* :class:`MacBERTMLM` -- MacBERT (Cui et al. 2020), "MLM as correction": whole words and 1-4 word
  n-grams (40/30/20/10 %) are replaced by *similar* tokens, never by ``[MASK]`` (which fine-tuning
  never sees). The similarity comes from count vectors (chapter 1b's co-occurrence -> PPMI -> SVD,
  :func:`similar_tokens`) over our BPE tokens: a token-level stand-in for the word2vec
  synonyms of the paper.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..transformer.bert import BertForPreTraining
from .harness import MaskedLM, ModelSize, Vocab, init_model

# ------------------------------------------------------------------------------ static masking

_M1 = 0xBF58476D1CE4E5B9 - 2**64  # splitmix64's constants as signed int64
_M2 = 0x94D049BB133111EB - 2**64
_GOLD = 0x9E3779B97F4A7C15 - 2**64


def _srl(x: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's ``>>`` is arithmetic)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def hash_uniform(keys: torch.Tensor) -> torch.Tensor:
    """A float in [0, 1) per int64 key (splitmix64's finaliser): the same key always gives the
    same number, neighbouring keys unrelated ones. Integer products wrap mod 2^64."""
    x = keys * _GOLD
    x = (x ^ _srl(x, 30)) * _M1
    x = (x ^ _srl(x, 27)) * _M2
    x = x ^ _srl(x, 31)
    return _srl(x, 11).double() / float(1 << 53)


def row_keys(ids: torch.Tensor, salt: int) -> torch.Tensor:
    """``[B, T]`` int64 keys that depend on the whole row's content, the position and ``salt``."""
    T = ids.shape[1]
    weights = torch.arange(1, T + 1, dtype=torch.long) * 1_000_003 + 7
    row = (ids * weights).sum(1, keepdim=True) * 31 + (ids ** 2).sum(1, keepdim=True)
    return row * 1_000_033 + torch.arange(T) * 8191 + salt * 131_071


class StaticMLM(MaskedLM):
    """BERT's static masking: a row's masks are fixed. With ``dupe_factor = k`` each row has k
    fixed masks and every batch picks one of them at random (BERT wrote k masked copies, k = 10);
    ``k = 1`` is the purest contrast with dynamic masking. Same 80/10/10, same rates."""

    name = "MLM (static)"

    def __init__(self, vocab: Vocab, p: float = 0.15, dupe_factor: int = 1):
        super().__init__(vocab, p)
        if not isinstance(dupe_factor, int) or dupe_factor < 1:
            raise ValueError(f"dupe_factor must be a positive int, got {dupe_factor!r}")
        self.dupe_factor = dupe_factor
        if dupe_factor > 1:
            self.name = f"MLM (static x{dupe_factor})"

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = self.frame(rows)
        copy = torch.randint(self.dupe_factor, (len(ids), 1), generator=gen) * 3  # which fixed mask
        u, r, w = (hash_uniform(row_keys(ids, 1 + copy + k)) for k in range(3))
        chosen = self.candidates(ids) & (u < self.p)
        labels = ids.masked_fill(~chosen, -100)
        inputs = ids.masked_fill(chosen & (r < 0.8), self.vocab.mask)
        rand = self._ordinary[(w * len(self._ordinary)).long().clamp(max=len(self._ordinary) - 1)]
        inputs = torch.where(chosen & (r >= 0.8) & (r < 0.9), rand, inputs)
        return {"ids": inputs, "labels": labels}


# ------------------------------------------------------------------------------ words and units


def word_starts(ids: torch.Tensor, vocab: Vocab, candidates: torch.Tensor) -> torch.Tensor:
    """``[B, T]`` True where a word begins: a token with a leading space, or the first text token
    after a special one. Specials themselves are never inside a word."""
    if vocab.word_start is None:
        raise ValueError("this objective needs vocab.word_start (build the Vocab with Vocab.from_tokenizer)")
    prev_special = torch.ones_like(candidates)
    prev_special[:, 1:] = ~candidates[:, :-1]
    return candidates & (vocab.word_start[ids] | prev_special)


def unit_ids(starts: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """Number the units (words, entities) of each row 0, 1, ... from their start flags; -1 at
    non-candidate positions."""
    uid = starts.long().cumsum(1) - 1
    return uid.masked_fill(~candidates | (uid < 0), -1)


def choose_units(uid: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
    """Choose every unit independently with probability ``p``; all its tokens go together."""
    u = torch.rand(uid.shape, generator=gen)  # one draw per possible unit index
    return (uid >= 0) & (u.gather(1, uid.clamp(min=0)) < p)


class WholeWordMLM(MaskedLM):
    """Whole-word masking: each word is chosen with probability ``p`` and all its pieces are
    masked (80/10/10 per token, as in BERT-wwm). The expected share of masked tokens stays ``p``."""

    name = "MLM (whole word)"

    def units(self, ids: torch.Tensor) -> torch.Tensor:
        cand = self.candidates(ids)
        return unit_ids(word_starts(ids, self.vocab, cand), cand)

    def choose(self, ids: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return choose_units(self.units(ids), self.p, gen)


def entity_words(ids: torch.Tensor, vocab: Vocab, starts: torch.Tensor) -> torch.Tensor:
    """``[B, T]`` True at the first token of every *entity word*: a capitalised word whose
    previous token does not end a sentence and is not a special (row start, ``[CLS]``, eos)."""
    if vocab.capital is None or vocab.sentence_end is None:
        raise ValueError("entity masking needs vocab.capital and vocab.sentence_end (use Vocab.from_tokenizer)")
    prev_end = torch.ones_like(starts)
    prev_end[:, 1:] = vocab.sentence_end[ids[:, :-1]] | torch.isin(ids[:, :-1], torch.tensor(vocab.specials))
    return starts & vocab.capital[ids] & ~prev_end


class EntityMLM(WholeWordMLM):
    """ERNIE-style masking: a run of entity words (:func:`entity_words`) is one unit, every
    other word its own unit; units are chosen with probability ``p``."""

    name = "MLM (entity spans)"

    def units(self, ids: torch.Tensor) -> torch.Tensor:
        cand = self.candidates(ids)
        starts = word_starts(ids, self.vocab, cand)
        ent = entity_words(ids, self.vocab, starts)
        # the entity flag of the previous word, carried forward over the current word's pieces
        wid = starts.long().cumsum(1)  # word number (1-based) of every position
        B, T = ids.shape
        word_ent = torch.zeros(B, T + 2, dtype=torch.bool)
        word_ent.scatter_(1, torch.where(starts, wid, T + 1), ent)  # non-starts write into a spare column
        prev_ent = word_ent.gather(1, (wid - 1).clamp(min=0))
        merge = starts & ent & prev_ent  # an entity word right after an entity word continues it
        return unit_ids(starts & ~merge, cand)

    def entity_spans(self, ids: torch.Tensor) -> list[list[tuple[int, int]]]:
        """Per row, the ``(start, end)`` token spans of the entities found (end exclusive)."""
        cand = self.candidates(ids)
        starts = word_starts(ids, self.vocab, cand)
        ent = entity_words(ids, self.vocab, starts)
        uid = self.units(ids)
        out = []
        for b in range(len(ids)):
            spans = []
            for u in torch.unique(uid[b, ent[b]]).tolist():
                pos = (uid[b] == u).nonzero().squeeze(1)
                spans.append((int(pos[0]), int(pos[-1]) + 1))
            out.append(spans)
        return out


# ------------------------------------------------------------------------------ SpanBERT


def geometric_pmf(p: float = 0.2, max_len: int = 10) -> np.ndarray:
    """SpanBERT's span-length distribution over 1..max_len: ``p (1-p)^(l-1)``, renormalised after
    clipping (its mean at p = 0.2, max 10 is 3.8 words, the paper's figure)."""
    if not 0 < p < 1 or max_len < 1:
        raise ValueError(f"need 0 < p < 1 and max_len >= 1, got p={p}, max_len={max_len}")
    pmf = p * (1 - p) ** np.arange(max_len)
    return pmf / pmf.sum()


def sample_span_lengths(n: int, rng: np.random.Generator, p: float = 0.2, max_len: int = 10) -> np.ndarray:
    """``n`` span lengths (in words) from :func:`geometric_pmf`: inverse-CDF sampling, the
    draws of ``rng.choice(lengths, n, p=pmf)`` without its per-call checks of ``p``."""
    cdf = geometric_pmf(p, max_len).cumsum()
    cdf /= cdf[-1]
    return cdf.searchsorted(rng.random(n), side="right") + 1


def _numpy_rng(gen: torch.Generator) -> np.random.Generator:
    return np.random.default_rng(int(torch.randint(2**62, (1,), generator=gen)))


def span_mask(starts: torch.Tensor, candidates: torch.Tensor, budget: float, rng: np.random.Generator,
              p: float = 0.2, max_len: int = 10, max_tries: int = 40, bounds: bool = False) -> tuple:
    """SpanBERT's masking of each row: draw a span length ``l`` (words), a random start word, and
    mask those ``l`` whole words, until ``budget`` (a share) of the row's text tokens are masked;
    a span that would overlap an earlier one or overshoot the budget is redrawn (so in short rows
    the spans that land are shorter than the lengths drawn: a 10-word span never fits a budget of
    9 tokens). Returns ``(span_id [B, T]`` -1 outside spans, ``lengths)`` -- the landed spans'
    lengths in words. ``bounds=True`` adds ``(left, right, rel)`` ``[B, T]``: for every position
    in a span the positions just outside it and its offset in it (SpanBERT's boundary objective).
    (All random numbers are drawn up front, ``max_tries`` per row, so the loop below is plain
    Python on small ints: the batch costs under 5 % of a training step.)"""
    B, T = starts.shape
    span_id = np.full((B, T), -1, dtype=np.int64)
    left, right, rel = np.zeros((B, T), np.int64), np.zeros((B, T), np.int64), np.zeros((B, T), np.int64)
    st, cand = starts.numpy(), candidates.numpy()
    draws = sample_span_lengths(B * max_tries, rng, p, max_len).reshape(B, max_tries).tolist()
    where = rng.random((B, max_tries)).tolist()
    # every row's word starts and word ends at once: a word runs to the next word start or the
    # next special token (or the row's end), whichever comes first
    ext = np.concatenate([st | ~cand, np.ones((B, 1), dtype=bool)], 1).ravel()
    flat = np.flatnonzero(st.ravel())
    row_of, pos = flat // T, flat % T
    g = row_of * (T + 1) + pos
    edges = np.flatnonzero(ext)
    ends = edges[np.searchsorted(edges, g, side="right")] - row_of * (T + 1)
    bounds_of = np.concatenate([[0], np.cumsum(np.bincount(row_of, minlength=B))]).tolist()
    pos_list, ends_list = pos.tolist(), ends.tolist()
    n_cand = cand.sum(1).tolist()
    lengths, next_id = [], 0
    spans_b, spans_lo, spans_hi = [], [], []  # the landed spans, written into the arrays at the end
    for b in range(B):
        word_pos, ends = pos_list[bounds_of[b]:bounds_of[b + 1]], ends_list[bounds_of[b]:bounds_of[b + 1]]
        if not word_pos:
            continue
        n_words, goal, masked = len(word_pos), budget * n_cand[b], 0
        taken = bytearray(T)
        for ell, u in zip(draws[b], where[b]):
            if masked >= goal:
                break
            w = int(u * n_words)
            w_end = min(w + ell, n_words)
            lo, hi = word_pos[w], ends[w_end - 1]
            if masked + (hi - lo) > goal + 1 or 1 in taken[lo:hi]:
                continue  # over the budget (by more than a token), or overlapping: draw again
            taken[lo:hi] = b"\x01" * (hi - lo)
            spans_b.append(b)
            spans_lo.append(lo)
            spans_hi.append(hi)
            next_id += 1
            masked += hi - lo
            lengths.append(w_end - w)
    if spans_b:  # every span's positions at once: row, position, span number, offset in the span
        lo_a, size = np.array(spans_lo), np.array(spans_hi) - np.array(spans_lo)
        first = np.repeat(np.cumsum(size) - size, size)
        rel_a = np.arange(int(size.sum())) - first
        row_a, lo_r = np.repeat(spans_b, size), np.repeat(lo_a, size)
        pos_a = lo_r + rel_a
        span_id[row_a, pos_a] = np.repeat(np.arange(len(size)), size)
        left[row_a, pos_a], right[row_a, pos_a] = lo_r - 1, lo_r + np.repeat(size, size)
        rel[row_a, pos_a] = rel_a
    out = torch.from_numpy(span_id), torch.tensor(lengths)
    if bounds:
        out += (torch.from_numpy(left).clamp(min=0), torch.from_numpy(right).clamp(max=T - 1),
                torch.from_numpy(rel))
    return out


class SBOHead(nn.Module):
    """SpanBERT's span boundary objective: ``y_i = f(x_{s-1}, x_{e+1}, p_{i-s+1})``, a 2-layer
    MLP (GeLU, LayerNorm) over the boundary tokens' states and a relative-position embedding,
    read out by the tied token embeddings."""

    def __init__(self, d_model: int, max_span: int, embedding: nn.Embedding):
        super().__init__()
        self.pos = nn.Embedding(max_span, d_model)
        self.mlp = nn.Sequential(nn.Linear(3 * d_model, d_model), nn.GELU(), nn.LayerNorm(d_model),
                                 nn.Linear(d_model, d_model), nn.GELU(), nn.LayerNorm(d_model))
        self.embedding = embedding
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, left: torch.Tensor, right: torch.Tensor, rel: torch.Tensor) -> torch.Tensor:
        h = self.mlp(torch.cat([left, right, self.pos(rel)], -1))
        return h @ self.embedding.weight.T + self.bias


class SpanBert(BertForPreTraining):
    """BERT + an :class:`SBOHead`."""

    def __init__(self, config, max_span: int = 32):
        super().__init__(config, seed=None)
        self.sbo = SBOHead(config.d_model, max_span, self.encoder.embeddings.tok)


class SpanMLM(MaskedLM):
    """SpanBERT: geometric word spans (p = 0.2, max 10) to 15 % of the tokens, 80/10/10 per span,
    MLM loss + span boundary loss (``sbo=False``: spans without SBO, the paper's ablation)."""

    name = "Span + SBO"

    def __init__(self, vocab: Vocab, p: float = 0.15, geo_p: float = 0.2, max_span_words: int = 10,
                 sbo: bool = True):
        super().__init__(vocab, p)
        self.geo_p, self.max_span_words, self.sbo = geo_p, max_span_words, sbo
        if not sbo:
            self.name = "Span (no SBO)"

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = self.frame(rows)
        cand = self.candidates(ids)
        span_id, _, left, right, rel = span_mask(word_starts(ids, self.vocab, cand), cand, self.p, _numpy_rng(gen),
                                                 self.geo_p, self.max_span_words, bounds=True)
        chosen = span_id >= 0
        # 80/10/10 per span: every token of a span gets its span's draw
        r_span = torch.rand(int(span_id.max()) + 2, generator=gen)
        r = torch.where(chosen, r_span[span_id.clamp(min=0)], torch.ones(()))
        labels = ids.masked_fill(~chosen, -100)
        inputs = ids.masked_fill(chosen & (r < 0.8), self.vocab.mask)
        rand = self._ordinary[torch.randint(len(self._ordinary), ids.shape, generator=gen)]
        inputs = torch.where(chosen & (r >= 0.8) & (r < 0.9), rand, inputs)
        return {"ids": inputs, "labels": labels, "left": left, "right": right, "rel": rel.clamp(max=31)}

    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        model = init_model(SpanBert(self.vocab.bert_config(size)))
        nn.init.zeros_(model.mlm.decoder.bias)
        return model

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        h = model.encoder(batch["ids"])
        labels = batch["labels"]
        chosen = labels != -100
        if not chosen.any():
            return h.sum() * 0.0
        loss = F.cross_entropy(model.mlm(h[chosen]), labels[chosen])
        if self.sbo:
            b = chosen.nonzero()[:, 0]
            left = h[b, batch["left"][chosen]]
            right = h[b, batch["right"][chosen]]
            loss = loss + F.cross_entropy(model.sbo(left, right, batch["rel"][chosen]), labels[chosen])
        return loss


# ------------------------------------------------------------------------------ MacBERT


def similar_tokens(rows: torch.Tensor, vocab: Vocab, k: int = 5, dim: int = 64, window: int = 2,
                   min_count: int = 5, seed: int = 0) -> torch.Tensor:
    """``[V, k]`` the ``k`` nearest ordinary tokens of every id by cosine of count vectors
    (chapter 1b: co-occurrence in ``window`` -> PPMI -> SVD, :func:`companion.counting.vectors.
    count_word_vectors`) over the corpus rows; a token seen fewer than ``min_count`` times gets
    random ordinary neighbours (MacBERT falls back to a random word when no synonym is known)."""
    from ..counting.vectors import count_word_vectors

    sentences = [[str(t) for t in row] for row in rows.tolist()]
    cv = count_word_vectors(sentences, window=window, min_count=min_count, dim=dim, seed=seed)
    ordinary = vocab.ordinary()
    g = torch.Generator().manual_seed(seed)
    table = ordinary[torch.randint(len(ordinary), (vocab.size, k), generator=g)]
    ids = [int(w) for w in cv.words]
    keep = [i for i, t in enumerate(ids) if t not in set(vocab.specials)]
    vec = F.normalize(torch.as_tensor(np.asarray(cv.svd)[keep], dtype=torch.float32), dim=1)
    known = torch.tensor([ids[i] for i in keep])
    sims = vec @ vec.T
    sims.fill_diagonal_(-math.inf)  # a token is not its own replacement
    nn_idx = sims.topk(min(k, len(keep) - 1), dim=1).indices
    table[known, : nn_idx.shape[1]] = known[nn_idx]
    return table


class MacBERTMLM(MaskedLM):
    """MacBERT's "MLM as correction": units are whole words and word n-grams (n = 1..4 with
    probabilities 40/30/20/10 %, chosen at rate ``p`` per word); chosen tokens become a similar
    token (80 %, from ``similar``, a ``[V, k]`` table such as :func:`similar_tokens`), a random
    token (10 %) or stay (10 %) -- never ``[MASK]``."""

    name = "MacBERT (similar words)"
    NGRAM_P = (0.4, 0.3, 0.2, 0.1)

    def __init__(self, vocab: Vocab, similar: torch.Tensor, p: float = 0.15):
        super().__init__(vocab, p)
        if similar.dim() != 2 or similar.shape[0] != vocab.size:
            raise ValueError(f"similar must be a [{vocab.size}, k] table of token ids, got {tuple(similar.shape)}")
        self.similar = similar.long()

    def choose(self, ids: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        cand = self.candidates(ids)
        starts = word_starts(ids, self.vocab, cand)
        wid = unit_ids(starts, cand)
        B, T = ids.shape
        # an n-gram starting at word w covers words w..w+n-1; start rate p / E[n] keeps the token rate p
        mean_n = sum((i + 1) * q for i, q in enumerate(self.NGRAM_P))
        begin = torch.rand(B, T, generator=gen) < self.p / mean_n
        n = torch.multinomial(torch.tensor(self.NGRAM_P), B * T, replacement=True, generator=gen).view(B, T) + 1
        cover = torch.zeros(B, T + 4, dtype=torch.long)  # +1 at w, -1 at w + n: a difference array
        w_idx = torch.arange(T).expand(B, T)
        cover.scatter_add_(1, w_idx, begin.long())
        cover.scatter_add_(1, w_idx + n, -begin.long())
        covered = cover.cumsum(1)[:, :T] > 0  # word w is inside some chosen n-gram
        return (wid >= 0) & covered.gather(1, wid.clamp(min=0))

    def corrupt(self, ids, chosen, gen):
        r = torch.rand(ids.shape, generator=gen)
        labels = ids.masked_fill(~chosen, -100)
        k = torch.randint(self.similar.shape[1], ids.shape, generator=gen)
        similar = self.similar[ids, k]
        inputs = torch.where(chosen & (r < 0.8), similar, ids)
        rand = self._ordinary[torch.randint(len(self._ordinary), ids.shape, generator=gen)]
        return torch.where(chosen & (r >= 0.8) & (r < 0.9), rand, inputs), labels


# ------------------------------------------------------------------------------ Chinese whole words


def budget_units(uid: torch.Tensor, budget: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Google BERT's masking budget, unit by unit (``create_masked_lm_predictions`` with
    ``do_whole_word_mask``): visit each row's units in a random order and take a unit when all
    its tokens still fit in the row's ``budget`` (a unit that would overshoot is skipped, later
    smaller ones may still fit). ``uid``: ``[B, T]`` unit numbers 0, 1, ... (-1: not a
    candidate); ``budget``: ``[B]`` tokens to choose. Returns the chosen positions ``[B, T]``."""
    B, T = uid.shape
    lens = torch.zeros(B, T + 1, dtype=torch.long)
    lens.scatter_add_(1, torch.where(uid >= 0, uid, T), torch.ones_like(uid))
    lens = lens[:, :T]  # tokens per unit; 0 for unit numbers a row does not use
    order = torch.rand(B, T, generator=gen).argsort(1)  # the random visiting order
    L = lens.gather(1, order).numpy()
    taken = np.zeros((B, T), dtype=bool)
    total, cap = np.zeros(B, dtype=np.int64), budget.numpy()
    # T steps of [B]-wide numpy ops (a microsecond each, a torch op costs ~5): the scan over a
    # row's units is sequential, the rows are not
    for k in range(T):
        fits = (L[:, k] > 0) & (total + L[:, k] <= cap)
        taken[:, k] = fits
        total += L[:, k] * fits
    chosen_unit = torch.zeros(B, T, dtype=torch.bool).scatter_(1, order, torch.from_numpy(taken))
    return (uid >= 0) & chosen_unit.gather(1, uid.clamp(min=0))


class ChineseWholeWordMLM(MaskedLM):
    """Chinese BERT's masked LM over characters, with or without whole-word masking (Cui et al.
    2019). Rows carry a segmenter's word boundaries (:func:`.chinese.pack_segmented`).

    Both modes choose ``round(p * n)`` of a row's ``n`` characters (at least 1) by Google's
    budget rule (:func:`budget_units`); ``whole_word=True`` takes whole words (all characters of
    a chosen word together), ``False`` single characters. The 80/10/10 corruption is per
    character in both, as in Google's script. Word boundaries never cross a special token: the
    first character after ``[CLS]`` or ``eos`` starts a word."""

    def __init__(self, vocab: Vocab, p: float = 0.15, whole_word: bool = True):
        super().__init__(vocab, p)
        self.whole_word = bool(whole_word)
        self.name = "MLM (whole words, zh)" if self.whole_word else "MLM (characters, zh)"

    def split(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``[CLS] row [SEP]`` ids and their word starts (from the rows' flags)."""
        from .chinese import split_flags

        ids, starts = split_flags(rows, self.vocab.size)
        ids = self.frame(ids)
        pad = torch.zeros(len(rows), 1, dtype=torch.bool)
        return ids, torch.cat([pad, starts, pad], 1)

    def choose_words(self, ids: torch.Tensor, starts: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        cand = self.candidates(ids)
        if self.whole_word:
            prev_special = torch.ones_like(cand)
            prev_special[:, 1:] = ~cand[:, :-1]
            units = cand & (starts | prev_special)
        else:
            units = cand
        budget = (cand.sum(1).double() * self.p).round().long().clamp(min=1)
        return budget_units(unit_ids(units, cand), budget, gen)

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids, starts = self.split(rows)
        inputs, labels = self.corrupt(ids, self.choose_words(ids, starts, gen), gen)
        return {"ids": inputs, "labels": labels}
