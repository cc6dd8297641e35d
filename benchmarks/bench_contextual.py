"""Chapter 6a benchmark: training throughput of the LSTM language model built from our LSTM cell
(a Python loop over time steps, ``companion.contextual.lstm_lm.ManualLSTM``) and from
``torch.nn.LSTM`` (fused kernels), same sizes and data, timed in one run; the *ratio* is the
number to compare across machines.

Run alone with ``python -m benchmarks.bench_contextual`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json

from companion.contextual.recipes import cell_speed
from companion.device import describe, get_device

SIZES = ((32, 64), (64, 128), (128, 256))  # (emb_dim, hidden)


def run(*, steps: int = 3, device: str | None = None) -> dict:
    """Tokens/s of one training step (median of ``steps``) for each size, ours vs ``nn.LSTM``,
    with a small vocabulary (500 words) so that the recurrence, not the softmax, dominates."""
    out: dict = {"device": describe(get_device(device))}
    for emb, hid in SIZES:
        r = cell_speed(emb_dim=emb, hidden=hid, vocab_size=500, batch_size=64, seq_len=35,
                       steps=steps, device=device)
        out[f"nn_lstm_speedup_h{hid}"] = round(r["speedup"], 2)
        out[f"ours_tokens_per_s_h{hid}"] = round(r["ours_tokens_per_s"])
        out[f"torch_tokens_per_s_h{hid}"] = round(r["torch_tokens_per_s"])
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
