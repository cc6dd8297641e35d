"""Reading data files with errors that name the file and the line (never a bare
``UnicodeDecodeError`` or ``IndexError`` from deep inside a parser)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from .errors import DataFormatError


def bad_line(path: str | os.PathLike, line: int, what: str) -> DataFormatError:
    """The error for a malformed line: ``FILE, line N: what``, and what to do about it."""
    return DataFormatError(f"{path}, line {line}: {what}. If this is a cached copy, fetch it again "
                           f"(`python -m companion.data fetch NAME --force`); if it is your own file, "
                           f"fix that line.", path, line)


def decode(data: bytes, path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """``data`` decoded; a decoding error names the file, the line and the byte offset."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise DataFormatError(
            f"{path}, line {line}: not valid {encoding} (byte {data[err.start:err.start + 1]!r} at "
            f"offset {err.start}: {err.reason}). The book's data files are {encoding}: convert the file "
            f"(e.g. `iconv -f latin1 -t utf-8`) or fetch it again.", path, line) from None


def read_text(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """A text file's content (``.gz`` files are decompressed), decoded with a clear error.

    A UTF-8 byte-order mark at the start is dropped.
    """
    path = Path(path)
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = decode(data, path, encoding)
    return text.removeprefix("\ufeff")


def read_lines(path: str | os.PathLike, encoding: str = "utf-8") -> list[str]:
    """The file's lines without their line ends (see :func:`read_text`).

    Lines end at ``\n`` (a ``\r`` before it is dropped) and nowhere else: ``str.splitlines``
    would also split at ``\x85``, ``\x0c``, ``\u2028``..., which occur inside sentences of the
    Latin-1 files (MR has ``\x85``, Windows-1252's ellipsis).
    """
    lines = read_text(path, encoding).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [x.removesuffix("\r") for x in lines]
