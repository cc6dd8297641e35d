"""The text-generation widget: its plain callback and the ipywidgets wiring (state, not display)."""

from __future__ import annotations

import pytest

from companion.counting import ModelZoo, NGramCounts, generate_for, generation_widget

pytestmark = pytest.mark.filterwarnings("ignore:Kneser-Ney discounts")  # a toy corpus

TRAIN = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "the", "log"],
         ["a", "cat", "saw", "a", "dog"], ["the", "dog", "saw", "the", "cat"]] * 3
VALID = [["the", "cat", "saw", "the", "dog"], ["a", "dog", "sat"]]


@pytest.fixture(scope="module")
def zoo():
    return ModelZoo(NGramCounts(TRAIN, 3), valid=VALID)


def test_zoo_builds_and_caches(zoo):
    lm = zoo.get("modified KN", 2)
    assert lm is zoo.get("modified KN", 2) and lm.order == 2
    assert zoo.get("add-k", 3).order == 3  # tuned on the validation text
    assert ModelZoo(NGramCounts(TRAIN, 2)).methods == ["MLE", "add-1", "KN", "modified KN"]
    with pytest.raises(ValueError, match="pass valid"):
        ModelZoo(NGramCounts(TRAIN, 2)).get("add-k", 2)
    with pytest.raises(ValueError, match="n must be"):
        zoo.get("KN", 4)
    with pytest.raises(TypeError):
        ModelZoo(TRAIN)


def test_callback_is_seeded(zoo):
    a = generate_for(zoo, "KN", 3, "the cat", seed=1, n_samples=2)
    assert len(a) == 2 and all(t.startswith("the cat") for t in a)
    assert a == generate_for(zoo, "KN", 3, "the cat", seed=1, n_samples=2)
    greedy = generate_for(zoo, "MLE", 2, "a", temperature=0)
    assert greedy[0].split()[:2] == ["a", "cat"] or greedy[0].split()[:2] == ["a", "dog"]
    with pytest.raises(ValueError, match="n_samples"):
        generate_for(zoo, "KN", 3, "the", n_samples=0)


def test_widget_updates_its_output_when_controls_change(zoo):
    w = generation_widget(zoo, prompt="the", n=2, seed=0, n_samples=2)
    first = w.output.value
    assert first.startswith("<ol>") and first.count("<li>") == 2 and w.calls == 1
    w.seed.value = 5
    assert w.calls == 2
    w.method.value = "MLE"
    w.order.value = 3
    w.prompt.value = "a dog"
    assert w.calls == 5
    assert "<li>a dog" in w.output.value
    w.temperature.value = 0.0
    text = w.output.value
    w.seed.value = 6  # greedy: the seed no longer matters
    assert w.output.value == text
    with pytest.raises(ValueError, match="not among"):
        generation_widget(zoo, methods=["KN"], method="MLE")


def test_labels_are_not_cut(zoo):
    w = generation_widget(zoo, n=2)
    for control in (w.method, w.order, w.prompt, w.temperature, w.seed):
        assert control.style.description_width == "initial", control.description


def test_an_error_then_a_change_recovers(zoo):
    w = generation_widget(zoo, prompt="the", n=2, seed=0, n_samples=2)
    good = w.output.value
    w.seed.value = -1  # numpy refuses a negative seed: the widget shows why and keeps running
    assert "Cannot generate" in w.output.value and "<li>" not in w.output.value
    w.temperature.value = 0.5  # another control changes while the error is shown: still an error
    assert "Cannot generate" in w.output.value
    w.seed.value = 0  # fixing the bad value brings the samples back, at the new temperature
    assert w.output.value.startswith("<ol>") and w.output.value.count("<li>") == 2
    w.temperature.value = 1.0
    assert w.output.value == good
