"""The stored models' text and tokenizer.

Training text: Part II's pre-training corpus (its ``train`` split) plus IMDb's 25,000 training
reviews and its unlabelled reviews except a held-out 2 %. Held-out text: the corpus's
``heldout`` split plus those held-out unlabelled reviews. IMDb's test reviews are never read.

The tokenizer is the book's byte-level BPE (chapter 7a) with 4,096 tokens, the six special
tokens of chapter 7b included, learnt on an even mix of the two sources; it is stored beside the
models (``models/book-bpe``). Token streams (documents in a seeded order, ``<|endoftext|>``
between them) are cached as ``uint16`` arrays under ``$BOOK_DATA_DIR/zoo/``.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np

from ..transformer.chapter7b import EOT, SPECIALS, corpus_slice
from ..transformer.tokenizers import ByteLevelBPE
from .specs import TOKENIZER_VOCAB

MODELS_DIR = Path(__file__).resolve().parent / "models"
TOKENIZER_DIR = MODELS_DIR / "book-bpe"
IMDB_HELDOUT_PERCENT = 2
TOKENIZER_CHARS = 3_000_000  # half from each source
STREAM_SEED = 0


def imdb_heldout(review_id: int) -> bool:
    """Whether an unlabelled review (by id) is held out: chosen by a hash, independent of the rest."""
    digest = hashlib.sha256(f"imdb-unsup/{review_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < IMDB_HELDOUT_PERCENT


def book_texts(split: str) -> dict[str, list[str]]:
    """``{"corpus": [...], "imdb": [...]}``: the documents of ``split`` (``train`` or ``heldout``)."""
    from ..data.imdb import clean_review, load_imdb
    from ..data.lm_corpora import load_pretraining_corpus

    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    corpus = [" ".join(d) for d in load_pretraining_corpus(split) if d]
    unsup = [r for r in load_imdb("unsup") if imdb_heldout(r.id) == (split == "heldout")]
    imdb = [clean_review(r.text) for r in unsup]
    if split == "train":
        imdb = [clean_review(r.text) for r in load_imdb("train")] + imdb
    return {"corpus": corpus, "imdb": imdb}


def train_book_tokenizer(texts: dict[str, list[str]], chars: int = TOKENIZER_CHARS) -> ByteLevelBPE:
    """The book's BPE learnt on ``chars`` characters, half from each source (a deterministic slice)."""
    half = chars // 2
    mix = corpus_slice([[t] for t in texts["corpus"]], half) + corpus_slice([[t] for t in texts["imdb"]], half)
    return ByteLevelBPE.train(mix, TOKENIZER_VOCAB, special_tokens=SPECIALS)


def book_tokenizer(build: bool = False) -> ByteLevelBPE:
    """The stored tokenizer (``build=True`` learns it anew when it is not stored yet)."""
    enc, bpe = TOKENIZER_DIR / "encoder.json", TOKENIZER_DIR / "vocab.bpe"
    if not (enc.is_file() and bpe.is_file()):
        if not build:
            raise FileNotFoundError(f"the book's tokenizer is not stored in {TOKENIZER_DIR}; "
                                    "`python -m companion.zoo train gpt-book` builds it")
        train_book_tokenizer(book_texts("train")).save(TOKENIZER_DIR)
    ids = json.loads(enc.read_text(encoding="utf-8"))
    return ByteLevelBPE.from_files(enc, bpe, special_tokens={s: ids[s] for s in SPECIALS})


def tokenizer_sha256() -> str:
    """A hash of the stored tokenizer's two files (part of every stream's cache key)."""
    h = hashlib.sha256()
    for name in ("encoder.json", "vocab.bpe"):
        h.update((TOKENIZER_DIR / name).read_bytes())
    return h.hexdigest()


def _stream_path(split: str) -> Path:
    from ..data.fetching import data_dir
    from ..data.imdb import FILES

    key = hashlib.sha256(f"{tokenizer_sha256()}|{split}|{STREAM_SEED}|{IMDB_HELDOUT_PERCENT}|"
                         f"{FILES['train'][2]}|{FILES['unsup'][2]}".encode()).hexdigest()[:16]
    return data_dir() / "zoo" / f"stream-{split}-{key}.npy"


def token_stream(split: str, progress: bool = False) -> np.ndarray:
    """All of ``split``'s documents as one ``uint16`` id array: documents shuffled (seeded),
    ``<|endoftext|>`` after each. Built once and cached."""
    path = _stream_path(split)
    if path.is_file():
        return np.load(path)
    tok = book_tokenizer()
    texts = book_texts(split)
    docs = texts["corpus"] + texts["imdb"]
    random.Random(STREAM_SEED).shuffle(docs)
    eot = tok.special_tokens[EOT]
    out: list[int] = []
    it = docs
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(docs, desc=f"tokenizing {split}", mininterval=10)
    for d in it:
        out.extend(tok.encode_ordinary(d))
        out.append(eot)
    arr = np.asarray(out, dtype=np.uint16)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, arr)
    tmp.replace(path)
    return arr
