"""Chapter 1: counting. n-gram language models with smoothing, and count-based word vectors.

n-gram models (every sentence is ``<s> w1 .. wm </s>``; ``</s>`` is predicted and counted)::

    from companion.counting import NGramCounts, ModifiedKneserNey, perplexity_table
    counts = NGramCounts(split.train, order=5)           # all orders 1..5, counted once (numpy)
    lm = ModifiedKneserNey(counts, order=3)              # or ModifiedKneserNey.fit(sentences, 3)
    lm.perplexity(split.test); lm.prob("jury", ["<s>", "the"]); lm.generate("the", seed=0)
    perplexity_table(split.train, split.valid, split.test)   # methods x n, tuned on valid

Models: :class:`MLE`, :class:`AddK` (:class:`Laplace`), :class:`JelinekMercer`,
:class:`KneserNey`, :class:`ModifiedKneserNey` (KenLM's lmplz, reproduced). Tuning:
:func:`tune_add_k`, :func:`tune_jelinek_mercer`. Analysis: :func:`unseen_ngram_share`,
:func:`count_memory`. Word vectors: :func:`cooccurrence_matrix`, :func:`ppmi`,
:func:`truncated_svd`, :func:`count_word_vectors`, :func:`similarity_table`. The text-generation
widget: :class:`ModelZoo`, :func:`generate_for` (its callback), :func:`generation_widget`.
Brown clustering and the class-based model: :func:`brown_clusters` (:class:`BrownConfig`),
:class:`ClassBigramLM`, :class:`LinearMixture`, :func:`fit_mixture`. LSA (Deerwester et al.'s
retrieval): :func:`fit_lsa`. The notebooks' plots and tables: ``companion.counting.report`` and
``companion.counting.figures`` (imported on use: they need matplotlib).
"""

from .addk import AddK, Laplace
from .arpa import compare_with_arpa, read_arpa
from .brown_clusters import BrownClusters, BrownConfig, brown_clusters
from .class_lm import ClassBigramLM, LinearMixture, fit_mixture
from .cooccurrence import Cooccurrence, cooccurrence_matrix
from .generate import apply_temperature, generate_text, sample
from .interpolation import JelinekMercer
from .lsa import LSA, fit_lsa
from .kneser_ney import KneserNey, ModifiedKneserNey, adjusted_counts, count_of_counts, modified_discounts
from .lm import InterpolatedLM, NGramLM, unk_share
from .mle import MLE
from .ngram import BOS, EOS, UNK, EncodedText, LMVocabulary, NGramCounts, unseen_ngram_share
from .ppmi import ppmi
from .representations import bag_of_words, build_vocab, one_hot, tfidf
from .svd import svd_vectors, truncated_svd
from .tables import DEFAULT_METHODS, METHODS, build_model, count_memory, kenlm_table, perplexity_table, time_build
from .tune import TuneResult, tune_add_k, tune_jelinek_mercer
from .vectors import CountVectors, count_word_vectors, dense_rows, similarity_table, sparse_neighbours
from .widget import GenerationWidget, ModelZoo, generate_for, generation_widget

__all__ = [
    "AddK", "BOS", "Cooccurrence", "CountVectors", "DEFAULT_METHODS", "EOS", "EncodedText", "InterpolatedLM",
    "JelinekMercer", "KneserNey", "LMVocabulary", "Laplace", "METHODS", "MLE", "ModifiedKneserNey",
    "NGramCounts", "NGramLM", "TuneResult", "UNK", "adjusted_counts", "apply_temperature", "bag_of_words",
    "build_model", "build_vocab", "compare_with_arpa", "kenlm_table", "cooccurrence_matrix", "count_memory",
    "count_of_counts", "count_word_vectors", "dense_rows", "generate_text", "modified_discounts",
    "one_hot", "perplexity_table", "ppmi", "read_arpa", "sample", "similarity_table", "sparse_neighbours",
    "svd_vectors", "tfidf", "time_build", "truncated_svd", "tune_add_k", "tune_jelinek_mercer",
    "unk_share", "unseen_ngram_share", "GenerationWidget", "ModelZoo", "generate_for", "generation_widget",
    "BrownClusters", "BrownConfig", "brown_clusters", "ClassBigramLM", "LinearMixture", "fit_mixture",
    "LSA", "fit_lsa",
]
