"""Chapter 7: attention, the Transformer, subword tokenizers, GPT and BERT, written out to be
read (nanoGPT-style).

* ``tokenizers`` (subpackage) -- BPE, byte-level BPE, WordPiece, written out; parity with
  tiktoken and HF on the real GPT-2 and BERT vocabulary files;
* :mod:`.attention` -- additive, dot-product, scaled and multi-head attention; causal,
  bidirectional, padding and prefix-LM masks (``True`` = may attend), :func:`draw_mask`;
* :mod:`.blocks` -- the post-LN / pre-LN Transformer block, sinusoidal and learned positions;
* :mod:`.gpt` -- GPT (Radford et al. 2018): LM, the fine-tuning input transformations with the
  auxiliary LM loss, generation (temperature, top-k, top-p) with a KV cache;
* :mod:`.bert` -- BERT (Devlin et al. 2018): embeddings, MLM 80/10/10 masking, NSP, pooling,
  fine-tuning heads for sentences, pairs and tokens;
* :mod:`.hf` -- Hugging Face format both ways (GPT-2, BERT, all-MiniLM-L6-v2);
* :mod:`.pretrain` -- packing documents into blocks, pre-training with ``companion.train.fit``,
  and the ``torchrun`` entry point (DDP);
* :mod:`.tokenizers` -- BPE, byte-level BPE and WordPiece, written out (parity with tiktoken and
  HF on the real GPT-2 and BERT vocabulary files).
"""

from .attention import (
    AdditiveAttention,
    KVCache,
    MultiHeadAttention,
    bidirectional_mask,
    causal_mask,
    dot_product_attention,
    draw_mask,
    padding_mask,
    prefix_lm_mask,
    scaled_dot_product_attention,
)
from .bert import (
    BertConfig,
    BertEncoder,
    BertForPreTraining,
    BertForSequence,
    BertForTokens,
    mask_tokens,
    mean_pool,
    pad_batch,
    pair_inputs,
)
from .blocks import MLP, Block, SinusoidalPositions, attention_weights, count_parameters
from .gpt import GPT, GPTConfig, GPTForTask, sample_next, task_batch, task_inputs
from .pretrain import lm_batches, mlm_batches, nsp_examples, pack_lm, pack_mlm, pretrain
