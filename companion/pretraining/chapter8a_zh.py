"""Chapter 8a's Chinese section: whole-word masking on People's Daily (the bookkeeping; the
segmenter and rows are :mod:`.chinese`, the masking :class:`~.mlm.ChineseWholeWordMLM`).

* :func:`chinese_data` -- People's Daily 1998-01 split into a training part (its gold words make
  the segmenter's dictionary; its raw characters, re-segmented by our segmenter, are the
  pre-training text) and the last paragraphs held out (gold segmentation: the segmenter's F1 and
  the cloze tests);
* :func:`leak_share` -- how often character masking leaves part of a masked word visible;
* :func:`pretrain_pair` / :func:`cloze` / :func:`cloze_table` -- character MLM vs whole-word MLM at
  equal FLOPs, scored by a whole-word cloze and a single-character cloze on the held-out gold
  words, against a unigram baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ..scale import pick
from .chinese import (
    CharTokenizer,
    WordDict,
    forward_max_match,
    pack_segmented,
    segment,
    segmentation_f1,
)
from .harness import ModelSize, model_flops, pretrain
from .mlm import ChineseWholeWordMLM

HELDOUT_PARAGRAPHS = 1000  # the last paragraphs of the month: never in the dictionary or the rows


@dataclass(frozen=True)
class ZhSizes:
    """What changes with ``BOOK_SCALE`` in the Chinese section."""

    train_chars: int          # pre-training characters (re-segmented by our segmenter)
    held_paragraphs: int      # held-out paragraphs scored (of the last HELDOUT_PARAGRAPHS)
    min_count: int            # characters seen fewer times are [UNK]
    size: ModelSize
    batch_size: int
    steps: int                # the budget: FLOPs of this many steps (the same model for both)
    lr: float
    seeds: tuple[int, ...]


def zh_sizes(scale: str | None = None) -> ZhSizes:
    """The Chinese run at ``scale``; ``gpu`` is a preset, written but not run."""
    return pick(
        ci=ZhSizes(20_000, 100, 2, ModelSize(32, 1, 2, 64, 32), 16, 3, 2e-3, (0,)),
        laptop=ZhSizes(200_000, 400, 2, ModelSize(64, 2, 4, 256, 48), 32, 90, 2e-3, (0, 1)),
        # gpu: all of the training part (~1.7M characters), ~45 passes over it
        gpu=ZhSizes(1_700_000, 1000, 2, ModelSize(256, 4, 4, 1024, 128), 128, 5_000, 5e-4, (0, 1, 2)),
        scale=scale)


@dataclass
class ChineseData:
    """The section's data: dictionary, tokenizer, rows (our segmentation) and held-out rows
    (gold segmentation), plus the held-out paragraphs and our segmentation of them."""

    wd: WordDict
    tok: CharTokenizer
    rows: torch.Tensor
    held_rows: torch.Tensor
    held_gold: list[list[str]]
    held_ours: list[list[str]]
    train_text_chars: int


def chinese_data(s: ZhSizes, paragraphs: list[list[str]] | None = None) -> ChineseData:
    """People's Daily split as described in the module docstring (``paragraphs``: gold word
    lists, default :func:`companion.data.peoples_daily.load_peoples_daily`)."""
    if paragraphs is None:
        from ..data.peoples_daily import load_peoples_daily

        paragraphs = load_peoples_daily()
    if len(paragraphs) <= HELDOUT_PARAGRAPHS:
        raise ValueError(f"need more than {HELDOUT_PARAGRAPHS} paragraphs, got {len(paragraphs)}")
    train, held = paragraphs[:-HELDOUT_PARAGRAPHS], paragraphs[-HELDOUT_PARAGRAPHS:][: s.held_paragraphs]
    wd = WordDict.from_corpus(train)
    texts, n = [], 0
    for p in train:
        if n >= s.train_chars:
            break
        texts.append("".join(p))
        n += len(texts[-1])
    tok = CharTokenizer.train(texts, s.min_count)
    rows = pack_segmented([segment(t, wd) for t in texts], tok, s.size.row_len)
    held_ours = [segment("".join(p), wd) for p in held]
    return ChineseData(wd, tok, rows, pack_segmented(held, tok, s.size.row_len), held, held_ours, n)


def segmenter_scores(data: ChineseData) -> pd.DataFrame:
    """Held-out word precision / recall / F1 (%) of our maximum-probability segmenter and of
    forward maximum matching, with the same dictionary."""
    fmm = [forward_max_match("".join(p), data.wd) for p in data.held_gold]
    rows = {"maximum probability (ours, jieba's)": segmentation_f1(data.held_ours, data.held_gold),
            "forward maximum matching": segmentation_f1(fmm, data.held_gold)}
    return (100 * pd.DataFrame(rows).T).round(1)


def leak_share(data: ChineseData, seed: int = 0) -> dict[str, float]:
    """Over the masked characters that belong to words of two or more characters: the share
    whose word still shows at least one unmasked character, per scheme (%)."""
    out = {}
    for ww in (False, True):
        obj = ChineseWholeWordMLM(data.tok.vocab, whole_word=ww)
        ids, starts = obj.split(data.rows)
        chosen = obj.choose_words(ids, starts, torch.Generator().manual_seed(seed))
        cand = obj.candidates(ids)
        wid = (starts & cand).long().cumsum(1) + ids.shape[1] * torch.arange(len(ids))[:, None]
        wid = wid[cand]  # a global word number per text character
        size = torch.bincount(wid)
        shown = torch.bincount(wid, weights=(~chosen[cand]).double())
        in_multi = chosen[cand] & (size[wid] >= 2)
        out[obj.name] = float(100 * (shown[wid][in_multi] > 0).double().mean())
    return out


def pretrain_pair(data: ChineseData, s: ZhSizes, device: str | None = None) -> dict[str, list]:
    """Character MLM and whole-word MLM, each pre-trained with every seed of ``s.seeds`` on the
    same rows with the same FLOPs budget (the same model, so the same steps)."""
    objs = [ChineseWholeWordMLM(data.tok.vocab, whole_word=w) for w in (False, True)]
    torch.manual_seed(0)
    probe = objs[0].build_model(s.size, len(data.tok))
    budget = model_flops(probe, s.steps * s.batch_size * s.size.row_len) * 1.001
    return {o.name: [pretrain(o, data.rows, s.size, len(data.tok), flops_budget=budget, batch_size=s.batch_size,
                              lr=s.lr, seed=seed, device=device) for seed in s.seeds] for o in objs}


@torch.no_grad()
def cloze(model, data: ChineseData, whole_word: bool, seed: int = 0) -> dict[str, float]:
    """Hide 15 % of the held-out characters -- whole gold words or single characters -- all as
    ``[MASK]``; the model's cross-entropy (nats per character) and accuracy (%) on them."""
    obj = ChineseWholeWordMLM(data.tok.vocab, whole_word=whole_word)
    ids, starts = obj.split(data.held_rows)
    chosen = obj.choose_words(ids, starts, torch.Generator().manual_seed(seed))
    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    try:
        h = model.encoder(ids.masked_fill(chosen, obj.vocab.mask).to(dev))
        logits = model.mlm(h[chosen.to(dev)]).float().cpu()
    finally:
        model.train(was)
    y = ids[chosen]
    return {"CE": float(F.cross_entropy(logits, y)), "acc %": float(100 * (logits.argmax(1) == y).double().mean())}


def unigram_cloze(data: ChineseData, whole_word: bool, seed: int = 0) -> dict[str, float]:
    """The baseline without context: every hidden character predicted by the training rows'
    character frequencies (add-one smoothed)."""
    obj = ChineseWholeWordMLM(data.tok.vocab, whole_word=whole_word)
    ids, starts = obj.split(data.held_rows)
    chosen = obj.choose_words(ids, starts, torch.Generator().manual_seed(seed))
    train_ids, _ = obj.split(data.rows)
    counts = torch.bincount(train_ids.flatten(), minlength=len(data.tok)).double() + 1
    counts[list(obj.vocab.specials)] = 0
    logp = (counts / counts.sum()).log()
    y = ids[chosen]
    return {"CE": float(-logp[y].mean()), "acc %": float(100 * (y == logp.argmax()).double().mean())}


def cloze_table(runs: dict[str, list], data: ChineseData) -> pd.DataFrame:
    """Mean (and standard error over seeds) of both cloze tests for each objective, plus the
    unigram baseline and the final training loss."""
    table = {}
    for name, results in runs.items():
        row = {}
        for label, ww in (("whole-word cloze", True), ("character cloze", False)):
            scores = [cloze(r.model, data, ww) for r in results]
            for k in ("CE", "acc %"):
                v = np.array([sc[k] for sc in scores])
                row[f"{label} {k}"] = v.mean()
                row[f"{label} {k} se"] = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan
        row["train loss"] = np.mean([r.final_loss() for r in results])
        table[name] = row
    base = {}
    for label, ww in (("whole-word cloze", True), ("character cloze", False)):
        for k, v in unigram_cloze(data, ww).items():
            base[f"{label} {k}"] = v
    table["unigram (no context)"] = base
    return pd.DataFrame(table).T



def mask_examples(texts: list[str], data: ChineseData, seed: int = 1) -> pd.DataFrame:
    """Each text segmented by our segmenter and masked both ways (one draw each): words joined
    by ``|``, hidden characters in ``[ ]`` (a character outside the vocabulary is ``[UNK]``: never
    hidden, and it ends the word it is in)."""
    from .chinese import show_masks

    out = {}
    for text in texts:
        words = segment(text, data.wd)
        rows = pack_segmented([words], data.tok, len(data.tok.encode(text)) + 1)[:, :-1]  # drop the eos
        row = {}
        for ww in (False, True):
            obj = ChineseWholeWordMLM(data.tok.vocab, whole_word=ww)
            ids, starts = obj.split(rows)
            chosen = obj.choose_words(ids, starts, torch.Generator().manual_seed(seed))
            row[obj.name] = show_masks(ids[0], starts[0], chosen[0], data.tok, text)
        out[text] = row
    return pd.DataFrame(out).T


def verdicts(table: pd.DataFrame, runs: dict[str, list]) -> dict[str, object]:
    """The numbers and words the section's prose quotes (glued by the notebook)."""
    ch, ww, uni = table.loc["MLM (characters, zh)"], table.loc["MLM (whole words, zh)"], table.loc["unigram (no context)"]
    key = "whole-word cloze CE"
    gap = ch[key] - ww[key]  # > 0: whole-word masking predicts hidden words better
    se = float(np.hypot(ch[f"{key} se"], ww[f"{key} se"]))
    beats = [n for n, r in (("character", ch), ("whole-word", ww)) if r[key] < uni[key]]
    return {
        "zh_gap": f"{gap:+.3f}",
        "zh_gap_se": "n/a (one seed)" if not np.isfinite(se) else f"{se:.3f}",
        "zh_gap_verdict": ("inside" if not np.isfinite(se) or abs(gap) < 2 * se else "outside"),
        "zh_unigram_verdict": (
            "Neither model beats the unigram baseline, which predicts every hidden character from "
            "its frequency alone: at this budget the models have learned which characters are "
            "common, not yet how context constrains them (the plateau every masked LM starts on)"
            if not beats else
            f"Only the {beats[0]} model beats the unigram baseline (every hidden character "
            "predicted from its frequency alone)" if len(beats) == 1 else
            "Both models beat the unigram baseline (every hidden character predicted from its "
            "frequency alone): they use context"),
        "zh_steps": runs["MLM (characters, zh)"][0].steps,
        "zh_seeds": len(runs["MLM (characters, zh)"]),
    }
