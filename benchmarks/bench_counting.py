"""Chapter 1 benchmark: modified Kneser-Ney on Brown (Bengio's split), ours vs KenLM vs NLTK.

Same data for all three: the 800,000 training tokens (35,523 sentences) and the test split,
lower-cased, rare words as one token (renamed ``<rare>``: KenLM reserves ``<unk>``).

* **build**: ours = count orders 1..n (numpy) + compute every probability and back-off weight;
  KenLM = the whole ``lmplz`` run (count, adjust, discount, interpolate, *write the ARPA file*,
  process start-up included); NLTK = ``KneserNeyInterpolated.fit`` through its
  ``padded_everygram_pipeline``. Best of ``repeats`` runs for ours and KenLM.
* **score**: test perplexity. Ours = ``lm.perplexity(test)`` (encode + look-ups + probabilities);
  KenLM = its ``query`` program on a binary model made by ``build_binary`` (process start-up
  and model loading included). NLTK is far too slow to build on all 800k tokens *and* score
  (tens of ms per token, each query scans the n-gram tables), so it is measured on a sample:
  it is fitted on the first ``nltk_train_tokens`` training tokens and scores ``nltk_score_tokens``
  test tokens; both times are then scaled linearly to the full sizes. The scaling *flatters*
  NLTK's scoring: its per-token cost grows with the size of the model it scans.

Run alone with ``python -m benchmarks.bench_counting`` (or through ``python -m benchmarks``).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path

from companion.counting import ModifiedKneserNey, NGramCounts


def _split():
    from companion.data import bengio_split

    split = bengio_split()

    def rename(sents):
        return [["<rare>" if w == "<unk>" else w for w in s] for s in sents]

    return rename(split.train), rename(split.test)


def _ours(train, test, order: int, repeats: int) -> dict:
    best = float("inf")
    lm = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        lm = ModifiedKneserNey(NGramCounts(train, order))
        best = min(best, time.perf_counter() - t0)
    t0 = time.perf_counter()
    ppl = lm.perplexity(test)
    return {"build_s": best, "score_s": time.perf_counter() - t0, "ppl": ppl}


def _kenlm(train, test, order: int, repeats: int, tmp: Path) -> dict:
    from companion.peers import kenlm_build as K

    bindir = K.ensure()
    text = K.write_sentences(train, tmp / "train.txt")
    test_txt = K.write_sentences(test, tmp / "test.txt")
    best = float("inf")
    for _ in range(repeats):
        run = K.lmplz(text, order, tmp / f"m{order}.arpa")
        best = min(best, run.seconds)
    subprocess.run([str(bindir / "build_binary"), str(run.arpa), str(tmp / f"m{order}.bin")], check=True,
                   capture_output=True)
    q = K.query(tmp / f"m{order}.bin", test_txt)
    return {"build_s": best, "score_s": q.seconds, "ppl": q.perplexity}


def _nltk(train, test, order: int, train_tokens: int, score_tokens: int, full_train: int, full_test: int) -> dict:
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    sub, n = [], 0
    for s in train:
        if n >= train_tokens:
            break
        sub.append(s)
        n += len(s)
    grams, vocab = padded_everygram_pipeline(order, sub)
    lm = KneserNeyInterpolated(order)
    t0 = time.perf_counter()
    lm.fit(grams, vocab)
    fit_s = time.perf_counter() - t0
    # score the first test tokens with their real contexts (NLTK pads with n-1 <s>)
    pairs = []
    for s in test:
        toks = ["<s>"] * (order - 1) + s + ["</s>"]
        pairs.extend((toks[i], tuple(toks[i - order + 1: i])) for i in range(order - 1, len(toks)))
        if len(pairs) >= score_tokens:
            break
    pairs = pairs[:score_tokens]
    t0 = time.perf_counter()
    for w, ctx in pairs:
        lm.score(w, ctx)
    per_token = (time.perf_counter() - t0) / len(pairs)
    return {"build_s": fit_s * full_train / n, "score_s": per_token * full_test, "sample_fit_s": fit_s,
            "sample_train_tokens": n, "score_ms_per_token": per_token * 1e3, "sample_score_tokens": len(pairs)}


def run(*, orders: tuple[int, ...] = (3, 5), repeats: int = 2, nltk_train_tokens: int = 100_000,
        nltk_score_tokens: int = 200) -> dict:
    """Build and score modified-KN models of each order with the three tools; return a flat dict.

    Keys: ``<tool>_n<order>_build_s`` / ``_score_s`` / ``_ppl``, and the ratios
    ``build_ratio_ours_over_kenlm_n<order>`` (goal <= 2), ``build_speedup_vs_nltk_n<order>`` and
    ``score_speedup_vs_nltk_n<order>`` (goal >= 20), ``score_ratio_ours_over_kenlm_n<order>``,
    ``ppl_rel_diff_kenlm_n<order>``.
    """
    train, test = _split()
    n_train = sum(len(s) for s in train)
    n_test = sum(len(s) + 1 for s in test)
    out: dict = {"train_tokens": n_train, "test_tokens_incl_eos": n_test, "repeats": repeats}
    with tempfile.TemporaryDirectory(prefix="bench-counting-") as tmp:
        for order in orders:
            ours = _ours(train, test, order, repeats)
            ken = _kenlm(train, test, order, repeats, Path(tmp))
            nl = _nltk(train, test, order, nltk_train_tokens, nltk_score_tokens, n_train, n_test)
            for tool, res in (("ours", ours), ("kenlm", ken), ("nltk", nl)):
                for k, v in res.items():
                    out[f"{tool}_n{order}_{k}"] = v
            out[f"build_ratio_ours_over_kenlm_n{order}"] = ours["build_s"] / ken["build_s"]
            out[f"score_ratio_ours_over_kenlm_n{order}"] = ours["score_s"] / ken["score_s"]
            out[f"build_speedup_vs_nltk_n{order}"] = nl["build_s"] / ours["build_s"]
            out[f"score_speedup_vs_nltk_n{order}"] = nl["score_s"] / ours["score_s"]
            out[f"ppl_rel_diff_kenlm_n{order}"] = ours["ppl"] / ken["ppl"] - 1
    out["goal_build_within_2x_kenlm"] = all(out[f"build_ratio_ours_over_kenlm_n{o}"] <= 2 for o in orders)
    out["goal_20x_faster_than_nltk"] = all(
        min(out[f"build_speedup_vs_nltk_n{o}"], out[f"score_speedup_vs_nltk_n{o}"]) >= 20 for o in orders)
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
