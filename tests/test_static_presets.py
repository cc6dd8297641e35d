"""Chapter 4's presets per scale and the chapter corpus's arguments."""

from __future__ import annotations

import pytest

from companion.static import corpus as corpus_mod
from companion.static.presets import corpus_tokens, fasttext_preset, glove_preset


@pytest.mark.parametrize("scale", ["ci", "laptop", "gpu"], ids=lambda s: f"scale_{s}")  # an id "gpu" would be skipped
def test_presets_are_valid_and_grow_with_the_scale(scale):
    g, f = glove_preset(scale), fasttext_preset(scale)
    g.validate()
    f.validate()
    assert g.x_max == 10.0 and g.alpha == 0.75 and f.minn == 3 and f.maxn == 6
    assert glove_preset("ci").epochs < glove_preset("laptop").epochs <= glove_preset("gpu").epochs
    assert fasttext_preset("ci").bucket < fasttext_preset("laptop").bucket
    assert corpus_tokens("ci") is not None and corpus_tokens("laptop") is None


def test_preset_overrides():
    assert glove_preset("ci", epochs=7).epochs == 7
    with pytest.raises(TypeError):
        fasttext_preset("ci", no_such_field=1)
    with pytest.raises(ValueError, match="epochs"):
        glove_preset("ci", epochs=0)
    with pytest.raises(ValueError, match="scale"):
        glove_preset("huge")


def test_chapter_corpus_arguments(monkeypatch):
    fake = (("a", "b", "c"), ("d", "e"), ("f",))
    monkeypatch.setattr(corpus_mod, "_load", lambda sources: fake)
    assert corpus_mod.chapter_corpus(max_tokens=4) == [["a", "b", "c"], ["d", "e"]]  # whole sentences
    assert len(corpus_mod.chapter_corpus()) == 3
    assert corpus_mod.corpus_counts([["a", "b"], ["a"]])["a"] == 2
    with pytest.raises(ValueError, match="sources"):
        corpus_mod.chapter_corpus(("wikipedia",))
    with pytest.raises(ValueError, match="max_tokens"):
        corpus_mod.chapter_corpus(max_tokens=0)
