"""The KenLM driver's plumbing, without KenLM: cache folder, input checks, log parsing, and a
clear error when the build tools are missing."""

from __future__ import annotations

import pytest

from companion.counting import NGramCounts, count_memory, time_build
from companion.counting.mle import MLE
from companion.peers import kenlm_build as K


def test_cache_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("KENLM_DIR", str(tmp_path / "k"))
    assert K.cache_dir() == tmp_path / "k"
    assert K.binary("lmplz") == tmp_path / "k" / "bin" / "lmplz"
    assert not K.is_built()
    with pytest.raises(ValueError, match="unknown KenLM program"):
        K.binary("kenlm")


def test_missing_tools_give_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KENLM_DIR", str(tmp_path / "k"))
    monkeypatch.setattr(K.shutil, "which", lambda name: None)
    with pytest.raises(K.KenLMUnavailable, match="apt-get install -y libboost-program-options-dev"):
        K.build()
    assert "cmake" in K._missing_tools()


def test_write_sentences_rejects_what_kenlm_would_misread(tmp_path):
    path = K.write_sentences([["a", "b"], []], tmp_path / "t.txt")
    assert path.read_text() == "a b\n\n"
    for bad, match in (([["<unk>"]], "reserves"), ([["a b"]], "split"), ([[""]], "split"), (["ab"], "string")):
        with pytest.raises((ValueError, TypeError), match=match):
            K.write_sentences(bad, tmp_path / "bad.txt")


def test_discounts_from_lmplz_log():
    log = "Statistics:\n1 15 D1=0.111111 D2=1.91667 D3+=3\n2 30 D1=0.5 D2=1 D3+=1.5\nMemory estimate"
    assert K.discounts_from_log(log) == {1: (0.111111, 1.91667, 3.0), 2: (0.5, 1.0, 1.5)}


def test_count_memory_and_time_build():
    c = NGramCounts([["a", "b", "c"], ["a", "b"]], 3)
    mem = count_memory(c)
    assert list(mem.index) == [1, 2, 3]
    assert mem.loc[2, "distinct n-grams"] == 5  # <s> a, a b, b c, c </s>, b </s>
    assert mem.loc[3, "dense |V|^n MB"] == pytest.approx(4 * 6**3 / 2**20)
    lm, seconds = time_build(MLE, [["a", "b"]], 2, repeats=2)
    assert lm.order == 2 and seconds > 0
