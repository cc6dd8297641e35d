"""Reference rows of the book's sentence table, computed by the SentEval-style harness.

Three encoders through :func:`companion.evaluate.senteval` at the current ``BOOK_SCALE``
(subsample sizes: :meth:`ProbeConfig.for_scale`), every row stored in the ``sentence`` running
table (``companion/evaluate/rows/sentence.json``; rows at ``ci`` scale are printed, not stored):

* a random-projection bag of words, 300-d (:class:`RandomBowEncoder`): no learning at all, the
  floor;
* the mean of GloVe 6B 50d word vectors (``companion.data.load_glove_6b_50d``; lower-cased words
  and punctuation, unknown words skipped) -- SentEval's bag-of-vectors baseline;
* all-MiniLM-L6-v2 through ``sentence-transformers`` (a ``peers`` extra; the weights are the
  registry's copy, ``companion.data.minilm_dir()``, loaded offline) -- until chapter 7's own BERT
  encoder can load the same weights.

``params`` is the encoder's parameter count (the probes are not counted); ``train_time_s`` is
``None`` (pre-trained elsewhere). The printed numbers include the harness's and the encoder's
seconds, measured on whatever machine runs it (noisy on a shared machine).

Run with ``python -m benchmarks sentence_reference`` (``BOOK_SCALE=laptop`` by default).
"""

from __future__ import annotations

import os
import time

from companion.evaluate.senteval import (
    MeanWordVectors,
    ProbeConfig,
    RandomBowEncoder,
    config_summary,
    senteval,
)
from companion.evaluate.tables import RunningTable
from companion.scale import get_scale

SOURCE = "python -m benchmarks sentence_reference (benchmarks/bench_sentence_reference.py)"
ENCODERS = ("rp_bow", "glove", "minilm")


def rp_bow_encoder():
    return "random-projection bag of words (300d)", RandomBowEncoder(300, seed=0), 0


def glove_encoder():
    from companion.data import load_glove_6b_50d

    vectors, words = load_glove_6b_50d()
    return "mean GloVe 6B 50d", MeanWordVectors(vectors, words), int(vectors.size)


def minilm_encoder(device: str = "cpu"):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach the Hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from companion.data.pretrained import minilm_dir

    model = SentenceTransformer(str(minilm_dir()), device=device)

    def encode(batch: list[str]):
        return model.encode(batch, batch_size=len(batch), convert_to_numpy=True, show_progress_bar=False)

    return "all-MiniLM-L6-v2 (sentence-transformers)", encode, sum(p.numel() for p in model.parameters())


def run(encoders: tuple[str, ...] = ENCODERS, save: bool | None = None) -> dict:
    """Evaluate the reference encoders, store their rows, return the flat numbers."""
    scale = get_scale()
    config = ProbeConfig.for_scale(scale)
    table = RunningTable("sentence")
    makers = {"rp_bow": rp_bow_encoder, "glove": glove_encoder, "minilm": minilm_encoder}
    out: dict = {"scale": scale}
    for key in encoders:
        t0 = time.perf_counter()
        name, encode, params = makers[key]()
        report = senteval(encode, name=name, config=config, progress=True)
        scores = report.scores()
        table.add(name, chapter="05", scores=scores, scale=scale, params=params, train_time_s=None,
                  source=SOURCE, save=save,
                  meta={"dim": report.dim, "sentences_encoded": report.n_sentences,
                        "encode_s": round(report.encode_seconds, 1), "harness_s": round(report.seconds, 1),
                        "probe": config_summary(config),
                        "stsb_probe": "softmax over score bins (SentEval), C on dev by Pearson"})
        print(report.frame().round(2).to_string(), flush=True)
        for k, v in scores.items():
            if not k.endswith(" sd"):
                out[f"{key} {k}"] = v
        out[f"{key}_seconds"] = round(time.perf_counter() - t0, 1)
        out[f"{key}_encode_seconds"] = round(report.encode_seconds, 1)
    return out


if __name__ == "__main__":
    from benchmarks.__main__ import report

    print(report("sentence_reference", run()))
