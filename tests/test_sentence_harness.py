"""Chapter 5 encoders through the SentEval-style harness, and on a GPU where there is one."""

import random

import pytest
import torch

from companion.data.tasks import Example, TaskData
from companion.evaluate.senteval import ProbeConfig, senteval
from companion.sentence import BagOfWords, Doc2VecConfig, train_doc2vec

pytestmark = pytest.mark.usefixtures("one_thread")

SPORT = ["ball", "game", "team", "score", "win", "player", "coach", "season", "goal", "match"]
MONEY = ["stock", "market", "price", "bank", "trade", "money", "profit", "share", "fund", "rate"]


def topic_sentences(n=120, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pool = SPORT if i % 2 == 0 else MONEY
        out.append((" ".join(rng.choice(pool) if rng.random() < 0.6 else rng.choice(["the", "a", "of"]) for _ in range(8)), i % 2))
    return out


def test_encoders_run_through_the_harness():
    data = topic_sentences()
    task = TaskData("mr", {"all": [Example(s, y) for s, y in data]}, ("sport", "money"), "single", "accuracy")
    cfg = ProbeConfig(inner_folds=2, outer_folds=3, seeds=(0,))
    bow = BagOfWords("tfidf").fit([s for s, _ in data])
    d2v = train_doc2vec([s.split() for s, _ in data], Doc2VecConfig(dim=16, window=2, min_count=1, sample=0, lr=0.05, epochs=10))
    for name, enc in (("tfidf", bow.encode), ("doc2vec", d2v.encode)):
        rep = senteval(enc, [task], name=name, config=cfg)
        assert rep.results["mr"].mean > 80, (name, rep.results["mr"].mean)


@pytest.mark.gpu
def test_every_encoder_trains_and_encodes_on_cuda():
    from companion.sentence import (
        DANConfig,
        FastSentConfig,
        InferSentConfig,
        QuickThoughtsConfig,
        SDAEConfig,
        SkipThoughtsConfig,
        train_dan,
        train_fastsent,
        train_infersent,
        train_quickthoughts,
        train_sdae,
        train_skipthoughts,
    )

    data = topic_sentences(64)
    sents = [s for s, _ in data]
    docs = [sents[i:i + 16] for i in range(0, 64, 16)]
    pairs = [(a, b, (ya == yb) * 1) for (a, ya), (b, yb) in zip(data, reversed(data))]
    for mode in ("dbow", "dm_mean", "dm_concat"):
        res = train_doc2vec([s.split() for s in sents], Doc2VecConfig(mode=mode, dim=8, min_count=1, epochs=2, device="cuda"))
        assert res.model.doc_vectors.is_cuda and res.encode(sents[:3]).shape == (3, 8)
    small = {"emb_dim": 8, "hidden": 8, "batch_size": 8, "min_count": 1, "device": "cuda"}
    for res in (train_quickthoughts(docs, QuickThoughtsConfig(**small)), train_skipthoughts(docs, SkipThoughtsConfig(**small)),
                train_sdae(sents, SDAEConfig(**small)),
                train_fastsent(docs, FastSentConfig(dim=8, min_count=1, device="cuda")),
                train_infersent(pairs, InferSentConfig(emb_dim=8, hidden=8, mlp=8, n_classes=2, epochs=1, device="cuda")),
                train_dan(pairs, DANConfig(emb_dim=8, hidden=8, out_dim=8, mlp=8, n_classes=2, epochs=1, device="cuda"))):
        assert next(res.model.parameters()).is_cuda
        X = res.encode(sents[:3])
        assert X.shape[0] == 3 and torch.isfinite(X).all()
