"""Chapter 5: SDAE -- the noise function's rates, a tiny run learns."""

import random
from collections import Counter

import pytest
import torch

from companion.sentence.sdae import SDAEConfig, add_noise, train_sdae

pytestmark = pytest.mark.usefixtures("one_thread")


def test_noise_off_is_identity_and_swaps_keep_the_words():
    rng = random.Random(0)
    s = list(range(9))
    assert add_noise(s, 0.0, 0.0, rng) == s
    swapped = add_noise(s, 0.0, 1.0, rng)
    assert swapped == [1, 0, 3, 2, 5, 4, 7, 6, 8]  # non-overlapping bigrams, the odd one stays
    assert add_noise(s, 1.0, 0.0, rng) == []


def test_noise_rates():
    rng = random.Random(1)
    n, deleted, pairs, swaps = 20_000, 0, 0, 0
    for _ in range(n // 10):
        s = list(range(10))
        out = add_noise(s, 0.1, 0.0, rng)
        deleted += 10 - len(out)
        out = add_noise(s, 0.0, 0.3, rng)
        pairs += 5
        swaps += sum(out[i] > out[i + 1] for i in range(0, 9, 2))
    assert deleted / n == pytest.approx(0.1, abs=0.01)
    assert swaps / pairs == pytest.approx(0.3, abs=0.03)
    out = add_noise(list("abcdefgh"), 0.2, 0.5, random.Random(2))
    assert not (Counter(out) - Counter("abcdefgh"))  # noise never invents words


def test_bad_input():
    with pytest.raises(ValueError, match="p0"):
        add_noise([1, 2], 1.5, 0.1, random.Random(0))
    with pytest.raises(ValueError, match="px"):
        SDAEConfig(px=-0.1).validate()
    with pytest.raises(TypeError, match="list of strings"):
        train_sdae("one string")


@pytest.mark.slow
def test_tiny_run_lowers_the_loss():
    sents = ["the cat eats fish", "the dog runs in the park", "a bird sings", "the cat sleeps"] * 8
    res = train_sdae(sents, SDAEConfig(emb_dim=16, hidden=16, batch_size=8, min_count=1, epochs=5, lr=1e-2))
    h = res.history.epoch_loss
    assert h[-1] < h[0] - 0.5, h
    X = res.encode(["the cat eats fish", ""])
    assert X.shape == (2, 16) and torch.isfinite(X).all()
