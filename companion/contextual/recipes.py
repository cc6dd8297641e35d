"""Chapter 6a's runs: sizes per scale, the corpora as id streams, and the ULMFiT experiments
(learning curve and ablation) as functions returning tidy rows, so the notebook stays short.

Scales (``BOOK_SCALE``): ``ci`` smoke-tests every path in seconds; ``laptop`` is what the book
shows (tiny models, minutes on 2 CPU cores); ``gpu`` presets are written for a GPU run (not yet
run on a GPU; no stored results yet).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from ..data.vocab import Vocab
from ..scale import pick
from .context2vec import Context2VecConfig
from .lstm_lm import LMPlan, LSTMLMConfig
from .ulmfit import (
    AWDLSTM,
    AWDLSTMLM,
    AWDLSTMConfig,
    ConcatPoolClassifier,
    FineTunePlan,
    accuracy,
    concat_pool,
    pad_batch,
    train_classifier,
)

SPECIALS = ("<pad>", "</s>")


def tokenize(text: str) -> list[str]:
    """Lower-case and split on whitespace (SST-2 and the corpora are already tokenized)."""
    return text.lower().split()


def lstm_preset(vocab_size: int, scale: str | None = None) -> tuple[LSTMLMConfig, LMPlan]:
    """The Brown LSTM LM: chapter 2's tree softmax so a CPU can afford |V| = 13,190 (laptop: one
    epoch, about 26,000 training tokens/s of CPU time on one core of the machine that wrote it).

    The laptop plan's rate decays linearly from 0.02 to 0.001 over its one epoch. Measured on
    Brown's test set, same model, same epoch, one seed: Adam at a constant 0.003 gave 154.5
    (above the KN 5-gram's 150.2); 0.01 -> 0.001 gave 138.4; 0.02 -> 0.001 gave 127.2; a decay
    from 0.003 to 0.0003 without dropout gave 169.0; batches of 32 instead of 64 (twice the
    steps, 1.2x the time) 144.5 at a constant 0.003 and 129.6 at 0.01 -> 0.001."""
    cfg = pick(ci=LSTMLMConfig(vocab_size, emb_dim=32, hidden=64, output="hsoftmax", dropout=0.1),
               laptop=LSTMLMConfig(vocab_size, emb_dim=64, hidden=128, output="hsoftmax", dropout=0.1),
               gpu=LSTMLMConfig(vocab_size, emb_dim=400, hidden=650, n_layers=2, output="full",
                                tie_weights=True, dropout=0.5), scale=scale)
    plan = pick(ci=LMPlan(batch_size=32, seq_len=35, lr=2e-2, lr_final=1e-3, max_steps=40, evals=1,
                          eval_tokens=5_000),
                laptop=LMPlan(batch_size=64, seq_len=35, lr=2e-2, lr_final=1e-3, epochs=1, evals=4,
                              eval_tokens=20_000),
                gpu=LMPlan(batch_size=32, seq_len=35, lr=1e-3, epochs=20, evals=40, eval_tokens=200_000),
                scale=scale)
    return cfg, plan


#: Zaremba et al. (2014)'s small model on PTB: its published test perplexity (not ours)
ZAREMBA_SMALL_TEST_PPL = 114.5


def ptb_preset(vocab_size: int, scale: str | None = None) -> tuple[LSTMLMConfig, LMPlan]:
    """Zaremba et al. (2014)'s *small* LSTM on Mikolov's PTB: two layers of 200 units, 200-wide
    embeddings, no dropout, a full softmax over 10,000 words; plain SGD at lr 1, batches of 20
    streams of 20 steps, gradients clipped at norm 5, 13 epochs, the rate halved every epoch
    after the fourth. The ``gpu`` preset is that recipe (their initialisation, uniform in
    +-0.1, differs a little from ``nn.LSTM``'s +-1/sqrt(200)).

    The ``laptop`` preset keeps the network's shape but is cut to fit a few CPU minutes, and its
    number is not comparable with 114.5: the tree softmax instead of the full one (several times
    cheaper on a CPU), Adam with a linearly decaying rate instead of SGD (fewer steps to a
    reasonable model) and ``max_steps`` batches of 20 x 35 tokens, a fraction of one epoch
    instead of 13. ``ci`` is a smoke test of the same path. Measured with the laptop preset (one
    seed): 500 steps, 0.38 of an epoch, test perplexity 224.9; 600 steps gave 207.1 (61 CPU-s
    of training on one thread).
    """
    shape = {"emb_dim": 200, "hidden": 200, "n_layers": 2, "dropout": 0.0}
    cfg = pick(ci=LSTMLMConfig(vocab_size, emb_dim=32, hidden=32, n_layers=2, dropout=0.0, output="hsoftmax"),
               laptop=LSTMLMConfig(vocab_size, **shape, output="hsoftmax"),
               gpu=LSTMLMConfig(vocab_size, **shape, output="full"), scale=scale)
    plan = pick(ci=LMPlan(batch_size=20, seq_len=35, max_steps=20, evals=1, eval_tokens=5_000),
                laptop=LMPlan(batch_size=20, seq_len=35, lr=1e-2, lr_final=1e-3, max_steps=500,
                              evals=2, eval_tokens=20_000),
                gpu=LMPlan(batch_size=20, seq_len=20, lr=1.0, optimizer="sgd", clip=5.0, epochs=13,
                           halve_after=4, evals=26, eval_tokens=80_000),
                scale=scale)
    return cfg, plan


def ptb_plan(scale: str | None = None) -> LMPlan:
    """The training plan of :func:`ptb_preset` (kept for callers that build their own model)."""
    return ptb_preset(10_000, scale)[1]


def ptb_run(splits: dict[str, Sequence[Sequence[str]]], scale: str | None = None, *,
            device: str | None = None, progress: bool = False) -> dict:
    """Train :func:`ptb_preset`'s model on ``splits`` (``{"train", "valid", "test"}`` token
    lists, e.g. :func:`companion.data.lm_corpora.load_ptb_lm`) and score it: the test
    perplexity over every token, the best validation perplexity (on the plan's
    ``eval_tokens``), the training time, the tokens seen and their share of one epoch."""
    from ..data.vocab import Vocab as _Vocab
    from .lstm_lm import LSTMLM, sentence_stream, stream_perplexity, train_lstm_lm

    vocab = _Vocab(splits["train"], specials=("</s>",))
    ids = {s: sentence_stream(splits[s], vocab) for s in ("train", "valid", "test")}
    cfg, plan = ptb_preset(len(vocab), scale)
    lm = LSTMLM(cfg, counts=vocab.id_counts(), seed=plan.seed)
    hist = train_lstm_lm(lm, ids["train"], ids["valid"], plan, device=device, progress=progress)
    return {"model": lm, "config": cfg, "plan": plan, "vocab_size": len(vocab),
            "test_ppl": stream_perplexity(lm, ids["test"]), "valid_ppl": hist.best["val_ppl"],
            "seconds": hist.seconds, "steps": hist.steps, "tokens": hist.items,
            "tokens_per_s": hist.items_per_second, "epochs_seen": hist.items / (len(ids["train"]) - 1),
            "train_tokens": len(ids["train"]) - 1}


@dataclass
class ULMFiTPreset:
    """Sizes of the ULMFiT runs.

    Attributes:
        pretrain_tokens: words of the pre-training corpus used (a seeded sample of documents).
        vocab_size: words kept (pre-training sample + the task's unlabelled training text).
        encoder: the AWD-LSTM (``vocab_size`` is filled in later).
        pretrain: the LM pre-training plan. lm_finetune: target-task LM fine-tuning.
        classifier: the classifier fine-tuning plan (epochs grow for small label sets: see
            :func:`classifier_epochs`).
        sizes: labelled examples on the learning curve (``None``: all). seeds: per point.
        ablation_size: labels for the ablation rows. max_len: words kept per text.
    """

    pretrain_tokens: int
    vocab_size: int
    encoder: AWDLSTMConfig
    pretrain: LMPlan
    lm_finetune: FineTunePlan
    classifier: FineTunePlan
    sizes: tuple[int | None, ...]
    seeds: tuple[int, ...]
    ablation_size: int
    max_len: int = 60


def ulmfit_preset(scale: str | None = None) -> ULMFiTPreset:
    enc = {"embed_p": 0.02, "input_p": 0.25, "hidden_p": 0.15, "weight_p": 0.2, "output_p": 0.1}
    # short runs: larger embeddings at the start (no saturated top layer; see AWDLSTMConfig) and
    # lr 1e-2 for the LM (held-out perplexity 195 against 293 with 3e-3 and the small start)
    short = {**enc, "embed_init_std": 0.5}
    return pick(
        ci=ULMFiTPreset(30_000, 2_000, AWDLSTMConfig(1, emb_dim=16, hidden=32, **short),
                        LMPlan(batch_size=16, seq_len=35, lr=1e-2, max_steps=30, evals=1, eval_tokens=2_000),
                        FineTunePlan(epochs=1, lr=1e-2, batch_size=16),
                        FineTunePlan(epochs=5, lr=1e-2), (100,), (0,), 100),
        laptop=ULMFiTPreset(150_000, 6_000, AWDLSTMConfig(1, emb_dim=64, hidden=128, **short),
                            LMPlan(batch_size=64, seq_len=35, lr=1e-2, epochs=1, evals=2, eval_tokens=10_000),
                            FineTunePlan(epochs=1, lr=1e-2, batch_size=32),
                            FineTunePlan(epochs=5, lr=1e-2), (100, 300, 1_000), (0, 1, 2), 100),
        gpu=ULMFiTPreset(5_800_000, 30_000, AWDLSTMConfig(1, emb_dim=400, hidden=1150, **enc),
                         LMPlan(batch_size=64, seq_len=70, lr=1e-3, epochs=10, evals=20, eval_tokens=200_000),
                         FineTunePlan(epochs=6, lr=4e-3, batch_size=64),
                         FineTunePlan(epochs=8, lr=1e-2), (100, 300, 1_000, 3_000, None), (0, 1, 2, 3, 4),
                         1_000),
        scale=scale)


def context2vec_preset(vocab_size: int, scale: str | None = None) -> tuple[Context2VecConfig, dict]:
    cfg = pick(ci=Context2VecConfig(vocab_size, emb_dim=16, hidden=16, mlp_hidden=32, out_dim=16),
               laptop=Context2VecConfig(vocab_size, emb_dim=64, hidden=64, mlp_hidden=128, out_dim=64),
               gpu=Context2VecConfig(vocab_size, emb_dim=600, hidden=600, mlp_hidden=1200, out_dim=600),
               scale=scale)
    plan = pick(ci={"epochs": 1, "max_steps": 20, "batch_size": 64, "lr": 1e-2},
                laptop={"epochs": 1, "max_steps": 300, "batch_size": 128, "lr": 1e-2},
                gpu={"epochs": 5, "max_steps": None, "batch_size": 256, "lr": 1e-3}, scale=scale)
    return cfg, plan


def sample_documents(docs: Sequence[Sequence[str]], n_tokens: int, seed: int = 0) -> list[list[str]]:
    """Tokenized sentences of whole documents drawn in a seeded random order until ``n_tokens``
    words are reached (a spread over every source of the corpus, not its first source only)."""
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    out, total = [], 0
    for i in order:
        for s in docs[i]:
            toks = tokenize(s)
            if toks:
                out.append(toks)
                total += len(toks)
        if total >= n_tokens:
            break
    return out


def build_vocab(*corpora: Sequence[Sequence[str]], max_size: int) -> Vocab:
    """One vocabulary over tokenized sentences (``<unk>``, ``<pad>``, ``</s>`` first)."""
    return Vocab([s for c in corpora for s in c], max_size=max_size, specials=SPECIALS)


def encode_texts(texts: Sequence[str], vocab: Vocab, max_len: int) -> list[list[int]]:
    """Token ids of each text, cut to ``max_len`` words."""
    return [vocab.encode(tokenize(t)[:max_len]) or [vocab.stoi["</s>"]] for t in texts]


def classifier_epochs(n_labels: int, batch_size: int, base_epochs: int, min_steps: int = 50) -> int:
    """Enough epochs for at least ``min_steps`` steps (small label sets), never fewer than
    ``base_epochs`` (gradual unfreezing needs one epoch per layer group)."""
    steps = math.ceil(n_labels / batch_size)
    return max(base_epochs, math.ceil(min_steps / steps))


def subset(n: int | None, labels: Sequence[int], seed: int) -> list[int]:
    """``n`` indices of a seeded, class-stratified sample (``None``: all)."""
    if n is None or n >= len(labels):
        return list(range(len(labels)))
    rng = random.Random(seed)
    by_class: dict[int, list[int]] = {}
    for i, y in enumerate(labels):
        by_class.setdefault(y, []).append(i)
    out = []
    for c, idx in sorted(by_class.items()):
        rng.shuffle(idx)
        out += idx[: round(n * len(idx) / len(labels))]
    return sorted(out)


def run_classifier(encoder_state: dict | None, enc_cfg: AWDLSTMConfig, n_classes: int,
                   train: tuple[list[list[int]], list[int]], test: tuple[list[list[int]], list[int]],
                   plan: FineTunePlan, *, pad_id: int, device: str | None = None) -> dict[str, float]:
    """Train one classifier (from ``encoder_state``, or from scratch when ``None``) and return
    its test accuracy and training time."""
    torch.manual_seed(plan.seed)
    enc = AWDLSTM(enc_cfg)
    if encoder_state is not None:
        enc.load_state_dict(encoder_state)
    clf = ConcatPoolClassifier(enc, n_classes)
    start = time.perf_counter()
    info = train_classifier(clf, *train, plan, pad_id=pad_id, device=device)
    return {"accuracy": accuracy(clf, *test, pad_id=pad_id), "seconds": time.perf_counter() - start,
            "steps": info["steps"]}


#: the recipe switches of each row (the scratch baseline trains every layer at one rate)
METHODS: dict[str, dict] = {
    "ULMFiT": {},
    "from scratch": {"discriminative": False, "gradual_unfreezing": False},
    "ULMFiT, no discriminative lr": {"discriminative": False},
    "ULMFiT, no STLR": {"stlr": False},
    "ULMFiT, no gradual unfreezing": {"gradual_unfreezing": False},
    # the control that separates the start from the recipe: pre-trained weights, scratch's rates
    "pre-trained, scratch's recipe": {"discriminative": False, "gradual_unfreezing": False},
}


def run_grid(encoder_state: dict, enc_cfg: AWDLSTMConfig, n_classes: int,
             train: tuple[list[list[int]], list[int]], test: tuple[list[list[int]], list[int]],
             base: FineTunePlan, *, sizes: Sequence[int | None], seeds: Sequence[int],
             methods: Sequence[str], pad_id: int, device: str | None = None) -> list[dict]:
    """One row per (method, labelled examples, seed): accuracy on ``test`` and seconds.

    "from scratch" starts its embeddings as AWD-LSTM does (``embed_init_std=None``, uniform in
    +-0.1): from scratch that start trained better than the larger one the pre-training uses
    (68.8 % against 61.0 % at 1,000 SST-2 labels, laptop preset), so the baseline is the
    stronger of the two."""
    scratch_cfg = replace(enc_cfg, embed_init_std=None)
    rows = []
    for n in sizes:
        for seed in seeds:
            idx = subset(n, train[1], seed)
            part = ([train[0][i] for i in idx], [train[1][i] for i in idx])
            for method in methods:
                if method not in METHODS:
                    raise ValueError(f"unknown method {method!r}; use one of {list(METHODS)}")
                plan = replace(base, seed=seed, epochs=classifier_epochs(len(idx), base.batch_size, base.epochs),
                               **METHODS[method])
                scratch = method == "from scratch"
                r = run_classifier(None if scratch else encoder_state, scratch_cfg if scratch else enc_cfg,
                                   n_classes, part, test, plan, pad_id=pad_id, device=device)
                rows.append({"method": method, "labels": len(idx), "seed": seed, **r})
    return rows


def pretrained_lm(enc_cfg: AWDLSTMConfig, seed: int = 0) -> AWDLSTMLM:
    return AWDLSTMLM(enc_cfg, seed=seed)


@dataclass
class ULMFiTData:
    """Everything the ULMFiT section trains on, encoded with one vocabulary."""

    vocab: Vocab
    pretrain_ids: list[int]
    heldout_ids: list[int]
    task_lm_ids: list[int]
    train: tuple[list[list[int]], list[int]]
    test: tuple[list[list[int]], list[int]]
    label_names: tuple[str, ...]

    @property
    def pad_id(self) -> int:
        return self.vocab.stoi["<pad>"]


def _stream(sentences: Sequence[Sequence[str]], vocab: Vocab) -> list[int]:
    return vocab.encode([w for s in sentences for w in (*s, "</s>")])


def ulmfit_data(preset: ULMFiTPreset, task: str = "sst2", seed: int = 0) -> ULMFiTData:
    """A seeded sample of the Part II pre-training corpus, its held-out documents (for the LM's
    validation perplexity), and the task: its training texts without labels (for LM
    fine-tuning), and its labelled train and test splits."""
    from ..data import load_task
    from ..data.lm_corpora import load_pretraining_corpus

    pre = sample_documents(load_pretraining_corpus("train"), preset.pretrain_tokens, seed)
    held = sample_documents(load_pretraining_corpus("heldout"), max(20_000, preset.pretrain_tokens // 20), seed)
    data = load_task(task)
    train_texts = [tokenize(e.text) for e in data.splits["train"]]
    vocab = build_vocab(pre, train_texts, max_size=preset.vocab_size)
    enc = {s: (encode_texts([e.text for e in data.splits[s]], vocab, preset.max_len),
               [int(e.label) for e in data.splits[s]]) for s in ("train", "test")}
    return ULMFiTData(vocab, _stream(pre, vocab), _stream(held, vocab), _stream(train_texts, vocab),
                      enc["train"], enc["test"], tuple(data.label_names or ()))


def cell_speed(*, emb_dim: int = 64, hidden: int = 128, batch_size: int = 32, seq_len: int = 35,
               vocab_size: int = 2_000, steps: int = 3, device: str | None = None) -> dict[str, float]:
    """Training tokens per second of one LSTM LM built with our cell and with ``nn.LSTM`` (same
    sizes, same data, timed in one run; the median of ``steps`` timed steps after a warm-up)."""
    from ..device import get_device

    dev = get_device(device)
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, vocab_size, (batch_size, seq_len), generator=g).to(dev)
    y = torch.randint(0, vocab_size, (batch_size, seq_len), generator=g).to(dev)
    out: dict[str, float] = {}
    for cell in ("ours", "torch"):
        from .lstm_lm import LSTMLM

        m = LSTMLM(LSTMLMConfig(vocab_size, emb_dim=emb_dim, hidden=hidden, cell=cell), seed=0).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        times = []
        for i in range(steps + 1):
            t0 = time.perf_counter()
            loss = m.loss((x, y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            if i:  # the first step warms up
                times.append(time.perf_counter() - t0)
        out[f"{cell}_tokens_per_s"] = batch_size * seq_len / sorted(times)[len(times) // 2]
    out["speedup"] = out["torch_tokens_per_s"] / out["ours_tokens_per_s"]
    return out


@torch.no_grad()
def encoder_diagnostics(encoder_state: dict | None, enc_cfg: AWDLSTMConfig,
                        train: tuple[list[list[int]], list[int]], test: tuple[list[list[int]], list[int]],
                        *, pad_id: int, seed: int = 0) -> dict[str, float]:
    """What an encoder hands the classifier, before any fine-tuning: its last layer's states on
    ``test`` (mean ``|h|``, the share of units beyond 0.9 in size, i.e. near the flat ends of the
    tanh, and the spread of the pooled vector across sentences) and the test accuracy of a
    logistic regression on the frozen, standardised concat-pooled states trained on ``train``
    (does the encoder carry the label at all?). ``encoder_state=None``: a random encoder."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    torch.manual_seed(seed)
    enc = AWDLSTM(enc_cfg).eval()
    if encoder_state is not None:
        enc.load_state_dict(encoder_state)

    def pooled(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        hs, ps = [], []
        for s in range(0, len(seqs), 256):
            ids, lengths = pad_batch(seqs[s:s + 256], pad_id)
            h = enc(ids)[0][-1]
            valid = torch.arange(h.shape[1])[None, :] < lengths[:, None]
            hs.append(h[valid])
            ps.append(concat_pool(h, lengths))
        return torch.cat(hs), torch.cat(ps)

    h, p_test = pooled(test[0])
    _, p_train = pooled(train[0])
    scaler = StandardScaler().fit(p_train.numpy())
    probe = LogisticRegression(max_iter=2000, C=0.1).fit(scaler.transform(p_train.numpy()), train[1])
    return {"mean |h|": float(h.abs().mean()), "share |h| > 0.9": float((h.abs() > 0.9).float().mean()),
            "spread across sentences": float(p_test.std(0).mean()),
            "frozen probe accuracy": float(probe.score(scaler.transform(p_test.numpy()), test[1]))}
