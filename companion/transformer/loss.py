"""The language-model loss without the ``[N, V]`` logits: output layer and cross-entropy fused.

A GPT's last step turns ``N = B * T`` hidden states ``h [N, d]`` into logits ``z = h W^T``
(``[N, V]``, V the vocabulary) and averages ``-log softmax(z)[target]``. Done the plain way,
autograd keeps the logits and their log-softmax (two ``N x V`` tensors: 33 MB each at the
chapter's benchmark size), and the backward pass reads and writes them twice more (the
log-softmax backward, then a zero-filled ``N x V`` gradient for the NLL). On a CPU those passes
over memory cost about as much as the output layer's three matrix products.

:func:`linear_cross_entropy` computes the same loss in row chunks that fit in the cache. The
gradient of the mean cross-entropy with respect to the logits is known in closed form,
``(softmax(z) - onehot(target)) / n``, so each chunk's gradient is computed right after its
loss, while the chunk is still in cache, and pushed through the output layer at once:
``dL/dh = G W`` and ``dL/dW = G^T h``. The backward pass only scales the stored gradients by
the incoming one. The matrix products are the same three as before; what goes is the memory
traffic. Values and gradients equal ``F.cross_entropy(h @ W.T, targets)`` (tested).

Under ``torch.autocast`` the products run in the autocast dtype and the softmax in fp32.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


def _chunk_rows(vocab: int) -> int:
    """Rows per chunk: a ``[rows, V]`` fp32 block of about 4 MB (it stays in L2/L3 cache)."""
    return max(16, (1 << 20) // max(vocab, 1))


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk: int, grad_on: bool):
        dev = h.device.type
        dtype = torch.get_autocast_dtype(dev) if torch.is_autocast_enabled(dev) else h.dtype
        acc = torch.promote_types(dtype, torch.float32)  # softmax and sums: fp32 at least (fp64 stays)
        want_h, want_w = grad_on and ctx.needs_input_grad[0], grad_on and ctx.needs_input_grad[1]
        with torch.autocast(dev, enabled=False):
            hc, wc = h.to(dtype), weight.to(dtype)
            valid = targets != IGNORE_INDEX
            n = valid.sum()
            scale = 1.0 / n.clamp(min=1).to(acc)
            safe = targets.clamp(min=0)
            gh = torch.empty_like(h) if want_h else None
            gw = torch.zeros(weight.shape, dtype=acc, device=weight.device) if want_w else None
            total = torch.zeros((), dtype=acc, device=h.device)
            for s in range(0, h.shape[0], chunk):
                e = min(s + chunk, h.shape[0])
                logp = torch.log_softmax((hc[s:e] @ wc.t()).to(acc), dim=-1)  # [rows, V], in cache
                t, v = safe[s:e, None], valid[s:e]
                total -= logp.gather(1, t).squeeze(1)[v].sum()
                if not (want_h or want_w):
                    continue
                # d(mean CE)/dz = (softmax - onehot) / n, zero on ignored rows; built in place
                g = logp.exp_()
                g.scatter_add_(1, t, torch.full_like(t, -1, dtype=g.dtype))
                g.mul_(torch.where(v, scale, 0.0)[:, None])
                g = g.to(dtype)
                if gh is not None:
                    gh[s:e] = g @ wc
                if gw is not None:
                    if dtype == acc:  # addmm's out= form: FlopCounterMode counts it
                        torch.addmm(gw, g.t(), hc[s:e], out=gw)
                    else:
                        gw.add_(g.t() @ hc[s:e])
        ctx.grads = (gh, None if gw is None else gw.to(weight.dtype))
        return total / n  # nan when every target is ignored, as F.cross_entropy

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor):
        gh, gw = ctx.grads
        return (None if gh is None else gh * grad, None if gw is None else gw * grad, None, None, None)


def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                         chunk: int | None = None) -> torch.Tensor:
    """``F.cross_entropy(h @ weight.T, targets, ignore_index=-100)`` (the mean over the targets
    that are not -100) without keeping the ``[N, V]`` logits.

    ``h`` is ``[..., d]``, ``weight`` the output layer's ``[V, d]`` matrix (no bias: GPT's tied
    head), ``targets`` ``[...]`` integer ids. ``chunk`` rows are processed at a time (default:
    about 4 MB of logits). With gradients off only the loss is computed.
    """
    if h.shape[:-1] != targets.shape:
        raise ValueError(f"targets {tuple(targets.shape)} must match the hidden states' leading shape "
                         f"{tuple(h.shape[:-1])}")
    if weight.dim() != 2 or weight.shape[1] != h.shape[-1]:
        raise ValueError(f"weight must be [vocab, {h.shape[-1]}], got {tuple(weight.shape)}")
    if targets.is_floating_point():
        raise TypeError(f"targets are token ids (an integer tensor), got dtype {targets.dtype}")
    chunk = chunk or _chunk_rows(weight.shape[0])
    return _LinearCrossEntropy.apply(h.reshape(-1, h.shape[-1]), weight, targets.reshape(-1), chunk,
                                     torch.is_grad_enabled())


def reference_cross_entropy(h: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The plain computation :func:`linear_cross_entropy` equals: logits, then cross-entropy."""
    logits = h @ weight.t()
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))  # bf16 -> fp32, fp64 stays
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE_INDEX)
