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
