"""Chapter 6's exercises. The top part belongs to 06a (LSTM language models, AWD-LSTM's dropouts,
ULMFiT, Context2Vec); 06b keeps its own in ``ch06b.py`` (ids ``ch06.b_<name>``)."""

from __future__ import annotations

import torch

from .core import Case, Exercise, register

# --------------------------------------------------------------------------- implement: a GRU step


def gru_step(x: torch.Tensor, h: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor,
             b_ih: torch.Tensor, b_hh: torch.Tensor) -> torch.Tensor:
    """Return ``h_new`` after one GRU step, with torch's layout: ``w_ih [3H, I]``, ``w_hh [3H, H]``,
    biases ``[3H]``, the rows stacked reset, update, candidate. ``x [B, I]``, ``h [B, H]``."""
    # Your code here: the reset and update gates, the candidate, then the mix.
    raise NotImplementedError("write gru_step")


def _gru_cases() -> list[Case]:
    out = []
    for B, I, H in [(1, 1, 1), (2, 3, 4), (5, 8, 6)]:
        g = torch.Generator().manual_seed(B * 100 + I)
        ref = torch.nn.GRUCell(I, H).double()
        with torch.no_grad():
            for p in ref.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
        x = torch.randn(B, I, generator=g, dtype=torch.float64)
        h = torch.randn(B, H, generator=g, dtype=torch.float64)
        with torch.no_grad():
            want = ref(x, h)
        args = (x, h, ref.weight_ih.detach(), ref.weight_hh.detach(), ref.bias_ih.detach(),
                ref.bias_hh.detach())
        out.append(Case(args=args, expected=want.detach(), label=f"B={B}, I={I}, H={H}"))
    return out


register(Exercise(
    id="ch06.gru_step",
    title="One step of a GRU",
    prompt="""
        The GRU (Cho et al. 2014) is the LSTM's lighter cousin: no separate memory c, two gates
        instead of three. With torch.nn.GRU's layout (rows stacked reset r, update z,
        candidate n):
            r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
            z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
            n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
            h_new = (1 - z) * n + z * h
        Write `gru_step(x, h, w_ih, w_hh, b_ih, b_hh)` returning h_new. The check compares
        with torch.nn.GRUCell on random weights. Which gate plays the role of the LSTM's
        forget gate, and where did the output gate go?
    """,
    cases=_gru_cases,
    stub=gru_step,
    outputs=("h_new",),
    rtol=1e-9,
    atol=1e-9,
    hint=(
        ("Compute the input part x @ w_ih.T + b_ih and the hidden part h @ w_hh.T + b_hh separately, "
        "and split each into three with .chunk(3, -1)."),
        "The reset gate multiplies only the hidden part of the candidate, bias included.",
    ),
))

# --------------------------------------------------------------------------- derive: parameters


def awd_lm_params(V: int, E: int, H: int, L: int) -> int:
    """Return the number of parameters of ``AWDLSTMLM`` with vocabulary ``V``, embedding size
    ``E``, inner size ``H`` and ``L >= 2`` layers (tied softmax with a bias)."""
    # Your code here: count one nn.LSTM layer with input n_in and state n_out first.
    raise NotImplementedError("write awd_lm_params")


def _awd_cases() -> list[Case]:
    from ..contextual.ulmfit import AWDLSTMLM, AWDLSTMConfig

    out = []
    for V, E, H, L in [(10, 4, 6, 2), (100, 16, 32, 3), (1000, 8, 40, 4), (60_000, 400, 1150, 3)]:
        if V > 10_000:  # the paper's size: count without building the model
            continue
        m = AWDLSTMLM(AWDLSTMConfig(V, emb_dim=E, hidden=H, n_layers=L), seed=0)
        out.append(Case(args=(V, E, H, L), expected=sum(p.numel() for p in m.parameters()),
                        label=f"V={V}, E={E}, H={H}, L={L}"))
    return out


register(Exercise(
    id="ch06.awd_lm_params",
    kind="derive",
    title="How big is an AWD-LSTM?",
    prompt="""
        Derive the number of parameters of the AWD-LSTM language model as a formula in V, E, H
        and L: an embedding V x E; L LSTM layers, the first reading E numbers, the last
        returning E numbers (so the softmax can reuse the embedding), the others H -> H; a
        softmax tied to the embedding, with its own bias. An nn.LSTM layer from n_in to n_out
        has two weight matrices and two bias vectors (torch keeps both biases). Write
        `awd_lm_params(V, E, H, L)`; the check counts the package's model. Then evaluate it
        at the paper's size (V = 60,000, E = 400, H = 1,150, L = 3): where do most parameters
        sit?
    """,
    cases=_awd_cases,
    stub=awd_lm_params,
    outputs=("parameters",),
    rtol=0.0,
    atol=0.0,
    hint=(
        "One LSTM layer: 4 n_out (n_in + n_out) weights and 2 * 4 n_out biases.",
        ("Sum that over the pairs (E, H), (H, H) x (L - 2), (H, E); add V E for the embedding "
        "and V for the softmax bias (the softmax weights are the embedding)."),
    ),
))

# --------------------------------------------------------------------------- debug: locked dropout


def locked_dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    """Variational dropout for ``x [B, T, D]``: one mask per sequence and feature, shared by all
    time steps, kept values scaled by ``1 / (1 - p)``."""
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(x.shape, generator=g) >= p
    return x * keep.to(x.dtype) / (1 - p)


def _locked_cases() -> list[Case]:
    def reference(x, p, seed):
        g = torch.Generator().manual_seed(seed)
        keep = torch.rand((x.shape[0], 1, x.shape[2]), generator=g) >= p
        return x * keep.to(x.dtype) / (1 - p)

    out = []
    for B, T, D, p in [(2, 5, 3, 0.5), (4, 7, 6, 0.3), (1, 10, 8, 0.2)]:
        x = torch.arange(1, B * T * D + 1, dtype=torch.float64).view(B, T, D)
        out.append(Case(args=(x, p, B + T), expected=reference(x, p, B + T), label=f"[{B}, {T}, {D}], p={p}"))
    return out


register(Exercise(
    id="ch06.locked_dropout",
    kind="debug",
    title="A locked dropout that is not locked",
    prompt="""
        `locked_dropout(x, p, seed)` should apply variational (locked) dropout to a batch of
        sequences x [B, T, D]: each sequence gets one mask over its D features, the same at
        every time step, as in AWD-LSTM. It runs without error, and its mean is right, but it
        is plain dropout. Find the bug and fix it (keep drawing the mask with one call to
        torch.rand with the given generator: the check compares exact values).
    """,
    cases=_locked_cases,
    stub=locked_dropout,
    outputs=("dropped x",),
    hint=(
        "Print (locked_dropout(torch.ones(1, 4, 3), 0.5, 0) == 0): does the pattern change from row to row?",
        "The mask needs a size-1 time axis, so that broadcasting repeats it over the T steps.",
    ),
))

# --------------------------------------------------------------------------- predict: STLR


def _stlr_half() -> float:
    from ..contextual.ulmfit import stlr

    values = [stlr(t, 1000, 1.0) for t in range(1000)]
    return sum(v > 0.5 for v in values) / len(values)


register(Exercise(
    id="ch06.stlr_half",
    kind="predict",
    title="How long is the learning rate high?",
    prompt="""
        A slanted triangular schedule runs for T = 1,000 steps with the paper's cut_frac = 0.1
        and ratio = 32. Before you compute anything: what share of the 1,000 steps have a
        learning rate above half of lr_max? (Record a number between 0 and 1, then check it
        with check("ch06.stlr_half", your_number).)
    """,
    rtol=0.0,
    atol=0.05,
    unit=".2f",
    measure=_stlr_half,
    hint=(("Sketch the schedule: where does the rising line cross lr_max / 2, and where does the "
          "falling line?"),),
    explanation="""
        The rate is lr_max (1 + 31 p) / 32, above lr_max / 2 when p > 15/31, about 0.48. The
        rise (steps 0-100) spends about half its steps there, the fall (900 steps) also about
        half: about 0.52 of all steps. The schedule is a short warm-up followed by a long,
        slow cool-down; most of the training happens at a middling rate.
    """,
))

# --------------------------------------------------------------------------- concept: weight drop

register(Exercise(
    id="ch06.weight_drop_why",
    kind="concept",
    title="Why drop weights, not activations?",
    prompt="""
        AWD-LSTM regularises the recurrence by dropping entries of the hidden-to-hidden matrix
        W_hh (one mask per batch) instead of applying ordinary dropout to h_{t-1} at every
        step. Which reason does the paper give for that choice?
    """,
    choices={
        "a": "Dropping weights removes more parameters than dropping activations, so the model "
             "that is trained and stored is smaller and regularised more strongly.",
        "b": "It runs with an unmodified fused LSTM kernel (cuDNN): the mask is applied to the "
             "weights once, before the kernel, and the recursion is unchanged.",
        "c": "Ordinary dropout on h_{t-1} cannot be undone at evaluation time.",
        "d": "Dropping weights makes the LSTM's gradients exact instead of approximate, because "
             "backpropagation through time no longer has to be truncated to a fixed number of "
             "steps.",
    },
    answer="b",
    explanation="""
        Dropout on h_{t-1} inside the recurrence needs a custom LSTM loop (slow). DropConnect on
        W_hh changes only the weights handed to the standard kernel, and because the same
        dropped matrix is used at every step, the regularisation is consistent across time,
        like variational dropout.
    """,
))

# --------------------------------------------------------------------------- concept: pooling

register(Exercise(
    id="ch06.concat_pool_why",
    kind="concept",
    title="Why concat pooling?",
    prompt="""
        ULMFiT's classifier reads [h_T, max_t h_t, mean_t h_t] instead of the last state h_T
        alone. For a 400-word review whose decisive sentence is near the start, what does the
        pooling add?
    """,
    choices={
        "a": "It makes the classifier invariant to the order of the words.",
        "b": "Nothing: the LSTM's memory cell carries everything to h_T without loss.",
        "c": "It triples the size of the classifier's input, and with it the effective learning "
             "rate of the last layer, so fine-tuning converges in fewer epochs.",
        "d": "The max and the mean read every time step, so early words reach the classifier "
             "directly, not only through hundreds of recurrent steps.",
    },
    answer="d",
    explanation="""
        h_T summarises the whole text through the recurrence, and information from far back
        fades in practice (the cell is additive, not perfect). Max- and mean-pooling over
        all steps give the head direct access to every position, as the paper argues for
        documents of hundreds of words.
    """,
))

# --------------------------------------------------------------------------- extend: tied LM

register(Exercise(
    id="ch06.tied_lm",
    kind="extend",
    title="Tie the input and output embeddings",
    prompt="""
        Press & Wolf (2017) and Inan et al. (2017) tie the softmax's output vectors to the
        input embedding. Train the chapter's Brown LSTM LM twice with the same budget: with
        the full softmax untied (LSTMLMConfig(output="full")) and tied (tie_weights=True),
        and compare their validation perplexities and parameter counts. Run two seeds each:
        is the difference outside the seed noise? What does tying save, and why might it
        help most for rare words? (Nothing is checked automatically; a worked answer,
        `tied_lm(scale)`, is in solutions/ch06.py.)
    """,
    hint=(("Build both models with lstm_preset's plan and sentence_stream(bengio_split()...); "
          "count parameters with model.num_parameters()."),),
))
