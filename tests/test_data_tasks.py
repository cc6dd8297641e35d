"""Part II task loaders (companion.data.tasks): tiny generated files for the parsing and the
errors, then the real files (read from the verified cache, fetched through the mirror or the
URLs) for the documented sizes and label sets."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from companion.data import tasks as T
from companion.data.errors import DataFormatError, UnknownDatasetError
from companion.data.tasks import Example


# --- tiny generated data ---------------------------------------------------------------------

def test_senteval_single_split_and_latin1(tmp_path):
    (tmp_path / "rt-polarity.all").write_bytes(b"0 clich\xe9s pile up .\n1 a \x85good film\n0 \n1 fine .\n")
    task = T.load_task("mr", root=tmp_path)
    assert task.splits == {"all": [Example("clichés pile up .", 0), Example("a \x85good film", 1),
                                   Example("fine .", 1)]}  # \x85 is not a line break; "0 " dropped
    assert task.cv_folds == 10 and task.label_names == ("negative", "positive") and task.kind == "single"
    assert task.license.startswith("Pang & Lee")


def test_malformed_line_names_file_and_line(tmp_path):
    (tmp_path / "custrev.all").write_text("0 fine\n7 label out of range\n")
    with pytest.raises(DataFormatError, match=r"custrev.all, line 2: expected 'LABEL sentence'") as e:
        T.load_task("cr", root=tmp_path)
    assert e.value.line == 2


def test_non_utf8_names_file_and_line(tmp_path):
    (tmp_path / "stsa.binary.train").write_bytes(b"1 good\n0 bad \xff byte\n")
    for s in ("dev", "test"):
        (tmp_path / f"stsa.binary.{s}").write_text("1 x\n")
    with pytest.raises(DataFormatError, match=r"stsa.binary.train, line 2: not valid utf-8"):
        T.load_task("sst2", root=tmp_path)


def test_trec_labels_map_to_the_coarse_classes(tmp_path):
    (tmp_path / "TREC.train.all").write_text("0 What are liver enzymes ?\n1 What films ?\n"
                                             "2 What does AIDS stand for ?\n5 When was he born ?\n")
    (tmp_path / "TREC.test.all").write_text("3 Who ?\n4 Where ?\n")
    task = T.load_task("trec", root=tmp_path)
    names = [task.label_names[e.label] for e in task.splits["train"] + task.splits["test"]]
    assert names == ["DESC", "ENTY", "ABBR", "NUM", "HUM", "LOC"]


def test_pair_tasks_from_tiny_files(tmp_path):
    head = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    for f in ("train", "trial", "test_annotated"):
        (tmp_path / f"SICK_{f}.txt").write_text(head + "1\tA dog runs\tA dog is running\t4.5\tENTAILMENT\n")
    r, e = T.load_task("sick_r", root=tmp_path), T.load_task("sick_e", root=tmp_path)
    assert r.splits["dev"] == [Example("A dog runs", 4.5, "A dog is running")] and r.label_names is None
    assert e.splits["test"][0].label == 0 and e.label_names[0] == "entailment" and e.kind == "pair"
    (tmp_path / "SICK_trial.txt").write_text(head + "1\tA\tB\t4.5\tMAYBE\n")
    with pytest.raises(DataFormatError, match=r"SICK_trial.txt, line 2: unknown label 'MAYBE'"):
        T.load_task("sick_e", root=tmp_path)
    (tmp_path / "SICK_trial.txt").write_text(head + "1\tA\tB\n")
    with pytest.raises(DataFormatError, match=r"line 2: expected at least 5 tab-separated fields, got 3"):
        T.load_task("sick_r", root=tmp_path)


def test_stsb_and_mrpc_tiny(tmp_path):
    for s in ("train", "dev", "test"):
        (tmp_path / f"sts-{s}.csv").write_text("main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane.\tA jet.\n")
        (tmp_path / f"msr-para-{'val' if s == 'dev' else s}.tsv").write_text(
            "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tHe said.\tHe stated.\n")
    assert T.load_task("stsb", root=tmp_path).splits["test"] == [Example("A plane.", 5.0, "A jet.")]
    assert T.load_task("mrpc", root=tmp_path).splits["dev"] == [Example("He said.", 1, "He stated.")]
    (tmp_path / "sts-dev.csv").write_text("a\tb\tc\td\tfive\tA\tB\n")
    with pytest.raises(DataFormatError, match=r"sts-dev.csv, line 1: expected a number, got 'five'"):
        T.load_task("stsb", root=tmp_path)


def test_rte_xml_both_label_spellings(tmp_path):
    old = '<entailment-corpus><pair id="1" value="TRUE"><t>A b.</t><h>A.</h></pair></entailment-corpus>'
    new = '<entailment-corpus><pair id="2" entailment="NO"><t>C.</t><h>D.</h></pair></entailment-corpus>'
    for f in ("rte1_dev", "rte1_test", "rte2_dev", "rte2_test"):
        (tmp_path / f"{f}.xml").write_text(old)
    for f in ("rte3_dev", "rte3_test"):
        (tmp_path / f"{f}.xml").write_text(new)
    task = T.load_task("rte", root=tmp_path)
    assert task.sizes() == {"train": 4, "dev": 1, "test": 1}
    assert task.splits["train"][0] == Example("A b.", 0, "A.") and task.splits["test"][0].label == 1
    (tmp_path / "rte3_dev.xml").write_text("<entailment-corpus>\n<pair>")
    with pytest.raises(DataFormatError, match=r"rte3_dev.xml, line 2: not well-formed XML"):
        T.load_task("rte", root=tmp_path)


def test_chinese_tasks_tiny(tmp_path):
    (tmp_path / "ChnSentiCorp_htl_all.csv").write_text('label,review\n1,"好,很好"\n0,\n0,差\n', encoding="utf-8")
    task = T.load_task("chnsenticorp", root=tmp_path)
    assert task.splits["all"] == [Example("好,很好", 1), Example("差", 0)] and task.cv_folds == 10
    rec = {"sentence1": "甲", "sentence2": "乙", "label": "neutral"}
    for f in ("train.10k.json", "train.3k.json", "dev.json"):
        (tmp_path / f).write_text(json.dumps(rec, ensure_ascii=False) + "\n"
                                  + json.dumps({**rec, "label": "-"}) + "\n", encoding="utf-8")
    assert T.load_task("ocnli", root=tmp_path).splits["dev"] == [Example("甲", 1, "乙")]  # "-" dropped
    (tmp_path / "class.txt").write_text("finance\nsports\n")
    (tmp_path / "dev.txt").write_text("标题一\t1\n", encoding="utf-8")
    (tmp_path / "test.txt").write_text("标题二\t0\n标题三\t2\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"test.txt, line 2: expected 'title<TAB>class number'"):
        T.load_task("thucnews", root=tmp_path)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownDatasetError, match="known tasks: mr, cr"):
        T.load_task("snli")
    with pytest.raises(UnknownDatasetError, match="conll2003_ner"):
        T.load_tagging("ontonotes")
    assert set(T.TASK_NAMES) == set(T._TASKS)


def test_conll_parser(tmp_path):
    (tmp_path / "eng.train").write_text("-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n\n"
                                        "Peter NNP B-NP I-PER\n")
    (tmp_path / "eng.testa").write_text("A DT B-NP O\n")
    (tmp_path / "eng.testb").write_text("A DT B-NP\n")
    with pytest.raises(DataFormatError, match=r"eng.testb, line 1: expected 4 space-separated fields, got 3"):
        T.load_tagging("conll2003_ner", root=tmp_path)
    sents = T.parse_conll(tmp_path / "eng.train", 3, 4)
    assert [s.tags for s in sents] == [("I-ORG", "O"), ("I-PER",)] and sents[0].tokens == ("EU", "rejects")
    with pytest.raises(ValueError, match="2 tokens but 1 tags"):
        T.TaggedSentence(("a", "b"), ("X",))


# --- cross-validation folds ------------------------------------------------------------------

def test_cv_folds_are_stratified_disjoint_and_seeded():
    exs = [Example(str(i), int(i % 10 < 3)) for i in range(103)]  # 31 positives, 72 negatives
    folds = T.cv_folds(exs, k=10, seed=0)
    tests = [t for _, t in folds]
    assert sorted(i for t in tests for i in t) == list(range(103))
    for train, test in folds:
        assert set(train).isdisjoint(test) and len(train) + len(test) == 103
        pos = sum(exs[i].label for i in test)
        assert pos in (3, 4) and len(test) in (10, 11)
    assert folds == T.cv_folds(exs, k=10, seed=0) and folds != T.cv_folds(exs, k=10, seed=1)
    with pytest.raises(ValueError, match="cannot be split into 10 folds"):
        T.cv_folds(exs[:5])


# --- the real files (only where cached: `make data` fetches them; these tests never fetch) -------

def _need(*names: str) -> None:
    from companion.data import cache_status

    for name in names:
        if name == "imdb":  # not a registry download: its loader verifies the repacked files
            from companion.data.imdb import imdb_dir

            try:
                imdb_dir()
            except FileNotFoundError as err:
                pytest.skip(str(err))
            continue
        status = cache_status(name, verify=False)
        if status != "cached":
            pytest.skip(f"{name} is {status}; run `python -m companion.data fetch {name}` (or make data)")


REAL = {  # task: (sizes, label counts of the first split) -- measured on the registry's files
    "mr": ({"all": 10662}, {"negative": 5331, "positive": 5331}),
    "cr": ({"all": 3771}, {"negative": 1366, "positive": 2405}),
    "subj": ({"all": 10000}, {"subjective": 5000, "objective": 5000}),
    "mpqa": ({"all": 10603}, {"negative": 7292, "positive": 3311}),
    "trec": ({"train": 5452, "test": 500}, {"ABBR": 86, "DESC": 1162, "ENTY": 1250, "HUM": 1223,
                                            "LOC": 835, "NUM": 896}),
    "sst2": ({"train": 6920, "dev": 872, "test": 1821}, {"negative": 3310, "positive": 3610}),
    "sst5": ({"train": 8544, "dev": 1101, "test": 2210}, None),
    "sst2_glue": ({"train": 60614, "dev": 6735, "test": 872}, {"negative": 26786, "positive": 33828}),
    "mrpc": ({"train": 3576, "dev": 500, "test": 1725}, {"not_paraphrase": 1169, "paraphrase": 2407}),
    "stsb": ({"train": 5749, "dev": 1500, "test": 1379}, None),
    "sick_r": ({"train": 4500, "dev": 500, "test": 4927}, None),
    "sick_e": ({"train": 4500, "dev": 500, "test": 4927}, {"entailment": 1299, "neutral": 2536,
                                                           "contradiction": 665}),
    "rte": ({"train": 2567, "dev": 800, "test": 800}, {"entailment": 1293, "not_entailment": 1274}),
    "ag_news": ({"train": 10001, "test": 7600}, None),
    "fewglue_boolq": ({"train": 32}, None), "fewglue_cb": ({"train": 32}, None),
    "fewglue_rte": ({"train": 32}, None),
    "chnsenticorp": ({"all": 7765}, {"negative": 2443, "positive": 5322}),
    "ocnli": ({"train": 9985, "train_3k": 2994, "dev": 2950}, None),
    "thucnews": ({"train": 10000, "test": 10000}, None),
    "imdb": ({"train": 25000, "test": 25000}, {"negative": 12500, "positive": 12500}),
}


@pytest.mark.parametrize("name", T.TASK_NAMES)
def test_real_task(name):
    _need(T._TASKS[name][1])
    task = T.load_task(name)
    sizes, counts = REAL[name]
    assert task.sizes() == sizes and task.license
    if counts is not None:
        assert task.label_counts()[next(iter(sizes))] == counts
    for exs in task.splits.values():
        assert all(e.text and (e.text_b is not None) == (task.kind == "pair") for e in exs)
        if task.label_names is None:
            assert all(isinstance(e.label, float) for e in exs)
        else:
            assert Counter(e.label for e in exs).keys() <= set(range(len(task.label_names)))


@pytest.mark.slow
def test_real_tagging_sets():
    _need("conll2003", "conll2000", "ptb_sample")
    got = {n: {k: len(v) for k, v in T.load_tagging(n).items()} for n in ("conll2003_ner", "conll2000_chunk")}
    assert got["conll2003_ner"] == {"train": 14041, "dev": 3250, "test": 3453}  # the official counts
    assert got["conll2000_chunk"] == {"train": 8043, "dev": 893, "test": 2012}  # 8,936 official train
    ptb = T.load_tagging("ptb_pos")
    assert {k: len(v) for k, v in ptb.items()} == {"train": 3396, "dev": 273, "test": 245}
    assert not any("-NONE-" in s.tags for v in ptb.values() for s in v)


# --- non-UTF-8 input elsewhere (issue 10) ------------------------------------------------------

def test_non_utf8_in_the_part1_loaders_names_file_and_line(tmp_path):
    from companion.data.corpora import load_moby_dick
    from companion.data.evalsets import load_wordsim353
    from companion.word2vec.export import load_word2vec_format

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "data.txt").write_bytes(b"CHAPTER 1. Loomings\n\nCall me \xe9shmael.\n")
    with pytest.raises(DataFormatError, match=r"data.txt, line 3: not valid utf-8"):
        load_moby_dick(tmp_path)
    (tmp_path / "wordsim353.tsv").write_bytes(b"# x\nna\xefve\tword\t5.0\n")
    with pytest.raises(DataFormatError, match=r"wordsim353.tsv, line 2: not valid utf-8"):
        load_wordsim353(tmp_path)
    (tmp_path / "v.txt").write_bytes(b"2 1\ncaf\xe9 0.5\nb 1.0\n")
    with pytest.raises(DataFormatError, match=r"v.txt, line 2: not valid utf-8"):
        load_word2vec_format(tmp_path / "v.txt")


def test_cli_stats_of_a_task_prints_splits_and_label_counts(capsys):
    from companion.data.cli import main

    _need("senteval_mr", "sick")
    assert main(["stats", "mr", "sick_r"]) == 0
    out = capsys.readouterr().out
    assert "mr: single, accuracy, 10-fold CV; all 10,662; all: negative 5,331 / positive 5,331" in out
    assert "sick_r: pair, spearman; train 4,500, dev 500, test 4,927; real-valued labels train 1-5" in out
    assert main(["stats", "no_such_task"]) == 2


def test_glue_sst2_ag_news_fewglue_tiny(tmp_path):
    for s in ("train", "dev", "test"):
        (tmp_path / f"{s}.tsv").write_text("sentence\tlabel\nit 's a charming journey . \t1\n")
    assert T.load_task("sst2_glue", root=tmp_path).splits["test"] == [Example("it 's a charming journey .", 1)]
    (tmp_path / "dev.tsv").write_text("Wall St. Bears\\Claw Back\tBusiness\n")
    (tmp_path / "test.tsv").write_text("Mars rover\tSci/Tech\nA goal\tSport\n")
    with pytest.raises(DataFormatError, match=r"test.tsv, line 2: unknown label 'Sport'"):
        T.load_task("ag_news", root=tmp_path)
    (tmp_path / "test.tsv").write_text("Mars rover\tSci/Tech\n")
    ag = T.load_task("ag_news", root=tmp_path)
    assert ag.splits["train"] == [Example("Wall St. Bears Claw Back", 2)] and ag.splits["test"][0].label == 3
    (tmp_path / "CB.train.jsonl").write_text(json.dumps({"premise": "P", "hypothesis": "H", "label": "neutral"})
                                             + "\n{not json\n")
    with pytest.raises(DataFormatError, match=r"CB.train.jsonl, line 2: not a JSON object"):
        T.load_task("fewglue_cb", root=tmp_path)
    (tmp_path / "CB.train.jsonl").write_text(json.dumps({"premise": "P", "hypothesis": "H", "label": "neutral"}))
    assert T.load_task("fewglue_cb", root=tmp_path).splits["train"] == [Example("P", 1, "H")]
    assert T.load_fewglue("CB", root=tmp_path) == [{"premise": "P", "hypothesis": "H", "label": "neutral"}]
