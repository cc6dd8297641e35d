"""IMDb: the Large Movie Review Dataset v1.0 (Maas et al. 2011), ULMFiT's and paragraph vectors' benchmark.

25,000 training and 25,000 test reviews labelled negative (rating <= 4) or positive (>= 7), and
50,000 unlabelled reviews of any rating: about 24M words of in-domain text.

The original is a tarball of 100,000 small files (the canonical URL below). The book reads it as
three JSON-lines files, one review a line, ``{"id", "rating", "label", "text"}`` (``label`` 1
positive, 0 negative, ``null`` unlabelled; the file's exact text with its ``<br />`` tags; every
non-ASCII character JSON-escaped), sorted by label then id, gzipped with mtime 0. The local
mirror (``$BOOK_DATA_MIRROR/imdb/``) holds them; a reader without it downloads the tarball and
runs ``python -m companion.data.imdb from-tarball aclImdb_v1.tar.gz``, which converts it by the
same rule. Either way :func:`imdb_dir` checks the sha256 of the *uncompressed* JSON lines, so
both routes are verified against the same bytes.

* :func:`load_imdb` -- one split as :class:`Review` records;
* ``load_task("imdb")`` (:mod:`companion.data.tasks`) -- the labelled splits as a task;
* :func:`clean_review` -- ``<br />`` tags to spaces, whitespace folded (what the models read).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

CANONICAL_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
SPLITS: tuple[str, ...] = ("train", "test", "unsup")
# split -> (reviews, sha256 of the gzipped file, sha256 of its uncompressed JSON lines)
FILES: dict[str, tuple[int, str, str]] = {
    "train": (25_000, "7c11efdd3bec765d533b6c0bc7ffc13893a080cff89335f208e89d362d5e9764",
              "646f4216805f4ca20d8c37b5f4f89a41c227de7118727fc57747c7195ebdc7b2"),
    "test": (25_000, "c32530efdcb775d11491900d1fab864cf5326b9f21e0a502e87237df1c8aeeb7",
             "77a8f31b5fff04f9e6e70c5b00e6fa67185925177e39586597794707a0cd77cd"),
    "unsup": (50_000, "ba81cfa84e665a7459a00b1995efad6919366dbf56242428c7304b679a55215c",
              "e2681ae8311bd9ccd6a1303e6df12c75ee648e47717e9ec76665ce6bd74711fd"),
}
LABEL_NAMES = ("negative", "positive")
LICENSE = "Large Movie Review Dataset (Maas et al. 2011); research use, cite the paper"
_VERIFIED: set[Path] = set()


@dataclass(frozen=True)
class Review:
    """One review: its id within its split's folder, its star rating (0 for unlabelled reviews),
    its label (1 positive, 0 negative, ``None`` unlabelled) and its raw text."""

    id: int
    rating: int
    label: int | None
    text: str


def clean_review(text: str) -> str:
    """The text a model reads: ``<br />`` line breaks as spaces, runs of white space folded."""
    return " ".join(re.sub(r"<br\s*/?>", " ", text).split())


def _jsonl_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with gzip.open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _converted_dir() -> Path:
    from .fetching import data_dir

    return data_dir() / "imdb-v1"


def imdb_dir(root: str | os.PathLike | None = None) -> Path:
    """The folder holding the three verified ``.jsonl.gz`` files: ``root`` if given, else the
    local mirror's ``imdb/``, else the converted copy in the data cache.

    Raises:
        FileNotFoundError: when no copy exists (the message says how to make one).
        ValueError: when a file's uncompressed sha256 is not the published one.
    """
    if root is not None:
        return Path(root)
    from .fetching import mirror_dir

    candidates = [m / "imdb" for m in [mirror_dir()] if m is not None] + [_converted_dir()]
    for folder in candidates:
        if all((folder / f"{s}.jsonl.gz").is_file() for s in SPLITS):
            for split in SPLITS:
                path = folder / f"{split}.jsonl.gz"
                if path in _VERIFIED:
                    continue
                got = _jsonl_sha256(path)
                if got != FILES[split][2]:
                    raise ValueError(f"{path}: the uncompressed JSON lines have sha256 {got}, expected "
                                     f"{FILES[split][2]}; delete the file and convert the tarball again")
                _VERIFIED.add(path)
            return folder
    raise FileNotFoundError(
        f"IMDb is not here: looked in {', '.join(map(str, candidates))}. Download {CANONICAL_URL} "
        f"and run `python -m companion.data.imdb from-tarball aclImdb_v1.tar.gz`")


def load_imdb(split: str, root: str | os.PathLike | None = None) -> list[Review]:
    """The reviews of one split (``"train"``, ``"test"`` or ``"unsup"``), in file order (by label,
    then id). ``root``: a folder of ``<split>.jsonl.gz`` files (tests use tiny ones)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    path = imdb_dir(root) / f"{split}.jsonl.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    out = []
    with gzip.open(path, "rt", encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
                out.append(Review(int(r["id"]), int(r["rating"]), r["label"], str(r["text"])))
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(f"{path}, line {n}: not an IMDb review record ({err})") from err
    return out


def record_line(rid: int, rating: int, label: int | None, text: str) -> str:
    """One review as a JSON line, by the packing rule (ASCII, keys in this order)."""
    return json.dumps({"id": rid, "rating": rating, "label": label, "text": text}, ensure_ascii=True) + "\n"


def convert_tarball(tarball: str | os.PathLike, out: str | os.PathLike | None = None, *,
                    verify: bool = True) -> Path:
    """Convert the original ``aclImdb_v1.tar.gz`` into the three JSON-lines files (written to
    ``out``, default the data cache) and check their uncompressed sha256 against :data:`FILES`
    (``verify=False`` skips that: tests convert tiny tarballs). Nothing is written unless every
    split converts (and verifies)."""
    members: dict[str, list[tuple[int, int, int | None, str, int]]] = {s: [] for s in SPLITS}
    pat = re.compile(r"aclImdb/(train|test)/(pos|neg|unsup)/(\d+)_(\d+)\.txt$")
    with tarfile.open(tarball, "r:gz") as tar:
        for m in tar:
            hit = pat.match(m.name)
            if not hit or not m.isfile():
                continue
            split, kind, rid, rating = hit.groups()
            split = "unsup" if kind == "unsup" else split
            label = None if kind == "unsup" else int(kind == "pos")
            text = tar.extractfile(m).read().decode("utf-8")
            members[split].append((0 if label is None else label, int(rid), label, text, int(rating)))
    if not any(members.values()):
        raise ValueError(f"{tarball} holds no aclImdb/<split>/<pos|neg|unsup>/<id>_<rating>.txt review files")
    data = {}
    for split, rows in members.items():
        rows.sort(key=lambda r: (r[0], r[1]))
        data[split] = "".join(record_line(rid, rating, label, text) for _, rid, label, text, rating in rows).encode()
        got = hashlib.sha256(data[split]).hexdigest()
        if verify and got != FILES[split][2]:
            raise ValueError(f"{tarball}: the {split} split converts to sha256 {got}, expected {FILES[split][2]}")
    folder = Path(out) if out is not None else _converted_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        tmp = folder / f".{split}.jsonl.gz.tmp"
        tmp.write_bytes(gzip.compress(data[split], mtime=0))
        os.replace(tmp, folder / f"{split}.jsonl.gz")
    return folder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m companion.data.imdb", description="IMDb's JSON-lines files")
    sub = ap.add_subparsers(dest="cmd", required=True)
    conv = sub.add_parser("from-tarball", help="convert the original tarball and verify it")
    conv.add_argument("tarball")
    conv.add_argument("--out", default=None)
    sub.add_parser("verify", help="check the files the book would read")
    args = ap.parse_args(argv)
    folder = convert_tarball(args.tarball, args.out) if args.cmd == "from-tarball" else imdb_dir()
    print(f"IMDb verified in {folder}")


if __name__ == "__main__":
    main()
