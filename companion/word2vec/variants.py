"""The chapter's comparison: train several word2vec variants on one corpus and tabulate them.

``train_variants`` trains every combination of architecture x output layer x subsampling (the
notebook's {CBOW, SG} x {HS, NEG} x {on, off} table) on one encoded corpus; ``variant_table``
puts their training time and their scores on WordSim-353, SimLex-999 and the Google analogies
(semantic and syntactic sections apart, coverage shown) in one DataFrame.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from ._compiled import warm_up
from .corpus import EncodedCorpus
from .trainer import Word2VecResult, train_word2vec

__all__ = ["variant_name", "train_variants", "variant_table"]


def variant_name(arch: str, output: str, sample: float) -> str:
    """``"sg/neg/sub"``-style row label."""
    return f"{arch}/{output}/{'sub' if sample else 'nosub'}"


def train_variants(
    corpus: EncodedCorpus,
    *,
    archs: Sequence[str] = ("sg", "cbow"),
    outputs: Sequence[str] = ("neg", "hs"),
    samples: Sequence[float] = (1e-3, 0.0),
    progress: Any = None,
    **common: Any,
) -> dict[str, Word2VecResult]:
    """Train every (arch, output, sample) combination with the same other settings.

    Args:
        corpus: an :class:`~.corpus.EncodedCorpus` (encode once, train many times).
        archs, outputs, samples: the grid; ``sample=0`` switches subsampling off.
        progress: ``None`` or a callable ``progress(name)`` called before each run (e.g. print).
        common: any other :class:`~.trainer.Word2VecConfig` field (``epochs``, ``workers``, ...).

    Returns:
        ``{name: Word2VecResult}`` in grid order, names from :func:`variant_name`.
    """
    if not isinstance(corpus, EncodedCorpus):
        raise TypeError(f"corpus must be an EncodedCorpus (encode once with encode_corpus), got {type(corpus).__name__}")
    for key in ("arch", "output", "sample"):
        if key in common:
            raise ValueError(f"pass {key}s=[...] to vary {key}, not {key}=...")
    if not archs or not outputs or not samples:
        raise ValueError("archs, outputs and samples must each name at least one value")
    out: dict[str, Word2VecResult] = {}
    warm_up()  # numba compiles once, here, not inside the first variant's time (CPU or wall)
    for arch in archs:
        for output in outputs:
            for sample in samples:
                name = variant_name(arch, output, sample)
                if progress is not None:
                    progress(name)
                out[name] = train_word2vec(corpus, arch=arch, output=output, sample=sample, **common)
    return out


def variant_table(
    results: Mapping[str, Word2VecResult],
    *,
    similarity: Mapping[str, Sequence[tuple[str, str, float]]] | None = None,
    analogies: Sequence[tuple[str, str, str, str, str]] | None = None,
    reference: Mapping[str, tuple[Any, Any]] | None = None,
    restrict_vocab: int | None = 30000,
) -> pd.DataFrame:
    """One row per variant: seconds per epoch, words/s, then the benchmark scores.

    Args:
        results: from :func:`train_variants` (or any ``{name: Word2VecResult}``).
        similarity: ``{"WS353": pairs, "SimLex": pairs}``; analogies: Google questions.
        reference: extra rows without timing, ``{name: (vectors, index)}`` (e.g. gensim's).
    """
    from ..evaluate import compare_embeddings

    if not results and not reference:
        raise ValueError("nothing to tabulate: results and reference are both empty")
    named = {name: (r.vectors(), r.index) for name, r in results.items()}
    named.update(reference or {})
    scores = compare_embeddings(named, similarity=similarity, analogies=analogies, restrict_vocab=restrict_vocab)
    timing = pd.DataFrame(
        [{"name": n, "s/epoch": r.seconds_per_epoch, "words/s": r.words_per_second,
          "final loss": r.history.epoch_loss[-1]} for n, r in results.items()]
    )
    if len(timing):
        timing = timing.set_index("name")
        return timing.join(scores, how="outer").loc[list(named)]
    return scores
