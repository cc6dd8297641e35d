"""Chapter 8's ELECTRA in Hugging Face's layout (for the peer tests; nothing here needs
``transformers``).

Our :class:`~.electra.Electra` is HF's pair ``ElectraForPreTraining`` (the discriminator) +
``ElectraForMaskedLM`` (the generator) up to parameter names:

* the discriminator is a BERT encoder (fused ``qkv`` here, separate query/key/value there) with
  HF's ``discriminator_predictions`` (dense, activation, 1-logit dense) as our ``head``;
* the generator reads the *discriminator's* embeddings: in HF terms a model with
  ``embedding_size = d`` (the discriminator's width) and ``hidden_size = d_gen``, whose
  ``embeddings_project`` is our ``down`` map, whose ``generator_predictions`` (dense, GELU,
  LayerNorm) are our ``up`` + GELU + ``ln``, and whose tied ``generator_lm_head`` is the shared
  token table plus our ``bias``. The shared embeddings are simply written into both HF models.
"""

from __future__ import annotations

import torch

from ..transformer.hf import _BERT_BLOCK, _BERT_EMB, HF_ACT
from .electra import Electra


def _layers(blocks, prefix: str) -> dict[str, torch.Tensor]:
    out = {}
    for i, block in enumerate(blocks):
        sd = block.state_dict()
        pre = f"{prefix}encoder.layer.{i}."
        for p in ("weight", "bias"):
            for n, part in zip(("query", "key", "value"), sd[f"attn.qkv.{p}"].chunk(3)):
                out[f"{pre}attention.self.{n}.{p}"] = part
            for hf, ours in _BERT_BLOCK.items():
                out[pre + hf + "." + p] = sd[f"{ours}.{p}"]
    return out


def _embeddings(model: Electra) -> dict[str, torch.Tensor]:
    sd = model.discriminator.embeddings.state_dict()
    return {f"electra.embeddings.{hf}.{p}": sd[f"{ours}.{p}"] for hf, ours in _BERT_EMB.items()
            for p in ("weight", "bias") if f"{ours}.{p}" in sd}


def electra_configs_to_hf(model: Electra) -> tuple[dict, dict]:
    """``(discriminator, generator)`` ``ElectraConfig`` keyword dicts of ``model``'s sizes."""
    c = model.discriminator.config
    if c.positions != "learned":
        raise ValueError("the ELECTRA format needs positions='learned'")
    act = HF_ACT[c.activation]
    common = {"vocab_size": c.vocab_size, "embedding_size": c.d_model, "max_position_embeddings": c.max_len,
              "type_vocab_size": c.type_vocab_size, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
              "layer_norm_eps": c.ln_eps, "pad_token_id": c.pad_id}
    g = model.generator
    d_gen = g.down.out_features
    disc = {**common, "hidden_size": c.d_model, "num_hidden_layers": c.n_layer, "num_attention_heads": c.n_head,
            "intermediate_size": c.d_ff, "hidden_act": act}
    gen = {**common, "hidden_size": d_gen, "num_hidden_layers": len(g.blocks),
           "num_attention_heads": g.blocks[0].attn.n_head, "intermediate_size": g.blocks[0].mlp.fc.out_features,
           "hidden_act": "gelu"}
    return disc, gen


def electra_state_to_hf(model: Electra) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """``(ElectraForPreTraining state dict, ElectraForMaskedLM state dict)`` of ``model``."""
    emb = _embeddings(model)
    disc = {**emb, **_layers(model.discriminator.blocks, "electra.")}
    head = model.head.state_dict()  # Linear, GELU, Linear(d, 1)
    for hf, ours in (("dense", "0"), ("dense_prediction", "2")):
        for p in ("weight", "bias"):
            disc[f"discriminator_predictions.{hf}.{p}"] = head[f"{ours}.{p}"]
    g = model.generator
    gen = {**emb, **_layers(g.blocks, "electra.")}
    for hf, mod in (("electra.embeddings_project", g.down), ("generator_predictions.dense", g.up),
                    ("generator_predictions.LayerNorm", g.ln)):
        gen[f"{hf}.weight"], gen[f"{hf}.bias"] = mod.weight, mod.bias
    gen["generator_lm_head.weight"] = g.embedding.weight
    gen["generator_lm_head.bias"] = g.bias
    return ({k: v.detach().clone() for k, v in disc.items()}, {k: v.detach().clone() for k, v in gen.items()})


__all__ = ["electra_configs_to_hf", "electra_state_to_hf"]
