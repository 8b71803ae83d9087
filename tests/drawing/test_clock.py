"""The clock picture of the encoding (pe_lib.drawing.clock): hands, direction, drawing, widget, JS player."""

import matplotlib

matplotlib.use("Agg")

import base64
import importlib
import io
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from strategies import bases, d_models

import pe_lib


def _tips(fig):
    """The tip (x, y) of the hand of every visible dial, in order."""
    return np.array([line.get_xydata()[1] for ax in fig.axes if ax.get_visible()
                     for line in ax.lines if line.get_gid() == "hand"])


def _trail(ax):
    (dots,) = [c for c in ax.collections if c.get_gid() == "trail"]
    return dots


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
    for ax in fig.axes[:3]:  # each hand starts at the centre
        np.testing.assert_array_equal([line.get_xydata()[0] for line in ax.lines if line.get_gid() == "hand"],
                                      [[0.0, 0.0]])
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # one hidden cell in the 2 x 2 grid
    assert "pos = 7" in fig._suptitle.get_text()
    assert fig.axes[0].get_title().startswith("k = 0")
    assert fig.get_size_inches().tolist() == [7.6, 4.8] and fig.dpi == 100


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


def _full_drawing(fig, colors=32):
    """The reference frame: ``fig`` drawn from scratch, reduced to the same palette as png_frames."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    out = io.BytesIO()
    rgb = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    rgb.quantize(colors=colors, method=Image.Quantize.FASTOCTREE).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _clock_frames(positions, pairs=(0, 1, 5), dpi=40, **kwargs):
    clock = importlib.import_module("pe_lib.drawing.clock")
    fig = pe_lib.draw_clock(positions[0], 12, pairs=pairs, dpi=dpi, width=4.0)
    update = lambda p: clock._update_clock(fig, p, 12, pairs, 10_000.0, 8)  # noqa: E731
    return pe_lib.png_frames(fig, update, positions, animated=clock._moving_artists(fig), **kwargs)


def test_redrawing_only_the_moving_parts_gives_the_pixels_of_a_full_drawing():
    positions = [0, 1, 6, 13.5]
    frames = _clock_frames(positions)
    for p, frame in zip(positions, frames, strict=True):
        assert frame == _full_drawing(pe_lib.draw_clock(p, 12, pairs=(0, 1, 5), dpi=40, width=4.0))


def test_png_frames_are_small_valid_pngs_that_depend_only_on_the_drawing():
    frames = _clock_frames([0, 1, 2], colors=8)
    assert len(frames) == 3
    raw = [base64.b64decode(f) for f in frames]
    assert all(r.startswith(b"\x89PNG\r\n\x1a\n") for r in raw)
    assert len(set(frames)) == 3
    assert frames == _clock_frames([0, 1, 2], colors=8)
    assert b"tEXt" not in raw[0]  # no metadata (software, dates)
    image = Image.open(io.BytesIO(raw[0]))
    assert image.mode == "P" and len(image.getcolors()) <= 8 and image.size == (160, 96)  # 4.0 x 2.4 in at dpi 40


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"colors": 1}, "colors must be an integer >= 2"),
    ({"colors": 257}, "at most 256"),
    ({"animated": []}, "animated must list the artists"),
])
def test_png_frames_rejects_bad_settings(kwargs, match):
    fig, ax = pe_lib.new_figure(width=1, height=1)
    (dot,) = ax.plot([0], [0], "o")
    with pytest.raises(ValueError, match=match):
        pe_lib.png_frames(fig, lambda v: dot.set_data([v], [v]), [0], **({"animated": [dot]} | kwargs))


def test_png_frames_needs_values():
    fig, ax = pe_lib.new_figure(width=1, height=1)
    (dot,) = ax.plot([0], [0], "o")
    with pytest.raises(ValueError, match="at least one frame"):
        pe_lib.png_frames(fig, lambda v: None, [], animated=[dot])


def _png(width, height):
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def test_player_html_is_a_strip_of_frames_that_a_script_turns_into_a_player():
    a, b = _png(30, 20), _png(30, 20)
    html = pe_lib.player_html([a, b], ["a<b & c", 'say "</script>"'], html_id="demo_1", alt='"x"')
    markup, script = html.split("<script>")
    # without JavaScript (an untrusted notebook in JupyterLab): every frame, no control that needs a script
    assert markup.count("<img ") == 2 and f'src="data:image/png;base64,{a}"' in markup
    assert 'width="30" height="20"' in markup
    assert 'alt="&quot;x&quot;, a&lt;b &amp; c"' in markup  # alt text and label, escaped for an attribute
    assert 'id="demo_1_frames"' in markup and "overflow-x: auto" in markup  # a strip that scrolls sideways
    assert "scroll sideways" in markup
    assert "<button" not in markup and "<input" not in markup
    # with JavaScript: the controls, and the labels as string literals that cannot close the script
    assert 'make("input", {type: "range"' in script and '"play"' in script
    assert '"a<b & c","say \\"<\\/script>\\""' in script
    assert html.count("</script>") == 1
    assert "http" not in html and "uuid" not in html


@pytest.mark.parametrize(("frames", "labels", "html_id", "match"), [
    ([], [], "x", "at least one frame"),
    (["A"], ["a", "b"], "x", "one label per frame"),
    (["A"], ["a"], "1x", "html_id must start with a letter"),
    (["A"], ["a"], "x-y", "html_id must start with a letter"),
    (["A"], ["a"], None, "html_id must start with a letter"),
    ([base64.b64encode(b"GIF89a" + bytes(40)).decode()], ["a"], "x", "base64-encoded PNG"),
])
def test_player_html_rejects_bad_arguments(frames, labels, html_id, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.player_html(frames, labels, html_id=html_id)


def test_clock_animation_is_deterministic_and_light():
    kwargs = {"pairs": (0, 1), "dpi": 30, "width": 3.0, "height": 1.6, "html_id": "t_clock"}
    html = pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    assert html == pe_lib.clock_animation_html(np.arange(4), 8, **kwargs)
    frames = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(frames) == 4 and len(set(frames)) == 4
    assert '"pos = 0","pos = 1","pos = 2","pos = 3"' in html
    assert 'alt="clock hands of d_model = 8, pos = 3"' in html
    assert len(html) < 40_000


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
