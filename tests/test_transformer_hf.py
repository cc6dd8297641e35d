"""Chapter 7 against Hugging Face (``make test-peers``): GPT-2 and BERT logits and gradients from
the same weights, the real all-MiniLM-L6-v2 against sentence-transformers, export round trips."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from companion.transformer import (
    GPT,
    BertConfig,
    BertForPreTraining,
    GPTConfig,
    hf,
    mean_pool,
)

pytestmark = [pytest.mark.peers, pytest.mark.usefixtures("one_thread")]
TOL = {"atol": 1e-5, "rtol": 1e-5}


def _hf_gpt2(seed=0):
    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=4, resid_pdrop=0.0,
                                  embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(cfg)


def _hf_bert(seed=0):
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    return transformers.BertForMaskedLM(cfg)


def _grads(model) -> dict[str, torch.Tensor]:
    return {k: p.grad for k, p in model.named_parameters() if p.grad is not None}


def test_gpt2_logits_and_gradients_match():
    ref = _hf_gpt2()
    ours = hf.gpt_from_hf_model(ref)
    x = torch.randint(0, 100, (3, 20), generator=torch.Generator().manual_seed(1))
    out = ref(x, labels=x)
    _, loss = ours(x[:, :-1], x[:, 1:])
    torch.testing.assert_close(ours(x), out.logits, **TOL)
    torch.testing.assert_close(loss, out.loss, **TOL)
    out.loss.backward()
    loss.backward()
    ref_grads = hf.gpt_state_from_hf(_grads(ref), 2)
    mine = _grads(ours)
    assert set(mine) <= set(ref_grads) and len(mine) == len(list(ref.parameters()))  # all compared
    for k, g in mine.items():
        torch.testing.assert_close(g, ref_grads[k], **TOL, msg=f"gradient of {k}")


def test_bert_logits_and_gradients_match_with_padding_and_segments():
    ref = _hf_bert()
    ours = hf.bert_from_hf_model(ref)
    g = torch.Generator().manual_seed(2)
    x = torch.randint(5, 100, (3, 20), generator=g)
    am = torch.ones_like(x)
    am[1, 14:], am[2, 6:] = 0, 0
    seg = torch.zeros_like(x)
    seg[:, 9:] = 1
    labels = torch.full_like(x, -100)
    labels[:, 2:5] = x[:, 2:5]
    out = ref(input_ids=x, attention_mask=am, token_type_ids=seg, labels=labels)
    mlm_logits, _ = ours(x, seg, am)
    real = am.bool()
    torch.testing.assert_close(mlm_logits[real], out.logits[real], **TOL)
    loss = ours.loss({"ids": x, "segments": seg, "attention_mask": am, "labels": labels})
    torch.testing.assert_close(loss, out.loss, **TOL)
    out.loss.backward()
    loss.backward()
    ref_grads = hf.bert_state_from_hf(_grads(ref), 2)
    mine = {k: v for k, v in _grads(ours).items() if not k.startswith(("pooler.", "nsp."))}
    assert len(mine) == len(ref_grads) - 1  # the tied decoder weight appears twice in HF's names
    for k, gr in mine.items():
        torch.testing.assert_close(gr, ref_grads[k], **TOL, msg=f"gradient of {k}")


def test_export_round_trips(tmp_path):
    gpt = GPT(GPTConfig(block_size=32), seed=3)
    hf.save_pretrained(gpt, tmp_path / "gpt")
    back = transformers.GPT2LMHeadModel.from_pretrained(tmp_path / "gpt").eval()
    x = torch.randint(0, 100, (2, 12))
    torch.testing.assert_close(back(x).logits, gpt(x), **TOL)
    torch.testing.assert_close(hf.load_pretrained(tmp_path / "gpt")(x), gpt(x), atol=0, rtol=0)
    bert = BertForPreTraining(BertConfig(), seed=4)
    hf.save_pretrained(bert, tmp_path / "bert")
    for cls in (transformers.BertForPreTraining, transformers.BertForMaskedLM):
        m = cls.from_pretrained(tmp_path / "bert").eval()
        torch.testing.assert_close(m(x).logits if cls is transformers.BertForMaskedLM else m(x).prediction_logits,
                                   bert(x)[0], **TOL)
    pt = transformers.BertForPreTraining.from_pretrained(tmp_path / "bert").eval()
    torch.testing.assert_close(pt(x).seq_relationship_logits, bert(x)[1], **TOL)
    again = hf.load_pretrained(tmp_path / "bert")
    for k, v in bert.state_dict().items():
        assert torch.equal(again.state_dict()[k], v), k
    # and a directory written by transformers itself
    ref = _hf_gpt2()
    ref.save_pretrained(tmp_path / "hf")
    torch.testing.assert_close(hf.load_pretrained(tmp_path / "hf")(x), ref.eval()(x).logits, **TOL)
    with pytest.raises(FileNotFoundError, match="config.json"):
        hf.load_pretrained(tmp_path / "nothing")


def test_bert_pad_row_gradient_as_in_hf():
    """A [PAD] id at an attended position: HF's embedding (padding_idx) sends its row no gradient
    from the lookup (only from the tied output layer), and so does ours."""
    ref = _hf_bert()
    ours = hf.bert_from_hf_model(ref)
    x = torch.randint(5, 100, (2, 10), generator=torch.Generator().manual_seed(3))
    pad = ours.config.pad_id
    x[0, 4] = x[1, 7] = pad
    labels = torch.full_like(x, -100)
    labels[:, 1:3] = x[:, 1:3]
    ref(input_ids=x, labels=labels).loss.backward()
    ours.loss({"ids": x, "labels": labels}).backward()
    mine = ours.encoder.embeddings.tok.weight.grad
    theirs = ref.bert.embeddings.word_embeddings.weight.grad
    torch.testing.assert_close(mine[pad], theirs[pad], **TOL)
    torch.testing.assert_close(mine, theirs, **TOL)

def test_gpt_special_ids_survive_the_round_trip(tmp_path):
    """GPT-2's format has one special id; ours are three, and a model whose start, delimiter and
    extract ids are not the default last three must come back with the same ones."""
    cfg = GPTConfig(block_size=16, start_id=5, delim_id=6, extract_id=7)
    hf.save_pretrained(GPT(cfg, seed=1), tmp_path / "gpt")
    back = hf.load_pretrained(tmp_path / "gpt").config
    assert (back.start_id, back.delim_id, back.extract_id) == (5, 6, 7)
    transformers.GPT2LMHeadModel.from_pretrained(tmp_path / "gpt")  # the extra key does not bother HF
    d = hf.gpt_config_to_hf(cfg)
    d["companion_special_ids"] = {"begin_id": 1}
    with pytest.raises(ValueError, match="companion_special_ids"):
        hf.gpt_config_from_hf(d)


SENTENCES = [
    "The cat sat on the mat.", "A man is playing a guitar.", "A woman is slicing an onion.",
    "Stocks fell sharply on Monday after the report.", "Transformers replaced recurrence with attention.",
    "I loved this movie!", "I hated this movie.", "Where is the nearest train station?",
    "The quick brown fox jumps over the lazy dog.", "Word embeddings map words to vectors.",
    "BERT reads the whole sentence at once.", "GPT predicts the next token.", "It rained all day.",
    "He didn't go to work because he was ill.", "Paris is the capital of France.",
    "The committee postponed its decision until next week.", "Ok.", "naïve café résumé",
    "Tokyo 東京 is large.", "Emoji 😀 and odd    spacing\tall here.", "1234 5678 90",
    "A very long sentence " + "that keeps going " * 20 + "until it ends.",
    "Dogs chase cats.", "Cats chase dogs.", "Nobody expects the Spanish Inquisition.",
    "The stock market crashed.", "Shares dropped steeply.", "A child is riding a horse.",
    "Someone is eating pasta.", "Two men are fighting.",
]


@pytest.mark.slow
def test_minilm_embeddings_equal_sentence_transformers():
    st = pytest.importorskip("sentence_transformers")
    directory = hf.minilm_dir()
    model = st.SentenceTransformer(str(directory), device="cpu")
    ref = model.encode(SENTENCES, convert_to_tensor=True, batch_size=8)
    tok = transformers.BertTokenizerFast.from_pretrained(str(directory))
    enc = hf.load_minilm(directory)
    assert sum(p.numel() for p in enc.parameters()) == 22_565_376
    b = tok(SENTENCES, padding=True, truncation=True, max_length=model.max_seq_length, return_tensors="pt")
    with torch.no_grad():
        h = enc(b["input_ids"], b["token_type_ids"], b["attention_mask"])
    ours = torch.nn.functional.normalize(mean_pool(h, b["attention_mask"]), dim=-1)
    torch.testing.assert_close(ours, ref, atol=1e-5, rtol=1e-4)
    cos = ours @ ours.T  # and the vectors mean something: paraphrases closer than unrelated pairs
    i, j, k = SENTENCES.index("The stock market crashed."), SENTENCES.index("Shares dropped steeply."), 0
    assert cos[i, j] > cos[i, k] + 0.2
