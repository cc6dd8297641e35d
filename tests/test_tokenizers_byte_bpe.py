"""GPT-2's byte-level BPE: the byte map, file reading and its errors, special tokens, round trips
on arbitrary unicode, a small trained tokenizer, and ids equal to tiktoken's (and HF's
GPT2Tokenizer's) on awkward strings. Whole corpora: ``tests/test_tokenizers_parity.py``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.transformer.tokenizers import (
    GPT2_PATTERN,
    ByteLevelBPE,
    bytes_to_unicode,
    read_merges,
)

AWKWARD = [
    "Hello world", "", " ", "  leading and trailing  ", "tabs\tand\t\ttabs", "crlf\r\nline\r\n",
    "runs     of   spaces", "trailing spaces   \n  \n", "I'm can't we'll they're you've he'd I'M",
    "3.14159 1,000,000 2026-12-01 ½ ² ٣", "naïve café Ωmega ÆØÅ", "北京大学是中国的一所大学。",
    "日本語のテキスト、한국어 텍스트", "emoji 🙂👍🏽 👨‍👩‍👧 🇫🇷 ❤️", "zero\u200bwidth\u00a0nbsp\u3000ideographic",
    "control\x00\x07\x1b chars", "mixed 中文 and English 123abc", "<|endoftext|> as text", "'s's's",
]


def tiktoken_gpt2():
    """tiktoken's GPT-2 encoding built offline from the same files (``get_encoding`` needs the
    network)."""
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    from companion.transformer.tokenizers._files import gpt2_files

    encoder_json, vocab_bpe = gpt2_files()
    ranks = data_gym_to_mergeable_bpe_ranks(str(vocab_bpe), str(encoder_json))
    return tiktoken.Encoding("gpt2-offline", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256})


@pytest.fixture(scope="module")
def gpt2():
    return ByteLevelBPE.gpt2()


def test_byte_map():
    m = bytes_to_unicode()
    assert len(m) == 256 and len(set(m.values())) == 256
    assert m[ord(" ")] == "Ġ" and m[ord("\n")] == "Ċ" and m[ord("A")] == "A"
    assert all(c.isprintable() and not c.isspace() for c in m.values())
    assert list(m)[:3] == [33, 34, 35]  # printable bytes first: GPT-2's ids 0..255 follow this order


def test_gpt2_files_load(gpt2):
    assert len(gpt2) == 50257 and len(gpt2.merges) == 50000
    assert gpt2.encode("Hello world") == [15496, 995]
    assert gpt2.bpe(" world") == ["Ġworld"]
    assert gpt2.tokens(" lowest") == [" lowest"]
    assert gpt2.encode("a<|endoftext|>b", allowed_special="all") == [64, 50256, 65]
    assert gpt2.decode([15496, 995, 50256]) == "Hello world<|endoftext|>"


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(max_size=40))
def test_round_trip_on_arbitrary_unicode(gpt2, text):
    assert gpt2.decode(gpt2.encode_ordinary(text)) == text
    assert gpt2.decode_bytes(gpt2.encode_ordinary(text)) == text.encode("utf-8")


def test_special_tokens_are_refused_unless_allowed(gpt2):
    with pytest.raises(ValueError, match="allowed_special"):
        gpt2.encode("end <|endoftext|>")
    assert gpt2.encode("end <|endoftext|>", disallowed_special=()) == gpt2.encode_ordinary("end <|endoftext|>")
    assert gpt2.encode("end <|endoftext|>", allowed_special={"<|endoftext|>"})[-1] == 50256
    with pytest.raises(ValueError, match=r"unknown special token.*<\|im_start\|>.*<\|endoftext\|>"):
        gpt2.encode("x", allowed_special={"<|im_start|>"})
    with pytest.raises(TypeError, match="'all' or a set"):
        gpt2.encode("x", allowed_special="<|endoftext|>")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        gpt2.decode([50257])
    with pytest.raises(ValueError, match="2 pre-tokenised pieces"):
        gpt2.steps("two words")


def test_file_errors_name_the_problem(tmp_path, gpt2):
    enc, bpe = gpt2.save(tmp_path / "copy")
    again = ByteLevelBPE.from_files(enc, bpe)
    assert again.encode("round trip through files") == gpt2.encode("round trip through files")
    bad = tmp_path / "bad.bpe"
    bad.write_text("#version: 0.2\nĠ t\nĠt he extra\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.bpe, line 3: expected two symbols"):
        read_merges(bad)
    lines = bpe.read_text(encoding="utf-8").splitlines()
    assert lines[7] == "Ġt he"  # rank 6: it needs 'Ġt' (rank 0) and 'he' (rank 2)
    swapped = tmp_path / "swapped.bpe"
    swapped.write_text("\n".join([lines[0], lines[7], *lines[1:7], *lines[8:]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="merge 0 .*out of order"):
        ByteLevelBPE.from_files(enc, swapped)
    broken = tmp_path / "encoder.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        ByteLevelBPE.from_files(broken, bpe)


def test_train_small_byte_level_bpe():
    text = "the cat sat on the mat. the dog sat on the log. 中文 中文 中文 🙂🙂 " * 20
    tok = ByteLevelBPE.train(text, vocab_size=280)
    assert len(tok) == 280 and tok.special_tokens == {"<|endoftext|>": 279}
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text and len(ids) < len(text.encode("utf-8")) / 3
    assert tok.bpe(" the") == ["Ġthe"]  # frequent words become one token, with their space
    assert tok.decode(tok.encode_ordinary("unseen ünïcode ✓")) == "unseen ünïcode ✓"  # bytes: no <unk>
    slow = ByteLevelBPE.train(text, vocab_size=280, incremental=False)
    assert slow.merges == tok.merges
    every = ByteLevelBPE.train(text, vocab_size=1000)  # runs out of pairs: each piece is one token
    assert len(every) < 1000 and all(len(every.bpe(p)) == 1 for p in every.pieces(text))
    with pytest.raises(ValueError, match="vocab_size must be an int >= 257"):
        ByteLevelBPE.train(text, vocab_size=100)


@pytest.mark.peers
def test_same_ids_as_tiktoken_on_awkward_strings(gpt2):
    tk = tiktoken_gpt2()
    for text in AWKWARD:
        assert gpt2.encode_ordinary(text) == tk.encode_ordinary(text), text
    assert gpt2.encode("a<|endoftext|>b", allowed_special="all") == tk.encode("a<|endoftext|>b", allowed_special="all")


@pytest.mark.peers
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=60))
def test_same_ids_as_tiktoken_on_generated_unicode(gpt2, text):
    assert gpt2.encode_ordinary(text) == _TK.encode_ordinary(text)


_TK = None


@pytest.fixture(scope="module", autouse=True)
def _tiktoken_once():
    global _TK
    try:
        _TK = tiktoken_gpt2()
    except ImportError:  # tiktoken is a peer: only the peers tests need it
        _TK = None


@pytest.mark.peers
def test_same_ids_as_hf_gpt2_tokenizer(gpt2):
    import json

    from transformers import GPT2Tokenizer

    from companion.transformer.tokenizers._files import gpt2_files

    encoder_json, vocab_bpe = gpt2_files()
    # transformers 5.x: GPT2Tokenizer(vocab_file=..., merges_file=...) silently builds a one-token
    # vocabulary; pass the vocabulary and merges themselves.
    hf = GPT2Tokenizer(vocab=json.loads(encoder_json.read_text(encoding="utf-8")),
                       merges=read_merges(vocab_bpe))
    for text in AWKWARD[:-2]:
        assert gpt2.encode_ordinary(text) == hf.encode(text, add_special_tokens=False), text
