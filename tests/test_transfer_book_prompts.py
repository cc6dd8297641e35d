"""companion.transfer.book_prompts: chapter 10b's experiments on the book's stored models, on
toy networks (the stored ones are loaded only where the test says so)."""

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from companion.data.tasks import Example  # noqa: E402
from companion.transfer import book_prompts as bp  # noqa: E402
from companion.transfer import pet, prompts  # noqa: E402
from companion.transformer.bert import BertConfig, BertForPreTraining  # noqa: E402
from companion.transformer.gpt import GPT, GPTConfig  # noqa: E402

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "it", "was", "great", "terrible", "good", "bad",
         "a", "movie", "fun", "dull", "review", "sentiment", ":", ".", "n/a"]
VOCAB = {w: i for i, w in enumerate(WORDS)}


def tokenize(text: str) -> list[int]:
    return [VOCAB.get(w, 1) for w in text.lower().replace(".", " .").replace(":", " :").split()]


class Tok:
    special_tokens = {"<|endoftext|>": len(WORDS)}

    def encode_ordinary(self, text):
        return [VOCAB[w] for w in text.lower().replace(":", " :").split() if w in VOCAB]


def _cloze(seed=0):
    cfg = BertConfig(vocab_size=len(WORDS), max_len=24, d_model=16, n_head=2, n_layer=1, pad_id=0, unk_id=1,
                     cls_id=2, sep_id=3, mask_id=4)
    bert = BertForPreTraining(cfg, seed=seed)
    return prompts.ClozeModel(bert.encoder, bert.mlm, tokenize, cfg)


def _data():
    pos = ["a fun movie", "a great fun movie", "fun fun", "a good movie"]
    neg = ["a dull movie", "a terrible dull movie", "dull dull", "a bad movie"]
    return [Example(t, 1) for t in pos] + [Example(t, 0) for t in neg]


def test_zero_shot_grid_rows_match_a_hand_computation():
    m, data = _cloze(), _data()
    df = bp.zero_shot_grid({"toy": m}, ["{text} it was [MASK] ."], [("bad", "good"), ("dull", "fun")], data,
                           keep_predictions=True)
    assert len(df) == 2 and set(df.words) == {"bad/good", "dull/fun"}
    logits = prompts.mask_logits(m, "{text} it was [MASK] .", data)
    p = prompts.label_distribution(logits, [[VOCAB["bad"]], [VOCAB["good"]]]).numpy()
    gold = np.array([e.label for e in data])
    row = df[df.words == "bad/good"].iloc[0]
    assert row.accuracy == pytest.approx(100 * (p.argmax(1) == gold).mean())
    assert row["P(positive)"] == pytest.approx(float(p[:, 1].mean()), rel=1e-5)
    assert row.pred == p.argmax(1).tolist() and len(row.pred_cal) == len(data)
    with pytest.raises(ValueError, match="examples"):
        bp.zero_shot_grid({"toy": m}, ["{text} [MASK]"], [("bad", "good")], [])


def test_calibrate_has_the_argmax_of_zhaos_softmax_form():
    rng = np.random.default_rng(0)
    p, cf = rng.dirichlet(np.ones(3), size=50), rng.dirichlet(np.ones(3))
    zhao = torch.softmax(torch.tensor(p / cf), -1).numpy()  # softmax(W p + b), W = diag(p_cf)^-1, b = 0
    ours = prompts.calibrate(p, cf)
    assert (zhao.argmax(1) == ours.argmax(1)).all()
    assert np.allclose(prompts.calibrate(cf, cf), 1 / 3)


def test_few_shot_draws_fix_the_demonstrations_and_calibrate_per_draw():
    gpt = GPT(GPTConfig(vocab_size=len(WORDS) + 3, block_size=48, d_model=16, n_head=2), seed=0)
    pool = [Example("fun", 1), Example("dull", 0), Example("a fun movie", 1), Example("a dull movie", 0)]
    queries = _data()
    t = prompts.Template("review : {text} sentiment :", sep=" ")
    df = bp.few_shot_draws(gpt, Tok(), pool, queries, [0, 2], 2, t, ["bad", "good"])
    assert list(df.k) == [0, 2, 2] and (df[df.k == 2]["demos in context"] == 2).all()
    assert df[["accuracy", "calibrated"]].stack().between(0, 100).all()
    # k = 0 by hand: renormalised label probabilities, divided by the content-free mean
    ids = [VOCAB["bad"], VOCAB["good"]]
    start = len(WORDS)
    lp = prompts.gpt_label_logprobs(gpt, Tok().encode_ordinary, [t.render(q) for q in queries], ids, start)
    lp_cf = prompts.gpt_label_logprobs(gpt, Tok().encode_ordinary,
                                       [t.render(Example(c, 0)) for c in prompts.CONTENT_FREE], ids, start)
    p = np.exp(lp) / np.exp(lp).sum(1, keepdims=True)
    p_cf = (np.exp(lp_cf) / np.exp(lp_cf).sum(1, keepdims=True)).mean(0)
    gold = np.array([q.label for q in queries])
    assert df.iloc[0].calibrated == pytest.approx(100 * (prompts.calibrate(p, p_cf).argmax(1) == gold).mean())
    with pytest.raises(ValueError, match="label word"):
        bp.few_shot_draws(gpt, Tok(), pool, queries, [0], 1, t, ["bad", "fun movie"])


def test_head_vs_prompt_same_budget_for_both_arms():
    m, data = _cloze(), _data()
    cfg = bp.curve_config(len(data), steps=3, lr=1e-3, head_lr=1e-2, batch_size=4, max_len=16, seed=0)
    assert cfg.batch_size == 4 and cfg.epochs * 2 >= 3
    r = bp.head_vs_prompt(m, pet.PVP("{text} it was [MASK] .", ("bad", "good")), data, data, cfg)
    assert r["head"]["steps"] == r["prompt"]["steps"] == cfg.epochs * 2
    assert len(r["head"]["pred"]) == len(data) and 0 <= r["prompt"]["accuracy"] <= 100


def test_paired_bootstrap_and_t_interval():
    gold = [0, 1] * 50
    a, b = gold, [0] * 100
    eff, lo, hi = bp.paired_bootstrap(a, b, gold, n_boot=200)
    assert eff == pytest.approx(50.0) and lo <= eff <= hi
    m, lo, hi = bp.t_interval([1.0, 2.0, 3.0])
    assert m == pytest.approx(2.0) and lo < 2.0 < hi
    with pytest.raises(ValueError):
        bp.paired_bootstrap([0, 1], [0], [0, 1])
    with pytest.raises(ValueError):
        bp.t_interval([1.0])
    assert bp.majority([1, 1, 0], [1, 0, 0, 0]) == pytest.approx(25.0)


def test_stored_results_readers(tmp_path):
    with pytest.raises(FileNotFoundError, match="merge"):
        bp.stored_results(tmp_path / "missing.json")
    res = {"zeroshot": {"sst2": {"rows": [
        {"model": "bert-book", "pattern": "p", "words": "bad/good", "accuracy": 60.0, "calibrated": 62.0},
        {"model": "untrained twin", "pattern": "p", "words": "bad/good", "accuracy": 50.0, "calibrated": 49.0}],
        "majority": 50.9}},
        "calibration": {"rows": [{"k": 0, "draw": 0, "accuracy": 50.0, "calibrated": 55.0, "P(last word)": 0.9},
                                 {"k": 2, "draw": 0, "accuracy": 52.0, "calibrated": 60.0, "P(last word)": 0.8},
                                 {"k": 2, "draw": 1, "accuracy": 54.0, "calibrated": 58.0, "P(last word)": 0.7}]},
        "curve": {"rows": [{"n": 16, "seed": 0, "method": "head", "accuracy": 55.0}]}}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(res))
    got = bp.stored_results(f)
    t = bp.zero_shot_table(got, "sst2")
    assert list(t.columns) == ["bert-book", "untrained twin"] and t.iloc[0, 0] == 62.0
    assert bp.zero_shot_row(got, "sst2", "p", "bad/good")["accuracy"] == 60.0
    with pytest.raises(KeyError):
        bp.zero_shot_table(got, "imdb")
    c = bp.calibration_table(got)
    assert c.loc[2, "draws"] == 2 and c.loc[2, "calibrated"] == pytest.approx(59.0)
    assert len(bp.curve_frame(got)) == 1


def test_diagrams_draw():
    import matplotlib.pyplot as plt

    for draw in (bp.draw_pipeline, bp.draw_pet_loop):
        fig, ax = plt.subplots()
        assert draw(ax) is ax and ax.texts
        plt.close(fig)
