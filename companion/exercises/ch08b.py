"""Chapter 8b's exercises (encoder--decoder objectives): ids ``ch08.b_<name>``; reference
solutions at the end of ``solutions/ch08.py``, under ``# --- 08b ---``."""

from __future__ import annotations

import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: UniLM's seq2seq mask


def b_seq2seq_mask(T: int, src_len: int) -> torch.Tensor:
    """UniLM's sequence-to-sequence mask: ``[T, T]`` bool, True where query i may attend to key j.
    The first ``src_len`` positions are the source, the rest the target."""
    # Your code here.
    raise NotImplementedError("write b_seq2seq_mask")


def _mask_cases() -> list[Case]:
    from ..transformer.attention import prefix_lm_mask

    return [Case(args=(T, s), expected=prefix_lm_mask(T, s), label=f"T={T}, source of {s}")
            for T, s in ((4, 2), (6, 1), (6, 6), (9, 4))]


register(Exercise(
    id="ch08.b_seq2seq_mask",
    title="UniLM's sequence-to-sequence mask",
    kind="implement",
    prompt="""
        Write b_seq2seq_mask(T, src_len) returning a [T, T] boolean tensor, True where query i
        may attend to key j, for UniLM's sequence-to-sequence mode: the first src_len positions
        (the source) see the whole source and nothing of the target; a target position sees the
        whole source and the target positions up to and including itself.
    """,
    cases=_mask_cases,
    stub=b_seq2seq_mask,
    outputs=("mask",),
    hint=("Start from the causal (lower-triangular) mask; which extra entries does the source add?",
          "causal OR (key j is in the source): torch.ones(T, T).tril().bool() | (torch.arange(T) < src_len)"),
))

# --------------------------------------------------------------------------- derive: infilled length


def b_infilled_length(n: int, ratio: float, lam: float) -> float:
    """Expected length of a row of ``n`` tokens after BART's text infilling (``ratio`` of the
    tokens masked in Poisson(``lam``) spans, one ``[MASK]`` per span)."""
    # Your code here: derive it first (how many spans does it take to cover ratio * n tokens?).
    raise NotImplementedError("write b_infilled_length")


def _infill_cases() -> list[Case]:
    from ..pretraining.bart import text_infilling

    out = []
    for n, ratio, lam in ((200, 0.3, 3.0), (200, 0.3, 1.5), (300, 0.5, 3.0), (400, 0.15, 5.0)):
        g = torch.Generator().manual_seed(n)
        lengths = [len(text_infilling(list(range(n)), -1, g, ratio, lam)[0]) for _ in range(300)]
        out.append(Case(args=(n, ratio, lam), expected=sum(lengths) / len(lengths),  # measured, not a formula
                        label=f"n={n}, ratio={ratio}, lambda={lam}"))
    return out


register(Exercise(
    id="ch08.b_infilled_length",
    title="How long is an infilled row?",
    kind="derive",
    prompt="""
        BART's text infilling masks round(ratio * n) of a row's n tokens, in spans whose lengths
        are drawn from Poisson(lam) (a length-0 span is allowed: it inserts a [MASK]), and
        replaces each span by ONE [MASK]. Derive the expected length of the encoder's input, then
        write b_infilled_length(n, ratio, lam). The check compares with the mean length over 300
        measured corruptions (3 % tolerance).
    """,
    cases=_infill_cases,
    stub=b_infilled_length,
    outputs=("expected length",),
    rtol=0.03,
    hint=("The spans' mean length is lam, so about ratio * n / lam spans cover the masked tokens.",
          "Kept tokens plus one [MASK] per span: n - ratio n + ratio n / lam."),
))

# --------------------------------------------------------------------------- debug: unrotate


def b_unrotate(rotated: list[int], k: int) -> list[int]:
    """Undo BART's document rotation: ``rotated`` is ``ids[k:] + ids[:k]``; return ``ids``."""
    return rotated[k:] + rotated[:k]


def _unrotate_cases() -> list[Case]:
    out = []
    for ids, k in (([1, 2, 3, 4, 5], 2), ([1, 2, 3, 4, 5, 6], 1), ([7, 8, 9], 0), (list(range(10)), 7)):
        out.append(Case(args=(ids[k:] + ids[:k], k), expected=ids, label=f"{len(ids)} tokens rotated by {k}"))
    return out


register(Exercise(
    id="ch08.b_unrotate",
    title="Undo a rotation",
    kind="debug",
    prompt="""
        b_unrotate(rotated, k) should invert document rotation: rotated = ids[k:] + ids[:k], and
        the function must return ids. It passes a test where len(ids) == 2 * k but fails others.
        Find and fix the bug.
    """,
    cases=_unrotate_cases,
    stub=b_unrotate,
    outputs=("ids",),
    hint=("Where does the original first token sit in `rotated`?",
          "ids[0] is at index len(ids) - k of rotated."),
))

# --------------------------------------------------------------------------- concept: T5's target length

register(Exercise(
    id="ch08.b_t5_target_len",
    title="How long is a T5 target?",
    kind="concept",
    prompt="""
        T5 corrupts a row of 500 tokens with its defaults: 15 % of the tokens are noise, in spans
        of mean length 3 (the number of spans is round(noise / 3)). The target lists, for each
        span, its sentinel followed by the span's tokens, and ends with one end-of-sequence
        token. How many tokens long is the target? (A number.)
    """,
    answer=101,
    atol=0,
    unit=".0f",
    hint=("Count noise tokens, sentinels (one per span) and the final token.",),
    explanation="""
        75 noise tokens + 25 sentinels + 1 end token = 101: the decoder runs over about a fifth of
        the row, where BART's decoder runs over all 500 tokens -- which is why, at equal FLOPs,
        span corruption buys more pre-training steps.
    """,
))

# --------------------------------------------------------------------------- concept: MASS extremes

register(Exercise(
    id="ch08.b_mass_extremes",
    title="MASS between BERT and GPT",
    kind="concept",
    prompt="""
        MASS masks a fragment of k consecutive tokens of an m-token sentence in the encoder, and
        the decoder predicts the fragment, reading only the fragment's previous tokens. What does
        MASS become at the two extremes k = 1 and k = m?
    """,
    choices={
        "a": "k = 1: a masked LM with bidirectional context; k = m: a left-to-right LM (the "
             "encoder sees only masks).",
        "b": "k = 1: next-sentence prediction; k = m: a masked LM.",
        "c": "k = 1: a left-to-right LM, as the decoder predicts a single token; k = m: a masked "
             "LM, as every token is masked.",
        "d": "Both extremes are the same denoising autoencoder as BART: the encoder reads a "
             "corrupted sentence and the decoder writes it out again from left to right, whatever "
             "k is.",
    },
    answer="a",
    hint=("At k = 1 the decoder reads nothing; at k = m the encoder reads nothing.",),
    explanation="""
        (a). With one masked token the decoder has no previous fragment tokens, so the prediction
        rests on the encoder's bidirectional view of the rest: BERT's masked LM. With the whole
        sentence masked the encoder carries no information, and the decoder predicts each token
        from the ones before it: GPT's language model. MASS's paper chose k = m / 2.
    """,
))

# --------------------------------------------------------------------------- predict: steps at equal FLOPs

register(Exercise(
    id="ch08.b_t5_steps",
    title="Steps at equal FLOPs",
    kind="predict",
    prompt="""
        Every objective gets the same FLOPs budget, charged as 6 x (parameters applied per corpus
        token) x tokens. BART runs its encoder and its decoder over the whole row; T5's encoder
        runs over about 90 % of the row and its decoder over about 20 %. Before the run: how many
        times as many pre-training steps does T5's span corruption get as BART? (A ratio, e.g. 1.0.)
    """,
    rtol=0.15,
    unit=".2f",
    explanation="""
        About 1.6-1.7 here: per token BART costs N_enc + N_dec, T5 about 0.9 N_enc + 0.2 N_dec,
        and a decoder block (with cross-attention) is about 4/3 of an encoder block. The budget
        buys the cheaper objective proportionally more steps -- one of T5's reasons for span
        corruption.
    """,
))

# --------------------------------------------------------------------------- extend: drop tokens


def b_drop_corruption(ids: list[int], density: float, seed: int) -> tuple[list[int], list[int]]:
    """T5's "drop corrupted tokens" variant: remove about ``density`` of the tokens (spans of mean
    length 3) from the input entirely -- no sentinel -- and return (input, target) where the
    target is the removed tokens in order."""
    # Your code here (an open task: see the prompt).
    raise NotImplementedError("write b_drop_corruption")


def _drop_checker(ids):
    def check(got):
        try:
            inp, tgt = list(got[0]), list(got[1])
        except (TypeError, IndexError):
            return False, "return (input ids, target ids)"
        if len(inp) + len(tgt) != len(ids):
            return False, f"input and target must hold every token once: {len(inp)} + {len(tgt)} != {len(ids)}"
        if sorted(inp + tgt) != sorted(ids) or not tgt:
            return False, "the target must be the removed tokens (at least one)"
        it = iter(ids)
        if not all(t in it for t in inp):
            return False, "the input must keep the remaining tokens in their order"
        return True, ""
    return check


def _drop_cases() -> list[Case]:
    ids = list(range(100, 160))
    return [Case(args=(ids, 0.15, 0), checker=_drop_checker(ids), label="60 tokens, 15 %")]


register(Exercise(
    id="ch08.b_drop_corruption",
    title="T5's variants: drop the corrupted tokens",
    kind="extend",
    prompt="""
        T5's Table 4 compares ways to corrupt: BERT-style masking, replacing spans with
        sentinels (the chapter's objective), and dropping the corrupted tokens from the input
        altogether. Write b_drop_corruption(ids, density, seed) returning (input, target) for the
        third, then wrap it as a harness Objective (subclass companion.pretraining.t5
        .T5SpanCorruption and override pairs and lengths) and compare its translation loss with
        span corruption's at the chapter's budget. Does removing the sentinels hurt?
    """,
    cases=_drop_cases,
    stub=b_drop_corruption,
    hint=("companion.pretraining.t5.random_segmentation gives span lengths; keep span_corruption's "
          + "layout but leave out the sentinels.",),
))
