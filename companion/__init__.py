"""Companion package of the book *Embeddings, from n-grams to prompting*.

One subpackage per era of the history the book tells (``counting``, ``neural_lm``,
``word2vec``, ...), plus shared machinery: ``data`` (datasets, vocabularies, batching),
``scale`` (the BOOK_SCALE knob), ``device``, ``train`` (the one training loop),
``evaluate`` and ``plot``. Nothing is downloaded at import time.
"""

__version__ = "0.1.0"
