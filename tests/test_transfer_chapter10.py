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
    one = {"full": runs["full"][:1], "lora": runs["lora"][:1]}  # one seed: -1 point
    assert c10.claim_close(one, "lora")["verdict"] == "holds"
    assert c10.claim_close(one, "lora", sd=1.0)["verdict"] == "inside the noise"  # -1 - 2 < -2 < -1 + 2
    with pytest.raises(ValueError, match="paired"):
        c10.claim_close({"full": runs["full"], "lora": runs["lora"][:1]}, "lora")
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


def test_head_lr_group_and_shared_features(tmp_path):
    import json

    import torch

    from companion.transfer import finetune as ft
    from companion.transformer.bert import BertConfig, BertEncoder, BertForSequence

    enc = BertEncoder(BertConfig(vocab_size=20, max_len=8, d_model=8, n_head=2, n_layer=2), seed=0)
    clf = BertForSequence(enc, 2)
    groups = ft.layerwise_groups(clf, 1e-3, head_lr=1e-2)
    assert groups[-1]["lr"] == 1e-2 and {id(p) for p in groups[-1]["params"]} == {id(p) for p in clf.head.parameters()}
    assert all(g["lr"] == 1e-3 for g in groups[:-1])
    assert sum(p.numel() for g in groups for p in g["params"]) == sum(p.numel() for p in clf.parameters())
    assert len(ft.layerwise_groups(clf, 1e-3)) == len(groups) - 1  # no head_lr: the head shares lr
    with pytest.raises(ValueError, match="head_lr"):
        ft.FTConfig(head_lr=0.0)
    # cached features must match the examples they are used with
    data = [Example("a b", 0), Example("b a", 1)]
    cfg = ft.FTConfig(epochs=1, batch_size=2, max_len=8)
    tok = lambda t: [3 + (w == "b") for w in t.split()]
    feats = ft.layer_features(enc, enc.config, ft.encode(tok, data, 8))
    assert feats.shape == (2, 3, 8)  # [examples, embeddings + 2 blocks, d]
    with pytest.raises(ValueError, match="rows"):
        ft.run_features(enc, tok, data, data[:1], 2, cfg, features=(feats, feats))
    # the stored learning-rate choice and the best rate per method
    choice = pd.DataFrame({"method": ["lora", "lora", "full"], "lr": [1e-3, 3e-3, 1e-4],
                           "dev accuracy": [70.0, 70.0, 60.0]})
    assert c10.best_lrs(choice) == {"lora": 1e-3, "full": 1e-4}
    path = tmp_path / "choice.json"
    path.write_text(json.dumps({"meta": {"seed": 0}, "rows": choice.to_dict(orient="records")}))
    rows, meta = c10.stored_lr_choice(path)
    assert meta == {"seed": 0} and len(rows) == 3
    with pytest.raises(FileNotFoundError, match="ch10a_lr_choice"):
        c10.stored_lr_choice(tmp_path / "none.json")
    rows, _ = c10.stored_lr_choice()  # the stored one covers the methods of the claim
    assert {"full", "bitfit", "adapters", "lora"} <= set(rows.method)
    s = c10.transfer_sizes("laptop")
    assert set(s.seeds_side) <= set(s.seeds) and torch.is_tensor(feats)


def test_stored_gpt_family_loads_and_is_checked(tmp_path):
    from companion.transfer import gpt_family

    if not (gpt_family.FAMILY_DIR / "meta.json").exists():
        pytest.skip("the GPT family is not stored")
    models, meta = gpt_family.load_family()
    sizes = [m["non_embedding_params"] for m in meta["members"]]
    assert list(models) == [m["name"] for m in meta["members"]] and sizes == sorted(sizes)
    assert all(m["heldout_loss"] > 0 for m in meta["members"])
    total = sum((gpt_family.FAMILY_DIR / f).stat().st_size for f in meta["sha256"])
    assert total <= 20e6  # the limit for stored weights
    copy = tmp_path / "family"
    shutil.copytree(gpt_family.FAMILY_DIR, copy)
    first = copy / gpt_family.member_file(meta["members"][0]["name"])
    with open(first, "r+b") as fh:
        fh.seek(-1, 2)
        fh.write(b"\x00" if fh.read(1) != b"\x00" else b"\x01")
    with pytest.raises(ValueError, match="sha256"):
        gpt_family.load_family(copy)
    (copy / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match="ch10b_gpt_family"):
        gpt_family.load_family(copy)


def test_fewglue_rows_summary_and_missing_file(tmp_path):
    import json

    from companion.transfer import chapter10b as c10b

    rows = [{"task": "CB", "method": "head", "unit": f"fold {f}", "accuracy": a} for f, a in enumerate((50, 75))]
    rows += [{"task": "RTE", "method": "head", "unit": "seed 0", "accuracy": 60.0}]
    path = tmp_path / "few.json"
    path.write_text(json.dumps({"meta": {"max_len": 64}, "rows": rows}))
    frame, meta = c10b.stored_fewglue(path)
    assert meta == {"max_len": 64} and len(frame) == 3
    summary = c10b.fewglue_summary(frame, {"CB": 50.0, "RTE": 52.0})
    assert summary.loc[("CB", "head"), "accuracy"] == 62.5 and summary.loc[("CB", "head"), "runs"] == 2
    assert summary.loc[("CB", "head"), "sd"] == pytest.approx(17.7, abs=0.05)  # sd of 50 and 75
    assert summary.loc[("RTE", "head"), "majority class"] == 52.0
    with pytest.raises(FileNotFoundError, match="ch10b_fewglue"):
        c10b.stored_fewglue(tmp_path / "none.json")


def _run(m: str, score: float) -> RunResult:
    return RunResult(m, np.zeros(3), score, 10, 1.0, [0.5])


def test_add_stored_seeds_joins_only_matching_sizes(tmp_path):
    import json

    s = c10.transfer_sizes("laptop")
    meta = {k: getattr(s, k) for k in c10.STORED_SIZE_KEYS}
    stored = {"meta": meta, "tasks": {"ag_news": {"0": {"full": 80.0, "lora": 81.0},
                                                  "1": {"full": 70.0, "lora": 75.0}}}}
    runs = {"full": [_run("full", 80.0)], "lora": [_run("lora", 81.0)]}
    both, added = c10.add_stored_seeds(runs, stored, "ag_news", s, live=[0])
    assert added == [1] and [r.score for r in both["lora"]] == [81.0, 75.0]
    assert both["lora"][1].trainable == 10 and len(runs["lora"]) == 1  # the input is not changed
    gap = c10.claim_close(both, "lora")  # paired gaps +1 and +5: their own spread
    assert gap["gap"] == pytest.approx(3.0) and gap["sd"] == pytest.approx(np.std([1, 5], ddof=1))
    ci = c10.transfer_sizes("ci")  # other sizes: nothing stored is mixed in
    assert c10.add_stored_seeds(runs, stored, "ag_news", ci, live=[0]) == (runs, [])
    with pytest.raises(KeyError, match="bitfit"):
        c10.add_stored_seeds({**runs, "bitfit": [_run("bitfit", 1.0)]}, stored, "ag_news", s, [0])
    path = tmp_path / "seeds.json"
    path.write_text(json.dumps(stored))
    assert c10.stored_seeds(path) == stored
    with pytest.raises(FileNotFoundError, match="ch10a_seeds"):
        c10.stored_seeds(tmp_path / "none.json")
