"""Chapter 6b's "try it" widget: a word's contextual neighbours across sentences.

Type a sentence and pick one of its words: the widget finds the tokens, in a pool of other
sentences, whose vectors at the chosen biLM layer are closest (cosine) to that word's vector in
your sentence, and shows each neighbour in its own sentence. At layer 0 (the character CNN) a
word has one vector whatever its context, so its neighbours are mostly the same spelling; at
layers 1 and 2 the context moves them.

The callback is a plain function (:func:`contextual_neighbours`), tested without a browser;
:func:`neighbours_widget` only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .elmo import word_tokens

Encode = Callable[[list[list[str]]], list[np.ndarray]]  # sentences -> one [n_layers, n, d] per sentence


class ContextPool:
    """Every token of ``sentences`` with its vector at each layer, encoded once.

    With ``centre`` (the default) each layer's mean vector over the pool is subtracted before the
    vectors are unit-normalised (and from a query, too): a language model's states share a large
    common component, and raw cosines between any two tokens sit near 1 (0.93-0.99 for chapter
    6b's biLM), which hides the differences the neighbours are about.
    """

    def __init__(self, sentences: Sequence[Sequence[str]], encode: Encode, centre: bool = True) -> None:
        if not sentences:
            raise ValueError("the pool needs at least one sentence")
        self.sentences = [list(s) for s in sentences]
        self.encode = encode
        feats = encode(self.sentences)
        self.where = [(i, j) for i, s in enumerate(self.sentences) for j in range(len(s))]
        stacked = np.concatenate([np.asarray(f, dtype=np.float32) for f in feats], axis=1)  # [L, N, d]
        self.mean = stacked.mean(1) if centre else np.zeros_like(stacked[:, 0])  # [L, d]
        stacked = stacked - self.mean[:, None]
        self.vectors = stacked / np.maximum(np.linalg.norm(stacked, axis=-1, keepdims=True), 1e-8)

    @property
    def n_layers(self) -> int:
        return self.vectors.shape[0]


@dataclass
class Neighbour:
    word: str
    sentence: list[str]
    position: int
    cosine: float


@dataclass
class NeighbourResult:
    """What :func:`contextual_neighbours` found (``error`` set when the input cannot be used)."""

    tokens: list[str] = field(default_factory=list)
    word: str = ""
    layer: int = 0
    neighbours: list[Neighbour] = field(default_factory=list)
    error: str | None = None


def contextual_neighbours(pool: ContextPool, sentence: str, word: str, *, layer: int = 2, k: int = 8,
                          exclude_same: bool = False) -> NeighbourResult:
    """The widget's callback: the ``k`` pool tokens closest to ``word`` as used in ``sentence``.

    Args:
        pool: the sentences to search (:class:`ContextPool`).
        sentence: any text (tokenized with :func:`~companion.contextual.elmo.word_tokens`).
        word: a word of the sentence (first occurrence, case-insensitive).
        layer: 0 .. pool.n_layers - 1.
        k: neighbours to return.
        exclude_same: leave out tokens spelled like ``word`` (to see what else is near).

    Returns:
        A :class:`NeighbourResult`; reader input that cannot be used gives an ``error``
        message instead of an exception, so the widget keeps working.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if not isinstance(sentence, str) or not isinstance(word, str):
        return NeighbourResult(error="the sentence and the word must be text")
    tokens = word_tokens(sentence)
    if not tokens:
        return NeighbourResult(error="type a sentence, e.g. 'She sat on the bank of the river.'")
    if not isinstance(layer, int) or not 0 <= layer < pool.n_layers:
        return NeighbourResult(tokens, error=f"layer must be 0 .. {pool.n_layers - 1}, got {layer!r}")
    w = word.strip().lower()
    where = [j for j, t in enumerate(tokens) if t.lower() == w]
    if not w or not where:
        return NeighbourResult(tokens, error=f"{word!r} is not a word of the sentence; pick one of: "
                                             f"{', '.join(dict.fromkeys(tokens))}")
    q = np.asarray(pool.encode([tokens])[0], dtype=np.float32)[layer, where[0]] - pool.mean[layer]
    q = q / max(float(np.linalg.norm(q)), 1e-8)
    sims = pool.vectors[layer] @ q
    out = NeighbourResult(tokens, tokens[where[0]], layer)
    for idx in np.argsort(-sims, kind="stable"):
        i, j = pool.where[idx]
        if exclude_same and pool.sentences[i][j].lower() == w:
            continue
        out.neighbours.append(Neighbour(pool.sentences[i][j], pool.sentences[i], j, float(sims[idx])))
        if len(out.neighbours) == k:
            break
    return out


def _render(res: NeighbourResult) -> str:
    if res.error:
        return f"<p><b>Cannot answer:</b> {html.escape(res.error)}</p>"
    rows = []
    for n in res.neighbours:
        lo, hi = max(0, n.position - 6), n.position + 7
        left = html.escape(" ".join(n.sentence[lo:n.position]))
        right = html.escape(" ".join(n.sentence[n.position + 1:hi]))
        rows.append(f"<tr><td>{n.cosine:.2f}</td><td>{left} <b>{html.escape(n.word)}</b> {right}</td></tr>")
    head = f"<p>Neighbours of <b>{html.escape(res.word)}</b> at layer {res.layer}:</p>"
    return head + "<table><tr><th>cos</th><th>context</th></tr>" + "".join(rows) + "</table>"


@dataclass
class NeighboursWidget:
    pool: ContextPool
    sentence: object
    word: object
    layer: object
    output: object
    box: object
    last: NeighbourResult | None = None
    calls: int = 0

    def update(self, *_: object) -> None:
        """Answer the current controls (the callback of every control)."""
        self.last = contextual_neighbours(self.pool, self.sentence.value, self.word.value,
                                          layer=int(self.layer.value))
        self.output.value = _render(self.last)
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def neighbours_widget(pool: ContextPool, *, sentence: str = "He sat on the bank of the river .",
                      word: str = "bank", layer: int = 2) -> NeighboursWidget:
    """A sentence box, a word box and a layer slider; the neighbours update on each change."""
    import ipywidgets as w

    text = w.Text(value=sentence, description="sentence", continuous_update=False,
                  layout=w.Layout(width="60%"))
    wd = w.Text(value=word, description="word", continuous_update=False)
    ly = w.IntSlider(value=layer, min=0, max=pool.n_layers - 1, description="layer", continuous_update=False)
    out = w.HTML()
    box = w.VBox([w.HBox([text, wd, ly]), out])
    ex = NeighboursWidget(pool, text, wd, ly, out, box)
    for control in (text, wd, ly):
        control.observe(ex.update, names="value")
    ex.update()
    return ex


__all__ = ["ContextPool", "Neighbour", "NeighbourResult", "contextual_neighbours", "neighbours_widget"]
