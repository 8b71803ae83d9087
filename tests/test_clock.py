"""The clock picture of the encoding (pe_lib.clock): hands, direction, drawing, widget, JS player."""

import matplotlib

matplotlib.use("Agg")

import base64
import importlib
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models

import pe_lib


def _tips(fig):
    """The arrow tip (x, y) of every visible dial, in order."""
    return np.array([ax.texts[0].xy for ax in fig.axes if ax.get_visible() and ax.texts])


@given(d=d_models, base=bases)
def test_hands_are_the_table_pairs_on_the_unit_circle(d, base):
    hands = pe_lib.hand_positions(np.arange(50), d, base=base)
    table = pe_lib.sinusoidal(50, d, base=base)
    assert hands.shape == (50, d // 2, 2)
    np.testing.assert_array_equal(hands[..., 0], table[:, 0::2])  # x = sin
    np.testing.assert_array_equal(hands[..., 1], table[:, 1::2])  # y = cos
    np.testing.assert_allclose(np.hypot(hands[..., 0], hands[..., 1]), 1.0, atol=1e-14)


@given(d=d_models, base=bases, step=st.integers(min_value=1, max_value=10))
def test_cross_product_of_successive_hands_is_minus_sin_of_the_step_angle(d, base, step):
    hands = pe_lib.hand_positions(np.arange(0, 40 * step, step), d, base=base)
    z = pe_lib.cross_z(hands)
    expected = -np.sin(step * pe_lib.frequencies(d, base=base))  # x_t y_{t+s} - y_t x_{t+s} = -sin(s omega)
    np.testing.assert_allclose(z, np.broadcast_to(expected, z.shape), atol=1e-11)


@given(d=d_models, base=bases)
def test_every_hand_turns_clockwise_token_by_token(d, base):
    # 0 < omega_k <= 1 < pi, so -sin(omega_k) < 0 for every pair
    senses = pe_lib.rotation_sense(pe_lib.hand_positions(np.arange(30), d, base=base), atol=0.0)
    assert np.all(senses == "clockwise")


def test_sampled_every_four_tokens_the_fastest_hand_looks_counterclockwise():
    hands = pe_lib.hand_positions(np.arange(0, 40, 4), 512)
    senses = pe_lib.rotation_sense(hands)
    assert np.all(senses[:, 0] == "counterclockwise")  # 4 rad > pi: the short way round is backwards
    # in general pair k looks counterclockwise exactly when (4 omega_k mod 2 pi) > pi
    backwards = np.mod(4 * pe_lib.frequencies(512), 2 * np.pi) > np.pi
    assert backwards[:7].all() and not backwards[7:].any()
    np.testing.assert_array_equal(senses == "counterclockwise", np.broadcast_to(backwards, senses.shape))


def test_cos_sin_axes_reverse_the_direction():
    hands = pe_lib.hand_positions(np.arange(20), 8)
    assert np.all(pe_lib.rotation_sense(hands[..., ::-1]) == "counterclockwise")


def test_rotation_sense_still_and_errors():
    assert pe_lib.rotation_sense([[0.0, 1.0], [0.0, 1.0], [0.0, -1.0]]).tolist() == ["still", "still"]
    for bad in ([[0.0, 1.0]], [0.0, 1.0], np.zeros((3, 3))):
        with pytest.raises(ValueError, match="points must have shape"):
            pe_lib.cross_z(bad)


def test_embedded_positions_circle_the_word():
    x = np.random.default_rng(0).normal(size=16)
    out = pe_lib.embedded_positions(x, np.arange(100))
    assert out.shape == (100, 16)
    pairs = (out - x).reshape(100, 8, 2)
    np.testing.assert_allclose(np.hypot(pairs[..., 0], pairs[..., 1]), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(out - x, axis=1), np.sqrt(8), atol=1e-13)


@pytest.mark.parametrize(("x", "match"), [
    (np.zeros((2, 4)), "one vector of shape"),
    ([0.0, np.nan], "must be finite"),
    (np.zeros(3), "the length of embedding must be a positive even integer"),
])
def test_embedded_positions_rejects_bad_embeddings(x, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.embedded_positions(x, 4)


def test_draw_clock_puts_each_hand_where_the_table_says():
    fig = pe_lib.draw_clock(7, 16, pairs=(0, 2, 5), ncols=2)
    hands = pe_lib.hand_positions([7], 16)[0]
    np.testing.assert_allclose(_tips(fig), hands[[0, 2, 5]])
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # one hidden cell in the 2 x 2 grid
    assert "pos = 7" in fig._suptitle.get_text()
    assert fig.axes[0].get_title().startswith("k = 0")


def test_draw_clock_without_trail_draws_no_dots():
    fig = pe_lib.draw_clock(3, 8, pairs=[1], trail=0)
    assert not fig.axes[0].collections
    fig = pe_lib.draw_clock(3, 8, pairs=[1], trail=5)
    np.testing.assert_allclose(fig.axes[0].collections[0].get_offsets(),
                               pe_lib.hand_positions([-2, -1, 0, 1, 2], 8)[:, 1])


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


@pytest.mark.parametrize(("pairs", "trail"), [((0, 1, 2, 5, 7), 8), ((1, 3), 0), ((0,), 3)])
def test_moving_the_hands_in_place_matches_a_new_drawing(pairs, trail):
    clock = importlib.import_module("pe_lib.clock")
    fig = pe_lib.draw_clock(0, 16, pairs=pairs, trail=trail, base=500.0)
    clock._update_clock(fig, 37, 16, pairs, 500.0, trail)
    new = pe_lib.draw_clock(37, 16, pairs=pairs, trail=trail, base=500.0)
    np.testing.assert_allclose(_tips(fig), _tips(new))
    for moved, drawn in zip(fig.axes, new.axes, strict=True):
        assert len(moved.collections) == len(drawn.collections) == (1 if trail and drawn.get_visible() else 0)
        for a, b in zip(moved.collections, drawn.collections, strict=True):
            np.testing.assert_allclose(a.get_offsets(), b.get_offsets())
    assert fig._suptitle.get_text() == new._suptitle.get_text()


def test_clock_widget_validates():
    with pytest.raises(ValueError, match="max_pos"):
        pe_lib.clock_widget(16, max_pos=0)
    with pytest.raises(ValueError, match="pair indices"):
        pe_lib.clock_widget(4, pairs=(0, 2))


def _draw_dot(v):
    fig, ax = pe_lib.new_figure(width=1, height=1)
    ax.plot([v], [v], "o")
    ax.set_xlim(0, 3)
    ax.set_ylim(0, 3)
    return fig


def test_png_frames_are_small_valid_pngs_that_depend_only_on_the_drawing():
    frames = pe_lib.png_frames(_draw_dot, [0, 1, 2], dpi=30, colors=8)
    assert len(frames) == 3
    raw = [base64.b64decode(f) for f in frames]
    assert all(r.startswith(b"\x89PNG\r\n\x1a\n") for r in raw)
    assert len(set(frames)) == 3
    assert frames == pe_lib.png_frames(_draw_dot, [0, 1, 2], dpi=30, colors=8)
    assert b"tEXt" not in raw[0]  # no metadata (software, dates)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"colors": 1}, "colors must be an integer >= 2"),
    ({"colors": 257}, "at most 256"),
    ({"dpi": 0}, "dpi must be an integer >= 1"),
])
def test_png_frames_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.png_frames(_draw_dot, [0], **kwargs)


def test_png_frames_needs_values():
    with pytest.raises(ValueError, match="at least one frame"):
        pe_lib.png_frames(_draw_dot, [])


def test_player_html_is_self_contained_with_a_fixed_id():
    html = pe_lib.player_html(["AAAA", "BBBB"], ["a<b & c", 'say "</script>"'], html_id="demo_1", alt='"x"')
    assert 'id="demo_1_slider"' in html and 'max="1"' in html
    assert 'src="data:image/png;base64,AAAA"' in html  # the first frame shows without JavaScript
    assert 'alt="&quot;x&quot;"' in html
    assert '"AAAA","BBBB"' in html
    assert ">a&lt;b &amp; c</span>" in html  # the label of frame 0, escaped as HTML text
    assert '"a<b & c","say \\"<\\/script>\\""' in html  # JavaScript literals cannot close the script
    assert html.count("</script>") == 1
    assert "http" not in html and "uuid" not in html


@pytest.mark.parametrize(("frames", "labels", "html_id", "match"), [
    ([], [], "x", "at least one frame"),
    (["A"], ["a", "b"], "x", "one label per frame"),
    (["A"], ["a"], "1x", "html_id must start with a letter"),
    (["A"], ["a"], "x-y", "html_id must start with a letter"),
    (["A"], ["a"], None, "html_id must start with a letter"),
])
def test_player_html_rejects_bad_arguments(frames, labels, html_id, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.player_html(frames, labels, html_id=html_id)


def test_clock_animation_is_deterministic_and_light():
    kwargs = {"pairs": (0, 1), "dpi": 30, "width": 3.0, "height": 1.6, "html_id": "t_clock"}
    html = pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    assert html == pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    assert html.count("data:image/png;base64,") == 2  # the first frame in <img>, the prefix in the script
    frames = re.search(r"var frames = \[(.*?)\];", html).group(1).split(",")
    assert len(frames) == 4
    assert '"pos = 0","pos = 1","pos = 2","pos = 3"' in html
    assert len(html) < 60_000


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
