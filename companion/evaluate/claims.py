"""The claims ledger: every claim check of the book, one row each, one rule for the verdict.

A claim check states a paper's claim in one sentence, measures the effect the claim is about
with a spread, and records a verdict. :func:`claim_check` does all three: it validates the
measurement, decides the verdict by the rule below, writes a row of the running table ``claims``
(``companion/evaluate/rows/claims.json``; rows measured at ``ci`` are not written, as for every
running table), prints one line (visible in JupyterLab, where glue does not render) and glues
the verdict as ``claim_<key>`` for the prose.

The rule (:func:`decide`), the only place a verdict is decided
---------------------------------------------------------------
The effect is measured so that the claim predicts it on one side of ``null`` (the value of "no
effect": 0 for a difference, 1 for a ratio); ``direction`` is ``+1`` when the claim predicts an
effect above ``null``, ``-1`` below. With the interval ``[low, high]`` (the effect's spread, as
``method`` says: a bootstrap, seeds, a standard error):

1. ``not testable here`` -- the measurement cannot show the phenomenon (``valid=False``, with
   the reason in ``why``): e.g. the models have not left the unigram plateau, or a control that
   the claim needs (a baseline, an untrained encoder) did not behave as a control must.
2. ``holds`` -- the whole interval lies beyond ``null`` on the claimed side;
   ``holds (weak)`` -- the same, but the point effect is smaller than ``WEAK_FRACTION`` (half)
   of the paper's own effect, given as ``paper_effect`` in the same unit (without a
   ``paper_effect`` a claim that holds is never weak).
3. ``reversed`` -- the whole interval lies beyond ``null`` on the *other* side.
4. ``not significant`` -- the interval contains ``null`` (touching it counts as containing it).

A notebook never asserts a verdict against a paper. :func:`claim_check` asserts that the
measurement is valid (a finite effect inside a finite interval, from a stated method) and, with
``expect=``, the positive verdict the chapter's text relies on ("holds" or "holds (weak)").

Example::

    from companion.evaluate.claims import claim_check
    claim_check("sif_vs_average", chapter="05", paper="arora2017simple",
                claim="SIF beats the plain average of word vectors on textual similarity.",
                effect=12.3, interval=(10.1, 14.6), unit="Spearman's rho x 100, STS-B test",
                method="paired bootstrap over test pairs, 1000 resamples", headline=True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from ..scale import SCALES, get_scale
from .tables import Row, RunningTable, _chapter

VERDICTS: tuple[str, ...] = ("holds", "holds (weak)", "not significant", "reversed", "not testable here")
POSITIVE: tuple[str, ...] = ("holds", "holds (weak)")  # the only verdicts `expect=` may assert
WEAK_FRACTION = 0.5
TABLE = "claims"
BIB = Path(__file__).resolve().parents[2] / "book" / "references.bib"
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")
POOLED_METHOD = ("mean over tasks of the paired differences (each +- 2 sd of its runs); half-width "
                 "sqrt(sum of squared half-widths) / n, tasks taken as independent")
COLUMNS = ["chapter", "key", "paper", "claim", "headline", "paper number", "effect", "low", "high",
           "unit", "method", "scale", "verdict", "why"]


@cache
def bib_keys(path: Path = BIB) -> frozenset[str]:
    """The citation keys of ``book/references.bib``."""
    text = Path(path).read_text(encoding="utf-8")
    return frozenset(re.findall(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", text, flags=re.MULTILINE))


def _number(value: Any, what: str) -> float:
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"{what} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{what} is {out}: the measurement is not valid (a claim check needs a "
                         "finite effect and interval)")
    return out


def decide(effect: float | None, low: float | None, high: float | None, *, direction: int = 1,
           null: float = 0.0, paper_effect: float | None = None, valid: bool = True) -> str:
    """The verdict by the book's one rule (see the module's docstring).

    Args:
        effect, low, high: the measured effect and its interval (``None`` only when not valid).
        direction: ``+1`` if the claim predicts an effect above ``null``, ``-1`` below.
        null: the value of "no effect".
        paper_effect: the paper's own effect in the same unit (for ``holds (weak)``).
        valid: whether the measurement can show the phenomenon at all.

    Raises:
        ValueError / TypeError: a direction other than +1/-1, a non-finite number, an interval
            with ``low > high`` or one that does not contain the effect.
    """
    if direction not in (1, -1) or isinstance(direction, bool):
        raise ValueError(f"direction must be +1 (the claim predicts an effect above null) or -1, "
                         f"got {direction!r}")
    null = _number(null, "null")
    if not valid:
        return "not testable here"
    effect, low, high = (_number(v, w) for v, w in ((effect, "effect"), (low, "interval low"),
                                                    (high, "interval high")))
    if low > high:
        raise ValueError(f"interval ({low}, {high}) has low > high")
    if not low <= effect <= high:
        raise ValueError(f"the interval ({low}, {high}) does not contain the effect {effect}: "
                         "the measurement is not valid")
    lo, hi = sorted((direction * (low - null), direction * (high - null)))
    if lo > 0:
        if paper_effect is not None:
            target = direction * (_number(paper_effect, "paper_effect") - null)
            if target > 0 and direction * (effect - null) < WEAK_FRACTION * target:
                return "holds (weak)"
        return "holds"
    if hi < 0:
        return "reversed"
    return "not significant"


def slug(text: str) -> str:
    """A key made of a label: lower case, runs of other characters as one ``_``
    (``"TREC: GloVe+CoVe - GloVe"`` -> ``"trec_glove_cove_glove"``)."""
    out = re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")
    if not out:
        raise ValueError(f"no key can be made of {text!r}")
    return out


def pooled(diffs: Sequence[float], half_widths: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """The mean of several independent differences (one per task) and its interval.

    ``half_widths`` are the differences' own interval half-widths (e.g. two paired sds, or half
    a bootstrap interval); the mean's half-width is ``sqrt(sum(h**2)) / n``, as for independent
    errors. Returns ``(mean, (low, high))``.

    Raises:
        ValueError: empty or unequal inputs, or a non-finite or negative value.
    """
    d = [_number(x, "a difference") for x in diffs]
    h = [_number(x, "a half-width") for x in half_widths]
    if not d or len(d) != len(h) or min(h) < 0:
        raise ValueError(f"pooled needs equal, non-empty lists (half-widths >= 0), got {d}, {h}")
    mean, half = sum(d) / len(d), math.sqrt(sum(x * x for x in h)) / len(d)
    return mean, (mean - half, mean + half)


def _text(value: Any, what: str, *, required: bool = True) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return " ".join(value.split())


def _sig(x: float | None, digits: int = 4) -> float | None:
    """Round to ``digits`` significant digits (the stored rows never carry a CPU's last bits)."""
    if x is None or x == 0:
        return x
    return float(f"{x:.{digits}g}") + 0.0


def _expect(expect: str | Collection[str] | None) -> tuple[str, ...]:
    if expect is None:
        return ()
    wanted = (expect,) if isinstance(expect, str) else tuple(expect)
    bad = [v for v in wanted if v not in POSITIVE]
    if bad or not wanted:
        raise ValueError(f"expect= may only name what a chapter relies on, {POSITIVE}; got "
                         f"{expect!r}. A notebook never asserts that a paper fails: the verdict "
                         "is data in the ledger.")
    return wanted


def claim_check(
    key: str,
    *,
    chapter: str,
    paper: str,
    claim: str,
    effect: float | None,
    interval: tuple[float, float] | None,
    method: str,
    unit: str,
    direction: int = 1,
    null: float = 0.0,
    headline: bool = False,
    paper_number: float | None = None,
    paper_unit: str = "",
    paper_effect: float | None = None,
    valid: bool = True,
    why: str = "",
    expect: str | Collection[str] | None = None,
    scale: str | None = None,
    source: str = "",
    fmt: str = ".3g",
    table: RunningTable | None = None,
    glue_verdict: bool = True,
) -> str:
    """Check one claim: validate the measurement, decide the verdict, store the row, print one
    line, glue ``claim_<key>``; return the verdict.

    Args:
        key: the claim's name within its chapter (lower case, digits, ``_``); with ``chapter``
            it identifies the row (``"05.sif_vs_average"``). Write it as a string literal: the
            book's tests find the calls in the notebooks by it.
        chapter: ``"05"``, ``"07b"``, ...
        paper: the paper's key in ``book/references.bib``.
        claim: the claim in one sentence.
        effect, interval: our effect and its ``(low, high)`` interval, in ``unit``.
        method: how the interval was computed ("paired bootstrap over test pairs, 1000
            resamples", "3 seeds, min to max").
        unit: what the effect measures ("points of accuracy, ours - baseline").
        direction, null, paper_effect, valid: see :func:`decide`.
        headline: whether this is the paper's headline claim.
        paper_number, paper_unit: the paper's own number where it has one, and what it measures.
        why: the reason a measurement is not valid (required when ``valid=False``), or a short
            note on the cause of the verdict.
        expect: a positive verdict (or several) the chapter's text relies on: asserted.
        scale: the scale measured at (default ``BOOK_SCALE``); ``ci`` rows are not written.
        source: the notebook (default ``notebooks/<chapter>*.ipynb`` as given by the caller).
        fmt: the format of the numbers in the printed line.
        table: the running table to write to (default ``RunningTable("claims")``).
        glue_verdict: glue the verdict text as ``claim_<key>`` (outside a notebook: no-op).

    Raises:
        ValueError / TypeError: an unknown bib key, an empty claim or method, a non-finite
            effect or interval, an interval that does not contain the effect, ``valid=False``
            without ``why``, an ``expect`` that is not a positive verdict.
        AssertionError: the verdict is not one the chapter ``expect``\\ s.
    """
    if not isinstance(key, str) or not KEY_RE.match(key):
        raise ValueError(f"key must be lower case letters, digits and '_', got {key!r}")
    if paper not in bib_keys():
        raise ValueError(f"paper {paper!r} is not a key of book/references.bib; add the entry first")
    claim, method, unit = _text(claim, "claim"), _text(method, "method"), _text(unit, "unit")
    why = _text(why, "why", required=False)
    if not isinstance(headline, bool):
        raise TypeError(f"headline must be True or False, got {headline!r}")
    if not valid and not why:
        raise ValueError("a measurement that is not valid needs its reason in why=")
    wanted = _expect(expect)
    scale = get_scale() if scale is None else scale
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if interval is None:
        low = high = None
    elif isinstance(interval, (str, bytes)) or len(interval) != 2:
        raise ValueError(f"interval must be (low, high), got {interval!r}")
    else:
        low, high = interval
    if valid or effect is not None:
        effect, low, high = (_number(v, w) for v, w in ((effect, "effect"), (low, "interval low"),
                                                        (high, "interval high")))
    if paper_number is not None:
        paper_number = _number(paper_number, "paper_number")
        _text(paper_unit, "paper_unit (what the paper's number measures)")
    verdict = decide(effect, low, high, direction=direction, null=null, paper_effect=paper_effect,
                     valid=valid)
    if not valid and effect is not None:
        decide(effect, low, high, direction=direction, null=null)  # still a well-formed interval
    scores = {"effect": _sig(effect), "low": _sig(low), "high": _sig(high),
              "paper number": _sig(paper_number), "paper effect": _sig(paper_effect)}
    meta = {"paper": paper, "claim": claim, "headline": headline, "verdict": verdict,
            "unit": unit, "method": method, "direction": direction, "null": null,
            "paper unit": _text(paper_unit, "paper_unit", required=False), "why": why}
    table = RunningTable(TABLE) if table is None else table
    table.add(f"{_chapter(chapter)}.{key}", chapter=chapter, scores=scores, scale=scale,
              source=source, meta=meta)
    print(_line(f"{_chapter(chapter)}.{key}", verdict, paper, headline, effect, low, high, unit,
                method, scale, fmt))
    if glue_verdict:
        _glue(f"claim_{key}", verdict)
    if wanted and verdict not in wanted:
        raise AssertionError(f"claim {chapter}.{key}: the chapter's text relies on {wanted}, "
                             f"but the measurement gives {verdict!r} ({effect}, [{low}, {high}])")
    return verdict


def _line(name: str, verdict: str, paper: str, headline: bool, effect: float | None,
          low: float | None, high: float | None, unit: str, method: str, scale: str,
          fmt: str) -> str:
    tag = f"{paper}, headline" if headline else paper
    if effect is None:
        return f"Claim {name} [{tag}]: {verdict}"
    return (f"Claim {name} [{tag}]: {verdict}; effect {effect:+{fmt}} [{low:{fmt}}, "
            f"{high:{fmt}}] ({unit}; {method}; {scale})")


def _glue(name: str, verdict: str) -> None:
    try:
        from IPython import get_ipython
        from myst_nb import glue
    except ImportError:  # pragma: no cover - the book's environment has both
        return
    if get_ipython() is not None:
        glue(name, verdict, display=False)


def _record(row: Row) -> dict[str, Any]:
    s, m = row.scores, row.meta
    paper_number = s.get("paper number")
    return {"chapter": row.chapter, "key": row.model.split(".", 1)[1], "paper": m.get("paper"),
            "claim": m.get("claim"), "headline": bool(m.get("headline")),
            "paper number": None if paper_number is None else f"{paper_number:g} {m.get('paper unit', '')}".strip(),
            "effect": s.get("effect"), "low": s.get("low"), "high": s.get("high"),
            "unit": m.get("unit"), "method": m.get("method"), "scale": row.scale,
            "verdict": m.get("verdict"), "why": m.get("why", "")}


def frame(scale: str | None = None, *, table: RunningTable | None = None) -> pd.DataFrame:
    """The ledger as a DataFrame (columns :data:`COLUMNS`), in chapter order."""
    table = RunningTable(TABLE) if table is None else table
    return pd.DataFrame.from_records([_record(r) for r in table.rows(scale)], columns=COLUMNS)


def for_chapter(chapter: str, scale: str | None = None, *,
                table: RunningTable | None = None) -> pd.DataFrame:
    """One chapter's rows, indexed by key: ``"06"`` gives both halves (``"06a"``, ``"06b"``),
    ``"06b"`` only its own."""
    df = frame(scale, table=table)
    chapter = _chapter(chapter)
    mask = df["chapter"] == chapter if len(chapter) > 2 else df["chapter"].str[:2] == chapter
    return df[mask].set_index("key")


def summary(rows: pd.DataFrame) -> dict[str, int]:
    """Verdict -> count, in the vocabulary's order (zeros included)."""
    counts = rows["verdict"].value_counts() if len(rows) else pd.Series(dtype=int)
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def ledger_markdown(scale: str | None = "laptop", *, table: RunningTable | None = None,
                    titles: Mapping[str, str] | None = None) -> str:
    """The ledger page's body (MyST Markdown): a count of verdicts, then one table per chapter.

    Args:
        scale: which scale's rows (default ``laptop``, what the book stores; ``None``: all).
        titles: chapter -> title for the section headings (default: ``Chapter NN``).
    """
    df = frame(scale, table=table)
    if df.empty:
        return "No claim has been checked yet.\n"
    counts = summary(df)
    lines = ["Verdicts: " + ", ".join(f"**{v}** {n}" for v, n in counts.items()) + ".", ""]
    for chapter, rows in df.groupby("chapter", sort=True):
        title = (titles or {}).get(chapter, f"Chapter {chapter}")
        header = "| Claim | Paper | Paper's number | Ours [interval] | How | Verdict |"
        lines += [f"## {title}", "", header, "|---|---|---|---|---|---|"]
        for r in rows.to_dict("records"):
            claim = r["claim"] + (" (headline)" if r["headline"] else "")
            ours = ("—" if pd.isna(r["effect"]) else
                    f"{r['effect']:+.3g} [{r['low']:.3g}, {r['high']:.3g}] {r['unit']}")
            how = f"{r['method']}; {r['scale']}" + (f". {r['why']}" if r["why"] else "")
            cells = [claim, f"{{cite:t}}`{r['paper']}`", r["paper number"] if isinstance(r["paper number"], str) else "—", ours, how,
                     f"**{r['verdict']}**"]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)
