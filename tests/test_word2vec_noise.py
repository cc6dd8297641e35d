"""The negative-sampling noise distribution and its table."""

from __future__ import annotations

import pytest
import torch

from companion.word2vec import NoiseSampler, noise_distribution, unigram_table

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py: tiny ops, one torch thread


def test_noise_distribution_is_counts_to_the_three_quarters():
    counts = torch.tensor([1000, 100, 10, 1])
    p = noise_distribution(counts)
    expected = counts.double() ** 0.75 / (counts.double() ** 0.75).sum()
    assert torch.allclose(p, expected)
    assert p.sum().item() == pytest.approx(1.0)
    # the power flattens: rare words gain relative to their unigram frequency
    assert p[3] > counts[3] / counts.sum()
    assert torch.allclose(noise_distribution(counts, power=1.0), counts.double() / counts.sum())
    assert torch.allclose(noise_distribution(counts, power=0.0), torch.full((4,), 0.25, dtype=torch.float64))


def test_unigram_table_shares_match_the_distribution_to_one_cell():
    counts = torch.tensor([500, 200, 77, 30, 9, 1])
    size = 100_003
    table = unigram_table(counts, size)
    assert table.dtype == torch.int32 and table.numel() == size
    share = torch.bincount(table.long(), minlength=6).double() / size
    assert torch.allclose(share, noise_distribution(counts), atol=1.5 / size)
    assert torch.all(table[1:] >= table[:-1])  # words fill contiguous runs, as in the C code


def test_sampler_draws_follow_the_table_and_are_seeded():
    counts = torch.tensor([40, 30, 20, 10])
    s = NoiseSampler(counts, table_size=10_000, seed=3)
    x = s.sample(200_000)
    freq = torch.bincount(x, minlength=4).double() / x.numel()
    assert torch.allclose(freq, noise_distribution(counts), atol=0.005)
    again = NoiseSampler(counts, table_size=10_000, seed=3).sample(200_000)
    assert torch.equal(x, again)
    assert s.sample(3, 5).shape == (3, 5) and s.sample(3, 5).dtype == torch.int64


def test_zero_counts_are_never_drawn():
    p = noise_distribution(torch.tensor([5, 0, 5]))
    assert p[1] == 0
    table = unigram_table(torch.tensor([5, 0, 5]), 1000)
    assert not bool((table == 1).any())


@pytest.mark.parametrize("counts, match", [
    (torch.tensor([]), "non-empty"),
    (torch.tensor([[1, 2]]), "1-D"),
    (torch.tensor([1, -2]), ">= 0"),
    (torch.tensor([0, 0]), "positive"),
])
def test_bad_counts_rejected(counts, match):
    with pytest.raises(ValueError, match=match):
        noise_distribution(counts)


def test_bad_table_size_rejected():
    with pytest.raises(ValueError, match="table_size"):
        unigram_table(torch.tensor([1, 2, 3]), 2)
    with pytest.raises(ValueError, match="shape"):
        NoiseSampler(torch.tensor([1, 2]), table_size=10).sample(-1)
