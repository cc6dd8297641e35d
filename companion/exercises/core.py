"""The auto-checked exercise mechanism.

An exercise is registered once, in ``companion/exercises/chNN.py``. It has a *kind*, which
decides what the reader hands to :func:`companion.exercises.check` and what is checked:

=============  =========================================  ======================================
kind           the reader writes                          check() compares
=============  =========================================  ======================================
``implement``  a function (from a starter stub)           its results on hidden cases
``debug``      a fixed copy of a function with a          its results on hidden cases (the
               planted bug (the stub *is* the buggy one)  buggy stub must fail them)
``derive``     a derived formula, as a function (or a     its results on hidden cases, computed
               number when ``answer`` is set)             numerically (e.g. finite differences)
``predict``    a number, *before* running an experiment   the prediction against the value the
                                                          experiment measured; says how far off
``concept``    a choice letter ("b") or a number          the answer, within a tolerance
``extend``     anything (an open task)                    a loose sanity check, or nothing;
                                                          the worked answer is in solutions/
=============  =========================================  ======================================

::

    register(Exercise(
        id="ch01.add_k", title="Add-k smoothing", prompt="...",
        cases=[Case(args=(...), expected=...), ((...), expected), ...],
        stub=add_k,            # the starter function shown to the reader
        hint=("a nudge", "more", "almost the answer"),   # tiers, shown only by hint(id, tier)
        outputs=("P(w | c)",), # names the result (or each item of a returned tuple)
    ))

``check`` runs every hidden case, prints the verdict in plain words (which case failed, the
named quantity that differed, a one-line call that reproduces the case), never prints a hint,
never raises for a wrong answer or an exception in the reader's code, and returns a
:class:`CheckResult` that is truthy only when everything passed.
"""

from __future__ import annotations

import ast
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

from ..portable import MAX_DIGITS, excess_digits, short
from .sealed import Sealed

ID_PATTERN = re.compile(r"^ch\d\d\.[a-z_][a-z0-9_]*$")
KINDS = ("implement", "debug", "derive", "predict", "concept", "extend")
#: kinds whose answer is a function run on hidden cases
FUNCTION_KINDS = ("implement", "debug", "derive")
_MISSING = object()
#: a call shorter than this (and made of plain literals) is shown in full in a failure report
SHORT_CALL = 100

class _ShortRepr(reprlib.Repr):
    """``reprlib``'s abbreviations, with floats to at most ``MAX_DIGITS`` significant digits and
    arrays to four decimals: a failure report is stored in a notebook's output, which must read
    the same on every CPU (:mod:`companion.portable`)."""

    def repr1(self, x, level):
        if isinstance(x, (float, np.floating)):
            return short(x)
        return super().repr1(x, level)

    def repr_ndarray(self, x, level):
        with np.printoptions(precision=4):
            s = repr(x)
        if excess_digits(s):
            with np.printoptions(formatter={"float_kind": lambda v: short(v, 4)}):
                s = repr(x)
        s = " ".join(s.split())  # one line
        if len(s) > self.maxother:
            i = max(0, (self.maxother - 3) // 2)
            s = s[:i] + self.fillvalue + s[len(s) - max(0, self.maxother - 3 - i):]
        return s


def _numbers(expected: Any, got: Any) -> tuple[str, str]:
    """Two numbers for a failure report, each to ``MAX_DIGITS`` significant digits, or to as many
    more as it takes to tell them apart (integers exactly)."""
    def text(x: Any, digits: int) -> str:
        if isinstance(x, (bool, np.bool_)) or not _is_real(x):
            return repr(x)
        if isinstance(x, (int, np.integer)):
            return repr(int(x))
        return short(float(x), digits)

    for digits in range(MAX_DIGITS, 18):
        e, g = text(expected, digits), text(got, digits)
        if e != g:
            break
    return e, g


_short = _ShortRepr()
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
    ``outputs`` names what the function returns, overriding the exercise's ``outputs``: one
    name for the whole result (``("P(w | c)",)``) or one per item of a returned tuple
    (``("dL/dv", "dL/du_pos", "dL/du_neg")``), so a failure says "dL/dv", not "[0]".
    """

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expected: Any = _MISSING
    checker: Callable[[Any], bool | tuple[bool, str]] | None = None
    label: str = ""
    outputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            raise TypeError(f"Case.args must be a tuple of positional arguments, got {type(self.args).__name__}")
        if (self.expected is _MISSING) == (self.checker is None):
            raise ValueError("a Case needs exactly one of expected=... or checker=...")
        self.outputs = tuple(self.outputs)


@dataclass
class Exercise:
    """An auto-checked exercise.

    Attributes:
        id: ``"chNN.name"``; ``name`` is also the function's name in ``solutions/chNN.py``.
        title: a few words.
        prompt: what to do, in plain words (shown by :func:`show`).
        cases: (``implement``, ``debug``, ``derive``; optional for ``extend``) a list of
            :class:`Case` (or ``(args_tuple, expected)`` pairs), or a function returning one
            (built at check time, so heavy inputs cost nothing at import).
        stub: (``implement``, ``debug``, ``derive`` with cases) the starter function shown to
            readers; it must fail the cases. For ``debug`` it is the function with the bug.
        hint: one hint, or a sequence of tiers from a nudge to nearly the answer; shown only
            by ``hint(id, tier)``, never by ``check``.
        rtol, atol: tolerance for comparing floats, arrays and tensors (for ``predict``: how
            close a prediction must be to count as right).
        kind: one of :data:`KINDS`; ``"implement"`` by default.
        outputs: names of what the function returns (see :class:`Case`).
        answer: (``concept``; ``derive`` without cases) the right choice letter or number.
        choices: (``concept``) ``{"a": "text", "b": "text", ...}`` for a multiple choice.
        explanation: (``concept``, ``predict``) why the answer is what it is; shown after a
            correct answer (``concept``), after any checked prediction (``predict``), or as
            the last hint tier.
        measure: (``predict``) an optional function computing the measured value
            deterministically, used when ``check`` is not given ``measured=``.
        unit: (``predict``, ``concept``) how to print the value: a format spec such as
            ``".1%"`` or ``",.0f"`` (default ``".4g"``).
    """

    id: str
    title: str
    prompt: str
    cases: Sequence[Case | tuple] | Callable[[], Sequence[Case | tuple]] = ()
    stub: Callable[..., Any] | None = None
    hint: str | Sequence[str] = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    kind: str = "implement"
    outputs: tuple[str, ...] = ()
    answer: Any = _MISSING
    choices: Mapping[str, str] | None = None
    explanation: str = ""
    measure: Callable[[], Any] | None = None
    unit: str = ".4g"

    @property
    def name(self) -> str:
        """The function's name: the last part of the id."""
        return self.id.split(".", 1)[1]

    @property
    def chapter(self) -> str:
        """``"ch01"`` for ``"ch01.add_k"``."""
        return self.id.split(".", 1)[0]

    @property
    def has_cases(self) -> bool:
        """Whether the exercise runs a function on hidden cases."""
        return callable(self.cases) or bool(self.cases)

    @property
    def hints(self) -> tuple[str, ...]:
        """The hint tiers, in order; a ``concept``/``predict`` explanation is the last tier."""
        tiers = (self.hint,) if isinstance(self.hint, str) else tuple(self.hint)
        tiers = tuple(t for t in tiers if t and t.strip())
        if self.explanation and self.kind in ("concept", "predict"):
            tiers += (self.explanation,)
        return tiers

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

    def format_value(self, value: Any) -> str:
        """``value`` printed with the exercise's ``unit`` format (plain repr if it does not apply)."""
        if _is_real(value):
            try:
                return format(float(value), self.unit)
            except (TypeError, ValueError):
                pass
        return _short.repr(value)


@dataclass
class CheckResult:
    """What :func:`check` found; truthy only if every case passed.

    For a ``predict`` exercise ``measured`` and ``error`` (prediction minus measured value) are
    set and ``failures[0]`` describes the comparison (even when it passed); for an ``extend`` exercise with nothing to check, ``n_cases`` is 0 and the result is
    falsy (nothing was verified).
    """

    id: str
    passed: bool
    n_cases: int
    n_passed: int
    failures: list[str] = field(default_factory=list)
    measured: Any = None
    error: float | None = None

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult({self.id!r}: {self.n_passed}/{self.n_cases} passed)"


_REGISTRY: dict[str, tuple[Exercise, str]] = {}


def _validate(ex: Exercise) -> None:
    if not isinstance(ex.id, str) or not ID_PATTERN.match(ex.id):
        raise ValueError(f"exercise id {ex.id!r} must look like 'ch01.add_k' (chapter, dot, function name)")
    for attr in ("title", "prompt"):
        if not isinstance(getattr(ex, attr), str) or not getattr(ex, attr).strip():
            raise ValueError(f"{ex.id}: {attr} must be a non-empty string")
    if ex.kind not in KINDS:
        raise ValueError(f"{ex.id}: kind {ex.kind!r} is not one of {', '.join(KINDS)}")
    if not (ex.rtol >= 0 and ex.atol >= 0):
        raise ValueError(f"{ex.id}: rtol and atol must be >= 0")
    if not isinstance(ex.hint, str) and not all(isinstance(t, str) for t in ex.hint):
        raise ValueError(f"{ex.id}: hint must be a string or a sequence of strings (the tiers)")
    ex.outputs = tuple(ex.outputs)
    value_answer = ex.kind == "concept" or (ex.kind == "derive" and ex.answer is not _MISSING)
    if value_answer:
        if ex.answer is _MISSING:
            raise ValueError(f"{ex.id}: a concept question needs answer= (a choice letter or a number)")
        if ex.has_cases:
            raise ValueError(f"{ex.id}: give either answer= or cases=, not both")
        if ex.choices is not None:
            if not ex.choices or not all(isinstance(k, str) and len(k) == 1 for k in ex.choices):
                raise ValueError(f"{ex.id}: choices must map single letters to texts, e.g. {{'a': '...'}}")
            if isinstance(ex.answer, Sealed) and ex.answer.kind != "choice":
                raise ValueError(f"{ex.id}: a sealed number cannot answer a multiple choice")
            if not isinstance(ex.answer, (str, Sealed)) or (
                    isinstance(ex.answer, str) and ex.answer.lower() not in {k.lower() for k in ex.choices}):
                raise ValueError(f"{ex.id}: answer {ex.answer!r} is not one of the choices {list(ex.choices)}")
        elif not (_is_real(ex.answer) or isinstance(ex.answer, Sealed) and ex.answer.kind == "number"):
            raise ValueError(f"{ex.id}: without choices, answer must be a number, got {ex.answer!r}")
        # (the student edition's sealed copy ships no explanation: companion/exercises/sealed.py)
        if ex.kind == "concept" and not ex.explanation.strip() and not isinstance(ex.answer, Sealed):
            raise ValueError(f"{ex.id}: a concept question needs an explanation= (shown after a right answer)")
    elif ex.kind in FUNCTION_KINDS:
        if not ex.has_cases:
            raise ValueError(f"{ex.id}: give at least one case")
        if not callable(ex.stub):
            raise ValueError(f"{ex.id}: stub must be the starter function shown to readers")
    elif ex.kind == "predict":
        if ex.has_cases or ex.answer is not _MISSING:
            raise ValueError(f"{ex.id}: a predict exercise has no cases or answer; it compares with measured=")
        if ex.measure is not None and not callable(ex.measure):
            raise ValueError(f"{ex.id}: measure must be a function of no arguments")
    elif ex.kind == "extend" and ex.has_cases and not callable(ex.stub):
        raise ValueError(f"{ex.id}: an extend task with sanity checks needs stub= (the starter function)")


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to the registry (re-registering from the same module replaces it).

    Raises:
        ValueError: for a malformed exercise, or an id already taken by another module.
    """
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register() takes an Exercise, got {type(exercise).__name__}")
    _validate(exercise)
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
    at = (f" at {where}" if where.startswith("[") else f" for {where}") if where else ""
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
                loc = f"{where}[{', '.join(map(str, pos))}]"
                at = f" at {loc}" if loc.startswith("[") else f" for {loc}"
                e, g = _numbers(arr[pos].item(), g[pos].item())
                return f"expected {e}{at}, got {g} ({len(bad)} of {arr.size} values differ)"
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
        e, g = _numbers(expected, got)
        return f"expected {e}{at}, got {g}"
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


def _is_literal(value: Any) -> bool:
    """Whether ``repr(value)`` evaluates back to ``value`` (plain numbers, strings, containers)."""
    try:
        text = repr(value)
        return ast.literal_eval(text) == value
    except Exception:  # noqa: BLE001 - arrays, tensors, nan, custom objects
        return False


def call_text(name: str, case: Case, full: bool = False) -> str:
    """``name(arg, ..., key=value)`` with the case's inputs (abbreviated when long or when a
    float shows more than ``MAX_DIGITS`` digits, unless ``full``)."""
    if not full:
        whole = call_text(name, case, full=True)
        if len(whole) <= SHORT_CALL and not excess_digits(whole):
            return whole
    rep = repr if full else _short.repr
    parts = [rep(a) for a in case.args] + [f"{k}={rep(v)}" for k, v in case.kwargs.items()]
    return f"{name}({', '.join(parts)})"


def reproduce_text(ex: Exercise, case: Case, number: int) -> str:
    """A one-line call that reproduces case ``number`` (1-based): the call itself when its
    inputs are short plain literals (no float with more than ``MAX_DIGITS`` digits), else
    ``rerun(id, name, number)``."""
    if all(_is_literal(a) for a in case.args) and all(_is_literal(v) for v in case.kwargs.values()):
        text = call_text(ex.name, case, full=True)
        if len(text) <= SHORT_CALL and not excess_digits(text):
            return text
    return f"rerun({ex.id!r}, {ex.name}, {number})"


def _where_it_raised(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    if len(frames) > 1:  # frame 0 is this module's call
        f = frames[-1]
        code = (f.line or "").strip()
        return f" (line {f.lineno}: `{code}`)" if code else f" (line {f.lineno})"
    return ""


def compare_named(expected: Any, got: Any, names: Sequence[str], rtol: float, atol: float) -> str | None:
    """Like :func:`compare`, naming the result (one name) or each item of a returned tuple."""
    names = tuple(names)
    if not names:
        return compare(expected, got, rtol, atol)
    if len(names) == 1:
        return compare(expected, got, rtol, atol, names[0])
    listing = ", ".join(names)
    if isinstance(got, (str, bytes)) or not isinstance(got, Sequence):
        return f"expected {len(names)} results ({listing}), got {_short.repr(got)}"
    if len(got) != len(names):
        return f"expected {len(names)} results ({listing}), got {len(got)}"
    for name, e, g in zip(names, expected, got):
        msg = compare(e, g, rtol, atol, name)
        if msg:
            return msg
    return None


def run_case(ex: Exercise, fn: Callable[..., Any], case: Case) -> str | None:
    """Run one case; ``None`` on success, else what went wrong. Never raises for the reader's errors."""
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)  # the reader may mutate inputs
    call = call_text(ex.name, case)
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
    diff = compare_named(case.expected, got, case.outputs or ex.outputs, ex.rtol, ex.atol)
    return None if diff is None else f"{call}: {diff}"


def normalise_choice(value: Any) -> str | None:
    """``"b"``, ``" B "``, ``"(b)"`` and ``"b)"`` all read as ``"b"``; ``None`` if not a letter."""
    if not isinstance(value, str):
        return None
    text = value.strip().strip("().").strip().lower()
    return text if len(text) == 1 and text.isalpha() else None


def numeric_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar function: the reference a ``derive`` exercise's
    gradient is checked against (so the expected values are computed, not typed in)."""
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


__all__ = [
    "FUNCTION_KINDS",
    "KINDS",
    "Case",
    "CheckResult",
    "Exercise",
    "UnknownExerciseError",
    "call_text",
    "compare",
    "compare_named",
    "normalise_choice",
    "numeric_gradient",
    "register",
    "registered",
    "reproduce_text",
    "run_case",
    "unregister",
]
