"""Chapter 11b: one vocabulary, two languages -- a tiny English + Chinese masked LM.

Multilingual BERT (Devlin et al. 2019; Pires et al. 2019's "How multilingual is multilingual
BERT?") was trained by masked LM on 104 Wikipedias with one shared WordPiece vocabulary and no
parallel text, yet a classifier fine-tuned in English works in other languages ("zero-shot
cross-lingual transfer"). This module rebuilds the experiment at a scale a laptop can run:

* :func:`english_text` / :func:`chinese_text` -- monolingual text (Part II's English corpus;
  People's Daily sentences, THUCNews headlines, OCNLI premises) plus each side of Tatoeba cmn-eng's *training* pairs,
  shuffled separately, never paired (a comparable corpus, as Wikipedias are);
* :func:`train_tokenizer` -- one WordPiece vocabulary over both (Chinese split into characters,
  as mBERT does), after NFKC normalisation (full-width punctuation and digits become ASCII, as
  SentencePiece's default does), and :func:`shared_tokens` -- what the two languages share;
* :func:`pretrain_mlm` -- chapter 7's :class:`~companion.transformer.bert.BertForPreTraining`
  trained by masked LM on monolingual rows of both languages;
* :func:`sentence_vectors` -- mean-pooled layers; :func:`center` removes each language's mean
  vector (Libovicky et al. 2020: much of a multilingual vector is "which language");
* :func:`transfer` -- a logistic-regression classifier trained in one language and tested in the
  other, with :func:`auc`; :func:`retrieval` -- Tatoeba translation retrieval by cosine;
  :func:`overlap_retrieval` -- the multilingual-free baseline that matches shared tokens only;
* :func:`word_translation` -- nearest Chinese characters of English words in the embeddings.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..checks import check_texts
from ..scale import pick


@dataclass(frozen=True)
class Sizes:
    en_chars: int           # English pre-training characters
    zh_chars: int           # Chinese pre-training characters (about one token each)
    vocab_size: int
    d_model: int
    n_layer: int
    n_head: int
    max_len: int
    batch_size: int
    steps: int              # MLM steps
    lr: float
    seeds: tuple[int, ...]  # pre-training seeds (the spread)
    n_train: int            # sentiment training examples per language
    n_test: int             # sentiment test examples per class and language
    n_pairs: int            # Tatoeba test pairs
    n_boot: int


def sizes(scale: str | None = None) -> Sizes:
    return pick(
        ci=Sizes(60_000, 20_000, 3000, 64, 2, 4, 32, 32, 25, 2e-3, (0,), 300, 100, 200, 200),
        laptop=Sizes(700_000, 240_000, 8000, 128, 2, 4, 48, 32, 500, 1e-3, (0, 1), 2000, 400, 1000, 1000),
        gpu=Sizes(4_000_000, 1_400_000, 12000, 256, 4, 4, 64, 64, 5000, 5e-4, (0, 1, 2), 6000, 1000, 2000, 2000),
        scale=scale)


def normalize(text: str) -> str:
    """NFKC: full-width ``，。！？１２３`` become ``,.!?123`` (shared with English), compatibility
    characters fold; Chinese characters are unchanged."""
    return unicodedata.normalize("NFKC", text)


# ------------------------------------------------------------------------------------- data


def tatoeba_split(n_test: int, seed: int = 0, min_words: int = 4) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Tatoeba cmn-eng as ``(train pairs, test pairs)``: ``n_test`` seeded pairs of at least
    ``min_words`` English words, no English or Chinese side repeated; every pair sharing a side
    with a test pair is left out of training."""
    from ..data.parallel import load_tatoeba_cmn_eng

    pairs = load_tatoeba_cmn_eng()
    order = np.random.default_rng(seed).permutation(len(pairs))
    test, seen_en, seen_zh = [], set(), set()
    for i in order:
        en, zh = pairs[i]
        if len(test) < n_test and len(en.split()) >= min_words and en not in seen_en and zh not in seen_zh:
            test.append((en, zh))
            seen_en.add(en)
            seen_zh.add(zh)
    train = [p for p in pairs if p[0] not in seen_en and p[1] not in seen_zh]
    if len(test) < n_test:
        raise ValueError(f"only {len(test)} distinct Tatoeba pairs of >= {min_words} words; ask for fewer")
    return train, test


def _take(texts: Sequence[str], max_chars: int) -> list[str]:
    out, n = [], 0
    for t in texts:
        if n >= max_chars:
            break
        out.append(t[: max_chars - n])
        n += len(out[-1])
    return out


def english_text(max_chars: int, tatoeba_train: Sequence[tuple[str, str]], seed: int = 0) -> list[str]:
    """Part II's English pre-training corpus interleaved with Tatoeba's English training sides
    (shuffled with their own seed), cut at ``max_chars`` characters."""
    from ..data.lm_corpora import load_pretraining_corpus
    from ..transformer.chapter7b import corpus_slice

    wiki = corpus_slice(load_pretraining_corpus("train"), max_chars // 2)
    sents = [en for en, _ in tatoeba_train]
    sents = [sents[i] for i in np.random.default_rng(seed + 101).permutation(len(sents))]
    return [normalize(t) for t in _take(wiki, max_chars // 2) + _take(sents, max_chars - max_chars // 2)]


def split_chinese(text: str, min_chars: int = 4) -> list[str]:
    """Split Chinese running text into sentences after 。！？ (closing quotes stay with their
    sentence); pieces shorter than ``min_chars`` characters are dropped."""
    parts = re.split(r"(?<=[。！？])(?![”’」』])", text)
    return [p.strip() for p in parts if len(p.strip()) >= min_chars]


def chinese_text(max_chars: int, tatoeba_train: Sequence[tuple[str, str]], seed: int = 0) -> list[str]:
    """People's Daily (January 1998) sentences, THUCNews headlines and OCNLI premises (simplified
    script) with Tatoeba's Chinese training sides (mostly traditional script), shuffled together,
    cut at ``max_chars`` characters."""
    from ..data import load_task
    from ..data.peoples_daily import load_peoples_daily

    thuc = load_task("thucnews").splits
    heads = [e.text for split in ("train", "test") for e in thuc[split]]
    premises = list(dict.fromkeys(e.text for e in load_task("ocnli").splits["train"]))
    news = [s for line in load_peoples_daily() for s in split_chinese("".join(line))]
    texts = news + heads + premises + [zh for _, zh in tatoeba_train]
    order = np.random.default_rng(seed + 202).permutation(len(texts))
    return [normalize(t) for t in _take([texts[i] for i in order], max_chars)]


def sentiment_data(n_train: int, n_test: int, seed: int = 0) -> dict[str, dict[str, tuple[list[str], np.ndarray]]]:
    """``{"en": {"train": (texts, labels), "test": ...}, "zh": {...}}``: SST-2 (GLUE) training
    sentences of at least 5 words and its 872-sentence dev-as-test set cut to ``n_test`` per class;
    ChnSentiCorp hotel reviews split into disjoint train and test samples, the test balanced
    (``n_test`` per class), so chance is 50 % on both test sets."""
    from ..data import load_task

    rng = np.random.default_rng(seed)

    def balanced(exs, n_per_class):
        out = []
        for c in (0, 1):
            idx = [i for i, e in enumerate(exs) if e.label == c]
            out += [exs[i] for i in rng.permutation(idx)[:n_per_class]]
        return out

    sst = load_task("sst2_glue").splits
    en_train = [e for e in sst["train"] if len(e.text.split()) >= 5]
    en_train = [en_train[i] for i in rng.permutation(len(en_train))[:n_train]]
    en_test = balanced(sst["test"], n_test)
    chn = load_task("chnsenticorp").splits["all"]
    order = rng.permutation(len(chn))
    zh_test = balanced([chn[i] for i in order[: len(chn) // 2]], n_test)
    zh_train = [chn[i] for i in order[len(chn) // 2:]][:n_train]

    def pack(exs):
        return [normalize(e.text) for e in exs], np.array([e.label for e in exs])

    return {"en": {"train": pack(en_train), "test": pack(en_test)},
            "zh": {"train": pack(zh_train), "test": pack(zh_test)}}


# -------------------------------------------------------------------------------- tokenizer


def train_tokenizer(english: Sequence[str], chinese: Sequence[str], vocab_size: int):
    """One WordPiece vocabulary over both languages (lower-cased; BERT's basic tokenizer puts
    every CJK character in a word of its own, so Chinese enters as characters)."""
    from ..transformer.tokenizers import WordPiece

    return WordPiece.train([*english, *chinese], vocab_size)


def token_counts(tok, texts: Sequence[str]) -> dict[int, int]:
    """How often each token id occurs in ``texts``."""
    counts: dict[int, int] = {}
    for t in texts:
        for i in tok.ids(t):
            counts[i] = counts.get(i, 0) + 1
    return counts


def shared_tokens(tok, english: Sequence[str], chinese: Sequence[str]) -> dict[str, float]:
    """The anchors: token types used by both languages, and the share of each language's running
    tokens that are such shared types (``[UNK]`` excluded), in percent to one decimal."""
    unk = tok.vocab[tok.unk]
    en, zh = token_counts(tok, english), token_counts(tok, chinese)
    en.pop(unk, None)
    zh.pop(unk, None)
    both = set(en) & set(zh)
    return {"en types": len(en), "zh types": len(zh), "shared types": len(both),
            "en tokens shared %": round(100 * sum(en[i] for i in both) / max(1, sum(en.values())), 1),
            "zh tokens shared %": round(100 * sum(zh[i] for i in both) / max(1, sum(zh.values())), 1)}


def examples_of_shared(tok, english: Sequence[str], chinese: Sequence[str], k: int = 20) -> list[str]:
    """The ``k`` shared tokens most frequent in the Chinese text."""
    en, zh = token_counts(tok, english), token_counts(tok, chinese)
    unk = tok.vocab[tok.unk]
    both = sorted((i for i in set(en) & set(zh) if i != unk), key=lambda i: (-zh[i], i))
    return [tok.inverse[i] for i in both[:k]]


# ----------------------------------------------------------------------------- pre-training


def pack_sentences(ids: Sequence[Sequence[int]], room: int) -> list[list[int]]:
    """Greedily concatenate consecutive sentences (token-id lists) into documents of at most
    ``room`` ids (a longer sentence is cut), so short sentences do not fill rows with padding.

    Example:
        >>> pack_sentences([[1, 2], [3], [4, 5, 6], [7]], 3)
        [[1, 2, 3], [4, 5, 6], [7]]
    """
    if room < 1:
        raise ValueError(f"room must be positive, got {room}")
    docs, cur = [], []
    for s in ids:
        s = list(s)[:room]
        if not s:
            continue
        if len(cur) + len(s) > room:
            docs.append(cur)
            cur = []
        cur += s
    if cur:
        docs.append(cur)
    return docs


def bert_config(tok, s: Sizes):
    from ..transformer.bert import BertConfig

    v = tok.vocab
    return BertConfig(vocab_size=len(tok), max_len=s.max_len, n_layer=s.n_layer, n_head=s.n_head,
                      d_model=s.d_model, pad_id=v["[PAD]"], unk_id=v["[UNK]"], cls_id=v["[CLS]"],
                      sep_id=v["[SEP]"], mask_id=v["[MASK]"])


@dataclass
class Pretrained:
    model: object            # BertForPreTraining
    losses: list[float]      # per step
    cpu_seconds: float
    tokens: int


def tlm_rows(tok, pairs: Sequence[tuple[str, str]], room: int) -> list[list[int]]:
    """XLM's translation LM (Conneau & Lample 2019): each parallel pair as one row,
    ``english [SEP] chinese``, masked like any other row, so a masked English word can be read
    off its Chinese translation. Pairs longer than ``room`` ids are left out."""
    sep = tok.vocab["[SEP]"]
    rows = [[*tok.ids(normalize(en)), sep, *tok.ids(normalize(zh))] for en, zh in pairs]
    return [r for r in rows if len(r) <= room]


def pretrain_mlm(tok, english: Sequence[str], chinese: Sequence[str], s: Sizes, seed: int = 0,
                 steps: int | None = None, device: str | None = None,
                 pairs: Sequence[tuple[str, str]] = (), model=None) -> Pretrained:
    """Masked-LM pre-training of chapter 7's BERT on monolingual rows of both languages (rows
    never mix the languages; batches do, after shuffling). ``pairs`` adds XLM's translation-LM
    rows (:func:`tlm_rows`): parallel data, which plain MLM does without. ``steps=0`` returns the
    untrained model. ``model`` trains a prepared ``BertForPreTraining`` (a variant of its input
    layer, as :mod:`.fake_english` builds) instead of a fresh one from ``bert_config(tok, s)``
    and ``seed``."""
    from ..train import TrainConfig
    from ..transformer.bert import BertForPreTraining
    from ..transformer.pretrain import pretrain

    steps = s.steps if steps is None else steps
    if model is None:
        model = BertForPreTraining(bert_config(tok, s), seed=seed)
    elif not isinstance(model, BertForPreTraining):
        raise TypeError(f"model must be a BertForPreTraining (or None for a fresh one), got {type(model).__name__}")
    if steps == 0:
        model.eval()
        return Pretrained(model, [], 0.0, 0)
    room = s.max_len - 2
    docs = pack_sentences([tok.ids(t) for t in english], room) + pack_sentences([tok.ids(t) for t in chinese], room)
    docs += tlm_rows(tok, pairs, room)
    cfg = TrainConfig(epochs=1000, max_steps=steps, lr=s.lr, optimizer="adamw", weight_decay=0.01, seed=seed,
                      device=device, progress=False)
    c0 = time.process_time()
    hist = pretrain(model, docs, batch_size=s.batch_size, config=cfg)
    model.eval()
    return Pretrained(model, list(hist.step_loss), time.process_time() - c0, int(hist.items))


# --------------------------------------------------------------------------------- vectors


@torch.no_grad()
def sentence_vectors(encoder, tok, texts: Sequence[str], batch_size: int = 64) -> list[np.ndarray]:
    """Mean-pooled vectors of every layer (0 = embeddings) for ``texts``: ``[n, d]`` arrays,
    the average over the sentence's tokens without ``[CLS]``/``[SEP]`` (cut to ``max_len``)."""
    from .probes import bert_layers

    check_texts(texts, "texts")
    enc = getattr(encoder, "encoder", encoder)
    c = enc.config
    run = bert_layers(enc)
    if not texts:
        return [np.zeros((0, c.d_model), dtype=np.float32) for _ in range(len(enc.blocks) + 1)]
    ids = [[c.cls_id, *tok.ids(t)[: c.max_len - 2], c.sep_id] for t in texts]
    out: list[list[np.ndarray]] = []
    for b in range(0, len(ids), batch_size):
        rows = ids[b:b + batch_size]
        T = max(map(len, rows))
        x = torch.full((len(rows), T), c.pad_id, dtype=torch.long)
        content = torch.zeros((len(rows), T))
        am = torch.zeros((len(rows), T), dtype=torch.long)
        for j, r in enumerate(rows):
            x[j, :len(r)] = torch.tensor(r)
            am[j, :len(r)] = 1
            content[j, 1:len(r) - 1] = 1
        content[content.sum(1) == 0, 0] = 1  # an empty text: fall back on [CLS]
        w = (content / content.sum(1, keepdim=True)).unsqueeze(-1)
        out.append([(h.float().cpu() * w).sum(1).numpy() for h in run(x, am)])
    return [np.concatenate([o[k] for o in out]) for k in range(len(out[0]))]


def center(x: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
    """Subtract a language's mean vector (its own, unless ``mean`` is given)."""
    return x - (x.mean(0) if mean is None else mean)


# --------------------------------------------------------------------------------- transfer


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney) formula, ties counted half: the chance that a
    random positive scores above a random negative (0.5 = chance, whatever the threshold).

    Example:
        >>> auc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
        0.75
    """
    scores, y = np.asarray(scores, dtype=float), np.asarray(y)
    pos, neg = scores[y == 1], scores[y == 0]
    if not len(pos) or not len(neg):
        raise ValueError("AUC needs at least one positive and one negative example")
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def fit_logreg(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 100, seed: int = 0):
    """A binary logistic regression on standardised features (L-BFGS, L2 penalty ``l2``):
    returns ``score(x) -> logits`` (standardised with the *training* statistics)."""
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError(f"x must be [n, d] with one label per row, got {x.shape} and {len(y)} labels")
    mu, sd = x.mean(0), x.std(0) + 1e-6
    torch.manual_seed(seed)
    X = torch.as_tensor((x - mu) / sd, dtype=torch.float64)
    Y = torch.as_tensor(y, dtype=torch.float64)
    w = torch.zeros(x.shape[1] + 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w[:-1] + w[-1], Y) + l2 * (w[:-1] ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    wt = w.detach().numpy()
    return lambda z: ((np.asarray(z) - mu) / sd) @ wt[:-1] + wt[-1]


def transfer(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
             l2: float = 1e-2) -> dict[str, float]:
    """Train on one language, test on (possibly) another: accuracy (threshold 0) and AUC, in %."""
    score = fit_logreg(train_x, train_y, l2)(test_x)
    return {"acc": 100 * float(((score > 0) == test_y).mean()), "auc": 100 * auc(score, test_y)}


# -------------------------------------------------------------------------------- retrieval


def _unit(x: np.ndarray) -> np.ndarray:
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-12)


def retrieval(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each row of ``a``, is its translation (the same row of ``b``) the nearest row of ``b``
    by cosine? A boolean array (mean = precision@1; chance = 1 / len(b))."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must be aligned row by row, got {a.shape} and {b.shape}")
    sim = _unit(a) @ _unit(b).T
    return sim.argmax(1) == np.arange(len(a))


def overlap_retrieval(tok, english: Sequence[str], chinese: Sequence[str]) -> np.ndarray:
    """The baseline without any model: each English sentence picks the Chinese sentence sharing
    most token types with it (Jaccard; numbers, names in Latin script and punctuation are what
    can match). Ties go to the first; a sentence sharing nothing with any gets no match."""
    A = [set(tok.ids(t)) for t in english]
    B = [set(tok.ids(t)) for t in chinese]
    hit = np.zeros(len(A), dtype=bool)
    for i, a in enumerate(A):
        j = [len(a & b) / max(1, len(a | b)) for b in B]
        best = int(np.argmax(j))
        hit[i] = j[best] > 0 and best == i
    return hit


def bootstrap_ci(values: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """``(mean, 2.5 %, 97.5 %)`` of the mean of ``values`` over resamples."""
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), (n_boot, len(v)))].mean(1)
    return float(v.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


# ------------------------------------------------------------------------------------ words

WORD_PAIRS = (("water", "水"), ("fire", "火"), ("mountain", "山"), ("person", "人"), ("big", "大"),
              ("small", "小"), ("sky", "天"), ("moon", "月"), ("year", "年"), ("sun", "日"),
              ("heart", "心"), ("hand", "手"), ("mouth", "口"), ("i", "我"), ("you", "你"),
              ("he", "他"), ("good", "好"), ("three", "三"), ("five", "五"), ("middle", "中"),
              ("not", "不"), ("up", "上"), ("down", "下"), ("king", "王"))


def word_translation(tok, embeddings: np.ndarray, pairs: Sequence[tuple[str, str]] = WORD_PAIRS,
                     k: int = 10) -> tuple[float, float, list[tuple[str, str, list[str]]]]:
    """Nearest CJK tokens (cosine in the input embeddings) of each English word that is one
    token: ``(P@k, chance, [(english, gold, top-k Chinese)])``; chance = ``k / #CJK tokens``."""
    from ..transformer.tokenizers.basic import is_cjk

    cjk = [i for t, i in tok.vocab.items() if len(t) == 1 and is_cjk(t)]
    E = _unit(np.asarray(embeddings, dtype=float))
    rows, hits = [], 0
    for en, zh in pairs:
        if en not in tok.vocab or zh not in tok.vocab:
            continue
        sims = E[cjk] @ E[tok.vocab[en]]
        top = [tok.inverse[cjk[j]] for j in np.argsort(-sims)[:k]]
        hits += zh in top
        rows.append((en, zh, top))
    if not rows:
        raise ValueError("none of the word pairs is in the vocabulary")
    return hits / len(rows), k / len(cjk), rows


# ----------------------------------------------------------------------------------- widget


def nearest_translations(query: str, encoder, tok, pool_texts: Sequence[str], pool_vecs: np.ndarray,
                         layer: int, pool_mean: np.ndarray, query_mean: np.ndarray, k: int = 5
                         ) -> list[tuple[str, float]]:
    """The ``k`` sentences of ``pool_texts`` nearest to ``query`` (cosine of centred mean-pooled
    ``layer`` vectors; the pool's and the query language's means are removed)."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("type a sentence first")
    if not 1 <= k <= len(pool_texts):
        raise ValueError(f"k must be in 1..{len(pool_texts)}, got {k}")
    q = sentence_vectors(encoder, tok, [normalize(query)])[layer] - query_mean
    sims = (_unit(pool_vecs - pool_mean) @ _unit(q)[0])
    top = np.argsort(-sims)[:k]
    return [(pool_texts[i], round(float(sims[i]), 3)) for i in top]


def is_chinese(text: str) -> bool:
    """More CJK characters than Latin letters."""
    from ..transformer.tokenizers.basic import is_cjk

    cjk = sum(is_cjk(c) for c in text)
    return cjk > sum(c.isascii() and c.isalpha() for c in text)
