"""Chapter 10b: iPET's generations and AutoPrompt's trigger search, on tiny cases."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from companion.data.tasks import Example
from companion.transfer import autoprompt, pet, prompts
from companion.transformer.bert import BertConfig, BertForPreTraining

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "it", "was", "great", "terrible", "good", "bad",
         "a", "movie", "fun", "dull", "ok", ".", "so", "very", "not"]
VOCAB = {w: i for i, w in enumerate(WORDS)}


def tokenize(text: str) -> list[int]:
    return [VOCAB.get(w, 1) for w in text.lower().replace(".", " .").split()]


def _cloze(seed=0):
    cfg = BertConfig(vocab_size=len(WORDS), max_len=24, d_model=16, n_head=2, n_layer=1)
    bert = BertForPreTraining(cfg, seed=seed)
    return prompts.ClozeModel(bert.encoder, bert.mlm, tokenize, cfg)


def _data():
    pos = ["a fun movie", "a great fun movie", "fun fun", "a good movie", "great great fun", "good fun"]
    neg = ["a dull movie", "a terrible dull movie", "dull dull", "a bad movie", "terrible bad", "bad dull"]
    return [Example(t, 1) for t in pos] + [Example(t, 0) for t in neg]


# ------------------------------------------------------------------------------------- iPET


def test_ipet_label_counts_grow_by_d_and_keep_proportions():
    labels = [0, 0, 0, 1]
    assert pet.ipet_label_counts(labels, 1) == {0: 0, 1: 0}
    assert pet.ipet_label_counts(labels, 2) == {0: 12, 1: 4}      # 5 x 4 = 20 in all, 4 of them gold
    assert pet.ipet_label_counts(labels, 3) == {0: 72, 1: 24}     # 25 x 4 = 100
    assert sum(pet.ipet_label_counts([0, 1, 2], 2, growth=2).values()) == 3
    with pytest.raises(ValueError, match="generation"):
        pet.ipet_label_counts(labels, 0)


def test_ipet_generations_train_on_growing_pseudo_labelled_sets():
    train = [Example("good", 1), Example("bad", 0), Example("good fun", 1), Example("bad dull", 0)]
    unlabelled = [Example(("good " if i % 2 else "bad ") + str(i), -1) for i in range(120)]
    calls = []

    def fit(pvp, examples):  # a "model": says positive when the text has "good"; PVP 2 is less sure
        calls.append((pvp, list(examples)))
        scale = 2.0 if pvp.pattern == "a" else 0.5

        def score(exs):
            return np.array([[-scale, scale] if "good" in e.text else [scale, -scale] for e in exs])
        return score

    pvps = [pet.PVP("a", ("x", "y")), pet.PVP("b", ("x", "y"))]
    gens = pet.ipet(pvps, train, unlabelled, fit, generations=3, growth=5, seed=0)
    assert [g.sizes for g in gens] == [[4, 4], [20, 20], [100, 100]]
    assert len(calls) == 6
    texts = {e.text for e in unlabelled}
    for gen, (pvp, exs) in zip([1, 1, 2, 2, 3, 3], calls):
        assert exs[:4] == train                                   # the gold examples are always kept
        new = exs[4:]
        assert all(e.text in texts for e in new) and len({e.text for e in new}) == len(new)
        counts = pet.ipet_label_counts([e.label for e in train], gen)
        assert [sum(e.label == c for e in new) for c in (0, 1)] == [counts[0], counts[1]]
        # the previous generation's ensemble labelled them: "good" -> 1, "bad" -> 0
        assert all(e.label == int("good" in e.text) for e in new)
    assert gens[-1].unlabelled_scores[0].shape == (120, 2)
    with pytest.raises(ValueError, match="unlabelled"):
        pet.ipet(pvps, train, unlabelled[:50], fit, generations=3)


# ------------------------------------------------------------------------------- AutoPrompt


def test_insert_triggers_before_the_mask():
    cloze = _cloze()
    b = prompts.cloze_inputs(cloze, "{text} [MASK] .", [Example("a fun movie", 1), Example("dull", 0)])
    t = autoprompt.insert_triggers(b, [17, 18], pad_id=0)
    assert t["ids"][0].tolist() == [2, 11, 13, 12, 17, 18, 4, 16, 3]
    assert t["ids"][1].tolist() == [2, 14, 17, 18, 4, 16, 3, 0, 0]
    assert t["mask_pos"].tolist() == [6, 4]
    assert t["attention_mask"][1].tolist() == [1] * 7 + [0, 0]


def test_hotflip_candidates_are_the_first_order_best_swaps():
    g = torch.Generator().manual_seed(0)
    grad, emb = torch.randn(8, generator=g), torch.randn(30, 8, generator=g)
    allowed = torch.ones(30, dtype=torch.bool)
    allowed[:5] = False
    got = autoprompt.hotflip_candidates(grad, emb, 4, allowed)
    want = [i for i in torch.argsort(-(emb @ grad), descending=True).tolist() if i >= 5][:4]
    assert got == want


def _search_loss(cloze, pattern, words, examples, triggers):
    s = autoprompt.trigger_label_scores(cloze, pattern, words, triggers, examples, max_len=24)
    return float(F.cross_entropy(s, torch.tensor([e.label for e in examples])))


def test_autoprompt_search_never_raises_the_loss_and_finds_the_best_swap():
    cloze, data = _cloze(seed=1), _data()
    pattern, words = "{text} [MASK] .", ("terrible", "great")
    V = len(WORDS)
    res = autoprompt.search(cloze, pattern, words, data, n_triggers=2, steps=6, k=V - 4, init=VOCAB["it"],
                            max_len=24, seed=0)
    assert len(res.losses) == 7
    assert all(b <= a + 1e-7 for a, b in zip(res.losses, res.losses[1:]))   # each swap lowers the loss
    assert res.losses[0] == pytest.approx(_search_loss(cloze, pattern, words, data, [5, 5]), rel=1e-5)
    assert res.losses[-1] == pytest.approx(_search_loss(cloze, pattern, words, data, res.triggers), rel=1e-5)
    assert res.losses[-1] < res.losses[0]
    assert all(w not in (0, 2, 3, 4) for c in res.candidates for w in c)   # no special token
    # with every allowed token a candidate, the first swap is the brute-force best for its slot
    _step, slot, old, new = res.swaps[0]
    assert old == 5 and all(len(c) == V - 4 for c in res.candidates)
    trials = {}
    for w in [1, *range(5, V)]:
        trig = [5, 5]
        trig[slot] = w
        trials[w] = _search_loss(cloze, pattern, words, data, trig)
    assert new == min(trials, key=trials.get)
    # the model is left as it was: frozen search, parameters still trainable afterwards
    assert all(p.requires_grad for p in cloze.encoder.parameters())
    assert cloze.encoder.embeddings.tok.weight.grad is None


# ----------------------------------------------------------------------- instruction tuning


def test_instruction_tuning_teaches_the_prompted_tasks_and_leaves_the_model_alone():
    from companion.transfer import finetune as ft
    from companion.transfer import instruct

    cloze, data = _cloze(seed=2), _data()
    seen = instruct.PromptedTask("toy", tuple(data), "{text} it was [MASK] .", ("terrible", "great"))
    other = instruct.PromptedTask("toy2", tuple(data), "[MASK] : {text}", ("bad", "good"))
    make = instruct.prompted_batches(cloze, [seen, other], batch_size=4, max_len=24, seed=0)
    batches = make(0)
    assert len(batches) == 6 and sum(len(b["target"]) for b in batches) == 24
    assert {int(t) for b in batches for t in b["target"]} == {7, 8, 9, 10}
    before = [p.detach().clone() for p in cloze.encoder.parameters()]
    tuned = instruct.instruction_tune(cloze, [seen], ft.FTConfig(epochs=8, lr=2e-2, batch_size=4, max_len=24))
    assert instruct.zero_shot_accuracy(tuned, seen, max_len=24) >= 90
    assert all(torch.equal(a, b) for a, b in zip(before, cloze.encoder.parameters()))
    with pytest.raises(ValueError, match="PromptedTask"):
        instruct.instruction_tune(cloze, [], ft.FTConfig())
