"""Chapter 11's probes of the book's own small models: the stored ELMo checkpoint, the
layer-wise runner for several representations, and their rows and places on the map."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from companion.probing import chapter11 as c11
from companion.probing import probes as P


def test_stored_elmo_loads_checks_sha_and_gives_three_layers(tmp_path):
    from companion.contextual import small_elmo

    if not (small_elmo.CKPT_DIR / "meta.json").exists():
        pytest.skip("the chapter-6 ELMo checkpoint is not stored")
    model, vocab, meta = small_elmo.load_small_elmo()
    assert meta["heldout_ppl"] > 1 and len(vocab) == model.config.vocab_size
    assert sum(p.stat().st_size for p in small_elmo.CKPT_DIR.iterdir()) < 20e6
    layers = small_elmo.probe_extractor(model)([["The", "cat", "sat"], [], ["Dogs", "bark"]])
    assert [a.shape for a in layers] == [(5, 2 * model.config.d)] * 3
    np.testing.assert_allclose(layers[0][:, : model.config.d], layers[0][:, model.config.d:])  # token layer
    copy = tmp_path / "ckpt"
    shutil.copytree(small_elmo.CKPT_DIR, copy)
    with open(copy / "bilm.safetensors", "r+b") as fh:
        fh.seek(-1, 2)
        fh.write(b"\x00" if fh.read(1) != b"\x00" else b"\x01")
    with pytest.raises(ValueError, match="sha256"):
        small_elmo.load_small_elmo(copy)
    (copy / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match="small_elmo"):
        small_elmo.load_small_elmo(copy)


def _toy_task(n=60, seed=0):
    rng = np.random.default_rng(seed)
    tag = {f"n{i}": "N" for i in range(8)} | {f"v{i}": "V" for i in range(6)} | {"the": "D"}
    words = list(tag)
    sents = [[words[k] for k in rng.integers(0, len(words), size=6)] for _ in range(n)]
    tags = [[tag[w] for w in s] for s in sents]
    return c11.TokenTask("toy", sents[:40], tags[:40], sents[40:], tags[40:])


def _layered(informative_layer: int):
    """Three layers of noise, one of which also holds the tag (one-hot) of each word."""
    def run(sentences):
        n = sum(map(len, sentences))
        rng = np.random.default_rng(n)
        out = [rng.normal(size=(n, 6)) for _ in range(3)]
        onehot = np.array([[w[0] == c for c in "ntv"] for s in sentences for w in s], dtype=float)
        out[informative_layer][:, :3] += 3 * onehot
        return out
    return run


class _Table:
    def __init__(self):
        self.rows = {}

    def add(self, model, **kw):
        self.rows[model] = kw


def test_run_small_layers_finds_the_informative_layer_and_adds_rows():
    P.register_extractor("toy L1", _layered(1))
    P.register_extractor("toy L2", _layered(2))
    frame = c11.run_small_layers({"POS": _toy_task()}, ["toy L1", "toy L2"], P.ProbeConfig(epochs=40, lr=0.05),
                                 seeds=(0,), n_boot=100)
    assert list(frame.index) == [("toy L1", "POS"), ("toy L2", "POS")]
    assert frame.loc[("toy L1", "POS"), "best layer"] == 1 and frame.loc[("toy L2", "POS"), "best layer"] == 2
    table = c11.add_layer_rows(_Table(), frame)
    row = table.rows["toy L2"]
    assert row["scores"]["POS acc"] == pytest.approx(frame.loc[("toy L2", "POS"), ["L0", "L1", "L2"]].max())
    assert row["scores"]["POS acc"] > frame.loc[("toy L2", "POS"), "L0"] + 10  # above the noise layers
    assert row["meta"]["best_layer"] == {"POS": 2}


def test_map_has_the_multilingual_model_and_reads_elmo_and_11b_scores(tmp_path):
    from companion.evaluate.tables import Row
    from companion.probing import taxonomy as T

    ml = next(m for m in T.MODELS if m.chapter == "11b")
    assert ml.extension == "multilingual" and T.CHAPTER_PAGES["11b"] == "11b_multilingual"
    rows = {"probing": [Row("ELMo (ch. 6)", "11", {"POS acc": 70.0}, "laptop"),
                        Row("EN+ZH MLM (ch. 11b)", "11b", {"xling AUC": 50.5}, "laptop")]}
    recs = {r["name"]: r for r in T.map_records(rows, notebooks=tmp_path)}
    assert recs["ELMo"]["scores"] == {"POS probe acc, best layer (ch. 11)": 70.0}
    assert list(recs[ml.name]["scores"].values()) == [50.5]
    assert recs[ml.name]["page"] == "11b_multilingual.html"
