"""IMDb's loader on tiny generated files: the packing rule, the tarball conversion, errors."""

import gzip
import io
import json
import tarfile

import pytest

from companion.data import imdb
from companion.data.tasks import load_task


def _tarball(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            raw = text.encode("utf-8")
            info = tarfile.TarInfo(f"aclImdb/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return path


FILES = {"train/pos/10_9.txt": "Great.<br /><br />Loved it", "train/neg/2_1.txt": "Awful café",
         "train/pos/1_7.txt": "Good", "test/neg/0_2.txt": "Bad", "test/pos/0_10.txt": "Fine",
         "train/unsup/5_0.txt": "Some film", "train/unsup/4_0.txt": "Another", "train/urls_pos.txt": "x"}


def test_convert_follows_the_packing_rule(tmp_path):
    out = imdb.convert_tarball(_tarball(tmp_path / "a.tar.gz", FILES), tmp_path / "out", verify=False)
    lines = gzip.decompress((out / "train.jsonl.gz").read_bytes()).decode("ascii").splitlines()
    # sorted by label, then id; non-ASCII escaped; keys in the packing order
    assert [json.loads(x)["id"] for x in lines] == [2, 1, 10]
    assert lines[0] == '{"id": 2, "rating": 1, "label": 0, "text": "Awful caf\\u00e9"}'
    train = imdb.load_imdb("train", root=out)
    assert [(r.label, r.rating) for r in train] == [(0, 1), (1, 7), (1, 9)]
    assert [r.id for r in imdb.load_imdb("unsup", root=out)] == [4, 5]
    assert all(r.label is None for r in imdb.load_imdb("unsup", root=out))
    task = load_task("imdb", root=out)
    assert task.sizes() == {"train": 3, "test": 2} and task.label_names == ("negative", "positive")
    assert task.splits["train"][2].text == "Great. Loved it"


def test_convert_checks_the_published_hashes_and_writes_nothing_on_failure(tmp_path):
    with pytest.raises(ValueError, match="converts to sha256"):
        imdb.convert_tarball(_tarball(tmp_path / "a.tar.gz", FILES), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="holds no aclImdb"):
        imdb.convert_tarball(_tarball(tmp_path / "b.tar.gz", {"README": "x"}), tmp_path / "o2", verify=False)


def test_clean_review():
    assert imdb.clean_review("a<br />b<br/>c <br>  d\n") == "a b c d"


def test_bad_inputs(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"split must be one of \('train', 'test', 'unsup'\), got 'dev'"):
        imdb.load_imdb("dev", root=tmp_path)
    (tmp_path / "train.jsonl.gz").write_bytes(gzip.compress(b'{"id": 1}\n'))
    with pytest.raises(ValueError, match=r"train.jsonl.gz, line 1: not an IMDb review record"):
        imdb.load_imdb("train", root=tmp_path)
    # a mirror whose files are not the published ones is refused, naming the file
    mirror = tmp_path / "mirror"
    (mirror / "imdb").mkdir(parents=True)
    for s in imdb.SPLITS:
        (mirror / "imdb" / f"{s}.jsonl.gz").write_bytes(gzip.compress(b"{}\n"))
    monkeypatch.setenv("BOOK_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("BOOK_DATA_DIR", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=r"imdb/train.jsonl.gz: the uncompressed JSON lines have sha256"):
        imdb.imdb_dir()
    monkeypatch.setenv("BOOK_DATA_MIRROR", str(tmp_path / "none"))
    with pytest.raises(FileNotFoundError, match="from-tarball"):
        imdb.imdb_dir()
