"""ALBERT (Lan et al. 2020): a BERT with far fewer parameters, and what that costs.

Two changes to the encoder, and SOP (:mod:`.sentence_tasks`) in place of NSP:

* **factorised embedding**: tokens are embedded in ``E`` dimensions and projected up to the
  hidden size ``H`` (``V x E + E x H`` parameters instead of ``V x H``; with ``E << H`` the
  vocabulary table shrinks by ``H / E``). The MLM head maps back down to ``E`` and reads out
  through the same ``E``-wide table;
* **cross-layer sharing**: one Transformer block applied ``n_layer`` times, so the encoder holds
  one layer's parameters whatever its depth.

Sharing saves memory, not compute: each token still passes through ``n_layer`` blocks, so
:meth:`AlbertForPreTraining.flop_parameters` counts the shared block once per use, and at equal
FLOPs ALBERT trains on as many tokens as BERT of the same shape -- the fair comparison of
parameters versus loss.
"""

from __future__ import annotations

from torch import nn

from ..checks import check_int, check_like
from ..transformer.attention import padding_mask
from ..transformer.bert import BertEmbeddings, BertEncoder, BertForPreTraining, Pooler
from ..transformer.blocks import Block, activate, count_parameters
from .harness import ModelSize, Vocab, init_model, non_embedding_parameters
from .sentence_tasks import SentenceTask


class AlbertEncoder(BertEncoder):
    """Factorised embeddings (``E`` wide, projected to ``d_model``) and ``n_layer`` applications
    of one shared block (``share=False``: separate blocks, to isolate the factorisation). A
    :class:`BertEncoder` by type and interface, so chapter 7's fine-tuning takes it as is."""

    def __init__(self, config, embedding_size: int, share: bool = True):
        nn.Module.__init__(self)
        check_int(embedding_size, "embedding_size")
        self.config = c = config
        self.embedding_size, self.share = embedding_size, share
        emb_cfg = type(c)(**{**c.__dict__, "d_model": embedding_size, "n_head": 1, "d_ff": None,
                             "attn_dropout": None})
        self.embeddings = BertEmbeddings(emb_cfg)
        self.project = nn.Linear(embedding_size, c.d_model)
        n_blocks = 1 if share else c.n_layer
        self.blocks = nn.ModuleList(
            Block(c.d_model, c.n_head, c.d_ff, pre_ln=False, dropout=c.dropout, attn_dropout=c.attn_dropout,
                  activation=c.activation, ln_eps=c.ln_eps) for _ in range(n_blocks))

    def forward(self, ids, segments=None, attention_mask=None):
        x = self.project(self.embeddings(ids, segments))  # checks ids, segments and the length
        check_like(attention_mask, "attention_mask", ids)
        mask = None if attention_mask is None or bool(attention_mask.all()) else padding_mask(attention_mask)
        for i in range(self.config.n_layer):
            x = self.blocks[0 if self.share else i](x, mask)
        return x


class AlbertMLMHead(nn.Module):
    """``H -> E`` dense, the activation (GeLU), LayerNorm, then the tied ``E``-wide token table."""

    def __init__(self, d_model: int, embedding: nn.Embedding, ln_eps: float = 1e-12, activation: str = "gelu"):
        super().__init__()
        self.activation = activation
        self.dense = nn.Linear(d_model, embedding.embedding_dim)
        self.ln = nn.LayerNorm(embedding.embedding_dim, eps=ln_eps)
        self.decoder = nn.Linear(embedding.embedding_dim, embedding.num_embeddings)
        self.decoder.weight = embedding.weight

    def forward(self, hidden):
        return self.decoder(self.ln(activate(self.dense(hidden), self.activation)))


class AlbertForPreTraining(BertForPreTraining):
    """:class:`AlbertEncoder` + the ``E``-wide MLM head + pooler + the sentence (SOP/NSP) head;
    ``loss`` is :class:`BertForPreTraining`'s."""

    def __init__(self, config, embedding_size: int, share: bool = True):
        nn.Module.__init__(self)
        self.config = config
        self.encoder = AlbertEncoder(config, embedding_size, share)
        self.mlm = AlbertMLMHead(config.d_model, self.encoder.embeddings.tok, config.ln_eps, config.activation)
        self.pooler = Pooler(config.d_model)
        self.nsp = nn.Linear(config.d_model, 2)

    def flop_parameters(self) -> int:
        """Non-embedding parameters with the shared block counted once per layer it serves."""
        extra = 0
        if self.encoder.share:
            extra = (self.config.n_layer - 1) * count_parameters(self.encoder.blocks[0])
        return non_embedding_parameters(self) + extra


class AlbertObjective(SentenceTask):
    """ALBERT's pre-training: MLM + SOP (``kind``) on an :class:`AlbertForPreTraining`."""

    def __init__(self, vocab: Vocab, embedding_size: int = 16, share: bool = True, kind: str = "sop",
                 p: float = 0.15):
        super().__init__(vocab, kind, p)
        self.embedding_size, self.share = embedding_size, share
        what = f"E={embedding_size}" + (", shared layers" if share else "")
        self.name = f"ALBERT ({what}, {kind.upper() if kind != 'none' else 'no sentence task'})"

    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        model = init_model(AlbertForPreTraining(self.vocab.bert_config(size), self.embedding_size, self.share))
        nn.init.zeros_(model.mlm.decoder.bias)
        return model


def parameter_counts(model: nn.Module) -> dict[str, int]:
    """Total, embedding and per-token-compute parameter counts of a BERT or ALBERT."""
    from .harness import flop_parameters

    total = count_parameters(model)
    return {"parameters": total, "embedding": total - non_embedding_parameters(model),
            "flop parameters": flop_parameters(model)}


__all__ = ["AlbertEncoder", "AlbertForPreTraining", "AlbertMLMHead", "AlbertObjective", "parameter_counts"]
