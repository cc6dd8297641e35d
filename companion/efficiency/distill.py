"""Knowledge distillation: a small *student* trained to imitate a large *teacher*.

* :func:`soft_targets` / :func:`kd_loss` -- Hinton, Vinyals & Dean (2015): soften both output
  distributions with a temperature ``T`` and minimise ``T^2 KL(p_teacher^T || p_student^T)``.
  The ``T^2`` keeps the soft term's gradients on the scale of the hard term's as ``T`` grows
  (the gradient of the softened cross-entropy shrinks as ``1/T^2``).
* :func:`distilbert_loss` -- DistilBERT's triple loss (Sanh et al. 2019): the soft-target
  cross-entropy on the masked positions, the student's own masked-LM loss, and a cosine loss
  that aligns the directions of the student's and the teacher's hidden states.
* :func:`every_other_layer` -- DistilBERT's initialisation: the student keeps the teacher's
  width, its embeddings, and one layer out of two.
* :func:`hidden_states` / :func:`tinybert_loss` -- TinyBERT (Jiao et al. 2020): the student's
  hidden states (through a learned projection when the widths differ) and attention maps are
  regressed onto the teacher's, layer ``m`` of the student onto layer ``m * N / M`` of the
  teacher, embeddings onto embeddings.
* :func:`distill_classifier` -- task-specific distillation of a fine-tuned classifier
  (:class:`~companion.transformer.bert.BertForSequence`) into a student, through
  :func:`companion.train.fit`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..device import get_device
from ..train import History, TrainConfig, fit
from ..transformer.attention import padding_mask, scaled_dot_product_attention
from ..transformer.bert import (
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    mean_pool,
)

# DistilBERT's published weights of its three losses (soft CE, MLM, cosine)
DISTILBERT_WEIGHTS = (5.0, 2.0, 1.0)


def _check_temperature(T: float) -> None:
    if not (isinstance(T, (int, float)) and math.isfinite(T) and T > 0):
        raise ValueError(f"temperature must be a positive finite number, got {T!r}")


def soft_targets(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """``softmax(logits / T)`` over the last dimension: ``T > 1`` spreads the probability over
    the wrong classes, which is where a teacher's "dark knowledge" lives."""
    _check_temperature(temperature)
    return (logits / temperature).softmax(-1)


def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 2.0) -> torch.Tensor:
    """Hinton et al.'s soft-target loss, ``T^2 * KL(p_t || p_s)`` with both softened by ``T``,
    averaged over the rows (every dimension but the last is a row).

    Minimising the KL is minimising the soft cross-entropy ``-sum p_t log p_s``; the two differ
    by the teacher's entropy, a constant for the student. The teacher gets no gradient.
    """
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(f"student and teacher logits must have the same shape, got {tuple(student_logits.shape)} "
                         f"and {tuple(teacher_logits.shape)}")
    _check_temperature(temperature)
    V = student_logits.shape[-1]
    log_ps = F.log_softmax(student_logits.reshape(-1, V) / temperature, -1)
    log_pt = F.log_softmax(teacher_logits.detach().reshape(-1, V) / temperature, -1)
    kl = F.kl_div(log_ps, log_pt, reduction="batchmean", log_target=True)
    return kl * temperature**2


def hard_soft_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, labels: torch.Tensor,
                   temperature: float = 2.0, alpha: float = 0.5) -> torch.Tensor:
    """``alpha * kd_loss + (1 - alpha) * cross-entropy with the true labels`` (Hinton et al.'s
    weighted average of the soft and the hard objective)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    hard = F.cross_entropy(student_logits, labels)
    return alpha * kd_loss(student_logits, teacher_logits, temperature) + (1 - alpha) * hard


def cosine_hidden_loss(h_student: torch.Tensor, h_teacher: torch.Tensor,
                       attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """DistilBERT's cosine embedding loss: the mean of ``1 - cos(h_s, h_t)`` over the real
    tokens (``attention_mask`` 1) of ``[B, T, d]`` hidden states. Directions only: the lengths
    of the vectors are left free."""
    if h_student.shape != h_teacher.shape:
        raise ValueError(f"hidden states must have the same shape, got {tuple(h_student.shape)} and "
                         f"{tuple(h_teacher.shape)}; the cosine loss needs the student as wide as the teacher")
    cos = F.cosine_similarity(h_student, h_teacher.detach(), dim=-1)
    if attention_mask is None:
        return (1 - cos).mean()
    m = attention_mask.to(cos.dtype)
    return ((1 - cos) * m).sum() / m.sum().clamp(min=1)


def distilbert_loss(student: BertForPreTraining, teacher: BertForPreTraining, batch: dict[str, torch.Tensor],
                    temperature: float = 2.0,
                    weights: tuple[float, float, float] = DISTILBERT_WEIGHTS) -> dict[str, torch.Tensor]:
    """DistilBERT's triple loss on one masked-LM batch (``ids``, ``labels``, optional
    ``attention_mask``): ``{"soft", "mlm", "cos", "total"}`` with ``total = w_soft * soft +
    w_mlm * mlm + w_cos * cos`` (the paper's code weights them 5, 2, 1).

    ``soft`` is :func:`kd_loss` between the two MLM heads at the masked positions, ``mlm`` the
    student's cross-entropy with the true tokens there, ``cos`` :func:`cosine_hidden_loss`
    between the last hidden states over every real token.
    """
    labels, am = batch["labels"], batch.get("attention_mask")
    chosen = labels != -100
    if not chosen.any():
        raise ValueError("no position of the batch is masked (labels all -100): nothing to distil")
    h_s = student.encoder(batch["ids"], batch.get("segments"), am)
    with torch.no_grad():
        teacher.eval()
        h_t = teacher.encoder(batch["ids"], batch.get("segments"), am)
        t_logits = teacher.mlm(h_t[chosen])
    s_logits = student.mlm(h_s[chosen])
    out = {"soft": kd_loss(s_logits, t_logits, temperature), "mlm": F.cross_entropy(s_logits, labels[chosen]),
           "cos": cosine_hidden_loss(h_s, h_t, am)}
    out["total"] = weights[0] * out["soft"] + weights[1] * out["mlm"] + weights[2] * out["cos"]
    return out


# ------------------------------------------------------------------------------ students


def every_other_layer(teacher: BertEncoder | BertForPreTraining, layers: Sequence[int] | None = None):
    """A student copied from ``teacher``: the same embeddings (and heads) with only the blocks
    in ``layers`` (default ``0, 2, 4, ...``: one out of two, DistilBERT's choice). Returns a new
    model of the teacher's type; the teacher is not changed."""
    enc = teacher.encoder if isinstance(teacher, BertForPreTraining) else teacher
    if not isinstance(enc, BertEncoder):
        raise TypeError(f"every_other_layer takes a BertEncoder or a BertForPreTraining, got {type(teacher).__name__}")
    n = enc.config.n_layer
    layers = list(range(0, n, 2)) if layers is None else list(layers)
    if not layers or any(not 0 <= i < n for i in layers) or len(set(layers)) != len(layers):
        raise ValueError(f"layers must be distinct indices in 0..{n - 1}, got {layers}")
    student = copy.deepcopy(teacher)
    s_enc = student.encoder if isinstance(student, BertForPreTraining) else student
    s_enc.blocks = nn.ModuleList(s_enc.blocks[i] for i in layers)
    s_enc.config = dataclasses.replace(enc.config, n_layer=len(layers))
    if isinstance(student, BertForPreTraining):
        student.config = s_enc.config
    return student


def hidden_states(encoder: BertEncoder, ids: torch.Tensor, segments: torch.Tensor | None = None,
                  attention_mask: torch.Tensor | None = None,
                  attentions: bool = False) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Every layer's output of a BERT encoder, with gradients: ``([embeddings, layer 1, ...,
    layer N], [attention probabilities of layer 1..N, each [B, H, T, T]])`` (the second list is
    empty unless ``attentions``). With ``attentions`` each post-LN block is run step by step
    through our explicit :func:`~companion.transformer.attention.scaled_dot_product_attention`,
    so the maps come from the same pass as the hidden states (one forward pass, not two;
    tested equal to the encoder's own output)."""
    if ids.shape[1] > encoder.config.max_len:
        raise ValueError(f"sequence of {ids.shape[1]} tokens exceeds max_len={encoder.config.max_len}; truncate it")
    mask = None if attention_mask is None or bool(attention_mask.all()) else padding_mask(attention_mask)
    x = encoder.embeddings(ids, segments)
    hs, maps = [x], []
    for block in encoder.blocks:
        if attentions:
            if block.pre_ln:
                raise ValueError("hidden_states(attentions=True) follows BERT's post-LN blocks")
            a = block.attn
            B, T, C = x.shape
            q, k, v = a.qkv(x).view(B, T, 3, a.n_head, a.head_dim).permute(2, 0, 3, 1, 4)
            y, w = scaled_dot_product_attention(q, k, v, None if mask is None else mask[:, None],
                                                a.dropout if block.training else 0.0, block.training)
            maps.append(w)
            x = block.ln_1(x + block.drop(a.proj(y.transpose(1, 2).reshape(B, T, C))))
            x = block.ln_2(x + block.mlp(x))  # Block.forward's post-LN path, as written there
        else:
            x = block(x, mask)
        hs.append(x)
    return hs, maps


def layer_map(n_student: int, n_teacher: int) -> list[int]:
    """TinyBERT's uniform mapping: student layer ``m`` (1-based) learns from teacher layer
    ``m * N / M``; index 0 (the embeddings) maps to 0."""
    if n_teacher % n_student:
        raise ValueError(f"the teacher's {n_teacher} layers do not divide evenly into the student's {n_student}")
    step = n_teacher // n_student
    return [0] + [m * step for m in range(1, n_student + 1)]


def tinybert_loss(student: BertEncoder, teacher: BertEncoder, batch: dict[str, torch.Tensor],
                  proj: nn.Module | None = None) -> dict[str, torch.Tensor]:
    """TinyBERT's intermediate-layer loss on one batch: ``{"hidden", "attention", "total"}``.

    ``hidden`` sums ``MSE(H_s^m W, H_t^{g(m)})`` over the embeddings and every student layer
    (``proj`` is ``W``, needed when the student is narrower; ``None``: the identity);
    ``attention`` sums ``MSE(A_s^m, A_t^{g(m)})`` over the student's layers, on attention
    probabilities. (TinyBERT's code compares the scores before the softmax; probabilities are
    bounded and need no special case for the masked -inf entries.) Padding rows and columns are
    compared too -- both models see the same mask.
    """
    am = batch.get("attention_mask")
    hs_s, at_s = hidden_states(student, batch["ids"], batch.get("segments"), am, attentions=True)
    with torch.no_grad():
        teacher.eval()
        hs_t, at_t = hidden_states(teacher, batch["ids"], batch.get("segments"), am, attentions=True)
    return tinybert_terms(hs_s, at_s, hs_t, at_t, proj)


def tinybert_terms(hs_s: list[torch.Tensor], at_s: list[torch.Tensor], hs_t: list[torch.Tensor],
                   at_t: list[torch.Tensor], proj: nn.Module | None = None) -> dict[str, torch.Tensor]:
    """:func:`tinybert_loss` from hidden states and maps already computed (by
    :func:`hidden_states`), so that a caller that also needs the logits runs each model once."""
    g = layer_map(len(at_s), len(at_t))
    p = proj if proj is not None else nn.Identity()
    hidden = sum(F.mse_loss(p(hs_s[m]), hs_t[g[m]]) for m in range(len(hs_s)))
    attention = sum(F.mse_loss(at_s[m - 1], at_t[g[m] - 1]) for m in range(1, len(hs_s)))
    return {"hidden": hidden, "attention": attention, "total": hidden + attention}


def head_logits(model: BertForSequence, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """A classifier's logits from its encoder's last hidden states (``BertForSequence.forward``
    after the encoder), so that the encoder need not run again."""
    v = model.pooler(hidden) if model.pooling == "cls" else mean_pool(hidden, batch.get("attention_mask"))
    return model.head(model.drop(v))


# ------------------------------------------------------------------------------ task distillation


@dataclass
class DistillConfig:
    """How a classifier is distilled: ``alpha`` weighs :func:`kd_loss` at ``temperature`` against
    the true labels; ``tinybert`` adds :func:`tinybert_loss` between the encoders (weight 1)."""

    temperature: float = 2.0
    alpha: float = 0.5
    tinybert: bool = False

    def __post_init__(self):
        _check_temperature(self.temperature)
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")


def classifier_loss(student: BertForSequence, teacher: BertForSequence, batch: dict[str, torch.Tensor],
                    cfg: DistillConfig, proj: nn.Module | None = None) -> torch.Tensor:
    """One batch's distillation loss for a sentence classifier (labels are class indices)."""
    if batch["labels"].is_floating_point():
        raise ValueError("distill_classifier distils classifiers; this batch has real-valued labels (regression)")
    if not cfg.tinybert:
        with torch.no_grad():
            teacher.eval()
            t_logits = teacher(batch)
        return hard_soft_loss(student(batch), t_logits, batch["labels"], cfg.temperature, cfg.alpha)
    # one pass per model gives the logits, the hidden states and the attention maps
    ids, seg, am = batch["ids"], batch.get("segments"), batch.get("attention_mask")
    hs_s, at_s = hidden_states(student.encoder, ids, seg, am, attentions=True)
    with torch.no_grad():
        teacher.eval()
        hs_t, at_t = hidden_states(teacher.encoder, ids, seg, am, attentions=True)
        t_logits = head_logits(teacher, hs_t[-1], batch)
    loss = hard_soft_loss(head_logits(student, hs_s[-1], batch), t_logits, batch["labels"], cfg.temperature,
                          cfg.alpha)
    return loss + tinybert_terms(hs_s, at_s, hs_t, at_t, proj)["total"]


def distill_classifier(student: BertForSequence, teacher: BertForSequence,
                       batches: Callable[[int], list[dict[str, torch.Tensor]]], cfg: DistillConfig,
                       train: TrainConfig) -> History:
    """Train ``student`` on ``batches`` (``epoch -> list of batches`` with ``labels``) against
    the frozen ``teacher`` with :func:`companion.train.fit`. Returns the history."""
    if not isinstance(student, BertForSequence) or not isinstance(teacher, BertForSequence):
        raise TypeError("distill_classifier takes two BertForSequence models (student, teacher)")
    teacher.to(get_device(train.device))
    for p in teacher.parameters():
        p.requires_grad_(False)
    try:
        return fit(student, batches, config=train, loss_fn=lambda m, b: classifier_loss(m, teacher, b, cfg))
    finally:
        for p in teacher.parameters():
            p.requires_grad_(True)


__all__ = [
    "DISTILBERT_WEIGHTS",
    "DistillConfig",
    "classifier_loss",
    "cosine_hidden_loss",
    "distilbert_loss",
    "distill_classifier",
    "every_other_layer",
    "hard_soft_loss",
    "head_logits",
    "hidden_states",
    "kd_loss",
    "layer_map",
    "soft_targets",
    "tinybert_loss",
    "tinybert_terms",
]
