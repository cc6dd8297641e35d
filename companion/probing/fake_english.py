"""Chapter 11b's positive anchor: English and "Fake-English", two languages that share nothing
but their structure.

K et al. (2020, "Cross-Lingual Ability of Multilingual BERT") and Dufter & Schütze (2020,
"Identifying Elements Essential for BERT's Multilinguality") asked what makes a masked LM
multilingual when the languages share no word piece. Their control: a copy of English whose
token ids are shifted by the vocabulary size, so that the two "languages" have disjoint
vocabularies and identical grammar. A BERT trained by masked LM on both, never on a translated
pair, still maps a sentence and its copy to nearby vectors, unless the ablations take away what
the languages still share: the special tokens, the position embeddings, a model small enough to
be forced to reuse its parameters.

This module rebuilds that experiment with chapter 11b's pieces (:mod:`.multilingual`: the
WordPiece tokenizer, :func:`~.multilingual.pretrain_mlm`, :func:`~.multilingual.sentence_vectors`,
:func:`~.multilingual.retrieval`, :func:`~.multilingual.fit_logreg`, :func:`~.multilingual.auc`,
:func:`~.multilingual.bootstrap_ci`):

* :class:`Fake` marks a sentence as Fake-English; :class:`ShiftedTokenizer` gives its ordinary
  tokens the English ids plus ``shift`` (the English vocabulary size); special tokens keep the
  English ids in the data;
* :func:`model_inputs` -- what the model's input layer looks up: the special tokens of a
  Fake-English row shared with English or moved to their own rows (``separate_specials``), its
  positions shared or offset by ``max_len`` (``language_positions``); :func:`build_model` puts
  that input layer (:class:`TwoLanguageEmbeddings`) into chapter 7's BERT, initialised exactly as
  the plain model is;
* :func:`prepare` -- English pre-training text (Part II's corpus; by default the two languages
  get disjoint halves, so no sentence exists in both), held-out sentences for retrieval, SST-2;
* :func:`pretrain` -- masked LM on both (or ``steps=0``: the untrained encoder);
* :func:`evaluate` -- retrieval of each English sentence's Fake-English copy among all copies,
  the layer chosen on a dev set, and zero-shot transfer of a sentiment classifier trained on
  English vectors to Fake-English vectors; :func:`chance` -- the same on random vectors;
  :func:`paired_difference` -- trained minus a baseline with a paired bootstrap interval.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..checks import check_int, check_texts
from ..scale import pick
from ..transformer.bert import BertConfig, BertEmbeddings, BertForPreTraining
from . import multilingual as ml

N_SPECIAL = 5           # [PAD] [UNK] [CLS] [SEP] [MASK]: ids 0-4 of our WordPiece vocabularies
FAKE_PREFIX = "~"       # how a Fake-English token is written in the combined vocabulary


@dataclass(frozen=True)
class Sizes:
    en_chars: int           # pre-training characters per language
    vocab_size: int         # English WordPiece vocabulary (the model has twice as many rows)
    d_model: int
    n_layer: int
    n_head: int
    max_len: int
    batch_size: int
    steps: int              # MLM steps
    lr: float
    seeds: tuple[int, ...]
    n_dev: int              # held-out sentences that choose the layer
    n_pairs: int            # held-out sentences for retrieval
    n_train: int            # SST-2 training sentences (English)
    n_test: int             # SST-2 test sentences per class
    n_boot: int
    widths: tuple[int, int]  # the width ablation: a narrower and a wider d_model


def sizes(scale: str | None = None) -> Sizes:
    return pick(
        ci=Sizes(40_000, 800, 32, 2, 2, 24, 16, 20, 2e-3, (0,), 40, 60, 100, 40, 100, (16, 64)),
        laptop=Sizes(600_000, 1000, 64, 2, 4, 32, 32, 3000, 1e-3, (0, 1, 2), 200, 500, 1000, 300, 1000,
                     (32, 128)),
        gpu=Sizes(4_000_000, 8000, 256, 4, 4, 64, 64, 6000, 5e-4, (0, 1, 2), 500, 2000, 4000, 436, 2000,
                  (128, 512)),
        scale=scale)


# ------------------------------------------------------------------------------- the language


class Fake(str):
    """A Fake-English sentence: the English text, read by :class:`ShiftedTokenizer` in the
    shifted vocabulary. ``Fake("a good film")`` and ``"a good film"`` share no token id."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Fake({str.__repr__(self)})"


def fake(texts: Sequence[str]) -> list[Fake]:
    """The Fake-English copies of ``texts`` (a list of strings)."""
    check_texts(texts, "texts")
    return [Fake(t) for t in texts]


class ShiftedTokenizer:
    """English WordPiece plus its Fake-English copy in one vocabulary of ``2 * len(base)`` ids.

    An English text has the base tokenizer's ids; a :class:`Fake` text has the same ids plus
    ``shift = len(base)`` for every ordinary token, so the two vocabularies are disjoint and every
    Fake-English sentence has exactly its English sentence's structure. Special tokens (ids below
    ``N_SPECIAL``) keep their English ids in the data: whether the model shares them is decided by
    its input layer (:func:`model_inputs`), and ids ``shift .. shift + 4`` are the rows where
    Fake-English's own special tokens live when it does not."""

    def __init__(self, base) -> None:
        vocab = getattr(base, "vocab", None)
        if not isinstance(vocab, dict) or [vocab.get(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] \
                != list(range(N_SPECIAL)):
            raise ValueError("base must be a WordPiece tokenizer with [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0-4, got "
                             f"{type(base).__name__}")
        self.base, self.shift, self.unk = base, len(base), base.unk
        self.vocab = {**vocab, **{FAKE_PREFIX + t: i + self.shift for t, i in vocab.items()}}
        self.inverse = {i: t for t, i in self.vocab.items()}

    def __len__(self) -> int:
        return 2 * self.shift

    def ids(self, text: str) -> list[int]:
        """The ids of ``text`` without ``[CLS]``/``[SEP]``: shifted when ``text`` is :class:`Fake`."""
        ids = self.base.ids(text)
        if isinstance(text, Fake):
            return [i + self.shift if i >= N_SPECIAL else i for i in ids]
        return ids

    def unshift(self, ids: Sequence[int]) -> list[int]:
        """Fake-English ids back to English ones (English ids are left alone)."""
        return [int(i) - self.shift if i >= self.shift else int(i) for i in ids]

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """The tokens of ``ids`` (Fake-English ones written ``~token``)."""
        return [self.inverse[int(i)] for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """The English text of English or Fake-English ``ids``."""
        return self.base.decode(self.unshift(ids))


# ------------------------------------------------------------------------------- the model


def model_inputs(ids: torch.Tensor, shift: int, max_len: int, separate_specials: bool = False,
                 language_positions: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``(token rows, position rows)`` that the input layer looks up for ``ids [B, T]``.

    A row holding any id ``>= shift`` is Fake-English. Its special tokens (ids below
    ``N_SPECIAL``: ``[CLS]``, ``[SEP]``, ``[MASK]``, ``[UNK]``, ``[PAD]``) are looked up at
    ``id + shift`` when ``separate_specials`` (else shared with English), and its positions run
    ``max_len, max_len + 1, ...`` when ``language_positions`` (else ``0, 1, ...`` as English's).

    Example:
        >>> ids = torch.tensor([[2, 7, 3], [2, 17, 3]])  # [CLS] w [SEP], English then Fake (shift 10)
        >>> tok, pos = model_inputs(ids, shift=10, max_len=4, separate_specials=True, language_positions=True)
        >>> tok.tolist(), pos.tolist()
        ([[2, 7, 3], [12, 17, 13]], [[0, 1, 2], [4, 5, 6]])
    """
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2:
        raise ValueError(f"ids must be a [batch, length] tensor, got {getattr(ids, 'shape', type(ids).__name__)}")
    is_fake = (ids >= shift).any(1, keepdim=True)
    tok = torch.where(is_fake & (ids < N_SPECIAL), ids + shift, ids) if separate_specials else ids
    pos = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    if language_positions:
        pos = pos + max_len * is_fake.long()
    return tok, pos


class TwoLanguageEmbeddings(BertEmbeddings):
    """BERT's input layer (token + segment + position, LayerNorm) with :func:`model_inputs`'
    two switches. With ``language_positions`` the position table has ``2 * max_len`` rows
    (English's, then Fake-English's own)."""

    def __init__(self, c: BertConfig, shift: int, separate_specials: bool = False, language_positions: bool = False):
        super().__init__(c)
        if 2 * shift != c.vocab_size:
            raise ValueError(f"shift must be half the vocabulary ({c.vocab_size} // 2), got {shift}")
        self.shift, self.separate_specials, self.language_positions = shift, separate_specials, language_positions
        if language_positions:
            self.pos = nn.Embedding(2 * c.max_len, c.d_model)

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None) -> torch.Tensor:
        c = self.config
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] > c.max_len:
            raise ValueError(f"ids must be a [batch, length <= {c.max_len}] tensor, got "
                             f"{getattr(ids, 'shape', type(ids).__name__)}")
        tok, pos = model_inputs(ids, self.shift, c.max_len, self.separate_specials, self.language_positions)
        segments = torch.zeros_like(ids) if segments is None else segments
        return self.drop(self.ln(self.tok(tok) + self.seg(segments) + self.pos(pos)))


def build_model(tok: ShiftedTokenizer, s: Sizes, seed: int = 0, separate_specials: bool = False,
                language_positions: bool = False) -> BertForPreTraining:
    """Chapter 7's BERT with :class:`TwoLanguageEmbeddings`: every weight it shares with the plain
    model (``BertForPreTraining(config, seed)``) starts equal to it, so the ablations differ from
    the main model only in what they switch; Fake-English's own position rows are drawn from
    N(0, 0.02) with their own seed."""
    if not isinstance(tok, ShiftedTokenizer):
        raise TypeError(f"tok must be a ShiftedTokenizer, got {type(tok).__name__}")
    model = BertForPreTraining(ml.bert_config(tok, s), seed=seed)
    old = model.encoder.embeddings
    new = TwoLanguageEmbeddings(model.config, tok.shift, separate_specials, language_positions)
    with torch.no_grad():
        new.tok.weight.copy_(old.tok.weight)
        new.seg.load_state_dict(old.seg.state_dict())
        new.ln.load_state_dict(old.ln.state_dict())
        L = model.config.max_len
        new.pos.weight[:L].copy_(old.pos.weight)
        if language_positions:
            g = torch.Generator().manual_seed(seed + 7919)
            new.pos.weight[L:].copy_(torch.randn(L, model.config.d_model, generator=g) * 0.02)
    model.encoder.embeddings = new
    model.mlm.decoder.weight = new.tok.weight  # the output layer stays tied to the token rows
    return model


# -------------------------------------------------------------------------------- the data


SOURCES = ("corpus", "imdb")


def _sentences(split: str, seed: int, source: str = "corpus") -> list[str]:
    """Sentences of documents in a seeded order: Part II's pre-training corpus (``"corpus"``;
    ``split`` "train" or "heldout") or IMDb's training reviews (``"imdb"``, split after . ! ?)."""
    if source == "imdb":
        import re

        from ..data import load_task

        docs = [re.split(r"(?<=[.!?])\s+", e.text.replace("<br />", " ")) for e in load_task("imdb").splits["train"]]
    else:
        from ..data.lm_corpora import load_pretraining_corpus

        docs = load_pretraining_corpus(split)
    order = np.random.default_rng(seed).permutation(len(docs))
    return [ml.normalize(s) for i in order for s in docs[i] if s.strip()]


def pretraining_text(max_chars: int, parallel: bool = False, seed: int = 0,
                     source: str = "corpus") -> tuple[list[str], list[str]]:
    """``(english, fake_source)``: sentences of Part II's pre-training corpus (``source="corpus"``)
    or of IMDb's training reviews (``"imdb"``), documents in a seeded order, ``max_chars``
    characters each. By default the two are disjoint halves (a comparable corpus: no sentence is
    in both languages); ``parallel=True`` gives Fake-English the same sentences (Dufter &
    Schütze's parallel setting)."""
    check_int(max_chars, "max_chars")
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    sents = _sentences("train", seed, source)
    first, n = [], 0
    for t in sents:
        if n >= 2 * max_chars:
            break
        first.append(t)
        n += len(t)
    if n < (1 if parallel else 2) * max_chars:
        raise ValueError(f"max_chars={max_chars} is more than the corpus holds; ask for fewer")
    english = ml._take(first[0::2], max_chars) if not parallel else ml._take(first, max_chars)
    other = ml._take(first[1::2], max_chars) if not parallel else english
    return english, other


def held_out(n: int, min_words: int = 6, max_words: int = 30, seed: int = 0) -> list[str]:
    """``n`` distinct held-out sentences (documents never seen in pre-training) of
    ``min_words``..``max_words`` words, in a seeded order."""
    check_int(n, "n")
    seen, out = set(), []
    for t in _sentences("heldout", seed + 1):
        if min_words <= len(t.split()) <= max_words and t.lower() not in seen:
            seen.add(t.lower())
            out.append(t)
            if len(out) == n:
                return out
    raise ValueError(f"only {len(out)} held-out sentences of {min_words}-{max_words} words; ask for fewer than {n}")


@dataclass
class Setup:
    sizes: Sizes
    tok: ShiftedTokenizer
    english: list[str]          # English pre-training text
    fake: list[Fake]            # Fake-English pre-training text
    dev: list[str]              # held-out sentences that choose the layer
    test: list[str]             # held-out sentences for retrieval
    sentiment: dict             # SST-2: {"train": (texts, labels), "test": ...}, English
    parallel: bool
    seconds: float


def prepare(s: Sizes, parallel: bool = False, source: str = "corpus") -> Setup:
    """Pre-training text of both languages, the English WordPiece vocabulary (trained on the
    English half only: Fake-English has no say in it), retrieval sentences and SST-2."""
    if not isinstance(s, Sizes):
        raise TypeError(f"s must be fake_english.Sizes (from fake_english.sizes()), got {type(s).__name__}")
    t0 = time.process_time()
    english, other = pretraining_text(s.en_chars, parallel, source=source)
    tok = ShiftedTokenizer(ml.train_tokenizer(english, [], s.vocab_size))
    sents = held_out(s.n_dev + s.n_pairs)
    sst = ml.sentiment_data(s.n_train, s.n_test)["en"]
    return Setup(s, tok, english, fake(other), sents[:s.n_dev], sents[s.n_dev:], sst, parallel,
                 time.process_time() - t0)


# ------------------------------------------------------------------------------ pre-training

ARMS = {  # name -> (separate_specials, language_positions, width: None = sizes' d_model)
    "shared specials + positions": (False, False, None),
    "separate specials": (True, False, None),
    "language-specific positions": (False, True, None),
    "separate specials + positions": (True, True, None),
    "narrower": (False, False, 0),
    "wider": (False, False, 1),
}


def pretrain(setup: Setup, seed: int = 0, steps: int | None = None, separate_specials: bool = False,
             language_positions: bool = False, d_model: int | None = None,
             device: str | None = None) -> ml.Pretrained:
    """Masked LM on the English and Fake-English rows (:func:`.multilingual.pretrain_mlm`: rows
    never mix the languages; a masked token's random replacement comes from either vocabulary, as
    in Dufter & Schütze). ``steps=0``: the untrained encoder. ``d_model`` changes the width (the
    heads stay ``n_head``)."""
    if not isinstance(setup, Setup):
        raise TypeError(f"setup must be a fake_english.Setup (from prepare()), got {type(setup).__name__}")
    s = setup.sizes
    if d_model is not None:
        check_int(d_model, "d_model")
        if d_model % s.n_head:
            raise ValueError(f"d_model must be a multiple of n_head={s.n_head}, got {d_model}")
        s = dataclasses.replace(s, d_model=d_model)
    if steps is not None:
        check_int(steps, "steps", 0)
    model = build_model(setup.tok, s, seed, separate_specials, language_positions)
    return ml.pretrain_mlm(setup.tok, setup.english, setup.fake, s, seed=seed, steps=steps, device=device,
                           model=model)


# -------------------------------------------------------------------------------- measuring


def auc_interval(score: np.ndarray, y: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap interval (2.5 %, 97.5 %) of the AUC over test examples, in %."""
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        i = rng.integers(0, len(y), len(y))
        if 0 < y[i].sum() < len(i):
            boots.append(ml.auc(score[i], y[i]))
    return 100 * float(np.percentile(boots, 2.5)), 100 * float(np.percentile(boots, 97.5))


@dataclass
class Evaluation:
    layer: int                      # chosen on the dev sentences
    dev_p1: list[float]             # en -> fake precision@1 % per layer, dev sentences
    test_p1: list[float]            # the same on the test sentences (reported, never used to choose)
    hits: np.ndarray                # test en -> fake: is the copy the nearest? (chosen layer)
    scores: dict[str, np.ndarray]   # "en->fake" / "en->en": classifier logits on the SST-2 test
    y: np.ndarray                   # SST-2 test labels

    def summary(self, n_boot: int = 1000) -> dict[str, object]:
        """Retrieval P@1 % and transfer accuracy / AUC % with bootstrap intervals."""
        m, lo, hi = ml.bootstrap_ci(self.hits, n_boot)
        out: dict[str, object] = {"layer": self.layer, "P@1": [100 * m, 100 * lo, 100 * hi],
                                  "P@1 by layer": [round(v, 2) for v in self.test_p1]}
        for k, sc in self.scores.items():
            ok = (sc > 0) == self.y
            am, alo, ahi = ml.bootstrap_ci(ok, n_boot)
            out[f"{k} acc"] = [100 * am, 100 * alo, 100 * ahi]
            out[f"{k} AUC"] = [100 * ml.auc(sc, self.y), *auc_interval(sc, self.y, n_boot)]
        return out


def _measure(vecs: dict[str, list[np.ndarray]], y_train: np.ndarray, y_test: np.ndarray,
             layer: int | None = None) -> Evaluation:
    dev = [100 * float(ml.retrieval(ml.center(a), ml.center(b)).mean())
           for a, b in zip(vecs["dev en"], vecs["dev fake"])]
    test = [100 * float(ml.retrieval(ml.center(a), ml.center(b)).mean())
            for a, b in zip(vecs["test en"], vecs["test fake"])]
    k = int(np.argmax(dev)) if layer is None else layer
    hits = ml.retrieval(ml.center(vecs["test en"][k]), ml.center(vecs["test fake"][k]))
    clf = ml.fit_logreg(ml.center(vecs["sst train"][k]), y_train)
    scores = {"en->fake": clf(ml.center(vecs["sst test fake"][k])), "en->en": clf(ml.center(vecs["sst test"][k]))}
    return Evaluation(k, dev, test, hits, scores, y_test)


def evaluate(model, setup: Setup, layer: int | None = None) -> Evaluation:
    """Retrieval (each held-out English sentence's nearest Fake-English copy by cosine of
    centred mean-pooled vectors) at every layer, and zero-shot transfer: a logistic regression
    trained on English SST-2 vectors, tested on the Fake-English copies of the SST-2 test set
    (and on the English originals, the ceiling). ``layer`` ``None``: the layer with the best dev
    retrieval, used for both."""
    if not isinstance(setup, Setup):
        raise TypeError(f"setup must be a fake_english.Setup (from prepare()), got {type(setup).__name__}")
    enc = getattr(model, "encoder", model)
    n_layers = len(enc.blocks) + 1
    if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < n_layers):
        raise ValueError(f"layer must be None or an int in 0..{n_layers - 1}, got {layer!r}")
    tok, (xtr, ytr), (xte, yte) = setup.tok, setup.sentiment["train"], setup.sentiment["test"]
    texts = {"dev en": setup.dev, "dev fake": fake(setup.dev), "test en": setup.test, "test fake": fake(setup.test),
             "sst train": xtr, "sst test": xte, "sst test fake": fake(xte)}
    vecs = {k: ml.sentence_vectors(model, tok, v) for k, v in texts.items()}
    return _measure(vecs, ytr, yte, layer)


def chance(setup: Setup, d: int | None = None, seed: int = 0) -> Evaluation:
    """The same measurements on independent random vectors (one per sentence and language):
    retrieval at 1 / n and transfer at 50 %, with the intervals that sampling alone gives."""
    d = setup.sizes.d_model if d is None else d
    rng = np.random.default_rng(seed)
    s, (xtr, ytr), (xte, yte) = setup.sizes, setup.sentiment["train"], setup.sentiment["test"]
    sizes_ = {"dev en": s.n_dev, "dev fake": s.n_dev, "test en": s.n_pairs, "test fake": s.n_pairs,
              "sst train": len(xtr), "sst test": len(xte), "sst test fake": len(xte)}
    vecs = {k: [rng.standard_normal((n, d))] for k, n in sizes_.items()}
    return _measure(vecs, ytr, yte, 0)


def paired_difference(a: Evaluation, b: Evaluation, n_boot: int = 1000, seed: int = 0) -> dict[str, list[float]]:
    """``a`` minus ``b`` on the same test items, ``[difference, 2.5 %, 97.5 %]`` by a paired
    bootstrap: retrieval P@1 (points) and zero-shot en->fake AUC (points)."""
    if len(a.hits) != len(b.hits) or len(a.y) != len(b.y) or not np.array_equal(a.y, b.y):
        raise ValueError("a and b must be evaluated on the same test items")
    rng = np.random.default_rng(seed)
    n, m = len(a.hits), len(a.y)
    dp = [float(a.hits[i].mean() - b.hits[i].mean()) for i in rng.integers(0, n, (n_boot, n))]
    sa, sb, y = a.scores["en->fake"], b.scores["en->fake"], a.y
    da = []
    for i in rng.integers(0, m, (n_boot, m)):
        if 0 < y[i].sum() < m:
            da.append(ml.auc(sa[i], y[i]) - ml.auc(sb[i], y[i]))
    p = 100 * float(a.hits.mean() - b.hits.mean())
    d = 100 * (ml.auc(sa, y) - ml.auc(sb, y))
    return {"P@1": [p, 100 * float(np.percentile(dp, 2.5)), 100 * float(np.percentile(dp, 97.5))],
            "en->fake AUC": [d, 100 * float(np.percentile(da, 2.5)), 100 * float(np.percentile(da, 97.5))]}


def arm_settings(name: str, s: Sizes) -> dict[str, object]:
    """The :func:`pretrain` switches of an ablation arm of :data:`ARMS`."""
    if name not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {name!r}")
    sep, lang, width = ARMS[name]
    return {"separate_specials": sep, "language_positions": lang,
            "d_model": None if width is None else s.widths[width]}


@dataclass
class ArmResult:
    trained: ml.Pretrained
    untrained: ml.Pretrained
    evaluations: dict[str, Evaluation]   # "trained", "untrained"

    def summary(self, n_boot: int = 1000) -> dict[str, object]:
        """Both summaries, trained minus untrained (paired bootstrap), the loss and CPU time."""
        t, u = self.evaluations["trained"], self.evaluations["untrained"]
        return {"trained": t.summary(n_boot), "untrained": u.summary(n_boot),
                "trained - untrained": paired_difference(t, u, n_boot),
                "final MLM loss (mean of the last 50 steps)": float(np.mean(self.trained.losses[-50:])),
                "pre-training CPU s": round(self.trained.cpu_seconds, 1),
                "params": sum(p.numel() for p in self.trained.model.parameters())}


def run_arm(setup: Setup, name: str = "shared specials + positions", seed: int = 0,
            device: str | None = None) -> ArmResult:
    """One arm of the comparison: the model pre-trained with the arm's switches and the untrained
    encoder of the same architecture and seed, both evaluated (each at its own dev-chosen layer)."""
    kw = arm_settings(name, setup.sizes)
    trained = pretrain(setup, seed, device=device, **kw)
    untrained = pretrain(setup, seed, steps=0, **kw)
    return ArmResult(trained, untrained, {"trained": evaluate(trained.model, setup),
                                          "untrained": evaluate(untrained.model, setup)})


def unigram_entropy(setup: Setup) -> float:
    """The masked-LM loss (nats) of a model that predicts a masked token from its language's
    token frequencies alone (the unigram plateau; the row tells the language, so it is each
    language's own unigram entropy, averaged over their tokens). A model whose loss has not gone
    clearly below it has learned little context, and little multilinguality can be read from it."""
    total, n_all = 0.0, 0
    for texts in (setup.english, setup.fake):
        counts = ml.token_counts(setup.tok, texts)
        n = np.array([c for i, c in counts.items() if i >= N_SPECIAL], dtype=float)
        p = n / n.sum()
        total += -(p * np.log(p)).sum() * n.sum()
        n_all += int(n.sum())
    return float(total / n_all)
