"""Chapter 7b's experiment helpers on tiny generated data: the tokenizer and the two configs,
pre-training, per-word perplexity, fine-tuning both models, the bootstrap, masking, the KV-cache
timing, the diagram, and the generation widget (callback and wiring, with an error then a change)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from companion.data.tasks import Example
from companion.evaluate.glue import GlueSpec, GlueTask
from companion.transformer import chapter7b as c7
from companion.transformer.gen_widget import (
    generate_html,
    generate_texts,
    gpt_generation_widget,
)

TEXT = ["the cat sat on the mat . the dog sat on the log .", "a cat saw a dog . the dog saw the cat ."] * 20
S = replace(c7.sizes("ci"), vocab_size=300, d_model=16, n_layer=1, n_head=2, block_size=16, batch_size=4,
            steps=6, ft_batch=8)


@pytest.fixture(scope="module")
def tok():
    return c7.train_tokenizer(TEXT, S.vocab_size)


@pytest.fixture(scope="module")
def pre(tok):
    docs = [tok.encode_ordinary(t) for t in TEXT]
    return c7.pretrain_pair(tok, docs, S)


def _task(name: str, regression: bool = False) -> GlueTask:
    rng = np.random.default_rng(0)
    words = ["good film", "bad film", "great plot", "awful plot"]
    exs = [Example(words[i % 4], float(rng.uniform(0, 5)) if regression else i % 2,
                   None if name == "sst2_glue" else words[(i + 1) % 4]) for i in range(24)]
    spec = GlueSpec(name, "ci", 0, {}, {}, {}, "")
    return GlueTask(name, exs[:16], exs[16:20], exs[16:], None if regression else ("a", "b"), spec)


def test_configs_share_the_vocabulary(tok):
    g, b = c7.gpt_config(tok, S), c7.bert_config(tok, S)
    assert g.vocab_size == b.vocab_size == len(tok) + 3
    assert {b.pad_id, b.cls_id, b.sep_id, b.mask_id, b.unk_id} <= set(tok.special_tokens.values())
    assert g.start_id == len(tok) and (g.d_model, g.n_layer) == (b.d_model, b.n_layer)
    assert c7.corpus_slice([["ab", "cd"], ["ef"]], 4) == ["ab c"]
    with pytest.raises(ValueError, match="max_chars"):
        c7.corpus_slice([["a"]], 0)
    for scale in ("ci", "laptop", "gpu"):
        assert c7.sizes(scale).d_model % c7.sizes(scale).n_head == 0


def test_pretraining_runs_equal_steps(pre, tok):
    assert pre.history["GPT"].steps == pre.history["BERT"].steps == S.steps
    assert pre.tokens["GPT"] == S.steps * S.batch_size * S.block_size
    losses = c7.heldout_losses(pre, [tok.encode_ordinary(t) for t in TEXT[:4]], tok.special_tokens[c7.EOT])
    assert set(losses) == {"GPT", "BERT"} and all(math.isfinite(v) for v in losses.values())
    assert len(c7.smooth(range(20), 5)) == 16


def test_lm_nll_scores_every_token_once(pre, tok):
    ids = tok.encode_ordinary(" ".join(TEXT[:3]))
    nll, n = c7.lm_nll(pre.gpt, ids, tok.special_tokens[c7.EOT], batch_size=2)
    assert n == len(ids)
    # the same sum by a direct loop over windows
    B, stream, ref = pre.gpt.config.block_size, [tok.special_tokens[c7.EOT], *ids], 0.0
    with torch.no_grad():
        for i in range(0, len(ids), B):
            r = torch.tensor(stream[i:i + B + 1])
            ref += float(torch.nn.functional.cross_entropy(pre.gpt(r[None, :-1])[0], r[1:], reduction="sum"))
    assert nll == pytest.approx(ref, rel=1e-5)
    sents = [s.split() for s in TEXT[:2]]
    r = c7.brown_perplexity(pre.gpt, tok, sents, sum(len(s) + 1 for s in sents))
    # per word divides by the words only: GPT predicts no end-of-sentence symbol
    assert r["words"] == sum(len(s) for s in sents) < r["units"]
    assert r["ppl_word"] == pytest.approx(math.exp(r["nll"] / r["words"]))
    assert r["ppl_unit"] == pytest.approx(math.exp(r["nll"] / r["units"])) and r["ppl_unit"] < r["ppl_word"]
    assert r["ppl_word"] == pytest.approx(r["ppl_token"] ** r["tokens_per_word"])
    assert "ppl_unit" not in c7.brown_perplexity(pre.gpt, tok, sents)
    assert r["tokens_per_word"] == pytest.approx(r["tokens"] / r["words"])


@pytest.mark.parametrize("name", ["sst2_glue", "rte", "stsb"])
def test_finetune_both_models(pre, tok, name):
    task = _task(name, regression=name == "stsb")
    for model, kw in ((pre.gpt, {"lm_weight": 0.5}), (pre.gpt, {"lm_weight": 0.0}), (pre.bert.encoder, {})):
        p = c7.finetune(model, tok, task, S, **kw)
        assert p.shape == (len(task.test),)
        if name != "stsb":
            assert set(np.unique(p)) <= {0, 1}
    with pytest.raises(TypeError, match="GPT or a BertEncoder"):
        c7.finetune(pre.bert, tok, task, S)


def test_bootstrap_and_frame():
    tasks = {"sst2_glue": _task("sst2_glue"), "rte": _task("rte")}
    gold = {t: np.array([e.label for e in tasks[t].test]) for t in tasks}
    perfect = {t: g.copy() for t, g in gold.items()}
    wrong = {t: 1 - g for t, g in gold.items()}
    d = c7.paired_bootstrap([perfect], [wrong], tasks, n_boot=50)
    assert np.allclose(d, 100.0)
    assert np.allclose(c7.paired_bootstrap([perfect], [perfect], tasks, n_boot=20), 0.0)
    df = c7.glue_frame({"a": [perfect, wrong], "b": [perfect]}, tasks)
    assert df.loc["b", "avg"] == 100.0 and df.loc["a", "avg"] == 50.0 and df.loc["a", "avg sd"] > 0


def test_masking_rates_and_table(tok):
    cfg = c7.bert_config(tok, S)
    ids = torch.randint(10, len(tok) - 10, (200, 64))
    r = c7.masking_rates(ids, cfg)
    assert abs(r["chosen"] - 0.15) < 0.01 and abs(r["[MASK]"] - 0.8) < 0.03
    assert abs(r["random"] - 0.1) < 0.02 and abs(r["kept"] - 0.1) < 0.02
    df = c7.masking_table(tok, cfg, "the cat sat on the mat", p=0.5)
    assert df["token"].iloc[0] == "[CLS]" and set(df["as"]) <= {"", "[MASK]", "random", "kept"}


def test_generation_timing_and_diagram(pre):
    r = c7.time_generation(pre.gpt, torch.tensor([[1, 2]]), 5, repeats=1)
    assert r["with cache s"] > 0 and r["speed-up"] > 0
    ax = c7.draw_gpt_bert()
    assert len(ax.patches) == 10 and any("MLM" in t.get_text() for t in ax.texts)


def test_widget_callback_and_wiring(pre, tok):
    a = generate_texts(pre.gpt, tok, "the cat", n_new=5, seed=1, n_samples=2)
    assert len(a) == 2 and all(t.startswith("the cat") for t in a)
    assert a == generate_texts(pre.gpt, tok, "the cat", n_new=5, seed=1, n_samples=2)
    g = generate_texts(pre.gpt, tok, "the cat", n_new=4, temperature=0, n_samples=2)
    assert g[0] == g[1]  # greedy: every sample the same
    assert "Cannot generate" in generate_html(pre.gpt, tok, "   ")
    assert "context" in generate_html(pre.gpt, tok, "the cat " * 40)
    w = gpt_generation_widget(pre.gpt, tok, prompt="the dog")
    assert w.calls == 1 and "<ol>" in w.output.value
    w.prompt.value = ""  # an error ...
    assert "Cannot generate" in w.output.value
    w.prompt.value = "a cat"  # ... then a change: the widget answers again
    assert "<b>a cat</b>" in w.output.value
    w.top_k.value = 5
    w.top_p.value = 0.5
    w.temperature.value = 0.0
    assert w.calls == 6 and "<ol>" in w.output.value


@pytest.mark.peers
@pytest.mark.slow
def test_minilm_in_our_encoder_with_our_wordpiece_equals_sentence_transformers():
    st = pytest.importorskip("sentence_transformers")
    from companion.transformer.hf import minilm_dir

    sentences = ["The stock market crashed.", "Shares dropped steeply.", "A man is playing a guitar.",
                 "Naïve café owners don't like Mondays!", "北京 is a city."]
    encode, n = c7.minilm_encoder()
    ref = st.SentenceTransformer(str(minilm_dir()), device="cpu").encode(sentences)
    assert n == 22_565_376
    np.testing.assert_allclose(encode(sentences), ref, atol=1e-5)
    with pytest.raises(ValueError, match="pooling"):
        c7.bert_sentence_encoder(None, None, "max")


def test_notebook_helpers(pre):
    assert c7.step_seconds(50, S, steps=1) > 0
    df = c7.pretrain_summary(pre, {"GPT": 1.0, "BERT": 2.0})
    assert list(df.index) == ["GPT", "BERT"] and df.loc["GPT", "tokens seen"] == pre.tokens["GPT"]
    tasks = {"sst2_glue": _task("sst2_glue"), "rte": _task("rte")}
    gold = {t: np.array([e.label for e in tasks[t].test]) for t in tasks}
    res = {"good": [gold], "bad": [{t: 1 - g for t, g in gold.items()}]}
    claims = c7.claim_table(res, tasks, {"g-b": ("good", "bad"), "b-g": ("bad", "good"), "g-g": ("good", "good")}, 30)
    assert list(claims["verdict"]) == ["holds", "reversed", "not significant"]
