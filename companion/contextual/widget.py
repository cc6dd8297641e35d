"""Chapter 6a's "try it": type a sentence with a blank (``___``) and see which words Context2Vec
thinks fit it, and how similar two blanks' contexts are."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import torch.nn.functional as F

from ..data.vocab import Vocab
from .context2vec import Context2Vec
from .recipes import tokenize

BLANK = "___"


def _blank_position(text: str, vocab: Vocab) -> tuple[list[int], int]:
    toks = tokenize(text)
    if toks.count(BLANK) != 1:
        raise ValueError(f"write exactly one blank {BLANK!r} in the sentence, e.g. 'the {BLANK} barked'")
    pos = toks.index(BLANK)
    toks[pos] = vocab.unk  # never read: the model skips the blank's own word
    return vocab.encode(toks), pos


def fill_blank(model: Context2Vec, vocab: Vocab, text: str, k: int = 8,
               min_count: int = 0) -> list[tuple[str, float]]:
    """The ``k`` words whose target vectors best match the blank's context, with their cosine.

    ``min_count`` skips words seen fewer times in training: a rare word's target vector has had
    few updates, so its *direction* (all a cosine reads) is mostly its random start."""
    ids, pos = _blank_position(text, vocab)
    skip = [vocab.stoi[s] for s in (vocab.unk, "</s>") if s in vocab.stoi]
    if min_count > 0:
        skip += [i for i, n in enumerate(vocab.id_counts()) if n < min_count]
    return [(vocab.itos[i], s) for i, s in model.substitutes(ids, pos, k=k, exclude=skip)]


def context_similarity(model: Context2Vec, vocab: Vocab, text_a: str, text_b: str) -> float:
    """Cosine of the context vectors of two blanks (context-to-context similarity)."""
    a = model.context_vector(*_blank_position(text_a, vocab))
    b = model.context_vector(*_blank_position(text_b, vocab))
    return float(F.cosine_similarity(a, b, dim=0))


@dataclass
class BlankWidget:
    """The controls, the output and the box (display the object itself)."""

    model: Context2Vec
    vocab: Vocab
    text: object
    k: object
    output: object
    box: object
    calls: int = field(default=0)
    min_count: int = 0

    def update(self, *_: object) -> None:
        """Recompute from the controls (the callback of both)."""
        try:
            rows = fill_blank(self.model, self.vocab, self.text.value, int(self.k.value),
                              self.min_count)
            items = "".join(f"<li>{html.escape(w)} ({s:.2f})</li>" for w, s in rows)
            self.output.value = f"<ol>{items}</ol>"
        except ValueError as err:  # show a bad input, do not crash the widget
            self.output.value = f"<p><b>Cannot fill:</b> {html.escape(str(err))}</p>"
        self.calls += 1

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a notebook front end
        from IPython.display import display

        display(self.box)


def blank_widget(model: Context2Vec, vocab: Vocab, *, text: str = f"the {BLANK} barked", k: int = 8,
                 min_count: int = 0) -> BlankWidget:
    """A sentence box and a top-k slider; the list of fillers updates on every change."""
    import ipywidgets as w

    t = w.Text(value=text, description="sentence", continuous_update=False)
    kk = w.IntSlider(value=k, min=1, max=20, description="top k", continuous_update=False)
    out = w.HTML()
    bw = BlankWidget(model, vocab, t, kk, out, w.VBox([t, kk, out]), min_count=min_count)
    for control in (t, kk):
        control.observe(bw.update, names="value")
    bw.update()
    return bw


def mean_context_cosine(model: Context2Vec, vocab: Vocab, texts: list[str]) -> float:
    """The mean cosine over all pairs of the blanks' context vectors: near 1 when the contexts
    have collapsed onto one direction (the model ignores the context)."""
    if len(texts) < 2:
        raise ValueError(f"need at least two sentences with a blank, got {len(texts)}")
    import torch

    c = F.normalize(torch.stack([model.context_vector(*_blank_position(t, vocab)) for t in texts]), dim=-1)
    n = len(texts)
    return float(((c @ c.T).sum() - n) / (n * n - n))
