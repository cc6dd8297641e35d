"""Chapter 11b's Fake-English anchor, on tiny generated text (nothing is downloaded)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from companion.probing import fake_english as fe
from companion.probing import multilingual as ml

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: a second thread only waits

EN = ["the cat sat on the mat .", "a dog ran to the park !", "the cat ran , the dog sat ?", "i like the big cats ."] * 6
SIZES = dataclasses.replace(fe.sizes("ci"), d_model=16, n_head=2, max_len=16, batch_size=8, steps=4,
                            n_dev=4, n_pairs=4, n_train=8, n_test=4, widths=(8, 32))


@pytest.fixture(scope="module")
def tok():
    return fe.ShiftedTokenizer(ml.train_tokenizer(EN, [], 60))


@pytest.fixture(scope="module")
def setup(tok):
    y = np.array([0, 1] * 4)
    sst = {"train": (EN[:8], y), "test": (EN[8:16], y)}
    return fe.Setup(SIZES, tok, EN[:12], fe.fake(EN[12:]), EN[:4], EN[4:8], sst, False, 0.0)


def test_shift_gives_disjoint_vocabularies_with_identical_structure(tok):
    V = len(tok.base)
    assert tok.shift == V and len(tok) == 2 * V
    for text in EN[:4]:
        en, fk = tok.ids(text), tok.ids(fe.Fake(text))
        assert len(en) == len(fk) and all(i >= fe.N_SPECIAL for i in en)
        assert fk == [i + V for i in en] and not set(en) & set(fk)
        assert all(V <= i < 2 * V for i in fk)
        assert tok.unshift(fk) == en and tok.decode(fk) == tok.base.decode(en) == tok.decode(en)
        assert all(t.startswith(fe.FAKE_PREFIX) for t in tok.tokens(fk))
    assert tok.vocab["[CLS]"] == 2 and tok.vocab[fe.FAKE_PREFIX + "[CLS]"] == V + 2
    # an unknown character is [UNK] in the data for both languages; the model decides whether it is shared
    assert tok.ids(fe.Fake("the 猫")) == [tok.base.vocab["the"] + V, 1]
    assert repr(fe.Fake("a b")) == "Fake('a b')" and isinstance(fe.fake(["x"])[0], str)


def test_model_inputs_switches_specials_and_positions():
    shift, L = 10, 8
    ids = torch.tensor([[2, 7, 8, 3, 0], [2, 17, 4, 3, 0]])  # English [CLS] w w [SEP] [PAD]; Fake with a [MASK]
    for sep in (False, True):
        for lang in (False, True):
            tok, pos = fe.model_inputs(ids, shift, L, separate_specials=sep, language_positions=lang)
            assert tok[0].tolist() == [2, 7, 8, 3, 0] and pos[0].tolist() == [0, 1, 2, 3, 4]  # English never moves
            assert tok[1].tolist() == ([12, 17, 14, 13, 10] if sep else [2, 17, 4, 3, 0])
            assert pos[1].tolist() == ([8, 9, 10, 11, 12] if lang else [0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"ids must be a \[batch, length\] tensor"):
        fe.model_inputs(torch.tensor([2, 7, 3]), shift, L)


@pytest.mark.parametrize("sep,lang", [(False, False), (True, False), (False, True), (True, True)])
def test_the_model_looks_up_what_the_switches_say(tok, sep, lang):
    model = fe.build_model(tok, SIZES, seed=0, separate_specials=sep, language_positions=lang)
    emb = model.encoder.embeddings
    seen = {}
    hooks = [emb.tok.register_forward_hook(lambda m, i, o: seen.__setitem__("tok", i[0].clone())),
             emb.pos.register_forward_hook(lambda m, i, o: seen.__setitem__("pos", i[0].clone()))]
    try:
        ml.sentence_vectors(model, tok, [EN[0], fe.Fake(EN[0])])
    finally:
        for h in hooks:
            h.remove()
    V, L = tok.shift, SIZES.max_len
    en, fk = seen["tok"][0], seen["tok"][1]
    n = len(tok.ids(EN[0])) + 2
    assert en[0] == 2 and en[n - 1] == 3 and (en[1:n - 1] < V).all()
    assert (fk[0], fk[n - 1]) == ((V + 2, V + 3) if sep else (2, 3))
    assert (fk[1:n - 1] == en[1:n - 1] + V).all()
    assert seen["pos"][0, :n].tolist() == list(range(n))
    assert seen["pos"][1, :n].tolist() == [p + (L if lang else 0) for p in range(n)]
    assert emb.pos.num_embeddings == (2 * L if lang else L)


def test_build_model_starts_where_the_plain_model_starts(tok):
    from companion.transformer.bert import BertForPreTraining

    plain = BertForPreTraining(ml.bert_config(tok, SIZES), seed=3).state_dict()
    for sep, lang in ((False, False), (True, True)):
        model = fe.build_model(tok, SIZES, seed=3, separate_specials=sep, language_positions=lang)
        got = model.state_dict()
        assert set(got) == set(plain)
        for k, v in plain.items():
            w = got[k][:SIZES.max_len] if k.endswith("embeddings.pos.weight") else got[k]
            assert torch.equal(w, v), k
        assert model.mlm.decoder.weight is model.encoder.embeddings.tok.weight


def _evaluation_vectors(n: int, d: int, rng, copies_at: int) -> dict[str, list[np.ndarray]]:
    out = {}
    for split in ("dev", "test"):
        a = rng.standard_normal((n, d))
        rand = rng.standard_normal((n, d))
        out[f"{split} en"] = [a, a]
        out[f"{split} fake"] = [a if k == copies_at else rand for k in range(2)]
    x = rng.standard_normal((2 * n, d))
    out.update({"sst train": [x, x], "sst test": [x, x], "sst test fake": [x, x]})
    return out


def test_retrieval_of_identical_copies_is_perfect_and_of_shuffled_ones_at_chance():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((400, 16))
    assert ml.retrieval(a, a.copy()).all()
    assert ml.retrieval(a, a[rng.permutation(400)]).mean() < 0.02  # chance is 1/400
    y = np.array([0, 1] * 50)
    for copies_at in (0, 1):
        ev = fe._measure(_evaluation_vectors(50, 8, rng, copies_at), y, y)
        assert ev.layer == copies_at and ev.hits.all() and ev.dev_p1[copies_at] == 100.0
        assert ev.test_p1[1 - copies_at] < 20
    diff = fe.paired_difference(ev, ev, n_boot=50)
    assert diff == {"P@1": [0.0, 0.0, 0.0], "en->fake AUC": [0.0, 0.0, 0.0]}


def test_chance_arm_is_near_chance(setup):
    s = dataclasses.replace(SIZES, n_dev=100, n_pairs=300)
    y = np.array([0, 1] * 200)
    st = dataclasses.replace(setup, sizes=s, sentiment={"train": (["x"] * 400, y), "test": (["x"] * 400, y)})
    summary = fe.chance(st, d=16).summary(n_boot=100)
    assert summary["P@1"][0] < 3 and summary["P@1"][1] <= 1 / 3 <= summary["P@1"][2] + 1
    assert 40 < summary["en->fake AUC"][0] < 60 and summary["en->fake AUC"][1] < 50 < summary["en->fake AUC"][2]


def test_pretraining_is_deterministic_and_runs_every_arm(setup):
    a = fe.pretrain(setup, seed=1, device="cpu")
    b = fe.pretrain(setup, seed=1, device="cpu")
    assert len(a.losses) == SIZES.steps and a.losses == b.losses
    va = ml.sentence_vectors(a.model, setup.tok, [fe.Fake(EN[1])])
    vb = ml.sentence_vectors(b.model, setup.tok, [fe.Fake(EN[1])])
    assert all(np.array_equal(x, y) for x, y in zip(va, vb))
    r = fe.run_arm(setup, "separate specials + positions", seed=1, device="cpu")
    assert r.trained.losses != a.losses and r.untrained.losses == []  # other switches, other training
    summary = r.summary(n_boot=20)
    assert summary["trained - untrained"]["P@1"][0] == pytest.approx(summary["trained"]["P@1"][0]
                                                                     - summary["untrained"]["P@1"][0])
    untrained = fe.pretrain(setup, seed=1, steps=0)
    assert untrained.losses == [] and not untrained.model.training
    for name, (sep, lang, width) in fe.ARMS.items():
        d = None if width is None else SIZES.widths[width]
        m = fe.pretrain(setup, seed=0, steps=2, separate_specials=sep, language_positions=lang, d_model=d)
        ev = fe.evaluate(m.model, setup)
        assert 0 <= ev.layer <= SIZES.n_layer and len(ev.hits) == len(setup.test), name
        assert m.model.config.d_model == (d or SIZES.d_model)
        assert fe.evaluate(m.model, setup, layer=0).layer == 0


def test_bad_inputs_are_named(tok, setup):
    with pytest.raises(ValueError, match="base must be a WordPiece tokenizer"):
        fe.ShiftedTokenizer(object())
    with pytest.raises(TypeError, match="texts must be a list"):
        fe.fake("one string")
    with pytest.raises(TypeError, match="tok must be a ShiftedTokenizer"):
        fe.build_model(tok.base, SIZES)
    with pytest.raises(ValueError, match="d_model must be a multiple of n_head=2, got 7"):
        fe.pretrain(setup, d_model=7)
    with pytest.raises(ValueError, match="steps must be an int >= 0, got -1"):
        fe.pretrain(setup, steps=-1)
    with pytest.raises(TypeError, match="setup must be a fake_english.Setup"):
        fe.pretrain(SIZES)
    with pytest.raises(TypeError, match="s must be fake_english.Sizes"):
        fe.prepare(ml.sizes("ci"))
    model = fe.build_model(tok, SIZES)
    with pytest.raises(ValueError, match=r"layer must be None or an int in 0..2, got 3"):
        fe.evaluate(model, setup, layer=3)
    with pytest.raises(ValueError, match=r"ids must be a \[batch, length <= 16\] tensor"):
        model.encoder.embeddings(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match="same test items"):
        y = np.array([0, 1])
        ev = fe.Evaluation(0, [], [], np.ones(2, bool), {"en->fake": np.zeros(2)}, y)
        fe.paired_difference(ev, dataclasses.replace(ev, hits=np.ones(3, bool)))
    with pytest.raises(ValueError, match="arm must be one of .* got 'huge'"):
        fe.run_arm(setup, "huge")
    with pytest.raises(ValueError, match="source must be one of"):
        fe.pretraining_text(100, source="wiki")
    with pytest.raises(TypeError, match="model must be a BertForPreTraining"):
        ml.pretrain_mlm(tok, EN, [], SIZES, model=object())


def test_unigram_entropy_is_each_languages_own(setup, tok):
    st = dataclasses.replace(setup, english=["the cat the cat"], fake=fe.fake(["the the the dog"]))
    h = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))  # English: the, cat 1:1 -> log 2; Fake: 3:1
    assert fe.unigram_entropy(st) == pytest.approx((4 * np.log(2) + 4 * h) / 8)
