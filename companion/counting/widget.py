"""The chapter's "try it" widget: pick n and a smoothing method, type a prompt, read what the
model writes. The callback is a plain function (:func:`generate_for`), so it is tested without a
browser; :func:`generation_widget` only wires ipywidgets controls to it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .generate import generate_text
from .lm import NGramLM
from .ngram import NGramCounts
from .tables import METHODS, build_model


class ModelZoo:
    """Models of every method and order over one set of counts, built on first use and kept.

    Args:
        counts: counts of the highest order wanted.
        valid: validation sentences, needed to tune ``"add-k"`` and ``"interpolated"``.
    """

    def __init__(self, counts: NGramCounts, valid: Sequence[Sequence[str]] | None = None) -> None:
        if not isinstance(counts, NGramCounts):
            raise TypeError(f"ModelZoo needs NGramCounts, got {type(counts).__name__}")
        self.counts = counts
        self.valid = None if valid is None else counts.encode(valid)
        self._models: dict[tuple[str, int], NGramLM] = {}

    @property
    def methods(self) -> list[str]:
        """The methods this zoo can build (the tuned ones only with validation text)."""
        return [m for m in METHODS if self.valid is not None or m not in ("add-k", "interpolated")]

    def get(self, method: str, n: int) -> NGramLM:
        """The model of ``method`` (see :data:`~companion.counting.tables.METHODS`) and order ``n``."""
        if method not in self.methods:
            extra = " (pass valid=... to the zoo for the tuned ones)" if method in METHODS else ""
            raise ValueError(f"unknown method {method!r}; choose from {', '.join(self.methods)}{extra}")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= self.counts.order:
            raise ValueError(f"n must be an int in 1..{self.counts.order}, got {n!r}")
        key = (method, n)
        if key not in self._models:
            self._models[key] = build_model(method, self.counts, n, self.valid)[0]
        return self._models[key]


def generate_for(zoo: ModelZoo, method: str, n: int, prompt: str, *, temperature: float = 1.0, seed: int = 0,
                 max_words: int = 25, n_samples: int = 1) -> list[str]:
    """The widget's callback: ``n_samples`` continuations of ``prompt`` (seeds ``seed``, ``seed+1``, ...)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    lm = zoo.get(method, n)
    return [generate_text(lm, prompt, max_words, temperature=temperature, seed=seed + i) for i in range(n_samples)]


@dataclass
class GenerationWidget:
    """The controls, the output and the box that shows them (display the object itself)."""

    zoo: ModelZoo
    method: object
    order: object
    prompt: object
    temperature: object
    seed: object
    output: object
    box: object
    n_samples: int = 3
    calls: int = field(default=0)

    def update(self, *_: object) -> None:
        """Regenerate from the current control values (the callback of every control)."""
        try:
            texts = generate_for(self.zoo, self.method.value, int(self.order.value), self.prompt.value,
                                 temperature=float(self.temperature.value), seed=int(self.seed.value),
                                 n_samples=self.n_samples)
            items = "".join(f"<li>{html.escape(t)}</li>" for t in texts)
            self.output.value = f"<ol>{items}</ol>"
        except (ValueError, TypeError) as err:  # show a bad input, do not crash the widget
            self.output.value = f"<p><b>Cannot generate:</b> {html.escape(str(err))}</p>"
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def generation_widget(zoo: ModelZoo, *, methods: Iterable[str] | None = None, prompt: str = "the",
                      n: int = 3, method: str = "modified KN", temperature: float = 1.0, seed: int = 0,
                      n_samples: int = 3) -> GenerationWidget:
    """Controls for method, n, prompt, temperature and seed; the output updates on every change."""
    import ipywidgets as w

    methods = list(methods) if methods is not None else zoo.methods
    if method not in methods:
        raise ValueError(f"method {method!r} is not among {methods}")
    # labels as wide as they need ("temperature" was cut to "temperat…" at the default width)
    label = {"style": {"description_width": "initial"}}
    m = w.Dropdown(options=methods, value=method, description="smoothing", **label)
    o = w.IntSlider(value=n, min=1, max=zoo.counts.order, description="n", continuous_update=False,
                    **label)
    p = w.Text(value=prompt, description="prompt", continuous_update=False, **label)
    t = w.FloatSlider(value=temperature, min=0.0, max=2.0, step=0.1, description="temperature",
                      continuous_update=False, **label)
    s = w.IntText(value=seed, description="seed", **label)
    out = w.HTML()
    box = w.VBox([w.HBox([m, o]), p, w.HBox([t, s]), out])
    gw = GenerationWidget(zoo, m, o, p, t, s, out, box, n_samples=n_samples)
    for control in (m, o, p, t, s):
        control.observe(gw.update, names="value")
    gw.update()
    return gw
