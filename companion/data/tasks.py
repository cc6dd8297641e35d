"""Labelled sentence tasks and tagged text for Part II, as plain Python data.

Every task loads the same way, ``load_task(name) -> TaskData``: a name, splits of
:class:`Example` (one sentence, or a pair), the label names, the task's kind and main metric.
Tasks without a standard split (MR, CR, SUBJ, MPQA, following SentEval) have the single split
``"all"`` and are evaluated by seeded, stratified 10-fold cross-validation (:func:`cv_folds`).
Tagged text loads as ``load_tagging(name) -> {split: [TaggedSentence]}``.

The files come from the registry (``companion.data.registry``): canonical URLs pinned by sha256,
or the local mirror ``$BOOK_DATA_MIRROR``; nothing is downloaded at import time.

The tasks, with the sizes measured on the registry's files (``python -m companion.data stats
TASK`` prints them with the label counts):

============== ======= ======== ========================== ==================================
task           kind    metric   splits                     labels
============== ======= ======== ========================== ==================================
mr             single  accuracy all 10,662 (10-fold CV)    negative / positive
cr             single  accuracy all 3,771 (10-fold CV)     negative / positive
subj           single  accuracy all 10,000 (10-fold CV)    subjective / objective
mpqa           single  accuracy all 10,603 (10-fold CV)    negative / positive
trec           single  accuracy 5,452 / - / 500            ABBR DESC ENTY HUM LOC NUM
sst2           single  accuracy 6,920 / 872 / 1,821        negative / positive
sst5           single  accuracy 8,544 / 1,101 / 2,210      very negative ... very positive
sst2_glue      single  accuracy 60,614 / 6,735 / 872       negative / positive
mrpc           pair    f1       3,576 / 500 / 1,725        not_paraphrase / paraphrase
stsb           pair    spearman 5,749 / 1,500 / 1,379      score 0-5
sick_r         pair    spearman 4,500 / 500 / 4,927        score 1-5
sick_e         pair    accuracy 4,500 / 500 / 4,927        entailment / neutral / contradiction
rte            pair    accuracy 2,567 / 800 / 800          entailment / not_entailment
ag_news        single  accuracy 10,001 / - / 7,600         World Sports Business Sci/Tech
fewglue_boolq  pair    accuracy 32 (train only)            False / True
fewglue_cb     pair    accuracy 32 (train only)            entailment / neutral / contradiction
fewglue_rte    pair    accuracy 32 (train only)            entailment / not_entailment
chnsenticorp   single  accuracy all 7,765 (10-fold CV)     negative / positive
ocnli          pair    accuracy 9,985 (3k: 2,994) / 2,950  entailment / neutral / contradiction
thucnews       single  accuracy 10,000 / - / 10,000        10 news topics (class.txt)
imdb           single  accuracy 25,000 / - / 25,000        negative / positive
============== ======= ======== ========================== ==================================

(splits are train / dev / test; "-" = none; OCNLI's dev is the test set, its test labels are not
public.) The FewGLUE tasks have only their 32 training examples here; :func:`load_fewglue` gives
the raw records of all eight (COPA, MultiRC, ReCoRD, WiC and WSC do not fit :class:`Example`).
"""

from __future__ import annotations

import html
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ._io import bad_line, read_lines, read_text
from .errors import DataFormatError, UnknownDatasetError, UnknownSplitError


class Splits(dict):
    """A task's splits by name (a ``dict``): a name it lacks (``"tset"``, ``"validation"``) raises
    :class:`UnknownSplitError` naming the task and the splits it has."""

    def __init__(self, splits=(), task: str = ""):
        super().__init__(splits)
        self.task = task

    def __missing__(self, key):
        raise UnknownSplitError(f"{self.task or 'the task'} has no split {key!r}; its splits are {sorted(self)}")

    def __reduce__(self):  # pickles (and copies) with its task name
        return (Splits, (dict(self), self.task))


@dataclass(frozen=True)
class Example:
    """One labelled example.

    Attributes:
        text: the sentence (the first one of a pair task).
        label: a class index into the task's ``label_names``, or a real score (STS-B, SICK-R).
        text_b: the second sentence of a pair task (MRPC, STS-B, SICK, RTE), else ``None``.
    """

    text: str
    label: int | float
    text_b: str | None = None


@dataclass
class TaskData:
    """A task: its splits, label set, kind and main metric.

    Attributes:
        name: the task name (one of :data:`TASK_NAMES`).
        splits: ``"train"`` / ``"dev"`` / ``"test"`` lists of examples; a task with no standard
            split (MR, CR, SUBJ, MPQA) has the single split ``"all"``.
        label_names: the class names (``label`` indexes them), ``None`` for regression tasks.
        kind: ``"single"`` or ``"pair"`` (one or two sentences per example).
        metric: the main metric: ``"accuracy"``, ``"f1"`` or ``"spearman"``.
        cv_folds: 10 for the SentEval tasks without a split, else ``None``.
        license: one line, from the registry entry.
    """

    name: str
    splits: dict[str, list[Example]]
    label_names: tuple[str, ...] | None
    kind: str
    metric: str
    cv_folds: int | None = None
    license: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.splits, Splits):
            self.splits = Splits(self.splits, self.name)

    def split(self, name: str) -> list[Example]:
        """The examples of split ``name`` (``UnknownSplitError`` lists the splits when it is not one)."""
        return self.splits[name]

    def sizes(self) -> dict[str, int]:
        """Examples per split."""
        return {k: len(v) for k, v in self.splits.items()}

    def label_counts(self) -> dict[str, dict[str, int]]:
        """Per split, examples per label name (empty for a regression task)."""
        if self.label_names is None:
            return {}
        out = {}
        for split, exs in self.splits.items():
            counts = dict.fromkeys(self.label_names, 0)
            for ex in exs:
                counts[self.label_names[int(ex.label)]] += 1
            out[split] = counts
        return out


@dataclass(frozen=True)
class TaggedSentence:
    """A sentence with one tag per token (POS, chunk or NER tags exactly as in the file)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.tags):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.tags)} tags: {self.tokens[:5]}...")


TASK_NAMES: tuple[str, ...] = (
    "mr", "cr", "subj", "mpqa", "trec", "sst2", "sst5", "sst2_glue", "mrpc", "stsb",
    "sick_r", "sick_e", "rte", "ag_news", "fewglue_boolq", "fewglue_cb", "fewglue_rte",
    "chnsenticorp", "ocnli", "thucnews", "imdb",
)
TAGGING_NAMES: tuple[str, ...] = ("brown_pos", "conll2000_chunk", "conll2003_ner", "ptb_pos")


def load_task(name: str, root: str | os.PathLike | None = None) -> TaskData:
    """Load a labelled sentence task by name (the files are fetched and verified on first use).

    Args:
        name: one of :data:`TASK_NAMES`; each loader's docstring gives its files, splits,
            label set and measured sizes (``python -m companion.data stats TASK`` prints them).
        root: a directory holding the task's files (tests use tiny generated ones); by default
            the registry's verified copy.

    Raises:
        UnknownDatasetError: for a name not in :data:`TASK_NAMES` (the message lists them).
        DataFormatError: for a malformed line (the message names the file and the line).
    """
    if name not in _TASKS:
        raise UnknownDatasetError(f"unknown task {name!r}; known tasks: {', '.join(TASK_NAMES)}")
    loader, dataset = _TASKS[name]
    if dataset == "imdb":  # repacked files verified by their own loader (companion.data.imdb)
        return loader(root)
    from .registry import get_dataset

    task = loader(_root(dataset, root))
    task.license = get_dataset(dataset).license
    return task


def load_tagging(name: str, root: str | os.PathLike | None = None) -> dict[str, list[TaggedSentence]]:
    """Load a tagged corpus by name: ``{"train": [...], "dev": [...], "test": [...]}``.

    ``brown_pos``: the Brown corpus' tags as :func:`~companion.data.brown.load_brown` gives them
    (NLTK's upper-case form), split by file: of the 500 files in order, every 10th from the 9th
    is dev, every 10th from the 10th is test (400 / 50 / 50 files, every genre in each split).
    ``conll2000_chunk``: IOB2 chunk tags; the official test set; the official training set's
    last 10 % of sentences are our dev split (train + dev = the official training set).
    ``conll2003_ner``: IOB1 entity tags (``I-ORG`` starts an entity unless it follows another of
    the same type: convert before span scoring if needed); eng.train / eng.testa / eng.testb;
    ``-DOCSTART-`` lines dropped. ``ptb_pos``: the 10 % WSJ sample's POS tags without the
    ``-NONE-`` trace tokens; files wsj_0001-0159 train, 0160-0179 dev, 0180-0199 test.

    Raises:
        UnknownDatasetError: for a name not in :data:`TAGGING_NAMES`.
    """
    if name not in _TAGGING:
        raise UnknownDatasetError(f"unknown tagging set {name!r}; known: {', '.join(TAGGING_NAMES)}")
    loader, dataset = _TAGGING[name]
    return Splits(loader(_root(dataset, root) if dataset else root), name)


def _root(dataset: str, root: str | os.PathLike | None) -> Path:
    if root is not None:
        return Path(root)
    from .fetching import ensure

    return ensure(dataset)


def _need(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call the loader without root= to use the "
                                f"registry's verified copy")
    return path


# --- parsers -----------------------------------------------------------------------------------

def parse_label_first(path: str | os.PathLike, n_labels: int, encoding: str = "utf-8") -> list[Example]:
    """Lines ``LABEL sentence`` (SentEval's MR/CR/SUBJ/MPQA/TREC files, SST's stsa files).

    SentEval reads its files as Latin-1 (MR, SUBJ and TREC hold Latin-1 bytes such as
    ``clich\xe9s``); the SentEval tasks here do the same, SST is UTF-8.

    Raises:
        DataFormatError: naming the file and line, for a line without an integer label in
            ``0 .. n_labels-1`` followed by text.
    """
    out = []
    for i, line in enumerate(read_lines(_need(Path(path)), encoding), 1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        if not label.isdigit() or int(label) >= n_labels:
            raise bad_line(path, i, f"expected 'LABEL sentence' with LABEL in 0..{n_labels - 1}, "
                                    f"got {line[:60]!r}")
        if text.strip():  # CR has 4 and MPQA 3 lines with a label and no text: dropped
            out.append(Example(text.strip(), int(label)))
    return out


def _tsv(path: Path, min_fields: int, header: bool) -> list[tuple[int, list[str]]]:
    """(line number, fields) of a tab-separated file, checking the number of fields."""
    rows = []
    for i, line in enumerate(read_lines(_need(path)), 1):
        if (header and i == 1) or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < min_fields:
            raise bad_line(path, i, f"expected at least {min_fields} tab-separated fields, "
                                    f"got {len(fields)}")
        rows.append((i, fields))
    return rows


def _index(path: Path, i: int, value: str, names: dict[str, int]) -> int:
    try:
        return names[value.strip()]
    except KeyError:
        raise bad_line(path, i, f"unknown label {value!r} (expected one of {sorted(names)})") from None


def _float(path: Path, i: int, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise bad_line(path, i, f"expected a number, got {value!r}") from None


# --- the tasks ---------------------------------------------------------------------------------

def _senteval(name: str, file: str, labels: tuple[str, str]) -> Callable[[Path], TaskData]:
    def load(root: Path) -> TaskData:
        exs = parse_label_first(root / file, len(labels), "latin-1")
        return TaskData(name, {"all": exs}, labels, "single", "accuracy", cv_folds=10)
    return load


def _trec(root: Path) -> TaskData:
    """TREC (Li & Roth 2002), 6 coarse question types: 5,452 train / 500 test (no dev split:
    SentEval selects the probe's regularisation by cross-validation on train). The files'
    label numbers map to ABBR, DESC, ... as checked against the class counts of the original
    (ABBR 86, DESC 1,162, ENTY 1,250, HUM 1,223, LOC 835, NUM 896 in train)."""
    order = (1, 2, 0, 3, 4, 5)  # file label -> index into TREC_LABELS (file: 0 DESC, 1 ENTY, 2 ABBR)
    splits = {}
    for split in ("train", "test"):
        exs = parse_label_first(root / f"TREC.{split}.all", 6, "latin-1")
        splits[split] = [Example(e.text, order[int(e.label)]) for e in exs]
    return TaskData("trec", splits, TREC_LABELS, "single", "accuracy")


TREC_LABELS = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


def _sst(kind: str) -> Callable[[Path], TaskData]:
    def load(root: Path) -> TaskData:
        labels = SST2_LABELS if kind == "binary" else SST5_LABELS
        splits = {s: parse_label_first(root / f"stsa.{kind}.{s}", len(labels)) for s in ("train", "dev", "test")}
        return TaskData("sst2" if kind == "binary" else "sst5", splits, labels, "single", "accuracy")
    return load


SST2_LABELS = ("negative", "positive")
SST5_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")


def _sst2_glue(root: Path) -> TaskData:
    """SST-2 as GLUE re-split it (phrases of the treebank in train): train.tsv (60,614) and
    dev.tsv (6,735) together are GLUE's training set (67,349); test.tsv (872) is GLUE's *dev*
    set, which has labels -- GLUE's own test labels are hidden, so its dev set serves as our test
    set (the usual practice). Header line ``sentence<TAB>label``."""
    splits = {}
    for split in ("train", "dev", "test"):
        path = root / f"{split}.tsv"
        splits[split] = [Example(f[0].strip(), _index(path, i, f[1], {"0": 0, "1": 1}))
                         for i, f in _tsv(path, 2, header=True)]
    return TaskData("sst2_glue", splits, SST2_LABELS, "single", "accuracy")


def _mrpc(root: Path) -> TaskData:
    """MRPC: train 3,576 / dev 500 (the repository's val file, carved from the official
    training set of 4,076) / test 1,725 sentence pairs; labels not paraphrase / paraphrase;
    main metric F1 of the paraphrase class (accuracy is reported alongside)."""
    splits = {}
    for split, file in (("train", "train"), ("dev", "val"), ("test", "test")):
        path = root / f"msr-para-{file}.tsv"
        splits[split] = [Example(f[3].strip(), _index(path, i, f[0], {"0": 0, "1": 1}), f[4].strip())
                         for i, f in _tsv(path, 5, header=True)]
    return TaskData("mrpc", splits, ("not_paraphrase", "paraphrase"), "pair", "f1")


def _stsb(root: Path) -> TaskData:
    """STS Benchmark: 5,749 / 1,500 / 1,379 pairs, a similarity score 0-5 (regression, main
    metric Spearman). Fields: genre, file, year, id, score, sentence 1, sentence 2 (a few
    lines carry two more fields, the source of the pair; ignored)."""
    splits = {}
    for split in ("train", "dev", "test"):
        path = root / f"sts-{split}.csv"
        splits[split] = [Example(f[5].strip(), _float(path, i, f[4]), f[6].strip())
                         for i, f in _tsv(path, 7, header=False)]
    return TaskData("stsb", splits, None, "pair", "spearman")


SICK_E_LABELS = ("entailment", "neutral", "contradiction")


def _sick(which: str) -> Callable[[Path], TaskData]:
    def load(root: Path) -> TaskData:
        splits = {}
        names = {n.upper(): k for k, n in enumerate(SICK_E_LABELS)}
        for split, file in (("train", "train"), ("dev", "trial"), ("test", "test_annotated")):
            path = root / f"SICK_{file}.txt"
            rows = _tsv(path, 5, header=True)
            if which == "r":
                splits[split] = [Example(f[1], _float(path, i, f[3]), f[2]) for i, f in rows]
            else:
                splits[split] = [Example(f[1], _index(path, i, f[4], names), f[2]) for i, f in rows]
        if which == "r":
            return TaskData("sick_r", splits, None, "pair", "spearman")
        return TaskData("sick_e", splits, SICK_E_LABELS, "pair", "accuracy")
    return load


def _rte(root: Path) -> TaskData:
    """PASCAL RTE 1-3 (NLTK's copy): train = RTE-1 and RTE-2 (their dev and test sets: 567 + 800
    + 400 + 800 = 2,567 pairs; NLTK's RTE-2 dev file has 400), dev = RTE-3's dev set (800), test =
    RTE-3's test set (800); labels entailment / not_entailment (the files say ``value="TRUE"`` in
    RTE-1, ``entailment="YES"`` later)."""
    import xml.etree.ElementTree as ET

    def read(file: str) -> list[Example]:
        path = _need(root / file)
        try:
            tree = ET.fromstring(read_text(path))
        except ET.ParseError as err:
            raise DataFormatError(f"{path}, line {err.position[0]}: not well-formed XML ({err})",
                                  path, err.position[0]) from None
        out = []
        for pair in tree.iter("pair"):
            value = (pair.get("value") or pair.get("entailment") or "").upper()
            t, h = pair.findtext("t"), pair.findtext("h")
            if value not in ("TRUE", "YES", "FALSE", "NO") or t is None or h is None:
                raise DataFormatError(f"{path}: pair id={pair.get('id')} lacks <t>, <h> or a "
                                      f"TRUE/FALSE (YES/NO) label", path)
            out.append(Example(" ".join(t.split()), 0 if value in ("TRUE", "YES") else 1, " ".join(h.split())))
        return out

    splits = {"train": [e for f in ("rte1_dev", "rte1_test", "rte2_dev", "rte2_test") for e in read(f + ".xml")],
              "dev": read("rte3_dev.xml"), "test": read("rte3_test.xml")}
    return TaskData("rte", splits, ("entailment", "not_entailment"), "pair", "accuracy")


AG_NEWS_LABELS = ("World", "Sports", "Business", "Sci/Tech")
_AG_ENTITY = re.compile(r" ?(?:#(\d+)|\b(quot|amp));")


def clean_ag_news(text: str) -> str:
    r"""AG News as distributed has the ``&`` of its HTML entities turned into a space (``Iraq
    #39;s``, ``the  #36;10 million``, `` quot;``) and marks line breaks with ``\\``: decode the
    entities, dropping that space (``#151;`` is Windows-1252's dash, as :func:`html.unescape`
    knows), and turn the backslashes into spaces. A text quoted CSV-style (``"..."`` with inner
    quotes doubled; 278 of the test set's) is unquoted first.

    Example:
        >>> print(clean_ag_news("Iraq #39;s bid: the  #36;10 million\\deal on  quot;hold quot; now"))
        Iraq's bid: the $10 million deal on "hold" now
        >>> print(clean_ag_news('"A ""Music Manifesto"" campaign"'))
        A "Music Manifesto" campaign
    """
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    text = _AG_ENTITY.sub(lambda m: html.unescape(f"&#{m.group(1)};" if m.group(1) else f"&{m.group(2)};"), text)
    return " ".join(text.replace("\\", " ").split())


def _ag_news(root: Path) -> TaskData:
    """AG News (Zhang, Zhao & LeCun 2015), 4 topics: ``train`` is the repository's dev.tsv, a
    10,001-article sample of AG's training set; ``test`` is AG's full test set (7,600, 1,900 per
    class). Each line: title and description joined by the source, a tab, the class name."""
    names = {n: k for k, n in enumerate(AG_NEWS_LABELS)}
    splits = {}
    for split, file in (("train", "dev.tsv"), ("test", "test.tsv")):
        path = root / file
        splits[split] = [Example(clean_ag_news(" ".join(f[:-1])), _index(path, i, f[-1], names))
                         for i, f in _tsv(path, 2, header=False)]
    return TaskData("ag_news", splits, AG_NEWS_LABELS, "single", "accuracy")


def load_fewglue(task: str, root: str | os.PathLike | None = None) -> list[dict]:
    """The 32 training records of a FewGLUE task as dicts, exactly as in the JSON lines
    (``BoolQ``, ``CB``, ``COPA``, ``MultiRC``, ``ReCoRD``, ``RTE``, ``WiC``, ``WSC``)."""
    tasks = ("BoolQ", "CB", "COPA", "MultiRC", "ReCoRD", "RTE", "WiC", "WSC")
    if task not in tasks:
        raise UnknownDatasetError(f"unknown FewGLUE task {task!r}; known: {', '.join(tasks)}")
    path = _need(_root("fewglue", root) / f"{task}.train.jsonl")
    out = []
    for i, line in enumerate(read_lines(path), 1):
        if line.strip():
            try:
                rec = json.loads(line)
            except ValueError as err:
                raise bad_line(path, i, f"not a JSON object ({err})") from None
            if not isinstance(rec, dict):
                raise bad_line(path, i, "not a JSON object")
            out.append(rec)
    return out


def _fewglue(task: str, a: str, b: str, labels: tuple[str, ...], values: tuple) -> Callable[[Path], TaskData]:
    def load(root: Path) -> TaskData:
        path = root / f"{task}.train.jsonl"
        exs = []
        for k, rec in enumerate(load_fewglue(task, root), 1):
            if a not in rec or b not in rec or rec.get("label") not in values:
                raise DataFormatError(f"{path}, record {k}: needs {a!r}, {b!r} and a label in {values}", path)
            exs.append(Example(rec[a], values.index(rec["label"]), rec[b]))
        return TaskData(f"fewglue_{task.lower()}", {"train": exs}, labels, "pair", "accuracy")
    return load


def _chnsenticorp(root: Path) -> TaskData:
    """ChnSentiCorp hotel reviews (Chinese): CSV ``label,review``, 0 negative / 1 positive.
    No standard split: 10-fold cross-validation like MR. Reviews with empty text are dropped
    (one in this file)."""
    import csv
    import io

    path = _need(root / "ChnSentiCorp_htl_all.csv")
    exs = []
    reader = csv.reader(io.StringIO(read_text(path)))
    for row in reader:
        i = reader.line_num
        if i == 1 and row[:1] == ["label"]:
            continue
        if len(row) != 2 or row[0] not in ("0", "1"):
            raise bad_line(path, i, f"expected 'label,review' with label 0 or 1, got {row[:2]!r}")
        if row[1].strip():
            exs.append(Example(row[1].strip(), int(row[0])))
    return TaskData("chnsenticorp", {"all": exs}, SST2_LABELS, "single", "accuracy", cv_folds=10)


def _ocnli(root: Path) -> TaskData:
    """OCNLI (Hu et al. 2020), Chinese NLI: ``train`` = train.10k.json, ``train_3k`` =
    train.3k.json, ``dev`` = dev.json (the test labels are not public: use dev as the test set).
    Pairs whose annotators reached no majority carry the label ``-`` and are dropped (as in the
    paper's evaluation)."""
    names = {n: k for k, n in enumerate(SICK_E_LABELS)}
    splits = {}
    for split, file in (("train", "train.10k.json"), ("train_3k", "train.3k.json"), ("dev", "dev.json")):
        path = _need(root / file)
        exs = []
        for i, line in enumerate(read_lines(path), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                s1, s2, label = rec["sentence1"], rec["sentence2"], rec["label"]
            except (ValueError, KeyError, TypeError) as err:
                raise bad_line(path, i, f"expected a JSON object with sentence1, sentence2, label ({err})") from None
            if label != "-":
                exs.append(Example(s1, _index(path, i, label, names), s2))
        splits[split] = exs
    return TaskData("ocnli", splits, SICK_E_LABELS, "pair", "accuracy")


def _thucnews(root: Path) -> TaskData:
    """THUCNews headlines, 10 classes (class.txt: finance, realty, stocks, education, science,
    society, politics, sports, game, entertainment). The repository's training file (180,000)
    is not in the registry: ``train`` is its dev.txt (10,000 titles), ``test`` its test.txt."""
    labels = tuple(x.strip() for x in read_lines(_need(root / "class.txt")) if x.strip())
    splits = {}
    for split, file in (("train", "dev.txt"), ("test", "test.txt")):
        path = root / file
        out = []
        for i, f in _tsv(path, 2, header=False):
            if not f[-1].strip().isdigit() or int(f[-1]) >= len(labels):
                raise bad_line(path, i, f"expected 'title<TAB>class number' with class in 0..{len(labels) - 1}")
            out.append(Example(f[0].strip(), int(f[-1])))
        splits[split] = out
    return TaskData("thucnews", splits, labels, "single", "accuracy")


def _imdb(root: Path | None) -> TaskData:
    """IMDb's labelled reviews (:mod:`companion.data.imdb`): ``train`` (25,000) and ``test``
    (25,000), texts without their ``<br />`` tags, labels negative / positive. No dev split: carve
    one from ``train`` (the test reviews are about other films)."""
    from .imdb import LABEL_NAMES, LICENSE, clean_review, load_imdb

    splits = {s: [Example(clean_review(r.text), int(r.label)) for r in load_imdb(s, root)]
              for s in ("train", "test")}
    return TaskData("imdb", splits, LABEL_NAMES, "single", "accuracy", license=LICENSE)


_TASKS: dict[str, tuple[Callable[[Path], TaskData], str]] = {
    "mr": (_senteval("mr", "rt-polarity.all", ("negative", "positive")), "senteval_mr"),
    "cr": (_senteval("cr", "custrev.all", ("negative", "positive")), "senteval_cr"),
    "subj": (_senteval("subj", "subj.all", ("subjective", "objective")), "senteval_subj"),
    "mpqa": (_senteval("mpqa", "mpqa.all", ("negative", "positive")), "senteval_mpqa"),
    "trec": (_trec, "senteval_trec"),
    "sst2": (_sst("binary"), "sst"),
    "sst5": (_sst("fine"), "sst"),
    "sst2_glue": (_sst2_glue, "sst2_glue"),
    "mrpc": (_mrpc, "mrpc"),
    "stsb": (_stsb, "stsb"),
    "sick_r": (_sick("r"), "sick"),
    "sick_e": (_sick("e"), "sick"),
    "rte": (_rte, "rte"),
    "ag_news": (_ag_news, "ag_news"),
    "fewglue_boolq": (_fewglue("BoolQ", "question", "passage", ("False", "True"), (False, True)), "fewglue"),
    "fewglue_cb": (_fewglue("CB", "premise", "hypothesis", SICK_E_LABELS, SICK_E_LABELS), "fewglue"),
    "fewglue_rte": (_fewglue("RTE", "premise", "hypothesis", ("entailment", "not_entailment"),
                             ("entailment", "not_entailment")), "fewglue"),
    "chnsenticorp": (_chnsenticorp, "chnsenticorp"),
    "ocnli": (_ocnli, "ocnli"),
    "thucnews": (_thucnews, "thucnews_titles"),
    "imdb": (_imdb, "imdb"),
}
assert tuple(_TASKS) == TASK_NAMES


# --- tagging -----------------------------------------------------------------------------------

def parse_conll(path: str | os.PathLike, tag_column: int, n_columns: int) -> list[TaggedSentence]:
    """A CoNLL file: one token per line (``n_columns`` space-separated fields), blank lines
    between sentences, ``-DOCSTART-`` lines dropped; the tag is field ``tag_column``.

    Raises:
        DataFormatError: naming the file and line, for a line with another number of fields.
    """
    sents: list[TaggedSentence] = []
    toks: list[str] = []
    tags: list[str] = []
    for i, line in enumerate(read_lines(_need(Path(path))), 1):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if toks:
                sents.append(TaggedSentence(tuple(toks), tuple(tags)))
                toks, tags = [], []
            continue
        if len(fields) != n_columns:
            raise bad_line(path, i, f"expected {n_columns} space-separated fields, got {len(fields)}")
        toks.append(fields[0])
        tags.append(fields[tag_column])
    if toks:
        sents.append(TaggedSentence(tuple(toks), tuple(tags)))
    return sents


def _conll2003(root: Path) -> dict[str, list[TaggedSentence]]:
    return {s: parse_conll(root / f"eng.{f}", 3, 4) for s, f in (("train", "train"), ("dev", "testa"), ("test", "testb"))}


def _conll2000(root: Path) -> dict[str, list[TaggedSentence]]:
    train = parse_conll(root / "train.txt", 2, 3)
    cut = len(train) - len(train) // 10
    return {"train": train[:cut], "dev": train[cut:], "test": parse_conll(root / "test.txt", 2, 3)}


def _brown_pos(root: Path | None) -> dict[str, list[TaggedSentence]]:
    from .brown import load_brown

    corpus = load_brown(root)
    out: dict[str, list[TaggedSentence]] = {"train": [], "dev": [], "test": []}
    for k, f in enumerate(corpus.files):
        split = "dev" if k % 10 == 8 else "test" if k % 10 == 9 else "train"
        out[split] += [TaggedSentence(tuple(w), tuple(t)) for w, t in zip(f.sents, f.tags)]
    return out


def _ptb_pos(root: Path | None) -> dict[str, list[TaggedSentence]]:
    from .treebank import load_ptb_trees

    out: dict[str, list[TaggedSentence]] = {"train": [], "dev": [], "test": []}
    for tree in load_ptb_trees(root):
        num = int(tree.fileid[4:8])
        split = "train" if num <= 159 else "dev" if num <= 179 else "test"
        words, tags = tree.tagged(traces=False)
        out[split].append(TaggedSentence(tuple(words), tuple(tags)))
    return out


_TAGGING: dict[str, tuple[Callable, str | None]] = {
    "brown_pos": (_brown_pos, None),
    "conll2000_chunk": (_conll2000, "conll2000"),
    "conll2003_ner": (_conll2003, "conll2003"),
    "ptb_pos": (_ptb_pos, None),
}


def cv_folds(examples: list[Example], k: int = 10, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """SentEval-style k-fold cross-validation: ``k`` pairs ``(train_idx, test_idx)``.

    Stratified by label: the indices of each label are shuffled with ``random.Random(seed)``
    and dealt round-robin into the folds (continuing where the previous label stopped), so every
    fold holds each label's share to within one example and the fold sizes differ by at most one.
    Deterministic for a given ``seed``; every index is in exactly one test fold.

    Raises:
        ValueError: if ``k < 2`` or there are fewer examples than folds.
    """
    if k < 2:
        raise ValueError(f"cross-validation needs k >= 2 folds, got {k}")
    if len(examples) < k:
        raise ValueError(f"{len(examples)} examples cannot be split into {k} folds")
    rng = random.Random(seed)
    by_label: dict[object, list[int]] = {}
    for i, ex in enumerate(examples):
        by_label.setdefault(ex.label, []).append(i)
    folds: list[list[int]] = [[] for _ in range(k)]
    slot = 0
    for label in sorted(by_label, key=repr):
        idx = by_label[label]
        rng.shuffle(idx)
        for i in idx:
            folds[slot % k].append(i)
            slot += 1
    out = []
    for f in range(k):
        test = sorted(folds[f])
        train = sorted(i for g in range(k) if g != f for i in folds[g])
        out.append((train, test))
    return out
