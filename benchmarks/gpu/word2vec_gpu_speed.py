"""word2vec and fastText training speed on the lent GPU, on the chapters' corpus (one epoch each)."""
import json, os, sys, time
import torch
from companion.static.corpus import chapter_corpus
from companion.word2vec import train_word2vec
from companion.static import train_fasttext
from companion.evaluate import word_similarity
from companion.data import load_wordsim353
dev = os.environ.get("DEV", "cuda")
sents = chapter_corpus()[: int(os.environ.get("NSENT", "10000000"))]; n = sum(map(len, sents)); ws = load_wordsim353()
res = {"tokens": n, "device": dev}
runs = {"sg-neg": lambda **kw: train_word2vec(sents, arch="sg", output="neg", epochs=1, device=dev, seed=1, **kw),
        "cbow-neg": lambda **kw: train_word2vec(sents, arch="cbow", output="neg", epochs=1, device=dev, seed=1, **kw),
        "fasttext": lambda **kw: train_fasttext(sents, epochs=1, device=dev, seed=1, **kw)}
for name, fn in runs.items():
    for kw in ({}, {"batch_size": 8192}):
        t0 = time.perf_counter()
        r = fn(**kw)
        if dev == "cuda":
            torch.cuda.synchronize()
        s = time.perf_counter() - t0
        rho = word_similarity(r.vectors(), r.index, ws).spearman
        key = f"{name} batch {kw.get('batch_size', 'default')}"
        res[key] = {"seconds": round(s, 2), "tokens_per_s": round(n / s), "ws353": round(rho, 3)}
        print(key, json.dumps(res[key]), flush=True)
        json.dump(res, open(sys.argv[1], "w"), indent=1)
