"""The book's own pre-trained models, trained once by :mod:`companion.zoo` and stored.

Chapters 6-11 need models that have left the unigram plateau; minutes of training do not get
there on a CPU. These are trained once, in the background, by ``python -m companion.zoo train
NAME`` (the same code with ``--device cuda --scale gpu`` on a GPU), and stored in
``companion/zoo/models/<name>/`` as bf16 safetensors with their provenance.

* ``python -m companion.zoo list [--json]`` -- every model: parameters, tokens seen, CPU time,
  held-out loss and the unigram loss of the same tokenizer on the same text, sha256;
* ``python -m companion.zoo verify`` -- the stored weights' sha256;
* :func:`load` (``zoo.load("gpt-book")``) and :func:`tokenizer` in a chapter.
"""

from .corpus import book_tokenizer as tokenizer
from .specs import SPECS, Budget, ModelSpec, get_spec
from .store import load, provenance, verify

__all__ = ["SPECS", "Budget", "ModelSpec", "get_spec", "load", "provenance", "tokenizer", "verify"]
