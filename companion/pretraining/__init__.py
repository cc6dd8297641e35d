"""Chapter 8: the pre-trained LM family — one pre-training harness with pluggable objectives (MLM variants, NSP/SOP, ALBERT, XLNet, ELECTRA, MASS, UniLM, BART, T5).

Modules are imported directly (``from companion.pretraining.<module> import ...``); this file stays
empty so that the chapter's modules can be written in parallel.
"""
