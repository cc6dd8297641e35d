"""Chapter 11b's multilingual MLM pieces, on tiny generated text (nothing is downloaded)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from companion.probing import multilingual as ml

EN = ["the cat sat on the mat .", "a dog ran 3 miles !", "the cat ran , the dog sat ?", "i like 2 cats ."] * 5
ZH = ["猫坐在垫子上。", "狗跑了３英里！", "我喜欢２只猫。", "天上有月亮，水里有鱼？"] * 5


@pytest.fixture(scope="module")
def tok():
    return ml.train_tokenizer([ml.normalize(t) for t in EN], [ml.normalize(t) for t in ZH], 120)


def test_normalize_makes_full_width_punctuation_and_digits_ascii():
    assert ml.normalize("狗跑了３英里！，。") == "狗跑了3英里!,。"  # 。 has no ASCII fold


def test_shared_tokens_counts_digits_and_punctuation(tok):
    stats = ml.shared_tokens(tok, [ml.normalize(t) for t in EN], [ml.normalize(t) for t in ZH])
    shared = set(ml.examples_of_shared(tok, [ml.normalize(t) for t in EN], [ml.normalize(t) for t in ZH], k=50))
    assert {"3", "2", "!", ",", "?"} <= shared and "猫" not in shared and "cat" not in shared
    assert stats["shared types"] == len(shared)
    assert 0 < stats["zh tokens shared %"] < 50 and 0 < stats["en tokens shared %"] < 100
    assert tok.tokenize("猫坐") == ["猫", "坐"]  # Chinese enters as characters


def test_pack_sentences_fills_rows_and_cuts_long_sentences():
    assert ml.pack_sentences([[1, 2], [3], [4, 5, 6], [7]], 3) == [[1, 2, 3], [4, 5, 6], [7]]
    assert ml.pack_sentences([[1, 2, 3, 4, 5], [], [6]], 2) == [[1, 2], [6]]
    with pytest.raises(ValueError, match="room"):
        ml.pack_sentences([[1]], 0)


def test_auc_matches_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)  # rounding makes ties
    assert ml.auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    with pytest.raises(ValueError, match="positive and one negative"):
        ml.auc(s[:3], np.ones(3))


def test_logreg_transfer_separable_and_chance():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 5))
    y = (x[:, 0] > 0).astype(int)
    r = ml.transfer(x[:200], y[:200], x[200:], y[200:])
    assert r["acc"] > 95 and r["auc"] > 99
    # a test set whose labels the training direction does not see: about chance
    r = ml.transfer(x[:200], y[:200], x[200:], (x[200:, 1] > 0).astype(int))
    assert 30 < r["auc"] < 70
    with pytest.raises(ValueError, match="one label per row"):
        ml.fit_logreg(x, y[:5])


def test_retrieval_identity_permutation_and_centering():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(50, 8))
    assert ml.retrieval(a, a + 0.01 * rng.normal(size=a.shape)).all()
    assert ml.retrieval(a, a[::-1]).sum() <= 1
    # each language shifted its own way hides the pairs from cosine; removing each language's
    # mean restores them
    u, v = 20 * np.eye(8)[0], 20 * np.eye(8)[1]
    b = a + 0.1 * rng.normal(size=a.shape) + v
    assert ml.retrieval(a + u, b).mean() < 0.2
    assert ml.retrieval(ml.center(a + u), ml.center(b)).mean() > 0.9
    with pytest.raises(ValueError, match="aligned"):
        ml.retrieval(a, a[:3])


def test_overlap_retrieval_matches_on_shared_numbers(tok):
    en = ["i ran 3 miles .", "i like 2 cats"]
    zh = ["我喜欢２只猫", "我跑了３英里。"]
    hit = ml.overlap_retrieval(tok, [ml.normalize(t) for t in en], [ml.normalize(t) for t in zh][::-1])
    assert hit.tolist() == [True, True]


def test_bootstrap_ci_brackets_the_mean():
    m, lo, hi = ml.bootstrap_ci(np.r_[np.ones(30), np.zeros(70)], 500)
    assert m == pytest.approx(0.3) and lo < 0.3 < hi


def test_pretrain_and_sentence_vectors_are_padding_invariant(tok):
    s = ml.sizes("ci")
    s = ml.Sizes(**{**s.__dict__, "steps": 3, "d_model": 16, "max_len": 16, "batch_size": 4})
    pre = ml.pretrain_mlm(tok, [ml.normalize(t) for t in EN], [ml.normalize(t) for t in ZH], s, seed=0)
    assert len(pre.losses) == 3 and all(np.isfinite(pre.losses)) and pre.tokens > 0
    texts = ["猫坐在垫子上。", "the cat sat on the mat with a dog and a cat ."]
    alone = ml.sentence_vectors(pre.model, tok, texts[:1])
    batch = ml.sentence_vectors(pre.model, tok, texts)
    assert len(batch) == s.n_layer + 1 and batch[0].shape == (2, 16)
    for a, b in zip(alone, batch):
        np.testing.assert_allclose(a[0], b[0], atol=1e-5)
    # layer 0 of a one-token text is that token's embedding row (after LayerNorm)
    emb = pre.model.encoder.embeddings
    ids = torch.tensor([[tok.vocab["[CLS]"], tok.vocab["猫"], tok.vocab["[SEP]"]]])
    want = emb(ids)[0, 1].detach().numpy()
    np.testing.assert_allclose(ml.sentence_vectors(pre.model, tok, ["猫"])[0][0], want, atol=1e-5)
    untrained = ml.pretrain_mlm(tok, EN, ZH, s, seed=0, steps=0)
    assert untrained.losses == [] and untrained.cpu_seconds == 0.0


def test_word_translation_finds_planted_pairs(tok):
    E = np.random.default_rng(0).normal(size=(len(tok), 8))
    E[tok.vocab["cat"]] = E[tok.vocab["猫"]]  # plant one translation
    p, chance, rows = ml.word_translation(tok, E, [("cat", "猫"), ("dog", "狗"), ("zebra", "斑")], k=1)
    assert [r[0] for r in rows] == ["cat", "dog"] and rows[0][2] == ["猫"]
    assert p >= 0.5 and 0 < chance < 0.2
    with pytest.raises(ValueError, match="none of the word pairs"):
        ml.word_translation(tok, E, [("zebra", "斑")])


def test_nearest_translations_callback_errors_then_answers(tok):
    s = ml.Sizes(**{**ml.sizes("ci").__dict__, "d_model": 16, "max_len": 16})
    model = ml.pretrain_mlm(tok, EN, ZH, s, steps=0).model
    pool = [ml.normalize(t) for t in ZH[:4]]
    vecs = ml.sentence_vectors(model, tok, pool)[1]
    mean = vecs.mean(0)
    with pytest.raises(ValueError, match="type a sentence"):
        ml.nearest_translations("  ", model, tok, pool, vecs, 1, mean, mean)
    with pytest.raises(ValueError, match="k must be"):
        ml.nearest_translations("cat", model, tok, pool, vecs, 1, mean, mean, k=9)
    got = ml.nearest_translations(pool[2], model, tok, pool, vecs, 1, mean, mean, k=2)
    assert got[0][0] == pool[2] and got[0][1] == pytest.approx(1.0, abs=1e-4) and len(got) == 2
    assert ml.is_chinese("我喜欢小猫 cat") and not ml.is_chinese("I like 猫")


def test_tlm_rows_join_a_pair_with_sep_and_drop_long_pairs(tok):
    rows = ml.tlm_rows(tok, [("a cat", "猫"), ("the cat sat on the mat " * 5, "猫")], room=10)
    assert rows == [[*tok.ids("a cat"), tok.vocab["[SEP]"], tok.vocab["猫"]]]


def test_retrieval_widget_callback_shows_an_error_then_answers_again(tok):
    from types import SimpleNamespace as NS

    from companion.probing import chapter11b as c11b

    s = ml.Sizes(**{**ml.sizes("ci").__dict__, "d_model": 16, "max_len": 16})
    model = ml.pretrain_mlm(tok, EN, ZH, s, steps=0).model
    en, zh = [ml.normalize(t) for t in EN[:4]], [ml.normalize(t) for t in ZH[:4]]
    pools = {"en": (en, ml.sentence_vectors(model, tok, en)[1]), "zh": (zh, ml.sentence_vectors(model, tok, zh)[1])}
    picker = c11b.RetrievalPicker(model, tok, pools, 1, NS(value="  "), NS(value=2), NS(value=""), None)
    picker.update()
    assert "Cannot search" in picker.output.value and "type a sentence" in picker.output.value
    picker.sentence.value = "the cat sat on the mat ."  # the reader types: the widget answers again
    picker.update()
    assert picker.output.value.count("<li>") == 2 and "en → zh" in picker.output.value and picker.calls == 2
    picker.sentence.value = zh[1]  # Chinese in, English out
    picker.update()
    assert "zh → en" in picker.output.value


def test_split_chinese_cuts_after_sentence_marks_and_drops_scraps():
    assert ml.split_chinese("今天天气很好。我们去公园吧！你来吗？好") == ["今天天气很好。", "我们去公园吧！", "你来吗？"]
    assert ml.split_chinese("他说：“好的。”然后走了。") == ["他说：“好的。”然后走了。"]  # a quote stays whole
    assert ml.split_chinese("") == []
