"""Chapter 4: static vectors from global counts and from subwords.

* :mod:`.cooccur` -- the windowed, 1/distance-weighted co-occurrence matrix (sparse, vectorised)
  and the paper's probability-ratio table;
* :mod:`.glove` -- GloVe (Pennington et al. 2014): weighted least squares on ``log X`` with
  the reference code's AdaGrad; ``train_glove(sentences, GloVeConfig(...))``;
* :mod:`.subwords` -- fastText's character n-grams and FNV-1a hashing, exactly as its C++ code;
* :mod:`.fasttext` -- skip-gram with subword vectors (Bojanowski et al. 2017), reusing chapter
  3's batches and negative sampling; vectors for out-of-vocabulary words;
* :mod:`.corpus` -- the corpus of chapters 3 and 4 (Brown + SOTU + Moby Dick, lower-cased);
* :mod:`.presets` -- run sizes per ``BOOK_SCALE``.

Quick start::

    from companion.static import chapter_corpus, corpus_tokens, glove_preset, fasttext_preset
    from companion.static import train_glove, train_fasttext
    sents = chapter_corpus(max_tokens=corpus_tokens())
    glove = train_glove(sents, glove_preset())
    ft = train_fasttext(sents, fasttext_preset())
    ft.nearest("embeddingz")              # an unseen word still has neighbours
"""

from .cooccur import Cooccurrence, cooccurrence_matrix, cooccurrence_reference, probability_ratios
from .corpus import SOURCES, chapter_corpus, corpus_counts
from .fasttext import FastTextConfig, FastTextResult, FastTextSkipGram, train_fasttext
from .glove import GloVe, GloVeConfig, GloVeResult, glove_batches, train_glove, weighting
from .presets import corpus_tokens, fasttext_preset, glove_preset
from .subwords import (
    SubwordTable,
    bucket_collisions,
    build_subword_table,
    char_ngrams,
    fnv1a_32,
    fnv1a_32_many,
    ngram_buckets,
    subwords,
)

__all__ = [
    "Cooccurrence", "FastTextConfig", "FastTextResult", "FastTextSkipGram", "GloVe", "GloVeConfig",
    "GloVeResult", "SOURCES", "SubwordTable", "bucket_collisions", "build_subword_table", "chapter_corpus", "char_ngrams",
    "cooccurrence_matrix", "cooccurrence_reference", "corpus_counts", "corpus_tokens", "fasttext_preset",
    "fnv1a_32", "fnv1a_32_many", "glove_batches", "glove_preset", "ngram_buckets", "probability_ratios", "subwords", "train_fasttext", "train_glove",
    "weighting",
]
