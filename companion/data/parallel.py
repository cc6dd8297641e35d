"""Parallel text: Multi30k (English / German / French image captions) and Tatoeba Mandarin-English.

Both return plain tuples of strings, aligned by position; nothing is tokenized here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._io import bad_line, read_lines

MULTI30K_LANGS = ("en", "de", "fr")
MULTI30K_SPLITS = {"train": "train", "dev": "val", "test": "test_2016_flickr"}


def load_multi30k(src: str = "en", tgt: str = "de", root: str | os.PathLike | None = None
                  ) -> dict[str, list[tuple[str, str]]]:
    """Multi30k task 1 (Elliott et al. 2016): ``{"train", "dev", "test"}`` lists of
    ``(source, target)`` caption pairs, as in the files (true case, untokenized).

    Sizes: 29,000 train, 1,014 dev (``val``), 1,000 test (``test_2016_flickr``); the three
    languages are aligned line by line.

    Args:
        src, tgt: two of ``"en"``, ``"de"``, ``"fr"``.
        root: a directory holding ``{train,val,test_2016_flickr}.{en,de,fr}.gz``; by default
            the verified cache.

    Raises:
        ValueError: for an unknown language, or files of one split with different line counts
            (the message names both files).
    """
    for lang in (src, tgt):
        if lang not in MULTI30K_LANGS:
            raise ValueError(f"Multi30k has languages {MULTI30K_LANGS}, not {lang!r}")
    if src == tgt:
        raise ValueError(f"source and target are both {src!r}")
    if root is None:
        from .fetching import ensure

        root = ensure("multi30k")
    out = {}
    for split, stem in MULTI30K_SPLITS.items():
        a, b = Path(root) / f"{stem}.{src}.gz", Path(root) / f"{stem}.{tgt}.gz"
        for p in (a, b):
            if not p.is_file():
                raise FileNotFoundError(f"{p} does not exist; call load_multi30k() without root= to use "
                                        f"the fetched copy")
        la, lb = read_lines(a), read_lines(b)
        if len(la) != len(lb):
            raise ValueError(f"{a} has {len(la):,} lines but {b} has {len(lb):,}: the files are not aligned")
        out[split] = [(x.strip(), y.strip()) for x, y in zip(la, lb)]
    return out


def load_tatoeba_cmn_eng(root: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """Tatoeba's Mandarin-English pairs (``cmn.txt``, the manythings.org layout): a list of
    ``(english, mandarin)``, in the file's order (short sentences first). 19,577 pairs measured.

    Raises:
        DataFormatError: naming the file and line, for a line without two tab-separated fields.
    """
    if root is None:
        from .fetching import ensure

        root = ensure("tatoeba_cmn_eng")
    path = Path(root) / "cmn.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; call load_tatoeba_cmn_eng() without root=")
    out = []
    for i, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise bad_line(path, i, "expected 'English<TAB>Mandarin[<TAB>attribution]'")
        out.append((fields[0].strip(), fields[1].strip()))
    return out
