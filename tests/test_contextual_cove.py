"""CoVe: the attentional MT-LSTM (shapes, masking, a tiny copy task it learns), its features,
and our corpus BLEU (hand-computed cases here; parity with sacreBLEU under the peers mark)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from companion.contextual.cove import (
    CoVe,
    CoVeConfig,
    CoVeFeatures,
    TargetVocab,
    corpus_bleu,
    general_attention,
    glove_vocab,
    tokenize,
    translate_sentences,
    translation_batches,
)
from companion.train import TrainConfig, fit

WORDS = ["a", "b", "c", "d", "e", "f"]


def _model(seed=0, d_hidden=8):
    glove = np.random.default_rng(0).standard_normal((len(WORDS), 5)).astype(np.float32)
    tgt = TargetVocab.build([WORDS], max_size=10)
    return CoVe(CoVeConfig(tgt_vocab=len(tgt), d_hidden=d_hidden, n_layers=2, d_tgt_emb=6, dropout=0.0),
                glove, seed=seed), glove_vocab(WORDS), tgt


def test_shapes_and_padding_do_not_change_a_sentences_states():
    model, src, _ = _model()
    model.eval()
    feats = CoVeFeatures(model, src)
    alone = feats.tokens([["a", "b", "c"]])[0]
    batched = feats.tokens([["a", "b", "c"], ["d", "e", "f", "a", "b"]])
    assert alone.shape == (3, 5 + 16) and batched[1].shape == (5, 21)
    np.testing.assert_allclose(alone, batched[0], atol=1e-6)  # padding of the longer one is masked
    assert CoVeFeatures(model, src, "cove").tokens([["a"]])[0].shape == (1, 16)
    sent = feats(["a b", "zzz"])  # mean and max: 2 x 21; unknown words read <unk> (zeros in GloVe)
    assert sent.shape == (2, 42) and np.isfinite(sent).all()


def test_attention_ignores_padding_and_sums_to_one():
    torch.manual_seed(0)
    keys = torch.randn(2, 4, 6)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    ctx, alpha = general_attention(torch.randn(2, 6), keys, torch.nn.Linear(6, 6), mask)
    assert torch.allclose(alpha.sum(-1), torch.ones(2))
    assert (alpha[0, 2:] == 0).all() and ctx.shape == (2, 6)
    assert torch.allclose(ctx[0], alpha[0, :2] @ keys[0, :2])


def test_without_input_feeding_all_steps_at_once_equal_the_step_loop():
    glove = np.random.default_rng(0).standard_normal((len(WORDS), 5)).astype(np.float32)
    model = CoVe(CoVeConfig(tgt_vocab=9, d_hidden=6, d_tgt_emb=4, input_feeding=False), glove).eval()
    src, lens = _src([["a", "b", "c"], ["d"]], glove_vocab(WORDS))
    tgt_in = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]])
    logits, alpha = model(src, lens, tgt_in)
    keys, state = model._encode(src, lens)  # the decoder starts from the encoder's last states
    assert state[0].shape == (2, 2, 12)  # [layers, B, 2 * d_hidden]
    mask = torch.arange(3)[None] < lens[:, None]
    feed = None
    for t in range(4):
        feed, state, a = model._step(tgt_in[:, t], feed, state, keys, mask)
        assert torch.allclose(model.out(feed), logits[:, t], atol=1e-5)
        assert torch.allclose(a, alpha[:, t], atol=1e-6)


def test_a_tiny_model_learns_to_copy():
    """Copying a shuffled 3-word sentence is learnable only through the attention."""
    model, src, tgt = _model(d_hidden=16)
    rng = random.Random(0)
    pairs = [(s, s) for s in (rng.sample(WORDS, 3) for _ in range(120))]
    test = [rng.sample(WORDS, 3) for _ in range(30)]
    before = corpus_bleu(translate_sentences(model, test, src, tgt, max_len=5), test, max_n=3)
    fit(model, lambda e: translation_batches(pairs, src, tgt, 20, seed=e),
        config=TrainConfig(epochs=10, lr=2e-2, progress=False))
    after = corpus_bleu(translate_sentences(model, test, src, tgt, max_len=5), test, max_n=3)
    assert before.score < 20 and after.score > 60, (before, after)
    _, attn = model.translate(*_src(test[:1], src), max_len=3)
    assert attn.shape == (1, 3, 3)


def _src(sentences, src):
    from companion.contextual.cove import encode_source

    return encode_source(sentences, src)


def test_bleu_by_hand():
    assert corpus_bleu([["a", "b", "c", "d"]], [["a", "b", "c", "d"]]).score == pytest.approx(100)
    # 3 of 4 unigrams, 1 of 3 bigrams, 0 trigrams -> smoothed 1/(2*2), 0 4-grams -> 1/(4*1); no BP
    b = corpus_bleu([["a", "b", "x", "d"]], [["a", "b", "c", "d"]])
    p = [3 / 4, 1 / 3, 1 / 4, 1 / 4]
    assert b.score == pytest.approx(100 * math.exp(sum(map(math.log, p)) / 4))
    assert corpus_bleu([["a", "b", "x", "d"]], [["a", "b", "c", "d"]], smooth="none").score == 0.0
    short = corpus_bleu([["a", "b"]], [["a", "b", "c", "d"]], max_n=2)
    assert short.bp == pytest.approx(math.exp(1 - 4 / 2)) and short.score == pytest.approx(100 * short.bp)
    # clipping: "the the the" against "the cat" counts "the" once
    assert corpus_bleu([["the"] * 3], [["the", "cat"]], max_n=1).precisions[0] == pytest.approx(100 / 3)
    # several references: the closest length and the best count
    multi = corpus_bleu([["a", "b", "c"]], [[["a", "b"], ["a", "b", "c", "d"]]], max_n=1)
    assert multi.ref_len == 2 and multi.precisions[0] == 100


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="token lists"):
        corpus_bleu(["a b"], ["a b"])
    with pytest.raises(ValueError, match="2 hypotheses but 1"):
        corpus_bleu([["a"], ["b"]], [["a"]])
    with pytest.raises(ValueError, match="smooth"):
        corpus_bleu([["a"]], [["a"]], smooth="floor")
    with pytest.raises(ValueError, match="tgt_vocab"):
        CoVeConfig(tgt_vocab=0)
    with pytest.raises(ValueError, match="starts with"):
        TargetVocab(["a", "b"])
    with pytest.raises(ValueError, match="parts"):
        CoVeFeatures(_model()[0], glove_vocab(WORDS), "elmo")
    with pytest.raises(TypeError):
        tokenize(["a"])
    model = _model()[0]
    with pytest.raises(ValueError, match="at least one token"):
        model.encode(torch.zeros(1, 2, dtype=torch.long), torch.tensor([0]))


def _random_corpus(seed, n=40):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(12)]
    hyps, refs = [], []
    for _ in range(n):
        ref = rng.choices(words, k=rng.randint(1, 12))
        hyp = [w if rng.random() < 0.6 else rng.choice(words) for w in ref][: rng.randint(1, 14)]
        hyps.append(hyp)
        refs.append(ref)
    return hyps, refs


@pytest.mark.peers
@pytest.mark.parametrize("smooth", ["exp", "none"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bleu_equals_sacrebleu(seed, smooth):
    sacrebleu = pytest.importorskip("sacrebleu")
    hyps, refs = _random_corpus(seed)
    ours = corpus_bleu(hyps, refs, smooth=smooth)
    theirs = sacrebleu.corpus_bleu([" ".join(h) for h in hyps], [[" ".join(r) for r in refs]],
                                   tokenize="none", smooth_method=smooth)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert ours.sys_len == theirs.sys_len and ours.ref_len == theirs.ref_len
    # two references per sentence
    refs2 = [r[::-1] for r in refs]
    ours2 = corpus_bleu(hyps, [[a, b] for a, b in zip(refs, refs2)], smooth=smooth)
    theirs2 = sacrebleu.corpus_bleu([" ".join(h) for h in hyps], [[" ".join(r) for r in refs],
                                    [" ".join(r) for r in refs2]], tokenize="none", smooth_method=smooth)
    assert ours2.score == pytest.approx(theirs2.score, abs=1e-9)


@pytest.mark.peers
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sentence_bleu_exercise_solution_equals_sacrebleu_add_one(seed):
    sacrebleu = pytest.importorskip("sacrebleu")
    import solutions

    ours = solutions.get("ch06.b_sentence_bleu")
    for h, r in zip(*_random_corpus(seed)):
        theirs = sacrebleu.sentence_bleu(" ".join(h), [" ".join(r)], smooth_method="add-k",
                                         smooth_value=1, tokenize="none").score
        assert ours(h, r) == pytest.approx(theirs, abs=1e-9)


def test_the_decoder_starts_from_the_encoders_last_states():
    """The bridge: the top layer's first decoder state is [forward state at the last real token;
    backward state at the first token]; bridge=False starts from zeros (None)."""
    glove = np.random.default_rng(0).standard_normal((len(WORDS), 5)).astype(np.float32)
    model = CoVe(CoVeConfig(tgt_vocab=9, d_hidden=6, d_tgt_emb=4), glove).eval()
    src, lens = _src([["a", "b", "c"], ["d"]], glove_vocab(WORDS))
    keys, (h, c) = model._encode(src, lens)
    assert h.shape == c.shape == (2, 2, 12)
    for i, n in enumerate(lens.tolist()):
        assert torch.allclose(h[-1, i, :6], keys[i, n - 1, :6], atol=1e-6)
        assert torch.allclose(h[-1, i, 6:], keys[i, 0, 6:], atol=1e-6)
    off = CoVe(CoVeConfig(tgt_vocab=9, d_hidden=6, d_tgt_emb=4, bridge=False), glove)
    assert off._encode(src, lens)[1] is None
