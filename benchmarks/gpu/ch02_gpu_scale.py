"""Chapter 2 at BOOK_SCALE=gpu on the lent device: the five models of the chapter, their test
perplexities and mixtures with the modified-KN trigram (same code as the notebook)."""
import json, math, os, sys, time
import torch
from companion.scale import get_scale
from companion.data import bengio_split
from companion.counting import ModifiedKneserNey, NGramCounts
from companion.neural_lm import LBL, NNLM, lbl_preset, nnlm_preset, mix, token_log_probs
from companion.neural_lm.recipes import lm_examples, train_lm
from companion.device import get_device, describe

out = sys.argv[1]
dev = get_device()
print("scale", get_scale(), "device", describe(), flush=True)
split = bengio_split(); vocab = split.vocab; V = len(vocab)
train = lm_examples(split.train, vocab, 5); valid = lm_examples(split.valid, vocab, 5); test = lm_examples(split.test, vocab, 5)
counts = NGramCounts(split.train, order=3, vocab=vocab)
kn3 = ModifiedKneserNey(counts, order=3)
kn = {s: kn3.token_logprobs(getattr(split, s)) for s in ("valid", "test")}
res = {"V": V, "device": describe(), "trigram_test_ppl": math.exp(-kn["test"].mean()), "models": {}}
print("trigram test ppl", res["trigram_test_ppl"], flush=True)
k = max(1, len(valid[1]) // 50_000)
valid_during = tuple(t[::k] for t in valid)
train_counts = (torch.bincount(train[1], minlength=V) + 1).tolist()
for variant in sys.argv[2:] or ["hsoftmax", "lbl", "hsoftmax_direct", "full", "direct"]:
    if variant == "lbl":
        cfg, plan = lbl_preset(V); model = LBL(cfg, counts=train_counts, seed=0)
    else:
        cfg, plan = nnlm_preset(V, variant); model = NNLM(cfg, counts=train_counts, seed=0)
    plan.eval_tokens = None
    t0 = time.perf_counter()
    hist = train_lm(model, train, valid_during, plan, device=dev, progress=False)
    secs = time.perf_counter() - t0
    lv = token_log_probs(model, *valid).numpy(); lt = token_log_probs(model, *test).numpy()
    m = mix(lv, kn["valid"], lt, kn["test"])
    r = {"epochs": plan.epochs, "train_s": secs, "tokens_per_s": plan.epochs * len(train[1]) / secs,
         "test_ppl": math.exp(-lt.mean()), "valid_ppl": math.exp(-lv.mean()),
         "mix_weight": m.weight, "mix_test_ppl": m.test_ppl}
    res["models"][variant] = r
    print(variant, json.dumps(r), flush=True)
    json.dump(res, open(out, "w"), indent=1)
