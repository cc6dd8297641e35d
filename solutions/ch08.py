"""Reference solutions for chapter 8 (try the exercises first!). 08a's answers come first; 08b
appends its own after the ``# --- 08b ---`` marker."""

from __future__ import annotations

import torch


def permutation_masks(rank: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Position i's content may see j when j comes no later in the order; its query only when j
    comes strictly earlier. The identity order gives a causal mask (content) and a causal mask
    without its diagonal (query): a left-to-right LM, where the query of position i is the
    content stream of position i - 1."""
    r = torch.as_tensor(rank)
    return r[None, :] <= r[:, None], r[None, :] < r[:, None]


def albert_embedding_params(V: int, H: int, E: int) -> tuple[int, int]:
    """BERT: V H. ALBERT: V E + E H + H. For V = 30,000, H = 4,096, E = 128: 122.9 M against
    4.4 M, a factor of 28."""
    return V * H, V * E + E * H + H


def rtd_labels(original: torch.Tensor, corrupted: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """The bug: a masked position where the generator sampled the original token was labelled
    'replaced'. ELECTRA labels it 'original' -- the discriminator's input there *is* the
    original token, and no model could tell otherwise."""
    return (corrupted != original).float()


def generator_size_study(fractions=(0.125, 0.25, 0.5, 1.0), seeds=(0, 1)):
    """A worked answer (minutes at laptop scale). At our tiny scale expect the differences to sit
    inside the seeds' spread: the paper's curve comes from models trained 1,000x longer."""
    import numpy as np
    import pandas as pd

    from companion.evaluate.glue import GLUE_TASKS, load_glue
    from companion.pretraining import chapter8a as c8
    from companion.pretraining.electra import ElectraObjective

    S = c8.sizes()
    corpus = c8.load_corpus(S)
    tasks = {t: load_glue(t) for t in GLUE_TASKS}
    budget = c8.flops_budget(corpus, S)
    rows = {}
    for f in fractions:
        obj = ElectraObjective(corpus.vocab, gen_fraction=f)
        runs = [c8.run_objective(obj, corpus, S, budget, tasks, seed) for seed in seeds]
        glue = [c8._glue_avg(r.glue, tasks) for r in runs]
        batch = obj.make_batch(corpus.heldout[: S.batch_size], torch.Generator().manual_seed(0))
        with torch.no_grad():
            replaced = float(obj.losses(runs[0].result.model, batch)["replaced"])
        rows[f] = {"steps": runs[0].result.steps, "GLUE-lite": np.mean(glue), "sd": np.std(glue, ddof=1),
                   "replaced share": replaced}
    return pd.DataFrame(rows).T


def electra_15_loss(d_logits: torch.Tensor, rtd_labels: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """The discriminator's BCE over the masked positions only. Plugged into ``ElectraObjective
    .losses`` (``chosen = batch["labels"] != -100``) it is the paper's "ELECTRA 15 %" ablation.
    Not run here: at the chapter's laptop budget no GLUE-lite difference between objectives was
    outside the seeds' spread, so the comparison needs the gpu preset."""
    import torch.nn.functional as F

    return F.binary_cross_entropy_with_logits(d_logits[chosen], rtd_labels[chosen])


# --- 08b ---

def b_seq2seq_mask(T, src_len):
    """Causal, plus every query may see the whole source."""
    return torch.ones(T, T, dtype=torch.bool).tril() | (torch.arange(T) < src_len)


def b_infilled_length(n, ratio, lam):
    """Kept tokens plus one [MASK] per span; the spans (mean length lam) cover ratio * n tokens."""
    masked = round(ratio * n)
    return n - masked + masked / lam


def b_unrotate(rotated, k):
    """ids[0] sits at index len(rotated) - k of the rotated text."""
    n = len(rotated)
    return rotated[n - k:] + rotated[:n - k] if k else list(rotated)


def b_drop_corruption(ids, density, seed):
    """T5's span layout (companion.pretraining.t5), without sentinels: the noise spans leave the
    input and form the target, in order. (Wrapping it as an objective and comparing translation
    loss is left as the open part of the exercise; it was not measured here.)"""
    from companion.pretraining.t5 import random_segmentation, span_layout

    g = torch.Generator().manual_seed(seed)
    n_noise, n_spans = span_layout(len(ids), density)
    noise = random_segmentation(n_noise, n_spans, g)
    keep = random_segmentation(len(ids) - n_noise, n_spans, g)
    inp, tgt, pos = [], [], 0
    for a, b in zip(keep, noise):
        inp += ids[pos:pos + a]
        tgt += ids[pos + a:pos + a + b]
        pos += a + b
    return inp, tgt
