"""Checks on the real datasets, run only where they are cached (`make data` fetches them; these
tests never fetch). The expected numbers were measured on the fetched files and are what the
docstrings and the book quote; the NLTK test re-reads Brown with NLTK's own reader."""

from __future__ import annotations

import pytest

from companion.data import cache_status, dataset_dir

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _need(name: str) -> None:
    status = cache_status(name)
    if status != "cached":
        pytest.skip(f"{name} is {status}; run `python -m companion.data fetch {name}` (or make data)")


@pytest.fixture(scope="module")
def brown():
    _need("brown")
    from companion.data import load_brown

    return load_brown()


def test_brown_counts(brown):
    assert len(brown.files) == 500 and len(brown) == 1_161_192 and len(brown.sents()) == 57_340
    assert brown.genre_counts() == {
        "news": 44, "editorial": 27, "reviews": 17, "religion": 17, "hobbies": 36, "lore": 48,
        "belles_lettres": 75, "government": 30, "learned": 80, "fiction": 29, "mystery": 24,
        "science_fiction": 6, "adventure": 29, "romance": 29, "humor": 9}
    assert brown.tagged_sents()[0][:2] == [("The", "AT"), ("Fulton", "NP-TL")]


def test_bengio_split_measured_vocabulary(brown):
    from companion.data import bengio_split

    sp = bengio_split(corpus=brown)
    assert sp.sizes() == {"train": 800_000, "valid": 200_000, "test": 161_192}
    assert len(sp.vocab) == 13_190 and sp.n_types == 13_188  # quoted in bengio.py's docstring
    unk_rate = sp.tokens("test", eos=None).count("<unk>") / 161_192
    assert 0.08 < unk_rate < 0.09


@pytest.mark.peers
def test_brown_matches_nltk_reader(brown, monkeypatch):
    """NLTK's own Brown reader on the same files gives the same words, tags and sentences."""
    root = dataset_dir("brown")
    monkeypatch.setenv("NLTK_DATA", str(root))  # NLTK only reads below its data roots
    from nltk.corpus.reader import CategorizedTaggedCorpusReader

    reader = CategorizedTaggedCorpusReader(str(root), r"c[a-z]\d\d", cat_file="cats.txt", encoding="ascii")
    for fid in ("ca01", "cj80", "cr09"):
        ours = next(f for f in brown.files if f.fileid == fid)
        assert ours.tagged_sents == [list(s) for s in reader.tagged_sents(fid)]
        assert reader.categories(fid) == [ours.genre_name]


def test_sotu():
    _need("sotu")
    from companion.data import load_sotu

    c = load_sotu()
    assert len(c) == 233 and (c[0].year, c[-1].year) == (1790, 2021)
    assert c[-1].president == "Joseph R Biden" and c[-1].party == "Democratic"
    assert len(c[0].sentences) > 10


def test_moby_dick():
    _need("moby_dick")
    from companion.data import load_moby_dick

    m = load_moby_dick()
    assert [c.number for c in m.chapters] == list(range(1, 136))
    assert m.sentences()[0] == ["call", "me", "ishmael"]


def test_evaluation_sets():
    for name in ("wordsim353", "simlex999", "google_analogies"):
        _need(name)
    from companion.data import load_google_analogies, load_simlex999, load_wordsim353

    assert len(load_wordsim353()) == 353 and len(load_simlex999()) == 999
    qs = load_google_analogies()
    assert len(qs) == 19_544 and len({q[0] for q in qs}) == 14
