"""Chapter 5: sentence embeddings.

One module per model, in the order the chapter builds them:

* :mod:`.baselines` -- bag of words / TF-IDF, averaged word vectors, SIF (Arora et al. 2017);
* :mod:`.doc2vec` -- paragraph vectors, PV-DM and PV-DBOW, with inference (Le & Mikolov 2014);
* :mod:`.skipthoughts` -- encode a sentence, decode its neighbours (Kiros et al. 2015);
* :mod:`.quickthoughts` -- classify the context sentence among the batch (Logeswaran & Lee 2018).

Every encoder exposes ``encode(list[str]) -> Tensor [n, d]`` for
:func:`companion.evaluate.senteval`.
"""

from .baselines import (
    SIF,
    AveragedVectors,
    BagOfWords,
    first_component,
    remove_component,
    sif_weights,
    word_probabilities,
)
from .doc2vec import MODES, Doc2VecConfig, Doc2VecModel, Doc2VecResult, train_doc2vec
from .quickthoughts import (
    QuickThoughts,
    QuickThoughtsConfig,
    QuickThoughtsResult,
    train_quickthoughts,
)
from .skipthoughts import (
    SkipThoughts,
    SkipThoughtsConfig,
    SkipThoughtsResult,
    fit_linear_map,
    train_skipthoughts,
)

__all__ = [
    "MODES", "SIF", "AveragedVectors", "BagOfWords", "Doc2VecConfig", "Doc2VecModel", "Doc2VecResult",
    "QuickThoughts", "QuickThoughtsConfig", "QuickThoughtsResult", "SkipThoughts", "SkipThoughtsConfig",
    "SkipThoughtsResult", "first_component", "fit_linear_map", "remove_component", "sif_weights",
    "train_doc2vec", "train_quickthoughts", "train_skipthoughts", "word_probabilities",
]
