"""Word analogies: "a is to b as c is to ?" (Mikolov et al. 2013; Levy & Goldberg 2014).

With unit vectors â, b̂, ĉ and candidate d̂ (cosines cos(d, x) = d̂·x̂):

* **3CosAdd**  argmax_d  cos(d, b) − cos(d, a) + cos(d, c)          (the "vector offset" b − a + c)
* **3CosMul**  argmax_d  cos'(d, b) · cos'(d, c) / (cos'(d, a) + ε),  cos' = (1 + cos) / 2 ∈ [0, 1]

The candidates are the ``restrict_vocab`` most frequent words (rows ``[0, restrict_vocab)``; the
index is assumed frequency-ordered, as gensim's ``evaluate_word_analogies`` assumes) minus the
three input words. A question counts only if all four of its words are among those candidates
(``coverage`` says how many did). Scoring is batched: one matrix product per block of questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from ._vectors import IndexLike, VectorsLike, as_matrix, build_lookup, check_pairs_like, unit_rows

METHODS = ("3cosadd", "3cosmul")


def is_syntactic(section: str) -> bool:
    """Google's analogy set names its 9 syntactic sections ``gram1-...``..``gram9-...``; the other
    5 (capitals, currency, city-in-state, family) are semantic."""
    return section.strip().lower().startswith("gram")


@dataclass
class AnalogyResult:
    """Outcome of :func:`analogy`.

    Attributes:
        accuracy: correct / answered (with ``oov_as_wrong``: correct / all questions).
        coverage: share of questions whose four words are all allowed.
        per_section: section -> accuracy (NaN where no question of the section was answered).
        section_counts: section -> (correct, answered, total).
        semantic, syntactic: accuracy over the semantic / the syntactic sections (NaN if none).
        n_questions, n_answered, n_correct: counts.
        method: ``3cosadd`` or ``3cosmul``.
        predictions: the predicted word for each question (``None`` where it was skipped).
    """

    accuracy: float
    coverage: float
    per_section: dict[str, float]
    section_counts: dict[str, tuple[int, int, int]] = field(repr=False)
    semantic: float
    syntactic: float
    n_questions: int
    n_answered: int
    n_correct: int
    method: str
    predictions: list[str | None] = field(repr=False)


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")


def analogy_scores(
    unit: torch.Tensor, qa: torch.Tensor, qb: torch.Tensor, qc: torch.Tensor, method: str, epsilon: float
) -> torch.Tensor:
    """Scores [len(qa), V] of every candidate row for questions given as row indices into ``unit``
    (unit-length rows). No word is excluded here; :func:`analogy` masks the inputs."""
    if method == "3cosadd":
        return (unit[qb] - unit[qa] + unit[qc]) @ unit.T
    # one matrix product for the three cosines, then shift them to [0, 1] in place
    cos = (unit[torch.cat([qa, qb, qc])] @ unit.T).add_(1).mul_(0.5)
    cos_a, cos_b, cos_c = cos.chunk(3)
    return cos_b.mul_(cos_c).div_(cos_a.add_(epsilon))


def analogy(
    vectors: VectorsLike,
    index: IndexLike,
    questions: Sequence[tuple[str, str, str, str, str]],
    method: str = "3cosadd",
    restrict_vocab: int | None = 30000,
    *,
    case_insensitive: bool = True,
    oov_as_wrong: bool = False,
    epsilon: float = 1e-3,
    batch_size: int = 256,
    device: str | torch.device | None = None,
) -> AnalogyResult:
    """Accuracy on analogy questions ``(section, a, b, c, d)`` meaning a : b :: c : d.

    Args:
        vectors: [V, d] tensor or array; index: a ``Vocab`` or dict word -> row.
        questions: e.g. ``load_google_analogies()``.
        method: ``"3cosadd"`` or ``"3cosmul"``.
        restrict_vocab: allowed words = the first rows (``None``: all). 30,000 is the usual
            choice for the Google set (Mikolov et al. 2013).
        case_insensitive: fold case (first case variant in the index wins), as gensim does.
        oov_as_wrong: count questions with a missing word as wrong instead of skipping them.
        epsilon: 3CosMul's guard against division by zero (Levy & Goldberg use 0.001; gensim
            uses 1e-6).
        batch_size: questions scored per matrix product (memory: 3 x batch_size x V floats).
        device: where to compute (default: where ``vectors`` already is).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}")
    check_pairs_like(questions, 5, "questions")
    mat = as_matrix(vectors, device)
    lookup = build_lookup(index, mat.shape[0], restrict_vocab=restrict_vocab,
                          case_insensitive=case_insensitive, device=mat.device)
    unit = unit_rows(mat[: lookup.n_allowed])
    canon = lookup.canon

    sections: dict[str, list[int]] = {}
    asked: list[int] = []  # positions of answerable questions
    rows: list[tuple[int, int, int, int]] = []
    for i, (section, *words) in enumerate(questions):
        sections.setdefault(str(section), [0, 0, 0])[2] += 1
        r = [lookup.get(str(w)) for w in words]
        if None in r:
            continue
        asked.append(i)
        rows.append(tuple(r))  # type: ignore[arg-type]

    predictions: list[str | None] = [None] * len(questions)
    correct = [False] * len(questions)
    for start in range(0, len(rows), batch_size):
        block = torch.tensor(rows[start:start + batch_size], dtype=torch.long, device=mat.device)
        qa, qb, qc, qd = block.unbind(1)
        scores = analogy_scores(unit, qa, qb, qc, method, epsilon)
        # the inputs (and their case variants) are never answers; nor are rows without a word
        inputs = torch.cat([lookup.variants[qa], lookup.variants[qb], lookup.variants[qc]], dim=1)
        scores.scatter_(1, inputs, float("-inf"))
        if lookup.no_word.numel():
            scores[:, lookup.no_word] = float("-inf")
        top, best = scores.max(dim=1)
        hit = ((canon[best] == qd) & torch.isfinite(top)).cpu().tolist()
        found = torch.isfinite(top).cpu().tolist()
        for j, (b, h, f) in enumerate(zip(best.cpu().tolist(), hit, found)):
            i = asked[start + j]
            predictions[i] = lookup.words[b] if f else None  # None: no candidate was left
            correct[i] = bool(h)

    for i in asked:
        counts = sections[str(questions[i][0])]
        counts[1] += 1
        counts[0] += correct[i]
    n_correct = sum(c[0] for c in sections.values())
    n_answered = len(asked)
    n_total = len(questions)

    def acc(c: int, answered: int, total: int) -> float:
        return _ratio(c, total if oov_as_wrong else answered)

    sem = [c for s, c in sections.items() if not is_syntactic(s)]
    syn = [c for s, c in sections.items() if is_syntactic(s)]
    return AnalogyResult(
        accuracy=acc(n_correct, n_answered, n_total),
        coverage=n_answered / n_total,
        per_section={s: acc(*c) for s, c in sections.items()},
        section_counts={s: (c[0], c[1], c[2]) for s, c in sections.items()},
        semantic=acc(*(sum(x[k] for x in sem) for k in range(3))) if sem else float("nan"),
        syntactic=acc(*(sum(x[k] for x in syn) for k in range(3))) if syn else float("nan"),
        n_questions=n_total,
        n_answered=n_answered,
        n_correct=n_correct,
        method=method,
        predictions=predictions,
    )
