"""Auto-checked exercises. Readers use three functions::

    from companion.exercises import show, check
    show("ch00.type_token_ratio")                 # the task and a starter function
    check("ch00.type_token_ratio", my_function)   # runs hidden cases, prints a verdict

Exercises live in ``companion/exercises/chNN.py`` (one module per chapter, found automatically);
reference solutions in the top-level ``solutions/chNN.py`` (see :mod:`solutions`). The mechanism
itself is in :mod:`companion.exercises.core`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import textwrap
from typing import Any, Callable

from .core import (
    Case,
    CheckResult,
    Exercise,
    UnknownExerciseError,
    compare,
    register,
    registered,
    run_case,
    unregister,
)

_CHAPTER_MODULE = re.compile(r"^ch\d\d$")
_discovered = False


def discover() -> list[str]:
    """Import every ``chNN`` module of this package (once) so that its exercises register.

    Returns the module names found. An exercise module that fails to import raises here, naming it.
    """
    global _discovered
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if _CHAPTER_MODULE.match(m.name))
    if not _discovered:
        for name in names:
            try:
                importlib.import_module(f"{__name__}.{name}")
            except Exception as err:
                raise ImportError(f"exercise module companion/exercises/{name}.py failed to import: {err}") from err
        _discovered = True
    return names


def all_exercises() -> dict[str, Exercise]:
    """Every registered exercise, by id (chapter modules are imported on first use)."""
    discover()
    return registered()


def all_ids() -> list[str]:
    """The ids of every registered exercise, sorted."""
    return list(all_exercises())


def get(exercise_id: str) -> Exercise:
    """The exercise with this id.

    Raises:
        UnknownExerciseError (a KeyError): for an unknown id; the message lists the known ones.
    """
    exercises = all_exercises()
    if exercise_id not in exercises:
        known = ", ".join(exercises) or "(none)"
        raise UnknownExerciseError(
            f"there is no exercise {exercise_id!r}. Known exercises: {known}. "
            "Ids look like 'ch01.add_k'; copy the id from the chapter's exercise cell."
        )
    return exercises[exercise_id]


def show(exercise_id: str) -> None:
    """Print an exercise's title, prompt and the starter function's source."""
    ex = get(exercise_id)
    try:
        src = textwrap.dedent(inspect.getsource(ex.stub))
    except (OSError, TypeError):
        src = f"def {ex.name}(...):\n    ...\n"
    print(f"{ex.id} — {ex.title}\n\n{textwrap.dedent(ex.prompt).strip()}\n\nStart from this:\n\n{src}")


def hint(exercise_id: str) -> None:
    """Print an exercise's hint."""
    ex = get(exercise_id)
    print(ex.hint or "No hint for this one; re-read the prompt and the section above it.")


def check(exercise_id: str, fn: Callable[..., Any], *, verbose: bool = True) -> CheckResult:
    """Run every hidden case of an exercise on ``fn`` and print a plain-words verdict.

    A wrong answer, or an exception raised by ``fn``, is reported, never raised. The result is
    truthy only if every case passed.

    Raises:
        UnknownExerciseError: for an unknown id.
        TypeError: if ``fn`` is not callable (pass the function itself, not its result).
    """
    ex = get(exercise_id)
    if not callable(fn):
        raise TypeError(
            f"check() needs your function itself, e.g. check({exercise_id!r}, {ex.name}); "
            f"got {type(fn).__name__} (did you call it?)"
        )
    cases = ex.build_cases()
    failures: list[str] = []
    for i, case in enumerate(cases, start=1):
        msg = run_case(ex, fn, case)
        if msg is not None:
            label = f" ({case.label})" if case.label else ""
            failures.append(f"check {i}{label}: {msg}")
    result = CheckResult(ex.id, not failures, len(cases), len(cases) - len(failures), failures)
    if verbose:
        if result.passed:
            print(f"✓ {ex.id}: all {len(cases)} checks passed. Well done!")
        else:
            print(f"✗ {ex.id}: {len(failures)} of {len(cases)} checks failed.")
            print(f"  First failure, {failures[0]}")
            if len(failures) > 1:
                print(f"  ({len(failures) - 1} more failing check(s) not shown.)")
            if ex.hint:
                print(f"  Hint: {ex.hint}")
    return result


__all__ = [
    "Case",
    "CheckResult",
    "Exercise",
    "UnknownExerciseError",
    "all_exercises",
    "all_ids",
    "check",
    "compare",
    "discover",
    "get",
    "hint",
    "register",
    "run_case",
    "show",
    "unregister",
]
