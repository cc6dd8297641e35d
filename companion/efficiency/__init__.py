"""Chapter 9: smaller and larger — distillation, pruning, quantization and scaling laws.

Modules are imported directly (``from companion.efficiency.<module> import ...``); this file stays
empty so that the chapter's modules can be written in parallel.
"""
