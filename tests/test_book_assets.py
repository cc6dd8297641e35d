"""companion.book_assets: verified, idempotent extraction of the book's offline scripts.

Uses tarballs built here in memory (no network): the real fetch is replaced by a stub.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from companion import book_assets as ba


def _tarball(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _keep_dist(path: str) -> str | None:
    return path[len("package/dist/"):] if path.startswith("package/dist/") else None


@pytest.fixture
def fake(monkeypatch):
    """One fake asset whose tarball the stubbed fetch serves; counts fetches."""
    data = _tarball({"package/dist/a.js": b"console.log(1)", "package/dist/sub/b.woff": b"\0\1",
                     "package/README.md": b"not kept"})
    asset = ba.Asset("fake-pkg", "1.0.0", hashlib.sha256(data).hexdigest(), "fake", _keep_dist)
    calls = []

    def fetch(assets, workdir):
        calls.append([a.spec for a in assets])
        return {a.spec: data for a in assets}

    monkeypatch.setattr(ba, "_fetch_tarballs", fetch)
    return asset, calls


def test_extracts_only_kept_files_and_writes_manifest(tmp_path: Path, fake) -> None:
    asset, calls = fake
    assert ba.ensure_assets(tmp_path, assets=[asset], quiet=True) is True
    assert (tmp_path / "fake" / "a.js").read_bytes() == b"console.log(1)"
    assert (tmp_path / "fake" / "sub" / "b.woff").read_bytes() == b"\0\1"
    assert not (tmp_path / "fake" / "README.md").exists()
    manifest = json.loads((tmp_path / ba.MANIFEST_NAME).read_text())
    assert manifest["fake-pkg@1.0.0"]["tarball_sha256"] == asset.sha256
    assert set(manifest["fake-pkg@1.0.0"]["files"]) == {"a.js", "sub/b.woff"}
    assert calls == [["fake-pkg@1.0.0"]]


def test_second_run_does_nothing_and_a_changed_file_is_restored(tmp_path: Path, fake) -> None:
    asset, calls = fake
    ba.ensure_assets(tmp_path, assets=[asset], quiet=True)
    assert ba.ensure_assets(tmp_path, assets=[asset], quiet=True) is False
    assert len(calls) == 1
    (tmp_path / "fake" / "a.js").write_bytes(b"tampered")
    assert not ba.is_intact(tmp_path, [asset])
    assert ba.ensure_assets(tmp_path, assets=[asset], quiet=True) is True
    assert (tmp_path / "fake" / "a.js").read_bytes() == b"console.log(1)"
    assert len(calls) == 2


def test_a_wrong_sha256_is_refused(tmp_path: Path, fake) -> None:
    asset, _ = fake
    bad = ba.Asset(asset.name, asset.version, "0" * 64, asset.subdir, asset.keep)
    with pytest.raises(RuntimeError, match="does not match the pinned"):
        ba.ensure_assets(tmp_path, assets=[bad], quiet=True)
    assert not (tmp_path / "fake").exists()


def test_unsafe_paths_are_refused(tmp_path: Path, monkeypatch) -> None:
    data = _tarball({"package/dist/../../evil.js": b"x"})
    asset = ba.Asset("evil", "1.0.0", hashlib.sha256(data).hexdigest(), "evil", _keep_dist)
    monkeypatch.setattr(ba, "_fetch_tarballs", lambda assets, workdir: {asset.spec: data})
    with pytest.raises(RuntimeError, match="unsafe path"):
        ba.ensure_assets(tmp_path, assets=[asset], quiet=True)


def test_empty_asset_list_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="assets is empty"):
        ba.ensure_assets(tmp_path, assets=[])


def test_pins_cover_what_the_config_loads() -> None:
    """The pinned packages keep exactly the files _config.yml points the pages at (and the files
    the course's slides load: reveal.js and its speaker-notes plugin)."""
    specs = {a.spec for a in ba.ASSETS}
    assert specs == {"mathjax@3.2.2", "@jupyter-widgets/html-manager@1.0.15", "requirejs@2.3.8",
                     "reveal.js@4.0.2"}
    keep = {a.name: a.keep for a in ba.ASSETS}
    assert keep["mathjax"]("package/es5/tex-mml-chtml.js") == "tex-mml-chtml.js"
    assert keep["mathjax"]("package/es5/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff") \
        == "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"
    assert keep["@jupyter-widgets/html-manager"]("package/dist/embed-amd.js") == "embed-amd.js"
    assert keep["@jupyter-widgets/html-manager"]("package/dist/embed-amd.js.map") is None
    assert keep["requirejs"]("package/require.js") == "require.js"
    assert keep["reveal.js"]("package/dist/reveal.js") == "dist/reveal.js"
    assert keep["reveal.js"]("package/plugin/notes/notes.js") == "plugin/notes/notes.js"
    assert keep["reveal.js"]("package/dist/reveal.js.map") is None
    assert keep["reveal.js"]("package/plugin/markdown/markdown.js") is None
    assert keep["reveal.js"]("package/dist/theme/white.css") == "dist/theme/white.css"
    assert keep["reveal.js"]("package/dist/theme/simple.css") is None  # imports Google Fonts
    assert all(len(a.sha256) == 64 for a in ba.ASSETS)
    assert ba.ASSETS[0].tarball_url == "https://registry.npmjs.org/mathjax/-/mathjax-3.2.2.tgz"
    widgets = [a for a in ba.ASSETS if a.name.startswith("@")][0]
    assert widgets.tarball_url.endswith("/@jupyter-widgets/html-manager/-/html-manager-1.0.15.tgz")
