"""Reference solutions of the book's exercises, one module per chapter (``solutions/chNN.py``).

Each function is named as the last part of its exercise id: the solution of ``ch01.add_k`` is
``solutions.ch01.add_k``. Try the exercise before you look! ::

    import solutions
    f = solutions.get("ch00.type_token_ratio")

This package is not installed with ``companion``; it is importable from the repository root
(the tests put the root on ``sys.path``).
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable

_ID = re.compile(r"^(ch\d\d)\.([a-z_][a-z0-9_]*)$")


def get(exercise_id: str) -> Callable[..., Any]:
    """The reference solution of an exercise.

    Raises:
        ValueError: if the id is malformed.
        LookupError: if the chapter has no solutions module or it lacks the function.
    """
    m = _ID.match(exercise_id) if isinstance(exercise_id, str) else None
    if m is None:
        raise ValueError(f"exercise id {exercise_id!r} must look like 'ch01.add_k'")
    chapter, name = m.groups()
    try:
        module = importlib.import_module(f"{__name__}.{chapter}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{chapter}":
            raise
        raise LookupError(f"no solutions/{chapter}.py; write the solution of {exercise_id} there") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise LookupError(f"solutions/{chapter}.py has no function {name}() (the solution of {exercise_id})")
    return fn
