"""Chapter 10's notebook helpers: the data-advantage measure, sampling, tables, figure, checkpoint."""

import math
import shutil

import matplotlib
import numpy as np
import pandas as pd
import pytest

from companion.data.tasks import Example
from companion.transfer import chapter10 as c10
from companion.transfer.finetune import RunResult

matplotlib.use("Agg")


def test_data_advantage_is_the_horizontal_distance():
    ns = [16, 64, 256]
    got = c10.data_advantage(ns, head=[50, 60, 70], prompt=[60, 70, 80], n_levels=2001)
    # between 60 and 70 points: n_head = 64 * 4^t, n_prompt = 16 * 4^t, t in [0, 1]
    assert got == pytest.approx(48 * 3 / math.log(4), rel=1e-3)
    assert c10.data_advantage(ns, head=[60, 70, 80], prompt=[50, 60, 70], n_levels=2001) < 0
    assert math.isnan(c10.data_advantage(ns, head=[50, 51, 52], prompt=[60, 70, 80]))
    # a dip is read at the best accuracy so far
    assert c10.data_advantage(ns, [50, 60, 55], [50, 70, 70]) == c10.data_advantage(ns, [50, 60, 60], [50, 70, 70])


def test_balanced_sample_and_tables():
    pool = [Example(str(i), i % 2) for i in range(40)] + [Example("x", 0)] * 10
    s = c10.balanced_sample(pool, 16, seed=3)
    assert len(s) == 16 and sum(e.label for e in s) == 8
    assert [e.text for e in s] == [e.text for e in c10.balanced_sample(pool, 16, seed=3)]
    runs = {"full": [RunResult("full", np.zeros(2), 80.0, 1000, 2.0, []),
                     RunResult("full", np.zeros(2), 82.0, 1000, 4.0, [])],
            "lora": [RunResult("lora", np.zeros(2), 79.0, 10, 1.0, []),
                     RunResult("lora", np.zeros(2), 81.5, 10, 1.0, [])]}
    df = c10.transfer_frame(runs, pretrained_params=1000)
    assert isinstance(df, pd.DataFrame)
    assert df.loc["LoRA (r=4, q & v)", "% of model"] == 1.0
    assert df.loc["full fine-tuning", "accuracy"] == 81.0 and df.loc["full fine-tuning", "s per run"] == 3.0
    claim = c10.claim_close(runs, "lora", margin=2.0)
    assert claim["gap"] == pytest.approx(-0.75) and claim["verdict"] == "holds"
    assert c10.claim_close(runs, "lora", margin=0.1)["verdict"] == "inside the noise"
    runs["bad"] = [RunResult("bad", np.zeros(2), 50.0, 1, 0.0, []), RunResult("bad", np.zeros(2), 51.0, 1, 0.0, [])]
    assert c10.claim_close(runs, "bad")["verdict"] == "fails"
    curve = pd.DataFrame({"n": [16, 16, 64, 64], "seed": [0, 0, 0, 0], "method": ["head", "prompt"] * 2,
                          "accuracy": [50, 60, 60, 70]})
    c10.draw_curve(curve)
    c10.draw_peft()


def test_sizes_per_scale():
    for scale in ("ci", "laptop", "gpu"):
        s = c10.sizes(scale)
        assert s.n_train >= max(s.curve_ns) or scale != "ci"
        assert set(c10.LR) >= {"full", "lora", "features"}


def test_stored_checkpoint_loads_and_is_checked(tmp_path):
    from companion.transfer import small_models

    if not (small_models.CKPT_DIR / "meta.json").exists():
        pytest.skip("the chapter-7 checkpoint is not stored")
    gpt, bert, tok, meta = small_models.load_small()
    assert gpt.config.vocab_size == len(tok) + 3 and bert.config.mask_id == tok.special_tokens["[MASK]"]
    assert meta["heldout_loss"]["GPT"] > 0
    copy = tmp_path / "ckpt"
    shutil.copytree(small_models.CKPT_DIR, copy)
    with open(copy / "gpt.safetensors", "r+b") as fh:
        fh.seek(-1, 2)
        fh.write(b"\x00" if fh.read(1) != b"\x00" else b"\x01")
    with pytest.raises(ValueError, match="sha256"):
        small_models.load_small(copy)
    (copy / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match="small_models"):
        small_models.load_small(copy)


def test_bpe_cloze_leaves_the_space_to_the_label_word():
    from companion.transfer import prompts, small_models

    if not (small_models.CKPT_DIR / "meta.json").exists():
        pytest.skip("the chapter-7 checkpoint is not stored")
    _, bert, tok, _ = small_models.load_small()
    cloze = prompts.bert_cloze(bert, tok)
    b = prompts.cloze_inputs(cloze, "Review: {text} It was [MASK].", [Example("a fine film", 1)])
    ids = b["ids"][0].tolist()
    assert ids[1:-1] == [*tok.encode_ordinary("Review:"), *tok.encode_ordinary(" a fine film"),
                         *tok.encode_ordinary(" It was"), bert.config.mask_id, *tok.encode_ordinary(".")]
    assert cloze.word_id("good") == tok.encode_ordinary(" good")[0]
