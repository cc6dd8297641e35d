"""Chapter 5's sizes per ``BOOK_SCALE`` (``pick(**SIZES)``), kept here so the notebook's cells stay
short.

* ``docs``: files of the Part II pre-training corpus (Brown first; ~100 sentences each) for
  word2vec, Doc2Vec and FastSent; ``rnn_docs``: the first of them for the recurrent models.
* ``emb``, ``hidden``, ``vocab``: word-vector size, GRU/LSTM units and vocabulary of the
  recurrent unsupervised models (Skip-thoughts, Quick-thoughts, SDAE).
* ``nli_hidden``, ``nli_epochs``, ``nli_train``: the NLI encoders (``None``: all 4,500 SICK-E
  training pairs).
* ``tfidf``: words of the TF-IDF bag; ``pool``: sentences per task in the widget's search pool.
* ``m30k``: Multi30k English-German caption pairs for GenSen-lite's translation task (its
  next-sentence task uses the ``rnn_docs``, its NLI task the ``nli_train`` pairs).
* ``seeds``: training seeds for the claims that repeat their training (InferSent's poolings).

``laptop`` fits the chapter in about five minutes of one CPU core; ``gpu`` is the paper-shaped run
(unrun in this book so far: no GPU was lent when the chapter was written).
"""

SIZES: dict[str, dict] = {
    "ci": dict(docs=10, rnn_docs=3, w2v_epochs=2, d2v_epochs=3, emb=32, hidden=48, vocab=2000,
               nli_hidden=32, nli_epochs=1, nli_train=400, tfidf=300, pool=100, m30k=200, seeds=(0,)),
    "laptop": dict(docs=60, rnn_docs=20, w2v_epochs=5, d2v_epochs=10, emb=64, hidden=128, vocab=6000,
                   nli_hidden=64, nli_epochs=2, nli_train=None, tfidf=300, pool=600, m30k=1500,
                   seeds=(0, 1)),
    "gpu": dict(docs=2000, rnn_docs=1000, w2v_epochs=5, d2v_epochs=20, emb=300, hidden=1200, vocab=20000,
                nli_hidden=1024, nli_epochs=5, nli_train=None, tfidf=10000, pool=2000, m30k=29000,
                seeds=(0, 1, 2)),
}
