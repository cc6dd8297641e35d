"""Semi-supervised sequence learning (Dai & Le 2015): pre-train an LSTM as a sequence
autoencoder on unlabelled text, then fine-tune the same weights as a classifier.

The **sequence autoencoder** (:class:`SeqAutoencoder`) reads a sequence with an encoder LSTM
and must write the same sequence again with a decoder LSTM that starts from the encoder's
final state: everything the decoder needs passes through one vector. The **classifier**
(:class:`LSTMClassifier`) has the encoder's shape (embeddings + LSTM) and a linear layer on the
final hidden state; :func:`init_from_autoencoder` copies the pre-trained embeddings and
encoder LSTM into it (Dai & Le's SA-LSTM). The same classifier with random weights is the
baseline. Both train with :func:`companion.train.fit`.

Texts become ids through the book's tokenizer and a :class:`companion.data.vocab.Vocab`
(:func:`build_vocab`, :func:`encode_texts`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..data.text import tokenize
from ..data.vocab import Vocab
from ..train import History, TrainConfig, fit

PAD, GO = "<pad>", "<go>"


@dataclass
class SeqAEConfig:
    """Sizes of the autoencoder and of the classifier that shares its encoder."""

    vocab_size: int
    d_emb: int = 128
    d_hidden: int = 256
    dropout: float = 0.1
    pad_id: int = 1
    go_id: int = 2

    def __post_init__(self) -> None:
        for k in ("vocab_size", "d_emb", "d_hidden"):
            v = getattr(self, k)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{k} must be a positive int, got {v!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        for k in ("pad_id", "go_id"):
            if not 0 <= getattr(self, k) < self.vocab_size:
                raise ValueError(f"{k} must be an id below vocab_size={self.vocab_size}, got {getattr(self, k)!r}")


def build_vocab(texts: Sequence[str], max_size: int) -> Vocab:
    """The ``max_size`` most frequent words of ``texts`` (book tokenizer, lower case), with
    ``<unk>`` = 0, ``<pad>`` = 1 and ``<go>`` = 2."""
    counts = Counter(w for t in texts for w in tokenize(t))
    return Vocab(counts, max_size=max_size, specials=(PAD, GO))


def encode_texts(vocab: Vocab, texts: Sequence[str], max_len: int, keep: str = "last") -> list[list[int]]:
    """Ids of each text, cut to ``max_len`` tokens (``keep="last"``: the end of a review, where
    its verdict usually is; ``"first"``: the beginning). An empty text becomes ``[<unk>]``."""
    if keep not in ("first", "last"):
        raise ValueError(f"keep must be 'first' or 'last', got {keep!r}")
    out = []
    for t in texts:
        ids = vocab.encode(tokenize(t)) or [vocab.unk_id]
        out.append(ids[-max_len:] if keep == "last" else ids[:max_len])
    return out


def pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``([B, T] ids, [B] lengths)``, right-padded with ``pad_id``."""
    if not len(seqs) or any(len(s) == 0 for s in seqs):
        raise ValueError("pad needs a non-empty list of non-empty sequences")
    lengths = torch.tensor([len(s) for s in seqs])
    out = torch.full((len(seqs), int(lengths.max())), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.as_tensor(s)
    return out, lengths


class _Encoder(nn.Module):
    """Embeddings and one LSTM: the part the autoencoder and the classifier share."""

    def __init__(self, c: SeqAEConfig):
        super().__init__()
        self.emb = nn.Embedding(c.vocab_size, c.d_emb, padding_idx=c.pad_id)
        self.lstm = nn.LSTM(c.d_emb, c.d_hidden, batch_first=True)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor):
        x = self.drop(self.emb(ids))
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, c) = self.lstm(packed)
        return h, c  # [1, B, d_hidden] each: the state after each sequence's last real token


class SeqAutoencoder(nn.Module):
    """Dai & Le's sequence autoencoder: encode ``w_1..w_T`` into the LSTM's final state, then
    decode ``w_1..w_T`` again from it, the decoder reading ``<go>, w_1..w_{T-1}`` (teacher
    forcing). ``loss``: the mean cross-entropy of the reconstruction over real tokens."""

    def __init__(self, config: SeqAEConfig, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.config = config
        self.encoder = _Encoder(config)
        self.decoder = nn.LSTM(config.d_emb, config.d_hidden, batch_first=True)
        self.out = nn.Linear(config.d_hidden, config.vocab_size)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Reconstruction logits ``[B, T, V]``."""
        state = self.encoder(ids, lengths)
        go = torch.full_like(ids[:, :1], self.config.go_id)
        dec_in = self.encoder.drop(self.encoder.emb(torch.cat([go, ids[:, :-1]], 1)))
        h, _ = self.decoder(dec_in, state)
        return self.out(self.encoder.drop(h))

    def loss(self, b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        ids, lengths = b[0], b[1]
        logits = self(ids, lengths)
        return F.cross_entropy(logits.flatten(0, 1), ids.flatten(), ignore_index=self.config.pad_id)

    @torch.no_grad()
    def reconstruct(self, seqs: Sequence[Sequence[int]]) -> list[list[int]]:
        """Greedy decoding of each sequence from its own code (eval mode), as many tokens as
        it has."""
        self.eval()
        ids, lengths = pad(seqs, self.config.pad_id)
        ids = ids.to(next(self.parameters()).device)
        h, c = self.encoder(ids, lengths)
        tok = torch.full_like(ids[:, :1], self.config.go_id)
        outs = []
        for _ in range(ids.shape[1]):
            y, (h, c) = self.decoder(self.encoder.emb(tok), (h, c))
            tok = self.out(y).argmax(-1)
            outs.append(tok)
        full = torch.cat(outs, 1).cpu()
        return [full[i, :n].tolist() for i, n in enumerate(lengths.tolist())]


class LSTMClassifier(nn.Module):
    """The autoencoder's encoder with a linear layer on its final hidden state."""

    def __init__(self, config: SeqAEConfig, n_classes: int = 2, seed: int = 0):
        super().__init__()
        if not isinstance(n_classes, int) or n_classes < 2:
            raise ValueError(f"n_classes must be an int >= 2, got {n_classes!r}")
        torch.manual_seed(seed)
        self.config = config
        self.encoder = _Encoder(config)
        self.head = nn.Linear(config.d_hidden, n_classes)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        h, _ = self.encoder(ids, lengths)
        return self.head(self.encoder.drop(h[-1]))

    def loss(self, b) -> torch.Tensor:
        return F.cross_entropy(self(b[0], b[1]), b[2])


def init_from_autoencoder(classifier: LSTMClassifier, autoencoder: SeqAutoencoder) -> LSTMClassifier:
    """Copy the pre-trained embeddings and encoder LSTM into ``classifier`` (the head stays
    as initialised). Returns ``classifier``."""
    if classifier.config.vocab_size != autoencoder.config.vocab_size or \
            classifier.config.d_hidden != autoencoder.config.d_hidden or \
            classifier.config.d_emb != autoencoder.config.d_emb:
        raise ValueError(f"sizes differ: classifier {classifier.config}, autoencoder {autoencoder.config}")
    classifier.encoder.load_state_dict(autoencoder.encoder.state_dict())
    return classifier


def sequence_batches(seqs: Sequence[Sequence[int]], pad_id: int, batch_size: int, seed: int,
                     labels: Sequence[int] | None = None):
    """``epoch -> batches`` of ``(ids, lengths[, labels])``, shuffled with a seed per epoch."""
    if labels is not None and len(labels) != len(seqs):
        raise ValueError(f"{len(seqs)} sequences but {len(labels)} labels")

    def make(e: int) -> list:
        order = torch.randperm(len(seqs), generator=torch.Generator().manual_seed(seed * 1000 + e)).tolist()
        out = []
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            ids, lengths = pad([seqs[j] for j in idx], pad_id)
            out.append((ids, lengths) if labels is None else
                       (ids, lengths, torch.tensor([int(labels[j]) for j in idx])))
        return out
    return make


def pretrain(model: SeqAutoencoder, seqs: Sequence[Sequence[int]], *, steps: int, batch_size: int = 32,
             lr: float = 1e-3, seed: int = 0, device: str | None = None, progress: bool = False) -> History:
    """Train the autoencoder to reconstruct ``seqs`` for ``steps`` Adam steps (``fit``)."""
    batches = sequence_batches(seqs, model.config.pad_id, batch_size, seed)
    epochs = -(-steps // len(batches(0)))
    cfg = TrainConfig(epochs=epochs, lr=lr, seed=seed, device=device, max_steps=steps,
                      clip_grad_norm=1.0, progress=progress)
    return fit(model, batches, config=cfg)


def train_classifier(model: LSTMClassifier, seqs, labels, *, epochs: int, batch_size: int = 32,
                     lr: float = 1e-3, seed: int = 0, device: str | None = None) -> History:
    """Fine-tune the classifier (every weight) with Adam (``fit``)."""
    batches = sequence_batches(seqs, model.config.pad_id, batch_size, seed, labels)
    cfg = TrainConfig(epochs=epochs, lr=lr, seed=seed, device=device, clip_grad_norm=1.0, progress=False)
    return fit(model, batches, config=cfg)


@torch.no_grad()
def accuracy(model: LSTMClassifier, seqs, labels, batch_size: int = 256) -> float:
    """Accuracy x 100 of ``model`` on ``seqs`` (eval mode)."""
    model.eval()
    dev = next(model.parameters()).device
    right = 0
    for i in range(0, len(seqs), batch_size):
        ids, lengths = pad(seqs[i:i + batch_size], model.config.pad_id)
        pred = model(ids.to(dev), lengths).argmax(-1).cpu()
        right += int((pred == torch.tensor([int(v) for v in labels[i:i + batch_size]])).sum())
    return 100.0 * right / len(seqs)


def token_accuracy(model: SeqAutoencoder, seqs: Sequence[Sequence[int]]) -> float:
    """Share of tokens that greedy :meth:`SeqAutoencoder.reconstruct` gets right, in [0, 1]."""
    rec = model.reconstruct(seqs)
    right = sum(int(a == b) for s, r in zip(seqs, rec) for a, b in zip(s, r))
    return right / sum(len(s) for s in seqs)


def bag_of_words_baseline(train_seqs, train_labels, test_seqs, test_labels, vocab_size: int, C: float = 1.0) -> float:
    """Accuracy x 100 of a logistic regression on word counts trained on the same labels: the
    shortcut an LSTM must beat to show it learned more than which words occur."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    def mat(seqs):
        rows = [i for i, s in enumerate(seqs) for _ in s]
        cols = [w for s in seqs for w in s]
        return csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(seqs), vocab_size))

    clf = LogisticRegression(C=C, max_iter=2000).fit(mat(train_seqs), list(train_labels))
    return 100.0 * float((clf.predict(mat(test_seqs)) == np.array(test_labels)).mean())
