"""Chapter 2: neural language models.

* :mod:`.tree` -- binary trees over the vocabulary (Huffman, balanced, clustered);
* :mod:`.output` / :mod:`.hsoftmax` -- the full softmax and the hierarchical softmax;
* :mod:`.nnlm` -- Bengio et al. (2003)'s neural probabilistic language model;
* :mod:`.lbl` -- Mnih & Hinton (2007)'s log-bilinear model;
* :mod:`.senna` -- Collobert & Weston (2008)'s window ranking objective;
* :mod:`.mixture` -- interpolating two models (NNLM + trigram);
* :mod:`.timing` -- training throughput of full vs hierarchical softmax;
* :mod:`.common` -- n-gram examples, minibatches, perplexity evaluation;
* :mod:`.recipes` -- examples from sentences (aligned with chapter 1's tokens), ``train_lm``,
  sampling, and the sizes per scale.
"""

from .common import (
    NeuralLM,
    iterate_minibatches,
    ngram_examples,
    perplexity_evaluator,
    perplexity_of_model,
    token_log_probs,
)
from .hsoftmax import HierarchicalSoftmax
from .lbl import LBL, LBLConfig
from .mixture import MixtureResult, interpolate, mix, tune_weight
from .nnlm import NNLM, NNLMConfig, paper_parameter_count
from .recipes import TrainPlan, lbl_preset, lm_examples, nnlm_preset, sample_words, train_lm
from .output import FullSoftmax, log_sigmoid, log_softmax, nll_from_logits
from .senna import SennaConfig, WindowRanker, context_windows, corrupt_centre, ranking_accuracy
from .timing import softmax_speed_table, training_throughput, zipf_stream
from .tree import BinaryTree, balanced_tree, clustered_tree, huffman_tree

__all__ = [
    "BinaryTree", "balanced_tree", "clustered_tree", "huffman_tree",
    "FullSoftmax", "HierarchicalSoftmax", "log_sigmoid", "log_softmax", "nll_from_logits",
    "NeuralLM", "NNLM", "NNLMConfig", "paper_parameter_count", "LBL", "LBLConfig",
    "SennaConfig", "WindowRanker", "context_windows", "corrupt_centre", "ranking_accuracy",
    "MixtureResult", "interpolate", "mix", "tune_weight",
    "iterate_minibatches", "ngram_examples", "perplexity_evaluator", "perplexity_of_model", "token_log_probs",
    "TrainPlan", "lbl_preset", "lm_examples", "nnlm_preset", "sample_words", "train_lm",
    "softmax_speed_table", "training_throughput", "zipf_stream",
]
