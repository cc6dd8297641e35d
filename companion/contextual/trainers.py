"""Chapter 6b's sizes and its two pre-trainings: CoVe's translation model and ELMo's biLM.

:mod:`.chapter6b` (the notebook's runs) and the scripts that train and store the laptop-scale
models (:mod:`.small_cove`, :mod:`.small_elmo`) both train through these functions, so a stored
model is trained exactly as the notebook trains one; :mod:`.chapter6b` re-exports every name.

* :func:`sizes` -- every size of chapter 6b's run (ci / laptop / gpu);
* :func:`mt_data`, :func:`train_cove`, :func:`cove_bleu` -- CoVe's translation model;
* :func:`lm_sentences`, :func:`train_bilm` -- ELMo's biLM on Part II's corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..scale import pick
from ..train import History, TrainConfig, fit
from .cove import (
    CoVe,
    CoVeConfig,
    TargetVocab,
    corpus_bleu,
    glove_vocab,
    tokenize,
    translate_sentences,
    translation_batches,
)
from .elmo import BiLM, BiLMConfig, WordVocab, lm_batches, word_tokens

__all__ = ["LMData", "MTData", "Sizes", "build_cove", "cove_bleu", "lm_sentences", "mt_data", "sizes", "train_bilm",
           "train_cove"]


@dataclass(frozen=True)
class Sizes:
    """Every size of chapter 6b's run."""

    # CoVe
    mt_pairs: int  # Multi30k training pairs used (29,000 = all)
    mt_steps: int  # trained in the notebook (ci, gpu)
    mt_steps_stored: int  # the stored checkpoint's run (python -m companion.contextual.small_cove)
    cove_hidden: int  # per direction
    tgt_vocab: int
    input_feeding: bool
    bleu_sentences: int
    stored: bool  # load the stored laptop checkpoints instead of training in the notebook
    # ELMo
    lm_sentences: int
    lm_heldout: int
    lm_steps: int
    lm_batch: int
    lm_vocab: int
    d: int
    cells: int
    # probes
    probe_train_tokens: int
    probe_eval_tokens: int
    pseudo_per_word: int
    # tagging
    tag_train: int
    tag_few: int
    tag_dev: int
    tag_test: int
    tag_epochs: int
    seeds: tuple[int, ...]
    # sentence probes
    senteval_seeds: tuple[int, ...]
    pool_sentences: int
    workers: int = 1  # processes that train independent taggers and probes side by side


def sizes(scale: str | None = None) -> Sizes:
    """The run's sizes for ``BOOK_SCALE`` (or ``scale``). gpu: written, not yet run."""
    return pick(
        ci=Sizes(mt_pairs=2000, mt_steps=30, mt_steps_stored=30, stored=False, cove_hidden=32, tgt_vocab=1000, input_feeding=False,
                 bleu_sentences=100, lm_sentences=1500, lm_heldout=200, lm_steps=30, lm_batch=32,
                 lm_vocab=2000, d=32, cells=64, probe_train_tokens=2000, probe_eval_tokens=1000,
                 pseudo_per_word=30, tag_train=120, tag_few=40, tag_dev=40, tag_test=100, tag_epochs=2,
                 seeds=(0,), senteval_seeds=(0, 1), pool_sentences=300),
        laptop=Sizes(mt_pairs=29000, mt_steps=420, mt_steps_stored=600, stored=True, cove_hidden=64, tgt_vocab=3000, input_feeding=False,
                     bleu_sentences=1000, lm_sentences=30000, lm_heldout=1000, lm_steps=350, lm_batch=32,
                     lm_vocab=4000, d=64, cells=128, probe_train_tokens=10000, probe_eval_tokens=5000,
                     pseudo_per_word=100, tag_train=800, tag_few=100, tag_dev=200, tag_test=800,
                     tag_epochs=4, seeds=(0, 1), senteval_seeds=(0, 1, 2, 3, 4), pool_sentences=3000,
                     workers=2),
        gpu=Sizes(mt_pairs=29000, mt_steps=6000, mt_steps_stored=6000, stored=False, cove_hidden=300, tgt_vocab=10000, input_feeding=True,
                  bleu_sentences=1000, lm_sentences=250000, lm_heldout=5000, lm_steps=30000, lm_batch=128,
                  lm_vocab=40000, d=256, cells=1024, probe_train_tokens=50000, probe_eval_tokens=20000,
                  pseudo_per_word=300, tag_train=14041, tag_few=200, tag_dev=3250, tag_test=3453,
                  tag_epochs=15, seeds=(0, 1, 2), senteval_seeds=(0, 1, 2, 3, 4), pool_sentences=20000),
        scale=scale,
    )


# --------------------------------------------------------------------------- CoVe
@dataclass
class MTData:
    train: list[tuple[list[str], list[str]]]
    test: list[tuple[list[str], list[str]]]
    src: TargetVocab
    tgt: TargetVocab


def mt_data(words: Sequence[str], S: Sizes) -> MTData:
    """Multi30k en -> de, lower-cased and tokenized; the encoder's vocabulary is GloVe's."""
    from ..data.parallel import load_multi30k

    d = load_multi30k("en", "de")
    train = [(tokenize(e), tokenize(g)) for e, g in d["train"][: S.mt_pairs]]
    test = [(tokenize(e), tokenize(g)) for e, g in d["test"][: S.bleu_sentences]]
    tgt = TargetVocab.build([g for _, g in train], max_size=S.tgt_vocab, min_count=2)
    return MTData(train, test, glove_vocab(words), tgt)


def build_cove(glove: np.ndarray, mt: MTData, S: Sizes, seed: int = 0) -> CoVe:
    cfg = CoVeConfig(tgt_vocab=len(mt.tgt), d_hidden=S.cove_hidden, input_feeding=S.input_feeding)
    return CoVe(cfg, glove, seed=seed)


def train_cove(glove: np.ndarray, mt: MTData, S: Sizes, seed: int = 0, device: str | None = None,
               steps: int | None = None) -> tuple[CoVe, History]:
    """Train the MT-LSTM for ``steps`` (default ``S.mt_steps``) steps of 64 pairs (Adam, lr 8e-3:
    at 200 steps on Multi30k, 1e-2 had reached a loss of 4.35 and 3e-3 only 4.66)."""
    model = build_cove(glove, mt, S, seed)
    hist = fit(model, lambda e: translation_batches(mt.train, mt.src, mt.tgt, 64, seed=seed + e),
               config=TrainConfig(epochs=100, lr=8e-3, max_steps=steps or S.mt_steps, seed=seed,
                                  device=device, clip_grad_norm=5.0))
    return model, hist


def cove_bleu(model: CoVe, mt: MTData):
    """Greedy translations of the test sentences and their corpus BLEU (ours)."""
    hyps = translate_sentences(model, [e for e, _ in mt.test], mt.src, mt.tgt)
    return corpus_bleu(hyps, [g for _, g in mt.test]), hyps


# --------------------------------------------------------------------------- ELMo
@dataclass
class LMData:
    train: list[list[str]]
    heldout: list[list[str]]
    pool: list[list[str]]  # sentences the biLM never trained on (probes, maps, widget)


def lm_sentences(S: Sizes, seed: int = 0) -> LMData:
    """Sentences of Part II's pre-training corpus, tokenized (case kept), 3-40 tokens: a random
    training sample, held-out documents' sentences, and a pool of unused training sentences."""
    from ..data.lm_corpora import load_pretraining_corpus

    train_sents = [s for d in load_pretraining_corpus("train") for s in d]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(train_sents))
    picked, rest = [], []
    for i in order:
        toks = word_tokens(train_sents[i])
        if 3 <= len(toks) <= 40:
            (picked if len(picked) < S.lm_sentences else rest).append(toks)
        if len(rest) >= max(S.pool_sentences * 20, 60_000):
            break
    held = [word_tokens(s) for d in load_pretraining_corpus("heldout") for s in d]
    held = [s for s in held if 3 <= len(s) <= 40][: S.lm_heldout]
    return LMData(picked, held, rest)


def train_bilm(data: LMData, S: Sizes, seed: int = 0, device: str | None = None):
    """Train the biLM for ``S.lm_steps`` steps (Adam, lr 1e-3); returns ``(model, vocab, history,
    heldout ppl)``. The token layer is layer-normalised and the softmax's bias starts at the log
    unigram frequencies: without the norm the highway units' outputs grew until they saturated
    the LSTMs' gates and every layer became nearly one-dimensional (see :mod:`.elmo`)."""
    vocab = WordVocab.build(data.train, S.lm_vocab)
    model = BiLM(BiLMConfig(vocab_size=len(vocab), d=S.d, cells=S.cells), seed=seed)
    model.init_unigram_bias(vocab, data.train)
    hist = fit(model, lambda e: lm_batches(data.train, vocab, S.lm_batch, seed=seed + e),
               config=TrainConfig(epochs=100, lr=1e-3, max_steps=S.lm_steps, seed=seed, device=device,
                                  clip_grad_norm=1.0))
    ppl = model.perplexity(lm_batches(data.heldout, vocab, 64, seed=0))
    return model, vocab, hist, ppl
