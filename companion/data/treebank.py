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
        children: the sub-trees (a list; an empty tuple for a leaf).
        word: the token of a leaf, else ``None``.
        fileid: the file the sentence came from (set on the root), e.g. ``"wsj_0001.mrg"``.
    """

    __slots__ = ("children", "fileid", "label", "word")

    def __init__(self, label: str, children: list[Tree] | tuple | None = None, word: str | None = None,
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
        DataFormatError: naming ``source`` and the line, for unbalanced brackets or a word in
            the wrong place.

    Example:
        >>> (t,) = parse_brackets("( (S (NP (DT The) (NN cat)) (VP (VBZ sleeps) (NP (-NONE- *)))) )")
        >>> s = t.children[0]
        >>> s.tagged()
        (['The', 'cat', 'sleeps'], ['DT', 'NN', 'VBZ'])
        >>> s.spans()
        [('S', 0, 3), ('NP', 0, 2), ('VP', 2, 3)]
        >>> s.depths()
        [2, 2, 2]
    """
    trees: list[Tree] = []
    stack: list[Tree] = []
    # The fast path: findall (no match objects), one item per leaf "(TAG word)", bracket or
    # label, and no position bookkeeping. Anything malformed is re-scanned by _locate_error,
    # which finds the line and raises.
    try:
        for tag, word, tok in _TOKEN.findall(text):
            if tag:
                stack[-1].children.append(Tree(tag, _NO_CHILDREN, word))
            elif tok == "(":
                node = Tree("", [])
                if stack:
                    stack[-1].children.append(node)
                stack.append(node)
            elif tok == ")":
                node = stack.pop()
                if not stack:
                    trees.append(node)
            else:
                node = stack[-1]
                if node.children or node.label:
                    raise ValueError(tok)
                node.label = tok
    except (IndexError, ValueError):
        _locate_error(text, source)
    if stack:
        line = text.count("\n") + 1
        raise DataFormatError(f"{source}, line {line}: {len(stack)} bracket(s) left open at the end of "
                              f"the file", source, line)
    return trees


_NO_CHILDREN: tuple = ()  # every leaf shares it (immutable: a leaf has a word, never children)


def _locate_error(text: str, source: str) -> None:
    """Re-scan ``text`` with positions and raise the :class:`DataFormatError` of its first fault."""
    depth = 0
    labelled: list[bool] = []  # per open bracket: has it a label or children yet?
    for m in _TOKEN.finditer(text):
        tag, tok = m.group(1), m.group(3)
        line = text.count("\n", 0, m.start()) + 1
        if tag is not None or tok == "(":
            if not labelled and tag is not None:
                raise DataFormatError(f"{source}, line {line}: a leaf {m.group()} outside any bracket",
                                      source, line)
            if labelled:
                labelled[-1] = True
            if tok == "(":
                labelled.append(False)
        elif tok == ")":
            if not labelled:
                raise DataFormatError(f"{source}, line {line}: ')' without a matching '('", source, line)
            labelled.pop()
        else:
            if not labelled:
                raise DataFormatError(f"{source}, line {line}: {tok!r} outside any bracket", source, line)
            if labelled[-1]:
                raise DataFormatError(f"{source}, line {line}: unexpected {tok!r}: a word must follow its "
                                      f"tag directly, as in (NN board)", source, line)
            labelled[-1] = True
        depth = len(labelled)
    raise DataFormatError(f"{source}: malformed brackets (depth {depth} at the end)", source)


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
