"""Chapter 6b's exercises (CoVe, ELMo, TagLM); ids ``ch06.b_<name>`` so that they count for
chapter 6 next to 06a's. Reference solutions: the ``# --- 06b ---`` block of solutions/ch06.py."""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: scalar mix


def b_scalar_mix(layers: torch.Tensor, s: torch.Tensor, gamma: float) -> torch.Tensor:
    """ELMo's task-specific combination of the biLM's layers.

    layers: [L, T, D] (layer j's vectors of T tokens); s: [L] unnormalised layer scores;
    gamma: a scale. Return the [T, D] tensor gamma * sum_j softmax(s)_j layers[j]."""
    # Your code here.
    raise NotImplementedError("write b_scalar_mix")


def _mix_cases() -> list[Case]:
    from ..contextual.elmo import ScalarMix

    out = []
    for L, T, D, gamma, label in ((3, 4, 5, 1.0, "ELMo's three layers"), (2, 1, 3, 0.5, "two layers, one token"),
                                  (3, 2, 2, 2.5, "large scores: softmax must be stable")):
        g = torch.Generator().manual_seed(L * 10 + T)
        layers = torch.randn(L, T, D, generator=g, dtype=torch.float64)
        s = torch.randn(L, generator=g, dtype=torch.float64) * (40.0 if gamma == 2.5 else 1.0)
        mix = ScalarMix(L).double()
        with torch.no_grad():
            mix.s.copy_(s)
            mix.gamma.fill_(gamma)
            expected = mix(layers)  # the package's ScalarMix
        out.append(Case(args=(layers, s, gamma), expected=expected, label=label))
    return out


register(Exercise(
    id="ch06.b_scalar_mix",
    title="ELMo's scalar mix",
    kind="implement",
    prompt="""
        ELMo gives a task one vector per token: a weighted sum of the biLM's layers,
        ELMo_k = gamma * sum_j softmax(s)_j h_{k,j}, where the task learns the L scores s and
        the scale gamma. Write `b_scalar_mix(layers, s, gamma)` for layers of shape [L, T, D].
        (The check compares with the package's ScalarMix; one case has scores around +-40.)
    """,
    cases=_mix_cases,
    stub=b_scalar_mix,
    outputs=("ELMo vectors",),
    rtol=1e-9,
    atol=1e-9,
    hint=(
        "torch.softmax(s, dim=0) gives the L weights; reshape them to [L, 1, 1] to broadcast.",
        "gamma * (w[:, None, None] * layers).sum(0)",
    ),
))

# --------------------------------------------------------------------------- debug: BLEU's precision


def b_ngram_precision(hypothesis: list[str], reference: list[str], n: int) -> float:
    """BLEU's modified n-gram precision of one hypothesis against one reference: the share of
    the hypothesis' n-grams that occur in the reference (0.0 if it has no n-grams)."""
    hyp = Counter(tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1))
    ref = Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
    total = sum(hyp.values())
    if total == 0:
        return 0.0
    return sum(c for g, c in hyp.items() if g in ref) / total


def _precision_cases() -> list[Case]:
    from ..contextual.cove import corpus_bleu

    def reference_value(h, r, n):  # our corpus BLEU's n-gram precision, unsmoothed
        b = corpus_bleu([h], [r], max_n=n, smooth="none")
        return b.correct[n - 1] / b.total[n - 1] if b.total[n - 1] else 0.0

    cases = [
        (["the", "the", "the", "the", "the", "the", "the"], ["the", "cat", "is", "on", "the", "mat"], 1,
         "Papineni et al.'s example: 'the' seven times"),
        (["the", "cat", "sat", "on", "the", "mat"], ["the", "cat", "is", "on", "the", "mat"], 1, "an ordinary sentence"),
        (["the", "cat", "the", "cat"], ["the", "cat", "is", "on", "the", "mat"], 2, "a repeated bigram"),
        (["ein", "hund", "läuft"], ["ein", "hund", "rennt"], 2, "German bigrams"),
        (["a"], ["a", "b"], 2, "no bigram in the hypothesis"),
    ]
    return [Case(args=(h, r, n), expected=reference_value(h, r, n), label=lab) for h, r, n, lab in cases]


register(Exercise(
    id="ch06.b_ngram_precision",
    title="A BLEU precision that a parrot can game",
    kind="debug",
    prompt="""
        `b_ngram_precision(hypothesis, reference, n)` should compute BLEU's *modified* n-gram
        precision, the building block of the BLEU score we report for CoVe's translations. It
        gives ordinary sentences sensible values, yet a hypothesis that repeats one common word
        gets a perfect score. Find the bug and fix it.
    """,
    cases=_precision_cases,
    stub=b_ngram_precision,
    outputs=("modified precision",),
    hint=(
        "Try the hypothesis 'the the the the the the the' against 'the cat is on the mat'.",
        "An n-gram may be credited at most as many times as it occurs in the reference: min(count, ref count).",
    ),
))

# --------------------------------------------------------------------------- derive: LSTMP params


def b_lstmp_params(d: int, cells: int) -> int:
    """The number of parameters of one LSTM layer with a projection, as ELMo's biLM uses
    (torch.nn.LSTM(d, cells, proj_size=d)): input width d, `cells` memory cells, output d."""
    # Your code here: count the four gates' weights and biases, then the projection.
    raise NotImplementedError("write b_lstmp_params")


def _lstmp_cases() -> list[Case]:
    out = []
    for d, cells in ((4, 8), (64, 192), (128, 512), (512, 4096)):
        n = sum(p.numel() for p in torch.nn.LSTM(d, cells, proj_size=d).parameters())  # counted
        out.append(Case(args=(d, cells), expected=n, label=f"d={d}, cells={cells}"))
    return out


register(Exercise(
    id="ch06.b_lstmp_params",
    title="How big is one of ELMo's LSTM layers?",
    kind="derive",
    prompt="""
        An LSTM with a projection keeps `cells` memory cells but feeds back, and outputs, only a
        projected state r_t = W_p h_t of width d. Each of the four gates reads the input x_t
        (width d) and the previous r_{t-1} (width d), and PyTorch gives every gate two bias
        vectors. Derive the parameter count as a formula in d and cells and write
        `b_lstmp_params(d, cells)`. (The check counts torch.nn.LSTM(d, cells, proj_size=d),
        including ELMo's own size d = 512, cells = 4096.) What fraction of ELMo's layer does
        the projection save compared with an LSTM whose state has all 4096 cells?
    """,
    cases=_lstmp_cases,
    stub=b_lstmp_params,
    outputs=("parameters",),
    rtol=0.0,
    atol=0.0,
    hint=(
        "Four gates, each with a [cells, d] input matrix, a [cells, d] recurrent matrix and two [cells] biases.",
        "4 cells (d + d) + 8 cells for the gates, plus the projection's d x cells matrix (no bias).",
    ),
))

# --------------------------------------------------------------------------- concept: layer 0


register(Exercise(
    id="ch06.b_layer0",
    title="Why [x; x]?",
    kind="concept",
    prompt="""
        ELMo's biLM has three layers per token: the character CNN's output x_k (width d) and
        two LSTM layers, each the concatenation of a forward and a backward state (width 2d).
        The package writes layer 0 as [x_k; x_k]. Why duplicate x_k?
    """,
    choices={
        "a": "To give x_k twice the weight of the LSTM layers in the scalar mix.",
        "b": "Because the forward and backward LMs use different character CNNs.",
        "c": "So all three layers have width 2d, as the scalar mix adds them.",
        "d": "To make layer 0 context-dependent, like the two LSTM layers above it, before they "
             "are mixed.",
    },
    answer="c",
    hint=("What does a weighted sum of three vectors need from their shapes?",),
    explanation="""
        (c). The scalar mix adds the layers, so they need one width. The token layer is shared
        by the two directions (one char-CNN), so ELMo repeats it; its weight is still the one
        softmax(s)_0, not doubled, and it stays context-independent.
    """,
))

# --------------------------------------------------------------------------- predict: pseudo-words


register(Exercise(
    id="ch06.b_pseudo_layer0",
    title="Can layer 0 tell the pseudo-words apart?",
    kind="predict",
    prompt="""
        In the pseudo-word probe, every occurrence of "money" and of "water" (and of five other
        pairs) was replaced by the same made-up token "money/water"; a linear probe on the
        token's vector must say which word stood there. The classes are balanced. Before you
        look at the table: what cross-validated accuracy (in percent, averaged over the pairs)
        does the probe reach on layer 0, the character CNN's vector?
    """,
    rtol=0.0,
    atol=6.0,
    unit=".1f",
    hint=("What does layer 0 know about a token besides its characters?",),
    explanation="""
        Chance, 50 %: layer 0 is computed from the token's characters alone, and every
        occurrence of "money/water" is spelled the same, so all its vectors are identical and
        no probe can separate them. Anything the upper layers get above 50 % comes from the
        context, which is the point of the probe.
    """,
))

# --------------------------------------------------------------------------- extend: self-similarity


def b_self_similarity(vectors: np.ndarray) -> float:
    """The mean cosine similarity between the vectors of different occurrences of one word,
    given as the rows of `vectors` [n, d] (n >= 2)."""
    # Your code here.
    raise NotImplementedError("write b_self_similarity")


def _selfsim_checker(kind: str):
    def check(value):
        if not isinstance(value, (float, int, np.floating)):
            return False, f"return a number, got {type(value).__name__}"
        if kind == "same" and abs(value - 1.0) > 1e-6:
            return False, "identical vectors should have self-similarity 1"
        if kind == "opposite" and abs(value + 1.0) > 1e-6:
            return False, "a vector and its negative should have self-similarity -1"
        if kind == "orthogonal" and abs(value) > 1e-6:
            return False, "orthogonal vectors should have self-similarity 0"
        if kind == "scale" and abs(value - 1.0) > 1e-6:
            return False, "the cosine ignores length: v and 3v have similarity 1"
        return True

    return check


register(Exercise(
    id="ch06.b_self_similarity",
    title="How contextual is each layer?",
    kind="extend",
    prompt="""
        Ethayarajh (2019) measured how much a contextual model's vector for a word changes
        with its context: the *self-similarity* of a word at a layer is the mean cosine between
        its vectors in different sentences (1: the layer ignores context).

        1. Write `b_self_similarity(vectors)` (mean over the pairs i < j of the rows; check()
           runs loose sanity checks).
        2. Use the chapter's `ElmoLayers(bilm).tokens` to collect 20 occurrences each of
           "bank", "play" and "bear", and compute their self-similarity at layers 0, 1 and 2.
        3. Layer 0 gives 1 by construction. Is layer 2 less self-similar than layer 1? Compare
           with the mean cosine between random pairs of different words at the same layer: why
           is that baseline needed before reading the numbers?
    """,
    cases=lambda: [
        Case(args=(np.ones((3, 4)),), checker=_selfsim_checker("same"), label="identical vectors"),
        Case(args=(np.array([[1.0, 2.0], [-1.0, -2.0]]),), checker=_selfsim_checker("opposite"),
             label="opposite vectors"),
        Case(args=(np.eye(3),), checker=_selfsim_checker("orthogonal"), label="orthogonal vectors"),
        Case(args=(np.array([[1.0, 2.0, 0.5], [3.0, 6.0, 1.5]]),), checker=_selfsim_checker("scale"),
             label="one vector at two lengths"),
    ],
    stub=b_self_similarity,
    hint=("Normalise the rows, take the Gram matrix, and average its entries above the diagonal.",),
))

# --------------------------------------------------------------------------- extend: smoothed BLEU


def b_sentence_bleu(hypothesis: list[str], reference: list[str]) -> float:
    """BLEU (0-100) of one sentence against one reference, with add-one smoothing of the 2-,
    3- and 4-gram precisions (Lin & Och 2004)."""
    # Your code here: clipped precisions, add one to the n > 1 counts, geometric mean, brevity
    # penalty.
    raise NotImplementedError("write b_sentence_bleu")


def _bleu_checker(kind: str, ref_score: float | None = None):
    def check(value):
        if not isinstance(value, (float, int, np.floating)) or not np.isfinite(value):
            return False, f"return a finite number, got {value!r}"
        if not 0 <= value <= 100:
            return False, f"BLEU lies in [0, 100], got {value:.3f}"
        if kind == "perfect" and abs(value - 100) > 1e-6:
            return False, "a hypothesis equal to its reference scores 100"
        if kind == "no4gram" and value <= 0:
            return False, ("no 4-gram matches, yet smoothing should keep the score above 0: "
                           "add one to the matches *and* the total for n > 1")
        if kind == "nomatch" and value > 1e-9:
            return False, "no word of the hypothesis is in the reference: the unigram precision is 0, so is BLEU"
        if kind == "short" and value > 100 * np.exp(1 - 6 / 3) + 1e-6:
            return False, "a 3-word hypothesis of a 6-word reference needs the brevity penalty exp(1 - 6/3)"
        if ref_score is not None and abs(value - ref_score) > 1e-6:
            return False, f"expected {ref_score:.4f} (add-one smoothing for n = 2..4 only)"
        return True

    return check


def _bleu_cases() -> list[Case]:
    cat = ["the", "cat", "sat", "on", "the", "mat"]
    # "the cat sat" vs the reference: p1 = 3/3, p2 = 2/2 -> 3/3, p3 = 1/1 -> 2/2, p4: 0/0 -> 1/1;
    # brevity penalty exp(1 - 6/3): BLEU = 100 * exp(-1)
    return [
        Case(args=(cat, cat), checker=_bleu_checker("perfect"), label="identical sentences"),
        Case(args=(["the", "cat", "ran", "on", "a", "mat"], cat), checker=_bleu_checker("no4gram"),
             label="no 4-gram in common"),
        Case(args=(["dogs", "bark"], cat), checker=_bleu_checker("nomatch"), label="nothing in common"),
        Case(args=(["the", "cat", "sat"], cat), checker=_bleu_checker("short", 100 * np.exp(-1.0)),
             label="a short exact prefix"),
    ]


register(Exercise(
    id="ch06.b_sentence_bleu",
    title="BLEU for one sentence",
    kind="extend",
    prompt="""
        Corpus BLEU adds up n-gram matches over all sentences before it divides. Scored one
        sentence at a time, a short caption often has no 4-gram in common with its reference,
        the geometric mean is 0, and so is BLEU, however good the other precisions. Lin & Och
        (2004) add one to the matches and to the total of every n > 1 (not to the unigrams).

        1. Write `b_sentence_bleu(hypothesis, reference)` (token lists, one reference; a score
           in 0-100, with the brevity penalty); check() runs loose checks on four cases.
        2. Score the chapter's CoVe translations (`hyps`, `mt.test`) one by one: which captions
           does the MT-LSTM translate best? Does the mean of the sentence scores agree with the
           corpus score printed in section 3.1?
        3. sacrebleu's `sentence_bleu(..., smooth_method="add-k", tokenize="none")` should agree
           with yours.
    """,
    cases=_bleu_cases,
    stub=b_sentence_bleu,
    hint=(
        "Reuse the clipped precision of exercise 2 as counts (matches, total), one pair per n.",
        ("p_1 = m_1 / t_1; p_n = (m_n + 1) / (t_n + 1) for n = 2..4; BLEU = 100 * BP * exp(mean log p_n), "
         "BP = min(1, exp(1 - len(ref) / len(hyp))); a zero p_1 gives 0."),
    ),
))
