"""Reference solutions for chapter 10 (try the exercises first!)."""

from __future__ import annotations

import numpy as np
import torch


def lora_params(d_model: int, n_layer: int, r: int) -> int:
    """Each adapted d x d matrix gets B [d, r] and A [r, d]: 2 r d parameters; two matrices
    (W_q, W_v) per block: 4 r d per block. BERT-base with r = 8: 12 x 4 x 8 x 768 = 294,912,
    0.27 % of its 110 M parameters."""
    return n_layer * 2 * (2 * r * d_model)


def adapter_forward(h, w_down, b_down, w_up, b_up):
    """The skip connection was missing: with a zero up-projection the adapter must return h."""
    z = torch.nn.functional.gelu(h @ w_down.t() + b_down)
    return h + z @ w_up.t() + b_up


def lora_forward(x, weight, bias, A, B, alpha):
    """x A^T first: [.., r], then B: 2 r d multiplications per input vector for d x d, against
    r d^2 to build B A (and d^2 more to apply it). d = 384, r = 4: 3,072 against 737,280."""
    r = A.shape[0]
    return x @ weight.t() + bias + (alpha / r) * ((x @ A.t()) @ B.t())


def equal_step_schedule(sizes: dict[str, int], n_steps: int, seed: int) -> list[str]:
    """Step 1 (largest remainders, so the counts add up to n_steps). Steps 2-3 were not run at
    laptop scale for the book: the worked loop is `finetune.train(MultiTask(...), batches,
    cfg)` with `batches(e)` returning, for each name of this schedule, the next batch of that
    task's `finetune.epoch_batches` (cycled), and the seeds of section 6."""
    total = sum(sizes.values())
    want = {t: n_steps * n / total for t, n in sizes.items()}
    counts = {t: int(w) for t, w in want.items()}
    for t in sorted(want, key=lambda t: want[t] - counts[t], reverse=True)[: n_steps - sum(counts.values())]:
        counts[t] += 1
    names = [t for t, c in counts.items() for _ in range(c)]
    order = np.random.default_rng(seed).permutation(len(names))
    return [names[i] for i in order]


def verbalize(logits: torch.Tensor, label_ids: list[list[int]]) -> torch.Tensor:
    """Renormalising makes the labels a distribution; what is lost is how much probability
    the model put on the label words at all (a blank it would rather fill with 'the')."""
    p = logits.softmax(-1)
    raw = torch.stack([p[:, list(ids)].sum(-1) for ids in label_ids], -1)
    return raw / raw.sum(-1, keepdim=True)


def calibrate_probs(probs: np.ndarray, p_cf: np.ndarray) -> np.ndarray:
    """The content-free input becomes uniform: p_cf / p_cf = 1 for every label."""
    q = np.asarray(probs, dtype=float) / np.asarray(p_cf, dtype=float)
    return q / q.sum(-1, keepdims=True)


def hotflip_candidates(grad: torch.Tensor, embeddings: torch.Tensor, k: int) -> list[int]:
    """Step 1. Steps 2-3 (worked answer, sketched): put the trigger ids into the pattern as
    ordinary tokens, register `encoder.embeddings.tok.register_forward_hook` to keep the
    output and call `.retain_grad()` on it, back-propagate the PromptClassifier's loss, read
    the rows of the trigger positions, average them over the batch, and call this function;
    then score each candidate by the loss on the batch and keep the best. On bert-book the
    search finds sub-word pieces no person would write (the chapter's run: " Gr the Any"), and
    the calibrated accuracy moves only a little past the hand-written pattern's (57.0 % against
    55.5 %): the search can only exploit what the model's blank already knows. On MiniLM, which
    never had a masked-LM head, there is nothing to exploit."""
    return torch.topk(-(embeddings @ grad), k).indices.tolist()


# --- 10b ---


def b_ipet_growth(labels: list[int], generation: int, growth: int = 5) -> dict[int, int]:
    """(growth ** (generation - 1) - 1) |T| new examples, split by T's label shares. With 32
    labelled examples and d = 5, generation 3 trains on 800 and adds 768."""
    counts = np.bincount(np.asarray(labels, dtype=int))
    extra = (growth ** (generation - 1) - 1) * len(labels)
    return {c: round(n * extra / len(labels)) for c, n in enumerate(counts) if n > 0}


def b_soft_labels(logits: list[np.ndarray], temperature: float = 2.0) -> np.ndarray:
    """The bug summed the models' scores instead of averaging them: with m models the softmax
    saw m times the mean, i.e. an effective temperature of T / m -- sharper soft labels the more
    patterns the ensemble has."""
    s = np.stack([np.asarray(x, dtype=np.float64) for x in logits])
    z = s.mean(0) / temperature
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


# --- 10c ---


def c_induction_score(pattern, ids) -> float:
    """For each t whose token occurred before, the attention on s + 1 for every earlier
    occurrence s (a set of targets, so s + 1 = t counts once); the mean over such t."""
    ids = [int(i) for i in ids]
    sums = []
    for t in range(len(ids)):
        targets = {s + 1 for s in range(t) if ids[s] == ids[t]}
        if targets:
            sums.append(sum(float(pattern[t, j]) for j in targets))
    return sum(sums) / len(sums)


def c_previous_token_score(pattern) -> float:
    """diagonal(1) reads row t, column t + 1 (the next token), which a causal mask keeps at 0;
    the previous token is diagonal(-1)."""
    return float(pattern.diagonal(-1).mean())


def c_distinct_keys(n_pairs: int = 16, n_keys: int = 16) -> float:
    """Linearity of expectation: each key is present with probability 1 - (1 - 1/K)^n."""
    return n_keys * (1 - (1 - 1 / n_keys) ** n_pairs)


# --- 10d ---


def d_l2sp_step(w, w0, grad, lr: float, alpha: float):
    """grad Omega = alpha (w - w0): the step adds the pull lr * alpha * (w0 - w) to plain SGD;
    with lr * alpha = 1 and no loss gradient it lands exactly on w0."""
    w, w0, grad = (np.asarray(x, dtype=float) for x in (w, w0, grad))
    return w - lr * (grad + alpha * (w - w0))


def d_bam_target(gold_onehot, teacher_probs, step: int, total: int):
    """The bug swapped the weights: lambda belongs to the gold label."""
    lam = step / (total - 1)
    return lam * np.asarray(gold_onehot, float) + (1 - lam) * np.asarray(teacher_probs, float)


def d_stage_steps(total: int, n_stages: int) -> list[int]:
    """An equal share each, the remainder to the first stages."""
    q, r = divmod(total, n_stages)
    return [q + (i < r) for i in range(n_stages)]


def d_mixout(ps=(0.1, 0.3, 0.7), seeds=(0, 1, 2)):
    """Mixout on MiniLM's feed-forward layers (``mlp.fc``, ``mlp.proj`` of every block) at the
    chapter's small n on SST-2, against L2-SP: the same seeds, data and steps. Returns
    ``{arm: [accuracy per seed]}``. What to look for: at small p Mixout is a mild, noisy pull
    towards w0; at p = 0.7 most weights are reset at every step, so the model barely adapts.
    Compare the arms' differences with the spread over seeds before calling one better."""
    import torch
    from torch import nn

    from companion.transfer import chapter10d as c10d
    from companion.transfer import recipes as R
    from companion.transfer.finetune import _score, encode, epoch_batches, predict

    class MixLinear(nn.Module):
        def __init__(self, lin: nn.Linear, p: float):
            super().__init__()
            self.lin, self.p = lin, p
            self.register_buffer("w0", lin.weight.detach().clone())

        def forward(self, x):
            w = self.lin.weight
            if self.training and self.p > 0:
                keep = torch.bernoulli(torch.full_like(w, 1 - self.p))
                w = (keep * w + (1 - keep) * self.w0 - self.p * self.w0) / (1 - self.p)
            return nn.functional.linear(x, w, self.lin.bias)

    s = c10d.sizes("laptop")
    enc, tok = c10d.minilm(s.n_layer)
    tr, te = c10d.load_data(s)["small"]
    e_tr, e_te = encode(tok, tr, s.max_len), encode(tok, te, s.max_len)
    gold = np.array([e.label for e in te])
    out: dict[str, list[float]] = {}
    for arm in ["L2-SP", *[f"mixout p={p}" for p in ps]]:
        for seed in seeds:
            model = c10d._classifier(enc, 2, seed)
            pull = R.PullTowards(model, s.pull, "pretrained") if arm == "L2-SP" else None
            if pull is None:
                p = float(arm.split("=")[1])
                for block in model.encoder.blocks:
                    block.mlp.fc = MixLinear(block.mlp.fc, p)
                    block.mlp.proj = MixLinear(block.mlp.proj, p)
            cfg = R.RecipeConfig(epochs=s.small_epochs, lr=s.lr, head_lr=s.head_lr, seed=seed)
            batches = epoch_batches(model.encoder.config, e_tr, [e.label for e in tr], s.batch_size, seed)
            R.finetune(model, batches, cfg, pull=pull)
            out.setdefault(arm, []).append(_score(gold, predict(model, model.encoder.config, e_te), False)[1])
    return out
