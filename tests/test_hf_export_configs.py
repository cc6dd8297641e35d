"""The Hugging Face export at non-default configurations (``make test-peers``): every config field
our modules read reaches the layer HF applies it in (activation of BERT's MLM transform and of
ELECTRA's discriminator head, the LayerNorm epsilon, ``d_ff``, three segment types, untied GPT-2
output layers), so the exported model's logits match ours; config fields HF implements and our
modules do not are refused on import instead of being dropped."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from companion.pretraining.electra import Electra
from companion.pretraining.hf import electra_configs_to_hf, electra_state_to_hf
from companion.transformer import GPT, BertConfig, BertForPreTraining, GPTConfig, hf

pytestmark = [pytest.mark.peers, pytest.mark.usefixtures("one_thread")]
TOL = {"atol": 2e-5, "rtol": 2e-5}


def _perturb(model: torch.nn.Module) -> torch.nn.Module:
    """The init zeroes biases and sets LayerNorms to 1: perturb every weight so none hides."""
    torch.manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def _inputs(vocab: int, n_types: int = 2):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(5, vocab, (3, 18), generator=g)
    seg = torch.zeros_like(x)
    seg[:, 8:] = 1
    seg[:, 14:] = n_types - 1
    am = torch.ones_like(x)
    am[1, 12:], am[2, 5:] = 0, 0
    return x, seg, am


BERT_CONFIGS = [
    {"activation": "relu"},
    {"activation": "gelu_tanh", "ln_eps": 1e-6},
    {"activation": "gelu", "d_ff": 40, "type_vocab_size": 3, "max_len": 20},
    {"activation": "relu", "n_head": 2, "d_model": 24, "ln_eps": 1e-5, "type_vocab_size": 4},
]


@pytest.mark.parametrize("kw", BERT_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_bert_export_matches_hf_at_non_default_configs(tmp_path, kw):
    """``save_pretrained`` -> ``transformers.BertForPreTraining.from_pretrained``: MLM and NSP
    logits equal ours (the ReLU config gave wrong MLM logits while our MLM head applied GELU)."""
    cfg = BertConfig(**{"vocab_size": 60, "max_len": 24, "n_layer": 2, "n_head": 4, "d_model": 32, **kw})
    ours = _perturb(BertForPreTraining(cfg))
    hf.save_pretrained(ours, tmp_path)
    ref = transformers.BertForPreTraining.from_pretrained(tmp_path).eval()
    assert ref.config.hidden_act == hf.HF_ACT[cfg.activation]
    x, seg, am = _inputs(60, cfg.type_vocab_size)
    with torch.no_grad():
        mlm, nsp = ours(x, seg, am)
        out = ref(input_ids=x, token_type_ids=seg, attention_mask=am)
    real = am.bool()
    torch.testing.assert_close(mlm[real], out.prediction_logits[real], **TOL)
    torch.testing.assert_close(nsp, out.seq_relationship_logits, **TOL)


GPT_CONFIGS = [
    {"activation": "relu"},
    {"activation": "gelu", "ln_eps": 1e-6, "d_ff": 48},
    {"activation": "gelu_tanh", "tie_weights": False},
]


@pytest.mark.parametrize("kw", GPT_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_gpt_export_matches_hf_at_non_default_configs(tmp_path, kw):
    cfg = GPTConfig(**{"vocab_size": 60, "block_size": 24, "n_layer": 2, "n_head": 4, "d_model": 32, **kw})
    ours = _perturb(GPT(cfg))
    hf.save_pretrained(ours, tmp_path)
    ref = transformers.GPT2LMHeadModel.from_pretrained(tmp_path).eval()
    x = _inputs(60)[0]
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(input_ids=x).logits, **TOL)
    back = hf.load_pretrained(tmp_path)
    assert back.config == cfg


def test_electra_export_matches_hf_with_relu_and_another_epsilon():
    """The discriminator head applies the config's activation, the generator its LayerNorm epsilon."""
    cfg = BertConfig(vocab_size=60, max_len=24, n_layer=2, n_head=4, d_model=32, activation="relu", ln_eps=1e-6)
    torch.manual_seed(0)
    ours = _perturb(Electra(cfg, d_gen=16, gen_layers=1, gen_heads=2))
    disc_cfg, gen_cfg = electra_configs_to_hf(ours)
    disc_sd, gen_sd = electra_state_to_hf(ours)
    disc = transformers.ElectraForPreTraining(transformers.ElectraConfig(**disc_cfg)).eval()
    gen = transformers.ElectraForMaskedLM(transformers.ElectraConfig(**gen_cfg)).eval()
    disc.load_state_dict(disc_sd, strict=False)
    gen.load_state_dict(gen_sd, strict=False)
    x, seg, am = _inputs(60)
    with torch.no_grad():
        mine = ours.head(ours.discriminator(x, seg, am)).squeeze(-1)
        theirs = disc(input_ids=x, token_type_ids=seg, attention_mask=am).logits
        torch.testing.assert_close(mine[am.bool()], theirs[am.bool()], **TOL)
        mine_g = ours.generator.logits(ours.generator(ours.discriminator.embeddings(x, seg)))
        torch.testing.assert_close(mine_g, gen(input_ids=x, token_type_ids=seg).logits, **TOL)


@pytest.mark.parametrize(("make", "field"), [
    (lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=50, n_positions=16, n_embd=16, n_layer=1, n_head=2, scale_attn_by_inverse_layer_idx=True)),
     "scale_attn_by_inverse_layer_idx=True"),
    (lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=50, n_positions=16, n_embd=16, n_layer=1, n_head=2, scale_attn_weights=False)),
     "scale_attn_weights=False"),
    (lambda: transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        position_embedding_type="relative_key")), "position_embedding_type='relative_key'"),
    (lambda: transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        hidden_act="silu")), "hidden_act='silu' is not supported"),
])
def test_import_refuses_hf_settings_our_modules_do_not_implement(make, field):
    model = make()
    convert = hf.gpt_from_hf_model if isinstance(model, transformers.GPT2LMHeadModel) else hf.bert_from_hf_model
    with pytest.raises(ValueError, match=field.replace("(", r"\(").replace(")", r"\)")):
        convert(model)
