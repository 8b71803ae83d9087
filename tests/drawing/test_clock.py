"""The clock picture of the encoding (pe_lib.drawing.clock): drawing, widget, animation, word circles."""

import matplotlib

matplotlib.use("Agg")

import importlib
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.font_manager import FontProperties

import pe_lib


def _tips(fig):
    """The tip (x, y) of the hand of every visible dial, in order."""
    return np.array([line.get_xydata()[1] for ax in fig.axes if ax.get_visible()
                     for line in ax.lines if line.get_gid() == "hand"])


def _trail(ax):
    (dots,) = [c for c in ax.collections if c.get_gid() == "trail"]
    return dots


def test_draw_clock_puts_each_hand_where_the_table_says():
    fig = pe_lib.draw_clock(7, 16, pairs=(0, 2, 5), ncols=2)
    hands = pe_lib.hand_positions([7], 16)[0]
    np.testing.assert_allclose(_tips(fig), hands[[0, 2, 5]])
    for ax in fig.axes[:3]:  # each hand starts at the centre
        np.testing.assert_array_equal([line.get_xydata()[0] for line in ax.lines if line.get_gid() == "hand"],
                                      [[0.0, 0.0]])
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # one hidden cell in the 2 x 2 grid
    assert "pos = 7" in fig._suptitle.get_text()
    assert fig.axes[0].get_title().startswith("k = 0")
    assert fig.get_size_inches().tolist() == [7.6, 5.8] and fig.dpi == 100  # 2.9 in per row of dials


def test_the_trail_shows_earlier_positions_from_position_0_on_newest_darkest():
    fig = pe_lib.draw_clock(3, 8, pairs=[1], trail=0)
    assert not fig.axes[0].collections
    fig = pe_lib.draw_clock(9, 8, pairs=[1], trail=5)  # positions 4 .. 8
    np.testing.assert_allclose(_trail(fig.axes[0]).get_offsets(), pe_lib.hand_positions([4, 5, 6, 7, 8], 8)[:, 1])
    shades = _trail(fig.axes[0]).get_array()
    assert len(shades) == 5 and np.all(np.diff(shades) > 0)  # Greys: larger is darker
    fig = pe_lib.draw_clock(3, 8, pairs=[1], trail=5)  # only 0, 1, 2: a sequence starts at position 0
    np.testing.assert_allclose(_trail(fig.axes[0]).get_offsets(), pe_lib.hand_positions([0, 1, 2], 8)[:, 1])
    np.testing.assert_array_equal(_trail(fig.axes[0]).get_array(), shades[2:])
    assert len(_trail(pe_lib.draw_clock(0, 8, pairs=[1]).axes[0]).get_offsets()) == 0
    np.testing.assert_allclose(_trail(pe_lib.draw_clock(1.5, 8, pairs=[0], trail=3).axes[0]).get_offsets(),
                               pe_lib.hand_positions([0.5], 8)[:, 0])


@pytest.mark.parametrize(("pairs", "match"), [
    ([], "non-empty 1-D list of integer"),
    ([0.5], "non-empty 1-D list of integer"),
    ([[0, 1]], "non-empty 1-D list of integer"),
    ([8], r"0 .. d_model/2 - 1 = 7"),
    ([-1], r"0 .. d_model/2 - 1 = 7"),
])
def test_draw_clock_rejects_bad_pairs(pairs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.draw_clock(0, 16, pairs=pairs)


def test_clock_widget_slider_moves_the_hands():
    w = pe_lib.clock_widget(16, pairs=(0, 1), max_pos=50)
    slider, picture = w.children[:2]
    fig = w.result
    assert (slider.min, slider.max, slider.value) == (0, 50, 0)
    assert slider.continuous_update  # a redraw is cheap enough to follow a drag
    np.testing.assert_allclose(_tips(w.result), [[0.0, 1.0], [0.0, 1.0]])  # pos 0: 12 o'clock
    before = bytes(picture.value)
    slider.value = 3
    assert w.result is fig and bytes(picture.value) != before
    np.testing.assert_allclose(_tips(w.result), pe_lib.hand_positions([3], 16)[0, :2])
    assert "pos = 3" in w.result._suptitle.get_text()
    # before a kernel runs, Jupyter shows the text form of the stored output: it must say what to do
    text = w._repr_mimebundle_()["text/plain"]
    assert text == "Clock widget for d_model = 16, positions 0 to 50: run this cell (it needs a kernel)."


@pytest.mark.parametrize(("pairs", "trail", "pos"), [((0, 1, 2, 5, 7), 8, 37), ((1, 3), 0, 37), ((0,), 3, 2)])
def test_moving_the_hands_in_place_matches_a_new_drawing(pairs, trail, pos):
    clock = importlib.import_module("pe_lib.drawing.clock")
    fig = pe_lib.draw_clock(0, 16, pairs=pairs, trail=trail, base=500.0)
    clock._update_clock(fig, pos, 16, pairs, 500.0, trail)
    new = pe_lib.draw_clock(pos, 16, pairs=pairs, trail=trail, base=500.0)
    np.testing.assert_allclose(_tips(fig), _tips(new))
    for moved, drawn in zip(fig.axes, new.axes, strict=True):
        assert len(moved.collections) == len(drawn.collections) == (1 if trail and drawn.get_visible() else 0)
        for a, b in zip(moved.collections, drawn.collections, strict=True):
            np.testing.assert_allclose(a.get_offsets(), b.get_offsets())
            np.testing.assert_array_equal(a.get_array(), b.get_array())
    assert fig._suptitle.get_text() == new._suptitle.get_text()


def test_clock_widget_validates():
    with pytest.raises(ValueError, match="max_pos"):
        pe_lib.clock_widget(16, max_pos=0)
    with pytest.raises(ValueError, match="pair indices"):
        pe_lib.clock_widget(4, pairs=(0, 2))


def test_clock_animation_is_deterministic_and_light():
    kwargs = {"pairs": (0, 1), "dpi": 30, "width": 3.0, "height": 1.6, "html_id": "t_clock"}
    html = pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    assert html == pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    frames = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(frames) == 4 and len(set(frames)) == 4
    assert '"pos = 0","pos = 1","pos = 2","pos = 3"' in html
    assert 'alt="clock hands of d_model = 8, pos = 3"' in html
    assert len(html) < 40_000
    # the smallest text of a frame in frame pixels, for pages to check its shown size: the dial titles
    points = [FontProperties(size=plt.rcParams[key]).get_size_in_points() for key in ("axes.titlesize",
                                                                                      "figure.titlesize")]
    assert f'data-text-px="{min(points) * kwargs["dpi"] / 72:.2f}"' in html


def test_each_dial_title_is_three_short_lines():
    fig = pe_lib.draw_clock(3, 16, pairs=(0, 7))
    assert [ax.get_title() for ax in fig.axes] == ["k = 0\n$\\omega$ = 1\n$\\lambda$ = 6.3",
                                                   "k = 7\n$\\omega$ = 0.000316\n$\\lambda$ = 19869.2"]


def test_clock_animation_validates_pairs():
    with pytest.raises(ValueError, match="pair indices"):
        pe_lib.clock_animation_html([0, 1], 4, pairs=(2,))


def test_draw_word_circles_puts_each_position_on_the_circle_of_its_word():
    words = {"Tom": np.array([0.5, -0.3, 0.0, 0.0]), "dog": np.array([2.0, 1.0, 0.0, 0.0])}
    fig = pe_lib.draw_word_circles(words, np.arange(6))
    ax = fig.axes[0]
    points = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(points) == 2
    for line, x in zip(points, words.values(), strict=True):
        xy = np.column_stack([line.get_xdata(), line.get_ydata()])
        np.testing.assert_allclose(np.hypot(*(xy - x[:2]).T), 1.0)
        np.testing.assert_allclose(xy, pe_lib.embedded_positions(x, 6)[:, :2])
    assert [t.get_text() for t in ax.texts[:3]] == ["0", "1", "2"]


def test_draw_word_circles_needs_words():
    with pytest.raises(ValueError, match="at least one label"):
        pe_lib.draw_word_circles({}, 4)
