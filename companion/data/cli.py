"""The data command line.

    python -m companion.data list            # every dataset: version, source, size, cached?, license
    python -m companion.data fetch NAME ...  # fetch (and verify) some datasets
    python -m companion.data fetch --all     # all of them (what `make data` runs)
    python -m companion.data stats [NAME]    # parse cached datasets and print their counts
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


def cmd_stats(names: list[str]) -> int:
    """Parse cached (or fetch) datasets and print their sizes."""
    from .evalsets import load_simlex999, load_wordsim353

    table = {"brown": _stats_brown, "sotu": _stats_sotu, "moby_dick": _stats_moby,
             "wordsim353": _stats_pairs(load_wordsim353), "simlex999": _stats_pairs(load_simlex999),
             "google_analogies": _stats_analogies, "glove_6b_50d": _stats_glove_6b_50d}
    names = names or list(REGISTRY)
    _check_names(names)
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
