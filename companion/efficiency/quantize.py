"""Post-training dynamic int8 quantization of the Linear layers, written out; bf16 inference.

A weight matrix ``W [out, in]`` is stored as int8 with one scale per output row (*per
channel*, symmetric, zero point 0)::

    s_j = max_k |W_jk| / 127.5          q_jk = clamp(round(W_jk / s_j), -128, 127)

(PyTorch's observer spreads the range over the 255 steps from -128 to 127, hence 127.5; with
it our integers equal ``torch.ao.quantization.quantize_dynamic``'s, tested.) *Dynamic* means
the activations are quantized on the fly, per call: each row ``x`` of the input gets its own
scale ``s_x = max|x| / 127``. The product is then computed in integers and rescaled once::

    y_j = s_x s_j sum_k qx_k q_jk + b_j

:func:`torch._int_mm` does the int8 x int8 -> int32 product (where it is not available, an
exact float product of the integers stands in). Rounding each number to the nearest step costs
at most half a step, which gives the error bound of :func:`error_bound`.

That readable path makes separate passes over memory (quantize, multiply, rescale) and its
int8 x int8 product is not the fastest on x86. ``QuantizedLinear(..., kernel="fbgemm")`` packs
*our* integers and scales into PyTorch's fused dynamic kernel instead, which quantizes the
activations per tensor (7 bits, as ``quantize_dynamic``), multiplies unsigned x signed bytes and
rescales in one pass: its outputs equal ``quantize_dynamic``'s exactly (tested) and lie within
the per-tensor version of the bound.

The weights take a quarter of the bytes (plus one float per row); the speed-up on a CPU comes
from the integer matrix product. :func:`to_bf16` is the other cheap option: bfloat16 keeps
float32's exponent and 8 bits of mantissa, so it needs no scales at all.
"""

from __future__ import annotations

import copy
import io
import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

QMAX = 127.5  # PyTorch's symmetric int8 observer: range / ((127 - (-128)) / 2)
EPS = torch.finfo(torch.float32).eps


def quantize_per_channel(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 quantization of a 2-D float tensor: ``(q int8 [out, in], scale
    float32 [out])`` with ``w ~= q * scale[:, None]``. An all-zero row gets the smallest scale."""
    if w.dim() != 2 or not w.is_floating_point():
        raise ValueError(f"quantize_per_channel takes a 2-D float tensor, got shape {tuple(w.shape)}, dtype {w.dtype}")
    w = w.detach().float()
    scale = (w.abs().amax(dim=1) / QMAX).clamp(min=EPS)
    # times the float32 reciprocal, as PyTorch's kernels do: a tie such as -127.5 then falls
    # where theirs does (dividing can land exactly on it and round to -128)
    q = torch.clamp(torch.round(w * (1.0 / scale)[:, None]), -128, 127).to(torch.int8)
    return q, scale


def dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """``q * scale`` per row (``scale`` of shape ``[rows]``) or for the whole tensor (a scalar)."""
    return q.float() * (scale[:, None] if scale.dim() == 1 and q.dim() == 2 else scale)


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Dynamic symmetric int8 quantization of each row of a ``[n, k]`` activation matrix with
    scale ``max|x| / 127``: ``(q int8, scale [n])``."""
    lo, hi = torch.aminmax(x.detach(), dim=1)  # one pass; vector_norm(ord=inf) is ~10x slower here
    scale = (torch.maximum(hi, -lo) / 127.0).clamp(min=EPS)
    # |x / scale| <= 127 by construction, so no clamp; one multiply, then in place (each pass
    # over a large activation matrix costs)
    return (x * (1.0 / scale)[:, None]).round_().to(torch.int8), scale


def int8_matmul(a: torch.Tensor, b_t: torch.Tensor) -> torch.Tensor:
    """``a @ b_t.T`` for int8 ``a [n, k]`` and ``b_t [m, k]``, accumulated exactly: int32 from
    :func:`torch._int_mm` where the kernel takes these shapes, else float64 (exact for any k
    we use: |sum| <= k * 128^2 < 2^53)."""
    try:
        return torch._int_mm(a, b_t.t())
    except (RuntimeError, AttributeError):
        return (a.double() @ b_t.double().t()).to(torch.int32)


KERNELS = ("int_mm", "fbgemm")


class QuantizedLinear(nn.Module):
    """An ``nn.Linear`` with int8 per-channel weights and dynamic int8 activations.

    ``kernel="int_mm"`` (default) is the readable path: our per-row activation quantization,
    :func:`int8_matmul`, our rescaling. ``kernel="fbgemm"`` packs *our* int8 weights and scales
    into PyTorch's fused dynamic-quantized Linear (``torch.ops.quantized.linear_dynamic``,
    CPU only), which quantizes the activations itself -- one scale per tensor, 7 bits
    (``reduce_range``, as ``quantize_dynamic`` does) -- multiplies in integers and rescales
    in one pass over memory. Its error bound is :func:`error_bound` with
    ``activations="per_tensor_7bit"``."""

    def __init__(self, linear: nn.Linear, kernel: str = "int_mm"):
        super().__init__()
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        q, scale = quantize_per_channel(linear.weight)
        self.in_features, self.out_features, self.kernel = linear.in_features, linear.out_features, kernel
        self.register_buffer("weight_int8", q)
        self.register_buffer("weight_scale", scale)
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().float().clone())
        self._packed = self._pack() if kernel == "fbgemm" else None

    def _pack(self):
        """Our integers and scales as PyTorch's packed int8 weight (zero points 0)."""
        zeros = torch.zeros(self.out_features, dtype=torch.long)
        qw = torch._make_per_channel_quantized_tensor(self.weight_int8, self.weight_scale.double(), zeros, 0)
        return torch.ops.quantized.linear_prepack(qw, self.bias)

    def dequantized_weight(self) -> torch.Tensor:
        return dequantize(self.weight_int8, self.weight_scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).float()
        if self._packed is not None:
            if x2.device.type != "cpu":
                raise RuntimeError("kernel='fbgemm' runs on the CPU only; use kernel='int_mm' on other devices")
            y = torch.ops.quantized.linear_dynamic(x2, self._packed, True)
            return y.view(*shape[:-1], self.out_features).to(x.dtype)
        qx, sx = quantize_rows(x2)
        # int32 * float32 promotes to float32: the conversion and the first scale in one pass,
        # then in place: no extra [n, out] copies
        y = int8_matmul(qx, self.weight_int8) * self.weight_scale
        y.mul_(sx[:, None])
        if self.bias is not None:
            y.add_(self.bias)
        return y.view(*shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 per-channel, {self.kernel}"


def quantize_linears(model: nn.Module, skip: Sequence[str] = (), kernel: str = "int_mm") -> nn.Module:
    """A copy of ``model`` with every ``nn.Linear`` (except those whose name is in ``skip`` or
    ends with ``.name`` for a name in it) replaced by :class:`QuantizedLinear` (with
    ``kernel``). The original is
    unchanged. A Linear that shares its weight with an embedding (a tied output layer) gets its
    own int8 copy; the embedding stays float."""
    out = copy.deepcopy(model).eval()
    targets = [(n, m) for n, m in out.named_modules() if isinstance(m, nn.Linear)
               and not any(n == s or n.endswith("." + s) for s in skip)]
    if not targets:
        raise ValueError(f"{type(model).__name__} has no nn.Linear layer to quantize (after skip={list(skip)})")
    for name, lin in targets:
        parent_name, _, child = name.rpartition(".")
        parent = out.get_submodule(parent_name) if parent_name else out
        setattr(parent, child, QuantizedLinear(lin, kernel))
    return out


def error_bound(x: torch.Tensor, linear: nn.Linear, activations: str = "per_row") -> torch.Tensor:
    """A worst-case bound on ``|QuantizedLinear(x) - linear(x)|`` per output, ``[n, out]``.

    With ``x_k = s_x qx_k + e_k`` (``|e_k| <= s_x / 2``) and ``W_jk = s_j q_jk + d_jk``
    (``|d_jk| <= s_j / 2``), the error of ``sum_k x_k W_jk`` is at most
    ``sum_k (|x_k| s_j / 2 + |W_jk| s_x / 2 + s_x s_j / 4)``.

    ``activations="per_row"``: our kernel's step ``s_x = max|x_row| / 127``;
    ``"per_tensor_7bit"``: the fused kernel's (``kernel="fbgemm"``, ``quantize_dynamic``),
    one asymmetric step for the whole input, ``(max(x, 0) - min(x, 0)) / 127``.
    """
    x2 = x.reshape(-1, x.shape[-1]).float()
    _, sw = quantize_per_channel(linear.weight)
    if activations == "per_row":
        _, sx = quantize_rows(x2)
    elif activations == "per_tensor_7bit":
        step = (x2.max().clamp(min=0) - x2.min().clamp(max=0)) / 127.0
        sx = step.expand(x2.shape[0])
    else:
        raise ValueError(f"activations must be 'per_row' or 'per_tensor_7bit', got {activations!r}")
    w = linear.weight.detach().float()
    k = x2.shape[1]
    return (x2.abs().sum(1, keepdim=True) * sw[None, :] / 2 + sx[:, None] * w.abs().sum(1)[None, :] / 2
            + k * sx[:, None] * sw[None, :] / 4)


def to_bf16(model: nn.Module) -> nn.Module:
    """A bfloat16 copy of ``model`` for inference (integer inputs such as token ids stay as they are)."""
    return copy.deepcopy(model).to(torch.bfloat16).eval()


def state_dict_bytes(model: nn.Module) -> int:
    """Bytes of ``torch.save(model.state_dict())``: the size on disk, whatever the module types
    (a fair yardstick between our int8 buffers and PyTorch's packed quantized weights)."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getbuffer().nbytes


def linear_weight_bytes(model: nn.Module) -> int:
    """Bytes of the Linear layers' weights (and, for quantized ones, their scales): what
    quantization shrinks. Embeddings and layer norms are not counted."""
    n = 0
    for m in model.modules():
        if isinstance(m, nn.Linear):
            n += m.weight.numel() * m.weight.element_size()
        elif isinstance(m, QuantizedLinear):
            n += m.weight_int8.numel() + m.weight_scale.numel() * 4
    return n


def latency(fns: dict[str, Callable[[], object]], repeats: int = 5, inner: int = 3,
            grad: bool = False) -> dict[str, float]:
    """Seconds per call of each function, the best of ``repeats`` rounds of ``inner`` calls.
    The rounds alternate between the functions, so a change in the machine's load hits all of
    them alike (compare them as ratios from one run). Each function is called once first.
    Gradients are off unless ``grad`` (to time training steps)."""
    if not fns:
        raise ValueError("nothing to time: pass at least one function")
    best = {k: float("inf") for k in fns}
    with torch.set_grad_enabled(grad):
        for f in fns.values():
            f()
        for _ in range(repeats):
            for k, f in fns.items():
                t0 = time.perf_counter()
                for _ in range(inner):
                    f()
                best[k] = min(best[k], (time.perf_counter() - t0) / inner)
    return best


def torch_dynamic_int8(model: nn.Module, per_channel: bool = True) -> nn.Module:
    """The peer: ``torch.ao.quantization.quantize_dynamic`` on a copy of ``model``'s Linear
    layers (per-channel int8 weights when ``per_channel``, else PyTorch's per-tensor default)."""
    import warnings

    from torch.ao.quantization import (
        default_dynamic_qconfig,
        per_channel_dynamic_qconfig,
        quantize_dynamic,
    )

    qconfig = per_channel_dynamic_qconfig if per_channel else default_dynamic_qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization announces its move to torchao
        return quantize_dynamic(copy.deepcopy(model).eval(), {nn.Linear: qconfig}, dtype=torch.qint8)


def relative_error(y: torch.Tensor, ref: torch.Tensor) -> float:
    """``||y - ref|| / ||ref||`` (Frobenius)."""
    return float((y.float() - ref.float()).norm() / ref.float().norm().clamp(min=1e-30))


def linear_error_table(linear: nn.Linear, x: torch.Tensor) -> dict[str, float]:
    """Relative output error of our int8 layer, PyTorch's (per-channel) and bf16 against float32."""
    ref = linear(x)
    ours = QuantizedLinear(linear)(x)
    peer = torch_dynamic_int8(nn.Sequential(linear))(x)
    bf = F.linear(x.bfloat16(), linear.weight.bfloat16(),
                  None if linear.bias is None else linear.bias.bfloat16()).float()
    return {"int8 (ours)": relative_error(ours, ref), "int8 (torch)": relative_error(peer, ref),
            "bf16": relative_error(bf, ref)}


__all__ = ["KERNELS", "QMAX", "QuantizedLinear", "dequantize", "error_bound", "int8_matmul", "latency", "linear_error_table",
           "linear_weight_bytes", "quantize_linears", "quantize_per_channel", "quantize_rows", "relative_error",
           "state_dict_bytes", "to_bf16", "torch_dynamic_int8"]
