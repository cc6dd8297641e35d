"""Chapter 8's exercises (08a: the encoder objectives). 08b keeps its own in ``ch08b.py``."""

from __future__ import annotations

import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: XLNet's masks


def permutation_masks(rank: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Given rank[i] = the step at which position i comes in the factorisation order, return
    XLNet's (content, query) boolean masks, [T, T] each, True where query row i may attend to
    key column j."""
    # Your code here.
    raise NotImplementedError("write permutation_masks")


def _perm_cases() -> list[Case]:
    from ..pretraining.xlnet import two_stream_masks

    out = []
    for rank, label in [([0, 1, 2, 3], "the identity order: a left-to-right LM"),
                        ([3, 2, 1, 0], "right to left"), ([0, 3, 1, 4, 2], "the chapter's example"),
                        ([2, 0, 1], "three positions"), ([0], "one position")]:
        r = torch.tensor([rank])
        c, q = two_stream_masks(r, torch.ones_like(r, dtype=torch.bool))
        out.append(Case(args=(list(rank),), expected=(c[0], q[0]), label=label))
    return out


register(Exercise(
    id="ch08.permutation_masks",
    title="XLNet's two attention masks",
    kind="implement",
    prompt="""
        XLNet keeps every token in its place and realises a factorisation order z only through
        attention masks. With rank[i] the step at which position i comes in z, the content
        stream of position i may see every position that comes no later than i in the order
        (itself included); the query stream, which must predict token i, may see only the
        positions that come strictly earlier. Write `permutation_masks(rank)` returning both
        [T, T] boolean masks (True = row i may attend to column j). What are the two masks for
        the identity order rank = [0, 1, 2, 3]?
    """,
    cases=_perm_cases,
    stub=permutation_masks,
    outputs=("content mask", "query mask"),
    hint=(
        "Compare rank[j] with rank[i] for every pair (i, j): broadcasting a row vector against a column vector.",
        "content = rank[None, :] <= rank[:, None]; the query mask uses a strict inequality.",
    ),
))

# --------------------------------------------------------------------------- derive: ALBERT's embedding


def albert_embedding_params(V: int, H: int, E: int) -> tuple[int, int]:
    """Return (BERT's, ALBERT's) token-embedding parameter counts for a vocabulary of V ids and
    hidden size H, ALBERT embedding in E dimensions and projecting to H (a weight matrix and a
    bias)."""
    # Your code here.
    raise NotImplementedError("write albert_embedding_params")


def _albert_cases() -> list[Case]:
    from ..pretraining.albert import AlbertEncoder
    from ..pretraining.harness import ModelSize, toy_vocab
    from ..transformer.bert import BertEncoder

    out = []
    for V, H, E in [(64, 32, 8), (100, 48, 16), (30, 16, 16)]:
        cfg = toy_vocab(V).bert_config(ModelSize(H, 1, 2, 2 * H, 8))
        bert = BertEncoder(cfg, seed=None).embeddings.tok.weight.numel()
        al = AlbertEncoder(cfg, E)
        albert = al.embeddings.tok.weight.numel() + sum(p.numel() for p in al.project.parameters())
        out.append(Case(args=(V, H, E), expected=(bert, albert), label=f"V={V}, H={H}, E={E}"))
    out.append(Case(args=(30_000, 4096, 128), expected=(30_000 * 4096, 30_000 * 128 + 128 * 4096 + 4096),
                    label="ALBERT-xxlarge's sizes"))
    return out


register(Exercise(
    id="ch08.albert_embedding_params",
    title="What the factorised embedding saves",
    kind="derive",
    prompt="""
        BERT embeds each of V tokens directly in its hidden size H. ALBERT embeds them in
        E << H dimensions and maps up to H with a linear layer (weights and a bias). Derive
        both parameter counts of the token embedding on paper and write
        `albert_embedding_params(V, H, E)` returning (BERT's, ALBERT's). For ALBERT-xxlarge's
        V = 30,000, H = 4,096, E = 128, by what factor does the table shrink? (The check
        counts the parameters of our BertEncoder and AlbertEncoder.)
    """,
    cases=_albert_cases,
    stub=albert_embedding_params,
    outputs=("BERT's count", "ALBERT's count"),
    hint=(
        "BERT: one V x H table. ALBERT: a V x E table plus an nn.Linear(E, H).",
        "nn.Linear(E, H) holds E * H weights and H biases.",
    ),
))

# --------------------------------------------------------------------------- predict: landed spans


def _landed_span_mean() -> float:
    import numpy as np

    from ..pretraining.mlm import span_mask

    T, B = 45, 400
    starts = torch.ones(B, T, dtype=torch.bool)  # every token a word: lengths in tokens
    _, lengths = span_mask(starts, torch.ones(B, T, dtype=torch.bool), 0.15, np.random.default_rng(0))
    return float(lengths.float().mean())


register(Exercise(
    id="ch08.landed_span_mean",
    title="How long are the spans that fit?",
    kind="predict",
    prompt="""
        SpanBERT draws span lengths from a geometric distribution (p = 0.2) clipped at 10 words:
        their mean is 3.8. Our `span_mask` keeps drawing spans until 15 % of a row is masked,
        and redraws a span that would overshoot that budget by more than one token or overlap
        an earlier span. In rows of 45 one-token words (a budget of 6.75 tokens), what is the
        mean length of the spans that land? Predict, then run the check.
    """,
    rtol=0.0,
    atol=0.35,
    unit=".2f",
    measure=_landed_span_mean,
    hint=("A span longer than 7.75 tokens can never be placed; a long one drawn late does not fit the budget left.",),
    explanation="""
        The spans that land are much shorter than the ones drawn: everything above 7 tokens is
        redrawn, and once a few tokens are masked only short spans fit what is left of the
        budget. In SpanBERT's 512-token sequences the budget is 77 tokens, and the drawn
        distribution survives almost unchanged; in our short rows it does not -- one reason a
        small-scale "span vs token" comparison says less than the paper's.
    """,
))

# --------------------------------------------------------------------------- concept: the query stream


register(Exercise(
    id="ch08.query_stream",
    title="Why two streams?",
    kind="concept",
    prompt="""
        XLNet predicts token x_i from the tokens earlier in the factorisation order. Why can it
        not simply use one stream of hidden states, as a left-to-right LM does, with the mask
        "position i sees positions earlier in the order"?
    """,
    choices={
        "a": "Because the query stream implements the [MASK] token that BERT uses.",
        "b": "Because one stream would be too slow: the permutation must be undone before the "
             "softmax.",
        "c": "Because the vector predicting x_i must know position i but not x_i, while the one "
             "other positions read as context must contain x_i.",
        "d": "Because a permuted sequence needs two sets of positional embeddings, one for the "
             "original order and one for the factorisation order, and each stream carries one of "
             "them.",
    },
    answer="c",
    hint=(("In a left-to-right LM, position i predicts token i + 1, whose position is implied. What does a "
           "permutation change about which position comes next?"),),
    explanation="""
        (c). Under a permutation the next position to predict is not implied by the last one, so
        the predictor must be told *which* position it predicts (g_i gets position i), yet must not
        see x_i itself. Later steps, however, need h_i *with* x_i as context. The query stream g
        (position, no content) and the content stream h (content) are the two roles; they share
        all weights.
    """,
))

# --------------------------------------------------------------------------- debug: RTD labels


def rtd_labels(original: torch.Tensor, corrupted: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """ELECTRA's replaced-token-detection targets: 1.0 where the discriminator's input token is
    a replacement, 0.0 where it is the original token."""
    return chosen.float()


def _rtd_cases() -> list[Case]:
    o = torch.tensor([[5, 6, 7, 8, 9]])
    c = torch.tensor([[5, 6, 11, 8, 12]])
    lucky = torch.tensor([[5, 6, 7, 8, 12]])  # the generator resampled position 2's own token
    chosen = torch.tensor([[False, False, True, False, True]])
    return [
        Case(args=(o, c, chosen), expected=torch.tensor([[0.0, 0, 1, 0, 1]]), label="two replacements"),
        Case(args=(o, lucky, chosen), expected=torch.tensor([[0.0, 0, 0, 0, 1]]),
             label="a masked position where the generator sampled the original token"),
        Case(args=(o, o, torch.zeros_like(chosen)), expected=torch.zeros(1, 5), label="nothing masked"),
    ]


register(Exercise(
    id="ch08.rtd_labels",
    title="Which tokens were replaced?",
    kind="debug",
    prompt="""
        `rtd_labels(original, corrupted, chosen)` should give ELECTRA's discriminator its
        targets. It looks right -- the masked positions are where the generator put its samples
        -- and most of the time it is. Find the case it gets wrong and fix it. (Clark et al.
        2020 discuss exactly this case.)
    """,
    cases=_rtd_cases,
    stub=rtd_labels,
    outputs=("RTD labels",),
    hint=(
        "A generator that has learned something often samples the right token. What is the discriminator's input then?",
        "Compare the tokens, not the positions: (corrupted != original).",
    ),
))

# --------------------------------------------------------------------------- extend: generator size


def generator_size_study(fractions=(0.125, 0.25, 0.5, 1.0), seeds=(0, 1)):
    """Pre-train ELECTRA at several generator widths (same FLOP budget) and return a table of
    the discriminator's GLUE-lite average per width."""
    # Your code here.
    raise NotImplementedError("write generator_size_study")


register(Exercise(
    id="ch08.generator_size_study",
    title="How big should ELECTRA's generator be?",
    kind="extend",
    prompt="""
        Clark et al. found the best generator 1/4 to 1/2 as wide as the discriminator: a
        generator as strong as the discriminator makes the task too hard (its replacements are
        too plausible), and costs compute. Using `ElectraObjective(vocab, gen_fraction=f)` and
        the chapter's `chapter8a.run_objective`, pre-train ELECTRA at several widths with the
        same FLOP budget (a wider generator buys fewer steps) and compare the discriminators'
        GLUE-lite averages and the share of replaced tokens the generator produces
        (`ElectraObjective.losses(...)["replaced"]`). Does the curve have the paper's shape at
        our scale? Is the difference outside the seeds' spread?
    """,
    stub=generator_size_study,
    hint=("Keep the budget fixed with chapter8a.flops_budget(corpus, S) and vary only gen_fraction.",),
))

# --------------------------------------------------------------------------- extend: ELECTRA 15 %


def electra_15_loss(d_logits: torch.Tensor, rtd_labels: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """ELECTRA 15 %: the discriminator's binary cross-entropy over the masked (``chosen``)
    positions only, as a scalar tensor. ``d_logits`` and ``rtd_labels`` are ``[B, T]``."""
    # Your code here.
    raise NotImplementedError("write electra_15_loss")


def _e15_checker(d_logits: torch.Tensor, labels: torch.Tensor, chosen: torch.Tensor):
    import torch.nn.functional as F

    want = float(F.binary_cross_entropy_with_logits(d_logits[chosen], labels[chosen]))

    def check(got) -> tuple[bool, str]:
        if not isinstance(got, torch.Tensor) or got.dim() != 0:
            return False, "return a scalar tensor (the mean loss), not " + type(got).__name__
        if abs(float(got) - want) > 1e-5:
            return False, (f"got {float(got):.4f}, but the mean BCE over the masked positions is {want:.4f}; "
                           + "the other positions must not count at all")
        return True, ""

    return check


def _e15_cases() -> list[Case]:
    g = torch.Generator().manual_seed(0)
    d = torch.randn(2, 6, generator=g)
    chosen = torch.tensor([[False, True, False, False, True, False], [True, False, False, True, False, False]])
    labels = torch.tensor([[0.0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]])
    d2 = d.clone()
    d2[~chosen] = 10.0  # confident "replaced" at positions that must not count
    return [Case(args=(d, labels, chosen), checker=_e15_checker(d, labels, chosen), label="two rows, four masked"),
            Case(args=(d2, labels, chosen), checker=_e15_checker(d2, labels, chosen),
                 label="the same, with large logits at the unmasked positions")]


register(Exercise(
    id="ch08.electra_15_loss",
    title="ELECTRA 15 %: learn from the masked positions only",
    kind="extend",
    prompt="""
        ELECTRA's explanation of its own success is that the discriminator learns from every
        token, not from the 15 % a masked LM predicts. Clark et al. test it with "ELECTRA 15 %":
        the same generator and discriminator, but the discriminator's loss counts only the
        masked positions (their Table 5: 82.4 against 85.0 GLUE for all tokens, at base size).
        Write electra_15_loss(d_logits, rtd_labels, chosen); then subclass
        companion.pretraining.electra.ElectraObjective, override losses() so that "rtd" uses
        your loss (chosen = batch["labels"] != -100), and compare the two discriminators'
        GLUE-lite averages with chapter8a.run_objective at the chapter's budget and seeds. Is
        the gap outside the seeds' spread at our scale?
    """,
    cases=_e15_cases,
    stub=electra_15_loss,
    hint=("Index the logits and labels with the boolean mask before the loss: d_logits[chosen].",
          "F.binary_cross_entropy_with_logits(d_logits[chosen], rtd_labels[chosen])."),
))
