"""Where the real vocabulary files come from: the data registry's verified copies of GPT-2's
``encoder.json`` + ``vocab.bpe`` and ``bert-base-uncased``'s ``vocab.txt``
(:func:`companion.data.pretrained.gpt2_bpe_files`, :func:`~companion.data.pretrained.bert_vocab_file`).
"""

from __future__ import annotations

from pathlib import Path


def gpt2_files() -> tuple[Path, Path]:
    """``(encoder.json, vocab.bpe)`` of GPT-2's byte-level BPE (50,257 tokens, 50,000 merges)."""
    from companion.data.pretrained import gpt2_bpe_files

    return gpt2_bpe_files()


def bert_vocab() -> Path:
    """``vocab.txt`` of bert-base-uncased (30,522 lines, one token per line; the id is the line)."""
    from companion.data.pretrained import bert_vocab_file

    return bert_vocab_file()
