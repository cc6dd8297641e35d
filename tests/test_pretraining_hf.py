"""Chapter 8 against Hugging Face (``make test-peers``): ELECTRA's two networks logit for logit,
and XLNet's permutation masks by what each model's outputs depend on."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from companion.pretraining.electra import ElectraObjective
from companion.pretraining.harness import ModelSize, toy_vocab
from companion.pretraining.hf import electra_configs_to_hf, electra_state_to_hf
from companion.pretraining.xlnet import PermutationLM

pytestmark = [pytest.mark.peers, pytest.mark.usefixtures("one_thread")]
TOL = {"atol": 1e-5, "rtol": 1e-5}
V = toy_vocab(60)
SIZE = ModelSize(d_model=32, n_layers=2, n_heads=4, d_ff=64, max_len=24)


def _ours_electra():
    torch.manual_seed(0)
    model = ElectraObjective(V, gen_fraction=0.5).build_model(SIZE, V.size).eval()
    with torch.no_grad():  # the init zeroes biases and sets LayerNorms to 1: perturb every weight
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return model


def _load(cls, config: dict, state: dict):
    ref = cls(transformers.ElectraConfig(**config)).eval()
    missing, unexpected = ref.load_state_dict(state, strict=False)
    assert not unexpected and not [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    assert set(state) >= {k for k, _ in ref.named_parameters()}  # every HF parameter was written
    return ref


def test_electra_discriminator_and_generator_logits_match_hf():
    """Our ELECTRA's weights in HF's ``ElectraForPreTraining`` (discriminator) and
    ``ElectraForMaskedLM`` (generator, ``embedding_size`` = the discriminator's width so that it
    reads the shared embeddings through ``embeddings_project``): the same logits, fp32, 1e-5."""
    ours = _ours_electra()
    disc_cfg, gen_cfg = electra_configs_to_hf(ours)
    disc_sd, gen_sd = electra_state_to_hf(ours)
    disc = _load(transformers.ElectraForPreTraining, disc_cfg, disc_sd)
    gen = _load(transformers.ElectraForMaskedLM, gen_cfg, gen_sd)
    g = torch.Generator().manual_seed(1)
    x = torch.randint(6, V.size, (3, 20), generator=g)
    seg = torch.zeros_like(x)
    seg[:, 11:] = 1
    am = torch.ones_like(x)
    am[1, 15:], am[2, 7:] = 0, 0
    with torch.no_grad():
        mine = ours.head(ours.discriminator(x, seg, am)).squeeze(-1)
        theirs = disc(input_ids=x, token_type_ids=seg, attention_mask=am).logits
        real = am.bool()
        torch.testing.assert_close(mine[real], theirs[real], **TOL)
        # our generator runs without a padding mask (its input rows are never padded)
        mine_g = ours.generator.logits(ours.generator(ours.discriminator.embeddings(x, seg)))
        torch.testing.assert_close(mine_g, gen(input_ids=x, token_type_ids=seg).logits, **TOL)


def _changed(run, ids: torch.Tensor) -> torch.Tensor:
    """``dep[i, j]``: does output ``i`` change when input token ``j`` is replaced?"""
    with torch.no_grad():
        base = run(ids)
        dep = []
        for j in range(ids.shape[1]):
            x = ids.clone()
            x[0, j] = 6 + (int(x[0, j]) - 6 + 17) % (V.size - 6)
            dep.append((run(x) - base).abs().amax(-1)[0] > 1e-6)
    return torch.stack(dep, 1)


def test_xlnet_permutation_masks_mean_what_hf_perm_mask_means():
    """What can be compared, and what cannot.

    HF's XLNet is Transformer-XL: relative positional attention (sinusoidal relative encodings
    with learned ``r_w_bias``/``r_r_bias``), relative segment encodings and a memory. Ours uses
    BERT's absolute positions and no memory, so no weight mapping exists and no logits can match.

    What both implement is the *factorisation order*. For one sampled order (our
    ``PermutationLM`` batch), HF's ``perm_mask`` is the complement of our query-stream mask
    (``perm_mask[i, j] = 1``: ``i`` may not attend to ``j``), ``target_mapping`` picks our
    targets, and HF opens the diagonal for the content stream -- which must give our content
    mask. The test checks this behaviourally, in both models at random weights: replacing token
    ``j`` changes the query stream's output at target ``i`` iff ``j`` comes strictly before ``i``
    in the order, and the content stream's output at ``i`` iff ``j`` comes no later than ``i``
    (through two layers, so also what passes between layers). One difference in practice (not
    tested): HF's ``DataCollatorForPermutationLanguageModeling`` and XLNet's own code let the
    non-target tokens all see each other, where we keep the sampled order among them too."""
    obj = PermutationLM(V, K=2)
    torch.manual_seed(0)
    ours = obj.build_model(SIZE, V.size).eval()
    rows = torch.randint(6, V.size, (1, 10), generator=torch.Generator().manual_seed(3))
    b = obj.make_batch(rows, torch.Generator().manual_seed(4))
    ids, rank, targets = b["ids"], b["rank"][0], (b["labels"] != -100)[0]
    T = ids.shape[1]
    before = rank[None, :] < rank[:, None]  # [i, j]: j strictly before i
    content_expected = before | torch.eye(T, dtype=torch.bool)
    tgt_pos = targets.nonzero().squeeze(1)
    assert 2 <= len(tgt_pos) < T

    perm_mask = (~b["query_mask"]).float()
    mapping = torch.zeros(1, len(tgt_pos), T)
    mapping[0, torch.arange(len(tgt_pos)), tgt_pos] = 1.0
    torch.manual_seed(0)
    ref = transformers.XLNetModel(transformers.XLNetConfig(
        vocab_size=V.size, d_model=32, n_layer=2, n_head=4, d_inner=64, dropout=0.0, ff_activation="gelu",
        attn_type="bi", mem_len=None, use_mems_eval=False)).eval()

    hf_content = _changed(lambda x: ref(x, perm_mask=perm_mask).last_hidden_state, ids)
    hf_query = _changed(lambda x: ref(x, perm_mask=perm_mask, target_mapping=mapping).last_hidden_state, ids)
    our_content = _changed(lambda x: ours.streams(x, b["content_mask"], b["query_mask"])[0], ids)
    our_query = _changed(lambda x: ours.streams(x, b["content_mask"], b["query_mask"])[1][:, tgt_pos], ids)
    assert torch.equal(hf_content, content_expected) and torch.equal(our_content, content_expected)
    assert torch.equal(hf_query, before[tgt_pos]) and torch.equal(our_query, before[tgt_pos])
    # and the masks themselves: HF's content mask is perm_mask with the diagonal opened
    assert torch.equal(~(perm_mask[0].bool() & ~torch.eye(T, dtype=torch.bool)), b["content_mask"][0])
