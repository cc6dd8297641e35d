"""Part II's public entry points under bad input: each raises a ValueError/TypeError that names
the argument, what it got and what it expects, and never answers silently wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.pretraining.seq2seq import Seq2Seq, Seq2SeqConfig
from companion.transformer import (
    GPT,
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    GPTConfig,
    sample_next,
)

pytestmark = pytest.mark.usefixtures("one_thread")
FAST = settings(max_examples=25, deadline=None)


@pytest.fixture(scope="module")
def gpt():
    return GPT(GPTConfig(vocab_size=50, block_size=16, n_layer=1, n_head=2, d_model=16)).eval()


@pytest.fixture(scope="module")
def bert():
    return BertForPreTraining(BertConfig(vocab_size=50, max_len=16, n_layer=1, n_head=2, d_model=16)).eval()


# ------------------------------------------------------------------------------- configs


@pytest.mark.parametrize("cls", [GPTConfig, BertConfig, Seq2SeqConfig])
@pytest.mark.parametrize(("field", "value", "match"), [
    ("d_ff", -8, "d_ff must be a positive int, or None"),
    ("d_ff", 0, "d_ff must be a positive int, or None"),
    ("d_ff", 2.5, "d_ff must be a positive int"),
    ("d_model", 0, "d_model must be a positive int, got 0"),
    ("n_head", -1, "n_head must be a positive int, got -1"),
    ("vocab_size", True, "vocab_size must be a positive int, got True"),
    ("dropout", 1.5, r"dropout must be a number in \[0, 1\], got 1.5"),
    ("dropout", float("nan"), "dropout must be a number in"),
    ("activation", "swish", "activation must be one of"),
    ("positions", "rotary", "positions must be one of"),
    ("ln_eps", 0.0, "ln_eps must be > 0"),
    ("ln_eps", -1e-5, "ln_eps must be a finite number"),
])
def test_config_fields_are_checked_by_name(cls, field, value, match):
    with pytest.raises(ValueError, match=match) as err:
        cls(**{field: value})
    assert cls.__name__ in str(err.value) or field == "d_model"


@pytest.mark.parametrize("cls", [GPTConfig, BertConfig, Seq2SeqConfig])
def test_d_ff_none_means_four_d_model_and_explicit_sizes_are_kept(cls):
    assert cls(d_model=16, n_head=2).d_ff == 64
    assert cls(d_model=16, n_head=2, d_ff=24).d_ff == 24
    c = cls(d_model=16, n_head=2)
    assert type(c)(**c.__dict__) == c  # a stored (resolved) config rebuilds unchanged


def test_special_ids_must_be_ints_inside_the_vocabulary():
    with pytest.raises(ValueError, match=r"BertConfig.mask_id=100 is outside the vocabulary \(size 100\)"):
        BertConfig(mask_id=100)
    with pytest.raises(ValueError, match="BertConfig.pad_id=None"):
        BertConfig(pad_id=None)
    with pytest.raises(ValueError, match="GPTConfig.start_id=-1"):
        GPTConfig(start_id=-1)
    with pytest.raises(ValueError, match="GPTConfig.start_id=-1 is outside the vocabulary"):
        GPTConfig(vocab_size=2)  # too small for the three reserved ids
    with pytest.raises(ValueError, match="sinusoidal positions need an even d_model"):
        BertConfig(positions="sinusoidal", d_model=9, n_head=1)


# ------------------------------------------------------------------------------ token ids


def test_gpt_rejects_ids_outside_the_vocabulary(gpt):
    with pytest.raises(ValueError, match=r"ids holds 50, outside \[0, 50\) \(the vocabulary size is 50\)"):
        gpt(torch.tensor([[1, 2, 50]]))
    with pytest.raises(ValueError, match=r"ids holds -3, outside \[0, 50\)"):
        gpt.loss(torch.tensor([[1, -3, 4, 5]]))
    with pytest.raises(ValueError, match=r"shape \(3,\); add a batch dimension"):
        gpt(torch.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="ids must hold integer ids .*float32"):
        gpt(torch.zeros(1, 3))
    with pytest.raises(TypeError, match="ids must be a torch.Tensor of token ids, got list"):
        gpt([[1, 2]])


def test_bert_rejects_bad_ids_segments_and_masks(bert):
    ids = torch.tensor([[2, 7, 8, 3]])
    with pytest.raises(ValueError, match=r"ids holds 50, outside \[0, 50\)"):
        bert(torch.tensor([[2, 50, 3]]))
    with pytest.raises(ValueError, match=r"ids must be a \[batch, length\] tensor, got shape \(4,\)"):
        bert(ids[0])
    with pytest.raises(ValueError, match=r"segments holds 2, outside \[0, 2\) \(type_vocab_size is 2\)"):
        bert(ids, torch.tensor([[0, 0, 1, 2]]))
    with pytest.raises(ValueError, match=r"segments must have the shape of ids, \(1, 4\), got \(1, 3\)"):
        bert(ids, torch.tensor([[0, 0, 1]]))
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids, \(1, 4\), got \(4,\)"):
        bert(ids, None, torch.ones(4))
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids, \(1, 4\), got \(1, 5\)"):
        bert(ids, None, torch.ones(1, 5))
    with pytest.raises(ValueError, match="exceeds max_len=16"):
        bert(torch.full((1, 17), 5))


@FAST
@given(st.lists(st.integers(-5, 60), min_size=1, max_size=12))
def test_any_id_list_is_either_run_or_refused_by_name(ids):
    """No id raises an IndexError or runs silently: in-range rows run, the others name the id."""
    m = _tiny_bert()
    x = torch.tensor([ids])
    if all(0 <= i < 50 for i in ids):
        assert m(x).shape == (1, len(ids), 16)
    else:
        bad = min(ids) if min(ids) < 0 else max(ids)
        with pytest.raises(ValueError, match=f"ids holds {bad}, outside"):
            m(x)


_BERT: list = []


def _tiny_bert() -> BertEncoder:
    if not _BERT:
        _BERT.append(BertEncoder(BertConfig(vocab_size=50, max_len=16, n_layer=1, n_head=2, d_model=16)).eval())
    return _BERT[0]


def test_valid_inputs_give_the_same_outputs_as_before(bert):
    """The checks only read the inputs: a valid batch gives bit-identical logits twice over."""
    ids = torch.tensor([[2, 7, 8, 3, 0], [2, 9, 3, 0, 0]])
    am = (ids != 0).long()
    a = bert(ids, torch.zeros_like(ids), am)[0]
    b = bert(ids, None, am)[0]
    assert torch.equal(a, b)


def test_seq2seq_rejects_bad_ids():
    m = Seq2Seq(Seq2SeqConfig(vocab_size=20, max_len=8, n_enc_layer=1, n_dec_layer=1, n_head=2, d_model=8)).eval()
    src = torch.tensor([[3, 4, 5]])
    with pytest.raises(ValueError, match=r"src holds 20, outside \[0, 20\)"):
        m.encode(torch.tensor([[3, 20]]))
    with pytest.raises(ValueError, match=r"src_mask must have the shape of src, \(1, 3\), got \(1, 2\)"):
        m.encode(src, torch.ones(1, 2))
    with pytest.raises(ValueError, match=r"tgt holds 25"):
        m(src, torch.tensor([[1, 25]]))
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1, got 0"):
        m.generate(src, 0)
    with pytest.raises(ValueError, match="top_k must be an int >= 1, got 0"):
        m.generate(src, 3, temperature=1.0, top_k=0)
    with pytest.raises(ValueError, match=r"prefix must be \[batch=1, length >= 1\] ids"):
        m.generate(src, 3, prefix=torch.ones(2, 1, dtype=torch.long))


# ------------------------------------------------------------------------------ generation


@pytest.mark.parametrize(("kw", "match"), [
    ({"temperature": float("nan")}, "temperature must be a finite number >= 0, got nan"),
    ({"temperature": float("inf")}, "temperature must be a finite number >= 0, got inf"),
    ({"temperature": -0.5}, "temperature must be a finite number >= 0, got -0.5"),
    ({"top_k": 0}, "top_k must be an int >= 1, got 0"),
    ({"top_k": -2}, "top_k must be an int >= 1, got -2"),
    ({"top_p": 0.0}, r"top_p must be None or a number in \(0, 1\], got 0.0"),
    ({"top_p": float("nan")}, "top_p must be None or a number in"),
])
def test_generate_rejects_bad_sampling_settings(gpt, kw, match):
    with pytest.raises(ValueError, match=match):
        gpt.generate(torch.tensor([[1, 2]]), 3, **kw)
    with pytest.raises(ValueError, match=match):
        sample_next(torch.zeros(1, 50), **{"temperature": 1.0, **kw})


def test_generate_rejects_bad_prompts_and_lengths(gpt):
    with pytest.raises(TypeError, match="top_k must be an int >= 1, got float 2.5"):
        gpt.generate(torch.tensor([[1, 2]]), 3, top_k=2.5)
    with pytest.raises(ValueError, match=r"ids holds 77, outside \[0, 50\)"):
        gpt.generate(torch.tensor([[1, 77]]), 3)
    with pytest.raises(ValueError, match=r"add a batch dimension"):
        gpt.generate(torch.tensor([1, 2]), 3)
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 0, got -1"):
        gpt.generate(torch.tensor([[1, 2]]), -1)
    out, logits = gpt.generate(torch.tensor([[1, 2]]), 0, return_logits=True)
    assert out.tolist() == [[1, 2]] and logits.shape == (1, 0, 50)


@FAST
@given(st.floats(allow_nan=True, allow_infinity=True), st.one_of(st.none(), st.integers(-3, 60)))
def test_any_sampling_setting_is_either_valid_or_refused(temperature, top_k):
    logits = torch.linspace(-1, 1, 50)[None]
    g = torch.Generator().manual_seed(0)
    ok = (temperature == 0 or (math.isfinite(temperature) and temperature >= 1e-6)) and (top_k is None or top_k >= 1)
    if ok:
        nxt = sample_next(logits, temperature, top_k, generator=g)
        assert 0 <= int(nxt) < 50
    else:
        with pytest.raises(ValueError, match="temperature|top_k"):
            sample_next(logits, temperature, top_k, generator=g)


# ------------------------------------------------------------------ Hugging Face directories


@pytest.fixture
def saved_bert(tmp_path, bert):
    from companion.transformer import hf

    hf.save_pretrained(bert, tmp_path)
    return tmp_path


def test_a_truncated_safetensors_file_is_named(saved_bert):
    from companion.transformer import hf

    path = saved_bert / "model.safetensors"
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"model\.safetensors could not be read as safetensors .*truncated"):
        hf.load_pretrained(saved_bert)


@pytest.mark.parametrize(("text", "match"), [
    ('{"model_type": "bert", ', r"config\.json is not valid JSON"),
    ("[1, 2]", r"config\.json holds a JSON list; expected an object"),
    ('{"model_type": "bert"}', r"config\.json: the bert config lacks \['vocab_size'"),
    ('{"model_type": "t5"}', r"config\.json: model_type 't5' is not supported"),
])
def test_a_corrupt_config_json_is_named(saved_bert, text, match):
    from companion.transformer import hf

    (saved_bert / "config.json").write_text(text)
    with pytest.raises(ValueError, match=match):
        hf.load_pretrained(saved_bert)


def test_config_fields_that_break_the_model_are_named(saved_bert):
    import json

    from companion.transformer import hf

    path = saved_bert / "config.json"
    config = json.loads(path.read_text())
    for change, match in (({"hidden_act": "swish"}, "hidden_act='swish' is not supported"),
                          ({"intermediate_size": 0}, "BertConfig.d_ff must be a positive int"),
                          ({"num_hidden_layers": 3}, r"model\.safetensors lacks the tensor 'encoder.layer.1.*\(3 layers\)"),
                          ({"hidden_size": 32, "num_attention_heads": 4}, "do not fit the config's BertForPreTraining")):
        path.write_text(json.dumps({**config, **change}))
        with pytest.raises(ValueError, match=match):
            hf.load_pretrained(saved_bert)


def test_a_bert_round_trip_keeps_every_config_field(tmp_path):
    from companion.transformer import hf

    cfg = BertConfig(vocab_size=40, max_len=12, n_layer=1, n_head=2, d_model=8, d_ff=20, type_vocab_size=3,
                     activation="relu", ln_eps=1e-7, pad_id=9)
    m = BertForPreTraining(cfg).eval()
    back = hf.load_pretrained(hf.save_pretrained(m, tmp_path)).eval()
    assert back.config == cfg
    x = torch.randint(5, 40, (2, 7))
    assert torch.equal(back(x)[0], m(x)[0])


# ------------------------------------------------------------------------------ tokenizers


def test_tokenizer_trainers_report_the_vocabulary_size_they_were_given():
    from companion.transformer.tokenizers import BPE, ByteLevelBPE, WordPiece

    text = "low lower lowest newer wider " * 5
    for size in (0, 1, -1):
        with pytest.raises(ValueError, match=f"vocab_size must be an int >= 2, got {size}$"):
            BPE.train(text, vocab_size=size)
        with pytest.raises(ValueError, match=f"vocab_size must be an int >= 6, got {size}$"):
            WordPiece.train(text, vocab_size=size)
    with pytest.raises(ValueError, match="vocab_size must be an int >= 6, got 5$"):
        WordPiece.train(text, vocab_size=5)  # the five specials leave no room
    with pytest.raises(TypeError, match="vocab_size must be an int >= 2, got float 100.0"):
        BPE.train(text, vocab_size=100.0)
    with pytest.raises(ValueError, match="vocab_size must be an int >= 257"):
        ByteLevelBPE.train(text, vocab_size=10)


def _small_byte_bpe():
    from companion.transformer.tokenizers import ByteLevelBPE

    return ByteLevelBPE.train("hello world, a smile 🙂 and more words " * 20, vocab_size=300)


SURROGATES = st.text(st.one_of(st.characters(categories=["Cs"]), st.sampled_from("ab 🙂é")), max_size=12)


def test_a_lone_surrogate_becomes_the_replacement_character():
    tok = _small_byte_bpe()
    assert tok.encode_ordinary("a\ud800b") == tok.encode_ordinary("a\ufffdb")
    assert tok.encode("\udfff") == tok.encode("\ufffd")
    assert tok.encode_ordinary("x\ud83d\ude42y") == tok.encode_ordinary("x🙂y")  # a pair is joined
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        tok.encode_ordinary(b"abc")


@FAST
@given(SURROGATES)
def test_any_text_with_surrogates_encodes_as_its_utf16_repair(text):
    tok = _small_byte_bpe()
    repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert tok.encode_ordinary(text) == tok.encode_ordinary(repaired) == tok.encode(text)


@pytest.fixture(scope="module")
def gpt2_pair():
    """Our GPT-2 tokenizer and tiktoken's, built offline from the same files."""
    pytest.importorskip("tiktoken")
    from test_tokenizers_byte_bpe import tiktoken_gpt2

    from companion.transformer.tokenizers import ByteLevelBPE

    return ByteLevelBPE.gpt2(), tiktoken_gpt2()


@pytest.mark.peers
@settings(max_examples=100, deadline=None, derandomize=True)
@given(text=SURROGATES)
def test_surrogates_give_tiktokens_ids(gpt2_pair, text):
    ours, tk = gpt2_pair
    assert ours.encode_ordinary(text) == tk.encode_ordinary(text)
    assert ours.encode(text) == tk.encode(text)


# ------------------------------------------------------------------- helpers and task data


def test_padding_and_task_batch_helpers_refuse_empty_and_ragged_input():
    from companion.transformer import mean_pool, pad_batch, task_batch

    with pytest.raises(ValueError, match=r"pairs must be a non-empty list of \(ids, segments\) pairs, got \[\]"):
        pad_batch(BertConfig(), [])
    with pytest.raises(ValueError, match=r"pairs\[1\] must be \(ids, segments\) of equal lengths"):
        pad_batch(BertConfig(), [([2, 3], [0, 0]), ([2, 5, 3], [0, 0])])
    with pytest.raises(ValueError, match="examples must be a non-empty list"):
        task_batch(GPTConfig(), "classification", [])
    with pytest.raises(ValueError, match="task 'clasification' is unknown"):
        task_batch(GPTConfig(), "clasification", [([1], 0)])
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of hidden\[..., 0\], \(2, 3\), got \(2, 4\)"):
        mean_pool(torch.zeros(2, 3, 4), torch.ones(2, 4))


def test_a_misspelt_split_names_the_task_and_its_splits():
    from companion.data.errors import UnknownSplitError
    from companion.data.tasks import Example, TaskData

    task = TaskData("toy", {"train": [Example("a", 0)], "test": [Example("b", 1)]}, ("n", "p"), "single", "accuracy")
    with pytest.raises(UnknownSplitError, match=r"toy has no split 'tset'; its splits are \['test', 'train'\]"):
        task.splits["tset"]
    with pytest.raises(ValueError, match="toy has no split 'validation'"):  # also a ValueError
        task.split("validation")
    with pytest.raises(KeyError):  # and still a KeyError, as a dict lookup raises
        task.splits["dev"]
    assert task.splits.get("dev") is None and task.split("train") == [Example("a", 0)]


# ------------------------------------------------------------------------- sentence encoders


def test_chapter7_sentence_encoders_refuse_one_string_and_accept_an_empty_list():
    from companion.transformer.chapter7b import bert_sentence_encoder
    from companion.transformer.tokenizers import ByteLevelBPE

    tok = ByteLevelBPE.train("hello world " * 10, vocab_size=262,
                             special_tokens=("<|endoftext|>", "[PAD]", "[CLS]", "[SEP]", "[MASK]"))
    enc = BertEncoder(BertConfig(vocab_size=len(tok), max_len=16, n_layer=1, n_head=2, d_model=16, pad_id=257,
                                 unk_id=256, cls_id=258, sep_id=259, mask_id=260))
    encode = bert_sentence_encoder(enc, tok, pooling="mean")
    with pytest.raises(TypeError, match=r"sentences must be a list of sentences .*, not one string \(.hello world.\)"):
        encode("hello world")
    with pytest.raises(TypeError, match=r"sentences\[1\] is not a str: got int 3"):
        encode(["hello", 3])
    assert encode([]).shape == (0, 16)
    assert encode(["hello", "world"]).shape == (2, 16)


def test_probes_refuse_untokenised_sentences_and_bad_features():
    from companion.probing import probes, structural

    probes.register_extractor("_bad_inputs_random", probes.random_extractor(4))
    with pytest.raises(TypeError, match=r"sentences\[0\] must be a list of token strings, got str 'the cat'"):
        probes.extract("_bad_inputs_random", ["the cat", "sat"])  # would give one vector per character
    with pytest.raises(TypeError, match="sentences must be a list of tokenised sentences"):
        probes.extract("_bad_inputs_random", "the cat")
    X, y = np.zeros((4, 3)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="train features hold NaN"):
        probes.fit_probe(np.full((4, 3), np.nan), y, X, y)
    with pytest.raises(ValueError, match="y_train must hold class indices"):
        probes.fit_probe(X, np.array(["N", "V", "N", "V"]), X, y)
    with pytest.raises(ValueError, match="y_train holds class 1, outside n_classes=1"):
        probes.fit_probe(X, y, X, y, n_classes=1)
    with pytest.raises(ValueError, match="d must be an int >= 1, got 0"):
        probes.make_probe(0, 2, probes.ProbeConfig())
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\]"):
        probes.ProbeConfig(dropout=2.0)
    with pytest.raises(ValueError, match=r"pred_dist must be \[n, n\] for the 3 words"):
        structural.uuas(np.zeros((2, 2)), [-1, 0, 1])
    with pytest.raises(ValueError, match=r"heads must be word indices in \[0, 3\) or -1"):
        structural.uuas(np.zeros((3, 3)), [-1, 0, 7])


@FAST
@given(st.lists(st.one_of(st.text(max_size=5), st.lists(st.text(max_size=4), max_size=4)), max_size=4))
def test_extract_accepts_exactly_lists_of_token_lists(sentences):
    from companion.probing import probes

    probes.register_extractor("_bad_inputs_random", probes.random_extractor(4))
    if all(isinstance(s, list) for s in sentences):
        layers = probes.extract("_bad_inputs_random", sentences)
        assert layers[0].shape == (sum(map(len, sentences)), 4)
    else:
        with pytest.raises(TypeError, match="must be a list of token strings"):
            probes.extract("_bad_inputs_random", sentences)


# ------------------------------------------------------------------------ harnesses and PEFT


def test_glue_and_tagging_harnesses_check_their_arguments():
    from companion.data.tasks import TaggedSentence
    from companion.evaluate import glue, tagging

    with pytest.raises(TypeError, match="predict must be a function"):
        glue.evaluate_glue({"toy": None}, ["mrpc"])
    sents = [TaggedSentence(("a", "b"), ("N", "V")), TaggedSentence(("c",), ("N",))]
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        tagging.evaluate_tagger(lambda b: [["N"] * len(s) for s in b], sents, spans=False, batch_size=0)
    enc = lambda batch: [np.eye(4)[: len(s)] for s in batch]  # noqa: E731
    with pytest.raises(ValueError, match="c_grid must be a non-empty list of positive, finite C values"):
        tagging.token_probe(enc, sents, sents, spans=False, c_grid=())
    with pytest.raises(ValueError, match="c_grid must be .* got \\[1.0, -1.0\\]"):
        tagging.token_probe(enc, sents, sents, spans=False, c_grid=[1.0, -1.0])
    with pytest.raises(ValueError, match="max_train_tokens must be a positive int, or None"):
        tagging.token_probe(enc, sents, sents, spans=False, max_train_tokens=0)


def test_peft_wrappers_check_their_arguments():
    from companion.transfer import peft

    def enc():
        return BertEncoder(BertConfig(vocab_size=50, max_len=16, n_layer=1, n_head=2, d_model=16))

    with pytest.raises(TypeError, match="model must be a torch nn.Module .* got str"):
        peft.bitfit("bert")
    with pytest.raises(TypeError, match="bottleneck must be an int >= 1, got float 1.5"):
        peft.add_adapters(enc(), bottleneck=1.5)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 0, got nan"):
        peft.add_lora(enc(), alpha=float("nan"))
    with pytest.raises(ValueError, match="already has LoRA layers; merge_lora"):
        peft.add_lora(peft.add_lora(enc()))
    with pytest.raises(ValueError, match="hidden must be a positive int, or None"):
        peft.add_prefix(enc(), hidden=0)
    with pytest.raises(ValueError, match=r"init_ids holds 99, outside \[0, 50\)"):
        peft.SoftPromptEncoder(enc(), n_prompt=2, init_ids=[5, 99])
    soft = peft.SoftPromptEncoder(enc(), n_prompt=2)
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids, \(1, 3\), got \(1, 2\)"):
        soft(torch.tensor([[2, 7, 3]]), None, torch.ones(1, 2))
    prefixed = peft.add_prefix(enc(), n_prefix=2)
    with pytest.raises(ValueError, match=r"ids holds 60, outside \[0, 50\)"):
        prefixed(torch.tensor([[2, 60, 3]]))


# ------------------------------------------------------------------------------ neighbours


@pytest.mark.parametrize("bad", ["12", [1.7], [True], torch.tensor([1.0]), torch.tensor([[1, 2]])])
def test_decoders_refuse_ids_that_int_would_quietly_convert(bad):
    """``int(1.7)`` is 1 and ``int("12")`` is 12: the decoders took such ids before."""
    from companion.transformer.tokenizers import BPE, WordPiece

    text = "low lower lowest newer wider " * 5
    for tok in (BPE.train(text, vocab_size=30), WordPiece.train(text, vocab_size=30), _small_byte_bpe()):
        with pytest.raises((TypeError, ValueError), match="ids"):
            tok.decode(bad)
        assert tok.decode(torch.tensor([1, 2])) == tok.decode([1, 2]) == tok.decode(np.array([1, 2]))


def test_pretraining_helpers_and_task_heads_check_sizes():
    import importlib

    pre = importlib.import_module("companion.transformer.pretrain")
    from companion.transformer import GPTForTask

    with pytest.raises(ValueError, match="block_size must be an int >= 1, got 0"):
        pre.pack_lm([[1, 2, 3]], 0)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        pre.lm_batches(torch.zeros(4, 5, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        pre.mlm_batches(torch.zeros(4, 5, dtype=torch.long), BertConfig(), 0)
    gpt = GPT(GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2, d_model=8))
    head = GPTForTask(gpt, "classification", 2)
    for lengths, bad in (([0], 0), ([9], 9)):  # 0 read the last padded position as the extract token
        with pytest.raises(ValueError, match=rf"lengths must be in \[1, 3\] .* got {bad}"):
            head({"ids": torch.tensor([[1, 2, 3]]), "lengths": torch.tensor(lengths)})
    with pytest.raises(ValueError, match="logits must be \\[batch, vocabulary\\]"):
        sample_next(torch.zeros(20))
    with pytest.raises(TypeError, match="text must be a str, got NoneType"):
        from companion.transformer.tokenizers import BPE

        BPE.train("a b a b", num_merges=1).encode(None)


def test_chapter8_models_check_ids_and_texts():
    from companion.pretraining.harness import ModelSize, toy_vocab
    from companion.pretraining.prefix_lm import StackLM
    from companion.pretraining.t5 import generate_texts, score_candidates
    from companion.pretraining.unilm import UniLMSeq2Seq

    lm = StackLM(GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2, d_model=8))
    with pytest.raises(ValueError, match=r"ids holds 20, outside \[0, 20\)"):
        lm.masked_hidden(torch.tensor([[1, 20]]))
    vocab = toy_vocab(40)
    size = ModelSize(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=24)
    uni = UniLMSeq2Seq(BertForPreTraining(vocab.bert_config(size)), vocab)
    with pytest.raises(ValueError, match=r"tgt_in holds 99, outside \[0, 40\)"):
        uni(torch.tensor([[7, 8]]), torch.tensor([[7, 99]]))
    with pytest.raises(ValueError, match=r"src_mask must have the shape of src, \(1, 2\), got \(1, 3\)"):
        uni(torch.tensor([[7, 8]]), torch.tensor([[7]]), torch.ones(1, 3))
    s2s = Seq2Seq(Seq2SeqConfig(vocab_size=20, max_len=8, n_enc_layer=1, n_dec_layer=1, n_head=2, d_model=8))
    with pytest.raises(TypeError, match="sources must be a list of sentences .* not one string"):
        generate_texts(s2s, _small_byte_bpe(), "one source", 3)
    with pytest.raises(ValueError, match="candidates must hold at least one candidate text"):
        score_candidates(s2s, _small_byte_bpe(), ["a source"], [])


def test_token_level_losses_need_one_label_per_token(bert):
    from companion.transformer import BertForTokens

    ids = torch.tensor([[2, 7, 8, 3]])
    with pytest.raises(ValueError, match=r"labels must have the shape of ids, \(1, 4\), got \(1, 3\)"):
        bert.loss({"ids": ids, "labels": torch.tensor([[-100, 7, -100]])})
    tagger = BertForTokens(bert.encoder, n_labels=3)
    with pytest.raises(ValueError, match=r"labels must have the shape of ids, \(1, 4\), got \(4,\)"):
        tagger.loss({"ids": ids, "labels": torch.tensor([0, 1, 2, 0])})


@FAST
@given(st.one_of(st.text(max_size=8), st.lists(st.one_of(st.text(max_size=6), st.integers(), st.none()), max_size=4)))
def test_sentence_encoders_take_exactly_lists_of_strings(sentences):
    """Chapter 5's encoders share one check: a list of strings is encoded (one row each, none for
    an empty list); one string, or a list holding anything but strings, is a TypeError."""
    from companion.sentence.baselines import BagOfWords

    bow = _BOW[0] if _BOW else _BOW.append(BagOfWords().fit(["a cat sat", "a dog ran"])) or _BOW[0]
    if isinstance(sentences, list) and all(isinstance(s, str) for s in sentences):
        assert bow.encode(sentences).shape == (len(sentences), bow.dim)
    else:
        with pytest.raises(TypeError, match="not one string|is not a str"):
            bow.encode(sentences)


_BOW: list = []


def test_layer_probes_check_every_layer():
    from companion.probing import layers

    y = np.array([0, 1, 0, 1])
    good, bad = np.zeros((4, 3)), np.full((4, 3), np.inf)
    with pytest.raises(ValueError, match="need the same non-zero number of train and test layers, got 0 and 0"):
        layers.layer_scores([], y, [], y)
    with pytest.raises(ValueError, match="train features hold NaN or infinite values"):
        layers.layer_scores([good, bad], y, [good, good], y)
    with pytest.raises(ValueError, match="test: 4 feature rows but 3 labels"):
        layers.fit_scalar_mix([good], y, [good], y[:3])
    with pytest.raises(ValueError, match="y_train must hold class indices"):
        layers.layer_spread([good], np.array([0.5, 1, 0, 1]), [good], y)
