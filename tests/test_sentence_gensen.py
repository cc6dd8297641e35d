"""Chapter 5: GenSen-lite -- one shared encoder, three task heads, round-robin training."""

import pytest
import torch

from companion.sentence.gensen import GenSenConfig, train_gensen

pytestmark = pytest.mark.usefixtures("one_thread")

from test_sentence_infersent import synthetic_nli
from test_sentence_quickthoughts import story_documents

TRANSLATION = [("the cat sleeps", "die katze schlaeft"), ("the dog runs", "der hund rennt"),
               ("a cat runs", "eine katze rennt"), ("a dog sleeps", "ein hund schlaeft")] * 6


def test_every_task_trains_the_shared_encoder():
    cfg = GenSenConfig(emb_dim=8, hidden=8, mlp=8, batch_size=8, min_count=1, epochs=1)
    res = train_gensen(documents=story_documents(1), nli=synthetic_nli(24), translation=TRANSLATION, config=cfg)
    assert res.tasks == ("next", "nli", "translate")
    assert all(len(v) > 0 and all(map(torch.isfinite, map(torch.tensor, v))) for v in res.task_losses.values())
    # every step is one batch of one task
    assert res.history.steps == sum(len(v) for v in res.task_losses.values())
    X = res.encode(["the cat sleeps", ""])
    assert X.shape == (2, 8) and torch.isfinite(X).all()


def test_single_task_and_bad_input():
    res = train_gensen(translation=TRANSLATION, config=GenSenConfig(emb_dim=8, hidden=8, batch_size=8, min_count=1))
    assert res.tasks == ("translate",) and set(res.model.heads) == {"translate"}
    with pytest.raises(ValueError, match="at least one task"):
        train_gensen()
    with pytest.raises(ValueError, match="positive int"):
        train_gensen(translation=TRANSLATION, config=GenSenConfig(hidden=0))


@pytest.mark.slow
def test_tiny_multitask_run_lowers_every_loss():
    cfg = GenSenConfig(emb_dim=16, hidden=16, mlp=16, batch_size=8, min_count=1, epochs=6, lr=1e-2)
    res = train_gensen(documents=story_documents(1), nli=synthetic_nli(48), translation=TRANSLATION, config=cfg)
    for task, values in res.task_losses.items():
        k = max(1, len(values) // 6)
        assert sum(values[-k:]) / k < sum(values[:k]) / k - 0.2, task
