"""Chapter 6b's conditioning fixes and stored checkpoints.

ELMo: the token layer's LayerNorm (without it the highway units' growth saturated the LSTMs and
made every layer nearly one-dimensional), the softmax bias's unigram start, and the stored laptop
biLM's layers using more than one direction (the old checkpoint fails this: top-PC shares 0.71,
0.77, 0.72 on the sentences below). CoVe: the stored translation model loads without GloVe in its
file and refuses a changed file.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
import torch

from companion.contextual.elmo import BiLM, BiLMConfig, CharCNN, WordVocab, char_ids

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

SUBJ = ["The man", "A woman", "The children", "My father", "The old dog", "Our teacher", "The company", "John"]
VERB = ["saw", "bought", "wanted", "found", "liked", "sold", "painted", "remembered"]
OBJ = ["a red car", "the house", "two books", "the river bank", "his money", "a small boat", "the letters",
       "her garden"]
TAIL = ["yesterday .", "in the morning .", "after the war .", "for many years .", "."]
SENTS = [f"{SUBJ[i % 8]} {VERB[(3 * i) % 8]} {OBJ[(5 * i + 1) % 8]} {TAIL[i % 5]}".split() for i in range(64)]


def _top_share(x: np.ndarray) -> float:
    """The share of the centred variance on the first principal direction."""
    s = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
    return float(s[0] / s.sum())


def test_token_norm_keeps_token_vectors_at_unit_scale_when_the_highway_grows():
    """The mechanism: Adam grew a few highway units' outputs ~200-fold in 350 steps. Simulated
    here by scaling the highway weights: without the norm the token vectors grow with them."""
    ids = char_ids(SENTS[:8], max_chars=10)
    real = ids[..., 0] != 0
    scales = {}
    for norm in (False, True):
        torch.manual_seed(0)
        cnn = CharCNN(d=16, char_dim=8, filters=((1, 8), (2, 8), (3, 16)), n_highway=2, norm=norm)
        before = cnn(ids)[real].std().item()
        with torch.no_grad():
            for layer in cnn.highway.layers:
                layer.weight.mul_(30.0)
        scales[norm] = cnn(ids)[real].std().item() / before
    assert scales[False] > 20, scales  # the unnormalised token layer grows with its highway
    assert 0.5 < scales[True] < 2, scales  # the normalised one stays at unit scale
    assert isinstance(BiLM(BiLMConfig(vocab_size=10, d=8, cells=12)).chars.norm, torch.nn.LayerNorm)
    assert isinstance(BiLM(BiLMConfig(vocab_size=10, d=8, cells=12, token_norm=False)).chars.norm,
                      torch.nn.Identity)


def test_softmax_bias_starts_at_log_unigram_frequencies():
    vocab = WordVocab.build(SENTS, 30)
    model = BiLM(BiLMConfig(vocab_size=len(vocab), d=8, cells=12), seed=0)
    model.init_unigram_bias(vocab, SENTS)
    p = model.softmax.bias.exp()
    assert p.sum().item() == pytest.approx(1.0, abs=1e-5)
    the, house = vocab.stoi["the"], vocab.stoi["house"]
    n_the = sum(s.count("the") for s in SENTS)
    n_house = sum(s.count("house") for s in SENTS)
    assert (model.softmax.bias[the] - model.softmax.bias[house]).item() == pytest.approx(
        math.log((n_the + 1) / (n_house + 1)), abs=1e-5)
    with pytest.raises(ValueError, match="vocabulary has"):
        BiLM(BiLMConfig(vocab_size=len(vocab) + 1, d=8, cells=12)).init_unigram_bias(vocab, SENTS)


def test_stored_elmo_layers_are_not_one_dimensional():
    from companion.contextual import small_elmo

    if not (small_elmo.CKPT_DIR / "meta.json").exists():
        pytest.skip("the chapter-6 ELMo checkpoint is not stored")
    model, _, meta = small_elmo.load_small_elmo()
    assert meta["config"]["token_norm"] is True and len(meta["step_loss"]) == meta["lm_steps"]
    torch.set_num_threads(1)
    layers = small_elmo.probe_extractor(model)(SENTS)
    shares = [_top_share(x) for x in layers]
    assert max(shares) < 0.5, shares  # the old checkpoint: 0.71, 0.77, 0.72; this one 0.39, 0.38, 0.41


def test_stored_cove_loads_without_glove_in_its_file_and_checks_its_sha(tmp_path):
    from companion.contextual import small_cove

    if not (small_cove.CKPT_DIR / "meta.json").exists():
        pytest.skip("the chapter-6 CoVe checkpoint is not stored")
    assert sum(p.stat().st_size for p in small_cove.CKPT_DIR.iterdir()) < 20e6
    glove = np.zeros((400_000, 50), dtype=np.float32)  # stands in for GloVe 6B 50d's shape
    model, tgt, meta = small_cove.load_small_cove(glove)
    assert len(tgt) == model.config.tgt_vocab and meta["test_bleu"] > 0
    assert len(meta["step_loss"]) == meta["steps"]
    copy = tmp_path / "ckpt"
    shutil.copytree(small_cove.CKPT_DIR, copy)
    with open(copy / "cove.safetensors", "r+b") as fh:
        fh.seek(-1, 2)
        fh.write(b"\x00" if fh.read(1) != b"\x00" else b"\x01")
    with pytest.raises(ValueError, match="sha256"):
        small_cove.load_small_cove(glove, copy)
