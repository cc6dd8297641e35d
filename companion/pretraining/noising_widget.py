"""Chapter 8b's "Try it": pick a corruption and a sentence, see what the encoder reads and what
the decoder must write.

The callback :func:`noising_html` is a plain function (tested); :func:`noising_widget` wires it
to a text box, a menu, a seed slider and a rate slider. Words stand in for tokens (a word ending
in ``.``, ``!`` or ``?`` ends a sentence), so the widget needs no tokenizer and no model.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .bart import NOISINGS, noise
from .mass import mass_pair
from .t5 import span_corruption

CORRUPTIONS = (*NOISINGS, "T5 span corruption", "MASS")


class _IndexVocab:
    mask = -1  # positions instead of ids: -1 is a [MASK]


def corrupt_words(words: Sequence[str], corruption: str, seed: int = 0, rate: float = 0.3
                  ) -> tuple[list[str], list[str]]:
    """``(encoder input, decoder target)`` as words. BART's noisings: the target is the whole
    text; T5: sentinels ``<X0>``, ``<X1>`` ... and an end ``</s>`` (``rate`` is the noise
    density); MASS: the masked fragment (``rate`` is its share of the text)."""
    n = len(words)
    if corruption not in CORRUPTIONS:
        raise ValueError(f"corruption must be one of {CORRUPTIONS}, got {corruption!r}")
    if n < 4:
        raise ValueError(f"type at least four words (got {n})")
    if not 0 < rate < 1:
        raise ValueError(f"the rate must be between 0 and 1, got {rate}")
    g = torch.Generator().manual_seed(seed)
    if corruption == "T5 span corruption":
        inp, tgt = span_corruption(list(range(n)), list(range(n, n + n)), -1, g, rate)

        def show(i: int) -> str:
            return "</s>" if i < 0 else (f"<X{i - n}>" if i >= n else words[i])

        return [show(i) for i in inp], [show(i) for i in tgt]
    if corruption == "MASS":
        inp, tgt = mass_pair(list(range(n)), -1, g, rate)
    else:
        is_end = torch.tensor([w[-1:] in (".", "!", "?") for w in words], dtype=torch.bool)
        inp, tgt = noise(list(range(n)), (corruption,), _IndexVocab(), is_end, g, rate), list(range(n))
    return ["[MASK]" if i < 0 else words[i] for i in inp], [words[i] for i in tgt]


def noising_html(text: str, corruption: str, seed: int = 0, rate: float = 0.3) -> str:
    """The widget's output: the encoder's input and the decoder's target, or what was wrong."""
    try:
        inp, tgt = corrupt_words(text.split(), corruption, seed, rate)
    except ValueError as err:
        return f"<p><b>Cannot corrupt:</b> {html.escape(str(err))}</p>"

    def strip(tokens: list[str]) -> str:
        return " ".join(f"<span style='background:#bbbbbb'>{html.escape(t)}</span>"
                        if t == "[MASK]" or t.startswith("<X") else html.escape(t) for t in tokens)

    return (f"<p><b>encoder reads</b> ({len(inp)} tokens): {strip(inp)}</p>"
            f"<p><b>decoder writes</b> ({len(tgt)} tokens): {strip(tgt)}</p>")


@dataclass
class NoisingWidget:
    """A text box, a corruption menu, a seed and a rate slider; the output shows the pair."""

    text: object
    corruption: object
    seed: object
    rate: object
    output: object
    box: object
    calls: int = 0

    def update(self, *_: object) -> None:
        self.calls += 1
        self.output.value = noising_html(self.text.value, self.corruption.value, int(self.seed.value),
                                         float(self.rate.value))

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def noising_widget(text: str, corruption: str = "text infilling") -> NoisingWidget:
    """Try every corruption of chapter 8b on your own text."""
    import ipywidgets as w

    t = w.Text(value=text, description="text", continuous_update=False, layout={"width": "90%"})
    c = w.Dropdown(options=list(CORRUPTIONS), value=corruption, description="corruption")
    k = w.IntSlider(value=0, min=0, max=20, description="seed")
    r = w.FloatSlider(value=0.3, min=0.05, max=0.95, step=0.05, description="rate")
    out = w.HTML()
    nw = NoisingWidget(t, c, k, r, out, w.VBox([t, w.HBox([c, k, r]), out]))
    for control in (t, c, k, r):
        control.observe(nw.update, names="value")
    nw.update()
    return nw


__all__ = ["CORRUPTIONS", "NoisingWidget", "corrupt_words", "noising_html", "noising_widget"]
