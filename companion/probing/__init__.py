"""Chapter 11: what do the vectors know — probes, control tasks, structural probes, attention analysis, knowledge and multilingual models.

Modules are imported directly (``from companion.probing.<module> import ...``); this file stays
empty so that the chapter's modules can be written in parallel.
"""
