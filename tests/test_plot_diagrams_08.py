"""The token diagrams of chapter 8b (companion.plot.mass_diagram, span_corruption_diagram)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from companion import plot  # noqa: E402


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _row(fig, label: str) -> list[str]:
    """The token texts drawn on the same line as the row label ``label``, left to right."""
    ax = fig.axes[0]
    y = next(t.get_position()[1] for t in ax.texts if t.get_text() == label)
    cells = [t for t in ax.texts if t.get_position()[1] == y and t.get_text() != label and t.get_ha() == "center"]
    return [t.get_text() for t in sorted(cells, key=lambda t: t.get_position()[0])]


def test_span_corruption_default_is_t5s_example():
    fig = plot.span_corruption_diagram()
    assert _row(fig, "input") == ["Thank", "you", "<X>", "me", "to", "your", "party", "<Y>", "week", "."]
    assert _row(fig, "target") == ["<X>", "for", "inviting", "<Y>", "last", "<Z>"]
    assert _row(fig, "original") == list(plot.T5_EXAMPLE)
    plt.close(fig)


def test_span_corruption_span_at_the_end_and_start():
    fig = plot.span_corruption_diagram(["a", "b", "c", "d"], [(0, 1), (3, 4)])
    assert _row(fig, "input") == ["<X>", "b", "c", "<Y>"]
    assert _row(fig, "target") == ["<X>", "a", "<Y>", "d", "<Z>"]
    plt.close(fig)


@pytest.mark.parametrize("spans", [[], [(2, 2)], [(0, 9)], [(3, 4), (1, 2)], [(1, 3), (3, 4)], [(-1, 1)]])
def test_span_corruption_rejects_bad_spans(spans):
    with pytest.raises(ValueError, match="span"):
        plot.span_corruption_diagram(["a", "b", "c", "d", "e"], spans)


def test_span_corruption_needs_enough_sentinels():
    with pytest.raises(ValueError, match="sentinels"):
        plot.span_corruption_diagram(["a", "b", "c", "d"], [(0, 1), (2, 3)], sentinels=["<X>", "<Y>"])


def test_mass_diagram_rows():
    fig = plot.mass_diagram(["a", "b", "c", "d", "e", "f"], start=1, length=3)
    assert _row(fig, "encoder reads") == ["a", "[M]", "[M]", "[M]", "e", "f"]
    assert _row(fig, "decoder reads") == ["[M]", "b", "c"]
    assert _row(fig, "decoder writes") == ["b", "c", "d"]
    assert any(t.startswith("cross-attention") for t in _texts(fig))
    plt.close(fig)


def test_mass_diagram_extremes():
    one = plot.mass_diagram(["a", "b", "c"], start=1, length=1)  # a masked LM
    assert _row(one, "decoder writes") == ["b"] and _row(one, "decoder reads") == ["[M]"]
    whole = plot.mass_diagram(["a", "b", "c"], start=0, length=3)  # a left-to-right LM
    assert _row(whole, "encoder reads") == ["[M]"] * 3
    plt.close("all")


@pytest.mark.parametrize("start, length", [(-1, 2), (0, 0), (5, 4), (7, 2)])
def test_mass_diagram_rejects_a_fragment_outside(start, length):
    with pytest.raises(ValueError, match="fragment"):
        plot.mass_diagram(start=start, length=length)


def test_mass_diagram_types_and_axes():
    with pytest.raises(TypeError, match="ints"):
        plot.mass_diagram(start=1.5)
    with pytest.raises(ValueError, match="at least 2"):
        plot.mass_diagram(["a"], start=0, length=1)
    fig, ax = plt.subplots()
    assert plot.mass_diagram(ax=ax) is fig
    plt.close(fig)
