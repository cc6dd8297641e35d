"""XLNet (Yang et al. 2019): permutation language modelling with two-stream attention.

An autoregressive LM factorises ``p(x)`` left to right; XLNet samples a **factorisation order**
``z`` (a permutation of the positions) per sequence and maximises

    log p(x) = sum_t log p(x_{z_t} | x_{z_<t}),

so in expectation every token is predicted from context on both sides -- bidirectional like
BERT, but with no ``[MASK]`` token and no independence assumption between the predicted tokens.
The tokens stay in their places (positions unchanged); only the **attention masks** realise the
order. With ``rank[i]`` = the step at which position ``i`` comes in ``z``:

* the **content stream** ``h`` (what a token contributes as context) may see itself:
  ``h_i`` attends to ``j`` iff ``rank[j] <= rank[i]``;
* the **query stream** ``g`` (what predicts a token) knows the *position* it predicts but not
  its content: ``g_i`` starts from a learned vector ``w`` plus position ``i``'s embedding and
  attends to the content stream at ``j`` iff ``rank[j] < rank[i]``.

Both streams share every weight. **Partial prediction**: only the last ``1/K`` of each order
is predicted (earlier steps have too little context to be worth the optimisation difficulty);
``K = 6`` as in the paper, ~17 % of the tokens, close to BERT's 15 %. ``[CLS]`` and ``[SEP]``
come first in every order (always visible, never predicted). Fine-tuning uses the content
stream alone with full attention: a :class:`~companion.transformer.bert.BertEncoder`.

Left out (say so): Transformer-XL's segment recurrence and relative positions (we use BERT's
absolute positions), and the span-based target selection of the paper's implementation.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..transformer.bert import BertEncoder, MLMHead
from ..transformer.blocks import Block, count_parameters
from .harness import MaskedLM, ModelSize, Vocab, init_model, non_embedding_parameters


def sample_order(ids: torch.Tensor, specials: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """``rank [B, T]``: a uniformly random factorisation order of the text positions of each row,
    after the special positions (which keep their left-to-right order at the front)."""
    B, T = ids.shape
    key = torch.rand(B, T, generator=gen)
    key = torch.where(torch.isin(ids, specials), -2.0 + torch.arange(T) / T, key)  # specials first
    order = key.argsort(1)  # order[b, t] = the position predicted at step t
    return order.argsort(1)  # rank[b, i] = the step of position i


def two_stream_masks(rank: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(content [B, T, T], query [B, T, T])``, True = may attend: content ``rank[j] <= rank[i]``,
    query ``rank[j] < rank[i]``. Query rows of non-targets are unused and set like the content
    rows (an empty row would give a softmax of 0/0)."""
    content = rank[:, None, :] <= rank[:, :, None]
    query = rank[:, None, :] < rank[:, :, None]
    return content, torch.where(targets[:, :, None], query, content)


class XLNet(nn.Module):
    """Content stream = a :class:`BertEncoder`; query stream = the same blocks run on ``g``,
    whose queries read the content stream's keys and values; a tied MLM head on ``g``."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.encoder = BertEncoder(config, seed=None)
        self.w = nn.Parameter(torch.zeros(config.d_model))  # the query stream's start vector
        self.head = MLMHead(config, self.encoder.embeddings.tok)

    def streams(self, ids: torch.Tensor, content_mask: torch.Tensor, query_mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """The last layer's ``(h, g)``, ``[B, T, d]`` each."""
        emb = self.encoder.embeddings
        B, T = ids.shape
        pos = emb.pos(torch.arange(T, device=ids.device))
        h = emb(ids)
        g = emb.drop(emb.ln(self.w + pos + emb.seg.weight[0])).expand(B, T, -1)
        cm, qm = content_mask[:, None], query_mask[:, None]  # one mask for all heads
        for block in self.encoder.blocks:
            h, g = _two_stream_block(block, h, g, cm, qm)
        return h, g

    def flop_parameters(self) -> int:
        """The query stream runs every block a second time (its keys and values are the content
        stream's, so only the query projection is recomputed)."""
        extra = 0
        for block in self.encoder.blocks:
            kv = 2 * block.attn.qkv.weight.numel() // 3 + 2 * block.attn.qkv.bias.numel() // 3
            extra += count_parameters(block) - kv
        return non_embedding_parameters(self) + extra


def _attend(attn, q, k, v, mask) -> torch.Tensor:
    B, T, C = q.shape[0], q.shape[2], q.shape[1] * q.shape[3]
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return attn.proj(y.transpose(1, 2).reshape(B, T, C))


def _two_stream_block(block: Block, h, g, content_mask, query_mask):
    """One post-LN block on both streams with the same weights."""
    attn = block.attn
    B, T, C = h.shape
    nh, hd = attn.n_head, attn.head_dim
    q, k, v = attn.qkv(h).view(B, T, 3, nh, hd).permute(2, 0, 3, 1, 4)
    qg = F.linear(g, attn.qkv.weight[:C], attn.qkv.bias[:C]).view(B, T, nh, hd).transpose(1, 2)
    h = block.ln_1(h + block.drop(_attend(attn, q, k, v, content_mask)))
    g = block.ln_1(g + block.drop(_attend(attn, qg, k, v, query_mask)))
    return block.ln_2(h + block.mlp(h)), block.ln_2(g + block.mlp(g))


class PermutationLM(MaskedLM):
    """XLNet's objective: a random order per row, the last ``1/K`` of it predicted by the query
    stream (``K = 6``)."""

    name, arch = "XLNet (permutation LM)", "encoder"

    def __init__(self, vocab: Vocab, K: int = 6):
        if not isinstance(K, int) or K < 2:
            raise ValueError(f"K must be an int >= 2 (the last 1/K of each order is predicted), got {K!r}")
        super().__init__(vocab, p=1.0 / K)
        self.K = K

    def make_batch(self, rows: torch.Tensor, gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = self.frame(rows)
        rank = sample_order(ids, self._specials, gen)
        n_text = self.candidates(ids).sum(1, keepdim=True)
        T = ids.shape[1]
        # targets: the last ceil(n_text / K) steps of the order (the specials come first, never last)
        n_pred = (n_text + self.K - 1) // self.K
        targets = rank >= T - n_pred
        content, query = two_stream_masks(rank, targets)
        return {"ids": ids, "content_mask": content, "query_mask": query, "labels": ids.masked_fill(~targets, -100),
                "rank": rank}

    def build_model(self, size: ModelSize, vocab_size: int) -> nn.Module:
        if vocab_size != self.vocab.size:
            raise ValueError(f"vocab_size={vocab_size} differs from the objective's vocabulary ({self.vocab.size})")
        model = init_model(XLNet(self.vocab.bert_config(size)))
        nn.init.zeros_(model.head.decoder.bias)
        return model

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        _, g = model.streams(batch["ids"], batch["content_mask"], batch["query_mask"])
        labels = batch["labels"]
        chosen = labels != -100
        return F.cross_entropy(model.head(g[chosen]), labels[chosen])

    def encoder(self, model: nn.Module) -> BertEncoder:
        return model.encoder
