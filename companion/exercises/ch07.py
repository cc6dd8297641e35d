"""Chapter 7's exercises. The top part belongs to 07a (attention, the Transformer block,
subword tokenizers); 07b appends its own below the ``# --- 07b ---`` marker."""

from __future__ import annotations

import torch

from .core import Case, Exercise, register

# =========================================================================== 07a

# --------------------------------------------------------------------------- derive: score scale


def score_std(d: int, sigma_q: float, sigma_k: float) -> float:
    """Return the standard deviation of q . k for q, k in R^d with independent zero-mean entries
    of standard deviations sigma_q and sigma_k."""
    # Your code here: derive the variance of a sum of d independent products first.
    raise NotImplementedError("write score_std")


def _score_cases() -> list[Case]:
    out = []
    for d, sq, sk in [(1, 1.0, 1.0), (16, 1.0, 1.0), (64, 1.0, 1.0), (512, 1.0, 1.0), (64, 0.5, 2.0),
                      (256, 0.1, 0.3)]:
        g = torch.Generator().manual_seed(d)
        q = torch.randn(20_000, d, generator=g, dtype=torch.float64) * sq
        k = torch.randn(20_000, d, generator=g, dtype=torch.float64) * sk
        measured = (q * k).sum(-1).std().item()  # the expected value is measured, not a formula
        out.append(Case(args=(d, sq, sk), expected=measured, label=f"d={d}, sigma_q={sq}, sigma_k={sk}"))
    return out


register(Exercise(
    id="ch07.score_std",
    title="How large are the attention scores?",
    kind="derive",
    prompt="""
        Let q and k be vectors in R^d whose 2d entries are independent, with mean 0; the entries
        of q have standard deviation sigma_q, those of k sigma_k. Derive, on paper, the mean and
        the variance of the score q . k = sum_i q_i k_i. Then write `score_std(d, sigma_q,
        sigma_k)` returning its standard deviation. (The check compares with a measurement on
        20,000 random pairs, so a 2 % difference is accepted.) What does your formula say
        about dividing the score by sqrt(d)?
    """,
    cases=_score_cases,
    stub=score_std,
    outputs=("std of q . k",),
    rtol=0.02,
    hint=(
        "The variance of a sum of independent terms is the sum of their variances.",
        "Var(q_i k_i) = E[q_i^2] E[k_i^2] - (E[q_i] E[k_i])^2 for independent q_i, k_i.",
        "Var(q . k) = d sigma_q^2 sigma_k^2; the standard deviation is its square root.",
    ),
))

# --------------------------------------------------------------------------- predict: saturation


def _unscaled_max_weight() -> float:
    from ..transformer.report import softmax_saturation

    frame = softmax_saturation([256], seeds=range(3))
    return float(frame[~frame.scaled].max_weight.mean())


register(Exercise(
    id="ch07.max_weight_unscaled",
    title="How peaked is unscaled attention?",
    kind="predict",
    prompt="""
        A query attends to 64 keys. Its entries and the keys' entries are independent standard
        normal numbers, the head size is d = 256, and the scores are the plain dot products q . k
        (no division by sqrt(d)). Before you run the experiment: on average, what weight does
        the softmax give to the query's single most-attended key? (A number between 1/64 and 1.)
    """,
    rtol=0.0,
    atol=0.1,
    unit=".2f",
    measure=_unscaled_max_weight,
    hint=(("How large are the scores (see the derive exercise)? What does softmax do to scores "
           "whose gaps are tens of units?"),),
    explanation="""
        The scores have standard deviation sqrt(256) = 16, so the largest of 64 of them is
        typically tens of units above the runner-up; e^(that gap) makes the softmax nearly
        one-hot: the top key takes most of the weight and the gradients through the others
        vanish. Divided by sqrt(d), the scores have unit scale and the weights stay spread out.
    """,
))

# --------------------------------------------------------------------------- derive: parameters


def block_params(d_model: int, d_ff: int) -> int:
    """Return the number of parameters of one Transformer block (companion.transformer.Block):
    multi-head attention (a fused q/k/v projection and an output projection, with biases), an
    MLP d_model -> d_ff -> d_model with biases, and two layer norms (weight and bias)."""
    # Your code here: count each nn.Linear as (inputs x outputs) + outputs.
    raise NotImplementedError("write block_params")


def _block_cases() -> list[Case]:
    from ..transformer.blocks import Block, count_parameters

    out = []
    for d, h, ff in [(8, 2, 32), (32, 4, 128), (64, 4, 100), (768, 12, 3072)]:
        n = count_parameters(Block(d, h, ff, pre_ln=True))  # the package's block, counted
        out.append(Case(args=(d, ff), expected=n, label=f"d_model={d}, d_ff={ff}"))
    return out


register(Exercise(
    id="ch07.block_params",
    title="Count the parameters of a block",
    kind="derive",
    prompt="""
        Derive the number of parameters of one Transformer block as a formula in d_model and
        d_ff: the attention's fused q/k/v projection (d_model -> 3 d_model) and its output
        projection (d_model -> d_model), the MLP (d_model -> d_ff -> d_model), all with biases,
        and two layer norms with a weight and a bias each. (The number of heads does not
        appear: why?) Write `block_params(d_model, d_ff)`; the check counts the parameters of
        the package's `Block`, including BERT-base's size (768, 3072). With d_ff = 4 d_model,
        what is the leading term?
    """,
    cases=_block_cases,
    stub=block_params,
    outputs=("parameters",),
    rtol=0.0,
    atol=0.0,
    hint=(
        "An nn.Linear(n_in, n_out) has n_in * n_out weights and n_out biases; a LayerNorm(d) has 2 d.",
        "Attention: 4 d^2 + 4 d. MLP: 2 d d_ff + d_ff + d. Norms: 4 d.",
    ),
))

# --------------------------------------------------------------------------- concept: -inf


register(Exercise(
    id="ch07.mask_minus_inf",
    title="Why minus infinity?",
    kind="concept",
    prompt="""
        A causal mask hides the future: before the softmax, the score of every key j > i in
        query row i is replaced by -inf (the entries above the diagonal). Why -inf, and not 0?
    """,
    choices={
        "a": "Because -inf makes the score matrix lower-triangular, which then multiplies faster "
             "with V and halves the cost of attention.",
        "b": "Because a score of 0 would make the softmax divide by zero.",
        "c": "Because the scores are log-probabilities, which are never 0.",
        "d": "Because e^0 = 1: a 0 still gives the future keys weight.",
    },
    answer="d",
    hint=("Compute softmax([2.0, 0.0]) and softmax([2.0, -inf]).",),
    explanation="""
        (d). The softmax turns a score s into a weight proportional to e^s. A score of 0 gives
        e^0 = 1, a perfectly ordinary weight: the model would still see the future. Only -inf
        gives e^(-inf) = 0, so the masked keys get exactly no weight (and the rest still sums to
        1). The scores can be negative, so no finite "small" number is safe either.
    """,
))

# --------------------------------------------------------------------------- implement: WordPiece


def wordpiece(word: str, vocab: set[str]) -> list[str]:
    """Split one (already lower-cased) word into WordPiece tokens by greedy longest match:
    the first piece is a plain vocabulary entry, later pieces carry the prefix "##". Return
    ["[UNK]"] if some part of the word cannot be matched."""
    # Your code here.
    raise NotImplementedError("write wordpiece")


def _wordpiece_cases() -> list[Case]:
    from ..transformer.tokenizers import wordpiece_split

    vocab = {"un", "##aff", "##able", "##a", "##b", "##l", "##e", "play", "##ing", "##s", "p",
             "##ay", "a", "##n", "##t", "ant", "##ant", "[UNK]"}
    words = [("unaffable", "the example in BERT's tokenization.py"), ("playing", "a stem and a suffix"),
             ("plays", "longest match first: 'play', not 'p'"), ("ant", "a whole word in the vocabulary"),
             ("antant", "a continuation piece"), ("xyz", "no piece matches: one [UNK]"),
             ("playx", "the end cannot be matched: the whole word is [UNK]"), ("a", "one character")]
    return [Case(args=(w, frozenset(vocab)), expected=wordpiece_split(w, vocab), label=lab)
            for w, lab in words]


register(Exercise(
    id="ch07.wordpiece",
    title="WordPiece's greedy longest match",
    kind="implement",
    prompt="""
        BERT splits each word into the longest vocabulary entry that starts it, then the longest
        "##"-prefixed entry that continues it, and so on. If at some point no entry matches,
        the whole word becomes the single token "[UNK]". Write `wordpiece(word, vocab)` for a
        set `vocab`. Example: with "un", "##aff" and "##able" in the vocabulary, "unaffable"
        -> ["un", "##aff", "##able"]. (The check compares with the package's WordPiece.)
    """,
    cases=_wordpiece_cases,
    stub=wordpiece,
    outputs=("pieces",),
    hint=(
        "Two loops: the outer one moves the start of the piece, the inner one shortens the end.",
        "For start > 0 look up '##' + word[start:end]; if the inner loop finds nothing, return ['[UNK]'].",
    ),
))

# --------------------------------------------------------------------------- debug: BPE merges


def bpe_segment(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """Segment a word by applying BPE merges in the order they were learned: each merge joins
    every adjacent occurrence of its pair, left to right."""
    symbols = list(word)
    for a, b in merges:
        i = 0
        while i < len(symbols) - 2:
            if symbols[i] == a and symbols[i + 1] == b:
                symbols[i : i + 2] = [a + b]
            i += 1
    return symbols


def _bpe_cases() -> list[Case]:
    from ..transformer.tokenizers import apply_merges

    merges = [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w"), ("n", "e"), ("ne", "w"), ("w", "e"),
              ("a", "a")]
    ranks = {m: i for i, m in enumerate(merges)}
    words = [("lowest", "the classic example"), ("low", "a pair at the very end of the word"),
             ("newest", "two merges in one word"), ("aaa", "overlapping pairs: left to right"),
             ("we", "a two-letter word"), ("x", "one letter")]
    return [Case(args=(w, list(merges)), expected=apply_merges(list(w), ranks), label=lab) for w, lab in words]


register(Exercise(
    id="ch07.bpe_segment",
    title="A BPE merge loop that misses merges",
    kind="debug",
    prompt="""
        `bpe_segment(word, merges)` should segment a word the way BPE does: start from its
        characters and apply the learned merges in order, each merge joining every adjacent
        occurrence of its pair. It runs, and on "lowest" its answer even looks plausible, but
        some words come out wrong. Find the bug and fix it.
    """,
    cases=_bpe_cases,
    stub=bpe_segment,
    outputs=("pieces",),
    hint=(
        "Try bpe_segment('low', [('l', 'o'), ('lo', 'w')]). Which pairs does the while loop look at?",
        "A word of n symbols has n - 1 adjacent pairs, at i = 0 .. n - 2.",
    ),
))

# --------------------------------------------------------------------------- extend: ALiBi


def alibi_bias(T: int, n_head: int) -> torch.Tensor:
    """Return ALiBi's [n_head, T, T] additive attention bias for a causal model."""
    # Your code here.
    raise NotImplementedError("write alibi_bias")


def _alibi_checker(T: int, H: int):
    def check(bias):
        if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (H, T, T):
            return False, f"return a tensor of shape ({H}, {T}, {T})"
        b = bias.double()
        i = torch.arange(T)
        lower = i[:, None] >= i[None, :]
        if not torch.allclose(b.diagonal(dim1=1, dim2=2), torch.zeros(H, T, dtype=torch.float64)):
            return False, "a query's bias for its own key should be 0"
        past = b[:, lower]
        if not torch.isfinite(past).all() or (past > 1e-9).any():
            return False, "the bias on past keys should be finite and <= 0 (a penalty for distance)"
        if T > 2 and not (b[:, 2, 0] < b[:, 2, 1]).all():
            return False, "a key further in the past should get a larger penalty"
        dist = (i[:, None] - i[None, :]).double()
        if T < 2:
            return True
        slopes = -b[:, 1, 0]
        if not torch.allclose(b[:, lower], (-slopes[:, None, None] * dist)[:, lower], atol=1e-6):
            return False, "the penalty should be a head's slope times the distance i - j"
        if H > 1 and not (slopes[1:] < slopes[:-1]).all():
            return False, "each head should have its own slope, decreasing from head 0"
        if not torch.isneginf(b[:, ~lower]).all():
            return False, "future keys (j > i) should be masked with -inf in a causal model"
        return True

    return check


register(Exercise(
    id="ch07.alibi_bias",
    title="ALiBi: positions as a distance penalty",
    kind="extend",
    prompt="""
        Press, Smith & Lewis (2022) drop position embeddings altogether and add a bias to the
        attention scores instead: head h subtracts m_h * (i - j) from the score of query i for
        key j <= i, with head-specific slopes m_h = 2^(-8 (h + 1) / n_head). Future keys keep
        the causal -inf.

        1. Write `alibi_bias(T, n_head)` returning the [n_head, T, T] bias (check() runs loose
           sanity checks: shape, zero diagonal, penalty growing with distance, -inf above it).
        2. Add it to the scores of the package's attention (a float `attn_mask` of
           torch.nn.functional.scaled_dot_product_attention is added to the scores) and check
           that the result equals our explicit softmax(q k^T / sqrt(d) + bias) v.
        3. Why could such a model read sequences longer than it was trained on, where a learned
           position table could not?
    """,
    cases=lambda: [Case(args=(T, H), checker=_alibi_checker(T, H), label=f"T={T}, n_head={H}")
                   for T, H in [(1, 1), (5, 2), (8, 8), (16, 12)]],
    stub=alibi_bias,
    hint=(("Build the distance matrix i - j with torch.arange and broadcasting, then multiply by a "
           "[n_head, 1, 1] tensor of slopes."),),
))


# --- 07b ---
# GPT and BERT: BERT's masking (predict), per-token to per-word perplexity (derive), a causal LM
# loss with a planted bug (debug), what a left-to-right model sees (concept), the 80/10/10
# replacement (implement), a sliding-window perplexity (extend). Imports kept in the block so
# that it merges below 07a's part as it is.
import math

import numpy as np
import torch.nn.functional as F

from .core import Exercise, register


def _mask_count_measured() -> float:
    """[MASK] positions per 128-token input ([CLS] + 126 tokens + [SEP]), averaged over 2,000
    seeded draws of the chapter's masking function."""
    from ..transformer import BertConfig, mask_tokens

    cfg = BertConfig(vocab_size=1000)
    ids = torch.randint(10, 1000, (2000, 128), generator=torch.Generator().manual_seed(0))
    ids[:, 0], ids[:, -1] = cfg.cls_id, cfg.sep_id
    inputs, _ = mask_tokens(ids, cfg, generator=torch.Generator().manual_seed(1))
    return float((inputs == cfg.mask_id).sum(1).float().mean())


register(Exercise(
    id="ch07.mask_count",
    title="How many [MASK] tokens does BERT see?",
    kind="predict",
    prompt="""
        A BERT pre-training input has 128 positions: [CLS], 126 ordinary tokens, [SEP]. BERT's
        masking chooses 15 % of the ordinary tokens as prediction targets and replaces the chosen
        ones 80 / 10 / 10 by [MASK], by a random token, or not at all. Before you run the check:
        on average, how many of the 128 positions show the [MASK] token?
    """,
    rtol=0.0,
    atol=1.5,
    unit=".1f",
    measure=_mask_count_measured,
    hint=("[CLS] and [SEP] are never chosen. Of the chosen tokens, which share become [MASK]?",),
    explanation="""
        126 x 0.15 x 0.8 = 15.1 on average: about 19 positions are targets, but only about 15
        show [MASK]; two keep their token and two show a random one, so the model must build a
        good representation of every input token, not only of the masked ones.
    """,
))


def per_word_ppl(token_nll: float, n_tokens: int, n_words: int) -> float:
    """Per-word perplexity of a text from its mean NLL per subword token (nats)."""
    # Your code here: the text's total NLL is the same whatever you count it in.
    raise NotImplementedError("write per_word_ppl")


def _ppw_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    cases = []
    for label, n_tok, n_words in (("1.3 tokens per word", 130, 100), ("one token per word", 50, 50),
                                  ("3 tokens per word (Chinese-like)", 300, 100)):
        logp = np.log(rng.uniform(0.01, 0.9, n_tok))  # the model's probability of each token
        expected = math.exp(-logp.sum() / n_words)  # defined on the whole text, per word
        cases.append(Case(args=(float(-logp.mean()), n_tok, n_words), expected=expected, label=label))
    return cases


register(Exercise(
    id="ch07.per_word_ppl",
    title="From perplexity per token to perplexity per word",
    kind="derive",
    prompt="""
        A subword model reports its mean negative log-likelihood per token, token_nll (nats), on
        a text of n_tokens tokens that holds n_words words. Derive the perplexity per word -- the
        number comparable with a word-level model's -- and write
        per_word_ppl(token_nll, n_tokens, n_words). Then: if a model's per-token
        perplexity is 40 at 1.3 tokens per word, what is its per-word perplexity?
    """,
    cases=_ppw_cases,
    stub=per_word_ppl,
    outputs=("per-word perplexity",),
    rtol=1e-9,
    hint=("Write the text's total NLL in two ways: per token times tokens, per word times words.",
          "PPL_word = exp(total NLL / n_words), and total NLL = token_nll * n_tokens.",
          "So PPL_word = PPL_token ** (n_tokens / n_words); 40 ** 1.3 is about 121."),
))


def lm_shift(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """Mean next-token cross-entropy of a causal LM: ``logits [B, T, V]`` were computed from
    ``ids [B, T]``, position t seeing tokens 0..t."""
    V = logits.shape[-1]
    return float(F.cross_entropy(logits.reshape(-1, V), ids.reshape(-1)))


def _shift_cases() -> list[Case]:
    g = torch.Generator().manual_seed(0)
    cases = []
    for label, (B, T, V) in (("one row of 6 tokens, 10 types", (1, 6, 10)), ("one row of 3 tokens", (1, 3, 5))):
        logits = torch.randn(B, T, V, generator=g)
        ids = torch.randint(0, V, (B, T), generator=g)
        ref = float(F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)))
        cases.append(Case(args=(logits, ids), expected=ref, label=label))
    return cases


register(Exercise(
    id="ch07.lm_shift",
    title="Debug a causal language-model loss",
    kind="debug",
    prompt="""
        lm_shift(logits, ids) should be GPT's training loss: the logits at position t
        predict token t + 1. The function below trains without error and its loss falls fast
        -- too fast. Find the bug and fix it.
    """,
    cases=_shift_cases,
    stub=lm_shift,
    outputs=("loss",),
    rtol=1e-5,
    hint=("What does position t's output see, and which token is it scored against?",
          "Under the causal mask position t sees token t itself: copying it is a perfect 'prediction'.",
          "Drop the last position's logits and the first token: logits[:, :-1] against ids[:, 1:]."),
))

register(Exercise(
    id="ch07.gpt_right_context",
    title="What a left-to-right model can see",
    kind="concept",
    prompt="""
        GPT is fine-tuned on RTE with the input [start] premise [delim] hypothesis [extract].
        Which tokens does the final hidden state at the LAST token of the premise depend on?
    """,
    choices={
        "a": "Only itself: each position is processed separately.",
        "b": "All tokens of the input, premise and hypothesis, as in BERT's encoder.",
        "c": "[start] and the premise up to and including itself.",
        "d": "Only the hypothesis, which comes after it in the input.",
    },
    answer="c",
    hint=("Look at the causal mask of chapter 7a: which entries of row t are allowed?",),
    explanation="""
        (c). The causal mask lets position t attend to positions 0..t only, in every layer. So no
        premise token is ever represented in the light of the hypothesis; only the tokens after
        [delim] (and the extract token) see both sentences. BERT's encoder lets every token see
        both -- one reason it helps pair tasks like RTE and MRPC.
    """,
))


def mlm_replace(ids: list[int], chosen: list[bool], r: list[float], random_ids: list[int], mask_id: int) -> list[int]:
    """BERT's input after masking: a chosen token becomes ``mask_id`` when its draw ``r < 0.8``,
    ``random_ids[i]`` when ``0.8 <= r < 0.9``, and stays itself otherwise."""
    # Your code here: one pass over the positions.
    raise NotImplementedError("write mlm_replace")


def _replace_cases() -> list[Case]:
    def ref(ids, chosen, r, rnd, m):
        return [m if c and u < 0.8 else (x if c and u < 0.9 else t) for t, c, u, x in zip(ids, chosen, r, rnd)]

    rng = np.random.default_rng(0)
    cases = [Case(args=([7, 8, 9], [True, True, True], [0.5, 0.85, 0.95], [1, 2, 3], 4), expected=[4, 2, 9],
                  label="one of each: [MASK], random, kept")]
    ids, rnd = rng.integers(10, 99, 40).tolist(), rng.integers(10, 99, 40).tolist()
    chosen, r = (rng.random(40) < 0.3).tolist(), rng.random(40).tolist()
    cases.append(Case(args=(ids, chosen, r, rnd, 4), expected=ref(ids, chosen, r, rnd, 4), label="40 random positions"))
    cases.append(Case(args=([5, 6], [False, False], [0.1, 0.85], [1, 2], 4), expected=[5, 6],
                      label="nothing chosen: nothing changes"))
    return cases


register(Exercise(
    id="ch07.mlm_replace",
    title="BERT's 80/10/10 replacement",
    kind="implement",
    prompt="""
        Write mlm_replace(ids, chosen, r, random_ids, mask_id): the input BERT sees after masking.
        chosen[i] says whether token i is a prediction target; r[i] is a uniform draw in [0, 1)
        deciding what a chosen token becomes: [MASK] (r < 0.8), random_ids[i] (0.8 <= r < 0.9),
        or itself (r >= 0.9). Tokens that are not chosen never change.
    """,
    cases=_replace_cases,
    stub=mlm_replace,
    outputs=("inputs",),
    hint=("Three cases per chosen token, decided by r alone.",
          "mask_id if chosen and r < 0.8, random_ids[i] if chosen and r < 0.9, else ids[i]."),
))



def kv_cache_bytes(n_layer: int, batch: int, T: int, d_model: int, bytes_per_value: int) -> int:
    """Bytes a GPT's KV cache holds for ``batch`` sequences of ``T`` positions."""
    # Your code here: count what each layer stores per position.
    raise NotImplementedError("write kv_cache_bytes")


def _kv_cases() -> list[Case]:
    from ..transformer import GPT, GPTConfig

    cases = []
    for label, (L, B, T, d, H, dtype) in (
            ("1 layer, 1 sequence", (1, 1, 8, 16, 2, torch.float32)),
            ("4 layers, batch 3", (4, 3, 20, 32, 4, torch.float32)),
            ("2 layers in bf16", (2, 2, 12, 24, 3, torch.bfloat16))):
        gpt = GPT(GPTConfig(vocab_size=10, block_size=T, n_layer=L, n_head=H, d_model=d), seed=0).to(dtype)
        cache = gpt.new_cache(B, max_len=T)  # the expected value is measured on the real cache
        measured = sum(t.numel() * t.element_size() for t in (*cache.k, *cache.v))
        cases.append(Case(args=(L, B, T, d, torch.empty((), dtype=dtype).element_size()), expected=measured,
                          label=label))
    return cases


register(Exercise(
    id="ch07.kv_cache_bytes",
    title="How much memory the KV cache takes",
    kind="derive",
    prompt="""
        Section 7's cache keeps, for every layer, the keys and values of every position seen so
        far. Derive its size and write kv_cache_bytes(n_layer, batch, T, d_model,
        bytes_per_value): the bytes held for batch sequences of T positions (the heads split
        d_model, so n_head does not appear). Then: GPT-2 small has 12 layers and d_model = 768;
        how many MB does its cache take for one sequence of 1,024 tokens in fp16 (2 bytes)?
    """,
    cases=_kv_cases,
    stub=kv_cache_bytes,
    outputs=("bytes",),
    rtol=0,
    hint=("Per layer and position: one key vector and one value vector, each of d_model numbers.",
          "2 * n_layer * batch * T * d_model values, bytes_per_value bytes each.",
          "GPT-2 small: 2 * 12 * 1024 * 768 * 2 bytes, about 37.7 MB (36 MiB) per sequence."),
))

def _sliding_checker(gpt, ids, start_id, stride):
    def check(got):
        try:
            nll, n = float(got[0]), int(got[1])
        except (TypeError, ValueError, IndexError):
            return False, "return (summed NLL, number of tokens scored)"
        if n != len(ids):
            return False, f"score every token exactly once: {n} scored, the text has {len(ids)}"
        if not math.isfinite(nll) or nll <= 0:
            return False, f"the summed NLL must be a positive number, got {nll}"
        return True, ""
    return check


def _sliding_cases() -> list[Case]:
    from ..transformer import GPT, GPTConfig

    gpt = GPT(GPTConfig(vocab_size=50, block_size=16, n_layer=1, n_head=2, d_model=16), seed=0).eval()
    ids = torch.randint(0, 47, (70,), generator=torch.Generator().manual_seed(0)).tolist()
    return [Case(args=(gpt, ids, 47, 8), checker=_sliding_checker(gpt, ids, 47, 8), label="70 tokens, block 16, stride 8")]


def sliding_ppl(gpt, ids: list[int], start_id: int, stride: int) -> tuple[float, int]:
    """Summed NLL of ``ids`` with a sliding window: windows of ``block_size`` tokens that advance by
    ``stride``; each scores only its last ``stride`` tokens (the first window scores all), so every
    token after the first window has at least ``block_size - stride`` tokens of context."""
    # Your code here (an open task: see the prompt).
    raise NotImplementedError("write sliding_ppl")


register(Exercise(
    id="ch07.sliding_ppl",
    title="Perplexity with more context: a sliding window",
    kind="extend",
    prompt="""
        The chapter scores Brown in non-overlapping windows, so a token has between 0 and
        block_size - 1 tokens of context (about half a window on average). Write
        sliding_ppl(gpt, ids, start_id, stride) that slides the window by stride < block_size and
        scores only the new tokens of each window, so that every token sees at least
        block_size - stride tokens. Return (summed NLL, tokens scored). Then measure GPT's per-word
        perplexity on Brown with stride = block_size // 4: how much does the extra context help,
        and what does it cost?
    """,
    cases=_sliding_cases,
    stub=sliding_ppl,
    hint=("Window k covers tokens [k*stride - (block_size - stride), k*stride + stride); score its last stride.",),
))
