"""Try it: sample from a trained GPT with temperature, top-k and top-p (chapter 7b's widget).

:func:`generate_html` is the plain callback (tested in pytest); :func:`gpt_generation_widget`
wires it to ipywidgets. A bad input (an empty prompt, a prompt longer than the context) shows a
message instead of raising, and the widget answers again when a control changes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import torch

from .gpt import GPT
from .tokenizers import ByteLevelBPE


def generate_texts(gpt: GPT, tok: ByteLevelBPE, prompt: str, *, n_new: int = 30, temperature: float = 1.0,
                   top_k: int | None = None, top_p: float | None = None, n_samples: int = 3,
                   seed: int = 0) -> list[str]:
    """``n_samples`` continuations of ``prompt`` (seeded), each the prompt plus the new text."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("the prompt is empty: type a few words to continue")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    ids = tok.encode_ordinary(prompt)
    room = gpt.config.block_size - len(ids)
    if room < 1:
        raise ValueError(f"the prompt is {len(ids)} tokens but the model's context is {gpt.config.block_size}; "
                         "shorten it")
    n_new = min(n_new, room)
    x = torch.tensor([ids] * n_samples, device=gpt.device)
    g = torch.Generator(device=gpt.device).manual_seed(seed)
    out = gpt.generate(x, n_new, temperature=temperature, top_k=top_k or None, top_p=top_p, generator=g)
    vocab = len(tok)
    return [tok.decode([i for i in row.tolist() if i < vocab]) for row in out]


def generate_html(gpt: GPT, tok: ByteLevelBPE, prompt: str, **kwargs) -> str:
    """The samples as HTML (prompt in bold), or the error message when the input is bad."""
    try:
        texts = generate_texts(gpt, tok, prompt, **kwargs)
    except (ValueError, TypeError) as err:
        return f"<p><b>Cannot generate:</b> {html.escape(str(err))}</p>"
    items = "".join(f"<li><b>{html.escape(prompt)}</b>{html.escape(t[len(prompt):])}</li>"
                    if t.startswith(prompt) else f"<li>{html.escape(t)}</li>" for t in texts)
    return f"<ol>{items}</ol>"


@dataclass
class GenerationWidget:
    """The controls, the output and the box that shows them (display the object itself)."""

    gpt: GPT
    tok: ByteLevelBPE
    prompt: object
    temperature: object
    top_k: object
    top_p: object
    output: object
    box: object
    calls: int = field(default=0)

    def update(self, *_: object) -> None:
        self.calls += 1
        top_p = float(self.top_p.value)
        self.output.value = generate_html(self.gpt, self.tok, self.prompt.value,
                                          temperature=float(self.temperature.value),
                                          top_k=int(self.top_k.value) or None,
                                          top_p=None if top_p >= 1 else top_p)

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def gpt_generation_widget(gpt: GPT, tok: ByteLevelBPE, prompt: str = "The history of") -> GenerationWidget:
    """A prompt box and sliders for temperature, top-k (0 = off) and top-p (1 = off)."""
    import ipywidgets as w

    p = w.Text(value=prompt, description="prompt", continuous_update=False)
    t = w.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.1, description="temperature")
    k = w.IntSlider(value=0, min=0, max=200, step=5, description="top-k")
    q = w.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description="top-p")
    out = w.HTML()
    gw = GenerationWidget(gpt, tok, p, t, k, q, out, w.VBox([p, w.HBox([t, k, q]), out]))
    for control in (p, t, k, q):
        control.observe(gw.update, names="value")
    gw.update()
    return gw
