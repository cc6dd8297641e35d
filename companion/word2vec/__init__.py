"""Chapter 3: word2vec -- CBOW and skip-gram with a full softmax, a hierarchical softmax or
negative sampling, trained with the C code's SGD (Mikolov et al. 2013a, 2013b).

The pieces, in the order the chapter builds them:

* :mod:`.corpus` -- vocabulary (``min_count``, sorted by count) and the encoded token stream;
* :mod:`.pairs` -- subsampling of frequent words (the paper's and the C code's rules), the
  dynamic window, batches of training examples;
* :mod:`.noise` -- the unigram^0.75 noise distribution and its sampling table;
* :mod:`.heads` -- the three output layers (autograd loss + hand-written SGD update);
* :mod:`.skipgram`, :mod:`.cbow` -- the two architectures (:mod:`.model` holds what they share);
* :mod:`.trainer` -- ``train_word2vec(sentences, Word2VecConfig(...))``;
* :mod:`.export` -- which vectors (input / output / both) and the word2vec text format;
* :mod:`.variants` -- the chapter's table: every variant trained and scored side by side;
* :mod:`.widget` -- the chapter's explorer of nearest neighbours and analogies.

Quick start::

    from companion.word2vec import train_word2vec
    res = train_word2vec(sentences, arch="sg", output="neg", epochs=5)
    vectors, index = res.vectors(), res.index     # for companion.evaluate
    res.save("vectors.txt")                       # gensim's KeyedVectors reads it
"""

from .cbow import CBOW
from .corpus import EncodedCorpus, Word2VecVocab, build_vocab, encode_corpus
from .export import COMBINE, combine, load_word2vec_format, save_word2vec_format
from .heads import (
    OUTPUTS,
    FullSoftmax,
    HierarchicalSoftmax,
    NegativeSampling,
    gather_rows,
    logistic_block_loss,
    logistic_block_update,
)
from .model import Word2VecModel
from .noise import NoiseSampler, noise_distribution, unigram_table
from .pairs import (
    Word2VecBatch,
    context_matrix,
    count_training_words,
    epoch_batches,
    keep_probability,
    pairs_of,
    reduced_windows,
    subsample,
)
from .skipgram import SkipGram
from .trainer import ENGINES, Word2VecConfig, Word2VecResult, learning_rate, make_model, train_word2vec
from .variants import train_variants, variant_name, variant_table
from .widget import explore, explorer_widget, parse_query

__all__ = [
    "CBOW", "COMBINE", "ENGINES", "EncodedCorpus", "FullSoftmax", "HierarchicalSoftmax",
    "NegativeSampling", "NoiseSampler", "OUTPUTS", "SkipGram", "Word2VecBatch", "Word2VecConfig",
    "Word2VecModel", "Word2VecResult", "Word2VecVocab", "build_vocab", "combine", "context_matrix",
    "count_training_words", "encode_corpus", "epoch_batches", "explore", "explorer_widget",
    "keep_probability", "learning_rate",
    "gather_rows", "load_word2vec_format", "logistic_block_loss", "logistic_block_update", "make_model",
    "noise_distribution", "pairs_of", "parse_query",
    "reduced_windows", "save_word2vec_format", "subsample", "train_variants", "train_word2vec",
    "unigram_table", "variant_name", "variant_table",
]
