"""Tests of companion.evaluate: perplexity, word similarity, analogies, neighbours, tables.

The maths is checked against brute-force references written as plainly as possible; the
``peers`` tests check exact agreement with gensim 4.4.0's ``KeyedVectors.evaluate_word_pairs``
and ``evaluate_word_analogies`` on synthetic vocabularies.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.evaluate import (
    analogy,
    average_ranks,
    bits_per_token,
    compare_embeddings,
    evaluate_nll,
    nearest_neighbours,
    perplexity,
    perplexity_of,
    spearman,
    word_similarity,
)

SECTIONS = ("capital-common-countries", "family", "gram1-adjective-to-adverb", "gram3-comparative")


def synthetic_embeddings(seed: int = 0, dim: int = 16, n_filler: int = 150, noise: float = 0.6,
                         case_variants: bool = True):
    """A vocabulary with planted analogies: in each section, word y_i = x_i + offset + noise.

    Returns (vectors float32 [V, dim], words in "frequency" order, questions, pairs).
    Some words have an upper-case variant with its own vector, placed later in the order.
    """
    rng = np.random.default_rng(seed)
    vecs: dict[str, np.ndarray] = {}
    questions = []
    for s, section in enumerate(SECTIONS):
        offset = rng.normal(size=dim) * 1.5
        xs = [f"x{s}_{i}" for i in range(12)]
        ys = [f"y{s}_{i}" for i in range(12)]
        for x, y in zip(xs, ys):
            vecs[x] = rng.normal(size=dim)
            vecs[y] = vecs[x] + offset + noise * rng.normal(size=dim)
        for _ in range(40):
            i, j = rng.choice(12, size=2, replace=False)
            questions.append((section, xs[i], ys[i], xs[j], ys[j]))
    for i in range(n_filler):
        vecs[f"f{i}"] = rng.normal(size=dim)
    words = list(vecs)
    rng.shuffle(words)
    if case_variants:
        # upper-case twins, appended (less frequent), with their own vectors
        for w in words[:20]:
            vecs[w.upper()] = rng.normal(size=dim)
        words += [w.upper() for w in words[:20]]
    # questions mentioning unknown words, and a mixed-case question
    questions.append(("family", "x1_0", "nowhere", "x1_1", "y1_1"))
    questions.append(("gram3-comparative", "X3_0".lower(), "y3_0", "missing", "y3_2"))
    questions.append((SECTIONS[0], words[0].upper(), words[1], words[2], words[3]))
    vectors = np.stack([vecs[w] for w in words]).astype(np.float32)
    pairs = []
    for _ in range(60):
        a, b = rng.choice(len(words), size=2, replace=False)
        pairs.append((words[a], words[b], float(rng.integers(0, 10))))  # integer scores: ties
    pairs.append(("unknown_word", words[0], 5.0))
    pairs.append((words[3].upper(), words[4], 2.0))
    return vectors, words, questions, pairs


# ---------------------------------------------------------------- perplexity


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    v, n = 37, 11
    assert perplexity(n * math.log(v), n) == pytest.approx(v, rel=1e-12)
    assert bits_per_token(n * math.log(v), n) == pytest.approx(math.log2(v))


def test_perplexity_is_exp_of_cross_entropy():
    g = torch.Generator().manual_seed(0)
    logits, y = torch.randn(50, 9, generator=g), torch.randint(0, 9, (50,), generator=g)
    ce = F.cross_entropy(logits, y)  # mean, nats
    nll_sum = F.cross_entropy(logits, y, reduction="sum")
    assert perplexity(nll_sum, 50) == pytest.approx(math.exp(ce.item()), rel=1e-6)


def test_perplexity_infinite_and_bad_inputs():
    assert perplexity(math.inf, 3) == math.inf
    assert perplexity(1e6, 1) == math.inf  # no OverflowError
    with pytest.raises(ValueError, match="negative"):
        perplexity(-1.0, 3)
    with pytest.raises(ValueError, match="n_tokens"):
        perplexity(1.0, 0)
    with pytest.raises(ValueError, match="n_tokens"):
        perplexity(1.0, 2.5)
    with pytest.raises(ValueError, match="NaN"):
        perplexity(float("nan"), 2)


class _Bigram(torch.nn.Module):
    def __init__(self, v: int = 7):
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(v, v)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.table(x))


def _nll(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y, reduction="sum"), y.numel()


def test_perplexity_of_sums_over_unequal_batches_and_restores_mode():
    model = _Bigram()
    model.train()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randint(0, 7, (23,), generator=g), torch.randint(0, 7, (23,), generator=g)
    batches = [(x[:20], y[:20]), (x[20:], y[20:])]  # 20 + 3 tokens: a mean of batch means is wrong
    ppl = perplexity_of(model, batches, _nll)
    assert model.training  # mode restored
    with torch.no_grad():
        model.eval()
        expected = math.exp(F.cross_entropy(model(x), y).item())
    assert ppl == pytest.approx(expected, rel=1e-6)
    wrong = math.exp(np.mean([F.cross_entropy(model(a), b).item() for a, b in batches]))
    assert abs(ppl - wrong) > 1e-3
    total, n = evaluate_nll(model, batches, _nll, device="cpu")
    assert n == 23 and total > 0


def test_evaluate_nll_errors():
    model = _Bigram()
    with pytest.raises(ValueError, match="no batches"):
        evaluate_nll(model, [], _nll)
    with pytest.raises(ValueError, match="pair"):
        evaluate_nll(model, [(torch.tensor([1]), torch.tensor([2]))], lambda m, b: 1.0)
    with pytest.raises(TypeError):
        evaluate_nll(model, [], "nll")


# ---------------------------------------------------------------- ranks and Spearman


def test_average_ranks_matches_scipy_with_ties():
    x = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    assert average_ranks(x).tolist() == scipy.stats.rankdata(x).tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.floats(-3, 3, allow_nan=False, width=32)), min_size=3, max_size=40))
def test_spearman_equals_scipy(pairs):
    x = [float(a) for a, _ in pairs]
    y = [b for _, b in pairs]
    ours = spearman(x, y)
    ref = scipy.stats.spearmanr(x, y).statistic if len(set(x)) > 1 and len(set(y)) > 1 else float("nan")
    if math.isnan(ref):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(ref, abs=1e-12)


def test_spearman_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="NaN"):
        spearman([1, float("nan"), 3], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 2"):
        spearman([1], [1])


# ---------------------------------------------------------------- word similarity


def test_word_similarity_against_brute_force():
    vectors, words, _, pairs = synthetic_embeddings(1)
    index = {w: i for i, w in enumerate(words)}
    res = word_similarity(torch.from_numpy(vectors), index, pairs, case_insensitive=False)
    gold, model = [], []
    for a, b, s in pairs:
        if a in index and b in index:
            va, vb = vectors[index[a]].astype(np.float64), vectors[index[b]].astype(np.float64)
            model.append(va @ vb / np.linalg.norm(va) / np.linalg.norm(vb))
            gold.append(s)
    assert res.n_used == len(gold) == res.n_pairs - res.n_oov
    assert res.coverage == pytest.approx(len(gold) / len(pairs))
    assert res.cosines == pytest.approx(model, abs=1e-6)
    assert res.spearman == pytest.approx(scipy.stats.spearmanr(gold, model).statistic, abs=1e-9)


def test_word_similarity_case_folding_and_oov_flag():
    vectors = np.eye(3, dtype=np.float32)
    index = {"paris": 0, "Paris": 1, "london": 2}
    pairs = [("PARIS", "london", 1.0), ("paris", "london", 2.0), ("Paris", "paris", 3.0), ("rome", "paris", 4.0)]
    strict = word_similarity(vectors, index, pairs, case_insensitive=False)
    assert (strict.n_oov, strict.n_used) == (2, 2)
    folded = word_similarity(vectors, index, pairs, case_insensitive=True)
    assert (folded.n_oov, folded.n_used) == (1, 3)
    assert folded.cosines == pytest.approx([0.0, 0.0, 1.0])  # "Paris" folds onto the first row, "paris"
    zero = word_similarity(vectors, index, pairs, oov_as_zero=True)
    assert zero.n_used == 4 and zero.cosines[-1] == 0.0 and zero.coverage == 0.75


def test_word_similarity_bad_inputs():
    v = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="none of the"):
        word_similarity(v, {"a": 0}, [("x", "y", 1.0)])
    with pytest.raises(ValueError, match="3-tuple"):
        word_similarity(v, {"a": 0}, [("a", "b")])
    with pytest.raises(ValueError, match="empty"):
        word_similarity(v, {"a": 0}, [])
    with pytest.raises(ValueError, match="rows"):
        word_similarity(v, {"a": 7}, [("a", "a", 1.0)])
    with pytest.raises(ValueError, match="NaN"):
        word_similarity(np.full((2, 2), np.nan), {"a": 0}, [("a", "a", 1.0)])
    with pytest.raises(TypeError, match="index"):
        word_similarity(v, ["a", "b", "c"], [("a", "b", 1.0)])
    with pytest.raises(ValueError, match="non-numeric"):
        word_similarity(v, {"a": 0, "b": 1}, [("a", "b", "high")])


# ---------------------------------------------------------------- analogies


def brute_force_analogy(vectors, words, questions, method, restrict, eps):
    """Plain Python loops over every candidate; case-sensitive."""
    allowed = {w: i for i, w in enumerate(words[:restrict])}
    unit = vectors.astype(np.float64)
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True)
    preds = []
    for _, a, b, c, d in questions:
        if not all(w in allowed for w in (a, b, c, d)):
            preds.append(None)
            continue
        ia, ib, ic = allowed[a], allowed[b], allowed[c]
        best, best_score = None, -math.inf
        for i in range(restrict):
            if i in (ia, ib, ic):
                continue
            ca, cb, cc = unit[i] @ unit[ia], unit[i] @ unit[ib], unit[i] @ unit[ic]
            if method == "3cosadd":
                score = cb - ca + cc
            else:
                score = ((1 + cb) / 2) * ((1 + cc) / 2) / ((1 + ca) / 2 + eps)
            if score > best_score:
                best, best_score = i, score
        preds.append(words[best])
    return preds


@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
def test_analogy_matches_brute_force(method):
    vectors, words, questions, _ = synthetic_embeddings(2, case_variants=False)
    restrict = 200
    res = analogy(vectors.astype(np.float64), {w: i for i, w in enumerate(words)}, questions, method=method,
                  restrict_vocab=restrict, case_insensitive=False, batch_size=7)
    ref = brute_force_analogy(vectors, words, questions, method, restrict, 1e-3)
    assert res.predictions == ref
    expected_correct = sum(p == q[4] for p, q in zip(ref, questions) if p is not None)
    answered = sum(p is not None for p in ref)
    assert res.n_correct == expected_correct and res.n_answered == answered
    assert res.accuracy == pytest.approx(expected_correct / answered)
    assert res.coverage == pytest.approx(answered / len(questions))
    assert 0.1 < res.accuracy < 0.95  # the planted structure is found, but not trivially


def test_analogy_sections_and_totals():
    vectors, words, questions, _ = synthetic_embeddings(3, case_variants=False)
    res = analogy(vectors, {w: i for i, w in enumerate(words)}, questions, restrict_vocab=None,
                  case_insensitive=False)
    assert set(res.per_section) == set(SECTIONS)
    sem = [res.section_counts[s] for s in SECTIONS[:2]]
    syn = [res.section_counts[s] for s in SECTIONS[2:]]
    assert res.semantic == pytest.approx(sum(c for c, _, _ in sem) / sum(a for _, a, _ in sem))
    assert res.syntactic == pytest.approx(sum(c for c, _, _ in syn) / sum(a for _, a, _ in syn))
    assert sum(t for _, _, t in res.section_counts.values()) == len(questions)
    wrong = analogy(vectors, {w: i for i, w in enumerate(words)}, questions, restrict_vocab=None,
                    case_insensitive=False, oov_as_wrong=True)
    assert wrong.accuracy == pytest.approx(res.n_correct / len(questions))


def test_analogy_excludes_inputs_and_their_case_variants():
    # b - a + c lands exactly on c's case variants; none of them may be the answer.
    vectors = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, -0.01, 1], [0, 0.02, 1], [0.1, 0.5, 0.9]], dtype=np.float32)
    words = ["a", "b", "ab", "Ab", "AB", "d"]
    index = {w: i for i, w in enumerate(words)}
    q = [("family", "a", "a", "ab", "d"), ("family", "a", "a", "AB", "d")]
    res = analogy(vectors, index, q, case_insensitive=True)
    assert res.predictions == ["d", "d"] and res.n_correct == 2
    res = analogy(vectors, index, q, case_insensitive=False)
    assert res.predictions == ["Ab", "ab"] and res.n_correct == 0


def test_analogy_restrict_vocab_cuts_questions_and_candidates():
    vectors, words, questions, _ = synthetic_embeddings(4, case_variants=False)
    index = {w: i for i, w in enumerate(words)}
    small = analogy(vectors, index, questions, restrict_vocab=60, case_insensitive=False)
    full = analogy(vectors, index, questions, restrict_vocab=None, case_insensitive=False)
    assert small.coverage < full.coverage
    assert all(p is None or index[p] < 60 for p in small.predictions)


def test_analogy_bad_inputs():
    v = np.eye(4, dtype=np.float32)
    idx = {"a": 0, "b": 1, "c": 2, "d": 3}
    q = [("s", "a", "b", "c", "d")]
    with pytest.raises(ValueError, match="method"):
        analogy(v, idx, q, method="3cosavg")
    with pytest.raises(ValueError, match="5-tuple"):
        analogy(v, idx, [("a", "b", "c", "d")])
    with pytest.raises(ValueError, match="restrict_vocab"):
        analogy(v, idx, q, restrict_vocab=0)
    with pytest.raises(ValueError, match="batch_size"):
        analogy(v, idx, q, batch_size=0)
    with pytest.raises(ValueError, match="2-D"):
        analogy(np.ones(4), idx, q)


# ---------------------------------------------------------------- neighbours and tables


def test_nearest_neighbours():
    vectors, words, _, _ = synthetic_embeddings(5, case_variants=False)
    index = {w: i for i, w in enumerate(words)}
    got = nearest_neighbours(vectors, index, words[7], k=5, case_insensitive=False)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ unit[7]
    sims[7] = -np.inf
    order = np.argsort(-sims, kind="stable")[:5]
    assert [w for w, _ in got] == [words[i] for i in order]
    assert [s for _, s in got] == pytest.approx(sims[order].tolist(), abs=1e-6)
    by_vector = nearest_neighbours(vectors, index, vectors[7], k=1)
    assert by_vector[0][0] == words[7]
    with pytest.raises(KeyError, match="not in the vocabulary"):
        nearest_neighbours(vectors, index, "no-such-word")
    with pytest.raises(ValueError, match="dims"):
        nearest_neighbours(vectors, index, np.ones(3))
    with pytest.raises(ValueError, match="k must"):
        nearest_neighbours(vectors, index, words[0], k=0)


def test_compare_embeddings_table():
    vectors, words, questions, pairs = synthetic_embeddings(6)
    index = {w: i for i, w in enumerate(words)}
    rng = np.random.default_rng(0)
    table = compare_embeddings(
        {"planted": (vectors, index), "random": (rng.normal(size=vectors.shape), index)},
        similarity={"toy": pairs},
        analogies=questions,
        methods=("3cosadd", "3cosmul"),
        restrict_vocab=None,
    )
    assert list(table.index) == ["planted", "random"]
    assert {"vocab", "dim", "toy rho", "toy coverage", "3cosadd", "3cosmul semantic",
            "3cosmul syntactic", "analogy coverage"} <= set(table.columns)
    single = analogy(vectors, index, questions, restrict_vocab=None)
    assert table.loc["planted", "3cosadd"] == pytest.approx(single.accuracy)
    assert table.loc["planted", "3cosadd"] > table.loc["random", "3cosadd"]
    with pytest.raises(ValueError, match="benchmark"):
        compare_embeddings({"x": (vectors, index)})


def test_vocab_like_index_is_accepted():
    class Vocab:  # the shape of companion.data.Vocab: itos and stoi
        def __init__(self, itos):
            self.itos = list(itos)
            self.stoi = {w: i for i, w in enumerate(itos)}

    vectors, words, questions, pairs = synthetic_embeddings(7)
    a = analogy(vectors, Vocab(words), questions)
    b = analogy(vectors, {w: i for i, w in enumerate(words)}, questions)
    assert a.predictions == b.predictions
    with pytest.raises(ValueError, match="rows"):
        analogy(vectors[:-1], Vocab(words), questions)


@pytest.mark.gpu
def test_evaluations_agree_on_cuda():
    vectors, words, questions, pairs = synthetic_embeddings(8)
    index = {w: i for i, w in enumerate(words)}
    for m in ("3cosadd", "3cosmul"):
        cpu = analogy(vectors, index, questions, method=m)
        gpu = analogy(vectors, index, questions, method=m, device="cuda")
        assert cpu.predictions == gpu.predictions
    assert word_similarity(vectors, index, pairs, device="cuda").spearman == pytest.approx(
        word_similarity(vectors, index, pairs).spearman, abs=1e-6)


# ---------------------------------------------------------------- parity with gensim 4.4.0


def _keyed_vectors(vectors, words):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=vectors.shape[1])
    kv.add_vectors(words, vectors)
    return kv


@pytest.mark.peers
@pytest.mark.parametrize("case_insensitive", [True, False])
@pytest.mark.parametrize("dummy4unknown", [False, True])
@pytest.mark.parametrize("restrict_vocab", [300000, 120])
def test_word_pairs_parity_with_gensim(tmp_path, case_insensitive, dummy4unknown, restrict_vocab):
    vectors, words, _, pairs = synthetic_embeddings(10)
    path = tmp_path / "pairs.tsv"
    path.write_text("# synthetic\n" + "".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs))
    _, ref_spearman, oov_ratio = _keyed_vectors(vectors, words).evaluate_word_pairs(
        str(path), restrict_vocab=restrict_vocab, case_insensitive=case_insensitive, dummy4unknown=dummy4unknown)
    ours = word_similarity(vectors, {w: i for i, w in enumerate(words)}, pairs, restrict_vocab=restrict_vocab,
                           case_insensitive=case_insensitive, oov_as_zero=dummy4unknown)
    assert ours.spearman == pytest.approx(ref_spearman.statistic, abs=1e-12)
    assert 100 * (1 - ours.coverage) == pytest.approx(oov_ratio, abs=1e-9)


def _write_questions(path, questions):
    lines, current = [], None
    for section, *words in questions:
        if section != current:
            lines.append(f": {section}")
            current = section
        lines.append(" ".join(words))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.peers
@pytest.mark.parametrize("case_insensitive", [True, False])
@pytest.mark.parametrize("dummy4unknown", [False, True])
@pytest.mark.parametrize("restrict_vocab", [300000, 200])
def test_analogy_3cosadd_parity_with_gensim(tmp_path, case_insensitive, dummy4unknown, restrict_vocab):
    vectors, words, questions, _ = synthetic_embeddings(11, noise=1.0)  # accuracy ~0.6: many misses to agree on
    questions = sorted(questions, key=lambda q: SECTIONS.index(q[0]))  # the file groups sections
    path = tmp_path / "questions.txt"
    _write_questions(path, questions)
    score, sections = _keyed_vectors(vectors, words).evaluate_word_analogies(
        str(path), restrict_vocab=restrict_vocab, case_insensitive=case_insensitive, dummy4unknown=dummy4unknown)
    ours = analogy(vectors, {w: i for i, w in enumerate(words)}, questions, method="3cosadd",
                   restrict_vocab=restrict_vocab, case_insensitive=case_insensitive, oov_as_wrong=dummy4unknown)
    assert ours.accuracy == pytest.approx(score, abs=1e-12)
    fold = str.upper if case_insensitive else str
    for sec in sections[:-1]:  # the last one is gensim's total
        correct = {tuple(q) for q in sec["correct"]}
        ours_correct = {tuple(fold(w) for w in q[1:]) for q, p in zip(questions, ours.predictions)
                        if q[0] == sec["section"] and p is not None and fold(p) == fold(q[4])}
        assert ours_correct == correct, sec["section"]
        assert ours.section_counts[sec["section"]][0] == len(sec["correct"])  # duplicates count twice
        _, answered, total = ours.section_counts[sec["section"]]
        assert (total if dummy4unknown else answered) == len(sec["correct"]) + len(sec["incorrect"])


@pytest.mark.peers
def test_analogy_3cosmul_parity_with_gensim():
    # gensim's evaluate_word_analogies has no 3CosMul (and most_similar_cosmul ignores
    # restrict_vocab), so the reference runs most_similar_cosmul on the first `restrict` words.
    vectors, words, questions, _ = synthetic_embeddings(12, case_variants=False)
    restrict = 170
    kv = _keyed_vectors(vectors[:restrict], words[:restrict])
    ref = []
    for _, a, b, c, d in questions:
        if all(w in kv.key_to_index for w in (a, b, c, d)):
            ref.append(kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=1)[0][0])
        else:
            ref.append(None)
    ours = analogy(vectors, {w: i for i, w in enumerate(words)}, questions, method="3cosmul",
                   restrict_vocab=restrict, case_insensitive=False, epsilon=1e-6)
    assert ours.predictions == ref
