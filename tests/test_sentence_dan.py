"""Chapter 5: the deep averaging network (USE-DAN)."""

import pytest
import torch

from companion.sentence.dan import DAN, DANConfig, bigram_buckets, train_dan

pytestmark = pytest.mark.usefixtures("one_thread")


def test_average_of_words_and_bigrams_by_hand():
    torch.manual_seed(0)
    dan = DAN(10, DANConfig(emb_dim=3, hidden=4, layers=1, out_dim=2, buckets=7))
    ids = torch.tensor([[4, 5, 6, 1]])
    b = bigram_buckets(ids[:, :3], 7)[0]
    avg = (dan.words.weight[[4, 5, 6]].sum(0) + dan.bigrams.weight[b].sum(0)) / 5  # 3 words + 2 bigrams
    expected = torch.tanh(dan.ff[0](avg))
    assert torch.allclose(dan(ids, torch.tensor([3]))[0], expected, atol=1e-6)
    # padding changes nothing
    assert torch.allclose(dan(ids[:, :3], torch.tensor([3])), dan(ids, torch.tensor([3])), atol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="buckets"):
        DANConfig(buckets=-1).validate()
    with pytest.raises(ValueError, match="word_dropout"):
        DANConfig(word_dropout=1.0).validate()


@pytest.mark.slow
def test_tiny_nli_run_learns():
    from test_sentence_infersent import synthetic_nli

    res = train_dan(synthetic_nli(), DANConfig(emb_dim=8, hidden=16, out_dim=8, mlp=16, buckets=101,
                                               epochs=10, lr=1e-2, batch_size=16, word_dropout=0.1))
    assert res.history.epoch_loss[-1] < res.history.epoch_loss[0] - 0.3
    assert res.accuracy(synthetic_nli(60, seed=1)) >= 0.7
    assert res.encode(["the cat", ""]).shape == (2, 8)
