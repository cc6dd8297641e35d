"""The examples in companion.data's docstrings run and give the outputs they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["text", "vocab", "batching", "registry", "fetching", "brown", "bengio", "corpora", "evalsets",
           "tasks", "treebank", "lm_corpora", "parallel", "registry_files"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"companion.data.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
