"""Tests of companion.evaluate.tables: round trip, replacement, ordering, ci rows kept in memory,
bad input, and the seeded brown_ppl rows against the stored outputs of chapters 1 and 2."""

from __future__ import annotations

import json

import pytest

from companion.evaluate._brown_seed import ROOT, brown_rows
from companion.evaluate.tables import ROWS_DIR, TABLES, RunningTable


def test_round_trip_and_replacement(tmp_path):
    t = RunningTable("sentence", directory=tmp_path)
    assert len(t) == 0 and not (tmp_path / "sentence.json").exists()
    t.add("mean GloVe", chapter=5, scores={"MR": 70.1, "STS-B cos": None}, scale="laptop", params=0,
          train_time_s=1.5, source="test", meta={"dim": 50})
    t.add("BERT", chapter="07b", scores={"MR": 80.0}, scale="laptop")
    again = RunningTable("sentence", directory=tmp_path)
    assert [r.model for r in again.rows()] == ["mean GloVe", "BERT"]
    row = again.rows()[0]
    assert row.chapter == "05" and row.scores == {"MR": 70.1, "STS-B cos": None}
    assert row.params == 0 and row.train_time_s == 1.5 and row.meta == {"dim": 50}
    # the same (model, scale) replaces the row, in its place; another scale is another row
    again.add("mean GloVe", chapter=5, scores={"MR": 71.0}, scale="laptop")
    again.add("mean GloVe", chapter=5, scores={"MR": 75.0}, scale="gpu")
    third = RunningTable("sentence", directory=tmp_path)
    assert [(r.model, r.scale, r.scores["MR"]) for r in third.rows()] == [
        ("mean GloVe", "laptop", 71.0), ("mean GloVe", "gpu", 75.0), ("BERT", "laptop", 80.0)]
    frame = third.frame(scale="laptop")
    assert list(frame.index) == ["mean GloVe", "BERT"]
    assert list(frame.columns) == ["chapter", "scale", "MR", "params", "train_time_s"]
    assert list(third.frame(columns=["MR"]).columns)[2] == "MR"
    with pytest.raises(KeyError, match="no row has"):
        third.frame(columns=["SST-2"])


def test_writes_are_deterministic_and_keep_other_writers_rows(tmp_path):
    a = RunningTable("glue_lite", directory=tmp_path)
    b = RunningTable("glue_lite", directory=tmp_path)  # e.g. another notebook, opened earlier
    a.add("m1", chapter=7, scores={"x": 1.0}, scale="laptop")
    b.add("m2", chapter=8, scores={"x": 2.0}, scale="laptop")
    text = (tmp_path / "glue_lite.json").read_text()
    assert [r["model"] for r in json.loads(text)["rows"]] == ["m1", "m2"]
    RunningTable("glue_lite", directory=tmp_path).add("m1", chapter=7, scores={"x": 1.0}, scale="laptop")
    assert (tmp_path / "glue_lite.json").read_text() == text  # same numbers, same bytes
    assert not list(tmp_path.glob(".*tmp"))


def test_written_file_has_the_mode_of_a_new_file(tmp_path):
    import os

    from companion.fileio import umask_mode

    RunningTable("sentence", directory=tmp_path).add("m", chapter=5, scores={"MR": 1.0}, scale="laptop")
    path = tmp_path / "sentence.json"
    assert (os.stat(path).st_mode & 0o777) == umask_mode()  # not mkstemp's private 0600


def test_ci_rows_stay_in_memory_unless_saved(tmp_path):
    t = RunningTable("tagging", directory=tmp_path)
    t.add("tiny tagger", chapter=6, scores={"acc": 50.0}, scale="ci")
    assert len(t) == 1 and not (tmp_path / "tagging.json").exists()
    t.save()
    assert len(RunningTable("tagging", directory=tmp_path)) == 1
    t.remove("tiny tagger", "ci")
    assert len(RunningTable("tagging", directory=tmp_path)) == 0
    with pytest.raises(KeyError, match="no row"):
        t.remove("tiny tagger", "ci")


def test_env_dir_and_default_scale(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_TABLES_DIR", str(tmp_path))
    monkeypatch.setenv("BOOK_SCALE", "gpu")
    RunningTable("sentence").add("m", chapter=5, scores={"MR": 1.0})
    assert json.loads((tmp_path / "sentence.json").read_text())["rows"][0]["scale"] == "gpu"


@pytest.mark.parametrize("kwargs, err, match", [
    ({"model": "", "chapter": 5, "scores": {"a": 1}}, ValueError, "model"),
    ({"model": "m", "chapter": "five", "scores": {"a": 1}}, ValueError, "two-digit"),
    ({"model": "m", "chapter": 5.0, "scores": {"a": 1}}, TypeError, "chapter"),
    ({"model": "m", "chapter": 5, "scores": {}}, ValueError, "non-empty"),
    ({"model": "m", "chapter": 5, "scores": {"a": float("nan")}}, ValueError, "None"),
    ({"model": "m", "chapter": 5, "scores": {"a": "high"}}, ValueError, "not a number"),
    ({"model": "m", "chapter": 5, "scores": {"a": 1}, "scale": "huge"}, ValueError, "scale"),
    ({"model": "m", "chapter": 5, "scores": {"a": 1}, "params": -1}, ValueError, "params"),
    ({"model": "m", "chapter": 5, "scores": {"a": 1}, "train_time_s": -2}, ValueError, "train_time_s"),
    ({"model": "m", "chapter": 5, "scores": {"a": 1}, "meta": {"f": object()}}, ValueError, "JSON"),
])
def test_bad_rows(tmp_path, kwargs, err, match):
    with pytest.raises(err, match=match):
        RunningTable("sentence", directory=tmp_path).add(scale=kwargs.pop("scale", "laptop"), **kwargs)
    assert not (tmp_path / "sentence.json").exists()


def test_bad_table_and_file(tmp_path):
    with pytest.raises(ValueError, match="unknown table"):
        RunningTable("bleu")
    (tmp_path / "sentence.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        RunningTable("sentence", directory=tmp_path)
    (tmp_path / "sentence.json").write_text(json.dumps({"table": "glue_lite", "rows": []}))
    with pytest.raises(ValueError, match="not the stored table"):
        RunningTable("sentence", directory=tmp_path)
    (tmp_path / "sentence.json").write_text(json.dumps({"table": "sentence", "rows": [{"model": "m"}]}))
    with pytest.raises(ValueError, match="malformed row"):
        RunningTable("sentence", directory=tmp_path)


def test_stored_tables_load():
    for name in TABLES:
        if (ROWS_DIR / f"{name}.json").exists():
            assert len(RunningTable(name, directory=ROWS_DIR)) > 0


def test_brown_rows_agree_with_the_notebooks():
    """The seeded rows are what chapters 1 and 2 printed (re-read from their stored outputs)."""
    stored = {r.key: r for r in RunningTable("brown_ppl", directory=ROWS_DIR).rows()}
    parsed = brown_rows(ROOT)
    assert len(parsed) == 20
    for d in parsed:
        row = stored[(d["model"], d["scale"])]
        assert row.scores == d["scores"], d["model"]
    assert stored[("modified KN, n = 5", "laptop")].scores == {"valid": 161.1, "test": 150.2}
    # chapter 2 writes its own laptop rows (notebooks/02_neural_lm.ipynb, section 7)
    ch02 = [r for r in stored.values() if r.chapter == "02" and r.scale == "laptop"]
    assert any(r.model.startswith("NNLM, full softmax") and r.model.endswith("+ modified KN trigram")
               for r in ch02), [r.model for r in ch02]
