"""Chapter 5: sentence embeddings.

One module per model, in the order the chapter builds them:

* :mod:`.baselines` -- bag of words / TF-IDF, averaged word vectors, SIF (Arora et al. 2017);
* :mod:`.doc2vec` -- paragraph vectors, PV-DM and PV-DBOW, with inference (Le & Mikolov 2014);
* :mod:`.skipthoughts` -- encode a sentence, decode its neighbours (Kiros et al. 2015);
* :mod:`.sdae`, :mod:`.fastsent` -- a denoising LSTM autoencoder and a log-linear
  Skip-thoughts (Hill et al. 2016);
* :mod:`.infersent` -- BiLSTM-max (and the encoders it was compared with) trained on NLI
  (Conneau et al. 2017);
* :mod:`.quickthoughts` -- classify the context sentence among the batch (Logeswaran & Lee 2018);
* :mod:`.dan` -- the deep averaging network of the Universal Sentence Encoder (Cer et al. 2018);
* :mod:`.gensen` -- one encoder, several tasks (next sentence, NLI, translation), after GenSen.

Every encoder exposes ``encode(list[str]) -> Tensor [n, d]`` for
:func:`companion.evaluate.senteval`.
"""

from ._text import oov_share
from .baselines import (
    SIF,
    AveragedVectors,
    BagOfWords,
    first_component,
    remove_component,
    sif_weights,
    word_probabilities,
)
from .dan import DAN, DANConfig, train_dan
from .doc2vec import MODES, Doc2VecConfig, Doc2VecModel, Doc2VecResult, train_doc2vec
from .fastsent import FastSent, FastSentConfig, FastSentResult, train_fastsent
from .gensen import TASKS, GenSen, GenSenConfig, GenSenResult, train_gensen
from .infersent import (
    POOLINGS,
    BiLSTMEncoder,
    InferSentConfig,
    NLIResult,
    nli_features,
    train_infersent,
    train_nli,
)
from .quickthoughts import (
    QuickThoughts,
    QuickThoughtsConfig,
    QuickThoughtsResult,
    train_quickthoughts,
)
from .sdae import SDAE, SDAEConfig, SDAEResult, add_noise, train_sdae
from .skipthoughts import (
    SkipThoughts,
    SkipThoughtsConfig,
    SkipThoughtsResult,
    fit_linear_map,
    heldout_map_quality,
    train_skipthoughts,
)

__all__ = [
    "DAN",
    "MODES",
    "POOLINGS",
    "SDAE",
    "SIF",
    "TASKS",
    "AveragedVectors",
    "BagOfWords",
    "BiLSTMEncoder",
    "DANConfig",
    "Doc2VecConfig",
    "Doc2VecModel",
    "Doc2VecResult",
    "FastSent",
    "FastSentConfig",
    "FastSentResult",
    "GenSen",
    "GenSenConfig",
    "GenSenResult",
    "InferSentConfig",
    "NLIResult",
    "QuickThoughts",
    "QuickThoughtsConfig",
    "QuickThoughtsResult",
    "SDAEConfig",
    "SDAEResult",
    "SkipThoughts",
    "SkipThoughtsConfig",
    "SkipThoughtsResult",
    "add_noise",
    "first_component",
    "fit_linear_map",
    "heldout_map_quality",
    "nli_features",
    "oov_share",
    "remove_component",
    "sif_weights",
    "train_dan",
    "train_doc2vec",
    "train_fastsent",
    "train_gensen",
    "train_infersent",
    "train_nli",
    "train_quickthoughts",
    "train_sdae",
    "train_skipthoughts",
    "word_probabilities",
]
