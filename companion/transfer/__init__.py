"""Chapter 10: using a pre-trained model — fine-tuning, parameter-efficient transfer and prompting.

Modules are imported directly (``from companion.transfer.<module> import ...``); this file stays
empty so that the chapter's modules can be written in parallel.
"""
