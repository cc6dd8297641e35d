"""Chapter 4's "try it" widget: neighbours of *any* word, in fastText and in word-level models.

Type a word -- a real one (``whale``), a misspelling (``whael``) or an invention
(``unwhaleable``) -- and see its character n-grams and its nearest neighbours in every model side
by side. A word-level model (skip-gram, GloVe, ...) has no vector for a word outside its
vocabulary; fastText builds one from the word's n-grams (:meth:`FastTextResult.nearest`).

The callback is a plain function (:func:`lookup_any_word`), tested without a browser;
:func:`subword_explorer` only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..evaluate import nearest_neighbours
from ..evaluate._vectors import word_rows
from .fasttext import FastTextResult
from .subwords import char_ngrams

__all__ = ["WordLookup", "AnyWordLookup", "lookup_any_word", "subword_explorer", "SubwordExplorer"]


@dataclass
class WordLookup:
    """One model's answer.

    Attributes:
        model: the model's name.
        in_vocabulary: whether the word has its own row in the model.
        neighbours: ``(word, cosine)`` pairs, best first (empty if the model has no vector).
        note: how the vector was made, or why there is none.
    """

    model: str
    in_vocabulary: bool
    neighbours: list[tuple[str, float]] = field(default_factory=list)
    note: str = ""

    @property
    def words(self) -> list[str]:
        return [w for w, _ in self.neighbours]


@dataclass
class AnyWordLookup:
    """What :func:`lookup_any_word` found.

    Attributes:
        word: the query, stripped and lower-cased ("" if it could not be used).
        ngrams: its character n-grams (fastText's ``S(w)`` without the whole word).
        answers: one :class:`WordLookup` per model, in the order of ``models``.
        error: a message for the reader when the query is unusable, else ``None``.
    """

    word: str
    ngrams: list[str] = field(default_factory=list)
    answers: list[WordLookup] = field(default_factory=list)
    error: str | None = None

    def by_model(self) -> dict[str, WordLookup]:
        return {a.model: a for a in self.answers}


def _check_models(models: Mapping[str, Any]) -> None:
    if not isinstance(models, Mapping) or not models:
        raise ValueError("models must be a non-empty dict name -> FastTextResult or (vectors, index)")
    for name, m in models.items():
        if isinstance(m, FastTextResult):
            continue
        if not (isinstance(m, tuple) and len(m) == 2):
            raise TypeError(f"models[{name!r}] must be a FastTextResult or a pair (vectors, index), "
                            f"got {type(m).__name__}")




def lookup_any_word(models: Mapping[str, Any], word: str, *, k: int = 8, minn: int = 3, maxn: int = 6) -> AnyWordLookup:
    """The widget's callback: the ``k`` nearest vocabulary words of ``word`` in every model.

    Args:
        models: ``{name: FastTextResult}`` or ``{name: (vectors, index)}`` (word-level models), mixed.
        word: any word; it is stripped and lower-cased (the book's tokenizer lower-cases).
        k: neighbours per model.
        minn, maxn: the n-gram range shown (fastText models use their own).

    Returns:
        An :class:`AnyWordLookup`. Reader input that cannot be used (empty, several words) gives
        an ``error`` message rather than an exception, so the widget keeps working.

    Raises:
        ValueError / TypeError: for bad ``models`` or ``k`` (programming errors, not reader input).

    Example:
        >>> import torch
        >>> res = lookup_any_word({"toy": (torch.eye(2), {"a": 0, "b": 1})}, "zz")
        >>> res.ngrams, res.answers[0].note
        (['<zz', '<zz>', 'zz>'], 'not in the vocabulary: a word-level model has no vector for it')
    """
    _check_models(models)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if not isinstance(word, str):
        raise TypeError(f"word must be a string, got {type(word).__name__}")
    w = word.strip().lower()
    if not w:
        return AnyWordLookup("", error="type a word, e.g. whale, whael or unwhaleable")
    if len(w.split()) > 1:
        return AnyWordLookup("", error=f"one word at a time, please (got {word!r})")
    out = AnyWordLookup(w, char_ngrams(w, minn, maxn))
    for name, m in models.items():
        if isinstance(m, FastTextResult):
            known = w in m.vocab.stoi
            try:
                nb = m.nearest(w, k)
            except ValueError as err:  # no n-gram in range: no vector
                out.answers.append(WordLookup(name, known, [], str(err)))
                continue
            note = "its own row plus its n-grams" if known else \
                f"not in the vocabulary: built from its {m.model.subword_rows(w).numel()} n-gram rows"
            out.answers.append(WordLookup(name, known, nb, note))
        else:
            vectors, index = m
            if w not in word_rows(index):
                out.answers.append(WordLookup(name, False, [],
                                              "not in the vocabulary: a word-level model has no vector for it"))
                continue
            out.answers.append(WordLookup(name, True, nearest_neighbours(vectors, index, w, k), "its own row"))
    return out


def _render(res: AnyWordLookup) -> str:
    if res.error:
        return f"<p><b>Cannot answer:</b> {html.escape(res.error)}</p>"
    grams = " ".join(f"<code>{html.escape(g)}</code>" for g in res.ngrams)
    head = f"<p><b>{html.escape(res.word)}</b>: {len(res.ngrams)} character n-grams: {grams}</p>"
    cells = []
    for a in res.answers:
        body = "<br>".join(f"{html.escape(w)} ({s:.2f})" for w, s in a.neighbours) or "&mdash;"
        cells.append(f"<td style='vertical-align:top'><b>{html.escape(a.model)}</b><br>"
                     f"<i>{html.escape(a.note)}</i><br>{body}</td>")
    return head + "<table><tr>" + "".join(cells) + "</tr></table>"


@dataclass
class SubwordExplorer:
    """The controls, the output and the box that shows them (display the object itself)."""

    models: Mapping[str, Any]
    word: Any
    k: Any
    output: Any
    box: Any
    last: AnyWordLookup | None = None
    calls: int = 0

    def update(self, *_: object) -> None:
        """Answer the current word (the callback of every control)."""
        self.last = lookup_any_word(self.models, self.word.value, k=int(self.k.value))
        self.output.value = _render(self.last)
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def subword_explorer(models: Mapping[str, Any], *, word: str = "whael", k: int = 6) -> SubwordExplorer:
    """A text box for a word and a slider for ``k``; every model's neighbours update on each change.

    Args:
        models: see :func:`lookup_any_word`.
        word, k: the initial values.
    """
    import ipywidgets as w

    _check_models(models)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 30:
        raise ValueError(f"k must be an int in 1..30, got {k!r}")
    text = w.Text(value=word, description="word", continuous_update=False,
                  placeholder="any word: whale, whael, unwhaleable")
    kk = w.IntSlider(value=k, min=1, max=30, description="k", continuous_update=False)
    out = w.HTML()
    box = w.VBox([w.HBox([text, kk]), out])
    ex = SubwordExplorer(models, text, kk, out, box)
    for control in (text, kk):
        control.observe(ex.update, names="value")
    ex.update()
    return ex
