"""File modes for the files the package writes atomically (through a temporary file)."""

from __future__ import annotations

import os


def umask_mode(base: int = 0o666) -> int:
    """``base`` with the process umask applied: the mode ``open()`` gives a new file.

    ``tempfile.mkstemp`` creates files 0600 (and ``mkdtemp`` directories 0700); a file renamed
    into place from there would stay private, unlike every other file the reader creates. Call
    ``os.chmod(tmp, umask_mode())`` before the rename (``umask_mode(0o777)`` for a directory).
    """
    mask = os.umask(0)  # the only way to read the umask; set it straight back
    os.umask(mask)
    return base & ~mask


def sha256_file(path: str | os.PathLike) -> str:
    """The hex sha256 of a file's bytes."""
    import hashlib
    from pathlib import Path

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never half-written."""
    import tempfile
    from pathlib import Path

    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def verified_meta(directory: str | os.PathLike, files: tuple[str, ...], create: str) -> dict:
    """A stored checkpoint's ``meta.json``, after checking that each of ``files`` exists and has
    the sha256 the meta records. ``create`` is the command that re-creates the checkpoint."""
    import json
    from pathlib import Path

    directory = Path(directory)
    meta_path = directory / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"{meta_path} is missing; create it with `{create}`")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    for f in files:
        if not (directory / f).is_file():
            raise FileNotFoundError(f"{directory / f} is missing; re-create the checkpoint")
        if sha256_file(directory / f) != meta["sha256"][f]:
            raise ValueError(f"{directory / f} does not match the sha256 in meta.json; restore it from git")
    return meta
