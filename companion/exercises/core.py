"""The auto-checked exercise mechanism.

An exercise is registered once, in ``companion/exercises/chNN.py``::

    register(Exercise(
        id="ch01.add_k", title="Add-k smoothing", prompt="...",
        cases=[Case(args=(...), expected=...), ((...), expected), ...],
        stub=add_k,            # the starter function shown to the reader
        hint="...",
    ))

and the reader calls ``check("ch01.add_k", my_add_k)``: every hidden case runs, the verdict is
printed in plain words (which case failed, what was expected, what came back, the hint), a wrong
answer or an exception in the reader's code never raises, and the returned :class:`CheckResult`
is truthy only when every case passed.
"""

from __future__ import annotations

import copy
import inspect
import math
import re
import reprlib
import traceback
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from numbers import Number
from typing import Any, Callable

import numpy as np

ID_PATTERN = re.compile(r"^ch\d\d\.[a-z_][a-z0-9_]*$")
_MISSING = object()

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = 8
_short.maxdict = 6


class UnknownExerciseError(KeyError):
    """Raised for an exercise id that is not registered; the message lists the known ids."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass
class Case:
    """One hidden test: call the function with ``args``/``kwargs``, then either compare the
    result with ``expected`` (within the exercise's tolerance) or pass it to ``checker``.

    ``checker(result)`` returns ``True``/``False``, or ``(ok, message)`` to explain a failure.
    ``label`` says in plain words what the case is about ("an empty list").
    """

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expected: Any = _MISSING
    checker: Callable[[Any], bool | tuple[bool, str]] | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            raise TypeError(f"Case.args must be a tuple of positional arguments, got {type(self.args).__name__}")
        if (self.expected is _MISSING) == (self.checker is None):
            raise ValueError("a Case needs exactly one of expected=... or checker=...")


@dataclass
class Exercise:
    """An auto-checked exercise.

    Attributes:
        id: ``"chNN.name"``; ``name`` is also the function's name in ``solutions/chNN.py``.
        title: a few words.
        prompt: what to write, in plain words (shown by :func:`show`).
        cases: a list of :class:`Case` (or ``(args_tuple, expected)`` pairs), or a function
            returning one (built at check time, so heavy inputs cost nothing at import).
        stub: the starter function shown to readers; it must fail the cases.
        hint: shown after a failure.
        rtol, atol: tolerance for comparing floats, arrays and tensors.
    """

    id: str
    title: str
    prompt: str
    cases: Sequence[Case | tuple] | Callable[[], Sequence[Case | tuple]]
    stub: Callable[..., Any]
    hint: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9

    @property
    def name(self) -> str:
        """The function's name: the last part of the id."""
        return self.id.split(".", 1)[1]

    def build_cases(self) -> list[Case]:
        """The cases as :class:`Case` objects."""
        raw = self.cases() if callable(self.cases) else self.cases
        out = []
        for i, c in enumerate(raw):
            if isinstance(c, Case):
                out.append(c)
            elif isinstance(c, tuple) and len(c) == 2:
                args = c[0] if isinstance(c[0], tuple) else (c[0],)
                out.append(Case(args=args, expected=c[1]))
            else:
                raise TypeError(f"{self.id}: case {i} must be a Case or an (args, expected) pair, got {c!r}")
        if not out:
            raise ValueError(f"{self.id} has no cases")
        return out


@dataclass
class CheckResult:
    """What :func:`check` found; truthy only if every case passed."""

    id: str
    passed: bool
    n_cases: int
    n_passed: int
    failures: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult({self.id!r}: {self.n_passed}/{self.n_cases} passed)"


_REGISTRY: dict[str, tuple[Exercise, str]] = {}


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to the registry (re-registering from the same module replaces it).

    Raises:
        ValueError: for a malformed exercise, or an id already taken by another module.
    """
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register() takes an Exercise, got {type(exercise).__name__}")
    if not isinstance(exercise.id, str) or not ID_PATTERN.match(exercise.id):
        raise ValueError(f"exercise id {exercise.id!r} must look like 'ch01.add_k' (chapter, dot, function name)")
    for attr in ("title", "prompt"):
        if not isinstance(getattr(exercise, attr), str) or not getattr(exercise, attr).strip():
            raise ValueError(f"{exercise.id}: {attr} must be a non-empty string")
    if not callable(exercise.stub):
        raise ValueError(f"{exercise.id}: stub must be the starter function shown to readers")
    if not callable(exercise.cases) and not exercise.cases:
        raise ValueError(f"{exercise.id}: give at least one case")
    if not (exercise.rtol >= 0 and exercise.atol >= 0):
        raise ValueError(f"{exercise.id}: rtol and atol must be >= 0")
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    module = caller.f_globals.get("__name__", "?") if caller is not None else "?"
    old = _REGISTRY.get(exercise.id)
    if old is not None and old[1] != module:
        raise ValueError(f"exercise id {exercise.id!r} is already registered by {old[1]}")
    _REGISTRY[exercise.id] = (exercise, module)
    return exercise


def unregister(exercise_id: str) -> None:
    """Remove an exercise (for tests that register temporary ones)."""
    _REGISTRY.pop(exercise_id, None)


def registered() -> dict[str, Exercise]:
    """Exercises registered so far (without importing the chapter modules)."""
    return {k: v[0] for k, v in sorted(_REGISTRY.items())}


# --------------------------------------------------------------------------- comparison


def _to_array(x: Any) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x
    mod = type(x).__module__
    if mod.startswith("torch") and hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return None


def _is_real(x: Any) -> bool:
    if isinstance(x, (bool, np.bool_, complex, np.complexfloating)):
        return False
    return isinstance(x, (int, float, np.integer, np.floating)) or (isinstance(x, Number) and hasattr(x, "__float__"))


def compare(expected: Any, got: Any, rtol: float = 1e-6, atol: float = 1e-9, where: str = "") -> str | None:
    """``None`` if ``got`` matches ``expected``, else a plain-words description of the first difference.

    Numbers compare within ``rtol``/``atol`` (NaN equals NaN); arrays and tensors by shape and
    values; sequences element by element (a list may stand for a tuple); dicts key by key.
    """
    at = f" at {where}" if where else ""
    arr = _to_array(expected)
    if arr is not None:
        g = _to_array(got)
        if g is None:
            try:
                g = np.asarray(got)
            except Exception:  # noqa: BLE001 - anything unconvertible is simply wrong
                return f"expected an array{at}, got {_short.repr(got)}"
        if g.shape != arr.shape:
            return f"expected shape {arr.shape}{at}, got shape {g.shape}"
        if arr.dtype.kind in "fc" or g.dtype.kind in "fc":
            try:
                ok = np.allclose(g.astype(float), arr.astype(float), rtol=rtol, atol=atol, equal_nan=True)
            except (TypeError, ValueError):
                return f"expected numbers{at}, got an array of {g.dtype}"
            if not ok:
                bad = np.argwhere(~np.isclose(g.astype(float), arr.astype(float), rtol=rtol, atol=atol, equal_nan=True))
                pos = tuple(int(i) for i in bad[0])
                return f"expected {arr[pos]!r} at index {pos}{at}, got {g[pos]!r} ({len(bad)} values differ)"
            return None
        if not np.array_equal(g, arr):
            return f"expected {_short.repr(arr.tolist())}{at}, got {_short.repr(g.tolist())}"
        return None
    if isinstance(expected, bool) or expected is None:
        return None if got is expected or (isinstance(got, np.bool_) and bool(got) is expected) else \
            f"expected {expected!r}{at}, got {_short.repr(got)}"
    if _is_real(expected):
        g_arr = _to_array(got)
        if g_arr is not None and g_arr.size == 1:
            got = g_arr.item()
        if not _is_real(got):
            return f"expected the number {expected!r}{at}, got {_short.repr(got)}"
        e, g = float(expected), float(got)
        if math.isnan(e) and math.isnan(g):
            return None
        if e == g or math.isclose(e, g, rel_tol=rtol, abs_tol=atol):
            return None
        return f"expected {expected!r}{at}, got {got!r}"
    if isinstance(expected, str):
        return None if got == expected else f"expected {expected!r}{at}, got {_short.repr(got)}"
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"expected a dict{at}, got {type(got).__name__}"
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing keys {_short.repr(missing)}")
            if extra:
                parts.append(f"unexpected keys {_short.repr(extra)}")
            return f"the dict{at} has " + " and ".join(parts)
        for k in expected:
            msg = compare(expected[k], got[k], rtol, atol, f"{where}[{k!r}]")
            if msg:
                return msg
        return None
    if isinstance(expected, Set):
        if not isinstance(got, Set):
            return f"expected a set{at}, got {type(got).__name__}"
        return None if set(got) == set(expected) else f"expected {_short.repr(expected)}{at}, got {_short.repr(got)}"
    if isinstance(expected, Sequence):
        if isinstance(got, (str, bytes)) or not isinstance(got, Sequence):
            return f"expected a list{at}, got {_short.repr(got)}"
        if len(got) != len(expected):
            return f"expected {len(expected)} items{at}, got {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            msg = compare(e, g, rtol, atol, f"{where}[{i}]")
            if msg:
                return msg
        return None
    return None if got == expected else f"expected {_short.repr(expected)}{at}, got {_short.repr(got)}"


# --------------------------------------------------------------------------- running


def _call_text(name: str, case: Case) -> str:
    parts = [_short.repr(a) for a in case.args] + [f"{k}={_short.repr(v)}" for k, v in case.kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _where_it_raised(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    if len(frames) > 1:  # frame 0 is this module's call
        f = frames[-1]
        code = (f.line or "").strip()
        return f" (line {f.lineno}: `{code}`)" if code else f" (line {f.lineno})"
    return ""


def run_case(ex: Exercise, fn: Callable[..., Any], case: Case) -> str | None:
    """Run one case; ``None`` on success, else what went wrong. Never raises for the reader's errors."""
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)  # the reader may mutate inputs
    call = _call_text(ex.name, case)
    try:
        got = fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the reader's code may raise anything
        return f"{call} raised {type(err).__name__}: {err}{_where_it_raised(err)}"
    if case.checker is not None:
        try:
            out = case.checker(got)
        except Exception as err:  # noqa: BLE001 - a malformed result can break a checker
            return f"{call} returned {_short.repr(got)}, which the check could not use ({type(err).__name__}: {err})"
        ok, msg = (out if isinstance(out, tuple) else (bool(out), ""))
        if ok:
            return None
        return f"{call} returned {_short.repr(got)}" + (f": {msg}" if msg else ", which is not right")
    if got is None and case.expected is not None:
        return f"{call} returned None; did you forget a `return`?"
    diff = compare(case.expected, got, ex.rtol, ex.atol)
    return None if diff is None else f"{call}: {diff}"


__all__ = [
    "Case",
    "CheckResult",
    "Exercise",
    "UnknownExerciseError",
    "compare",
    "register",
    "registered",
    "run_case",
    "unregister",
]
