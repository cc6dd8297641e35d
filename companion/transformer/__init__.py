"""Chapter 7: attention, the Transformer, subword tokenizers, GPT and BERT.

Subpackages: ``tokenizers`` (BPE, byte-level BPE, WordPiece, written out; parity with tiktoken
and HF on the real GPT-2 and BERT vocabulary files).
"""
