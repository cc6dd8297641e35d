"""Tests of the exercise mechanism, and of EVERY registered exercise, whatever its kind: its
reference answer passes, its stub (or an unanswered cell) fails, and check() survives a reader's
function that raises. The kinds themselves are tested in test_exercise_kinds.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import solutions
from companion import exercises
from companion.exercises import Case, Exercise, check, compare, get, register, show, unregister

ALL_IDS = exercises.all_ids()
FUNCTION_IDS = [i for i in ALL_IDS if get(i).has_cases]


def reference_check(exercise_id, **kw):
    """check() with the exercise's reference answer: the solution function (function kinds),
    the registered answer (concept, derive-by-number), or a prediction equal to the measured
    value (predict)."""
    ex = get(exercise_id)
    if ex.kind == "predict":
        value = ex.measure() if ex.measure is not None else 0.5
        return check(exercise_id, value, measured=value, **kw)
    if ex.kind == "extend" and not ex.has_cases:
        return check(exercise_id, solutions.get(exercise_id), **kw)
    if not ex.has_cases:
        return check(exercise_id, ex.answer, **kw)
    return check(exercise_id, solutions.get(exercise_id), **kw)


def unanswered_check(exercise_id, **kw):
    """check() as the stored notebook runs it: the stub, or no answer/prediction yet."""
    ex = get(exercise_id)
    if ex.has_cases:
        return check(exercise_id, ex.stub, **kw)
    if ex.kind == "predict":
        return check(exercise_id, None, measured=0.5, **kw)
    return check(exercise_id, None, **kw)


def test_chapter_modules_are_discovered():
    assert "ch00" in exercises.discover()
    assert "ch00.type_token_ratio" in ALL_IDS
    # every chNN module registered at least one exercise with its own chapter prefix (a split
    # chapter's second module, chNNb.py, registers chNN.b_* ids)
    for mod in exercises.discover():
        assert any(i.startswith(mod[:4] + ".") for i in ALL_IDS), f"{mod}.py registers no {mod[:4]}.* exercise"


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_reference_solution_passes(exercise_id, capsys):
    ex = get(exercise_id)
    result = reference_check(exercise_id)
    out = capsys.readouterr().out
    if ex.kind == "extend" and not ex.has_cases:  # nothing to check: says so, verifies nothing
        assert not result and result.n_cases == 0 and "nothing to check" in out
        assert callable(solutions.get(exercise_id))  # the worked answer exists
        return
    assert result, out
    assert result.n_passed == result.n_cases >= 1
    assert "✓" in out
    if ex.kind in ("implement", "debug", "derive", "extend"):
        solutions.get(exercise_id)  # every function kind has its worked answer in solutions/


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_stub_fails(exercise_id, capsys):
    ex = get(exercise_id)
    if ex.kind == "extend" and not ex.has_cases:
        pytest.skip("an open task with nothing to check")
    result = unanswered_check(exercise_id)
    out = capsys.readouterr().out
    assert not result and result.failures
    assert "✗" in out
    assert "Hint" not in out and all(t.strip()[:40] not in out for t in ex.hints)  # never a hint
    if ex.kind == "debug":  # the planted bug returns wrong values; it does not just raise
        assert "NotImplementedError" not in out, "a debug stub must be runnable code with a bug"


@pytest.mark.parametrize("exercise_id", FUNCTION_IDS)
def test_check_survives_a_raising_function(exercise_id, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("reader's bug")

    result = check(exercise_id, broken)
    out = capsys.readouterr().out
    assert not result
    assert "RuntimeError: reader's bug" in out


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_show_prints_prompt_and_stub(exercise_id, capsys):
    show(exercise_id)
    out = capsys.readouterr().out
    ex = get(exercise_id)
    assert ex.title in out and f"[{ex.kind}]" in out
    if ex.stub is not None:
        assert f"def {ex.name}(" in out


# --------------------------------------------------------------------------- the mechanism


@pytest.fixture
def toy():
    def scale(xs, factor=2.0):
        """Multiply every number by factor."""
        raise NotImplementedError

    ex = register(Exercise(
        id="ch99.scale",
        title="Scale a list",
        prompt="Return a new list with every number multiplied by factor.",
        cases=[
            Case(args=([1.0, 2.0],), expected=[2.0, 4.0], label="two numbers"),
            (([0.5],), [1.0]),
            Case(args=([1.0],), kwargs={"factor": 3.0}, expected=[3.0]),
            Case(args=([1.0, 1.0],), checker=lambda got: (len(got) == 2, "needs two items")),
        ],
        stub=scale,
        hint="a list comprehension does it",
    ))
    yield ex
    unregister("ch99.scale")


def test_check_reports_in_plain_words(toy, capsys):
    ok = check("ch99.scale", lambda xs, factor=2.0: [x * factor for x in xs])
    assert ok and ok.n_passed == 4 and repr(ok) == "CheckResult('ch99.scale': 4/4 passed)"
    capsys.readouterr()
    bad = check("ch99.scale", lambda xs, factor=2.0: [x * 2 for x in xs])
    out = capsys.readouterr().out
    assert not bad and bad.n_passed == 3
    assert "1 of 4 checks failed" in out
    assert "scale([1.0], factor=3.0)" in out and "expected 3.0 at [0], got 2.0" in out
    assert "Re-run it: scale([1.0], factor=3.0)" in out  # a call the reader can paste
    assert "a list comprehension" not in out and "Hint" not in out  # hints only on request
    assert "hint(" not in out  # the exercise section says how to ask for one


def test_check_catches_exceptions_and_missing_return(toy, capsys):
    assert not check("ch99.scale", lambda xs, factor=2.0: xs[5])
    assert "IndexError" in capsys.readouterr().out
    assert not check("ch99.scale", lambda xs, factor=2.0: None)
    assert "forget a `return`" in capsys.readouterr().out
    assert not check("ch99.scale", lambda xs, factor=2.0: [1.0], verbose=False)
    assert capsys.readouterr().out == ""
    assert "needs two items" in " ".join(check("ch99.scale", lambda xs, factor=2.0: [1.0]).failures)


def test_reader_mutating_inputs_does_not_leak_between_runs(toy):
    def mutating(xs, factor=2.0):
        xs.append(99.0)
        return [x * factor for x in xs[:-1]]

    assert check("ch99.scale", mutating, verbose=False)
    assert check("ch99.scale", mutating, verbose=False)  # the stored inputs are unchanged


def test_unknown_id_lists_known_ones(toy):
    with pytest.raises(KeyError) as info:
        check("ch99.scal", print)
    msg = str(info.value)
    assert "no exercise 'ch99.scal'" in msg and "ch99.scale" in msg and "ch00.type_token_ratio" in msg


def test_check_needs_a_function(toy):
    with pytest.raises(TypeError, match="function itself"):
        check("ch99.scale", [2.0, 4.0])


def test_register_validates(toy):
    stub = toy.stub
    with pytest.raises(ValueError, match="must look like"):
        register(Exercise(id="scale", title="t", prompt="p", cases=[((1,), 1)], stub=stub))
    with pytest.raises(ValueError, match="title"):
        register(Exercise(id="ch99.other", title=" ", prompt="p", cases=[((1,), 1)], stub=stub))
    with pytest.raises(ValueError, match="at least one case"):
        register(Exercise(id="ch99.other", title="t", prompt="p", cases=[], stub=stub))
    with pytest.raises(ValueError, match="stub"):
        register(Exercise(id="ch99.other", title="t", prompt="p", cases=[((1,), 1)], stub=None))
    with pytest.raises(ValueError, match="exactly one"):
        Case(args=(1,))
    with pytest.raises(TypeError, match="tuple"):
        Case(args=[1], expected=1)


def test_register_refuses_a_duplicate_from_another_module(toy):
    code = ("from companion.exercises import register, Exercise\n"
            "def f(): pass\n"
            "register(Exercise(id='ch99.scale', title='t', prompt='p', cases=[((1,), 1)], stub=f))")
    with pytest.raises(ValueError, match="already registered"):
        exec(code, {"__name__": "another_module"})


@pytest.mark.parametrize(
    "expected, got, ok",
    [
        (0.1 + 0.2, 0.3, True),
        (1.0, 1.001, False),
        (float("nan"), float("nan"), True),
        (3, 3.0, True),
        (True, 1, False),
        ("cat", "cat", True),
        ("cat", "Cat", False),
        ((1, 2), [1, 2], True),
        ([1, 2], [1, 2, 3], False),
        ({"a": 1.0, "b": [1, 2]}, {"a": 1.0 + 1e-12, "b": [1, 2]}, True),
        ({"a": 1.0}, {"a": 1.0, "c": 2}, False),
        ({1, 2}, {2, 1}, True),
        (np.array([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-8], dtype=torch.float64), True),
        (np.array([1.0, 2.0]), [1.0, 2.5], False),
        (np.array([[1, 2]]), np.array([1, 2]), False),
        (torch.tensor([1, 2]), np.array([1, 2]), True),
        (2.0, torch.tensor(2.0), True),
        (2.0, "2.0", False),
        (None, None, True),
        (1.0, np.True_, False),
        (1.0, np.str_("1.0"), False),
        (np.float32(0.5), 0.5, True),
    ],
)
def test_compare(expected, got, ok):
    assert (compare(expected, got) is None) == ok


def test_compare_says_where():
    assert compare({"x": [1.0, 2.0]}, {"x": [1.0, 2.5]}) == "expected 2.0 at ['x'][1], got 2.5"
    assert "shape" in compare(np.zeros((2, 2)), np.zeros(4))
    assert "missing keys ['b']" in compare({"a": 1, "b": 2}, {"a": 1})


def test_solutions_get_errors():
    with pytest.raises(ValueError, match="look like"):
        solutions.get("type_token_ratio")
    with pytest.raises(LookupError, match="no solutions/ch98.py"):
        solutions.get("ch98.anything")
    with pytest.raises(LookupError, match="no function"):
        solutions.get("ch00.no_such_function")
