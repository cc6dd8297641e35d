"""The data command line.

    python -m companion.data list            # every dataset: version, source, size, cached?, license
    python -m companion.data fetch NAME ...  # fetch (and verify) some datasets
    python -m companion.data fetch --all     # all of them (what `make data` runs)
    python -m companion.data stats [NAME]    # parse cached datasets and print their counts
    python -m companion.data stats TASK      # a Part II task (mr, sst2, ...): splits, label counts
    python -m companion.data stats pretraining  # the pre-training corpus: documents, words, split
    python -m companion.data path NAME       # where a dataset is cached

Exit status: 0 ok, 1 a dataset could not be fetched, 2 a usage error (e.g. an unknown name).
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from .errors import DataUnavailableError, UnknownDatasetError
from .fetching import cache_status, data_dir, dataset_dir, ensure, fetch
from .registry import REGISTRY, get_dataset


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m companion.data",
                                description="The book's datasets: list, fetch, inspect.")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="list the registered datasets")
    ls.add_argument("--verify", action="store_true", help="re-hash cached files (slower)")
    f = sub.add_parser("fetch", help="fetch datasets into the cache")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--all", action="store_true", help="fetch every registered dataset")
    f.add_argument("--force", action="store_true", help="fetch again even if cached")
    f.add_argument("--quiet", action="store_true")
    s = sub.add_parser("stats", help="parse cached datasets and print their sizes")
    s.add_argument("names", nargs="*", metavar="NAME")
    pa = sub.add_parser("path", help="print a dataset's cache directory")
    pa.add_argument("name", metavar="NAME")
    return p


def _check_names(names: list[str]) -> None:
    for n in names:
        get_dataset(n)  # raises UnknownDatasetError with the list of known names


def cmd_list(verify: bool) -> int:
    """Print one line per dataset: name, version, first source, size, cache status, license."""
    rows = [("name", "version", "source", "MB", "status", "license")]
    for ds in REGISTRY.values():
        rows.append((ds.name, ds.version, ds.sources[0].describe(), f"{ds.size_mb:g}",
                     cache_status(ds, verify=verify), ds.license))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + "  " + r[5])
    print(f"\ncache: {data_dir()}  (set BOOK_DATA_DIR to move it)")
    return 0


def cmd_fetch(names: list[str], all_: bool, force: bool, quiet: bool) -> int:
    """Fetch the named datasets (or all); 1 if any could not be fetched, 2 for a usage error."""
    if all_ == bool(names):
        print(f"error: give dataset names or --all (not both); known datasets: {', '.join(REGISTRY)}",
              file=sys.stderr)
        return 2
    names = list(REGISTRY) if all_ else names
    _check_names(names)
    failed = []
    for n in names:
        try:
            path = fetch(n, force=True, quiet=quiet) if force else ensure(n, quiet=quiet)
            if not quiet:
                print(f"{n}: {path}")
        except DataUnavailableError as err:
            print(f"error: {err}", file=sys.stderr)
            failed.append(n)
    if failed:
        print(f"\nnot fetched: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _stats_brown() -> str:
    from .bengio import bengio_split
    from .brown import load_brown

    c = load_brown()
    split = bengio_split(corpus=c)
    genres = ", ".join(f"{k} {v}" for k, v in c.genre_counts().items())
    return (f"{len(c.files)} files, {len(c.sents()):,} sentences, {len(c):,} tokens; files per genre: "
            f"{genres}; Bengio split {split.sizes()}, |vocab| {len(split.vocab):,} "
            f"({split.n_types:,} words + <unk> + </s>)")


def _stats_sotu() -> str:
    from .corpora import load_sotu

    c = load_sotu()
    n_sent = sum(len(d.sentences) for d in c)
    return (f"{len(c)} addresses ({c[0].year}-{c[-1].year}), {n_sent:,} sentences, "
            f"{len(c.words()):,} tokens (tokenize), {sum(len(d.text.split()) for d in c):,} "
            f"whitespace tokens")


def _stats_moby() -> str:
    from .corpora import load_moby_dick

    m = load_moby_dick()
    return (f"{len(m.chapters)} chapters, {len(m.paragraphs()):,} paragraphs, "
            f"{len(m.sentences()):,} sentences, {len(m.words()):,} tokens (tokenize), "
            f"{len(m.text.split()):,} whitespace tokens")


def _stats_pairs(loader: Callable) -> Callable[[], str]:
    def f() -> str:
        pairs = loader()
        return f"{len(pairs)} pairs, scores {min(p[2] for p in pairs)}-{max(p[2] for p in pairs)}"
    return f


def _stats_analogies() -> str:
    from .evalsets import load_google_analogies

    qs = load_google_analogies()
    sections: dict[str, int] = {}
    for q in qs:
        sections[q[0]] = sections.get(q[0], 0) + 1
    return f"{len(qs):,} questions in {len(sections)} sections: " + ", ".join(f"{k} {v}" for k, v in sections.items())


def _stats_glove_6b_50d() -> str:
    from .pretrained import load_glove_6b_50d

    vectors, words = load_glove_6b_50d()
    return (f"{len(words):,} words x {vectors.shape[1]} dimensions ({vectors.dtype}); "
            f"most frequent: {' '.join(words[:8])}")


def _stats_task(name: str) -> str:
    from .tasks import load_task

    t = load_task(name)
    sizes = ", ".join(f"{k} {v:,}" for k, v in t.sizes().items())
    if t.label_names is None:
        labels = "real-valued labels " + ", ".join(
            f"{k} {min(e.label for e in v):g}-{max(e.label for e in v):g}" for k, v in t.splits.items())
    else:
        labels = "; ".join(f"{k}: " + " / ".join(f"{n} {c:,}" for n, c in cs.items())
                           for k, cs in t.label_counts().items())
    folds = f", {t.cv_folds}-fold CV" if t.cv_folds else ""
    return f"{t.kind}, {t.metric}{folds}; {sizes}; {labels}"


def _stats_tasks_of(dataset: str) -> Callable[[], str]:
    def f() -> str:
        from .tasks import _TASKS

        return "\n  ".join(f"task {n}: {_stats_task(n)}" for n, (_, ds) in _TASKS.items() if ds == dataset)
    return f


def _stats_tagging(name: str) -> Callable[[], str]:
    def f() -> str:
        from .tasks import load_tagging

        data = load_tagging(name)
        tags = {t for v in data.values() for s in v for t in s.tags}
        return (f"{name}: " + ", ".join(f"{k} {len(v):,} sentences / {sum(len(s.tokens) for s in v):,} tokens"
                                        for k, v in data.items()) + f"; {len(tags)} distinct tags")
    return f


def _stats_documents(loader_name: str) -> Callable[[], str]:
    def f() -> str:
        from . import lm_corpora

        docs = [d[1] if isinstance(d, tuple) else d for d in getattr(lm_corpora, loader_name)()]
        n_sents = sum(len(d.sentences) for d in docs)
        words = sum(len(s.split()) for d in docs for s in d.sentences)
        return f"{len(docs):,} documents, {n_sents:,} sentences, {words:,} whitespace words"
    return f


def _stats_ptb_lm() -> str:
    from .lm_corpora import load_ptb_lm

    d = load_ptb_lm()
    return (", ".join(f"{k} {len(v):,} sentences / {sum(map(len, v)):,} tokens" for k, v in d.items())
            + f"; {len({w for s in d['train'] for w in s}):,} types in train")


def _stats_tiny() -> str:
    from .lm_corpora import load_tiny_shakespeare

    t = load_tiny_shakespeare()
    return f"{len(t):,} characters, {len(set(t))} distinct, {len(t.split()):,} whitespace words"


def _stats_multi30k() -> str:
    from .parallel import load_multi30k

    return "en/de/fr aligned captions: " + ", ".join(f"{k} {len(v):,}" for k, v in load_multi30k().items())


def _stats_tatoeba() -> str:
    from .parallel import load_tatoeba_cmn_eng

    return f"{len(load_tatoeba_cmn_eng()):,} English-Mandarin pairs"


def _stats_ptb_sample() -> str:
    from .treebank import load_ptb_trees

    trees = load_ptb_trees()
    return (f"{len({t.fileid for t in trees})} files, {len(trees):,} parsed sentences, "
            f"{sum(len(t.tagged(traces=True)[0]) for t in trees):,} tokens with traces, "
            f"{sum(len(t.tagged()[0]) for t in trees):,} without; " + _stats_tagging("ptb_pos")())


def _stats_pretrained_files(name: str) -> Callable[[], str]:
    def f() -> str:
        import json

        from .pretrained import bert_vocab_file, gpt2_bpe_files, minilm_dir

        if name == "gpt2_bpe":
            enc, bpe = gpt2_bpe_files()
            merges = [x for x in bpe.read_text(encoding="utf-8").splitlines()[1:] if x.strip()]
            return f"{len(json.loads(enc.read_text(encoding='utf-8'))):,} tokens, {len(merges):,} merges"
        if name == "bert_vocab":
            return f"{len(bert_vocab_file().read_text(encoding='utf-8').splitlines()):,} WordPiece entries"
        cfg = json.loads((minilm_dir() / "config.json").read_text())
        return (f"{cfg['model_type']}: {cfg['num_hidden_layers']} layers, hidden {cfg['hidden_size']}, "
                f"{cfg['num_attention_heads']} heads, vocabulary {cfg['vocab_size']:,}")
    return f


def _stats_pretraining() -> str:
    from .lm_corpora import HELDOUT_PERCENT, pretraining_documents

    lines = []
    for split in ("train", "heldout"):
        docs = pretraining_documents(split)
        by: dict[str, list[int]] = {}
        for d in docs:
            row = by.setdefault(d.source, [0, 0, 0])
            row[0] += 1
            row[1] += len(d.sentences)
            row[2] += sum(len(s.split()) for s in d.sentences)
        total = [sum(r[i] for r in by.values()) for i in range(3)]
        lines.append(f"{split}: {total[0]:,} documents, {total[1]:,} sentences, {total[2]:,} whitespace "
                     f"words (" + ", ".join(f"{k} {v[2]:,}" for k, v in by.items()) + ")")
    return f"held out: {HELDOUT_PERCENT} % of documents by hash\n  " + "\n  ".join(lines)


def _stats_table() -> dict[str, Callable[[], str]]:
    from .evalsets import load_simlex999, load_wordsim353
    from .tasks import _TASKS

    table = {"brown": _stats_brown, "sotu": _stats_sotu, "moby_dick": _stats_moby,
             "wordsim353": _stats_pairs(load_wordsim353), "simlex999": _stats_pairs(load_simlex999),
             "google_analogies": _stats_analogies, "glove_6b_50d": _stats_glove_6b_50d,
             "enwiki_sample": _stats_documents("load_enwiki_sample"),
             "shakespeare": _stats_documents("load_shakespeare"), "bbc_news": _stats_documents("load_bbc_news"),
             "abc_news": _stats_documents("load_abc"), "webtext": _stats_documents("load_webtext"),
             "ptb_lm": _stats_ptb_lm, "tiny_shakespeare": _stats_tiny, "multi30k": _stats_multi30k,
             "tatoeba_cmn_eng": _stats_tatoeba, "ptb_sample": _stats_ptb_sample,
             "conll2000": _stats_tagging("conll2000_chunk"), "conll2003": _stats_tagging("conll2003_ner"),
             "pretraining": _stats_pretraining}
    for n in ("gpt2_bpe", "bert_vocab", "minilm_l6_v2"):
        table[n] = _stats_pretrained_files(n)
    for _, ds in _TASKS.values():
        table.setdefault(ds, _stats_tasks_of(ds))
    for task in _TASKS:
        table.setdefault(task, (lambda t: lambda: _stats_task(t))(task))
    for tagging in ("brown_pos", "ptb_pos", "conll2000_chunk", "conll2003_ner"):
        table.setdefault(tagging, _stats_tagging(tagging))
    return table


def cmd_stats(names: list[str]) -> int:
    """Parse cached (or fetch) datasets -- or tasks, tagging sets, ``pretraining`` -- and print
    their sizes."""
    table = _stats_table()
    names = names or [*REGISTRY, "pretraining"]
    _check_names([n for n in names if n not in table])
    for n in names:
        print(f"{n}: {table[n]()}" if n in table else f"{n}: (no statistics)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "list":
            return cmd_list(args.verify)
        if args.command == "fetch":
            return cmd_fetch(args.names, args.all, args.force, args.quiet)
        if args.command == "stats":
            return cmd_stats(args.names)
        if args.command == "path":
            print(dataset_dir(args.name))
            return 0
    except UnknownDatasetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except DataUnavailableError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 2
