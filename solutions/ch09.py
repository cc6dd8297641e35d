"""Reference solutions for chapter 9 (try the exercises first!)."""

from __future__ import annotations

import math

import torch


def train_flops(n_params: int, n_tokens: int) -> float:
    """Forward: each weight does one multiply-add per token, 2 FLOPs. Backward: dL/dW = dL/dy x^T
    and dL/dx = W^T dL/dy, two products as costly as the forward one, 4 FLOPs per weight and
    token. In all 6 N per token: C = 6 N D."""
    return 6.0 * n_params * n_tokens


def quantize_vector(w: list[float]) -> tuple[list[int], float]:
    """scale = max|w| / 127.5; q = clamp(round(w / scale), -128, 127). For [0.3, -2.55, 1.0, 0.4]:
    scale 0.02, q = [15, -128, 50, 20] (-127.5 rounds half to even to -128, which int8 holds;
    +2.55 would give 127.5 -> 128, clamped to 127)."""
    scale = max(abs(x) for x in w) / 127.5
    scale = max(scale, torch.finfo(torch.float32).eps)
    # float32 arithmetic, as the package (and PyTorch) do it
    t = torch.tensor(w, dtype=torch.float32) / torch.tensor(scale, dtype=torch.float32)
    q = torch.clamp(torch.round(t), -128, 127).to(torch.int64).tolist()
    return q, float(torch.tensor(scale, dtype=torch.float32))


def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """The soft loss's gradient in a student logit is (p_s - p_t) / T; multiplying by T^2 keeps
    its size comparable with the hard loss's whatever T (Hinton et al. 2015, section 2)."""
    log_ps = torch.log_softmax(student_logits / temperature, -1)
    pt = torch.softmax(teacher_logits / temperature, -1)
    kl = -(pt * log_ps).sum(-1).mean() + (pt * pt.log()).sum(-1).mean()
    return kl * temperature**2


def predict_loss(n_params: float, n_c: float, alpha: float) -> float:
    """L(N) = (N_c / N)^alpha; ten times the parameters multiply the loss by 10^-alpha (0.84 for
    Kaplan's alpha = 0.076)."""
    return (n_c / n_params) ** alpha


def chinchilla_split(compute: float, tokens_per_param: float = 20.0) -> tuple[float, float]:
    """C = 6 N (r N) = 6 r N^2, so N = sqrt(C / (6 r)) and D = r N. For C = 5.76e23 and r = 20:
    N = 6.9e10, D = 1.39e12 -- Chinchilla's 70 billion parameters and 1.4 trillion tokens."""
    n = math.sqrt(compute / (6 * tokens_per_param))
    return n, tokens_per_param * n


def iterative_head_pruning(model, batches, loss_fn, n_prune: int) -> list[tuple[int, int]]:
    """Michel et al.'s iterative variant: a fixed set of gates holds the removed heads at 0, and
    the importance of the remaining heads is recomputed with them removed (two HeadGates compose:
    their gates multiply). On the chapter's laptop teacher the iterative order agreed with the
    one-shot order on the first heads and the accuracy curves stayed within a point of each other
    up to half the heads; the paper also found the two close."""
    from companion.efficiency.prune import HeadGates, head_importance

    pruned: list[tuple[int, int]] = []
    with HeadGates(model) as fixed:
        for _ in range(n_prune):
            imp = head_importance(model, batches, loss_fn)
            for layer, head in pruned:
                imp[layer, head] = float("inf")
            flat = int(torch.argmin(imp))
            layer, head = divmod(flat, imp.shape[1])
            fixed.gates[layer, head] = 0.0
            pruned.append((layer, head))
    return pruned
