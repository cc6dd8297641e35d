"""Chapter 10's exercises: parameter-efficient transfer (10a) and prompting (10b).

10a: LoRA's parameter count (derive), LoRA's share of MiniLM (predict), an adapter that does not
start as the identity (debug), why LoRA's B starts at zero (concept), LoRA's forward pass
(implement), multi-task learning with equal steps (extend). 10b: a verbalizer
(implement), contextual calibration (implement), and an open task, AutoPrompt's trigger search
(extend)."""

from __future__ import annotations

import numpy as np
import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- derive: LoRA count


def lora_params(d_model: int, n_layer: int, r: int) -> int:
    """Return the number of parameters LoRA adds to a BERT-style encoder of ``n_layer`` blocks
    of width ``d_model`` when it adapts W_q and W_v of every block with rank ``r``."""
    # Your code here: one low-rank pair B A per adapted matrix.
    raise NotImplementedError("write lora_params")


def _lora_cases() -> list[Case]:
    from ..transfer.peft import apply_method, count
    from ..transformer.bert import BertConfig, BertEncoder

    out = []
    for d, L, r in [(16, 1, 1), (32, 2, 4), (48, 3, 8), (64, 2, 2)]:
        enc = BertEncoder(BertConfig(vocab_size=10, max_len=8, d_model=d, n_head=4, n_layer=L), seed=0)
        n = count(apply_method(enc, "lora", r=r), trainable=True)  # measured on the package's LoRA
        out.append(Case(args=(d, L, r), expected=n, label=f"d_model={d}, n_layer={L}, r={r}"))
    return out


register(Exercise(
    id="ch10.lora_params",
    title="How many parameters does LoRA train?",
    kind="derive",
    prompt="""
        LoRA replaces a frozen d x d weight W by W + (alpha / r) B A with B of shape [d, r] and
        A of shape [r, d]. Derive, on paper, how many parameters it trains in a BERT-style
        encoder with n_layer blocks of width d_model when it adapts the query and the value
        projections of every block. Write `lora_params(d_model, n_layer, r)`. (The check
        counts the trainable parameters of the package's `apply_method(encoder, "lora")`.)
        For BERT-base (d = 768, 12 layers) and r = 8, what share of its 110 M parameters is
        that?
    """,
    cases=_lora_cases,
    stub=lora_params,
    outputs=("trainable parameters",),
    hint=("Each adapted matrix gets one A and one B; count their entries.",
          "A d x d matrix adapted with rank r adds r d + d r = 2 r d parameters."),
))

# --------------------------------------------------------------------------- predict: LoRA share


def _lora_share_measured() -> float:
    from ..transfer.peft import apply_method, count
    from ..transformer.bert import BertConfig, BertEncoder

    cfg = BertConfig(vocab_size=30522, max_len=512, n_layer=6, n_head=12, d_model=384, d_ff=1536)
    enc = BertEncoder(cfg, seed=None)  # all-MiniLM-L6-v2's shape; the weights do not matter here
    total = count(enc)
    return 100 * count(apply_method(enc, "lora", r=4), trainable=True) / total


register(Exercise(
    id="ch10.lora_share",
    title="What share of MiniLM does LoRA train?",
    kind="predict",
    prompt="""
        all-MiniLM-L6-v2 has 6 blocks of width 384 and a 30,522-token vocabulary, 22.7 M
        parameters in all. Before you run the check: what percentage of them does LoRA with
        rank r = 4 on W_q and W_v train (the task head not counted)?
    """,
    rtol=0.0,
    atol=0.05,
    unit=".3f",
    measure=_lora_share_measured,
    hint=("Use your answer to the derive exercise, then divide by 22.7 M.",),
    explanation="""
        6 layers x 2 matrices x 2 x 4 x 384 = 36,864 parameters, 0.16 % of the model. About
        half of MiniLM's parameters are its word embeddings (30,522 x 384 = 11.7 M), which no
        method here touches.
    """,
))

# --------------------------------------------------------------------------- debug: adapter


def adapter_forward(h: torch.Tensor, w_down: torch.Tensor, b_down: torch.Tensor, w_up: torch.Tensor,
                    b_up: torch.Tensor) -> torch.Tensor:
    """Houlsby's adapter on hidden states ``h [.., d]``: a bottleneck ``m`` with weights
    ``w_down [m, d]``, ``w_up [d, m]`` (nn.Linear's layout), GELU, and a skip connection."""
    z = torch.nn.functional.gelu(h @ w_down.t() + b_down)
    return z @ w_up.t() + b_up


def _adapter_cases() -> list[Case]:
    out = []
    for seed, (d, m) in enumerate([(4, 2), (8, 3), (16, 4)]):
        g = torch.Generator().manual_seed(seed)
        h = torch.randn(3, d, generator=g)
        wd, bd = torch.randn(m, d, generator=g), torch.randn(m, generator=g)
        for zero in (True, False):
            wu = torch.zeros(d, m) if zero else torch.randn(d, m, generator=g)
            bu = torch.zeros(d) if zero else torch.randn(d, generator=g)
            want = h + torch.nn.functional.gelu(h @ wd.t() + bd) @ wu.t() + bu
            out.append(Case(args=(h, wd, bd, wu, bu), expected=want,
                            label=f"d={d}, m={m}, {'zero' if zero else 'random'} up-projection"))
    return out


register(Exercise(
    id="ch10.adapter_forward",
    title="An adapter that erases the pre-trained network",
    kind="debug",
    prompt="""
        `adapter_forward` should compute Houlsby et al.'s adapter. With its up-projection
        initialised to zero (as `companion.transfer.peft.Adapter` does), a freshly inserted
        adapter must leave the pre-trained network's computation unchanged. This one, at
        initialisation, outputs zeros: the block after it receives nothing of what the frozen
        layers computed. Find the bug and fix it.
    """,
    cases=_adapter_cases,
    stub=adapter_forward,
    outputs=("adapter output",),
    rtol=1e-5,
    atol=1e-6,
    hint=("What should a zero up-projection give: zeros, or its input?",
          "The adapter is h + W_up f(W_down h + b) + b_up: the skip connection is missing."),
))

# --------------------------------------------------------------------------- concept: LoRA init

register(Exercise(
    id="ch10.lora_zero",
    title="Why does LoRA's B start at zero?",
    kind="concept",
    prompt="""
        LoRA initialises A with random Gaussian entries and B with zeros. Why not both random?
    """,
    choices={
        "a": "So that training starts from exactly the pre-trained model: B A = 0 at step 0.",
        "b": "Because a zero matrix has rank 0, which makes the update low-rank.",
        "c": "So that B receives no gradient at the first step and only A trains, which halves "
             "the optimiser's memory.",
        "d": "Because a random B would make the merged weights W + B A impossible to compute "
             "after training.",
    },
    answer="a",
    hint=("What is W + B A at step 0 in each case?",),
    explanation="""
        (a). With B = 0 the update B A is zero, so the adapted model computes exactly what the
        pre-trained one did and fine-tuning starts from its knowledge (the same reason the
        adapters' up-projection starts at zero). B still gets a gradient, because A is not
        zero: dL/dB = (dL/dh) (A x)^T. Random B and A would add a random rank-r perturbation
        to every adapted layer before the first step; (b) is false (rank r is fixed by the
        shapes), (c) is false, and (d) is false -- merging works for any B and A.
    """,
))

# --------------------------------------------------------------------------- implement: LoRA forward


def lora_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                 alpha: float) -> torch.Tensor:
    """Return LoRA's output for inputs ``x [.., in]``: the frozen ``nn.Linear`` (``weight
    [out, in]``, ``bias [out]``) plus the low-rank update ``(alpha / r) B A x`` with ``A [r, in]``
    and ``B [out, r]`` -- without ever forming the ``[out, in]`` matrix ``B A``."""
    # Your code here.
    raise NotImplementedError("write lora_forward")


def _lora_forward_cases() -> list[Case]:
    from ..transfer.peft import LoRALinear

    out = []
    for seed, (n_in, n_out, r, alpha, trained) in enumerate(
            [(6, 4, 1, 1.0, False), (8, 8, 2, 4.0, True), (16, 12, 4, 8.0, True), (32, 32, 8, 16.0, True)]):
        torch.manual_seed(seed)
        base = torch.nn.Linear(n_in, n_out)
        lora = LoRALinear(base, r=r, alpha=alpha, seed=seed)
        if trained:  # as if trained: B no longer zero
            with torch.no_grad():
                lora.B[0].normal_(0, 0.5)
        x = torch.randn(3, n_in, generator=torch.Generator().manual_seed(100 + seed))
        with torch.no_grad():
            want = lora(x)
        args = (x, base.weight.detach().clone(), base.bias.detach().clone(), lora.A[0].detach().clone(),
                lora.B[0].detach().clone(), alpha)
        out.append(Case(args=args, expected=want,
                        label=f"in={n_in}, out={n_out}, r={r}, alpha={alpha}, {'trained' if trained else 'new'} B"))
    return out


register(Exercise(
    id="ch10.lora_forward",
    title="LoRA's forward pass",
    kind="implement",
    prompt="""
        A LoRA layer keeps the pre-trained W and b frozen and adds a rank-r update scaled by
        alpha / r: y = x W^T + b + (alpha / r) (x A^T) B^T. Write `lora_forward(x, weight,
        bias, A, B, alpha)` (r is A's number of rows). Multiply in the order that never
        builds the [out, in] matrix B A: for d = 384 and r = 4, how many multiplications per
        input vector does each order cost? (The check compares with the package's
        `LoRALinear`.)
    """,
    cases=_lora_forward_cases,
    stub=lora_forward,
    outputs=("LoRA output",),
    rtol=1e-5,
    atol=1e-6,
    hint=("r = A.shape[0]; the frozen part is x @ weight.T + bias.",
          "Add (alpha / r) * ((x @ A.T) @ B.T): two thin products, r numbers in between."),
))

# --------------------------------------------------------------------------- extend: equal steps


def equal_step_schedule(sizes: dict[str, int], n_steps: int, seed: int) -> list[str]:
    """Return the task of each of ``n_steps`` multi-task steps: the tasks in proportion to
    their ``sizes`` (training examples), shuffled with ``seed``."""
    # Your code here.
    raise NotImplementedError("write equal_step_schedule")


def _schedule_checker(sizes, n_steps, seed):
    def check(result):
        got = list(result) if result is not None else []
        if len(got) != n_steps:
            return False, f"expected {n_steps} steps, got {len(got)}"
        if set(got) - set(sizes):
            return False, f"unknown task names {sorted(set(got) - set(sizes))}; the tasks are {sorted(sizes)}"
        total = sum(sizes.values())
        for t, n in sizes.items():
            want = n_steps * n / total
            if abs(got.count(t) - want) > 1:
                return False, f"task {t!r} got {got.count(t)} steps, its share of the examples says {want:.1f}"
        if len(set(sizes)) > 1 and got == sorted(got):
            return False, "the tasks come in blocks (all of one, then the other): shuffle the steps"
        return True, ""
    return check


def _schedule_cases() -> list[Case]:
    out = []
    for sizes, n, seed in [({"sst2": 128, "trec": 128}, 8, 0), ({"a": 300, "b": 100}, 20, 1),
                           ({"x": 50, "y": 30, "z": 20}, 40, 2)]:
        out.append(Case(args=(sizes, n, seed), checker=_schedule_checker(sizes, n, seed),
                        label=f"{n} steps over {sizes}"))
    return out


register(Exercise(
    id="ch10.equal_step_schedule",
    title="Multi-task learning with equal steps",
    kind="extend",
    prompt="""
        The chapter's multi-task model took as many optimizer steps as both single-task models
        together, so part of its gain may be the extra steps. Isolate the transfer:

        1. Write `equal_step_schedule(sizes, n_steps, seed)`: which task each of `n_steps`
           steps trains, in proportion to the tasks' sizes, shuffled (check() tests it).
        2. Use it to draw the multi-task model's batches (one batch of the named task per
           step) with `n_steps` equal to ONE single-task run's steps, train
           `companion.transfer.finetune.MultiTask` with `finetune.train`, and compare it with
           the chapter's single-task runs over the same seeds.
        3. Does sharing the encoder still help either task? Is the difference larger than
           the spread over seeds?
    """,
    cases=_schedule_cases,
    stub=equal_step_schedule,
    hint=(("Round n_steps * size / total for each task (fix the rounding so they add up to "
           "n_steps), repeat each name that often, then shuffle with a seeded generator."),),
))

# --------------------------------------------------------------------------- implement: verbalizer


def verbalize(logits: torch.Tensor, label_ids: list[list[int]]) -> torch.Tensor:
    """Return ``[B, n_labels]`` label probabilities from vocabulary logits ``[B, V]`` at the
    blank: each label's probability is the summed softmax probability of its label words,
    renormalised over the labels."""
    # Your code here.
    raise NotImplementedError("write verbalize")


def _verbalize_cases() -> list[Case]:
    out = []
    for seed, (V, labels) in enumerate([(5, [[1], [3]]), (8, [[0, 2], [5]]), (12, [[1], [2], [3], [4], [5]])]):
        g = torch.Generator().manual_seed(seed)
        logits = torch.randn(4, V, generator=g) * 3
        p = logits.softmax(-1)
        raw = torch.stack([p[:, ids].sum(-1) for ids in labels], -1)
        out.append(Case(args=(logits, labels), expected=raw / raw.sum(-1, keepdim=True),
                        label=f"V={V}, label words {labels}"))
    return out


register(Exercise(
    id="ch10.verbalize",
    title="A verbalizer",
    kind="implement",
    prompt="""
        A cloze prompt gives the masked LM's logits over the whole vocabulary at the blank. A
        verbalizer maps each label to one or more label words (ids). Write `verbalize(logits,
        label_ids)`: the softmax over the vocabulary, each label's words' probabilities summed,
        then renormalised so that the labels' probabilities sum to one. Why renormalise, and
        what is lost by doing so?
    """,
    cases=_verbalize_cases,
    stub=verbalize,
    outputs=("label probabilities",),
    rtol=1e-5,
    hint=("logits.softmax(-1), then index the columns of each label's words.",
          "Stack the per-label sums into [B, n_labels] and divide by their row sums."),
))

# --------------------------------------------------------------------------- implement: calibration


def calibrate_probs(probs: np.ndarray, p_cf: np.ndarray) -> np.ndarray:
    """Return contextually calibrated label probabilities: each row of ``probs [n, L]``
    divided by the content-free distribution ``p_cf [L]`` and renormalised to sum to one (the
    same argmax as Zhao et al.'s ``softmax(W p + b)`` with ``W = diag(p_cf)^-1``, ``b = 0``)."""
    # Your code here.
    raise NotImplementedError("write calibrate_probs")


def _calibrate_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    out = [Case(args=(np.array([[0.8, 0.2]]), np.array([0.8, 0.2])), expected=np.array([[0.5, 0.5]]),
                label="the content-free input itself")]
    for L in (2, 3, 5):
        p = rng.dirichlet(np.ones(L), size=4)
        cf = rng.dirichlet(np.ones(L))
        q = p / cf
        out.append(Case(args=(p, cf), expected=q / q.sum(1, keepdims=True), label=f"{L} labels"))
    return out


register(Exercise(
    id="ch10.calibrate_probs",
    title="Contextual calibration",
    kind="implement",
    prompt="""
        A prompt whose content-free input ("N/A") already gets P(positive) = 0.8 is biased
        towards "positive". Zhao et al. correct every prediction with q = softmax(W p + b),
        where p is the vector of label probabilities (probabilities, not their logs),
        W = diag(p_cf)^-1 and b = 0; they then take the argmax. The softmax does not change
        which label wins. This exercise, like the book's `prompts.calibrate`, returns the
        renormalised ratios instead, q = (p / p_cf) / sum(p / p_cf), which have the same
        argmax as Zhao et al.'s q and sum to one. check() compares your q with these renormalised ratios (to a relative 1e-6). Write
        `calibrate_probs(probs, p_cf)`. What does the content-free input itself become?
    """,
    cases=_calibrate_cases,
    stub=calibrate_probs,
    outputs=("calibrated probabilities",),
    rtol=1e-6,
    hint=("Divide probs by p_cf (broadcast over the rows), then divide each row by its sum.",),
))

# --------------------------------------------------------------------------- extend: AutoPrompt


def hotflip_candidates(grad: torch.Tensor, embeddings: torch.Tensor, k: int) -> list[int]:
    """Return the ``k`` token ids whose embedding most decreases the loss to first order when
    it replaces a trigger token: the largest ``-grad . e_w`` over the rows ``e_w`` of
    ``embeddings [V, d]`` (``grad [d]`` is dL/d(trigger embedding))."""
    # Your code here.
    raise NotImplementedError("write hotflip_candidates")


def _hotflip_checker(grad, emb, k):
    def check(result):
        ids = list(result) if result is not None else []
        if len(ids) != k or len(set(ids)) != k:
            return False, f"expected {k} distinct token ids, got {ids!r}"
        score = -(emb @ grad)
        best = set(torch.topk(score, k).indices.tolist())
        return (set(ids) == best, f"the ids should be those with the largest -grad . e_w: {sorted(best)}")
    return check


def _hotflip_cases() -> list[Case]:
    out = []
    for seed, (V, d, k) in enumerate([(10, 4, 1), (50, 8, 5), (200, 16, 10)]):
        g = torch.Generator().manual_seed(seed)
        grad, emb = torch.randn(d, generator=g), torch.randn(V, d, generator=g)
        out.append(Case(args=(grad, emb, k), checker=_hotflip_checker(grad, emb, k), label=f"V={V}, k={k}"))
    return out


register(Exercise(
    id="ch10.hotflip_candidates",
    title="AutoPrompt's gradient-guided trigger search",
    kind="extend",
    prompt="""
        AutoPrompt (Shin et al. 2020) writes a prompt as "{text} [T] [T] [T] [MASK]." with
        trigger tokens [T] chosen by search, not by hand. Each step takes the gradient of the
        loss (the label words' cross-entropy at the blank) with respect to one trigger's input
        embedding and keeps the k vocabulary words w with the largest -grad . e_w -- the
        first-order estimate of how much swapping in w lowers the loss -- then tries each
        candidate and keeps the best.

        1. Write `hotflip_candidates(grad, embeddings, k)` (check() tests it).
        2. With `companion.transfer.prompts.minilm_cloze()`, build the loop: trigger ids
           inserted by a pattern, the gradient of `pet.PromptClassifier`'s loss with respect to
           the input embeddings (a hook on `encoder.embeddings.tok`), candidates, re-scoring
           on a batch of SST-2 training examples. Run it for 20 steps on 64 examples.
        3. Compare its zero-shot dev accuracy with the hand-written pattern's. Are the trigger
           tokens words a person would write?
    """,
    cases=_hotflip_cases,
    stub=hotflip_candidates,
    hint=("embeddings @ grad is [V]; negate it and take torch.topk.",),
))
