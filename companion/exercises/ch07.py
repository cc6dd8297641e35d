"""Chapter 7's exercises (07a: attention, the block, tokenizers; 07b: GPT and BERT)."""

from __future__ import annotations

# --- 07b ---
# GPT and BERT: BERT's masking (predict), per-token to per-word perplexity (derive), a causal LM
# loss with a planted bug (debug), what a left-to-right model sees (concept), the 80/10/10
# replacement (implement), a sliding-window perplexity (extend). Imports kept in the block so
# that it merges below 07a's part as it is.
import math

import numpy as np
import torch
import torch.nn.functional as F

from .core import Case, Exercise, register


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
        "a": "All tokens of the input, as in BERT.",
        "b": "[start] and the premise's tokens up to and including itself.",
        "c": "Only the hypothesis, which comes after it.",
        "d": "Only itself: each position is processed separately.",
    },
    answer="b",
    hint=("Look at the causal mask of chapter 7a: which entries of row t are allowed?",),
    explanation="""
        (b). The causal mask lets position t attend to positions 0..t only, in every layer. So no
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
