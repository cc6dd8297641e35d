"""Chapter 2: neural language models.

* :mod:`.tree` -- binary trees over the vocabulary (Huffman, balanced, clustered);
* :mod:`.output` / :mod:`.hsoftmax` -- the full softmax and the hierarchical softmax;
* :mod:`.nnlm` -- Bengio et al. (2003)'s neural probabilistic language model;
* :mod:`.lbl` -- Mnih & Hinton (2007)'s log-bilinear model;
* :mod:`.senna` -- Collobert & Weston (2008)'s window ranking objective;
* :mod:`.mixture` -- interpolating two models (NNLM + trigram);
* :mod:`.timing` -- training throughput of full vs hierarchical softmax;
* :mod:`.common` -- n-gram examples, minibatches, perplexity evaluation.
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
    "softmax_speed_table", "training_throughput", "zipf_stream",
]
