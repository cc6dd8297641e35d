"""How good is a model? The book's shared evaluations.

* language models: :func:`perplexity`, :func:`perplexity_of` (cross-entropy in nats -> PPL);
* word vectors: :func:`word_similarity` (Spearman's ρ against human scores), :func:`analogy`
  (3CosAdd / 3CosMul), :func:`nearest_neighbours`, and :func:`compare_embeddings`, which puts
  many embedding sets on one table;
* sentence vectors: :func:`senteval` (SentEval-style linear probes and STS correlations for any
  ``encode(list[str])`` function);
* fine-tuned models: :func:`evaluate_glue` on GLUE-lite (:func:`load_glue` fixes the examples);
* taggers: :mod:`companion.evaluate.tagging` (token accuracy, span F1 as seqeval computes it);
* the book's running tables: :class:`RunningTable` (rows stored in ``evaluate/rows/``).

Vectors are a [V, d] tensor or array; an index is a ``Vocab`` or a dict word -> row. Every
word-vector function takes ``device`` and works batched on the GPU as on the CPU. The sentence,
GLUE-lite and tagging harnesses call the model they are given (on whatever device it lives) and
fit their probes with scikit-learn on the CPU.
"""

from .analogy import METHODS, AnalogyResult, analogy, analogy_scores, is_syntactic
from .compare import compare_embeddings
from .perplexity import bits_per_token, cross_entropy_nats, evaluate_nll, perplexity, perplexity_of
from .similarity import SimilarityResult, average_ranks, nearest_neighbours, spearman, word_similarity
from ._vectors import as_matrix, unit_rows
from .glue import GLUE_TASKS, GlueReport, evaluate_glue, load_glue
from .senteval import SENTEVAL_TASKS, EncoderCache, ProbeConfig, SentEvalReport, senteval
from .tables import RunningTable

__all__ = [
    "METHODS",
    "AnalogyResult",
    "EncoderCache",
    "GLUE_TASKS",
    "GlueReport",
    "ProbeConfig",
    "RunningTable",
    "SENTEVAL_TASKS",
    "SentEvalReport",
    "SimilarityResult",
    "analogy",
    "analogy_scores",
    "as_matrix",
    "average_ranks",
    "bits_per_token",
    "compare_embeddings",
    "cross_entropy_nats",
    "evaluate_glue",
    "evaluate_nll",
    "is_syntactic",
    "load_glue",
    "nearest_neighbours",
    "perplexity",
    "perplexity_of",
    "senteval",
    "spearman",
    "unit_rows",
    "word_similarity",
]
