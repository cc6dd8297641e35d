"""CoVe (McCann et al. 2017): the encoder of an attentional LSTM translation model as a source of
context vectors, plus corpus BLEU written out (checked against ``sacrebleu`` in the tests).

The idea: train an English -> German translation model whose encoder reads *frozen* GloVe
vectors; afterwards the encoder, a two-layer biLSTM, maps any English sentence's GloVe vectors to
context vectors, ``CoVe(w) = MT-LSTM(GloVe(w))``. A downstream task then reads
``[GloVe(w); CoVe(w)]`` per token.

The decoder follows the paper: a two-layer LSTM fed its previous output word and its previous
attentional state ``h~_{t-1}`` ("input feeding"), attention over the encoder states

    alpha_t = softmax(H (W1 h_t + b1)),    h~_t = tanh(W2 [H^T alpha_t ; h_t] + b2),

and a softmax over the German vocabulary read from ``h~_t``. The decoder starts from the encoder's
last states (both directions of each layer concatenated), as in the paper; ``bridge=False`` starts
it from zeros, so only the attention carries the source. (Without the bridge our laptop run
learned a caption template, "ein mann in einem .", for every input: BLEU 1.9 after 420 steps.)

Input feeding makes the decoder a loop of one-step LSTM calls, slow on a CPU. With
``input_feeding=False`` the decoder reads only the previous word, so one LSTM call covers every
step and the attention is computed for all steps at once (Luong et al.'s plain global
attention): the laptop preset's choice, several times faster per step.

Example::

    pairs = load_multi30k()["train"]
    src = glove_vocab(glove_words)          # the encoder reads GloVe's own vocabulary
    tgt = TargetVocab.build([tokenize(d) for _, d in pairs], max_size=6000)
    model = CoVe(CoVeConfig(tgt_vocab=len(tgt)), glove_matrix)
    fit(model, lambda e: translation_batches(pairs, src, tgt, 64, seed=e), config=...)
    bleu = corpus_bleu(hyps, refs).score
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Lower-cased words and punctuation marks (GloVe 6B is lower-cased)."""
    if not isinstance(text, str):
        raise TypeError(f"tokenize takes a string, got {type(text).__name__}")
    return _TOKEN.findall(text.lower())


# --------------------------------------------------------------------------- vocabularies
@dataclass
class TargetVocab:
    """Word <-> id for one side of the translation model: ``<pad>`` 0, ``<unk>`` 1, ``<s>`` 2,
    ``</s>`` 3, then the words (most frequent first)."""

    itos: list[str]
    stoi: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        if self.itos[:4] != [PAD, UNK, BOS, EOS]:
            raise ValueError(f"a vocabulary starts with {[PAD, UNK, BOS, EOS]}, got {self.itos[:4]}")
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Sequence[Sequence[str]], max_size: int, min_count: int = 1) -> TargetVocab:
        """The ``max_size`` most frequent words seen at least ``min_count`` times (ties by word)."""
        if not isinstance(max_size, int) or max_size < 1:
            raise ValueError(f"max_size must be a positive int, got {max_size!r}")
        counts = Counter(w for s in sentences for w in s)
        words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        return cls([PAD, UNK, BOS, EOS, *words[:max_size]])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, 1) for t in tokens]

    def decode(self, ids: Sequence[int]) -> list[str]:
        """Words up to the first ``</s>`` (specials dropped)."""
        out = []
        for i in ids:
            i = int(i)
            if i == 3:
                break
            if i > 3:
                out.append(self.itos[i])
        return out


def glove_vocab(words: Sequence[str]) -> TargetVocab:
    """The encoder's vocabulary: the four specials, then GloVe's words in GloVe's order (so row
    ``i + 4`` of the embedding is GloVe's row ``i``)."""
    return TargetVocab([PAD, UNK, BOS, EOS, *words])


# --------------------------------------------------------------------------- the model
@dataclass
class CoVeConfig:
    """Sizes of the MT-LSTM. McCann et al.: GloVe 300d in, 2 x 300 hidden per direction, 2 layers."""

    tgt_vocab: int
    d_hidden: int = 128  # per direction in the encoder; the decoder has 2 * d_hidden
    n_layers: int = 2
    d_tgt_emb: int = 64
    dropout: float = 0.1
    input_feeding: bool = True  # False: one LSTM call for all decoder steps (faster on CPU)
    bridge: bool = True  # the decoder starts from the encoder's last states (False: from zeros)

    def __post_init__(self) -> None:
        for name in ("tgt_vocab", "d_hidden", "n_layers", "d_tgt_emb"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"CoVeConfig.{name} must be a positive int, got {v!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"CoVeConfig.dropout must be in [0, 1), got {self.dropout!r}")


def general_attention(h: torch.Tensor, keys: torch.Tensor, proj: nn.Linear,
                      mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """McCann et al.'s attention for one decoder step: ``alpha = softmax(H (W1 h + b1))``.

    Args:
        h: decoder states ``[B, d_dec]``; keys: encoder states ``H`` ``[B, T, d_enc]``;
        proj: ``W1, b1`` (d_dec -> d_enc); mask: ``[B, T]`` bool, True at real source tokens.

    Returns:
        ``(context H^T alpha [B, d_enc], alpha [B, T])``.
    """
    scores = torch.einsum("btd,bd->bt", keys, proj(h))
    scores = scores.masked_fill(~mask, float("-inf"))
    alpha = scores.softmax(-1)
    return torch.einsum("bt,btd->bd", alpha, keys), alpha


class CoVe(nn.Module):
    """The attentional LSTM encoder-decoder; ``encode`` gives the context vectors.

    Args:
        config: sizes.
        glove: the GloVe matrix ``[n_words, d]`` (rows in :func:`glove_vocab` order after the four
            specials); kept frozen, as in the paper, so the encoder learns to read GloVe space.
    """

    def __init__(self, config: CoVeConfig, glove: np.ndarray | torch.Tensor, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        g = torch.as_tensor(np.asarray(glove), dtype=torch.float32)
        if g.ndim != 2:
            raise ValueError(f"glove must be a [n_words, d] matrix, got shape {tuple(g.shape)}")
        self.config = c = config
        d_in, d_enc = g.shape[1], 2 * config.d_hidden
        self.src_emb = nn.Embedding.from_pretrained(torch.cat([torch.zeros(4, d_in), g]), freeze=True)
        self.encoder = nn.LSTM(d_in, c.d_hidden, c.n_layers, batch_first=True, bidirectional=True,
                               dropout=c.dropout if c.n_layers > 1 else 0.0)
        self.tgt_emb = nn.Embedding(c.tgt_vocab, c.d_tgt_emb, padding_idx=0)
        self.decoder = nn.LSTM(c.d_tgt_emb + (d_enc if c.input_feeding else 0), d_enc, c.n_layers, batch_first=True,
                               dropout=c.dropout if c.n_layers > 1 else 0.0)
        self.W1 = nn.Linear(d_enc, d_enc)  # query projection of the attention
        self.W2 = nn.Linear(2 * d_enc, d_enc)  # [context; h] -> attentional state
        self.out = nn.Linear(d_enc, c.tgt_vocab)
        self.drop = nn.Dropout(c.dropout)

    @property
    def d_out(self) -> int:
        """Width of a context vector (both directions of the top layer)."""
        return 2 * self.config.d_hidden

    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """CoVe: the top biLSTM layer's states ``[B, T, 2 d_hidden]`` (zeros at padding)."""
        return self._encode(src, lengths)[0]

    def _encode(self, src, lengths):
        """``(states [B, T, 2 d_hidden], the decoder's first state or None)``."""
        if src.ndim != 2 or lengths.ndim != 1 or len(lengths) != len(src):
            raise ValueError(f"src must be [B, T] ids and lengths [B]; got {tuple(src.shape)} and "
                             f"{tuple(lengths.shape)}")
        if (lengths < 1).any():
            raise ValueError("every source sentence needs at least one token")
        packed = pack_padded_sequence(self.src_emb(src), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.encoder(packed)
        keys = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])[0]
        if not self.config.bridge:
            return keys, None
        # [layers * 2, B, H] (forward, backward per layer) -> [layers, B, 2H], the decoder's shape
        L, B = self.config.n_layers, len(src)
        state = tuple(x.view(L, 2, B, -1).permute(0, 2, 1, 3).reshape(L, B, -1).contiguous() for x in (h, c))
        return keys, state

    def _step(self, y_prev, feed, state, keys, mask):
        x = self.drop(self.tgt_emb(y_prev))
        if self.config.input_feeding:
            x = torch.cat([x, feed], -1)
        h, state = self.decoder(x.unsqueeze(1), state)
        h = h.squeeze(1)
        context, alpha = general_attention(h, keys, self.W1, mask)
        h_tilde = torch.tanh(self.W2(torch.cat([context, h], -1)))
        return h_tilde, state, alpha

    def _all_steps(self, tgt_in, keys, mask, state=None):
        """Without input feeding: every decoder step in one LSTM call, attention batched."""
        h, _ = self.decoder(self.drop(self.tgt_emb(tgt_in)), state)  # [B, T_tgt, d_enc]
        scores = torch.einsum("bsd,btd->bts", keys, self.W1(h)).masked_fill(~mask[:, None], float("-inf"))
        alpha = scores.softmax(-1)
        context = alpha @ keys
        return torch.tanh(self.W2(torch.cat([context, h], -1))), alpha

    def forward(self, src, lengths, tgt_in) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: ``(logits [B, T_tgt, V], attention [B, T_tgt, T_src])``."""
        keys, state = self._encode(src, lengths)
        mask = torch.arange(src.shape[1], device=src.device)[None] < lengths[:, None].to(src.device)
        if not self.config.input_feeding:
            h_tilde, alpha = self._all_steps(tgt_in, keys, mask, state)
            return self.out(self.drop(h_tilde)), alpha
        feed = keys.new_zeros(len(src), self.d_out)
        outs, alphas = [], []
        for t in range(tgt_in.shape[1]):
            feed, state, alpha = self._step(tgt_in[:, t], feed, state, keys, mask)
            outs.append(feed)
            alphas.append(alpha)
        return self.out(self.drop(torch.stack(outs, 1))), torch.stack(alphas, 1)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean cross-entropy per target token (padding ignored)."""
        logits, _ = self(batch["src"], batch["src_len"], batch["tgt_in"])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["tgt_out"].reshape(-1), ignore_index=0)

    @torch.no_grad()
    def translate(self, src, lengths, max_len: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
        """Greedy decoding: ``(ids [B, <= max_len], attention [B, <= max_len, T_src])``."""
        keys, state = self._encode(src, lengths)
        mask = torch.arange(src.shape[1], device=src.device)[None] < lengths[:, None].to(src.device)
        y = torch.full((len(src),), 2, dtype=torch.long, device=src.device)  # <s>
        feed, ids, alphas = keys.new_zeros(len(src), self.d_out), [], []
        done = torch.zeros(len(src), dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            feed, state, alpha = self._step(y, feed, state, keys, mask)
            y = self.out(feed).argmax(-1)
            ids.append(y)
            alphas.append(alpha)
            done |= y == 3
            if done.all():
                break
        return torch.stack(ids, 1), torch.stack(alphas, 1)


# --------------------------------------------------------------------------- data
def pad(seqs: Sequence[Sequence[int]], value: int = 0) -> torch.Tensor:
    """A ``[B, max_len]`` long tensor of the sequences, padded on the right."""
    if not seqs:
        raise ValueError("nothing to pad: no sequences")
    out = torch.full((len(seqs), max(map(len, seqs))), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def encode_source(sentences: Sequence[Sequence[str]], src: TargetVocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists -> ``(ids [B, T], lengths [B])``; an empty sentence becomes one ``<unk>``."""
    ids = [src.encode(s) or [1] for s in sentences]
    return pad(ids), torch.tensor([len(s) for s in ids])


def translation_batches(pairs: Sequence[tuple[list[str], list[str]]], src: TargetVocab, tgt: TargetVocab,
                        batch_size: int, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    """Shuffled batches of tokenized ``(english, german)`` pairs, each a dict with ``src``,
    ``src_len``, ``tgt_in`` (``<s>`` + target) and ``tgt_out`` (target + ``</s>``)."""
    if not pairs:
        raise ValueError("no sentence pairs")
    order = np.random.default_rng(seed).permutation(len(pairs))
    out = []
    for start in range(0, len(order), batch_size):
        chunk = [pairs[i] for i in order[start:start + batch_size]]
        s, lens = encode_source([e for e, _ in chunk], src)
        t = [tgt.encode(d) for _, d in chunk]
        out.append({"src": s, "src_len": lens, "tgt_in": pad([[2, *x] for x in t]),
                    "tgt_out": pad([[*x, 3] for x in t])})
    return out


def translate_sentences(model: CoVe, sentences: Sequence[Sequence[str]], src: TargetVocab, tgt: TargetVocab,
                        batch_size: int = 128, max_len: int = 40) -> list[list[str]]:
    """Greedy translations (token lists) of tokenized English sentences."""
    model.eval()
    device = next(model.parameters()).device
    out: list[list[str]] = []
    for start in range(0, len(sentences), batch_size):
        ids, lens = encode_source(sentences[start:start + batch_size], src)
        pred, _ = model.translate(ids.to(device), lens.to(device), max_len)
        out += [tgt.decode(p) for p in pred.tolist()]
    return out


# --------------------------------------------------------------------------- features
class CoVeFeatures:
    """Per-token features ``[GloVe(w); CoVe(w)]`` and mean-pooled sentence vectors.

    Args:
        model: a trained :class:`CoVe` (its GloVe table gives the GloVe half).
        src: the encoder's vocabulary (:func:`glove_vocab`).
        parts: ``"glove"``, ``"cove"`` or ``"both"`` (the paper's GloVe+CoVe).
    """

    def __init__(self, model: CoVe, src: TargetVocab, parts: str = "both", batch_size: int = 128) -> None:
        if parts not in ("glove", "cove", "both"):
            raise ValueError(f"parts must be 'glove', 'cove' or 'both', got {parts!r}")
        self.model, self.src, self.parts, self.batch_size = model, src, parts, batch_size

    @torch.no_grad()
    def tokens(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One ``[n_tokens, d]`` array per tokenized sentence."""
        self.model.eval()
        device = next(self.model.parameters()).device
        out = []
        for start in range(0, len(sentences), self.batch_size):
            chunk = [list(s) or ["<unk>"] for s in sentences[start:start + self.batch_size]]
            ids, lens = encode_source(chunk, self.src)
            ids, lens = ids.to(device), lens.to(device)
            parts = []
            if self.parts in ("glove", "both"):
                parts.append(self.model.src_emb(ids))
            if self.parts in ("cove", "both"):
                parts.append(self.model.encode(ids, lens))
            feats = torch.cat(parts, -1).cpu().numpy()
            out += [feats[i, : int(n)] for i, n in enumerate(lens.tolist())]
        return out

    def __call__(self, sentences: list[str]) -> np.ndarray:
        """Sentence vectors for the SentEval harness: the mean and the max over tokens."""
        vecs = self.tokens([tokenize(s) for s in sentences])
        return np.stack([np.concatenate([v.mean(0), v.max(0)]) for v in vecs]).astype(np.float32)


# --------------------------------------------------------------------------- BLEU
@dataclass
class BLEU:
    """Corpus BLEU and the statistics behind it (precisions and score in percent)."""

    score: float
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int
    correct: list[int]
    total: list[int]

    def __str__(self) -> str:
        p = "/".join(f"{x:.1f}" for x in self.precisions)
        return f"BLEU = {self.score:.2f} {p} (BP = {self.bp:.3f} ratio = {self.sys_len / max(self.ref_len, 1):.3f})"


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _closest(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to the hypothesis' (the shorter one on a tie), as sacreBLEU."""
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def corpus_bleu(hypotheses: Sequence[Sequence[str]], references, max_n: int = 4, smooth: str = "exp") -> BLEU:
    """Papineni et al.'s corpus BLEU on tokenized text.

    ``BLEU = BP * exp(mean_n log p_n)``: ``p_n`` is the share of the hypotheses' n-grams found in
    their references (each n-gram counted at most as often as in the reference that has most of
    it), pooled over the corpus; ``BP = exp(1 - r / c)`` when the hypotheses' total length ``c``
    is below the references' ``r`` (per sentence the reference length closest to the
    hypothesis'). ``smooth="exp"`` (sacreBLEU's default, from mteval-v13a) replaces the k-th zero
    precision by ``1 / (2^k total_n)``; ``"none"`` leaves it at zero (BLEU 0).

    Args:
        hypotheses: one token list per sentence.
        references: one token list per sentence, or a list of several token lists per sentence.

    Raises:
        ValueError: for different numbers of hypotheses and references, a string where a token
            list belongs, an unknown ``smooth`` or a bad ``max_n``.
    """
    if smooth not in ("exp", "none"):
        raise ValueError(f"smooth must be 'exp' or 'none', got {smooth!r}")
    if isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 1:
        raise ValueError(f"max_n must be a positive int, got {max_n!r}")
    if isinstance(hypotheses, str) or (hypotheses and isinstance(hypotheses[0], str)):
        raise TypeError("hypotheses must be token lists (a list of lists of str); tokenize the strings first")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    correct, total = [0] * max_n, [0] * max_n
    sys_len = ref_len = 0
    for i, (hyp, refs) in enumerate(zip(hypotheses, references)):
        if isinstance(hyp, str) or isinstance(refs, str):
            raise TypeError(f"sentence {i}: a string where a token list belongs; tokenize it first")
        refs = [refs] if not refs or isinstance(refs[0], str) else list(refs)
        sys_len += len(hyp)
        ref_len += _closest(len(hyp), [len(r) for r in refs])
        for n in range(1, max_n + 1):
            h = _ngrams(hyp, n)
            best: Counter = Counter()
            for r in refs:
                best |= _ngrams(r, n)  # | keeps each n-gram's maximum count over the references
            correct[n - 1] += sum(min(c, best[g]) for g, c in h.items())
            total[n - 1] += max(len(hyp) - n + 1, 0)
    bp = 1.0 if sys_len >= ref_len else (math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0)
    precisions = [0.0] * max_n
    if not any(correct):
        return BLEU(0.0, precisions, bp, sys_len, ref_len, correct, total)
    halvings = 1.0
    for n in range(max_n):
        if total[n] == 0:
            break
        if correct[n]:
            precisions[n] = 100.0 * correct[n] / total[n]
        elif smooth == "exp":
            halvings *= 2
            precisions[n] = 100.0 / (halvings * total[n])
    if min(precisions) == 0.0:
        return BLEU(0.0, precisions, bp, sys_len, ref_len, correct, total)
    score = bp * math.exp(sum(math.log(p) for p in precisions) / max_n)
    return BLEU(score, precisions, bp, sys_len, ref_len, correct, total)


__all__ = [
    "BLEU", "CoVe", "CoVeConfig", "CoVeFeatures", "TargetVocab", "corpus_bleu", "encode_source",
    "general_attention", "glove_vocab", "pad", "tokenize", "translate_sentences", "translation_batches",
]
