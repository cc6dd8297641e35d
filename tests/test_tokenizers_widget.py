"""The chapter's tokenizer helpers: the comparison tables, the merge stepper's HTML, and the
ipywidgets wiring of the stepper (state, not display), including an error then a change."""

from __future__ import annotations

import pytest

from companion.transformer.tokenizers import (
    BPE,
    ByteLevelBPE,
    WordPiece,
    compare_splits,
    merge_stepper_widget,
    stepper_html,
    tokens_per_word,
)
from companion.transformer.tokenizers.compare import pieces

TEXT = "low lower lowest newer newest wider widest slowest tidiest " * 10 + " ".join("lowernstid")


@pytest.fixture(scope="module")
def bpe():
    return BPE.train(TEXT, vocab_size=40)


@pytest.fixture(scope="module")
def gpt2():
    return ByteLevelBPE.gpt2()


@pytest.fixture(scope="module")
def bert():
    return WordPiece.bert_base_uncased()


def test_compare_splits(bpe, gpt2, bert):
    df = compare_splits(["lowest", "unaffable", "北京"], {"BPE": bpe, "GPT-2": gpt2, "BERT": bert})
    assert list(df.columns) == ["BPE", "GPT-2", "BERT"] and list(df.index) == ["lowest", "unaffable", "北京"]
    assert df.loc["lowest", "GPT-2"] == "␣lowest"  # in a sentence the word comes with its space
    assert df.loc["unaffable", "BERT"] == "una ##ffa ##ble"
    assert df.loc["北京", "BERT"] == "北 京"  # BERT splits CJK into characters
    assert "\ufffd" in df.loc["北京", "GPT-2"]  # a byte-level token can hold part of a character
    assert df.loc["lowest", "BPE"].replace(" ", "") == "lowest</w>"
    assert compare_splits(["x y"], {"split": str.split}).loc["x y", "split"] == "x y"
    with pytest.raises(ValueError, match="non-empty list"):
        compare_splits("lowest", {"BPE": bpe})
    with pytest.raises(TypeError, match="expected a BPE"):
        pieces(42, "x")


def test_tokens_per_word(bpe, gpt2, bert):
    texts = {"en": "the quick brown fox jumps over the lazy dog", "zh": "北京大学是中国的一所大学"}
    df = tokens_per_word(texts, {"GPT-2": gpt2, "BERT": bert, "BPE": bpe})
    assert len(df) == 6 and set(df.columns) >= {"tokens", "tokens_per_word", "tokens_per_char", "unk_share"}
    row = df.set_index(["text", "tokenizer"])
    assert row.loc[("en", "GPT-2"), "tokens"] == 9 and row.loc[("en", "BERT"), "tokens_per_word"] == 1.0
    assert row.loc[("zh", "BERT"), "tokens"] == 12  # one token per character ...
    assert row.loc[("zh", "GPT-2"), "tokens"] > 12  # ... byte-level BPE needs more for Chinese
    assert row.loc[("zh", "BPE"), "unk_share"] == 1.0  # trained on English letters only
    assert row.loc[("zh", "GPT-2"), "unk_share"] == 0.0
    # Chinese has no spaces between words: tokens per whitespace "word" would mean nothing
    assert row.loc[("zh", "BERT"), "tokens_per_word"] != row.loc[("zh", "BERT"), "tokens_per_word"]
    assert row.loc[("zh", "BERT"), "tokens_per_char"] == 1.0
    with pytest.raises(ValueError, match="is empty"):
        tokens_per_word({"blank": "  "}, {"GPT-2": gpt2})
    with pytest.raises(ValueError, match="non-empty mapping"):
        tokens_per_word(texts, {})


def test_stepper_html(bpe, gpt2):
    steps = bpe.steps("lowest")
    first = stepper_html(bpe, "lowest", 0)
    assert f"step 0 of {len(steps) - 1}" in first and "no merge applied yet" in first
    last = stepper_html(bpe, "lowest", len(steps) - 1)
    assert "<ol>" in last and last.count("<li>") == len(steps) - 1 and "&lt;/w&gt;" in last
    assert "␣token" in stepper_html(gpt2, " tokenization", len(gpt2.steps(" tokenization")) - 1)
    with pytest.raises(ValueError, match="step must be an int in 0.."):
        stepper_html(bpe, "lowest", len(steps))
    with pytest.raises(TypeError, match="BPE or ByteLevelBPE"):
        stepper_html(WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]), "x", 0)


def test_widget_steps_errors_and_recovers(bpe, gpt2):
    w = merge_stepper_widget({"BPE": bpe, "GPT-2": gpt2}, word="lowest")
    n = len(bpe.steps("lowest")) - 1
    assert w.step.max == n and w.step.value == n and w.calls == 1
    assert f"step {n} of {n}" in w.output.value
    w.step.value = 0
    assert "step 0 of" in w.output.value and w.calls == 2
    w.word.value = "two words"  # an error: shown, not raised
    assert "Cannot step through" in w.output.value and "no whitespace" in w.output.value
    w.word.value = "newest"  # then a change: a fresh range, the final segmentation shown
    m = len(bpe.steps("newest")) - 1
    assert w.step.max == m and w.step.value == m and f"step {m} of {m}" in w.output.value
    w.choice.value = "GPT-2"  # 'newest' without a space is one piece for GPT-2 too
    k = len(gpt2.steps("newest")) - 1
    assert w.step.max == k and f"step {k} of {k}" in w.output.value
    w.word.value = " lowest"
    w.step.value = 1
    assert "step 1 of" in w.output.value and "rank" in w.output.value
    with pytest.raises(ValueError, match="not among"):
        merge_stepper_widget({"BPE": bpe}, tokenizer="GPT-2")
