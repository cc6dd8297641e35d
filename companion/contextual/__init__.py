"""Chapter 6: contextual embeddings — RNN language models, AWD-LSTM dropouts, Context2Vec, TagLM, CoVe, ELMo, ULMFiT.

Modules are imported directly (``from companion.contextual.<module> import ...``); this file stays
empty so that the chapter's modules can be written in parallel.
"""
