"""The chapter's attention-head picker: type a sentence, pick a layer and a head, and see
that head's weights as a shaded table (rows = queries, columns = keys). The rendering is a
plain function (:func:`head_html`), tested without a browser; :func:`head_picker_widget`
only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from .report import attention_maps


def head_html(weights: torch.Tensor, tokens: Sequence[str], layer: int, head: int) -> str:
    """One head's ``[T, T]`` weights from ``weights [n_layer, n_head, T, T]`` as an HTML table,
    each cell shaded by its weight, plus the key each query attends to most."""
    L, H, T, _ = weights.shape
    if len(tokens) != T:
        raise ValueError(f"got {len(tokens)} tokens for {T} positions")
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer must be in 0..{L - 1} and head in 0..{H - 1}, got ({layer}, {head})")
    w = weights[layer, head]
    esc = [html.escape(t) for t in tokens]
    cell = '<td style="background:rgba(0,0,0,{a:.2f});width:14px;height:14px"></td>'
    head_row = "".join(f'<th style="writing-mode:vertical-rl;font-size:9px">{t}</th>' for t in esc)
    rows = "".join(f'<tr><th style="text-align:right;font-size:9px">{esc[i]}</th>'
                   + "".join(cell.format(a=float(w[i, j])) for j in range(T)) + "</tr>" for i in range(T))
    top = w.argmax(-1).tolist()
    most = ", ".join(f"{esc[i]}→{esc[j]}" for i, j in enumerate(top))
    return (f"<p>layer {layer}, head {head}: dark = much weight</p>"
            f'<table style="border-collapse:collapse"><tr><th></th>{head_row}</tr>{rows}</table>'
            f"<p style='font-size:9px'>most attended: {most}</p>")


@dataclass
class HeadPicker:
    """The controls, the output and the box that shows them (display the object itself)."""

    encoder: object
    wordpiece: object
    sentence: object
    layer: object
    head: object
    output: object
    box: object
    calls: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    def maps(self, sentence: str) -> tuple[torch.Tensor, list[str]]:
        """The attention maps and tokens of ``sentence`` (cached per sentence)."""
        if sentence not in self._cache:
            if not sentence.strip():
                raise ValueError("type a sentence first")
            ids = self.wordpiece.encode(sentence)
            if len(ids) > 40:
                raise ValueError(f"{len(ids)} tokens: keep the sentence under 40 tokens so the map stays readable")
            tokens = [self.wordpiece.inverse[i] for i in ids]
            self._cache[sentence] = (attention_maps(self.encoder, ids), tokens)
        return self._cache[sentence]

    def update(self, *_: object) -> None:
        """Re-render from the current controls; a bad sentence is shown as a message, not raised."""
        self.calls += 1
        try:
            weights, tokens = self.maps(self.sentence.value)
        except ValueError as err:
            self.output.value = f"<p><b>Cannot draw:</b> {html.escape(str(err))}</p>"
            return
        self.output.value = head_html(weights, tokens, int(self.layer.value), int(self.head.value))

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def head_picker_widget(encoder, wordpiece, *, sentence: str = "The cat sat on the mat.", layer: int = 0,
                       head: int = 0) -> HeadPicker:
    """Controls: the sentence, the layer and the head of ``encoder`` (a :class:`BertEncoder`)."""
    import ipywidgets as w

    c = encoder.config
    s = w.Text(value=sentence, description="sentence", continuous_update=False,
               layout=w.Layout(width="60%"))
    lay = w.IntSlider(value=layer, min=0, max=c.n_layer - 1, description="layer")
    hd = w.IntSlider(value=head, min=0, max=c.n_head - 1, description="head")
    out = w.HTML()
    picker = HeadPicker(encoder, wordpiece, s, lay, hd, out, w.VBox([s, w.HBox([lay, hd]), out]))
    for control in (s, lay, hd):
        control.observe(picker.update, names="value")
    picker.update()
    return picker


__all__ = ["HeadPicker", "head_html", "head_picker_widget"]
