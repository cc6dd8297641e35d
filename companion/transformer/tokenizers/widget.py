"""The chapter's "step through BPE merges" widget: pick a tokenizer, type a word, move a slider
through the merges applied to it. The rendering is a plain function (:func:`stepper_html`), so it
is tested without a browser; :func:`merge_stepper_widget` only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field

from .bpe import BPE, MergeStep
from .byte_bpe import ByteLevelBPE

Stepper = BPE | ByteLevelBPE


def steps_for(tokenizer: Stepper, word: str) -> list[MergeStep]:
    """The merge steps of ``word`` (byte-level BPE: one pre-tokenised piece, e.g. ``" lowest"``)."""
    if not isinstance(tokenizer, (BPE, ByteLevelBPE)):
        raise TypeError(f"can step through a BPE or ByteLevelBPE, got {type(tokenizer).__name__}")
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    return tokenizer.steps(word)


def _show(tokenizer: Stepper, piece: str) -> str:
    return tokenizer.show(piece) if isinstance(tokenizer, ByteLevelBPE) else piece


def stepper_html(tokenizer: Stepper, word: str, step: int) -> str:
    """The segmentation of ``word`` after ``step`` merges, as HTML: the pieces as boxes, then the
    merges applied so far with their ranks. ``step`` must be in ``0..len(steps)-1``."""
    steps = steps_for(tokenizer, word)
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < len(steps):
        raise ValueError(f"step must be an int in 0..{len(steps) - 1} for {word!r}, got {step!r}")
    box = ('<span style="border:1px solid #888;border-radius:3px;padding:1px 4px;margin:1px;'
           'font-family:monospace">{}</span>')
    pieces = "".join(box.format(html.escape(_show(tokenizer, p))) for p in steps[step].pieces)
    done = "".join(f"<li>rank {s.rank}: {html.escape(_show(tokenizer, s.pair[0]))} + "
                   f"{html.escape(_show(tokenizer, s.pair[1]))}</li>" for s in steps[1:step + 1])
    return (f"<p>step {step} of {len(steps) - 1}: {len(steps[step].pieces)} piece(s)</p><p>{pieces}</p>"
            + (f"<ol>{done}</ol>" if done else "<p>(no merge applied yet: one symbol per character or byte)</p>"))


@dataclass
class MergeStepper:
    """The controls, the output and the box that shows them (display the object itself)."""

    tokenizers: Mapping[str, Stepper]
    choice: object
    word: object
    step: object
    output: object
    box: object
    calls: int = field(default=0)
    _shown: tuple | None = field(default=None, repr=False)

    def update(self, *_: object) -> None:
        """Re-render from the current controls; a new word or tokenizer resets the slider to its
        final step (the word's segmentation), a moved slider shows that step."""
        self.calls += 1
        tok = self.tokenizers[self.choice.value]
        try:
            n = len(steps_for(tok, self.word.value)) - 1
        except (ValueError, TypeError) as err:  # show a bad input, do not crash the widget
            self.output.value = f"<p><b>Cannot step through:</b> {html.escape(str(err))}</p>"
            self._shown = None
            return
        shown = (self.choice.value, self.word.value)
        if shown != self._shown:  # (also after an error, when nothing is shown)
            self.step.unobserve(self.update, names="value")  # these two assignments are not moves
            self.step.max = n
            self.step.value = n
            self.step.observe(self.update, names="value")
        self._shown = shown
        self.output.value = stepper_html(tok, self.word.value, int(self.step.value))

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def merge_stepper_widget(tokenizers: Mapping[str, Stepper], *, word: str = "lowest",
                         tokenizer: str | None = None, step: int | None = None) -> MergeStepper:
    """Controls: which tokenizer, the word, the step (default: the last, i.e. the final segmentation)."""
    import ipywidgets as w

    if not isinstance(tokenizers, Mapping) or not tokenizers:
        raise ValueError("tokenizers must be a non-empty mapping {name: BPE or ByteLevelBPE}")
    names = list(tokenizers)
    tokenizer = names[0] if tokenizer is None else tokenizer
    if tokenizer not in tokenizers:
        raise ValueError(f"tokenizer {tokenizer!r} is not among {names}")
    n = len(steps_for(tokenizers[tokenizer], word)) - 1
    c = w.Dropdown(options=names, value=tokenizer, description="tokenizer")
    t = w.Text(value=word, description="word", continuous_update=False)
    s = w.IntSlider(value=n if step is None else step, min=0, max=n, description="step")
    out = w.HTML()
    ms = MergeStepper(tokenizers, c, t, s, out, w.VBox([w.HBox([c, t]), s, out]))
    ms._shown = (tokenizer, word)
    for control in (c, t, s):
        control.observe(ms.update, names="value")
    ms.update()
    return ms
