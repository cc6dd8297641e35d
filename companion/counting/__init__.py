"""Chapter 1: counting. n-gram language models with smoothing, and count-based word vectors."""
