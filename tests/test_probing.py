"""Chapter 11's probes, control tasks, layer statistics, structural probe and attention stats."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from companion.data.treebank import parse_brackets
from companion.probing import attention_stats as A
from companion.probing import layers as L
from companion.probing import probes as P
from companion.probing import structural as S

# ------------------------------------------------------------------------------ control tasks


def _toy_corpus(n=200, seed=0):
    rng = np.random.default_rng(seed)
    vocab = {f"n{i}": "N" for i in range(15)} | {f"v{i}": "V" for i in range(10)} | {"the": "D", "a": "D"}
    words = list(vocab)
    sents = [[words[k] for k in rng.integers(0, len(words), size=rng.integers(3, 9))] for _ in range(n)]
    return sents, [[vocab[w] for w in s] for s in sents]


def test_control_task_one_label_per_type_and_follows_distribution():
    sents, tags = _toy_corpus()
    m = P.control_task(tags, sents, sents, seed=0)
    lab = P.control_labels(m, sents)
    seen: dict[str, set] = {}
    for s, c in zip(sents, lab):
        for w, t in zip(s, c):
            seen.setdefault(w, set()).add(t)
    assert all(len(v) == 1 for v in seen.values())          # fixed per word type
    assert set(m.values()) <= {"N", "V", "D"}
    assert m == P.control_task(tags, sents, sents, seed=0)   # deterministic
    assert m != P.control_task(tags, sents, sents, seed=1)


def test_control_task_distribution_over_many_types():
    words = [[f"w{i}" for i in range(j, j + 10)] for j in range(0, 5000, 10)]
    tags = [["A"] * 7 + ["B"] * 3 for _ in words]
    m = P.control_task(tags, words, words, seed=3)
    share = Counter(m.values())["A"] / len(m)
    assert abs(share - 0.7) < 0.03


def test_control_errors():
    with pytest.raises(ValueError, match="sentences"):
        P.control_task([["A"]], [], [])
    with pytest.raises(KeyError, match="no control label"):
        P.control_labels({"a": "X"}, [["a", "b"]])


def test_encode_labels_unseen_is_never_right():
    labels, (tr, te) = P.encode_labels([["A", "B"]], [["B", "C"]])
    assert labels == ["A", "B"] and tr.tolist() == [0, 1] and te.tolist() == [1, 2]


# ------------------------------------------------------------------------------------- probes


def _linear_data(n=600, d=8, k=3, seed=0):
    g = np.random.default_rng(seed)
    W = g.standard_normal((d, k))
    X = g.standard_normal((n, d)).astype(np.float32)
    return X, (X @ W).argmax(1)


def test_linear_probe_learns_a_linear_rule_and_is_deterministic():
    X, y = _linear_data()
    cfg = P.ProbeConfig(epochs=30, lr=1e-2, batch_size=32)
    r = P.fit_probe(X[:400], y[:400], X[400:], y[400:], cfg)
    assert r.test_acc > 0.9
    assert r.test_acc == P.fit_probe(X[:400], y[:400], X[400:], y[400:], cfg).test_acc


def test_linear_probe_agrees_with_sklearn_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    X, y = _linear_data(seed=1)
    ours = P.fit_probe(X[:400], y[:400], X[400:], y[400:], P.ProbeConfig(epochs=60, lr=1e-2, batch_size=32)).test_acc
    sk = LogisticRegression(max_iter=2000).fit(X[:400], y[:400]).score(X[400:], y[400:])
    assert abs(ours - sk) <= 0.03


def test_mlp_memorises_random_vectors_linear_cannot():
    """The control-task phenomenon in miniature: labels attached to word identity only."""
    g = np.random.default_rng(0)
    types = 60
    labels = g.integers(0, 4, size=types)
    ids = g.integers(0, types, size=1500)
    vecs = g.standard_normal((types, 16)).astype(np.float32)
    X, y = vecs[ids], labels[ids]
    lin = P.fit_probe(X[:1000], y[:1000], X[1000:], y[1000:], P.ProbeConfig(epochs=20, lr=1e-2))
    mlp = P.fit_probe(X[:1000], y[:1000], X[1000:], y[1000:],
                      P.ProbeConfig(kind="mlp", hidden=128, epochs=40, lr=3e-3))
    assert mlp.test_acc > 0.95 > lin.test_acc


def test_probe_config_and_shape_errors():
    with pytest.raises(ValueError, match="kind"):
        P.ProbeConfig(kind="svm")
    with pytest.raises(ValueError, match="labels"):
        P.fit_probe(np.zeros((3, 2)), np.zeros(2, int), np.zeros((1, 2)), np.zeros(1, int))


def test_probe_with_control_selectivity():
    sents, tags = _toy_corpus(300)
    ext = P.random_extractor(dim=16, seed=0)
    (Xa,), (Xb,) = ext(sents[:200]), ext(sents[200:])
    sel = P.probe_with_control(Xa, Xb, sents[:200], tags[:200], sents[200:], tags[200:],
                               P.ProbeConfig(kind="mlp", hidden=64, epochs=30, lr=1e-2))
    # a word-identity task: random vectors solve both the task and its control
    assert sel.task_acc > 0.9 and sel.control_acc > 0.9
    assert sel.selectivity == pytest.approx(sel.task_acc - sel.control_acc)


def test_bootstrap_interval_covers_mean():
    c = np.array([1] * 70 + [0] * 30)
    lo, hi = P.bootstrap_acc(c, n_boot=500)
    assert lo < 0.7 < hi and hi - lo < 0.25


# -------------------------------------------------------------------------------- extractors


def test_registry_and_static_extractor():
    ext = P.static_extractor(np.eye(3, dtype=np.float32), {"a": 0, "b": 1})
    P.register_extractor("toy", ext)
    (out,) = P.extract("toy", [["A", "b"], ["zzz"]])
    assert out.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="already registered"):
        P.register_extractor("toy", ext, replace=False)
    with pytest.raises(KeyError, match="registered"):
        P.extract("nope", [["a"]])
    P.FEATURE_EXTRACTORS.pop("toy")


def test_random_extractor_same_vector_per_type():
    (X,) = P.random_extractor(dim=4)([["x", "y", "x"]])
    assert np.allclose(X[0], X[2]) and not np.allclose(X[0], X[1])


def test_contextual_extractor_layers_match_encoder_and_pool_pieces():
    from companion.transformer.bert import (
        BertConfig,
        BertEncoder,
        pad_batch,
        pair_inputs,
    )
    from companion.transformer.tokenizers import WordPiece

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "on", "mat"]
    wp = WordPiece(vocab)
    cfg = BertConfig(vocab_size=len(vocab), max_len=16, n_layer=2, n_head=2, d_model=8, d_ff=16,
                     dropout=0.0, attn_dropout=0.0, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    enc = BertEncoder(cfg, seed=0).eval()
    ext = P.wordpiece_extractor(enc, wp)
    sents = [["the", "cats", "sat"], ["on", "the", "mat", "mat"]]
    layers = ext(sents)
    assert len(layers) == 3 and layers[0].shape == (7, 8)
    b = pad_batch(cfg, [pair_inputs(cfg, wp.ids(" ".join(sents[0])))])
    with torch.no_grad():
        top = enc(b["ids"], b["segments"], b["attention_mask"])[0]
    # "cats" = cat + ##s: the mean of pieces 2 and 3 ([CLS] is piece 0)
    assert np.allclose(layers[2][1], top[2:4].mean(0).numpy(), atol=1e-5)
    assert np.allclose(layers[2][2], top[4].numpy(), atol=1e-5)
    # a sentence longer than a row is cut into runs of whole words, each still has a vector
    short = P.contextual_extractor(P.bert_layers(enc), lambda w, i: wp.ids(w), prefix=[2], suffix=[3],
                                   max_len=5)
    assert short([["the", "cats", "sat", "on"]])[0].shape == (4, 8)


# ---------------------------------------------------------------------------------- layer stats


def test_expected_layer_and_center_of_gravity_by_hand():
    assert L.expected_layer([0.5, 0.9, 0.9, 1.0]) == pytest.approx((1 * 0.4 + 3 * 0.1) / 0.5)
    assert L.center_of_gravity([0.0, 1.0, 1.0]) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="undefined"):
        L.expected_layer([0.5, 0.5])


def test_scalar_mix_finds_the_informative_layer():
    g = np.random.default_rng(0)
    X, y = _linear_data(n=800, seed=2)
    noise = [g.standard_normal(X.shape).astype(np.float32) for _ in range(2)]
    layers = [noise[0], X, noise[1]]
    acc, w = L.fit_scalar_mix([a[:600] for a in layers], y[:600], [a[600:] for a in layers], y[600:],
                              P.ProbeConfig(epochs=40, lr=1e-2))
    assert acc > 0.85 and w.argmax() == 1
    cum = L.cumulative_scores([a[:600] for a in layers], y[:600], [a[600:] for a in layers], y[600:],
                              P.ProbeConfig(epochs=40, lr=1e-2))
    assert cum[1] - cum[0] > 0.3 and 0.8 < L.expected_layer(cum) < 1.6
    per = L.layer_scores([a[:600] for a in layers], y[:600], [a[600:] for a in layers], y[600:],
                         P.ProbeConfig(epochs=15, lr=1e-2))
    assert per.argmax() == 1


def _three_layers(n=500, seed=2):
    g = np.random.default_rng(0)
    X, y = _linear_data(n=n, seed=seed)
    noise = [g.standard_normal(X.shape).astype(np.float32) for _ in range(2)]
    layers = [noise[0], X, noise[1]]
    k = 3 * n // 4
    return [a[:k] for a in layers], y[:k], [a[k:] for a in layers], y[k:]


def test_layer_spread_matches_single_runs_and_gives_a_spread():
    tr, ytr, te, yte = _three_layers()
    cfg = P.ProbeConfig(epochs=4, lr=2e-2, batch_size=64)
    sp = L.layer_spread(tr, ytr, te, yte, cfg, seeds=(0, 1))
    assert sp.layer_correct.shape == (2, 3, len(yte)) and sp.weights.shape == (2, 3)
    # seed 0 is exactly what the one-seed functions give (the layers are standardised once)
    np.testing.assert_allclose(sp.per_layer[0], L.layer_scores(tr, ytr, te, yte, cfg))
    np.testing.assert_allclose(sp.cumulative[0], L.cumulative_scores(tr, ytr, te, yte, cfg))
    assert (sp.per_layer[:, 1] > sp.per_layer[:, [0, 2]].max(1) + 0.1).all()
    assert not np.allclose(sp.cumulative[0], sp.cumulative[1])  # seeds differ
    el = sp.expected_layers()
    boot = sp.boot_expected(200)
    assert ((0.6 < el) & (el < 1.4)).all() and boot.shape == (200,)  # the gain is at layer 1
    lo, hi = np.nanpercentile(boot, [2.5, 97.5])
    assert lo < np.mean(el) < hi and hi - lo < 0.6
    layers = sp.boot_layers(100)
    assert layers.shape == (100, 3) and (layers[:, 1] > layers[:, 0]).all()
    with pytest.raises(ValueError, match="seed"):
        L.layer_spread(tr, ytr, te, yte, cfg, seeds=())


def test_compare_expected_verdicts():
    g = np.random.default_rng(0)
    early, late = 1 + 0.1 * g.standard_normal(500), 3 + 0.1 * g.standard_normal(500)
    assert L.compare_expected(late, early)[3] == "holds"
    assert L.compare_expected(early, late)[3] == "reversed"
    d, lo, hi, verdict = L.compare_expected(early, early[::-1])
    assert verdict == "not separable" and lo < 0 < hi and abs(d) < 0.05
    assert L.compare_expected(early, np.full(500, np.nan))[3].startswith("undefined")
    with pytest.raises(ValueError, match="same length"):
        L.compare_expected(early, early[:10])


def test_layer_order_on_planted_tasks():
    from companion.probing.chapter11 import layer_order

    n = 40
    def spread(layer):  # a task that only layer ``layer`` of 4 solves, by construction
        cum = np.zeros((3, 4, n), bool)
        cum[:, layer:, :] = True
        cum[:, :, : n // 4] = True  # a quarter right from the start
        return L.LayerSpread((0, 1, 2), cum.copy(), cum, np.ones((3, 4)) / 4)

    frame = layer_order({"POS": spread(1), "chunk": spread(2), "NER": spread(3)}, n_boot=100)
    el, gain = frame[frame.statistic == "expected layer"], frame[frame.statistic == "depth gain"]
    assert list(el.verdict) == ["holds"] * 3
    assert el.difference.tolist() == pytest.approx([2.0, 1.0, 1.0])
    # the last layer solves every task and the first a quarter: depth helps all three alike
    assert list(gain.verdict) == ["not separable"] * 3 and (gain.difference.abs() < 5).all()


# -------------------------------------------------------------------------- structural probe

_TREE = "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)) )"


def test_dependencies_by_hand():
    (t,) = parse_brackets(_TREE)
    heads = S.dependencies(t.children[0])
    # The->cat, cat->sat, sat=root, on->sat, the->mat, mat->on, .->sat (Collins: PP headed by IN)
    assert heads == [1, 2, -1, 2, 5, 3, 2]


def test_dependencies_drop_traces():
    (t,) = parse_brackets("( (S (NP-SBJ (-NONE- *)) (VP (VB Go) (NP (NN home)))) )")
    assert S.dependencies(t.children[0]) == [-1, 0]


def test_tree_distances_and_depths_by_hand():
    d = S.tree_distances([1, 2, -1, 2, 5, 3, 2])
    assert d[0].tolist() == [0, 1, 2, 3, 5, 4, 3]
    assert S.tree_depths([1, 2, -1, 2, 5, 3, 2]).tolist() == [2, 1, 0, 1, 3, 2, 1]
    with pytest.raises(ValueError, match="root"):
        S.tree_distances([1, 0])


def test_mst_matches_scipy():
    from scipy.sparse.csgraph import minimum_spanning_tree

    g = np.random.default_rng(0)
    for n in (2, 5, 12):
        m = g.random((n, n))
        m = m + m.T
        np.fill_diagonal(m, 0)
        ours = sum(m[i, j] for i, j in S.min_spanning_tree(m))
        assert ours == pytest.approx(minimum_spanning_tree(m).sum())


def test_uuas_by_hand():
    heads = [1, 2, -1, 2, 5, 3, 2]
    gold = S.tree_distances(heads).astype(float)
    assert S.uuas(gold, heads) == (6, 6)
    chain = S.linear_baseline([7])[0]  # edges 0-1,1-2,2-3,3-4,4-5,5-6; gold has 0-1,1-2,2-3,3-5,4-5,2-6
    assert S.uuas(chain, heads) == (4, 6)
    keep = [True] * 6 + [False]       # without the final punctuation: 5 gold edges, chain gets 4
    assert S.uuas(chain, heads, keep) == (4, 5)


def test_structural_probe_recovers_a_planted_tree_metric():
    """Vectors that embed tree distance (as in Hewitt & Manning's Pythagorean embedding, rotated
    and with noise dimensions): the probe finds it."""
    g = np.random.default_rng(0)
    trees = []
    for _ in range(60):
        n = int(g.integers(5, 12))
        heads = [-1] + [int(g.integers(0, i)) for i in range(1, n)]
        trees.append(heads)
    R = np.linalg.qr(g.standard_normal((24, 24)))[0]
    xs = []
    for heads in trees:
        n = len(heads)
        emb = np.zeros((n, 24))
        for i in range(n):   # one unit dimension per edge on the path to the root: |x_i - x_j|^2 = d_T
            j = i
            while heads[j] != -1:
                emb[i, j] = 1.0
                j = heads[j]
        xs.append((emb @ R).astype(np.float32))
    dists = [S.tree_distances(h) for h in trees]
    probe = S.fit_structural(xs[:45], dists[:45], S.StructuralConfig(rank=24, epochs=40, lr=1e-2))
    res = S.evaluate_structural(S.predict_distances(probe, xs[45:]), trees[45:])
    assert res["uuas"] > 0.9 and res["dspr"] > 0.8


def test_structural_probe_fast_distances_equal_the_definition():
    probe = S.StructuralProbe(d=12, rank=5, seed=3)
    h = torch.randn(4, 9, 12, generator=torch.Generator().manual_seed(0), requires_grad=True)
    fast, plain = probe(h), probe.forward_plain(h)
    torch.testing.assert_close(fast, plain, atol=1e-5, rtol=1e-5)
    g_fast = torch.autograd.grad(fast.sum(), probe.B)[0]
    g_plain = torch.autograd.grad(plain.sum(), probe.B)[0]
    torch.testing.assert_close(g_fast, g_plain, atol=1e-4, rtol=1e-4)


# ---------------------------------------------------------------------------- attention stats


def test_word_attention_sums_to_and_averages_from():
    w = np.array([[0.1, 0.2, 0.3, 0.4],      # [CLS]
                  [0.0, 0.5, 0.5, 0.0],      # word 0, piece a
                  [0.2, 0.0, 0.4, 0.4],      # word 0, piece b
                  [0.0, 1.0, 0.0, 0.0]])     # word 1
    out = A.word_attention(w, [-1, 0, 0, 1], 2)
    # from word 0: mean of its rows; to word 0: sum over its columns
    assert np.allclose(out, [[(1.0 + 0.4) / 2, (0.0 + 0.4) / 2], [1.0, 0.0]])


def test_head_statistics_and_syntactic_heads_on_planted_patterns():
    T = 6  # [CLS] w0 w1 w2 w3 [SEP]
    prev = np.zeros((T, T))
    prev[0, 0] = 1
    for i in range(1, T):
        prev[i, i - 1] = 1
    sep = np.zeros((T, T))
    sep[:, T - 1] = 1
    heads = [1, -1, 3, 1]
    syn = np.zeros((T, T))
    for i, h in enumerate(heads):
        syn[i + 1, (h if h >= 0 else i) + 1] = 1
    syn[0, 0] = syn[T - 1, T - 1] = 1
    e = A.Encoded(np.stack([prev, sep, syn])[None], [-1, 0, 1, 2, 3, -1], 4)
    st = A.head_statistics([e])
    assert st["previous"][0].tolist() == pytest.approx([5 / 6, 0, 0])
    assert st["[SEP]"][0, 1] == pytest.approx(1.0)
    acc = A.syntactic_head_accuracy([e], [heads])
    assert acc[0, 2] == pytest.approx(1.0) and acc[0, 0] == pytest.approx(1 / 3)
    assert A.best_offset_baseline([heads]) == (1, pytest.approx(2 / 3))


# ------------------------------------------------------------------------------------- the map


def test_map_places_every_chapter_and_reads_scores(tmp_path):
    from companion.evaluate.tables import Row
    from companion.probing import taxonomy as T

    chapters = {m.chapter for m in T.MODELS}
    for ch in ("01a", "01b", "02", "03", "04a", "05", "06a", "06b", "07a", "07b", "08a", "08b", "09", "10a",
               "10b"):
        assert ch in chapters, ch
    rows = {"brown_ppl": [Row("modified KN, n = 5", "01a", {"test": 250.0}, "laptop"),
                          Row("modified KN, n = 5", "01a", {"test": 999.0}, "ci")]}
    recs = T.map_records(rows, notebooks=tmp_path)
    kn = next(r for r in recs if r["name"].startswith("Kneser"))
    assert kn["scores"] == {"Brown test ppl": 250.0} and kn["written"] is False
    frame = T.map_frame(recs)
    assert len(frame) == len(T.MODELS) and "chapter not yet written" in set(frame.measured)
    page = T.map_html(recs)
    assert "http" not in page and "src=" not in page          # nothing fetched: works offline
    assert page.count("<script>") == 1 and '"Kneser-Ney 5-gram"' in page
    with pytest.raises(ValueError, match="element_id"):
        T.map_html(recs, element_id="a b")


def test_map_rejects_values_off_the_axes():
    from companion.probing import taxonomy as T

    with pytest.raises(ValueError, match="architecture"):
        T.MapModel("x", 2000, "03", "non-contextual", "GRU", "LM")


# ---------------------------------------------------------------------------- K-BERT knowledge


def _kb():
    from companion.probing import knowledge as K

    return K.knowledge_base([K.Triple("Cook", "CEO", "Apple"), K.Triple("Beijing", "capital", "China")])


def test_sentence_tree_soft_positions_as_in_the_paper():
    from companion.probing import knowledge as K

    t = K.sentence_tree(["Tim", "Cook", "is", "visiting", "Beijing", "now"], _kb(), start=0)
    assert t.words == ["Tim", "Cook", "CEO", "Apple", "is", "visiting", "Beijing", "capital", "China", "now"]
    # K-BERT's Figure 2: the branch continues the entity, the trunk continues as if it were not there
    assert t.soft == [0, 1, 2, 3, 2, 3, 4, 5, 6, 5]
    assert t.branch == [-1, -1, 0, 0, -1, -1, -1, 1, 1, -1] and t.anchor == [1, 6]


def test_visible_matrix_by_hand():
    from companion.probing import knowledge as K

    t = K.sentence_tree(["Tim", "Cook", "is", "visiting", "Beijing", "now"], _kb())
    m = K.visible_matrix(t)
    T, F = True, False
    # rows: Tim Cook CEO Apple is visiting Beijing capital China now
    expected = np.array([
        [T, T, F, F, T, T, T, F, F, T],
        [T, T, T, T, T, T, T, F, F, T],
        [F, T, T, T, F, F, F, F, F, F],
        [F, T, T, T, F, F, F, F, F, F],
        [T, T, F, F, T, T, T, F, F, T],
        [T, T, F, F, T, T, T, F, F, T],
        [T, T, F, F, T, T, T, T, T, T],
        [F, F, F, F, F, F, T, T, T, F],
        [F, F, F, F, F, F, T, T, T, F],
        [T, T, F, F, T, T, T, F, F, T],
    ])
    assert (m == expected).all() and (m == m.T).all()


def test_encode_tree_pieces_cls_sep_and_naive_variant():
    from companion.probing import knowledge as K

    vocab = {w: i + 10 for i, w in enumerate(["tim", "cook", "ceo", "apple", "is", "visiting", "beijing", "capital", "china", "now"])}
    pieces = lambda w, i: [vocab[w.lower()]]
    t, ids = K.piece_tree(["Tim", "Cook", "is", "visiting", "Beijing", "now"], _kb(), pieces)
    assert t.anchor == [[1], [6]]
    assert t.soft == [1, 2, 3, 4, 3, 4, 5, 6, 7, 6]
    e = K.encode_tree(t, lambda w, i: [int(w)], cls_id=1, sep_id=2)
    assert e.ids[0].tolist() == [1] + ids + [2]
    assert e.positions[0].tolist() == [0, 1, 2, 3, 4, 3, 4, 5, 6, 7, 6, 7]   # [SEP] after the trunk
    v = e.visible[0]
    assert not v[0, 3] and not v[3, 0] and v[0, 11] and v[2, 3]              # [CLS] sees no branch
    naive = K.encode_tree(t, lambda w, i: [int(w)], cls_id=1, sep_id=2, soft=False, visible=False)
    assert naive.visible.all() and naive.positions[0].tolist() == list(range(12))


def test_piece_tree_multi_piece_entity_and_branch():
    from companion.probing import knowledge as K

    split = {"beijing": [5, 6], "capital": [7], "china": [8, 9], "in": [3], "now": [4]}
    t, ids = K.piece_tree(["in", "Beijing", "now"], _kb(), lambda w, i: split[w.lower()])
    assert ids == [3, 5, 6, 7, 8, 9, 4]
    assert t.soft == [1, 2, 3, 4, 5, 6, 4] and t.anchor == [[1, 2]]
    m = K.visible_matrix(t)
    assert m[1, 3] and m[2, 5] and not m[0, 3] and not m[6, 4]   # both entity pieces see the branch


def test_trunk_drift_is_zero_without_visibility_leaks_and_positive_naively():
    from companion.probing import knowledge as K
    from companion.transformer.bert import BertConfig, BertEncoder

    cfg = BertConfig(vocab_size=30, max_len=32, n_layer=1, n_head=2, d_model=16, d_ff=32, dropout=0.0,
                     attn_dropout=0.0, pad_id=0, unk_id=1, cls_id=2, sep_id=3, mask_id=4)
    enc = BertEncoder(cfg, seed=0).eval()
    vocab = {w: i + 10 for i, w in enumerate(["tim", "cook", "ceo", "apple", "is", "visiting", "beijing", "capital", "china", "now"])}
    pieces = lambda w, i: [vocab[w.lower()]]
    words = ["Tim", "Cook", "is", "visiting", "now"]
    # one layer: trunk tokens other than the entity never see the branch, so nothing changes
    assert K.trunk_drift(enc, words, _kb(), pieces, 2, 3, soft=True, visible=True) == pytest.approx(0, abs=1e-6)
    assert K.trunk_drift(enc, words, _kb(), pieces, 2, 3, soft=False, visible=False) > 1e-3


# ------------------------------------------------------------------------ chapter helpers


def test_bigram_shift_swaps_one_adjacent_pair_and_keeps_the_first_word():
    from companion.probing.chapter11 import bigram_shift

    rng = np.random.default_rng(0)
    s = ["The", "cat", "sat", "on", "mats"]
    for _ in range(20):
        out = bigram_shift(s, rng)
        diff = [i for i, (a, b) in enumerate(zip(s, out)) if a != b]
        assert out[0] == "The" and sorted(out) == sorted(s) and len(diff) == 2 and diff[1] == diff[0] + 1
    with pytest.raises(ValueError, match="3 words"):
        bigram_shift(["a", "b"], rng)


def test_uuas_by_layer_finds_a_middle_layer():
    from companion.probing import structural as S
    from companion.probing.chapter11 import PTBSentence, uuas_by_layer

    heads = [1, 2, -1, 2, 5, 3, 2]
    s = PTBSentence(["w"] * 7, ["DT", "NN", "VBD", "IN", "DT", "NN", "NN"], heads, None)
    gold, chain = S.tree_distances(heads).astype(float), S.linear_baseline([7])[0]
    star = np.ones((7, 7)) - np.eye(7)
    star[0, 1:] = star[1:, 0] = 0.5  # every word attached to word 0: 1 gold edge of 6
    preds = {("m", 0): [chain] * 8, ("m", 1): [gold] * 8, ("m", 2): [star] * 8}
    frame, summary = uuas_by_layer(preds, "m", [s] * 8, n_boot=50)
    assert frame.UUAS.tolist() == pytest.approx([100 * 4 / 6, 100.0, 100 / 6], abs=0.1)
    assert summary["best"] == 1 and summary["middle"]
    assert summary["over_first"][1] > 0 and summary["over_last"][0] == pytest.approx(100 * 5 / 6, abs=0.1)
    del preds[("m", 2)]
    assert not uuas_by_layer(preds, "m", [s] * 8, n_boot=50)[1]["middle"]  # best is the last layer
    with pytest.raises(ValueError, match="run_structural"):
        uuas_by_layer(preds, "other", [s] * 8)


def test_majority_baseline_and_uuas_interval():
    from companion.probing.chapter11 import (
        PTBSentence,
        TokenTask,
        majority_baseline,
        uuas_interval,
    )

    t = TokenTask("toy", [["a", "b", "a"]], [["X", "Y", "X"]], [["a", "b", "c"]], [["X", "X", "X"]])
    assert majority_baseline(t) == pytest.approx(2 / 3)   # b -> Y is wrong; unseen c -> X right
    heads = [1, 2, -1, 2, 5, 3, 2]
    s = PTBSentence(["w"] * 7, ["DT", "NN", "VBD", "IN", "DT", "NN", "."], heads, None)
    gold = S.tree_distances(heads).astype(float)
    u, lo, hi = uuas_interval([gold, S.linear_baseline([7])[0]], [s, s], n_boot=200)
    assert u == pytest.approx((5 + 4) / 10) and lo <= u <= hi


def test_add_probing_rows(tmp_path):
    import pandas as pd

    from companion.evaluate.tables import RunningTable
    from companion.probing.chapter11 import add_probing_rows

    frame = pd.DataFrame([{"representation": "MiniLM", "probe": "linear", "task acc": 90.0, "selectivity": 30.0},
                          {"representation": "MiniLM", "probe": "mlp", "task acc": 92.0, "selectivity": 20.0}])
    struct = pd.DataFrame([{"representation": "MiniLM", "layer": 0, "UUAS": 40.0},
                           {"representation": "MiniLM", "layer": 3, "UUAS": 55.0}])
    table = add_probing_rows(RunningTable("probing", directory=tmp_path), {"POS": frame}, struct)
    (row,) = table.rows()
    assert row.model.startswith("all-MiniLM-L6-v2") and row.scores == {"POS acc": 90.0, "POS sel": 30.0,
                                                                         "UUAS": 55.0}
    assert row.meta["uuas_layer"] == 3
