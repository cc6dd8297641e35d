"""Chapter 10's prompts, verbalizers, calibration, PET and the fine-tuning helpers, on tiny models."""

import copy
import math

import numpy as np
import pytest
import torch

from companion.data.tasks import Example
from companion.transfer import finetune as ft
from companion.transfer import pet, prompts
from companion.transformer.bert import BertConfig, BertEncoder, BertForPreTraining
from companion.transformer.gpt import GPT, GPTConfig

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "it", "was", "great", "terrible", "good", "bad",
         "a", "movie", "fun", "dull", "ok", "excellent", "horrible", ".", "n/a"]
VOCAB = {w: i for i, w in enumerate(WORDS)}


def tokenize(text: str) -> list[int]:
    return [VOCAB.get(w, 1) for w in text.lower().replace(".", " .").split()]


def _cloze(seed=0):
    cfg = BertConfig(vocab_size=len(WORDS), max_len=24, d_model=16, n_head=2, n_layer=1)
    bert = BertForPreTraining(cfg, seed=seed)
    return prompts.ClozeModel(bert.encoder, bert.mlm, tokenize, cfg), bert


def _data():
    pos = ["a fun movie", "a great fun movie", "fun fun", "a good movie", "great great fun", "good fun"]
    neg = ["a dull movie", "a terrible dull movie", "dull dull", "a bad movie", "terrible bad", "bad dull"]
    return [Example(t, 1) for t in pos] + [Example(t, 0) for t in neg]


def test_verbalizer_scores_match_hand_computation():
    logits = torch.tensor([[1.0, 2.0, 0.0, -1.0, 0.5]])
    p = [math.exp(x) for x in logits[0].tolist()]
    z = sum(p)
    # label 0 <- word 1; label 1 <- words 2 and 4 (probabilities add up)
    want = [math.log(p[1] / z), math.log((p[2] + p[4]) / z)]
    got = prompts.label_scores(logits, [[1], [2, 4]])
    torch.testing.assert_close(got[0], torch.tensor(want), rtol=1e-6, atol=1e-6)
    dist = prompts.label_distribution(logits, [[1], [2, 4]])[0]
    torch.testing.assert_close(dist, torch.tensor([p[1], p[2] + p[4]]) / (p[1] + p[2] + p[4]))
    # the survey's five-way verbalizer, one word per star
    five = torch.tensor([[0.0, 0.0, 3.0, 1.0, 0.0, 0.0]])
    d5 = prompts.label_distribution(five, [[1], [2], [3], [4], [5]])[0]
    e = np.exp([0.0, 3.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(d5.numpy(), e / e.sum(), rtol=1e-6)
    assert prompts.FIVE_STARS[int(d5.argmax())] == "bad"
    with pytest.raises(ValueError, match="label word"):
        prompts.label_scores(logits, [[1], []])


def test_cloze_inputs_place_the_mask_and_truncate():
    cloze, _ = _cloze()
    b = prompts.cloze_inputs(cloze, "{text} it was [MASK] .", [Example("a fun movie", 1), Example("dull", 0)])
    assert b["ids"][0].tolist() == [2, 11, 13, 12, 5, 6, 4, 18, 3]
    assert b["mask_pos"].tolist() == [6, 4]
    assert b["attention_mask"][1].tolist() == [1] * 7 + [0, 0]
    short = prompts.cloze_inputs(cloze, "{text} it was [MASK] .", [Example("a fun movie", 1)], max_len=7)
    assert short["ids"][0].tolist() == [2, 11, 5, 6, 4, 18, 3]  # the text is cut, the pattern kept
    with pytest.raises(ValueError, match="exactly one"):
        prompts.cloze_inputs(cloze, "{text} it was .", [Example("a", 0)])
    with pytest.raises(ValueError, match="placeholder"):
        prompts.cloze_inputs(cloze, "it was [MASK] .", [Example("a", 0)])
    with pytest.raises(ValueError, match="tokens in this vocabulary"):
        cloze.word_id("great movie")


def test_mask_logits_read_the_mlm_head_at_the_mask():
    cloze, bert = _cloze()
    exs = [Example("a fun movie", 1), Example("dull", 0)]
    got = prompts.mask_logits(cloze, "{text} it was [MASK] .", exs)
    b = prompts.cloze_inputs(cloze, "{text} it was [MASK] .", exs)
    with torch.no_grad():
        full, _ = bert(b["ids"], b["segments"], b["attention_mask"])
    torch.testing.assert_close(got, full[torch.arange(2), b["mask_pos"]])


def test_calibration_centres_a_biased_prompt():
    p_cf = np.array([0.8, 0.2])
    np.testing.assert_allclose(prompts.calibrate(p_cf, p_cf), [0.5, 0.5])
    probs = np.array([[0.7, 0.3], [0.9, 0.1]])
    q = prompts.calibrate(probs, p_cf)
    np.testing.assert_allclose(q[0], [0.7 / 0.8, 0.3 / 0.2] / np.sum([0.7 / 0.8, 0.3 / 0.2]))
    assert q[0].argmax() == 1 and q[1].argmax() == 0  # the first flips, the second holds
    with pytest.raises(ValueError, match="strictly positive"):
        prompts.calibrate(probs, [1.0, 0.0])


def test_in_context_prompt_demos_and_scores():
    t = prompts.Template("x: {text} y:", sep=" | ")
    demos = [Example("a fun movie", 1), Example("a dull movie", 0)]
    text, kept = prompts.build_prompt(t, demos, Example("fun", 1), ["bad", "good"], str.split, 100)
    assert text == "x: a fun movie y: good | x: a dull movie y: bad | x: fun y:" and kept == 2
    text, kept = prompts.build_prompt(t, demos, Example("fun", 1), ["bad", "good"], str.split, 12)
    assert kept == 1 and text.startswith("x: a dull movie")
    with pytest.raises(ValueError, match="query alone"):
        prompts.build_prompt(t, demos, Example("fun fun fun", 1), ["bad", "good"], str.split, 3)
    vecs = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1], [0.6, 0.4]])
    assert prompts.choose_demos(4, 2, "similar", pool_vectors=vecs, query_vector=np.array([1.0, 0.0])) == [2, 0]
    r = prompts.choose_demos(4, 3, "random", seed=1)
    assert len(set(r)) == 3 and r == prompts.choose_demos(4, 3, "random", seed=1)
    gpt = GPT(GPTConfig(vocab_size=len(WORDS) + 3, block_size=16, d_model=16, n_head=2), seed=0)
    lp = prompts.gpt_label_logprobs(gpt, tokenize, ["a fun movie it was"], [7, 8], start_id=len(WORDS))
    with torch.no_grad():
        ids = torch.tensor([[len(WORDS), *tokenize("a fun movie it was")]])
        want = torch.log_softmax(gpt(ids)[0, -1], -1)[[7, 8]].numpy()
    np.testing.assert_allclose(lp[0], want, rtol=1e-5)


def test_gpt_label_logprobs_batched_equals_one_at_a_time():
    gpt = GPT(GPTConfig(vocab_size=len(WORDS) + 3, block_size=16, d_model=16, n_head=2), seed=0)
    texts = ["a fun movie it was", "fun", "a dull movie", "it was a fun fun movie"]
    one = prompts.gpt_label_logprobs(gpt, tokenize, texts, [7, 8], start_id=len(WORDS))
    many = prompts.gpt_label_logprobs(gpt, tokenize, texts, [7, 8], start_id=len(WORDS), batch_size=3)
    np.testing.assert_allclose(many, one, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="batch_size"):
        prompts.gpt_label_logprobs(gpt, tokenize, texts, [7, 8], start_id=len(WORDS), batch_size=0)


def test_icl_by_size_rows_and_calibration_by_hand():
    from companion.transfer import chapter10b as c10b

    vocab = {w: i for i, w in enumerate(WORDS)}

    class Tok:  # chapter 7b's tokenizer interface, over the test's word list
        def encode_ordinary(self, text):
            return [vocab[w] for w in text.replace("\n", " ").split() if w in vocab]

    gpts = {f"d{d}": GPT(GPTConfig(vocab_size=len(WORDS) + 3, block_size=32, d_model=d, n_head=2), seed=0)
            for d in (8, 16)}
    pool = [Example("a fun movie", 1), Example("a dull movie", 0), Example("fun", 1), Example("dull", 0)]
    queries = [Example("a fun movie", 1), Example("a dull movie", 0)]
    t = prompts.Template("{text} it was", sep=" ")
    words = ["bad", "good"]
    df = c10b.icl_by_size(gpts, Tok(), pool, queries, ks=(0, 2), draws=2, template=t, words=words,
                          start_id=len(WORDS))
    assert len(df) == 2 * (1 + 2) and set(df.columns) >= {"model", "k", "draw", "accuracy", "calibrated"}
    assert (df[df.k == 2]["demos in context"] == 2).all()
    # k = 0, the first model, by hand: renormalise over the two label words, divide by the
    # content-free ("N/A") distribution, argmax
    ids = [vocab["bad"], vocab["good"]]
    lp = prompts.gpt_label_logprobs(gpts["d8"], Tok().encode_ordinary, [t.render(q) for q in queries], ids,
                                    len(WORDS))
    lp_cf = prompts.gpt_label_logprobs(gpts["d8"], Tok().encode_ordinary, [t.render(Example("N/A", 0))], ids,
                                       len(WORDS))
    p = np.exp(lp) / np.exp(lp).sum(1, keepdims=True)
    q = prompts.calibrate(p, np.exp(lp_cf[0]) / np.exp(lp_cf[0]).sum())
    gold = np.array([1, 0])
    row = df[(df.model == "d8") & (df.k == 0)].iloc[0]
    assert row.accuracy == pytest.approx(100 * (p.argmax(1) == gold).mean())
    assert row.calibrated == pytest.approx(100 * (q.argmax(1) == gold).mean())
    summary = c10b.icl_size_summary(df, ["d8", "d16"], n_queries=len(queries))
    k2 = df[df.k == 2].groupby("model")["calibrated"].mean()
    assert summary["trend"] == pytest.approx(round(k2["d16"] - k2["d8"], 1))
    assert summary["se"] == pytest.approx(35.4) and summary["draw_lo"] <= summary["cal_lo"]


def test_widget_callback_error_then_recovery():
    cloze, _ = _cloze()
    d = prompts.prompt_distribution(cloze, "{text} it was [MASK] .", "great, terrible", "a fun movie")
    assert list(d) == ["great", "terrible"] and sum(d.values()) == pytest.approx(1.0)
    assert "Cannot score" in prompts.prompt_html(cloze, "{text} it was .", "great, terrible", "a fun movie")
    assert "two label words" in prompts.prompt_html(cloze, "{text} it was [MASK] .", "great", "a fun movie")
    assert "empty" in prompts.prompt_html(cloze, "{text} it was [MASK] .", "great, bad", "  ")
    ok = prompts.prompt_html(cloze, "{text} it was [MASK] .", "great, bad", "a fun movie")
    assert "<table>" in ok and "great" in ok


def test_pet_ensemble_soft_labels_by_hand():
    a = np.array([[2.0, 0.0], [0.0, 1.0]])
    b = np.array([[0.0, 0.0], [0.0, 3.0]])
    soft = pet.ensemble_soft_labels([a, b], weights=[3.0, 1.0], temperature=2.0)
    mean = (3 * a + 1 * b) / 4
    want = np.exp(mean / 2) / np.exp(mean / 2).sum(1, keepdims=True)
    np.testing.assert_allclose(soft, want)
    np.testing.assert_allclose(pet.ensemble_soft_labels([a]), np.exp(a / 2) / np.exp(a / 2).sum(1, keepdims=True))
    with pytest.raises(ValueError, match="non-negative"):
        pet.ensemble_soft_labels([a, b], weights=[1.0, -1.0])
    logits = torch.tensor([[1.0, 0.0]])
    q = torch.tensor([[0.25, 0.75]])
    ls = torch.log_softmax(logits, -1)[0]
    assert float(pet.soft_cross_entropy(logits, q)) == pytest.approx(float(-(0.25 * ls[0] + 0.75 * ls[1])))


def test_prompt_classifier_pet_and_distillation_learn_a_toy_task():
    cloze, _ = _cloze()
    data = _data()
    cfg = ft.FTConfig(epochs=30, lr=1e-2, batch_size=4, warmup=0.1, max_len=24)
    pvps = [pet.PVP("{text} it was [MASK] .", ("terrible", "great")), pet.PVP("[MASK] : {text}", ("bad", "good"))]
    logits = []
    for pvp in pvps:
        res, clf = pet.run_prompt_classifier(cloze, pvp, data, data, cfg)
        assert res.score >= 90, pvp  # it fits its training set
        logits.append(clf.label_logits(data, 24))
        # the original model is untouched (the classifier trains a copy)
        assert not any(p.requires_grad is False for p in clf.parameters())
    soft = pet.ensemble_soft_labels(logits)
    assert (soft.argmax(1) == np.array([e.label for e in data])).mean() >= 0.9
    student = pet.distill(cloze.encoder, tokenize, data, soft, ft.FTConfig(epochs=20, lr=3e-3, batch_size=4,
                                                                         max_len=24))
    out = ft.predict(student, cloze.config, ft.encode(tokenize, data, 24))
    assert (out.argmax(1) == np.array([e.label for e in data])).mean() >= 0.9


def test_label_word_search_finds_the_planted_words():
    V = 10
    logits = torch.zeros(4, V)
    logits[:2, 3] = 5.0  # class 0 examples make word 3 likely
    logits[2:, 7] = 5.0
    logits[:, 5] = 4.0   # a word likely everywhere
    labels = [0, 0, 1, 1]
    cand = pet.search_label_words(logits, labels, k=2)
    assert cand[0][0] == 3 and cand[1][0] == 7
    ids, acc = pet.best_assignment(logits, labels, cand)
    assert ids == [3, 7] and acc == 1.0


def test_warmup_and_layerwise_groups():
    f = ft.warmup_linear(10, 2)
    assert [round(f(s), 3) for s in range(10)] == [0.5, 1.0, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125]
    with pytest.raises(ValueError):
        ft.warmup_linear(5, 5)
    enc = BertEncoder(BertConfig(vocab_size=20, max_len=8, d_model=8, n_head=2, n_layer=3), seed=0)
    from companion.transformer.bert import BertForSequence

    clf = BertForSequence(enc, 2)
    groups = ft.layerwise_groups(clf, 1.0, decay=0.5)
    assert [g["lr"] for g in groups] == [0.125, 0.25, 0.5, 1.0, 1.0]  # embeddings ... head
    n = sum(p.numel() for g in groups for p in g["params"])
    assert n == sum(p.numel() for p in clf.parameters())
    with pytest.raises(ValueError, match="layer_decay"):
        ft.FTConfig(layer_decay=0.0)


def test_finetune_features_and_multitask_on_toy_data():
    cloze, _ = _cloze()
    data = _data()
    cfg = ft.FTConfig(epochs=10, lr=3e-3, batch_size=4, max_len=16)
    full = ft.run_classifier(cloze.encoder, tokenize, data, data, 2, cfg, method="full")
    assert full.score >= 90 and full.trainable > 1000
    lora = ft.run_classifier(cloze.encoder, tokenize, data, data, 2, cfg, method="lora", r=2)
    assert lora.trainable < full.trainable / 5
    feats = ft.run_features(cloze.encoder, tokenize, data, data, 2, cfg, epochs=40)
    assert feats.score >= 75 and feats.trainable == 2 + 1 + 16 * 2 + 2
    enc_data = {"sent": (ft.encode(tokenize, data, 16), [e.label for e in data]),
                "rev": (ft.encode(tokenize, data, 16), [1 - e.label for e in data])}
    mt = ft.MultiTask(copy.deepcopy(cloze.encoder), {"sent": 2, "rev": 2})
    ft.train(mt, ft.multitask_batches(cloze.config, enc_data, 4, 0), cfg)
    y = np.array([e.label for e in data])
    assert (ft.predict_task(mt, cloze.config, "sent", enc_data["sent"][0]).argmax(1) == y).mean() >= 0.9
    assert (ft.predict_task(mt, cloze.config, "rev", enc_data["rev"][0]).argmax(1) == 1 - y).mean() >= 0.9
    with pytest.raises(KeyError, match="no head"):
        mt(dict(ft.batch(cloze.config, enc_data["sent"][0][:2]), task="nli"))
