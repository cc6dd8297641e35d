"""companion.zoo: resumable training, the schedule, bf16 storage with sha256 checks, the CLI;
and every stored model loads and scores its recorded held-out loss."""

import json
from itertools import pairwise

import numpy as np
import pytest
import torch

from companion import zoo
from companion.zoo import __main__ as cli
from companion.zoo import corpus, specs, store, trainer

TINY = specs.ModelSpec("tiny-gpt", "gpt", 16, 1, 2, 16,
                       {"ci": specs.Budget(steps=6, batch_size=2, warmup=2, eval_every=3)})
TINY_BERT = specs.ModelSpec("tiny-bert", "bert", 16, 1, 2, 16,
                            {"ci": specs.Budget(steps=6, batch_size=2, warmup=2, eval_every=3)})


@pytest.fixture(scope="module")
def tok():
    return zoo.tokenizer()


def _stream(n, seed):
    return np.random.default_rng(seed).integers(0, 4000, n).astype(np.uint16)


@pytest.mark.parametrize("spec", [TINY, TINY_BERT], ids=["gpt", "bert"])
def test_a_resumed_run_takes_the_same_steps(spec, tok, tmp_path):
    budget = spec.budget["ci"]
    train, held = _stream(5000, 0), _stream(2000, 1)
    straight, st, done = trainer.train(spec, budget, tok, train, held, state_dir=tmp_path / "a", eval_rows=8,
                                           log=lambda m: None)
    assert done and st.step == 6 and st.tokens == 6 * 2 * 16 and [c[0] for c in st.curve] == [0, 3, 6]
    # stop after the first step (deadline 0 s), then resume from the saved state
    _, st1, done1 = trainer.train(spec, budget, tok, train, held, state_dir=tmp_path / "b", deadline_s=0.0,
                                  eval_rows=8,
                                  log=lambda m: None)
    assert not done1 and st1.step == 1
    resumed, st2, done2 = trainer.train(spec, budget, tok, train, held, state_dir=tmp_path / "b", eval_rows=8,
                                       log=lambda m: None)
    assert done2 and st2.step == 6
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), k
    assert [c[2] for c in st.curve] == [c[2] for c in st2.curve]


def test_batches_depend_on_seed_and_step_only(tok):
    model = trainer.build_model(TINY_BERT, tok)
    s = _stream(3000, 0)
    a = trainer.make_batch(TINY_BERT, model, s, 4, seed=0, step=7)
    b = trainer.make_batch(TINY_BERT, model, s, 4, seed=0, step=7)
    c = trainer.make_batch(TINY_BERT, model, s, 4, seed=0, step=8)
    assert all(torch.equal(a[k], b[k]) for k in a) and not torch.equal(a["labels"], c["labels"])
    cfg = model.config
    assert (a["ids"][:, 0] == cfg.cls_id).all() and (a["ids"][:, -1] == cfg.sep_id).all()
    with pytest.raises(ValueError, match="too short for windows of 17"):
        trainer.make_batch(TINY, model, s[:10], 2, seed=0, step=0)


def test_schedule_warms_up_then_decays_to_its_floor():
    b = specs.Budget(steps=100, lr=1e-3, warmup=10, final_lr_fraction=0.1)
    lrs = [trainer.lr_at(b, t) for t in range(101)]
    assert lrs[0] == pytest.approx(1e-4) and lrs[9] == pytest.approx(1e-3)
    assert all(x >= y for x, y in pairwise(lrs[10:])) and lrs[100] == pytest.approx(1e-4)


def test_unigram_loss_is_the_entropy_of_a_uniform_stream(tok):
    model = trainer.build_model(TINY, tok)
    s = np.tile(np.arange(4093, dtype=np.uint16), 40)  # every id equally often (specials aside)
    got = trainer.unigram_loss(TINY, model, s, s, rows=8)
    assert got == pytest.approx(np.log(4096 + 3), abs=0.01)


def test_store_round_trip_and_sha_check(tok, tmp_path, monkeypatch):
    monkeypatch.setattr(store, "MODELS_DIR", tmp_path)
    monkeypatch.setitem(specs.SPECS, TINY.name, TINY)
    model = trainer.build_model(TINY, tok)
    folder = store.save(TINY.name, model, {"version": 1})
    assert (folder / "model.safetensors").stat().st_size < 4 * sum(p.numel() for p in model.parameters())
    back = store.load(TINY.name)
    for k, v in model.state_dict().items():  # bf16 storage: equal to bf16 precision
        assert torch.equal(back.state_dict()[k], v.to(torch.bfloat16).float()), k
    assert back.lm_head.weight.data_ptr() == back.wte.weight.data_ptr()  # still tied
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match=r"model.safetensors: sha256 .* is not the stored"):
        store.load(TINY.name)
    (folder / "provenance.json").write_text("{oops")
    with pytest.raises(ValueError, match=r"provenance.json is not valid JSON"):
        store.verify(TINY.name)


def test_unknown_names_and_bad_budgets():
    with pytest.raises(ValueError, match=r"unknown stored model 'gpt-2'; the zoo has: gpt-book, bert-book"):
        zoo.get_spec("gpt-2")
    with pytest.raises(ValueError, match=r"Budget.steps must be a positive int, got 0"):
        specs.Budget(steps=0)
    with pytest.raises(ValueError, match=r"has no budget for scale 'tpu'"):
        TINY.key("tpu")
    with pytest.raises(ValueError, match=r"arch must be 'gpt' or 'bert', got 'rnn'"):
        specs.ModelSpec("x", "rnn", 16, 1, 2, 16)


def test_list_json_names_every_model(capsys):
    assert cli.main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(specs.SPECS)
    for r in rows:
        if r["stored"]:
            assert {"parameters", "tokens_seen", "cpu_seconds", "heldout_loss", "unigram_loss", "sha256"} <= set(r)


STORED = [n for n in specs.SPECS if (corpus.MODELS_DIR / n / "provenance.json").is_file()]


@pytest.mark.slow
@pytest.mark.parametrize("name", STORED)
def test_stored_model_scores_its_recorded_heldout_loss(name):
    try:
        held = corpus.token_stream("heldout")
    except FileNotFoundError as err:
        pytest.skip(str(err))
    prov = zoo.verify(name)
    model = zoo.load(name)
    got = trainer.heldout_loss(zoo.get_spec(name), model, held)
    # the recorded loss was measured in float32 before the weights were rounded to bf16
    assert got == pytest.approx(prov["heldout_loss"], abs=0.03)
    assert prov["unigram_loss"] - got > 0.5  # far from the unigram plateau



def test_gpu_script_at_ci_scale_on_the_cpu(tmp_path, monkeypatch):
    """The prepared GPU script, run on the CPU at ci scale on tiny streams: it trains both models
    and writes them with their provenance to OUT, never into the repository's models."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("zoo_gpu", corpus.MODELS_DIR.parents[2] / "benchmarks/gpu/zoo_gpu.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setenv("BOOK_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(store, "MODELS_DIR", store.MODELS_DIR)  # restored after the test
    streams = tmp_path / "streams"
    streams.mkdir()
    np.save(streams / "train.npy", _stream(4000, 0))
    np.save(streams / "heldout.npy", _stream(2000, 1))
    got = script.main(["--streams", str(streams), "--out", str(tmp_path / "out"), "--scale", "ci",
                       "--device", "cpu", "--eval-rows", "4"])
    assert set(got) == {"gpt-book", "bert-book"} and all(r["steps"] == 6 for r in got.values())
    for name in got:
        prov = json.loads((tmp_path / "out" / name / "provenance.json").read_text())
        assert prov["scale"] == "ci" and prov["command"].startswith("python benchmarks/gpu/zoo_gpu.py")
        assert (tmp_path / "out" / name / "model.safetensors").is_file()


def test_a_warm_restart_is_a_new_version_on_other_batches(tmp_path, monkeypatch):
    """``--warm-start`` starts from the stored weights, draws other windows and masks than the
    version it starts from, and its provenance counts tokens and CPU time since initialisation."""
    from companion.data import fetching
    from companion.zoo.run import train_and_store

    monkeypatch.setattr(store, "MODELS_DIR", tmp_path / "models")
    monkeypatch.setenv(fetching.ENV_VAR, str(tmp_path / "cache"))  # the resumable states go there
    monkeypatch.setitem(specs.SPECS, TINY.name, TINY)
    streams = (_stream(5000, 0), _stream(2000, 1))
    quiet = dict(streams=streams, eval_rows=8, log=lambda m: None)
    v1 = train_and_store(TINY.name, "ci", **quiet)
    sha1 = store.provenance(TINY.name)["weights_sha256"]
    v2 = train_and_store(TINY.name, "ci", warm_start=True, **quiet)
    assert (v1["version"], v1["data_seed"], v1["parent"]) == (1, TINY.seed, None)
    assert (v2["version"], v2["data_seed"]) == (2, TINY.seed + 1000)
    assert v2["warm_start_from"] == sha1 == v2["parent"]["weights_sha256"]
    assert v2["tokens"] == 2 * v1["tokens"] and v2["this_run"]["tokens"] == v1["tokens"]
    assert v2["cpu_seconds"] == v1["cpu_seconds"] + v2["this_run"]["cpu_seconds"]
    assert store.provenance(TINY.name)["version"] == 2
    model = trainer.build_model(TINY, zoo.tokenizer())
    first = trainer.make_batch(TINY, model, streams[0], 2, seed=v1["data_seed"], step=0)
    again = trainer.make_batch(TINY, model, streams[0], 2, seed=v2["data_seed"], step=0)
    assert not torch.equal(first, again)
