"""The answer key of the exercises is not guessable (issue 32): the right choices of the concept
questions are spread over the letters, and the right option is not systematically the longest
(nor systematically of any one length rank)."""

from __future__ import annotations

from collections import Counter

from companion import exercises

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
