"""What the recurrent sentence encoders of chapter 5 share: ordered sentences, a vocabulary,
padding, batches of consecutive sentences, the GRU encoder, and encoding raw sentences in batches."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..data.text import tokenize
from ..data.vocab import Vocab

__all__ = ["BOS", "EOS", "PAD", "GRUEncoder", "OrderedSentences", "encode_in_batches", "oov_share", "pad_batch",
           "sentence_vocab"]

PAD, BOS, EOS = "<pad>", "<s>", "</s>"


def sentence_vocab(token_lists: Sequence[Sequence[str]], *, min_count: int = 1, max_size: int | None = None) -> Vocab:
    """A :class:`companion.data.Vocab` with ``<unk>`` (0), ``<pad>`` (1), ``<s>`` (2), ``</s>`` (3)."""
    return Vocab(token_lists, min_count=min_count, max_size=max_size, specials=(PAD, BOS, EOS))


def oov_share(vocab: Vocab, sentences: Sequence[str], tokenizer=tokenize) -> float:
    """The share of the tokens of ``sentences`` that ``vocab`` does not hold (they encode as
    ``<unk>``): what a vocabulary expansion can recover."""
    if isinstance(sentences, str):
        raise TypeError("oov_share takes a list of sentences, not one string")
    tokens = [t for s in sentences for t in tokenizer(s)]
    if not tokens:
        raise ValueError("the sentences hold no tokens")
    return sum(t not in vocab.stoi for t in tokens) / len(tokens)


@torch.no_grad()
def encode_in_batches(embed, model: nn.Module, vocab: Vocab, sentences: Sequence[str], max_len: int | None,
                      dim: int, batch_size: int = 256) -> torch.Tensor:
    """``[n, dim]`` vectors of raw sentences: each batch of ``batch_size`` sentences tokenized,
    cut to ``max_len`` tokens and padded (:func:`pad_batch`), then ``embed(ids, lengths)`` with
    ``model`` in eval mode on its device; the rows come back on the CPU (``[0, dim]`` for no
    sentences). The ``encode`` of every recurrent encoder's result."""
    model.eval()
    dev = next(model.parameters()).device
    pad = vocab.stoi[PAD]
    out = []
    for s in range(0, len(sentences), batch_size):
        ids, lengths = pad_batch([vocab.encode(tokenize(x)) for x in sentences[s:s + batch_size]], pad, max_len)
        out.append(embed(ids.to(dev), lengths).cpu())
    return torch.cat(out) if out else torch.zeros(0, dim)


def pad_batch(ids: Sequence[Sequence[int]], pad_id: int, max_len: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``[B, L]`` padded ids and ``[B]`` lengths (at least 1: an empty sentence becomes one pad
    token, so that a recurrent encoder still has a state to return)."""
    rows = [list(r)[:max_len] if max_len else list(r) for r in ids]
    lengths = torch.tensor([max(1, len(r)) for r in rows], dtype=torch.long)
    out = torch.full((len(rows), int(lengths.max()) if rows else 1), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out, lengths


class OrderedSentences:
    """Sentences in reading order with the document each belongs to (contexts stay inside one).

    Args:
        documents: a list of documents, each a list of raw sentences (strings), in order --
            e.g. :func:`companion.data.load_pretraining_corpus`.
        tokenizer: ``str -> list[str]``.
    """

    def __init__(self, documents: Sequence[Sequence[str]], tokenizer=tokenize) -> None:
        if isinstance(documents, str) or not isinstance(documents, Sequence) or not documents:
            raise TypeError("documents must be a non-empty list of documents, each a list of sentences (str)")
        self.tokens: list[list[str]] = []
        doc: list[int] = []
        for d, sents in enumerate(documents):
            if isinstance(sents, str) or not isinstance(sents, Sequence):
                raise TypeError(f"document {d} must be a list of sentences (str), got {type(sents).__name__}")
            for s in sents:
                if not isinstance(s, str):
                    raise TypeError(f"document {d} holds a {type(s).__name__}, not a sentence string")
                self.tokens.append(tokenizer(s))
                doc.append(d)
        if len(self.tokens) < 2:
            raise ValueError("need at least two sentences in order")
        self.doc = torch.tensor(doc, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.tokens)

    def batches(self, batch_size: int, seed: int) -> list[torch.Tensor]:
        """Runs of ``batch_size`` consecutive sentence indices, in a seeded random order."""
        if not isinstance(batch_size, int) or batch_size < 2:
            raise ValueError(f"batch_size must be an int >= 2 (a batch needs contexts), got {batch_size!r}")
        starts = torch.arange(0, len(self), batch_size)
        if len(self) - int(starts[-1]) < 2:  # a lone last sentence has no context in its batch
            starts = starts[:-1]
        order = torch.randperm(len(starts), generator=torch.Generator().manual_seed(seed))
        return [torch.arange(int(s), min(int(s) + batch_size, len(self))) for s in starts[order]]


class GRUEncoder(nn.Module):
    """Word embeddings and a one-layer GRU; the sentence vector is the last hidden state."""

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, pad_id: int,
                 embedding: nn.Embedding | None = None) -> None:
        super().__init__()
        self.embedding = embedding or nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.gru = nn.GRU(self.embedding.embedding_dim, hidden, batch_first=True)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embedding(ids)
        # packing: the state after each sentence's last real word, not after its padding
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return h[-1]
