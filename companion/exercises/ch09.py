"""Chapter 9's exercises: distillation, pruning, quantization and scaling laws."""

from __future__ import annotations

import itertools
import math

import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- derive: 6 N D


def train_flops(n_params: int, n_tokens: int) -> float:
    """Return the FLOPs of training a stack of bias-free linear layers with ``n_params``
    weights on ``n_tokens`` tokens (forward and backward passes)."""
    # Your code here: count the multiply-adds of the forward pass first.
    raise NotImplementedError("write train_flops")


def _flops_cases() -> list[Case]:
    from torch.utils.flop_counter import FlopCounterMode

    out = []
    for dims, T in (((8, 16, 8), 5), ((32, 128, 32), 7), ((64, 64, 64, 10), 3)):
        net = torch.nn.Sequential(*[torch.nn.Linear(a, b, bias=False) for a, b in itertools.pairwise(dims)])
        x = torch.randn(T, dims[0], requires_grad=True)  # the input needs a gradient too, as in a deep net
        with FlopCounterMode(display=False) as counter:
            net(x).sum().backward()
        n = sum(p.numel() for p in net.parameters())
        # measured by PyTorch's counter; the input gradient of the first layer is counted too
        out.append(Case(args=(n, T), expected=float(counter.get_total_flops()), label=f"layers {dims}, {T} tokens"))
    return out


register(Exercise(
    id="ch09.train_flops",
    title="Derive 6 N D",
    kind="derive",
    prompt="""
        A linear layer y = W x with W of shape [m, n] costs m n multiply-adds per token in the
        forward pass. Count the floating-point operations (a multiply-add is 2 FLOPs) of one
        training step on T tokens through a stack of such layers with N weights in all: the
        forward pass, then the backward pass, which needs the gradient with respect to the
        weights and the gradient with respect to each layer's input. Write
        `train_flops(n_params, n_tokens)`. The check compares with PyTorch's FlopCounterMode
        on small stacks.
    """,
    cases=_flops_cases,
    stub=train_flops,
    outputs=("training FLOPs",),
    rtol=1e-9,
    hint=(
        "Forward: 2 N FLOPs per token. How many matrix products does the backward pass of y = W x need?",
        "Two: dL/dW = dL/dy x^T and dL/dx = W^T dL/dy, each as costly as the forward product.",
    ),
))

# --------------------------------------------------------------------------- implement: quantize a vector


def quantize_vector(w: list[float]) -> tuple[list[int], float]:
    """Return ``(q, scale)``: symmetric int8 quantization of the vector ``w`` with
    ``scale = max|w| / 127.5`` and ``q_i = round(w_i / scale)`` clamped to [-128, 127]
    (round half to even)."""
    # Your code here.
    raise NotImplementedError("write quantize_vector")


def _quant_cases() -> list[Case]:
    from ..efficiency.quantize import quantize_per_channel

    out = []
    for w, label in (([0.3, -2.55, 1.0, 0.4], "the example of the prompt"),
                     ([1.0, -1.0, 0.0], "a symmetric vector"),
                     ([0.001, 0.002, -0.0005], "small numbers: the scale adapts"),
                     ([3.0, 1.0 / 3.0, -2.9], "a value between steps")):
        q, s = quantize_per_channel(torch.tensor([w]))
        out.append(Case(args=(w,), expected=(q[0].tolist(), float(s[0])), label=label))
    return out


register(Exercise(
    id="ch09.quantize_vector",
    title="Quantize a vector by hand",
    kind="implement",
    prompt="""
        Write `quantize_vector(w)` for a list of floats: the scale is max|w_i| / 127.5, each
        entry becomes round(w_i / scale) (Python's round rounds half to even, as PyTorch
        does), clamped to the int8 range [-128, 127]. Return the list of integers and the
        scale. First do [0.3, -2.55, 1.0, 0.4] on paper: what happens to -2.55, and would
        +2.55 end the same way?
    """,
    cases=_quant_cases,
    stub=quantize_vector,
    outputs=("q", "scale"),
    rtol=1e-6,
    hint=(
        "scale = max(abs(x) for x in w) / 127.5; then divide, round, clamp.",
        "The scale is 2.55 / 127.5 = 0.02, and -2.55 / 0.02 = -127.5 rounds half to even to -128, "
        "which int8 can hold; +127.5 would round to 128 and clamp to 127.",
    ),
))

# --------------------------------------------------------------------------- debug: the T^2 factor


def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Hinton et al.'s soft-target loss (this version has a bug)."""
    log_ps = torch.log_softmax(student_logits / temperature, -1)
    pt = torch.softmax(teacher_logits / temperature, -1)
    return -(pt * log_ps).sum(-1).mean() + (pt * pt.log()).sum(-1).mean()


def _kd_cases() -> list[Case]:
    from ..efficiency.distill import kd_loss as ref

    def close_to(want: float, T: float):
        def checker(got) -> tuple[bool, str]:
            try:
                value = float(got)
            except (TypeError, ValueError):
                return False, f"kd_loss should return a scalar tensor, got {type(got).__name__}"
            if abs(value - want) <= 1e-5 * max(1.0, abs(want)):
                return True, ""
            # the message names what is wrong, not the value it should have: that would show the factor
            return False, f"at temperature {T:g} the loss is not the soft-target distillation loss (got {value:.6g})"
        return checker

    out = []
    for T, seed in ((1.0, 0), (2.0, 1), (4.0, 2), (8.0, 3)):
        g = torch.Generator().manual_seed(seed)
        s, t = torch.randn(5, 4, generator=g) * 3, torch.randn(5, 4, generator=g) * 3
        out.append(Case(args=(s, t, T), checker=close_to(float(ref(s, t, T)), T), label=f"T = {T}"))
    return out


register(Exercise(
    id="ch09.kd_loss",
    title="Debug the distillation loss",
    kind="debug",
    prompt="""
        This `kd_loss` computes KL(p_teacher || p_student) between the two distributions
        softened by the temperature T (tau in the chapter's equations). It is right for T = 1
        and wrong for every other T: its gradients shrink as T grows, so the soft term fades
        next to the hard-label term.
        Find the missing piece (Hinton et al. 2015, section 2) and fix it.
    """,
    cases=_kd_cases,
    stub=kd_loss,
    outputs=("loss",),
    rtol=1e-5,
    hint=(
        "Differentiate the softened cross-entropy with respect to a student logit: a 1/T appears.",
        "Hinton et al. multiply the soft loss by T^2 so that its gradients keep their scale as T changes.",
    ),
))

# --------------------------------------------------------------------------- derive: predict a size's loss


def predict_loss(n_params: float, n_c: float, alpha: float) -> float:
    """Return the loss the power law L(N) = (N_c / N)^alpha predicts for a model of
    ``n_params`` non-embedding parameters."""
    # Your code here.
    raise NotImplementedError("write predict_loss")


def _predict_cases() -> list[Case]:
    from ..efficiency.scaling import fit_power_law

    out = []
    for n_c, alpha in ((8.8e13, 0.076), (1e6, 0.3), (3e4, 0.12)):
        N = [1e3, 1e4, 1e5]
        law = fit_power_law(N, [(n_c / n) ** alpha for n in N])  # the package's fit recovers the law
        for n in (2e5, 5e6):
            out.append(Case(args=(n, n_c, alpha), expected=float(law(n)), label=f"N = {n:g} from (N_c={n_c:g}, alpha={alpha})"))
    return out


register(Exercise(
    id="ch09.predict_loss",
    title="Predict the loss of a size not trained",
    kind="derive",
    prompt="""
        Kaplan et al. fit L(N) = (N_c / N)^alpha. Taking logarithms, log L is a straight line in
        log N. Write `predict_loss(n_params, n_c, alpha)`; then use the chapter's fitted N_c and
        alpha to predict the loss of a model 10 times larger than our largest. How far down
        does one factor of 10 in N move the loss, as a ratio, for Kaplan's alpha = 0.076?
    """,
    cases=_predict_cases,
    stub=predict_loss,
    outputs=("predicted loss",),
    rtol=1e-6,
    hint=("L = (N_c / N) ** alpha.", "A factor of 10 in N multiplies L by 10 ** (-alpha): 0.84 for alpha = 0.076."),
))

# --------------------------------------------------------------------------- predict: int8 size


register(Exercise(
    id="ch09.int8_size",
    title="How much smaller is the int8 model?",
    kind="predict",
    prompt="""
        Our teacher's Linear layers go from float32 (4 bytes a weight) to int8 (1 byte a weight,
        plus one float32 scale per output row); its embeddings, layer norms and biases stay in
        float32. Before you run the quantization cell: by what factor does the whole model's
        size shrink? (A number; the Linear weights alone shrink almost 4x.)
    """,
    rtol=0.1,
    atol=0.0,
    unit=".2f",
    explanation="""
        Only the Linear weights shrink 4x. In a small model the token embeddings are a large
        share of the parameters (here a vocabulary of about a thousand tokens times the width),
        and they stay in float32, so the whole model shrinks by much less than 4x. In BERT-base
        the embeddings are about a fifth of the parameters, and the factor comes closer to 4.
    """,
))

# --------------------------------------------------------------------------- concept: temperature


register(Exercise(
    id="ch09.temperature",
    title="What does the temperature do?",
    kind="concept",
    prompt="""
        A teacher's logits for one example are z = (6, 2, 1). Distillation softens them into
        softmax(z / T), T the temperature (tau in the chapter's equations). What happens as T
        grows very large?
    """,
    choices={
        "a": "The soft targets stay the same: the softmax is invariant to scaling the logits, so "
             "the temperature only changes the size of the gradients.",
        "b": "The soft targets sum to more than one.",
        "c": "The soft targets approach the one-hot vector of the teacher's top class, so "
             "distillation becomes training on the teacher's hard labels.",
        "d": "The soft targets approach the uniform distribution, and matching them becomes "
             "matching the centred logits (up to a scale).",
    },
    answer="d",
    hint=("Try softmax([6, 2, 1] / 100).",),
    explanation="""
        (d). As T grows, z / T goes to 0 and softmax(z / T) to uniform. Hinton et al. show that in
        this limit, with zero-mean logits, minimising the soft-target loss is minimising
        (1 / 2) sum (z_s - z_t)^2: matching the logits, as Caruana's earlier model compression
        did. The softmax is invariant to adding a constant to the logits, not to scaling them.
    """,
))

# --------------------------------------------------------------------------- derive: Chinchilla


def chinchilla_split(compute: float, tokens_per_param: float = 20.0) -> tuple[float, float]:
    """Return ``(N, D)`` with ``6 N D = compute`` and ``D = tokens_per_param * N``."""
    # Your code here.
    raise NotImplementedError("write chinchilla_split")


def _chinchilla_cases() -> list[Case]:
    out = []
    for C, r in ((1e18, 20.0), (5.76e23, 20.0), (1e12, 5.0)):
        # the expected split is found numerically: scan N on a fine grid for 6 N (r N) = C
        lo, hi = 1.0, 1e15
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if 6 * mid * r * mid < C else (lo, mid)
        out.append(Case(args=(C, r), expected=(lo, r * lo), label=f"C = {C:g}, {r:g} tokens per parameter"))
    return out


register(Exercise(
    id="ch09.chinchilla_split",
    title="Split a budget the Chinchilla way",
    kind="derive",
    prompt="""
        Hoffmann et al. (2022) found that the compute-optimal model sees about 20 tokens per
        parameter. With C = 6 N D, derive N and D for a budget C and a ratio r = D / N. Write
        `chinchilla_split(compute, tokens_per_param=20)`. Check: Chinchilla's own budget,
        5.76e23 FLOPs, gives about 70 billion parameters and 1.4 trillion tokens.
    """,
    cases=_chinchilla_cases,
    stub=chinchilla_split,
    outputs=("N", "D"),
    rtol=1e-6,
    hint=("Substitute D = r N into C = 6 N D.", "N = sqrt(C / (6 r)), D = r N."),
))

# --------------------------------------------------------------------------- extend: iterative head pruning


def _iterative_checker(got) -> tuple[bool, str]:
    if not isinstance(got, list) or not got or not all(isinstance(x, tuple) and len(x) == 2 for x in got):
        return False, "return a list of (layer, head) pairs, in the order they were pruned"
    if len(set(got)) != len(got):
        return False, "a head was pruned twice"
    return True, ""


def iterative_head_pruning(model, batches, loss_fn, n_prune: int) -> list[tuple[int, int]]:
    """Prune ``n_prune`` heads one at a time, recomputing the importance after each removal;
    return the heads in the order they were pruned."""
    # Your code here: companion.efficiency.prune.HeadGates and head_importance.
    raise NotImplementedError("write iterative_head_pruning")


def _iterative_cases() -> list[Case]:
    from ..transformer import GPT, GPTConfig

    gpt = GPT(GPTConfig(vocab_size=30, block_size=8, n_layer=2, d_model=16, n_head=4), seed=0).eval()
    batches = [torch.randint(0, 27, (4, 9), generator=torch.Generator().manual_seed(i)) for i in range(2)]
    return [Case(args=(gpt, batches, lambda m, b: m.loss(b), 3), checker=_iterative_checker,
                 label="a tiny GPT, 3 of 8 heads")]


register(Exercise(
    id="ch09.iterative_head_pruning",
    title="Prune heads iteratively",
    kind="extend",
    prompt="""
        The chapter scores every head once and prunes in that order. Michel et al. prune
        iteratively: remove the least important heads, recompute the importance of those left
        (with the removed heads' gates at 0), and repeat. Write
        `iterative_head_pruning(model, batches, loss_fn, n_prune)`, then compare its accuracy
        curve with the one-shot curve on the chapter's teacher. Does recomputing change the
        order, and does it help? (The check only looks at the shape of your answer; a worked
        answer is in solutions/ch09.py.)
    """,
    cases=_iterative_cases,
    stub=iterative_head_pruning,
    outputs=("pruned heads",),
    hint=("Keep the gates of the removed heads at 0 inside HeadGates while you compute the gradient.",),
))
