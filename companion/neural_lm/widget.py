"""Chapter 2's "try it" widget: type the start of a sentence and compare the next-word
distributions of a neural LM, an n-gram model and their mixture.

The callback is a plain function (:meth:`NextWordComparison.table`), so it is tested without a
browser; :func:`next_word_widget` only wires ipywidgets controls to it.

Contexts follow each model's own training convention: the NNLM reads one running stream that
starts with ``n - 1`` copies of ``</s>`` (as :func:`~.recipes.lm_examples` built it), the n-gram
model reads ``<s>`` followed by the words of the sentence so far (chapter 1).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from .common import NeuralLM
from .recipes import sample_words

__all__ = ["NextWordComparison", "NextWordWidget", "next_word_widget"]


class NextWordComparison:
    """Next-word distributions of a neural LM, an n-gram LM and their mixture, over the neural
    model's vocabulary.

    Args:
        model: a trained :class:`~.common.NeuralLM`.
        vocab: the :class:`companion.data.Vocab` the model was trained with (has ``eos``).
        ngram: a chapter-1 n-gram model (:class:`companion.counting.NGramLM`) whose vocabulary
            holds every symbol of ``vocab``; ``None`` to compare nothing.
        weight: the mixture weight of the neural model (e.g. tuned with
            :func:`~.mixture.tune_weight`), in [0, 1].
        eos: the end-of-sentence symbol of ``vocab``.
    """

    def __init__(self, model: NeuralLM, vocab, ngram=None, *, weight: float = 0.5, eos: str = "</s>") -> None:
        if not isinstance(model, NeuralLM):
            raise TypeError(f"model must be a companion.neural_lm model (NNLM, LBL), got {type(model).__name__}")
        if not hasattr(vocab, "stoi") or not hasattr(vocab, "itos"):
            raise TypeError("vocab must be the companion.data.Vocab the model was trained with")
        if len(vocab.itos) != model.vocab_size:
            raise ValueError(f"the vocabulary has {len(vocab.itos)} symbols but the model predicts {model.vocab_size}")
        if eos not in vocab.stoi:
            raise ValueError(f"the vocabulary has no {eos!r} symbol")
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight must lie in [0, 1], got {weight}")
        self.model, self.vocab, self.ngram, self.weight, self.eos = model, vocab, ngram, float(weight), eos
        self._ngram_ids = None
        if ngram is not None:
            nvocab = getattr(ngram, "vocab", None)
            if nvocab is None or not hasattr(ngram, "next_distribution"):
                raise TypeError("ngram must be a companion.counting n-gram model (with .vocab and .next_distribution)")
            missing = [w for w in vocab.itos if w not in nvocab.stoi]
            if missing:
                raise ValueError(f"the n-gram model does not know {len(missing)} of the neural model's symbols "
                                 f"(e.g. {missing[:3]}); build both from the same split")
            self._ngram_ids = np.array([nvocab.id(w) for w in vocab.itos], dtype=np.int64)

    def tokens(self, prompt: str | Sequence[str]) -> list[str]:
        """The prompt as tokens of the vocabulary (lower-cased, punctuation kept; unknown words
        become the unknown symbol)."""
        if isinstance(prompt, str):
            from ..data import tokenize

            words = tokenize(prompt, keep_punct=True)
        else:
            words = list(prompt)
        unk = getattr(self.vocab, "unk", None)
        return [w if w in self.vocab.stoi else unk for w in words]

    def neural(self, prompt: str | Sequence[str]) -> np.ndarray:
        """``P(next | prompt)`` of the neural model over ``vocab.itos``."""
        ctx = [self.eos] * self.model.n_context + self.tokens(prompt)
        ids = self.vocab.encode(ctx[-self.model.n_context :])
        return self.model.next_word_distribution(ids).double().cpu().numpy()

    def counted(self, prompt: str | Sequence[str]) -> np.ndarray:
        """``P(next | <s> prompt)`` of the n-gram model, reordered to ``vocab.itos``."""
        if self.ngram is None:
            raise ValueError("no n-gram model was given")
        p = self.ngram.next_distribution(["<s>"] + self.tokens(prompt))
        return np.asarray(p, dtype=np.float64)[self._ngram_ids]

    def distributions(self, prompt: str | Sequence[str]) -> dict[str, np.ndarray]:
        """``{"NNLM": ..., "n-gram": ..., "mixture": ...}`` (only the first without an n-gram model)."""
        out = {"NNLM": self.neural(prompt)}
        if self.ngram is not None:
            out["n-gram"] = self.counted(prompt)
            out["mixture"] = self.weight * out["NNLM"] + (1 - self.weight) * out["n-gram"]
        return out

    def table(self, prompt: str | Sequence[str], k: int = 10) -> pd.DataFrame:
        """The widget's callback: the ``k`` most probable next words of each model, as
        ``"word  probability"`` strings, one column per model (rank 1 first)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        cols = {}
        for name, p in self.distributions(prompt).items():
            top = np.argsort(-p, kind="stable")[:k]
            cols[name] = [f"{self.vocab.itos[i]}  {p[i]:.3f}" for i in top]
        return pd.DataFrame(cols, index=pd.RangeIndex(1, k + 1, name="rank"))

    def continue_text(self, prompt: str | Sequence[str], n_words: int = 15, *, temperature: float = 1.0,
                      seed: int = 0) -> str:
        """The prompt followed by ``n_words`` words sampled from the neural model."""
        toks = self.tokens(prompt)
        ctx = self.vocab.encode([self.eos] * self.model.n_context + toks)
        new = sample_words(self.model, ctx, n_words, temperature=temperature, seed=seed)
        return " ".join(toks + self.vocab.decode(new))


@dataclass
class NextWordWidget:
    """The controls, the output and the box that shows them (display the object itself)."""

    comparison: NextWordComparison
    prompt: object
    k: object
    seed: object
    output: object
    box: object
    calls: int = field(default=0)

    def update(self, *_: object) -> None:
        """Recompute from the current control values (the callback of every control)."""
        try:
            tab = self.comparison.table(self.prompt.value, int(self.k.value))
            sample = self.comparison.continue_text(self.prompt.value, seed=int(self.seed.value))
            self.output.value = tab.to_html() + f"<p><b>NNLM continues:</b> {html.escape(sample)}</p>"
        except (ValueError, TypeError) as err:  # show a bad input, do not crash the widget
            self.output.value = f"<p><b>Cannot predict:</b> {html.escape(str(err))}</p>"
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def next_word_widget(comparison: NextWordComparison, *, prompt: str = "the", k: int = 8, seed: int = 0) -> NextWordWidget:
    """A prompt box, a k slider and a seed; the table of next words updates on every change."""
    import ipywidgets as w

    if not isinstance(comparison, NextWordComparison):
        raise TypeError(f"comparison must be a NextWordComparison, got {type(comparison).__name__}")
    p = w.Text(value=prompt, description="prompt", continuous_update=False)
    kk = w.IntSlider(value=k, min=1, max=20, description="top k", continuous_update=False)
    s = w.IntText(value=seed, description="seed")
    out = w.HTML()
    box = w.VBox([p, w.HBox([kk, s]), out])
    nw = NextWordWidget(comparison, p, kk, s, out, box)
    for control in (p, kk, s):
        control.observe(nw.update, names="value")
    nw.update()
    return nw
