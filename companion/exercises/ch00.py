"""Chapter 0's exercise: a first taste of counting words (and of how exercises are checked)."""

from __future__ import annotations

from .core import Case, Exercise, register


def type_token_ratio(tokens: list[str]) -> float:
    """Return the number of distinct tokens divided by the number of tokens (0.0 if there are none)."""
    # Your code here. A Python set keeps one copy of each distinct token.
    raise NotImplementedError("write type_token_ratio")


def _cases() -> list[Case]:
    long_text = [f"w{i % 37}" for i in range(1000)]
    return [
        Case(args=(["the", "cat", "sat", "on", "the", "mat"],), expected=5 / 6, label="a short sentence"),
        Case(args=(["a", "a", "a", "a"],), expected=0.25, label="one word repeated"),
        Case(args=(["The", "the"],), expected=1.0, label="tokens are compared exactly: 'The' is not 'the'"),
        Case(args=([],), expected=0.0, label="an empty list"),
        Case(args=(long_text,), expected=37 / 1000, label="1,000 tokens of 37 distinct words"),
        Case(args=(("x", "y", "x"),), expected=2 / 3, label="a tuple instead of a list"),
    ]


register(Exercise(
    id="ch00.type_token_ratio",
    title="Type/token ratio",
    prompt="""
        A *token* is one occurrence of a word in a text; a *type* is a distinct word. The
        type/token ratio (TTR) is the number of types divided by the number of tokens: 1.0 when no
        word repeats, close to 0 for a long, repetitive text.

        Write `type_token_ratio(tokens)` that takes a list (or any sequence) of tokens and returns
        the TTR as a float. Compare tokens exactly ('The' and 'the' are two types) and return 0.0
        for an empty list.
    """,
    cases=_cases,
    stub=type_token_ratio,
    hint="len(set(tokens)) counts the types and len(tokens) the tokens; guard against dividing by zero.",
))
