"""Chapter 10d's exercises (fine-tuning recipes); ids ``ch10.d_<name>`` so that they count for
chapter 10 next to 10a's, 10b's and 10c's. The predict and concept ones are answered in the
chapter itself; the derive, debug, implement and extend ones have worked answers in
``solutions/ch10.py`` (after the ``# --- 10d ---`` marker)."""

from __future__ import annotations

import numpy as np

from .core import Case, Exercise, register

# ------------------------------------------------------------ predict: features or fine-tuning

register(Exercise(
    id="ch10.d_pair_gap",
    title="Where does fine-tuning pay most?",
    kind="predict",
    prompt="""
        All-MiniLM-L6-v2 (its bottom three blocks) is used two ways on 64 labelled examples of
        each task: frozen, with a
        learned mix of its layers and a linear layer on top (feature extraction), or with every
        weight trained (fine-tuning). The sentence pairs of STS-B are fed as one input,
        "[CLS] a [SEP] b [SEP]". Before reading the stored runs: by how many points of
        Spearman's rho x 100 will fine-tuning beat feature extraction on STS-B (a negative
        number if feature extraction wins)?
    """,
    atol=10.0,
    unit=".1f",
    explanation="""
        By a wide margin in the book's runs (see the chapter's table). A frozen encoder
        mean-pools one vector for the joint input; nothing in its pre-training taught it to
        compare the two halves of one input, so a linear layer on that vector sees little of
        how similar they are. Fine-tuning lets attention across the [SEP] learn the comparison.
        This is Peters, Ruder & Smith's finding for BERT on sentence pairs.
    """,
))

# ------------------------------------------------------------ concept: chain-thaw's stages

register(Exercise(
    id="ch10.d_chain_thaw_count",
    title="How many stages does chain-thaw have?",
    kind="concept",
    prompt="""
        Chain-thaw trains the new head first, then each layer of the pre-trained encoder alone,
        from the bottom up, then the whole model. All-MiniLM-L6-v2 has an embedding layer and 6
        Transformer blocks. How many stages does chain-thaw take on it? (A whole number.)
    """,
    answer=9,
    atol=0,
    hint=("Count the head's stage and the last stage as well as the encoder's layers.",),
    explanation="""
        1 (the new head) + 1 (embeddings) + 6 (blocks) + 1 (everything) = 9. At the budget of
        one short fine-tuning run, each stage gets only a few optimizer steps, which is one
        reason chain-thaw needs more steps than plain fine-tuning to pay off.
    """,
))

# ------------------------------------------------------------ concept: the wrong prior

register(Exercise(
    id="ch10.d_wrong_prior",
    title="Why is weight decay the wrong prior for fine-tuning?",
    kind="concept",
    prompt="""
        Weight decay adds alpha/2 ||w||^2 to the loss: in Bayesian terms, a Gaussian prior
        centred at zero. Li, Grandvalet & Davoine replace it by alpha/2 ||w - w0||^2, with w0
        the pre-trained weights. Why is a prior centred at zero the wrong one when fine-tuning?
    """,
    choices={
        "a": "Zero-centred decay makes the loss non-convex, which fine-tuning cannot afford.",
        "b": "It pulls towards weights that know nothing, and away from what pre-training found.",
        "c": "It only acts on the head, so the encoder's weights are left unregularised.",
        "d": "It cannot be combined with Adam, so fine-tuning has to fall back to plain SGD.",
    },
    answer="b",
    hint=("Where does fine-tuning start, and where does the penalty want the weights to be?",),
    explanation="""
        (b). Fine-tuning starts at w0, which already encodes what pre-training learnt; the
        zero-centred penalty is smallest at w = 0, so the stronger it is the more it erases that
        knowledge. L2-SP's penalty is zero at the start and grows as the weights leave w0, so a
        strong L2-SP keeps the model near a good solution instead of near a useless one. (The
        loss stays convex in the penalty either way (a); decay acts on every weight (c); AdamW
        decouples it from Adam (d).)
    """,
))

# ------------------------------------------------------------ derive: the L2-SP step


def d_l2sp_step(w, w0, grad, lr: float, alpha: float):
    """One SGD step on ``loss + alpha/2 ||w - w0||^2``: the new weights, given the loss's
    gradient ``grad`` at ``w``."""
    # Your code here: derive the penalty's gradient and take the step.
    raise NotImplementedError("write d_l2sp_step")


def _l2sp_cases() -> list[Case]:
    w, w0, g = np.array([1.0, -2.0]), np.array([0.5, -1.0]), np.array([0.2, 0.0])
    return [
        Case(args=(w, w0, g, 0.1, 0.0), expected=np.array([0.98, -2.0]), label="alpha = 0: plain SGD"),
        Case(args=(w, w0, np.zeros(2), 0.1, 1.0), expected=np.array([0.95, -1.9]), label="no loss gradient"),
        Case(args=(w0, w0, g, 0.1, 5.0), expected=np.array([0.48, -1.0]), label="at w0 the penalty pulls nothing"),
        Case(args=(w, w0, g, 0.5, 2.0), expected=np.array([0.4, -1.0]), label="lr * alpha = 1: back to w0"),
    ]


register(Exercise(
    id="ch10.d_l2sp_step",
    title="The L2-SP update",
    kind="derive",
    prompt="""
        Derive the gradient of Omega(w) = alpha/2 ||w - w0||^2 and write d_l2sp_step(w, w0,
        grad, lr, alpha): one gradient-descent step of size lr on loss + Omega, where grad is the
        loss's gradient at w. What does the step do when lr * alpha = 1 and grad = 0?
    """,
    cases=_l2sp_cases,
    stub=d_l2sp_step,
    outputs=("new weights",),
    rtol=1e-9,
    atol=1e-9,
    hint=("d/dw of alpha/2 (w - w0)^2 is alpha (w - w0).",
          "w - lr * (grad + alpha * (w - w0))."),
))

# ------------------------------------------------------------ debug: teacher annealing


def d_bam_target(gold_onehot, teacher_probs, step: int, total: int):
    """The student's target at ``step`` of ``total`` under teacher annealing: the teacher's
    distribution at the start, the gold label at the end."""
    lam = step / (total - 1)
    return lam * np.asarray(teacher_probs, float) + (1 - lam) * np.asarray(gold_onehot, float)


def _bam_cases() -> list[Case]:
    gold, teach = np.array([0.0, 1.0]), np.array([0.7, 0.3])
    return [
        Case(args=(gold, teach, 0, 5), expected=teach, label="the first step: the teacher alone"),
        Case(args=(gold, teach, 4, 5), expected=gold, label="the last step: the gold label alone"),
        Case(args=(gold, teach, 1, 5), expected=np.array([0.525, 0.475]), label="a quarter of the way"),
    ]


register(Exercise(
    id="ch10.d_bam_target",
    title="An annealed target that runs backwards",
    kind="debug",
    prompt="""
        Clark et al.'s teacher annealing trains the student on lambda * gold + (1 - lambda) *
        teacher, with lambda rising linearly from 0 at the first step to 1 at the last, so the
        student first imitates its teacher and ends on the gold labels. d_bam_target computes
        that target for one example, but a student trained with it ends up imitating its
        teacher. Find the bug and fix it.
    """,
    cases=_bam_cases,
    stub=d_bam_target,
    outputs=("target distribution",),
    rtol=1e-9,
    atol=1e-9,
    hint=("At step 0, which of the two does the function return?",
          "lambda weighs the gold label, 1 - lambda the teacher."),
))

# ------------------------------------------------------------ implement: chain-thaw's budget


def d_stage_steps(total: int, n_stages: int) -> list[int]:
    """``total`` optimizer steps split over ``n_stages`` stages as evenly as possible, the
    first stages taking the remainder."""
    # Your code here
    raise NotImplementedError("write d_stage_steps")


register(Exercise(
    id="ch10.d_stage_steps",
    title="Chain-thaw at the budget of one run",
    kind="implement",
    prompt="""
        To compare chain-thaw with plain fine-tuning at the same cost, the chapter gives
        chain-thaw as many optimizer steps in all as fine-tuning takes, split over its stages.
        Write d_stage_steps(total, n_stages): a list of n_stages whole numbers that add up to
        total and differ by at most one, the larger ones first.
    """,
    cases=[
        Case(args=(24, 9), expected=[3, 3, 3, 3, 3, 3, 2, 2, 2], label="MiniLM's 9 stages, 24 steps"),
        Case(args=(10, 5), expected=[2, 2, 2, 2, 2], label="an even split"),
        Case(args=(7, 3), expected=[3, 2, 2], label="a remainder of one"),
    ],
    stub=d_stage_steps,
    outputs=("steps per stage",),
    hint=("divmod(total, n_stages) gives the share and the remainder.",),
))

# ------------------------------------------------------------ predict: SeqAE at few labels

register(Exercise(
    id="ch10.d_seqae_gain",
    title="What does a sequence autoencoder give a classifier?",
    kind="predict",
    prompt="""
        The same one-layer LSTM classifier is trained on 200 labelled IMDb reviews (the last 32
        words of each) from random weights, and from the weights of a sequence autoencoder
        pre-trained on 2,000 unlabelled reviews. Before reading the stored runs: by how many
        points of test accuracy will the pre-trained start beat the random one (negative if it
        loses)?
    """,
    atol=6.0,
    unit=".1f",
    explanation="""
        See the chapter's table. Dai & Le's point was not only accuracy: an LSTM trained from
        random weights on few labels is hard to train at all, and the autoencoder's weights give
        it a start from which gradient descent finds a classifier.
    """,
))

# ------------------------------------------------------------ extend: Mixout


def d_mixout():
    """Open task; the worked answer is ``solutions.ch10.d_mixout``."""
    raise NotImplementedError("an open task: see the prompt")


register(Exercise(
    id="ch10.d_mixout",
    kind="extend",
    title="Mixout: dropout towards the pre-trained weights",
    prompt="""
        Lee, Cho & Kang's Mixout (2020) replaces dropout's "set a unit to zero" by "set a
        weight back to its pre-trained value" with probability p, rescaled so the expected
        weight is unchanged: w' = (M * w + (1 - M) * w0 - p * w0) / (1 - p) with M ~
        Bernoulli(1 - p). Write a Mixout wrapper for nn.Linear, apply it to MiniLM's
        feed-forward layers with p = 0.1, 0.3 and 0.7, and compare it with the chapter's L2-SP
        run at n = 64 on SST-2 (same seeds, same steps). Does a stochastic pull towards w0 do
        more than L2-SP's deterministic one?
    """,
    hint=(("Keep w0 as a buffer; in training draw M per weight each forward pass; in eval mode "
           "use w itself (the expectation)."),),
))
