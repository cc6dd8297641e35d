"""The chapter's "try it" widget: nearest neighbours and analogies over trained word vectors.

Type a word (``whale``) to see its nearest neighbours, or an expression of words joined by ``+``
and ``-`` (``king - man + woman``) to see which words lie closest to that point. The expression
``b - a + c`` is the analogy "a is to b as c is to ?" and is scored with 3CosAdd or 3CosMul
(Levy & Goldberg 2014), exactly as :func:`companion.evaluate.analogy` scores the benchmark;
other sums of unit vectors are scored by cosine (3CosAdd's rule). The words of the query are never
answers.

The callback is a plain function (:func:`explore`), tested without a browser;
:func:`explorer_widget` only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..evaluate import METHODS, analogy_scores, as_matrix, unit_rows
from ..evaluate._vectors import word_rows

__all__ = ["Query", "Exploration", "parse_query", "explore", "explorer_widget", "ExplorerWidget"]

@dataclass(frozen=True)
class Query:
    """A parsed query: the words with a positive sign and those with a negative sign, in order."""

    positive: tuple[str, ...]
    negative: tuple[str, ...]

    @property
    def kind(self) -> str:
        """``"neighbours"`` (one word), ``"analogy"`` (``b - a + c``) or ``"sum"`` (anything else)."""
        if len(self.positive) == 1 and not self.negative:
            return "neighbours"
        if len(self.positive) == 2 and len(self.negative) == 1:
            return "analogy"
        return "sum"

    @property
    def words(self) -> tuple[str, ...]:
        return self.positive + self.negative

    @property
    def expression(self) -> str:
        """The query written out, e.g. ``"king - man + woman"``."""
        first, *rest = self.positive
        return " ".join([first] + [f"- {w}" for w in self.negative] + [f"+ {w}" for w in rest])


def parse_query(text: str) -> Query:
    """Parse ``"whale"`` or ``"king - man + woman"`` into a :class:`Query` (words lower-cased).

    ``+`` is always an operator. ``-`` is an operator at the start of the query or of a word
    that follows a space or ``+`` (``king - man``, ``king -man``); inside a word it is part of
    the word, because the corpus has hyphenated words (``well-known``). A first word without a
    sign is positive.

    Raises:
        TypeError: if ``text`` is not a string.
        ValueError: for an empty query, a sign without a word, or only negative words.

    Example:
        >>> parse_query("King - man + woman")
        Query(positive=('king', 'woman'), negative=('man',))
    """
    if not isinstance(text, str):
        raise TypeError(f"the query must be a string such as 'king - man + woman', got {type(text).__name__}")
    parts = text.replace("+", " + ").split()
    if not parts:
        raise ValueError("type a word (e.g. 'whale') or an expression (e.g. 'king - man + woman')")
    pos: list[str] = []
    neg: list[str] = []
    sign: str | None = None
    for part in parts:
        if part in ("+", "-"):
            if sign is not None:
                raise ValueError(f"two signs in a row in {text!r}; write words joined by + and -")
            sign = part
            continue
        if part.startswith("-"):
            if sign is not None:
                raise ValueError(f"two signs in a row in {text!r}; write words joined by + and -")
            sign, part = "-", part.lstrip("-")
            if not part:
                raise ValueError(f"a sign without a word in {text!r}")
        (neg if sign == "-" else pos).append(part.lower())
        sign = None
    if sign is not None:
        raise ValueError(f"the query {text!r} ends with a sign; add a word after it")
    if not pos:
        raise ValueError(f"the query {text!r} has no positive word; e.g. 'king - man + woman'")
    return Query(tuple(pos), tuple(neg))


@dataclass
class Exploration:
    """What :func:`explore` found.

    Attributes:
        query: the parsed query (``None`` if the text could not be parsed).
        results: ``(word, score)`` pairs, best first (empty on an error).
        method: how the candidates were scored (``"cosine"``, ``"3cosadd"`` or ``"3cosmul"``).
        error: a message for the reader when nothing could be computed, else ``None``.
    """

    query: Query | None
    results: list[tuple[str, float]] = field(default_factory=list)
    method: str = "cosine"
    error: str | None = None

    @property
    def words(self) -> list[str]:
        return [w for w, _ in self.results]




def explore(vectors: Any, index: Any, text: str, *, k: int = 8, method: str = "3cosadd",
            restrict_vocab: int | None = None) -> Exploration:
    """The widget's callback: the ``k`` best answers to a neighbour or analogy query.

    Args:
        vectors: ``[V, d]`` tensor or array; index: dict word -> row (or a vocabulary with ``.stoi``).
        text: ``"whale"``, ``"king - man + woman"``, ...
        k: how many answers.
        method: ``"3cosadd"`` or ``"3cosmul"`` for the three-word analogy (other queries use cosine).
        restrict_vocab: answers come from the first rows only (the most frequent words).

    Returns:
        An :class:`Exploration`; a query the vectors cannot answer (unknown word, parse error)
        gives an ``error`` message rather than an exception, so the widget keeps working.

    Raises:
        ValueError / TypeError: for bad ``k``, ``method``, ``restrict_vocab``, vectors or index
            (programming errors, not reader input).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if restrict_vocab is not None and (isinstance(restrict_vocab, bool) or not isinstance(restrict_vocab, int)
                                       or restrict_vocab < 1):
        raise ValueError(f"restrict_vocab must be a positive int or None, got {restrict_vocab!r}")
    stoi = word_rows(index)
    mat = as_matrix(vectors)
    try:
        query = parse_query(text)
    except ValueError as err:
        return Exploration(None, error=str(err))
    missing = [w for w in query.words if w not in stoi or stoi[w] >= mat.shape[0]]
    if missing:
        return Exploration(query, error=f"not in the vocabulary: {', '.join(missing)}")
    n = mat.shape[0] if restrict_vocab is None else min(restrict_vocab, mat.shape[0])
    unit = unit_rows(mat)
    rows = {w: stoi[w] for w in query.words}
    if query.kind == "analogy" and method == "3cosmul":
        (b, c), (a,) = query.positive, query.negative
        scores = analogy_scores(unit, *(torch.tensor([rows[w]]) for w in (a, b, c)), method, 1e-3)[0]
        used = method
    else:
        target = sum(unit[rows[w]] for w in query.positive) - sum((unit[rows[w]] for w in query.negative),
                                                                  torch.zeros_like(unit[0]))
        scores = unit @ target  # the sum of cosines, 3CosAdd's rule (= cosine for one word)
        used = "3cosadd" if query.kind == "analogy" else "cosine"
    words_of = {r: w for w, r in stoi.items() if r < n}
    scores = scores[:n].clone()
    for r in rows.values():
        if r < n:
            scores[r] = float("-inf")
    allowed = torch.zeros(n, dtype=torch.bool)
    allowed[list(words_of)] = True  # rows without a word are never answers
    scores[~allowed] = float("-inf")
    k_eff = min(k, int(torch.isfinite(scores).sum()))
    order = torch.sort(scores, descending=True, stable=True).indices[:k_eff].tolist()
    return Exploration(query, [(words_of[r], float(scores[r])) for r in order], used)


def _render(res: Exploration, setting: str = "") -> str:
    """The output as HTML; ``setting`` names the vector set and k, so that every change of a
    control changes the text (an unchanged text is not re-sent to the page, which then looks
    frozen: after an unknown word, changing k showed nothing new)."""
    where = f" ({html.escape(setting)})" if setting else ""
    if res.error:
        return f"<p><b>Cannot answer</b>{where}: {html.escape(res.error)}</p>"
    assert res.query is not None
    what = {"neighbours": "nearest neighbours of", "analogy": "analogy", "sum": "closest to"}[res.query.kind]
    head = f"<p>{what} <code>{html.escape(res.query.expression)}</code> (scored by {res.method}){where}</p>"
    rows = "".join(f"<tr><td>{i}</td><td>{html.escape(w)}</td><td>{s:.3f}</td></tr>"
                   for i, (w, s) in enumerate(res.results, start=1))
    return head + f"<table><tr><th>#</th><th>word</th><th>score</th></tr>{rows}</table>"


@dataclass
class ExplorerWidget:
    """The controls, the output and the box that shows them (display the object itself)."""

    spaces: Mapping[str, tuple[Any, Any]]
    space: Any
    query: Any
    method: Any
    k: Any
    output: Any
    box: Any
    last: Exploration | None = None
    calls: int = 0

    def update(self, *_: object) -> None:
        """Answer the current query (the callback of every control).

        Never raises: an exception in a widget callback only reaches the browser's console, and
        the reader would see a widget that stopped answering. It is shown in the output instead.
        """
        self.calls += 1
        name, k = self.space.value, int(self.k.value)
        setting = f"{name}, k = {k}"
        try:
            vectors, index = self.spaces[name]
            self.last = explore(vectors, index, self.query.value, k=k, method=self.method.value)
            if self.last.error and self.last.query is not None and len(self.spaces) > 1:
                self.last.error += self._elsewhere(self.last.query)
        except Exception as err:  # noqa: BLE001 - shown to the reader rather than lost
            self.last = Exploration(None, error=f"{type(err).__name__}: {err}")
        self.output.value = _render(self.last, setting)

    def _elsewhere(self, query: Query) -> str:
        """Which other vector sets know every word of the query (a hint for the reader)."""
        found = []
        for name, (vectors, index) in self.spaces.items():
            if name == self.space.value:
                continue
            stoi, n = word_rows(index), as_matrix(vectors).shape[0]
            if all(w in stoi and stoi[w] < n for w in query.words):
                found.append(name)
        if found:
            return f". These vector sets know it: {', '.join(found)}"
        return ". No vector set here knows it: try another word"

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def explorer_widget(spaces: Mapping[str, tuple[Any, Any]], *, query: str = "king - man + woman",
                    space: str | None = None, k: int = 8, method: str = "3cosadd") -> ExplorerWidget:
    """A text box for the query, a choice of vector set, method and ``k``; updates on every change.

    Args:
        spaces: ``{name: (vectors, index)}``, e.g. ``{"skip-gram + NEG": (res.vectors(), res.index)}``.
        query, space, k, method: the initial values (``space`` defaults to the first name).
    """
    import ipywidgets as w

    if not isinstance(spaces, Mapping) or not spaces:
        raise ValueError("spaces must be a non-empty dict name -> (vectors, index)")
    names = list(spaces)
    space = names[0] if space is None else space
    if space not in spaces:
        raise ValueError(f"space {space!r} is not among {names}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    s = w.Dropdown(options=names, value=space, description="vectors", layout=w.Layout(width="420px"))
    q = w.Text(value=query, description="query", continuous_update=False,
               placeholder="a word, or e.g. king - man + woman")
    m = w.Dropdown(options=list(METHODS), value=method, description="analogy")
    kk = w.IntSlider(value=k, min=1, max=30, description="k", continuous_update=False)
    out = w.HTML()
    box = w.VBox([w.HBox([q, kk]), w.HBox([s, m]), out])
    ew = ExplorerWidget(spaces, s, q, m, kk, out, box)
    for control in (s, q, m, kk):
        control.observe(ew.update, names="value")
    ew.update()
    return ew
