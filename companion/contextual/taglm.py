"""TagLM (Peters et al. 2017): a pre-trained bidirectional LM's states as extra inputs of a
BiLSTM sequence tagger; and ELMo's variant, a learned scalar mix of all the biLM's layers.

The tagger: each token is ``[GloVe(lower(w)); casing(w)]`` (GloVe is lower-cased, so a small
learned embedding of the token's shape -- all caps, capitalised, lower, digits, other -- stands in
for TagLM's character RNN), a first BiLSTM layer, a second BiLSTM layer, and a linear layer to the
tag scores (a softmax per token; TagLM adds a CRF on top, we do not). The LM embedding enters

* after the first layer (``lm_at="first"``), concatenated with its output: TagLM's placement;
* or at the input (``lm_at="input"``): ELMo's usual placement.

``lm_mix="top"`` reads the biLM's top layer (TagLM); ``"mix"`` learns a :class:`ScalarMix` of
the three layers with the task (ELMo).

The biLM stays frozen; its vectors are computed once per sentence (:class:`LMFeatureCache`).

Example::

    cache = LMFeatureCache(ElmoLayers(bilm))
    cfg = TaggerConfig(lm_mix="top")
    res = train_tagger(data["train"][:1000], data["dev"][:300], glove, cfg, lm=cache, seed=0)
    evaluate_tagger(res.predict, data["test"], spans=True).f1
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..data.tasks import TaggedSentence
from ..train import History, TrainConfig, fit
from .elmo import ScalarMix

CASES = ("pad", "lower", "Capitalised", "ALLCAPS", "digits", "other")


def casing(token: str) -> int:
    """The token's shape as an index into :data:`CASES` (1..5)."""
    if token.isdigit() or any(c.isdigit() for c in token):
        return 4
    if token.isupper() and any(c.isalpha() for c in token):
        return 3
    if token[:1].isupper():
        return 2
    if token.islower():
        return 1
    return 5


class LMFeatureCache:
    """A frozen feature extractor's per-sentence arrays, computed once and kept as float16.

    ``extract(list of token lists) -> list of [n_layers, n_tokens, d]`` arrays (e.g.
    :meth:`companion.contextual.elmo.ElmoLayers.tokens`).
    """

    def __init__(self, extract: Callable[[list[list[str]]], list[np.ndarray]]) -> None:
        self.extract = extract
        self._memo: dict[tuple[str, ...], np.ndarray] = {}
        self.seconds = 0.0

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        todo = sorted({tuple(s) for s in sentences if tuple(s) not in self._memo})
        if todo:
            t0 = time.perf_counter()
            for key, arr in zip(todo, self.extract([list(s) for s in todo])):
                arr = np.asarray(arr)
                if arr.ndim != 3 or arr.shape[1] != len(key):
                    raise ValueError(f"the extractor returned shape {arr.shape} for {len(key)} tokens; it must "
                                     "return one [n_layers, n_tokens, d] array per sentence")
                self._memo[key] = arr.astype(np.float16)
            self.seconds += time.perf_counter() - t0
        return [self._memo[tuple(s)] for s in sentences]

    def __len__(self) -> int:
        return len(self._memo)


@dataclass
class TaggerConfig:
    """The tagger's sizes and how it reads the LM (``lm_mix=None``: no LM, the baseline)."""

    d_hidden: int = 64
    d_case: int = 8
    dropout: float = 0.3
    lm_mix: str | None = None  # None | "top" | "mix"
    lm_at: str = "first"  # "first" (TagLM) | "input" (ELMo)
    epochs: int = 8
    batch_size: int = 32
    lr: float = 5e-3

    def __post_init__(self) -> None:
        if self.lm_mix not in (None, "top", "mix"):
            raise ValueError(f"lm_mix must be None, 'top' or 'mix', got {self.lm_mix!r}")
        if self.lm_at not in ("first", "input"):
            raise ValueError(f"lm_at must be 'first' or 'input', got {self.lm_at!r}")
        for name in ("d_hidden", "d_case", "epochs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"TaggerConfig.{name} must be a positive int, got {v!r}")


class BiLSTMTagger(nn.Module):
    """Two BiLSTM layers and a per-token softmax; optional LM features (see the module doc)."""

    def __init__(self, glove_rows: torch.Tensor, n_tags: int, config: TaggerConfig, d_lm: int = 0,
                 n_lm_layers: int = 3) -> None:
        super().__init__()
        c = self.config = config
        if c.lm_mix is not None and d_lm < 1:
            raise ValueError(f"lm_mix={c.lm_mix!r} needs d_lm > 0 (the LM vectors' width)")
        self.word = nn.Embedding.from_pretrained(glove_rows, freeze=True)
        self.case = nn.Embedding(len(CASES), c.d_case, padding_idx=0)
        self.mix = ScalarMix(n_lm_layers) if c.lm_mix == "mix" else None
        d_lm = d_lm if c.lm_mix is not None else 0
        d_in = glove_rows.shape[1] + c.d_case + (d_lm if c.lm_at == "input" else 0)
        self.rnn1 = nn.LSTM(d_in, c.d_hidden, batch_first=True, bidirectional=True)
        self.rnn2 = nn.LSTM(2 * c.d_hidden + (d_lm if c.lm_at == "first" else 0), c.d_hidden,
                            batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * c.d_hidden, n_tags)
        self.drop = nn.Dropout(c.dropout)

    def _lm(self, lm: torch.Tensor | None) -> torch.Tensor | None:
        if self.config.lm_mix is None:
            return None
        if lm is None:
            raise ValueError("this tagger reads LM features: pass the batch's 'lm' tensor [L, B, T, d]")
        return self.mix(lm) if self.mix is not None else lm[-1]

    def _rnn(self, rnn: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(rnn(packed)[0], batch_first=True, total_length=x.shape[1])[0]

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Tag scores ``[B, T, n_tags]``."""
        lengths = batch["lengths"]
        lm = self._lm(batch.get("lm"))
        x = torch.cat([self.word(batch["words"]), self.case(batch["case"])], -1)
        if lm is not None and self.config.lm_at == "input":
            x = torch.cat([x, lm], -1)
        h = self._rnn(self.rnn1, self.drop(x), lengths)
        if lm is not None and self.config.lm_at == "first":
            h = torch.cat([h, lm], -1)
        h = self._rnn(self.rnn2, self.drop(h), lengths)
        return self.out(self.drop(h))

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = self(batch)
        return F.cross_entropy(logits.flatten(0, 1), batch["tags"].flatten(), ignore_index=-100)


@dataclass
class TaggerData:
    """Word ids (into the tagger's GloVe rows), the tag names and the LM cache."""

    index: dict[str, int]
    tags: list[str]
    lm: LMFeatureCache | None = None
    tag_index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.tag_index = {t: i for i, t in enumerate(self.tags)}

    def batch(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]] | None = None,
              use_lm: bool = False) -> dict[str, torch.Tensor]:
        n, T = len(tokens), max(len(s) for s in tokens)
        words = torch.zeros(n, T, dtype=torch.long)
        case = torch.zeros(n, T, dtype=torch.long)
        out = {"lengths": torch.tensor([len(s) for s in tokens])}
        for i, s in enumerate(tokens):
            words[i, : len(s)] = torch.tensor([self.index.get(w.lower(), 1) for w in s])
            case[i, : len(s)] = torch.tensor([casing(w) for w in s])
        out["words"], out["case"] = words, case
        if tags is not None:
            y = torch.full((n, T), -100, dtype=torch.long)
            for i, t in enumerate(tags):
                y[i, : len(t)] = torch.tensor([self.tag_index.get(x, -100) for x in t])
            out["tags"] = y
        if use_lm:
            if self.lm is None:
                raise ValueError("this tagger reads LM features but TaggerData has no LM cache")
            feats = self.lm(tokens)
            lm = torch.zeros(feats[0].shape[0], n, T, feats[0].shape[2])
            for i, f in enumerate(feats):
                lm[:, i, : f.shape[1]] = torch.from_numpy(f.astype(np.float32))
            out["lm"] = lm
        return out


def glove_rows_for(sentences: Sequence[Sequence[str]], glove: np.ndarray, words: Sequence[str]
                   ) -> tuple[torch.Tensor, dict[str, int]]:
    """The GloVe rows of the (lower-cased) words that occur in ``sentences``: row 0 padding, row
    1 unknown (both zero), then one row per known word. Returns ``(rows, word -> row)``."""
    glove_index = {w: i for i, w in enumerate(words)}
    vocab = sorted({w.lower() for s in sentences for w in s if w.lower() in glove_index})
    rows = np.zeros((len(vocab) + 2, glove.shape[1]), np.float32)
    for k, w in enumerate(vocab, start=2):
        rows[k] = glove[glove_index[w]]
    return torch.from_numpy(rows), {w: k for k, w in enumerate(vocab, start=2)}


@dataclass
class TaggerResult:
    """A trained tagger: ``predict(list of token tuples) -> list of tag lists``."""

    model: BiLSTMTagger
    data: TaggerData
    history: History
    seconds: float

    @torch.no_grad()
    def predict(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        self.model.eval()
        device = next(self.model.parameters()).device
        use_lm = self.model.config.lm_mix is not None
        out = []
        for start in range(0, len(sentences), 256):
            chunk = [list(s) for s in sentences[start:start + 256]]
            b = {k: v.to(device) for k, v in self.data.batch(chunk, use_lm=use_lm).items()}
            pred = self.model(b).argmax(-1).cpu().tolist()
            out += [[self.data.tags[j] for j in p[: len(s)]] for p, s in zip(pred, chunk)]
        return out

    def mix_weights(self) -> np.ndarray | None:
        """The learned ``softmax(s)`` of a ``lm_mix="mix"`` tagger (None otherwise)."""
        m = self.model.mix
        return None if m is None else m.weights.detach().cpu().numpy()


def train_tagger(train: Sequence[TaggedSentence], dev: Sequence[TaggedSentence], vocab: TaggerData,
                 glove_rows: torch.Tensor, config: TaggerConfig, *, seed: int = 0, device: str | None = None,
                 score: Callable[[list[list[str]], Sequence[TaggedSentence]], float] | None = None) -> TaggerResult:
    """Train a tagger on ``train``; keep the epoch with the best ``score`` on ``dev`` (default:
    token accuracy).

    Raises:
        ValueError: for empty data, or LM features asked for without an LM cache.
    """
    if not train or not dev:
        raise ValueError(f"train_tagger needs training and dev sentences, got {len(train)} and {len(dev)}")
    use_lm = config.lm_mix is not None
    if use_lm and vocab.lm is None:
        raise ValueError(f"lm_mix={config.lm_mix!r} needs TaggerData(lm=LMFeatureCache(...))")
    d_lm, n_layers = 0, 3
    if use_lm:
        probe = vocab.lm([list(train[0].tokens)])[0]
        n_layers, d_lm = probe.shape[0], probe.shape[2]
    torch.manual_seed(seed)
    model = BiLSTMTagger(glove_rows, len(vocab.tags), config, d_lm, n_layers)

    def batches(epoch: int):
        order = np.random.default_rng([seed, epoch]).permutation(len(train))
        for s in range(0, len(order), config.batch_size):
            chunk = [train[i] for i in order[s:s + config.batch_size]]
            yield vocab.batch([c.tokens for c in chunk], [c.tags for c in chunk], use_lm=use_lm)

    score = score or (lambda pred, gold: float(np.mean([p == g for ps, s in zip(pred, gold)
                                                        for p, g in zip(ps, s.tags)])))
    t0 = time.perf_counter()
    result = TaggerResult(model, vocab, History(), 0.0)

    def evaluate(_m) -> dict[str, float]:
        return {"dev": score(result.predict([s.tokens for s in dev]), dev)}

    result.history = fit(model, batches, evaluate=evaluate,
                         config=TrainConfig(epochs=config.epochs, lr=config.lr, seed=seed, device=device,
                                            monitor="dev", mode="max", progress=False, clip_grad_norm=5.0))
    result.seconds = time.perf_counter() - t0
    return result


__all__ = [
    "CASES",
    "BiLSTMTagger",
    "LMFeatureCache",
    "TaggerConfig",
    "TaggerData",
    "TaggerResult",
    "casing",
    "glove_rows_for",
    "train_tagger",
]
