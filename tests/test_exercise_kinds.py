"""Each exercise kind on a toy exercise: the stub (or an unanswered cell) fails, a right answer
passes, hints come in tiers only on request (check() never prints one), and failures name the
quantity and give a call that reproduces them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion import exercises
from companion.exercises import (
    Case,
    Exercise,
    case_inputs,
    check,
    hint,
    numeric_gradient,
    register,
    rerun,
    show,
    unregister,
)

HINTS = ("a nudge about the middle", "the second tier says more", "the third tier nearly gives it away")


def _loss(v, u):
    return math.log1p(math.exp(-float(np.dot(u, v))))  # -log sigma(u . v)


def _grads(v, u):
    s = 1.0 / (1.0 + math.exp(-float(np.dot(u, v))))
    return (s - 1.0) * u, (s - 1.0) * v


@pytest.fixture
def toys():
    def mean(xs):
        """Return the mean of xs."""
        raise NotImplementedError

    def middle(xs):
        """Return the median of a non-empty list."""
        xs = sorted(xs)
        return xs[len(xs) // 2]  # the bug: wrong for an even length

    def grads(v, u):
        """Return (dL/dv, dL/du) for L = -log sigma(u . v)."""
        raise NotImplementedError

    rng = np.random.default_rng(0)
    vu = [(rng.normal(size=3), rng.normal(size=3)) for _ in range(2)]
    grad_cases = [Case(args=(v, u), expected=(numeric_gradient(lambda x: _loss(x, u), v),
                                              numeric_gradient(lambda x: _loss(v, x), u)),
                       label=f"random vectors {k}") for k, (v, u) in enumerate(vu)]
    made = [
        Exercise(id="ch99.mean", title="Mean", prompt="Return the mean.", stub=mean, hint=HINTS,
                 cases=[Case(args=([1.0, 3.0],), expected=2.0, label="two numbers"),
                        Case(args=(list(range(100)),), expected=49.5, label="a long list")],
                 outputs=("the mean",)),
        Exercise(id="ch99.middle", title="Median", prompt="Fix the median.", kind="debug", stub=middle,
                 hint=HINTS[:2], cases=[Case(args=([3, 1, 2],), expected=2, label="odd length"),
                                        Case(args=([4, 1, 3, 2],), expected=2.5, label="even length")]),
        Exercise(id="ch99.grads", title="Gradients", prompt="Derive dL/dv and dL/du.", kind="derive",
                 stub=grads, cases=grad_cases, outputs=("dL/dv", "dL/du"), rtol=1e-5, atol=1e-7,
                 hint=HINTS[:1]),
        Exercise(id="ch99.deriv_number", title="A derivative", prompt="d/dx x^2 at x = 3?", kind="derive",
                 answer=6.0, atol=1e-6, hint=HINTS[:1]),
        Exercise(id="ch99.guess", title="Guess the share", prompt="What share?", kind="predict",
                 rtol=0.0, atol=0.05, unit=".0%", explanation="Because the tail is long and thin."),
        Exercise(id="ch99.guess_measured", title="Guess a count", prompt="How many?", kind="predict",
                 rtol=0.1, atol=0.0, measure=lambda: 120),
        Exercise(id="ch99.choice", title="Which one", prompt="Which is a type?", kind="concept",
                 choices={"a": "every occurrence", "b": "a distinct word"}, answer="b",
                 hint=("think of a dictionary",), explanation="A type is a distinct word form."),
        Exercise(id="ch99.number", title="A number", prompt="How many bits?", kind="concept",
                 answer=8, atol=0.0, rtol=0.0, explanation="Eight bits make a byte."),
        Exercise(id="ch99.open", title="Open", prompt="Try it on another corpus.", kind="extend",
                 hint=HINTS[:1]),
        Exercise(id="ch99.open_loose", title="Open, checked loosely", prompt="Any increasing list.",
                 kind="extend", stub=mean,
                 cases=[Case(args=(5,), checker=lambda got: (list(got) == sorted(got), "not increasing"))]),
    ]
    for ex in made:
        register(ex)
    yield {ex.name: ex for ex in made}
    for ex in made:
        unregister(ex.id)


def test_kinds_default_to_implement_and_are_validated(toys):
    assert toys["mean"].kind == "implement"
    with pytest.raises(ValueError, match="kind 'quiz'"):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="quiz", answer=1))
    with pytest.raises(ValueError, match="explanation"):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="concept", answer=1))
    with pytest.raises(ValueError, match="not one of the choices"):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="concept", choices={"a": "x"},
                          answer="c", explanation="e"))
    with pytest.raises(ValueError, match="answer= or cases="):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="derive", answer=1,
                          cases=[((1,), 1)], stub=print))
    with pytest.raises(ValueError, match="no cases or answer"):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="predict", answer=1))
    with pytest.raises(ValueError, match="at least one case"):
        register(Exercise(id="ch99.bad", title="t", prompt="p", kind="debug", stub=print))
    assert "ch99.bad" not in exercises.all_ids()


def test_kinds_summary_counts_per_chapter(toys):
    counts = exercises.kinds("ch99")["ch99"]
    assert counts == {"implement": 1, "debug": 1, "derive": 2, "predict": 2, "concept": 2, "extend": 2}
    assert set(exercises.kinds()) >= {"ch00", "ch99"}


def test_implement_names_the_output_and_reproduces_the_case(toys, capsys):
    assert not check("ch99.mean", toys["mean"].stub)
    capsys.readouterr()
    result = check("ch99.mean", lambda xs: sum(xs) / 2)
    out = capsys.readouterr().out
    assert not result and result.n_passed == 1
    assert "check 2 (a long list)" in out and "expected 49.5 for the mean, got 2475.0" in out
    # a long input is not printed in full: the failure gives a call that re-runs it instead
    assert "Re-run it: rerun('ch99.mean', mean, 2)" in out
    assert rerun("ch99.mean", lambda xs: len(xs), 2) == 100
    args, kwargs = case_inputs("ch99.mean", 1)
    assert args == ([1.0, 3.0],) and kwargs == {}
    with pytest.raises(ValueError, match="checks 1 to 2"):
        case_inputs("ch99.mean", 3)
    with pytest.raises(ZeroDivisionError):  # rerun lets the reader's exception through
        rerun("ch99.mean", lambda xs: 1 / 0, 1)
    assert check("ch99.mean", lambda xs: sum(xs) / len(xs))


def test_short_literal_inputs_are_shown_as_a_call(toys, capsys):
    check("ch99.middle", toys["middle"].stub)
    out = capsys.readouterr().out
    assert "check 2 (even length)" in out and "Re-run it: middle([4, 1, 3, 2])" in out


def test_debug_stub_fails_and_a_fix_passes(toys, capsys):
    assert not check("ch99.middle", toys["middle"].stub)
    out = capsys.readouterr().out
    assert "1 of 2 checks failed" in out and "expected 2.5" in out

    def fixed(xs):
        xs, n = sorted(xs), len(xs)
        return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

    assert check("ch99.middle", fixed)
    show("ch99.middle")
    out = capsys.readouterr().out
    assert "[debug]" in out and "has a bug" in out and "xs[len(xs) // 2]" in out


def test_derive_names_each_gradient(toys, capsys):
    assert not check("ch99.grads", toys["grads"].stub)
    capsys.readouterr()
    assert not check("ch99.grads", lambda v, u: (_grads(v, u)[0], 2 * _grads(v, u)[1]))
    out = capsys.readouterr().out
    assert "for dL/du" in out and "[1]" not in out.split("Re-run")[0].split(":", 2)[-1]
    assert "Re-run it: rerun('ch99.grads', grads, 1)" in out  # arrays are not pasted as literals
    assert not check("ch99.grads", lambda v, u: _grads(v, u)[0])
    assert "expected 2 results (dL/dv, dL/du)" in capsys.readouterr().out
    assert check("ch99.grads", _grads)


def test_derive_by_number(toys, capsys):
    assert not check("ch99.deriv_number", None)
    assert "no answer yet" in capsys.readouterr().out
    assert not check("ch99.deriv_number", 9)
    assert "too high" in capsys.readouterr().out
    assert check("ch99.deriv_number", 6)


def test_predict_says_how_far_off(toys, capsys):
    assert not check("ch99.guess", None, measured=0.44)  # the stored notebook: no guess yet
    out = capsys.readouterr().out
    assert "no prediction yet" in out and "0.44" not in out and "tail" not in out
    result = check("ch99.guess", 0.3, measured=0.44)
    out = capsys.readouterr().out
    assert not result and result.error == pytest.approx(-0.14) and result.measured == 0.44
    assert "✗ ch99.guess: you predicted 30%, the experiment measured 44%: off by 14% (32% too low)" in out
    assert "not within ±5%" in out
    assert "Because the tail" in out  # the measurement is seen: now the explanation helps
    assert check("ch99.guess", 0.42, measured=0.44)
    assert "✓ ch99.guess: you predicted 42%" in capsys.readouterr().out
    with pytest.raises(TypeError, match="measured="):
        check("ch99.guess", 0.3)
    with pytest.raises(TypeError, match="only for predict"):
        check("ch99.mean", sum, measured=1)


def test_predict_with_a_registered_measurement(toys, capsys):
    assert check("ch99.guess_measured", 110)  # within 10 %
    assert not check("ch99.guess_measured", 200)
    assert "the measurement is 0.6 times your guess" in capsys.readouterr().out.splitlines()[-1]


def test_concept_choice(toys, capsys):
    assert not check("ch99.choice", None)
    assert not check("ch99.choice", "a")
    out = capsys.readouterr().out
    assert "(a) is not the best answer" in out and "distinct word form" not in out
    assert not check("ch99.choice", "z")
    assert "not one of the choices (a, b)" in capsys.readouterr().out
    assert check("ch99.choice", " (B) ")
    assert "A type is a distinct word form." in capsys.readouterr().out  # explained once right
    show("ch99.choice")
    out = capsys.readouterr().out
    assert "(a) every occurrence" in out and "(b) a distinct word" in out and "distinct word form" not in out


def test_concept_number(toys, capsys):
    assert not check("ch99.number", 7)
    assert "Eight bits" not in capsys.readouterr().out
    assert not check("ch99.number", "eight")
    assert check("ch99.number", 8.0)


def test_extend(toys, capsys):
    result = check("ch99.open")
    out = capsys.readouterr().out
    assert not result and result.n_cases == 0 and "nothing to check" in out and "solutions/ch99.py" in out
    show("ch99.open")
    assert "Nothing is checked automatically" in capsys.readouterr().out
    assert not check("ch99.open_loose", lambda n: [3, 1])
    assert "not increasing" in capsys.readouterr().out
    assert check("ch99.open_loose", lambda n: list(range(n)))
    assert "sanity checks passed" in capsys.readouterr().out


def test_hints_come_in_tiers_only_on_request(toys, capsys):
    for exercise_id, answer in [("ch99.mean", toys["mean"].stub), ("ch99.middle", toys["middle"].stub),
                                ("ch99.grads", toys["grads"].stub), ("ch99.choice", "a"),
                                ("ch99.deriv_number", 1.0)]:
        check(exercise_id, answer)
        out = capsys.readouterr().out
        assert "Hint" not in out and not any(t in out for t in HINTS), exercise_id
    hint("ch99.mean", 1)
    out = capsys.readouterr().out
    assert "Hint 1 of 3" in out and HINTS[0] in out and HINTS[1] not in out and "hint('ch99.mean', 2)" in out
    hint("ch99.mean", 3)
    out = capsys.readouterr().out
    assert HINTS[2] in out and "the last one" in out and "solutions/ch99.py" in out
    hint("ch99.mean", 9)
    assert HINTS[2] in capsys.readouterr().out
    # a concept question: tier 1 a nudge, tier 2 the explanation
    hint("ch99.choice", 1)
    out = capsys.readouterr().out
    assert "dictionary" in out and "distinct word form" not in out
    hint("ch99.choice", 2)
    assert "A type is a distinct word form." in capsys.readouterr().out
    hint("ch99.open_loose")
    assert "No hint" in capsys.readouterr().out
    with pytest.raises(ValueError, match="tier"):
        hint("ch99.mean", 0)
