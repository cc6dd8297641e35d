"""Part II running text and parallel text: the PTB sample's tree reader, Multi30k, Tatoeba,
the LM corpora and the pre-training corpus. Tiny generated files first, then the real ones."""

from __future__ import annotations

import gzip

import pytest

from companion.data import lm_corpora as L
from companion.data import parallel as P
from companion.data.errors import DataFormatError
from companion.data.treebank import load_ptb_trees, parse_brackets

TREE = """( (S
    (NP-SBJ (NNP Pierre) (NNP Vinken) )
    (VP (MD will)
      (VP (VB join) (NP (-NONE- *-1) ) (NP (DT the) (NN board) )))
    (. .) ))
"""


# --- the tree reader -------------------------------------------------------------------------

def test_tree_tokens_tags_spans_depths():
    (t,) = parse_brackets(TREE)
    t = t.children[0]
    assert t.tagged() == (["Pierre", "Vinken", "will", "join", "the", "board", "."],
                          ["NNP", "NNP", "MD", "VB", "DT", "NN", "."])
    assert t.tagged(traces=True)[0][4] == "*-1"
    assert t.spans() == [("S", 0, 7), ("NP-SBJ", 0, 2), ("VP", 2, 6), ("VP", 3, 6), ("NP", 4, 6)]
    assert ("NP", 4, 5) in t.spans(traces=True)  # the trace's NP covers a token only with traces
    assert t.depths() == [2, 2, 2, 3, 4, 4, 1]


@pytest.mark.parametrize("text, where", [("(S (NP (DT a) )\n", "left open"),
                                         ("(S (DT a) ))\n", r"line 1: '\)' without"),
                                         ("(S\n (NP a b) )", "line 2: unexpected")])
def test_malformed_brackets_name_the_line(text, where):
    with pytest.raises(DataFormatError, match=where):
        parse_brackets(text, "x.mrg")


def test_load_ptb_trees_from_a_directory(tmp_path):
    (tmp_path / "combined").mkdir()
    (tmp_path / "combined" / "wsj_0001.mrg").write_text(TREE + TREE)
    trees = load_ptb_trees(tmp_path)
    assert len(trees) == 2 and trees[0].label == "S" and trees[1].fileid == "wsj_0001.mrg"


# --- parallel text ---------------------------------------------------------------------------

def test_multi30k_pairs_and_misalignment(tmp_path):
    for stem in ("train", "val", "test_2016_flickr"):
        for lang, text in (("en", "A dog.\nTwo men.\n"), ("de", "Ein Hund.\nZwei Männer.\n"), ("fr", "Un chien.\n")):
            (tmp_path / f"{stem}.{lang}.gz").write_bytes(gzip.compress(text.encode()))
    assert P.load_multi30k("en", "de", root=tmp_path)["dev"] == [("A dog.", "Ein Hund."), ("Two men.", "Zwei Männer.")]
    with pytest.raises(ValueError, match="not aligned"):
        P.load_multi30k("en", "fr", root=tmp_path)
    with pytest.raises(ValueError, match="languages"):
        P.load_multi30k("en", "cs", root=tmp_path)


def test_tatoeba_tiny_and_malformed(tmp_path):
    (tmp_path / "cmn.txt").write_text("Hi.\t你好。\tCC-BY 2.0 (France)\nRun.\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"cmn.txt, line 2: expected 'English<TAB>Mandarin"):
        P.load_tatoeba_cmn_eng(tmp_path)
    (tmp_path / "cmn.txt").write_text("Hi.\t你好。\n", encoding="utf-8")
    assert P.load_tatoeba_cmn_eng(tmp_path) == [("Hi.", "你好。")]


# --- running text ----------------------------------------------------------------------------

def test_gutenberg_header_is_stripped():
    text = "The Project Gutenberg EBook\n*** START OF THIS PROJECT GUTENBERG EBOOK HAMLET ***\n\nHAMLET\n\n" \
           "To be.\n\n*** END OF THIS PROJECT GUTENBERG EBOOK HAMLET ***\nlicence text\n"
    assert L.strip_gutenberg(text) == "\nHAMLET\n\nTo be.\n".strip("\n")
    assert L.strip_gutenberg("no markers\n") == "no markers\n".strip("\n")


def test_small_loaders_on_tiny_files(tmp_path):
    (tmp_path / "ptb.train.txt").write_text(" the cat <unk> \n\n a N dog \n")
    (tmp_path / "ptb.valid.txt").write_text(" a \n")
    (tmp_path / "ptb.test.txt").write_text(" b \n")
    assert L.load_ptb_lm(tmp_path)["train"] == [["the", "cat", "<unk>"], ["a", "N", "dog"]]
    (tmp_path / "rural.txt").write_text("Headline one\nFirst line.\n\nHeadline two\nMore.\n")
    (tmp_path / "science.txt").write_bytes(b"Caf\xe9 science.\n")
    docs = L.load_abc(tmp_path)
    assert [d.id for d in docs] == ["rural/0", "rural/1", "science/0"] and docs[2].sentences == ("Café science.",)
    (tmp_path / "a_gut.txt").write_text("HAMLET\n\nHAM. To be, or not\nto be. That is it.\n")
    (doc,) = L.load_shakespeare(tmp_path)
    assert doc.sentences == ("HAMLET", "HAM.", "To be, or not to be.", "That is it.")


def test_wiki_markup_is_stripped():
    text = ("{{Infobox|a={{nested}}}}'''Anarchism''' is a [[political philosophy]] that [[self-governance|"
            "self-governs]].<ref>{{cite web|url=x}}</ref> See [http://x.org the site].\n==History==\n"
            "[[Category:Politics]]")
    assert L.strip_wiki_markup(text).split() == "Anarchism is a political philosophy that self-governs. " \
        "See the site.".split()


def test_bbc_latin1_file_is_read(tmp_path):
    (tmp_path / "sports").mkdir()
    (tmp_path / "sports" / "199.txt").write_bytes(b"Title\n\nHe scored \xa31m. Then left.\n")
    ((topic, doc),) = L.load_bbc_news(tmp_path)
    assert topic == "sports" and doc.sentences == ("Title", "He scored £1m.", "Then left.")


def test_heldout_is_a_fixed_fraction_chosen_per_document():
    docs = [L.Document("s", str(i), ("x",)) for i in range(4000)]
    frac = sum(map(L.heldout, docs)) / len(docs)
    assert abs(frac - L.HELDOUT_PERCENT / 100) < 0.015
    assert L.heldout(docs[7]) == L.heldout(L.Document("s", "7", ("other",)))


# --- the real files --------------------------------------------------------------------------

def test_real_parallel_and_lm_files():
    m = P.load_multi30k("en", "fr")
    assert {k: len(v) for k, v in m.items()} == {"train": 29000, "dev": 1014, "test": 1000}
    assert len(P.load_tatoeba_cmn_eng()) == 19577
    ptb = L.load_ptb_lm()
    assert [sum(map(len, ptb[s])) for s in ("train", "valid", "test")] == [887521, 70390, 78669]
    assert len({w for s in ptb["train"] for w in s}) == 9999
    tiny = L.load_tiny_shakespeare()
    assert len(tiny) == 1115394 and len(set(tiny)) == 65


@pytest.mark.slow
def test_real_ptb_sample_and_documents():
    trees = load_ptb_trees()
    assert len(trees) == 3914 and len({t.fileid for t in trees}) == 199
    assert sum(len(t.tagged(traces=True)[0]) for t in trees) == 100676
    assert sum(len(t.tagged()[0]) for t in trees) == 94084
    assert len(L.load_shakespeare()) == 42 and len(L.load_shakespeare(folio=True)) == 35
    assert len(L.load_bbc_news()) == 2225 and len(L.load_abc()) == 3189
    assert len(L.load_webtext()) == 261 and len(L.load_enwiki_sample()) == 105


@pytest.mark.slow
def test_real_pretraining_corpus():
    train, held = L.pretraining_documents("train"), L.pretraining_documents("heldout")
    assert len(train) == 6401 and len(held) == 335
    assert {d.source for d in train} == set(L.PRETRAINING_SOURCES)
    assert not {(d.source, d.id) for d in train} & {(d.source, d.id) for d in held}
    brown_ids = [d.id for d in train + held if d.source == "brown"]
    assert max(brown_ids) < "cn"  # only files inside Bengio's first 800,000 training words
    assert L.load_pretraining_corpus("heldout") == [list(d.sentences) for d in held]
