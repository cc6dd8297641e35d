"""The answer key of the exercises (issue 32): the right choices of the concept questions are
spread over the letters, and the right option is not systematically the longest (nor of any one
length rank); the student edition ships no answer key (companion/exercises/sealed.py)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from companion import exercises
from companion.exercises.sealed import Sealed, seal, seal_source
from companion.student import build

CHOICE_CONCEPTS = {i: ex for i, ex in exercises.all_exercises().items() if ex.kind == "concept" and ex.choices}


def _length_rank(ex) -> int:
    """1 if the right option is the longest, 2 if second longest, ... (ties count against it)."""
    right = len(ex.choices[ex.answer])
    return 1 + sum(len(text) > right for key, text in ex.choices.items() if key != ex.answer)


def test_there_are_enough_choice_questions_to_judge():
    assert len(CHOICE_CONCEPTS) >= 12


def test_right_choices_are_spread_over_the_letters():
    letters = Counter(ex.answer.lower() for ex in CHOICE_CONCEPTS.values())
    n = len(CHOICE_CONCEPTS)
    assert max(letters.values()) <= 0.4 * n, letters
    four_way = [ex for ex in CHOICE_CONCEPTS.values() if sorted(ex.choices) == ["a", "b", "c", "d"]]
    used = Counter(ex.answer.lower() for ex in four_way)
    assert all(used[k] >= 0.15 * len(four_way) for k in "abcd"), used


def test_the_right_choice_is_not_given_away_by_its_length():
    ranks = Counter(_length_rank(ex) for ex in CHOICE_CONCEPTS.values())
    n = len(CHOICE_CONCEPTS)
    assert ranks[1] <= n / 2, f"the right option is the longest in {ranks[1]} of {n}"
    assert max(ranks.values()) <= n / 2, f"length ranks of the right option: {dict(ranks)}"


def test_explanations_name_the_right_letter():
    """An explanation that opens with a letter, "(b). ...", opens with the right one."""
    for exercise_id, ex in CHOICE_CONCEPTS.items():
        text = ex.explanation.strip()
        if len(text) >= 4 and text[0] == "(" and text[2:4] == ")." and text[1].isalpha():
            assert text[1] == ex.answer.lower(), f"{exercise_id}: explanation opens with ({text[1]})"


# --------------------------------------------------------------------------- the student edition

ROOT = Path(__file__).resolve().parents[1]
ALL = exercises.all_exercises()
#: exercises whose answer is a value held in the registry: a choice or a number
VALUE_ANSWERS = {i: ex for i, ex in ALL.items() if ex.kind in ("concept", "derive") and not ex.has_cases}


def _sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s for s in re.split(r"(?<=[.;:!?])\s+", flat) if len(s) >= 30]


@pytest.fixture(scope="module")
def student_exercises(tmp_path_factory):
    root = tmp_path_factory.mktemp("student")
    build(root, [ROOT / "notebooks" / "00_how_to_use.ipynb"])
    return root


def test_seal_round_trip():
    s = seal("ch99.q", "c", salt="pepper")
    assert s.matches("c") and not any(s.matches(k) for k in "abd")
    assert repr(s) == "<sealed choice>" and s.data != seal("ch98.q", "c", salt="pepper").data  # the id salts it
    for number in (101, 0.1, 1.57142857, -2.5e-7):
        n = seal("ch99.n", number)
        assert n.value() == number and type(n.value()) is type(number)
        assert repr(number) not in n.data and repr(number) not in repr(n)
    with pytest.raises(TypeError):
        seal("ch99.q", [1])
    with pytest.raises(TypeError):
        s.value()


def test_seal_source_refuses_what_it_cannot_seal():
    with pytest.raises(ValueError, match="not registered"):
        seal_source('register(Exercise(id="ch99.nowhere", title="t"))\n', {})
    with pytest.raises(ValueError, match="plain string"):
        seal_source('register(Exercise(id=NAME, title="t"))\n', {})


def test_the_student_edition_ships_no_answer_key(student_exercises):
    """No registered answer value (a choice or a number) is in clear, and no sentence of any
    explanation (concept and predict) is in the exercise package the student edition ships."""
    package = student_exercises / "companion" / "exercises"
    modules = sorted(package.glob("ch[0-9][0-9]*.py"))
    assert len(modules) == len(exercises.discover())
    texts, strings = [], []
    for path in modules:
        source = path.read_text(encoding="utf-8")
        texts.append(source)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.append(" ".join(node.value.split()))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Exercise":
                kw = {k.arg: k.value for k in node.keywords}
                eid = kw["id"].value
                if "answer" in kw and eid in VALUE_ANSWERS:  # sealed, not a literal
                    assert not isinstance(kw["answer"], ast.Constant), f"{eid}: answer in clear"
                    assert ast.unparse(kw["answer"]).startswith("_Sealed("), eid
                if "explanation" in kw:
                    assert ast.literal_eval(kw["explanation"]) == "", f"{eid}: explanation shipped"
    corpus = "\n".join(strings)
    raw = " ".join(" ".join(texts).split())
    assert not re.search(r"\banswer\s*=\s*['\"]", raw), "a choice answer in clear"
    for eid, ex in ALL.items():
        for sentence in _sentences(ex.explanation):
            assert sentence not in corpus and sentence not in raw, f"{eid}: explanation shipped: {sentence!r}"


def test_checks_work_in_the_student_edition(student_exercises):
    """In the student edition the right answer still passes and every other choice fails, a
    wrong number fails, and every exercise keeps its hints (without the explanation tier)."""
    answers = {i: ex.answer for i, ex in VALUE_ANSWERS.items()}
    assert all(not isinstance(a, Sealed) for a in answers.values())  # the instructor copy is in clear
    probe = """
import json, sys
from companion.exercises import check, get
given = json.loads(sys.stdin.read())
answers, hints = given["answers"], given["hints"]
bad = [f"{i}: hints differ" for i, tiers in hints.items() if list(get(i).hints) != tiers]
for i, a in answers.items():
    ex = get(i)
    if type(ex.answer).__name__ != "Sealed" or ex.explanation or "(" in repr(ex.answer)[1:]:
        bad.append(f"{i}: not sealed")
    if not check(i, a, verbose=False):
        bad.append(f"{i}: the right answer fails")
    wrong = [k for k in (ex.choices or {}) if k != a] or [a * 1.5 + 1]
    bad += [f"{i}: {w!r} passes" for w in wrong if check(i, w, verbose=False)]
print(json.dumps(bad))
"""
    env = {"PYTHONPATH": str(student_exercises), "PATH": "/usr/bin:/bin", "BOOK_SCALE": "ci"}
    hints = {i: [t for t in ((ex.hint,) if isinstance(ex.hint, str) else ex.hint) if t and t.strip()]
             for i, ex in ALL.items()}
    proc = subprocess.run([sys.executable, "-c", probe], input=json.dumps({"answers": answers, "hints": hints}), capture_output=True,
                          text=True, cwd=student_exercises, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
