"""Tests of companion.evaluate.tagging: span extraction and F1 as seqeval 1.2.2 computes them
(hand-checked cases in the normal stage; parity with seqeval itself on random and real tag
sequences in the ``peers`` stage), token accuracy, taggers and token probes, bad input."""

from __future__ import annotations

import random

import numpy as np
import pytest

from companion.data.tasks import TaggedSentence
from companion.evaluate.tagging import (
    evaluate_tagger,
    get_entities,
    span_scores,
    token_accuracy,
    token_probe,
)

pytestmark = pytest.mark.usefixtures("one_thread")

# (tags, spans) worked out by hand from seqeval's rules (default mode)
HAND = [
    (["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 1), ("LOC", 3, 3)]),  # IOB2
    (["I-PER", "I-PER", "O", "I-LOC", "I-LOC"], [("PER", 0, 1), ("LOC", 3, 4)]),  # IOB1: I starts
    (["I-ORG", "B-ORG", "I-ORG"], [("ORG", 0, 0), ("ORG", 1, 2)]),  # IOB1: B splits same-type spans
    (["B-PER", "I-LOC", "I-LOC"], [("PER", 0, 0), ("LOC", 1, 2)]),  # a type change ends and starts
    (["O", "I-MISC"], [("MISC", 1, 1)]),
    (["B-NP", "B-NP", "I-NP", "B-VP", "O", "B-PP"], [("NP", 0, 0), ("NP", 1, 2), ("VP", 3, 3), ("PP", 5, 5)]),
    (["S-PER", "B-LOC", "E-LOC", "E-LOC"], [("PER", 0, 0), ("LOC", 1, 2), ("LOC", 3, 3)]),  # IOBES
    (["B", "I", "O", "I"], [("_", 0, 1), ("_", 3, 3)]),  # untyped tags: type "_"
    (["O", "O"], []),
    ([], []),
]


@pytest.mark.parametrize("tags, spans", HAND)
def test_get_entities_hand_checked(tags, spans):
    assert get_entities(tags) == spans


def test_span_scores_hand_checked():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "I-ORG"]]
    s = span_scores(gold, pred)
    # gold spans: PER(0,0-1), LOC(0,3), ORG(1,0); predicted: PER(0,0-1), ORG(0,3), ORG(1,0-1)
    assert (s.n_true, s.n_pred, s.n_correct) == (3, 3, 1)
    assert s.precision == pytest.approx(1 / 3) and s.recall == pytest.approx(1 / 3) and s.f1 == pytest.approx(1 / 3)
    assert s.per_type["PER"]["f1"] == 1.0 and s.per_type["LOC"]["f1"] == 0.0 and s.per_type["ORG"]["support"] == 1
    assert span_scores([["O"]], [["O"]]).f1 == 0.0  # no spans anywhere: 0, as seqeval's zero_division


def test_spans_never_cross_sentences():
    assert span_scores([["I-PER"], ["I-PER"]], [["I-PER"], ["I-PER"]]).n_true == 2


def test_token_accuracy():
    assert token_accuracy([["a", "b"], ["c"]], [["a", "x"], ["c"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no tokens"):
        token_accuracy([[]], [[]])


@pytest.mark.parametrize("call, match", [
    (lambda: get_entities(["B-PER", "NN"]), "not a span tag"),
    (lambda: get_entities("B-PER"), "not one string"),
    (lambda: span_scores([["O", "O"]], [["O"]]), "sentence 0: 2 gold tags but 1"),
    (lambda: span_scores([["O"]], [["O"], ["O"]]), "1 gold sentences but 2"),
    (lambda: span_scores(["B-PER", "O"], ["B-PER", "O"]), "lists of sentences"),
    (lambda: span_scores([["B-PER"]], [["PER"]]), "predicted sentence 0"),
])
def test_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---------------------------------------------------------------- taggers and probes
def toy_tagged(n: int, seed: int = 0) -> list[TaggedSentence]:
    """Sentences whose words decide their tags: names are PER entities (IOB2), 'in' precedes LOC."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        toks, tags = [], []
        for _ in range(rng.randint(4, 9)):
            r = rng.random()
            if r < 0.2:
                toks += [rng.choice(["Ann", "Bob", "Cy"]), rng.choice(["Lee", "Ray"])]
                tags += ["B-PER", "I-PER"]
            elif r < 0.3:
                toks += ["in", rng.choice(["Paris", "Rome"])]
                tags += ["O", "B-LOC"]
            else:
                toks.append(rng.choice(["the", "a", "saw", "went", "big", "dog"]))
                tags.append("O")
        out.append(TaggedSentence(tuple(toks), tuple(tags)))
    return out


def word_vectors(batch):
    """One-hot-ish vectors per word type, plus the previous word's (a bit of context)."""
    vocab = ["Ann", "Bob", "Cy", "Lee", "Ray", "in", "Paris", "Rome", "the", "a", "saw", "went", "big", "dog"]
    out = []
    for toks in batch:
        x = np.zeros((len(toks), 2 * len(vocab)), np.float32)
        for i, t in enumerate(toks):
            x[i, vocab.index(t)] = 1
            if i:
                x[i, len(vocab) + vocab.index(toks[i - 1])] = 1
        out.append(x)
    return out


def test_evaluate_tagger_with_a_perfect_and_a_broken_tagger():
    data = toy_tagged(50)
    gold = {s.tokens: s.tags for s in data}
    perfect = evaluate_tagger(lambda b: [gold[t] for t in b], data, spans=True, batch_size=7)
    assert perfect.accuracy == 1.0 and perfect.f1 == 1.0 and perfect.n_sentences == 50
    all_o = evaluate_tagger(lambda b: [["O"] * len(t) for t in b], data, spans=True)
    assert all_o.f1 == 0.0 and 0 < all_o.accuracy < 1
    assert perfect.scores("NER ") == {"NER acc": 100.0, "NER F1": 100.0}
    with pytest.raises(ValueError, match="returned 0 sentences"):
        evaluate_tagger(lambda b: [], data, spans=False)


def test_token_probe_learns_word_determined_tags():
    train, dev, test = toy_tagged(200, 1), toy_tagged(50, 2), toy_tagged(80, 3)
    res = token_probe(word_vectors, train, test, dev=dev, spans=True, max_train_tokens=None, max_eval_tokens=None)
    assert res.accuracy > 0.97 and res.f1 > 0.95
    assert res.meta["C"] in (0.1, 1.0, 10.0) and res.meta["tags_seen"] == 4
    with pytest.raises(ValueError, match="one \\[n_tokens, d\\] array"):
        token_probe(lambda b: [np.zeros((1, 3))] * len(b), train, test, spans=False)


# ---------------------------------------------------------------- parity with seqeval (peers)
def _random_tags(rng: random.Random, n: int, scheme: str) -> list[str]:
    types = ["PER", "LOC", "ORG"]
    prefixes = {"iob1": "IB", "iob2": "BI", "iobes": "BIES", "any": "BIES"}[scheme]
    return ["O" if rng.random() < 0.4 else f"{rng.choice(prefixes)}-{rng.choice(types)}" for _ in range(n)]


@pytest.mark.peers
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # seqeval averages empty per-type lists
@pytest.mark.parametrize("scheme", ["iob1", "iob2", "iobes", "any"])
def test_parity_with_seqeval_on_random_tags(scheme):
    from seqeval.metrics import (
        accuracy_score,
        classification_report,
        f1_score,
        precision_score,
        recall_score,
    )
    from seqeval.metrics.sequence_labeling import get_entities as seqeval_entities

    rng = random.Random(hash(scheme) % 1000)
    for _ in range(30):
        gold = [_random_tags(rng, rng.randint(0, 12), scheme) for _ in range(rng.randint(1, 8))]
        pred = [[t if rng.random() < 0.6 else _random_tags(rng, 1, scheme)[0] for t in s] for s in gold]
        for s in gold:
            assert get_entities(s) == seqeval_entities(s)
        ours = span_scores(gold, pred)
        assert ours.f1 == pytest.approx(f1_score(gold, pred, zero_division=0))
        assert ours.precision == pytest.approx(precision_score(gold, pred, zero_division=0))
        assert ours.recall == pytest.approx(recall_score(gold, pred, zero_division=0))
        if sum(map(len, gold)):
            assert token_accuracy(gold, pred) == pytest.approx(accuracy_score(gold, pred))
        report = classification_report(gold, pred, output_dict=True, zero_division=0)
        for typ, d in ours.per_type.items():
            assert d["f1"] == pytest.approx(report[typ]["f1-score"]) and d["support"] == report[typ]["support"]


@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize("name", ["conll2003_ner", "conll2000_chunk"])
def test_parity_with_seqeval_on_real_tags(name):
    """The real test sets (CoNLL-2003 is IOB1, CoNLL-2000 IOB2), against corrupted copies."""
    from seqeval.metrics import f1_score

    from companion.data.tasks import load_tagging

    gold = [list(s.tags) for s in load_tagging(name)["test"]]
    rng = random.Random(0)
    alphabet = sorted({t for s in gold for t in s})
    pred = [[t if rng.random() < 0.9 else rng.choice(alphabet) for t in s] for s in gold]
    assert span_scores(gold, gold).f1 == 1.0
    assert span_scores(gold, pred).f1 == pytest.approx(f1_score(gold, pred, zero_division=0))
