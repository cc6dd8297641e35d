"""ELECTRA (Clark et al. 2020): replaced-token detection instead of masked LM.

A small **generator** -- a masked LM -- fills 15 % masked positions with tokens *sampled* from its
softmax; a **discriminator** reads the result and says, for *every* token, whether it is the
original or a replacement:

    L = L_MLM(generator) + λ · L_RTD(discriminator),    λ = 50,

    L_RTD = mean over text tokens t of  BCE(D(x̂)_t, 1[x̂_t ≠ x_t]).

Details that matter and are reproduced here:

* a sampled token that happens to equal the original counts as **original** (label 0);
* no gradient flows from the discriminator into the generator through the sampling (it is not
  differentiable): the two losses are simply added, the generator trained by MLM alone;
* the two networks **share the token and position embeddings** (the generator is narrower: it
  reads the shared embeddings through a linear map to its own width and predicts through a map
  back, with the output tied to the shared token table);
* after pre-training the generator is thrown away; the discriminator fine-tunes.

The paper's central claim: because the discriminator learns from all tokens, not 15 % of them,
ELECTRA beats a masked LM **at equal compute**. ``flop_parameters`` counts both networks, so the
harness's FLOP budget charges ELECTRA for its generator too.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..transformer.bert import BertEncoder
from ..transformer.blocks import Activation, Block
from .harness import MaskedLM, ModelSize, Vocab, init_model, non_embedding_parameters


class Generator(nn.Module):
    """A narrow BERT on the discriminator's embeddings: ``d -> d_gen`` map, ``n_layer`` post-LN
    blocks of width ``d_gen``, then a map back to ``d``, GeLU, LayerNorm and the tied softmax."""

    def __init__(self, d_model: int, d_gen: int, n_layer: int, n_head: int, embedding: nn.Embedding,
                 ln_eps: float = 1e-12):
        super().__init__()
        self.down = nn.Linear(d_model, d_gen)
        self.blocks = nn.ModuleList(Block(d_gen, n_head, 4 * d_gen, pre_ln=False, ln_eps=ln_eps)
                                    for _ in range(n_layer))
        self.up = nn.Linear(d_gen, d_model)
        self.ln = nn.LayerNorm(d_model, eps=ln_eps)
        self.embedding = embedding  # shared with the discriminator (not a copy)
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        """Hidden states ``[B, T, d_model]`` (before the softmax) from embedded inputs."""
        x = self.down(embedded)
        for block in self.blocks:
            x = block(x)
        return self.ln(F.gelu(self.up(x)))

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden @ self.embedding.weight.T + self.bias


class Electra(nn.Module):
    """Discriminator (a :class:`BertEncoder` + a 1-logit head per token) and generator sharing
    its embedding module."""

    def __init__(self, config, d_gen: int, gen_layers: int, gen_heads: int):
        super().__init__()
        self.discriminator = BertEncoder(config, seed=None)
        self.generator = Generator(config.d_model, d_gen, gen_layers, gen_heads, self.discriminator.embeddings.tok,
                                   config.ln_eps)
        # HF's ElectraDiscriminatorPredictions applies hidden_act: the config's activation
        self.head = nn.Sequential(nn.Linear(config.d_model, config.d_model), Activation(config.activation),
                                  nn.Linear(config.d_model, 1))

    def flop_parameters(self) -> int:
        """Both networks run on every token (the generator on all positions, as implemented)."""
        return non_embedding_parameters(self)


class ElectraObjective(MaskedLM):
    """Replaced-token detection with a generator ``gen_fraction`` as wide as the discriminator
    (the paper's best: 1/4 to 1/2), ``lam`` = 50. Masking: 15 % of the text tokens, all
    ``[MASK]`` for the generator's input."""

    name, arch = "ELECTRA (RTD)", "encoder"

    def __init__(self, vocab: Vocab, p: float = 0.15, lam: float = 50.0, gen_fraction: float = 0.25,
                 gen_layers: int | None = None):
        super().__init__(vocab, p)
        if lam <= 0 or not 0 < gen_fraction <= 1:
            raise ValueError(f"need lam > 0 and 0 < gen_fraction <= 1, got {lam}, {gen_fraction}")
        self.lam, self.gen_fraction, self.gen_layers = lam, gen_fraction, gen_layers

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = self.frame(rows)
        chosen = self.choose(ids, gen)
        return {"ids": ids.masked_fill(chosen, self.vocab.mask), "original": ids, "labels": ids.masked_fill(~chosen, -100),
                "seed": torch.randint(2**62, (1,), generator=gen)}

    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        d_gen = max(size.n_heads, int(size.d_model * self.gen_fraction) // size.n_heads * size.n_heads)
        heads = size.n_heads if d_gen % size.n_heads == 0 else 1
        return init_model(Electra(self.vocab.bert_config(size), d_gen, self.gen_layers or size.n_layers, heads))

    @staticmethod
    def replace(logits: torch.Tensor, original: torch.Tensor, chosen: torch.Tensor,
                gen: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample a token at every chosen position from ``logits`` (``[n_chosen, V]``):
        ``(corrupted ids, RTD labels)``, label 1 where the token differs from the original (a
        sample equal to the original is labelled 0)."""
        probs = torch.softmax(logits.detach().float(), -1)
        sampled = torch.multinomial(probs, 1, generator=gen).squeeze(1)
        corrupted = original.clone()
        corrupted[chosen] = sampled
        return corrupted, (corrupted != original).float()

    def losses(self, model: Electra, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The generator's MLM loss, the discriminator's RTD loss and its accuracy."""
        chosen = batch["labels"] != -100
        emb = model.discriminator.embeddings(batch["ids"])
        g_logits = model.generator.logits(model.generator(emb)[chosen])
        mlm = F.cross_entropy(g_logits, batch["original"][chosen]) if chosen.any() else emb.sum() * 0.0
        dev = batch["ids"].device
        gen = torch.Generator(device=dev).manual_seed(int(batch["seed"][0])) if "seed" in batch else None
        corrupted, rtd_labels = self.replace(g_logits, batch["original"], chosen, gen)
        d_logits = model.head(model.discriminator(corrupted)).squeeze(-1)
        text = self.candidates(batch["original"])  # [CLS] and [SEP] are not judged
        rtd = F.binary_cross_entropy_with_logits(d_logits[text], rtd_labels[text])
        acc = ((d_logits[text] > 0).float() == rtd_labels[text]).float().mean()
        return {"mlm": mlm, "rtd": rtd, "rtd_acc": acc.detach(), "replaced": rtd_labels[text].mean()}

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        out = self.losses(model, batch)
        return out["mlm"] + self.lam * out["rtd"]

    def encoder(self, model: nn.Module) -> BertEncoder:
        return model.discriminator
