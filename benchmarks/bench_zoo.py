"""The zoo's training step against Hugging Face transformers' at the same configuration.

``companion.zoo`` trains ``gpt-book`` and ``bert-book`` (d = 256, 4 layers, 4 heads, rows of 128
tokens, batches of 32, a 4,099-id vocabulary) with our own GPT and BERT. This times one training
step (forward, backward, AdamW) of ours and of HF's ``GPT2LMHeadModel`` / ``BertForMaskedLM``
built with the same sizes, on random ids, one thread, CPU time, median of paired steps (the
machine may be shared; the ratio is what travels). BERT's batches mask 15 % of positions; ours
sends only those through the output layer, HF's computes every position's logits.

Run alone with ``python -m benchmarks.bench_zoo`` or through ``python -m benchmarks zoo``.

Measured 2026-12-03 with ``python -m benchmarks zoo`` (torch 2.13.0, transformers as the ``peers``
extra installs it) on a 2-core x86 machine with AVX-512, load average about 7 (two training runs
and notebook executions beside it), one thread, median of 5 steps: GPT 1.15 s ours vs 1.40 s HF
(HF / ours 1.22), BERT 0.89 s vs 1.18 s (1.32); ours 3,572 and 4,598 tokens per CPU-second. HF's
GPT-2 predicts 127 targets per row (it shifts the labels itself), ours 128.
"""

from __future__ import annotations

import statistics
import time

import torch

from companion.transformer.bert import BertConfig, BertForPreTraining, mask_tokens
from companion.transformer.gpt import GPT, GPTConfig

V, D, L, H, T, B = 4099, 256, 4, 4, 128, 32


def _step_times(model, loss_fn, batch, repeats: int) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for i in range(repeats + 1):
        c0 = time.process_time()
        loss = loss_fn(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i:  # the first step warms up allocations
            times.append(time.process_time() - c0)
    return times


def run(repeats: int = 5) -> dict:
    """Median CPU seconds per step, ours and HF's, and their ratios (HF / ours: > 1, ours faster)."""
    from transformers import BertConfig as HFBertConfig
    from transformers import BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, V - 8, (B, T + 1), generator=g)
    ours_gpt = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=L, n_head=H, d_model=D), seed=0)
    hf_gpt = GPT2LMHeadModel(GPT2Config(vocab_size=V, n_positions=T, n_embd=D, n_layer=L, n_head=H,
                                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                        bos_token_id=0, eos_token_id=0))
    cfg = BertConfig(vocab_size=V, max_len=T, n_layer=L, n_head=H, d_model=D)
    am = torch.ones(B, T, dtype=torch.long)
    inputs, labels = mask_tokens(ids[:, :T], cfg, attention_mask=am, generator=g)
    ours_bert = BertForPreTraining(cfg, seed=0)
    hf_bert = BertForMaskedLM(HFBertConfig(vocab_size=V, hidden_size=D, num_hidden_layers=L, num_attention_heads=H,
                                           intermediate_size=4 * D, max_position_embeddings=T,
                                           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    t = {
        "gpt_ours_s": _step_times(ours_gpt, lambda m, b: m.loss(b), ids, repeats),
        "gpt_hf_s": _step_times(hf_gpt, lambda m, b: m(input_ids=b[:, :T], labels=b[:, :T]).loss, ids, repeats),
        "bert_ours_s": _step_times(ours_bert, lambda m, b: m.loss(b),
                                   {"ids": inputs, "attention_mask": am, "labels": labels}, repeats),
        "bert_hf_s": _step_times(hf_bert, lambda m, b: m(input_ids=b[0], attention_mask=am, labels=b[1]).loss,
                                 (inputs, labels), repeats),
    }
    out = {k: statistics.median(v) for k, v in t.items()}
    out["gpt_hf_over_ours_ratio"] = out["gpt_hf_s"] / out["gpt_ours_s"]
    out["bert_hf_over_ours_ratio"] = out["bert_hf_s"] / out["bert_ours_s"]
    out["gpt_ours_tokens_per_cpu_s"] = B * T / out["gpt_ours_s"]
    out["bert_ours_tokens_per_cpu_s"] = B * T / out["bert_ours_s"]
    return out


if __name__ == "__main__":
    for k, v in run().items():
        print(f"{k:28s} {v:,.3f}")
