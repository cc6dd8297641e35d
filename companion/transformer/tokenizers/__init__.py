"""Subword tokenizers written out: BPE (Sennrich et al. 2016), byte-level BPE (GPT-2) and
WordPiece with BERT's BasicTokenizer. The byte-level BPE and WordPiece read the real GPT-2 and
bert-base-uncased files and give the same ids as tiktoken and HF ``BertTokenizer``
(``tests/test_tokenizers_parity.py``). Pure Python; tiktoken/HF are used only by tests and
benchmarks.

    BPE.train(text, vocab_size=8000).tokenize("lowest")   # Sennrich BPE, '</w>' word ends
    ByteLevelBPE.gpt2().encode("Hello world")            # [15496, 995]
    WordPiece.bert_base_uncased().encode("Hello world")  # [101, 7592, 2088, 102]
"""

from .basic import BasicTokenizer
from .bpe import (
    BPE,
    END_OF_WORD,
    LearnedMerges,
    MergeStep,
    apply_merges,
    learn_merges,
    merge_steps,
    word_counts,
)
from .byte_bpe import (
    ENDOFTEXT,
    GPT2_PATTERN,
    ByteLevelBPE,
    bytes_to_unicode,
    read_merges,
)
from .compare import compare_splits, tokens_per_word
from .widget import MergeStepper, merge_stepper_widget, stepper_html
from .wordpiece import WordPiece, read_vocab, wordpiece_split

__all__ = [
    "BPE",
    "ENDOFTEXT",
    "END_OF_WORD",
    "GPT2_PATTERN",
    "BasicTokenizer",
    "ByteLevelBPE",
    "LearnedMerges",
    "MergeStep",
    "MergeStepper",
    "WordPiece",
    "apply_merges",
    "bytes_to_unicode",
    "compare_splits",
    "learn_merges",
    "merge_stepper_widget",
    "merge_steps",
    "read_merges",
    "read_vocab",
    "stepper_html",
    "tokens_per_word",
    "word_counts",
    "wordpiece_split",
]
