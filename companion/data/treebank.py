"""The Penn Treebank's 10 % WSJ sample (NLTK's ``treebank``): bracketed parses with POS tags.

A small reader of the bracket notation, enough for chapter 11's structural probe: each sentence
as a :class:`Tree` (label, children; a leaf is a ``(TAG word)`` pair), its tokens and tags with
or without the ``-NONE-`` trace tokens, and its constituent spans over the kept tokens.

Measured on ``treebank.zip`` (nltk_data at commit 5db857e6f7df): 199 files ``wsj_0001.mrg`` ..
``wsj_0199.mrg``, 3,914 sentences, 100,676 tokens with traces (94,084 without).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._io import read_text
from .errors import DataFormatError

_TOKEN = re.compile(r"\(([^\s()]+)\s+([^\s()]+)\)|(\(|\)|[^\s()]+)")


class Tree:
    """A constituent: a label and children (sub-trees), or a leaf with a ``word``.

    Attributes:
        label: ``S``, ``NP-SBJ``, ... for phrases; the POS tag (``NNP``, ``-NONE-``) for a leaf.
        children: the sub-trees (empty for a leaf).
        word: the token of a leaf, else ``None``.
        fileid: the file the sentence came from (set on the root), e.g. ``"wsj_0001.mrg"``.
    """

    __slots__ = ("children", "fileid", "label", "word")

    def __init__(self, label: str, children: list[Tree] | None = None, word: str | None = None,
                 fileid: str = ""):
        self.label = label
        self.children = [] if children is None else children
        self.word = word
        self.fileid = fileid

    def __repr__(self) -> str:
        if self.word is not None:
            return f"({self.label} {self.word})"
        return f"({self.label} {' '.join(map(repr, self.children))})"

    def leaves(self) -> list[Tree]:
        """The leaves, left to right."""
        if self.word is not None:
            return [self]
        return [leaf for c in self.children for leaf in c.leaves()]

    def tagged(self, traces: bool = False) -> tuple[list[str], list[str]]:
        """``(words, tags)``; without ``traces`` the ``-NONE-`` leaves (``*``, ``*T*-1``, ``0``) are
        dropped, as taggers and probes usually do."""
        keep = [lf for lf in self.leaves() if traces or lf.label != "-NONE-"]
        return [lf.word for lf in keep], [lf.label for lf in keep]

    def spans(self, traces: bool = False) -> list[tuple[str, int, int]]:
        """Constituent spans ``(label, start, end)`` (``end`` exclusive) over the tokens that
        :meth:`tagged` keeps, outermost first; phrases covering no kept token are dropped, and
        the bare root bracket of the file (label ``""``) is not a span."""
        out: list[tuple[str, int, int]] = []

        def walk(t: Tree, start: int) -> int:
            if t.word is not None:
                return start + (1 if traces or t.label != "-NONE-" else 0)
            pos = len(out)
            end = start
            for c in t.children:
                end = walk(c, end)
            if end > start and t.label:
                out.insert(pos, (t.label, start, end))
            return end

        walk(self, 0)
        return out

    def depths(self, traces: bool = False) -> list[int]:
        """Each kept token's depth in the tree (the root's children are at depth 1): the
        quantity the structural probe of chapter 11 predicts (with distances between tokens)."""
        out: list[int] = []

        def walk(t: Tree, d: int) -> None:
            if t.word is not None:
                if traces or t.label != "-NONE-":
                    out.append(d)
                return
            for c in t.children:
                walk(c, d + 1)

        walk(self, 0)
        return out


def parse_brackets(text: str, source: str = "<string>") -> list[Tree]:
    """Every top-level bracketed tree in ``text`` (``( (S (NP (DT The) ...) ) )``).

    Raises:
        DataFormatError: naming ``source`` and the line, for unbalanced brackets or a leaf
            without a word.
    """
    trees: list[Tree] = []
    stack: list[Tree] = []

    def fail(at: int, what: str) -> DataFormatError:
        line = text.count("\n", 0, at) + 1
        return DataFormatError(f"{source}, line {line}: {what}", source, line)

    # One regex match per leaf "(TAG word)", per bracket, or per stray word: a leaf is the
    # common case, so matching it whole keeps the Python loop short.
    for m in _TOKEN.finditer(text):
        tag, word, tok = m.group(1, 2, 3)
        if tag is not None:
            if not stack:
                raise fail(m.start(), f"a leaf ({tag} {word}) outside any bracket")
            leaf = Tree(tag, [], word)
            stack[-1].children.append(leaf)
        elif tok == "(":
            node = Tree("", [])
            if stack:
                stack[-1].children.append(node)
            stack.append(node)
        elif tok == ")":
            if not stack:
                raise fail(m.start(), "')' without a matching '('")
            node = stack.pop()
            if not stack:
                trees.append(node)
        else:
            if not stack:
                raise fail(m.start(), f"{tok!r} outside any bracket")
            node = stack[-1]
            if node.children or node.label:
                raise fail(m.start(), f"unexpected {tok!r} in ({node.label or '?'} ...): a word must "
                                      f"follow its tag directly, as in (NN board)")
            node.label = tok
    if stack:
        raise fail(len(text), f"{len(stack)} bracket(s) left open at the end of the file")
    return trees


def load_ptb_trees(root: str | os.PathLike | None = None) -> list[Tree]:
    """The sample's parsed sentences in file order (``combined/wsj_*.mrg``), each a :class:`Tree`
    whose ``fileid`` names its file; each file's outer bracket (no label) is unwrapped.

    Args:
        root: a directory holding ``combined/wsj_*.mrg``; by default the verified cache.
    """
    if root is None:
        from .fetching import ensure

        root = ensure("ptb_sample")
    paths = sorted(Path(root).glob("combined/wsj_*.mrg"))
    if not paths:
        raise FileNotFoundError(f"no combined/wsj_*.mrg files in {root}; call load_ptb_trees() without "
                                f"arguments to use the fetched copy")
    out = []
    for p in paths:
        for t in parse_brackets(read_text(p), str(p)):
            if not t.label and len(t.children) == 1:
                t = t.children[0]
            t.fileid = p.name
            out.append(t)
    return out
