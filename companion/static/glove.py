"""GloVe: global vectors from a weighted least-squares fit of log co-occurrences
(Pennington, Socher & Manning 2014).

For every non-zero entry ``X_ij`` of the co-occurrence matrix (:mod:`.cooccur`), GloVe asks
the word vector ``w_i``, the context vector ``w~_j`` and two biases to explain its logarithm:

    J = sum_{i,j: X_ij > 0}  f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2

with the weighting ``f(x) = min(1, (x / x_max)^alpha)``, ``alpha = 3/4``: rare pairs (noisy)
count less, and frequent pairs are capped so that "the" does not dominate. ``x_max = 100`` is
the code's default; the text8 demo script uses 10 (a small corpus has smaller counts).

**Training, as in the reference C code (``glove.c``).** AdaGrad on single entries, in a shuffled
order; each parameter (every coordinate of every vector and bias) has its own accumulator
``G``, *initialised to 1* so that the first step equals the plain learning rate ``eta = 0.05``.
The code's step for an entry with residual ``diff`` is, for ``w_i`` (the others alike)::

    g = f(X_ij) * diff * w~_j          # the gradient of  1/2 f diff^2   (the code's cost)
    w_i -= eta * g / sqrt(G)           # G from *before* this step
    G   += (eta * g)^2                 # the accumulator holds squared *steps*, not gradients

Two details differ from the textbook AdaGrad (Duchi et al. 2011) and from
``torch.optim.Adagrad``: the code divides by the accumulator from *before* adding the current
gradient, and it accumulates ``(eta g)^2`` rather than ``g^2``. ``adagrad="c"`` reproduces the
code; ``adagrad="duchi"`` is the textbook rule (``G += g^2``, then ``w -= eta g / (sqrt(G) +
1e-10)``), which is exactly ``torch.optim.Adagrad(lr=eta, initial_accumulator_value=1,
eps=1e-10)`` -- the tests check both.

**Batches.** PyTorch is fast on a *batch* of entries, the C code goes one entry at a time. With
``adagrad="c"`` every entry of a batch takes the code's step with the accumulators from before
the batch, and every entry's squared step is then added: with ``batch_size=1`` this is exactly
the C code, and measured on Brown the cost after 3 epochs was the same for batches of 128 and
16,384 entries (0.0446 vs 0.0447 per entry). The textbook rule on the batch's *summed* gradient
(what ``torch.optim.Adagrad`` does with a batch loss) learns a word that appears ``n`` times in
a batch about as if it appeared once -- on a planted low-rank matrix it was still far from the
optimum after 60 epochs where the C rule had converged -- so it is there for comparison (and
for the ``engine="autograd"`` path through :func:`companion.train.fit`), not as the default.

GloVe on a small corpus needs many epochs: on the chapter's 3M tokens (d = 100, x_max = 10)
WordSim-353 rose from 0.06 after 2 epochs to 0.32 after 10 and 0.35 after 20 (measured here).

The vectors to use are ``w + w~`` (the code's ``-model 2``, the paper's choice): ``X`` is
symmetric, so the two sets differ only by their random start, and the sum is a little better.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..device import get_device
from ..train import History, TrainConfig, fit, seed_everything
from ..word2vec._loop import check_max_vocab, check_positive_ints, check_run_fields, intra_op_threads, train_epochs
from ..word2vec.corpus import EncodedCorpus, Word2VecVocab
from ..word2vec.export import save_word2vec_format
from ..word2vec.trainer import TrainedVectors, resolve_config
from .cooccur import Cooccurrence, cooccurrence_matrix

__all__ = ["weighting", "GloVeConfig", "GloVe", "GloVeResult", "train_glove", "glove_batches", "ADAGRAD", "ENGINES"]

ADAGRAD = ("c", "duchi")
ENGINES = ("adagrad", "autograd")
WHICH = ("sum", "word", "context")


def weighting(x: torch.Tensor, x_max: float = 100.0, alpha: float = 0.75) -> torch.Tensor:
    """GloVe's ``f(x) = min(1, (x / x_max)^alpha)`` (``f(0) = 0``).

    Example:
        >>> [round(v, 4) for v in weighting(torch.tensor([0.0, 10.0, 100.0, 1e4]), x_max=100.0).tolist()]
        [0.0, 0.1778, 1.0, 1.0]
    """
    if not (isinstance(x_max, (int, float)) and x_max > 0 and math.isfinite(x_max)):
        raise ValueError(f"x_max must be a positive number (100 in the paper, 10 in the text8 demo), got {x_max!r}")
    if not (isinstance(alpha, (int, float)) and alpha > 0):
        raise ValueError(f"alpha must be positive (the paper uses 3/4), got {alpha!r}")
    x = torch.as_tensor(x)
    if bool((x < 0).any()):
        raise ValueError("co-occurrence counts must be >= 0")
    return (x / x_max).pow(alpha).clamp(max=1.0)


@dataclass
class GloVeConfig:
    """GloVe's hyperparameters, named and defaulted as in the reference code where it has them.

    Attributes:
        dim: vector size (``-vector-size``; the code's default is 50, we use 100 like word2vec).
        window: co-occurrence window (``cooccur -window-size``; the code's default is 15,
            the text8 demo uses 15; we default to 10).
        x_max, alpha: the weighting function (``-x-max 100``, ``-alpha 0.75``).
        lr: AdaGrad's initial learning rate (``-eta 0.05``).
        epochs: passes over the non-zero entries (``-iter``, 25 in the code, 15 in the demo).
        adagrad: ``"c"`` (the reference code's rule) or ``"duchi"`` (textbook, = torch's).
        batch_size: entries per step (1 = the C code's per-entry SGD). Within a batch a frequent
            word's steps add up before its accumulator grows: on the chapter corpus 16,384
            trained well at lr 0.1 and 65,536 diverged in the first epoch.
        min_count, max_vocab: vocabulary (``vocab_count -min-count 5``).
        symmetric, distance_weighting: how ``X`` is counted (both on in the code).
        engine: ``"adagrad"`` (hand-written step) or ``"autograd"`` (``companion.train.fit`` with
            ``torch.optim.Adagrad``; implies the Duchi rule).
        workers: Hogwild threads taking whole batches (the C code's ``-threads``); more than 1
            makes runs non-deterministic. Ignored (1) on a GPU.
        threads: torch's intra-op threads while training (``None``: leave torch's setting).
        seed: seeds the initial vectors and the shuffling.
        device: ``None`` picks cuda > mps > cpu.
        progress: show a progress bar.
    """

    dim: int = 100
    window: int = 10
    x_max: float = 100.0
    alpha: float = 0.75
    lr: float = 0.05
    epochs: int = 25
    adagrad: str = "c"
    batch_size: int = 8192
    min_count: int = 5
    max_vocab: int | None = None
    symmetric: bool = True
    distance_weighting: bool = True
    engine: str = "adagrad"
    workers: int = 1
    threads: int | None = 1
    seed: int = 0
    device: str | None = None
    progress: bool = False

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field and what it accepts."""
        check_positive_ints(self, ("dim", "window", "epochs", "batch_size", "min_count"))
        check_max_vocab(self.max_vocab)
        if not (isinstance(self.x_max, (int, float)) and self.x_max > 0 and math.isfinite(self.x_max)):
            raise ValueError(f"x_max must be a positive number (100 in the paper, 10 in the text8 demo), got {self.x_max!r}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha <= 10):
            raise ValueError(f"alpha must be a positive number (the paper uses 0.75), got {self.alpha!r}")
        if not (isinstance(self.lr, (int, float)) and 0 < self.lr < 10 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number (0.05 in the code), got {self.lr!r}")
        if self.adagrad not in ADAGRAD:
            raise ValueError(f"adagrad must be one of {ADAGRAD} (the C code's rule or the textbook's), got {self.adagrad!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        check_run_fields(self, "adagrad")


class GloVe(nn.Module):
    """Word vectors ``w``, context vectors ``w~`` and their biases, with GloVe's loss and step.

    Initialised as the C code does: every number uniform in ``[-0.5, 0.5) / (dim + 1)``; the
    AdaGrad accumulators (buffers) start at 1.

    Args:
        vocab_size: ``V``.
        dim: vector size.
        x_max, alpha: the weighting function.
        seed: seeds the initial values.
    """

    def __init__(self, vocab_size: int, dim: int = 100, *, x_max: float = 100.0, alpha: float = 0.75, seed: int = 0):
        super().__init__()
        if not isinstance(vocab_size, int) or vocab_size < 2:
            raise ValueError(f"vocab_size must be an int >= 2, got {vocab_size!r}")
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        weighting(torch.zeros(1), x_max, alpha)  # validates x_max and alpha
        self.vocab_size, self.dim, self.x_max, self.alpha = vocab_size, dim, float(x_max), float(alpha)
        gen = torch.Generator().manual_seed(int(seed))

        def init(*shape: int) -> nn.Parameter:
            return nn.Parameter((torch.rand(*shape, generator=gen) - 0.5) / (dim + 1))

        self.w, self.c = init(vocab_size, dim), init(vocab_size, dim)  # w and w~
        self.b, self.bc = init(vocab_size), init(vocab_size)  # b and b~
        for name in ("w", "c", "b", "bc"):
            self.register_buffer("G_" + name, torch.ones_like(getattr(self, name)))
        self.sparse_grad = False

    def _check(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor) -> None:
        if not (i.shape == j.shape == x.shape) or i.dim() != 1:
            raise ValueError(f"i, j and x must be 1-D and equally long, got {tuple(i.shape)}, {tuple(j.shape)}, {tuple(x.shape)}")
        if i.dtype not in (torch.int64, torch.int32) or j.dtype not in (torch.int64, torch.int32):
            raise ValueError("i and j must be integer word ids")
        if i.numel() and (int(torch.minimum(i.min(), j.min())) < 0 or int(torch.maximum(i.max(), j.max())) >= self.vocab_size):
            raise ValueError(f"word ids must be in 0..{self.vocab_size - 1}")
        if x.numel() and not bool((x > 0).all()):
            raise ValueError("GloVe is fitted to non-zero entries only: every x must be > 0 (log 0 is undefined)")

    def residual(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``w_i . w~_j + b_i + b~_j - log X_ij`` per entry (differentiable)."""
        self._check(i, j, x)
        if self.sparse_grad:
            wi, cj = F.embedding(i, self.w, sparse=True), F.embedding(j, self.c, sparse=True)
        else:
            wi, cj = self.w[i], self.c[j]
        return (wi * cj).sum(1) + self.b[i] + self.bc[j] - torch.log(x.to(wi.dtype))

    def entry_loss(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2`` per entry: the paper's summand."""
        diff = self.residual(i, j, x)
        return weighting(x, self.x_max, self.alpha).to(diff.dtype) * diff.pow(2)

    def loss(self, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """Half the summed paper loss of a batch ``(i, j, x)``: the C code's cost, whose gradient
        its step uses (the 1/2 only rescales the learning rate)."""
        i, j, x = batch
        return 0.5 * self.entry_loss(i, j, x).sum()

    @torch.no_grad()
    def objective(self, cooc: Cooccurrence, batch_size: int = 1 << 18) -> float:
        """The paper's ``J`` over every non-zero entry of ``cooc`` (no 1/2)."""
        i, j, x = (t.to(self.w.device) for t in cooc.entries())
        total = 0.0
        for s in range(0, i.numel(), batch_size):
            total += float(self.entry_loss(i[s:s + batch_size], j[s:s + batch_size], x[s:s + batch_size]).double().sum())
        return total

    @torch.no_grad()
    def adagrad_step(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor, lr: float = 0.05, rule: str = "c") -> float:
        """One AdaGrad step on a batch of entries, by hand; returns the summed cost ``1/2 f diff^2``.

        ``rule="c"``: the reference code's per-entry update, batched: every entry of the batch
        takes its step with the accumulators from *before* the batch, and every entry's squared
        step is added to them (not the square of the summed step -- that would make a word seen
        ``n`` times in a batch learn as if seen once). With ``batch_size=1`` this is exactly the
        C code. ``rule="duchi"``: the textbook rule on the batch's summed gradient, exactly what
        ``torch.optim.Adagrad(initial_accumulator_value=1, eps=1e-10)`` does with the summed loss.

        Only the rows the batch touches are read and written: each distinct row is gathered
        once, the per-entry vectors come from that small block, and the summed gradients go
        back with one ``index_copy_`` per matrix.
        """
        if rule not in ADAGRAD:
            raise ValueError(f"rule must be one of {ADAGRAD}, got {rule!r}")
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        self._check(i, j, x)
        ui, inv_i = torch.unique(i, return_inverse=True)
        uj, inv_j = torch.unique(j, return_inverse=True)
        W, C = self.w.index_select(0, ui), self.c.index_select(0, uj)
        B, Bc = self.b.index_select(0, ui), self.bc.index_select(0, uj)
        wi, cj = W.index_select(0, inv_i), C.index_select(0, inv_j)  # values from before the step
        dot = torch.bmm(wi.unsqueeze(1), cj.unsqueeze(2)).view(-1)
        diff = dot + B[inv_i] + Bc[inv_j] - torch.log(x.to(wi.dtype))
        fdiff = weighting(x, self.x_max, self.alpha).to(diff.dtype) * diff
        cost = 0.5 * float(torch.dot(fdiff, diff))
        gw = cj.mul_(fdiff.unsqueeze(1))  # per-entry gradients, in place (wi, cj are copies)
        gc = wi.mul_(fdiff.unsqueeze(1))
        parts = ((self.w, self.G_w, ui, inv_i, W, gw), (self.c, self.G_c, uj, inv_j, C, gc),
                 (self.b, self.G_b, ui, inv_i, B, fdiff), (self.bc, self.G_bc, uj, inv_j, Bc, fdiff))
        for param, acc, rows, inv, value, g in parts:
            g_sum = torch.zeros_like(value).index_add_(0, inv, g)
            G = acc.index_select(0, rows)
            if rule == "c":
                # the entries' steps with the accumulator from before the batch, then every
                # entry's squared step added: batch_size=1 is exactly the C code
                g_sq = torch.zeros_like(value).index_add_(0, inv, g.square() if g is fdiff else g.square_())
                param.index_copy_(0, rows, torch.addcdiv(value, g_sum, G.sqrt(), value=-lr))
                acc.index_copy_(0, rows, G.add_(g_sq, alpha=lr * lr))
            else:
                G.addcmul_(g_sum, g_sum)
                acc.index_copy_(0, rows, G)
                param.index_copy_(0, rows, torch.addcdiv(value, g_sum, G.sqrt().add_(1e-10), value=-lr))
        return cost

    def vectors(self, which: str = "sum") -> torch.Tensor:
        """``[V, d]`` float32 on the CPU: ``"sum"`` (``w + w~``, the default), ``"word"`` or ``"context"``."""
        if which not in WHICH:
            raise ValueError(f"which must be one of {WHICH}, got {which!r}")
        w, c = self.w.detach(), self.c.detach()
        out = {"sum": w + c, "word": w, "context": c}[which]
        return out.float().cpu().clone()


def glove_batches(
    i: torch.Tensor, j: torch.Tensor, x: torch.Tensor, batch_size: int, *, seed: int = 0, epoch: int = 0
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The entries in a fresh random order for each ``(seed, epoch)``, ``batch_size`` at a time.

    (The C code shuffles the entries once, with ``shuffle``; a new order every epoch is the
    usual choice in re-implementations and avoids repeating one order's bias.)
    """
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + int(epoch))
    perm = torch.randperm(i.numel(), generator=gen).to(i.device)
    for s in range(0, perm.numel(), batch_size):
        p = perm[s:s + batch_size]
        yield i[p], j[p], x[p]


@dataclass
class GloVeResult(TrainedVectors):
    """A trained GloVe with its vocabulary, co-occurrence matrix and training record.

    Attributes:
        model: the :class:`GloVe`.
        vocab: row ``i`` of the vectors is ``vocab.itos[i]``.
        cooc: the :class:`~.cooccur.Cooccurrence` it was fitted to.
        history: ``companion.train.History`` (``epoch_loss`` = mean cost ``1/2 f diff^2`` per
            entry, as the C code prints; ``items`` = entries processed).
        config: the :class:`GloVeConfig`.
        count_seconds: time spent counting ``X``.
    """

    model: GloVe
    vocab: Word2VecVocab
    cooc: Cooccurrence
    history: History
    config: GloVeConfig
    count_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def vectors(self, which: str = "sum") -> torch.Tensor:
        """``[V, d]`` vectors; see :meth:`GloVe.vectors`."""
        return self.model.vectors(which)

    def save(self, path: str, which: str = "sum") -> Any:
        """Write the vectors in the word2vec text format."""
        return save_word2vec_format(path, self.vocab.itos, self.vectors(which))

    def summary(self) -> dict[str, Any]:
        """One row for a results table."""
        return {
            "model": "GloVe",
            "vocab": len(self.vocab),
            "nonzeros": self.cooc.nnz,
            "epochs": len(self.history.epoch_loss),
            "final cost": self._final_loss(),
            "count s": self.count_seconds,
            "s/epoch": self.seconds_per_epoch,
        }


def _train_by_hand(model: GloVe, ijx: tuple[torch.Tensor, ...], config: GloVeConfig, device: torch.device) -> History:
    i, j, x = ijx

    def step(batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> tuple[float, int, int]:
        n = int(batch[0].numel())
        return model.adagrad_step(*batch, config.lr, config.adagrad) / n, n, n

    hist = train_epochs(lambda epoch: glove_batches(i, j, x, config.batch_size, seed=config.seed, epoch=epoch), step,
                        epochs=config.epochs, device=device, workers=config.workers if device.type == "cpu" else 1,
                        threads=config.threads, progress_total=i.numel() * config.epochs if config.progress else None,
                        unit="entry")
    return hist


def _train_autograd(model: GloVe, ijx: tuple[torch.Tensor, ...], config: GloVeConfig) -> History:
    i, j, x = ijx
    model.sparse_grad = True
    opt = torch.optim.Adagrad(model.parameters(), lr=config.lr, initial_accumulator_value=1.0, eps=1e-10)
    tc = TrainConfig(epochs=config.epochs, lr=config.lr, optimizer="adagrad", clip_grad_norm=None, seed=config.seed,
                     device=config.device, progress=config.progress, restore_best=False)
    try:
        # torch.optim.Adagrad builds sparse tensors it knows are valid; skip re-checking them
        with torch.sparse.check_sparse_tensor_invariants(enable=False), intra_op_threads(config.threads):
            hist = fit(model, lambda epoch: glove_batches(i, j, x, config.batch_size, seed=config.seed, epoch=epoch),
                       config=tc, optimizer=opt, count_fn=lambda b: int(b[0].numel()))
    finally:
        model.sparse_grad = False
    # fit records the mean batch loss; report the mean cost per entry like the other engine
    n_batches = math.ceil(i.numel() / config.batch_size)
    hist.epoch_loss = [v * n_batches / i.numel() for v in hist.epoch_loss]
    return hist


def train_glove(
    data: Cooccurrence | EncodedCorpus | Sequence[Sequence[str]],
    config: GloVeConfig | None = None,
    **overrides: Any,
) -> GloVeResult:
    """Count co-occurrences (unless given), fit GloVe, return a :class:`GloVeResult`.

    Args:
        data: a :class:`~.cooccur.Cooccurrence`, an encoded corpus, or a list of token lists.
        config: a :class:`GloVeConfig`; ``overrides`` replace its fields.

    Example:
        >>> sents = [["ice", "is", "solid"], ["steam", "is", "gas"]] * 20
        >>> res = train_glove(sents, dim=4, window=2, min_count=1, epochs=2, x_max=10.0)
        >>> res.vectors().shape
        torch.Size([5, 4])
    """
    config = resolve_config(GloVeConfig, config, overrides)
    t0 = time.perf_counter()
    if isinstance(data, Cooccurrence):
        cooc = data
    else:
        cooc = cooccurrence_matrix(data, config.window, symmetric=config.symmetric,
                                   distance_weighting=config.distance_weighting,
                                   min_count=config.min_count, max_vocab=config.max_vocab)
    count_seconds = time.perf_counter() - t0
    if cooc.nnz == 0:
        raise ValueError("the co-occurrence matrix is empty: no two vocabulary words share a window")
    device = get_device(config.device)
    seed_everything(config.seed)
    model = GloVe(len(cooc.vocab), config.dim, x_max=config.x_max, alpha=config.alpha, seed=config.seed).to(device)
    i, j, x = cooc.entries()
    ijx = (i.to(device), j.to(device), x.to(device=device, dtype=torch.float32))
    if config.engine == "adagrad":
        hist = _train_by_hand(model, ijx, config, device)
    else:
        hist = _train_autograd(model, ijx, config)
    return GloVeResult(model, cooc.vocab, cooc, hist, config, count_seconds)
