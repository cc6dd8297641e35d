"""Chapter 5's "try it" widget: type a sentence, see its nearest sentences in each encoder's space.

A pool of sentences (e.g. the test sentences of the probe tasks) is encoded once per encoder and
normalised; a query is encoded by every encoder and compared by cosine. The callback is a plain
function (:meth:`SentenceIndex.search`), tested without a browser; :func:`sentence_explorer` only
wires ipywidgets controls to it. Reader input that cannot be used (an empty query) gives an error
message, not an exception, and the next change of a control answers again.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..evaluate.senteval import _as_array

__all__ = ["Neighbours", "SentenceIndex", "SentenceSearch", "SentenceExplorer", "sentence_explorer"]

EncodeFn = Callable[[list[str]], Any]


@dataclass
class Neighbours:
    """One encoder's answer: ``(sentence, cosine)`` pairs, best first."""

    encoder: str
    neighbours: list[tuple[str, float]] = field(default_factory=list)

    @property
    def sentences(self) -> list[str]:
        return [s for s, _ in self.neighbours]


@dataclass
class SentenceSearch:
    """What :meth:`SentenceIndex.search` found: the query, one answer per encoder, or an error."""

    query: str
    answers: list[Neighbours] = field(default_factory=list)
    error: str | None = None

    def by_encoder(self) -> dict[str, Neighbours]:
        return {a.encoder: a for a in self.answers}


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


class SentenceIndex:
    """Unit-length vectors of ``pool`` under every encoder, ready for cosine search.

    Args:
        encoders: ``{name: encode}``, each ``encode(list[str]) -> [n, d]`` (tensor or array).
        pool: the sentences to search (duplicates are dropped, order kept).
        batch_size: sentences per ``encode`` call when indexing.
    """

    def __init__(self, encoders: Mapping[str, EncodeFn], pool: Sequence[str], *, batch_size: int = 256) -> None:
        if not isinstance(encoders, Mapping) or not encoders:
            raise ValueError("encoders must be a non-empty dict name -> encode(list[str])")
        for name, enc in encoders.items():
            if not callable(enc):
                raise TypeError(f"encoders[{name!r}] is a {type(enc).__name__}, not a function list[str] -> [n, d]")
        if isinstance(pool, str) or not isinstance(pool, Sequence) or not all(isinstance(s, str) for s in pool):
            raise TypeError("pool must be a list of sentences (str)")
        self.pool = list(dict.fromkeys(s for s in pool if s.strip()))
        if len(self.pool) < 2:
            raise ValueError("pool needs at least two non-empty sentences")
        self.encoders = dict(encoders)
        self.vectors: dict[str, np.ndarray] = {}
        for name, enc in self.encoders.items():
            parts = [_as_array(enc(self.pool[i:i + batch_size]), len(self.pool[i:i + batch_size]))
                     for i in range(0, len(self.pool), batch_size)]
            self.vectors[name] = _unit(np.concatenate(parts))

    def search(self, query: str, k: int = 5) -> SentenceSearch:
        """The ``k`` pool sentences nearest to ``query`` (by cosine) under every encoder.

        Raises:
            ValueError / TypeError: for a bad ``k`` or a non-string query (programming errors);
            an empty query is reader input and comes back as ``error``.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        q = " ".join(query.split())
        if not q:
            return SentenceSearch("", error="type a sentence, e.g. 'what is the capital of france ?'")
        out = SentenceSearch(q)
        for name, enc in self.encoders.items():
            v = _unit(_as_array(enc([q]), 1))[0]
            sims = self.vectors[name] @ v
            top = np.argsort(-sims, kind="stable")[:k]
            out.answers.append(Neighbours(name, [(self.pool[i], float(sims[i])) for i in top]))
        return out


def render(res: SentenceSearch) -> str:
    """The search result as an HTML table, one column per encoder."""
    if res.error:
        return f"<p><b>Cannot answer:</b> {html.escape(res.error)}</p>"
    cells = []
    for a in res.answers:
        body = "<br>".join(f"{s:.2f} &nbsp;{html.escape(t)}" for t, s in a.neighbours) or "&mdash;"
        cells.append(f"<td style='vertical-align:top'><b>{html.escape(a.encoder)}</b><br>{body}</td>")
    return f"<p>Nearest to <b>{html.escape(res.query)}</b>:</p><table><tr>{''.join(cells)}</tr></table>"


@dataclass
class SentenceExplorer:
    """The controls, the output and the box that shows them (display the object itself)."""

    index: SentenceIndex
    query: Any
    k: Any
    output: Any
    box: Any
    last: SentenceSearch | None = None
    calls: int = 0

    def update(self, *_: object) -> None:
        """Answer the current query (the callback of every control)."""
        try:
            self.last = self.index.search(self.query.value, k=int(self.k.value))
        except Exception as err:  # noqa: BLE001 - an encoder failure is shown, and the next change answers again
            self.last = SentenceSearch(self.query.value, error=f"{type(err).__name__}: {err}")
        self.output.value = render(self.last)
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def sentence_explorer(index: SentenceIndex, *, query: str = "what is the capital of france ?",
                      k: int = 5) -> SentenceExplorer:
    """A text box for a sentence and a slider for ``k``; every encoder's neighbours update."""
    import ipywidgets as w

    if not isinstance(index, SentenceIndex):
        raise TypeError(f"index must be a SentenceIndex, got {type(index).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
        raise ValueError(f"k must be an int in 1..20, got {k!r}")
    text = w.Text(value=query, description="sentence", continuous_update=False,
                  layout=w.Layout(width="60%"))
    kk = w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False)
    out = w.HTML()
    box = w.VBox([w.HBox([text, kk]), out])
    ex = SentenceExplorer(index, text, kk, out, box)
    for control in (text, kk):
        control.observe(ex.update, names="value")
    ex.update()
    return ex
