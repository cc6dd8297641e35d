"""Auto-checked exercises. Readers use three functions::

    from companion.exercises import check, hint, show
    show("ch00.type_token_ratio")                 # the task (and a starter function)
    check("ch00.type_token_ratio", my_function)   # runs hidden cases, prints a verdict
    hint("ch00.type_token_ratio", 1)              # a nudge; hint(..., 2) says more

What ``check`` takes depends on the exercise's kind (``show`` says which):

* ``implement``, ``debug``, ``derive`` — a function: ``check(id, my_function)``;
  a ``derive`` exercise may instead ask for a number: ``check(id, 0.25)``;
* ``concept`` — a choice letter or a number: ``check(id, "b")``;
* ``predict`` — the prediction written *before* the experiment ran, and the value the
  experiment measured: ``check(id, my_prediction, measured=value)``;
* ``extend`` — an open task: ``check(id, my_function)`` runs a loose sanity check, or says
  there is nothing to check; the worked answer is in ``solutions/chNN.py``.

``check`` never prints a hint: hints come in tiers, only on request. A failure names the
quantity that differed and gives a one-line call that reproduces it (``rerun`` re-runs a
case with your function so you get the real traceback).

Exercises live in ``companion/exercises/chNN.py`` (one module per chapter, found automatically);
reference solutions in the top-level ``solutions/chNN.py`` (see :mod:`solutions`). The mechanism
itself is in :mod:`companion.exercises.core`.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math
import pkgutil
import re
import textwrap
from collections import Counter
from typing import Any, Callable

import numpy as np

from .core import (
    _MISSING,
    FUNCTION_KINDS,
    KINDS,
    Case,
    CheckResult,
    Exercise,
    UnknownExerciseError,
    _is_real,
    _short,
    compare,
    normalise_choice,
    numeric_gradient,
    register,
    registered,
    reproduce_text,
    run_case,
    unregister,
)
from .sealed import Sealed

_CHAPTER_MODULE = re.compile(r"^ch\d\d[a-z]?$")  # ch06.py, ch06b.py: a split chapter may have two
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


def kinds(chapter: str | None = None) -> dict[str, Counter]:
    """How many exercises of each kind every chapter has: ``{"ch00": Counter({"implement": 1,
    ...}), ...}`` (only ``chapter``'s entry if one is given, e.g. ``"ch03"``)."""
    out: dict[str, Counter] = {}
    for ex in all_exercises().values():
        if chapter is None or ex.chapter == chapter:
            out.setdefault(ex.chapter, Counter())[ex.kind] += 1
    return out


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


# --------------------------------------------------------------------------- show, hint

_HOW = {
    "implement": "Write the function; then check({id!r}, {name}).",
    "debug": "The function below has a bug: find it, fix it (in your copy of it), "
             "then check({id!r}, {name}).",
    "derive": "Derive it on paper first; then write the result as the function below and "
              "check({id!r}, {name}).",
    "derive_value": "Derive it on paper first; then check({id!r}, your_number).",
    "predict": "Write your prediction down BEFORE you run the experiment cell; afterwards "
               "check({id!r}, your_prediction, measured=...) tells how far off you were.",
    "concept": "Answer with check({id!r}, {answer_form}).",
    "extend": "An open task. {checked} A worked answer is `{name}` in solutions/{chapter}.py "
              "(try first).",
}


def _source(fn: Callable[..., Any], name: str) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"def {name}(...):\n    ...\n"


def show(exercise_id: str) -> None:
    """Print an exercise's title, kind, task, and the starter (or buggy) function's source."""
    ex = get(exercise_id)
    parts = [f"{ex.id} — {ex.title}  [{ex.kind}]", textwrap.dedent(ex.prompt).strip()]
    if ex.kind == "concept" and ex.choices:
        parts.append("\n".join(f"  ({k}) {v}" for k, v in ex.choices.items()))
    how = "derive_value" if ex.kind == "derive" and not ex.has_cases else ex.kind
    checked = ("check() runs a loose sanity check on it." if ex.has_cases
               else "Nothing is checked automatically.")
    answer_form = '"a"' if ex.choices else "a_number"
    parts.append(_HOW[how].format(id=ex.id, name=ex.name, chapter=ex.chapter, checked=checked,
                                  answer_form=answer_form))
    if ex.stub is not None and (ex.kind in FUNCTION_KINDS or ex.kind == "extend"):
        lead = "The function with the bug:" if ex.kind == "debug" else "Start from this:"
        parts.append(f"{lead}\n\n{_source(ex.stub, ex.name)}")
    print("\n\n".join(parts))


def hint(exercise_id: str, tier: int = 1) -> None:
    """Print hint number ``tier`` (1 = a nudge; higher tiers say more).

    For a ``concept`` or ``predict`` exercise the last tier is the explanation of the answer.
    Asking beyond the last tier prints the last one and says where the worked answer is.
    """
    ex = get(exercise_id)
    if isinstance(tier, bool) or not isinstance(tier, int) or tier < 1:
        raise ValueError(f"tier must be 1, 2, ...; got {tier!r}. Start with hint({exercise_id!r}, 1).")
    tiers = ex.hints
    if not tiers:
        print("No hint for this one; re-read the prompt and the section above it.")
        return
    k = min(tier, len(tiers))
    more = (f" (hint({exercise_id!r}, {k + 1}) says more)" if k < len(tiers) else " (the last one)")
    print(f"Hint {k} of {len(tiers)}{more}:\n{textwrap.dedent(tiers[k - 1]).strip()}")
    if tier >= len(tiers) and ex.kind in FUNCTION_KINDS + ("extend",):
        print(f"The reference solution is `{ex.name}` in solutions/{ex.chapter}.py.")


# --------------------------------------------------------------------------- check


def _unanswered(value: Any) -> bool:
    return value is _MISSING or value is None or value is Ellipsis


def _check_function(ex: Exercise, fn: Any) -> CheckResult:
    if not callable(fn):
        raise TypeError(
            f"check() needs your function itself, e.g. check({ex.id!r}, {ex.name}); "
            f"got {type(fn).__name__} (did you call it?)"
        )
    cases = ex.build_cases()
    failures: list[str] = []
    for i, case in enumerate(cases, start=1):
        msg = run_case(ex, fn, case)
        if msg is not None:
            label = f" ({case.label})" if case.label else ""
            failures.append(f"check {i}{label}: {msg}\n  Re-run it: {reproduce_text(ex, case, i)}")
    return CheckResult(ex.id, not failures, len(cases), len(cases) - len(failures), failures)


def _check_value(ex: Exercise, value: Any) -> CheckResult:
    """A concept question (a choice or a number), or a derive exercise answered by a number."""
    if _unanswered(value):
        form = '"a"' if ex.choices else "3.5"
        return CheckResult(ex.id, False, 1, 0, [f"no answer yet: replace None with yours, e.g. check({ex.id!r}, {form})"])
    if ex.choices:
        letter = normalise_choice(value)
        valid = ", ".join(ex.choices)
        if letter is None or letter not in {k.lower() for k in ex.choices}:
            return CheckResult(ex.id, False, 1, 0, [f"{value!r} is not one of the choices ({valid})"])
        if ex.answer.matches(letter) if isinstance(ex.answer, Sealed) else letter == ex.answer.lower():
            return CheckResult(ex.id, True, 1, 1)
        return CheckResult(ex.id, False, 1, 0, [f"({letter}) is not the best answer"])
    if not _is_real(value):
        return CheckResult(ex.id, False, 1, 0, [f"expected a number, got {value!r}"])
    answer = ex.answer.value() if isinstance(ex.answer, Sealed) else ex.answer
    if compare(answer, value, ex.rtol, ex.atol) is None:
        return CheckResult(ex.id, True, 1, 1)
    side = "too high" if float(value) > float(answer) else "too low"
    return CheckResult(ex.id, False, 1, 0, [f"{ex.format_value(value)} is {side}"])


def _check_prediction(ex: Exercise, prediction: Any, measured: Any) -> CheckResult:
    if _unanswered(prediction):
        return CheckResult(ex.id, False, 1, 0, [
            "no prediction yet: write your guess in place of None, before you run the experiment"])
    if measured is _MISSING:
        if ex.measure is None:
            raise TypeError(
                f"check({ex.id!r}, prediction, measured=...) needs the value the experiment "
                "cell computed, as measured=...")
        measured = ex.measure()
    if _is_real(prediction) and _is_real(measured):
        p, m = float(prediction), float(measured)
        err = p - m
        ok = math.isclose(p, m, rel_tol=ex.rtol, abs_tol=ex.atol)
        msg = f"you predicted {ex.format_value(p)}, the experiment measured {ex.format_value(m)}"
        if err:
            side = "too high" if err > 0 else "too low"
            ratio = m / p if p else math.inf
            far = (f"the measurement is {ratio:.2g} times your guess" if p and (ratio >= 1.5 or 0 < ratio <= 1 / 1.5)
                   else f"{abs(err) / abs(m):.0%} {side}" if m else side)
            msg += f": off by {ex.format_value(abs(err))} ({far})"
        return CheckResult(ex.id, ok, 1, int(ok), [msg], measured=measured, error=err)
    ok = compare(measured, prediction, ex.rtol, ex.atol) is None
    msg = f"you predicted {_fmt(prediction)}, the experiment measured {_fmt(measured)}"
    return CheckResult(ex.id, ok, 1, int(ok), [msg], measured=measured)


def _fmt(value: Any) -> str:
    text = _short.repr(value) if isinstance(value, (float, np.floating)) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _tolerance_text(ex: Exercise) -> str:
    parts = []
    if ex.atol:
        parts.append(f"±{ex.format_value(ex.atol)}")
    if ex.rtol:
        parts.append(f"±{ex.rtol:.0%}")
    return " or ".join(parts) or "exact"


def _report(ex: Exercise, result: CheckResult) -> None:
    if ex.kind == "predict":
        if result.measured is None:  # nothing was compared
            print(f"✗ {ex.id}: {result.failures[0]}.")
            return
        mark = "✓" if result.passed else "✗"
        if result.error is None:  # a word or a choice: right or not
            print(f"{mark} {ex.id}: {result.failures[0]}.")
        else:
            tol = _tolerance_text(ex)
            verdict = f"close enough (within {tol})" if result.passed else f"not within {tol}"
            print(f"{mark} {ex.id}: {result.failures[0]} — {verdict}.")
        if ex.explanation:
            print(textwrap.dedent(ex.explanation).strip())
        return
    if ex.kind == "concept" or (ex.kind == "derive" and not ex.has_cases):
        if result.passed:
            print(f"✓ {ex.id}: right.")
            if ex.explanation:
                print(textwrap.dedent(ex.explanation).strip())
        else:
            print(f"✗ {ex.id}: {result.failures[0]}.")
        return
    if ex.kind == "extend" and not ex.has_cases:
        print(f"{ex.id} is an open task: nothing to check automatically. When you are done, "
              f"compare with `{ex.name}` in solutions/{ex.chapter}.py.")
        return
    n = result.n_cases
    if result.passed:
        what = "sanity checks" if ex.kind == "extend" else "checks"
        print(f"✓ {ex.id}: all {n} {what} passed. Well done!")
        if ex.kind == "extend":
            print(f"Compare your approach with `{ex.name}` in solutions/{ex.chapter}.py.")
        return
    print(f"✗ {ex.id}: {len(result.failures)} of {n} checks failed.")
    print(f"  First failure, {result.failures[0]}")
    if len(result.failures) > 1:
        print(f"  ({len(result.failures) - 1} more failing check(s) not shown.)")


def check(exercise_id: str, answer: Any = _MISSING, *, measured: Any = _MISSING,
          verbose: bool = True) -> CheckResult:
    """Check an answer to an exercise and print a plain-words verdict (never a hint).

    ``answer`` is a function (``implement``, ``debug``, ``derive``, ``extend``), a choice
    letter or a number (``concept``, or ``derive`` when the exercise asks for a number), or
    a prediction (``predict``, with ``measured=`` the value the experiment cell computed).
    A wrong answer, or an exception raised by the reader's function, is reported, never
    raised. The result is truthy only if everything checked passed.

    Raises:
        UnknownExerciseError: for an unknown id.
        TypeError: if a function is needed and ``answer`` is not callable (pass the function
            itself, not its result), or a prediction is checked without ``measured=``.
    """
    ex = get(exercise_id)
    if measured is not _MISSING and ex.kind != "predict":
        raise TypeError(f"{ex.id} is a {ex.kind} exercise; measured= is only for predict exercises")
    if ex.kind == "predict":
        result = _check_prediction(ex, answer, measured)
    elif ex.kind == "concept" or (ex.kind == "derive" and not ex.has_cases):
        result = _check_value(ex, answer)
    elif ex.kind == "extend" and not ex.has_cases:
        result = CheckResult(ex.id, False, 0, 0)
    else:
        if answer is _MISSING:
            raise TypeError(f"check() needs your function, e.g. check({ex.id!r}, {ex.name})")
        result = _check_function(ex, answer)
    if verbose:
        _report(ex, result)
    return result


def case_inputs(exercise_id: str, number: int) -> tuple[tuple, dict]:
    """The inputs ``(args, kwargs)`` of hidden case ``number`` (1-based, as ``check`` counts)."""
    ex = get(exercise_id)
    if not ex.has_cases:
        raise ValueError(f"{exercise_id} is a {ex.kind} exercise without hidden cases")
    cases = ex.build_cases()
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(cases):
        raise ValueError(f"{exercise_id} has checks 1 to {len(cases)}; got {number!r}")
    case = cases[number - 1]
    return copy.deepcopy(case.args), copy.deepcopy(case.kwargs)


def rerun(exercise_id: str, fn: Callable[..., Any], number: int) -> Any:
    """Call ``fn`` on the inputs of hidden case ``number`` and return what it returns.

    Unlike ``check`` this lets an exception propagate, so you see the full traceback (and can
    use ``%debug``). ``check`` prints this call for a failing case whose inputs are long.
    """
    args, kwargs = case_inputs(exercise_id, number)
    return fn(*args, **kwargs)


__all__ = [
    "FUNCTION_KINDS",
    "KINDS",
    "Case",
    "CheckResult",
    "Exercise",
    "UnknownExerciseError",
    "all_exercises",
    "all_ids",
    "case_inputs",
    "check",
    "compare",
    "discover",
    "get",
    "hint",
    "kinds",
    "numeric_gradient",
    "register",
    "rerun",
    "run_case",
    "show",
    "unregister",
]
