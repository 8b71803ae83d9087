"""The chapter-4 explorer (pe_lib.drawing.explorer): summary, figure, and the widget driven like a learner would."""

import matplotlib

matplotlib.use("Agg")

import importlib
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from strategies import bases, d_models

import pe_lib


@given(n=st.integers(min_value=1, max_value=10_000), d=d_models, base=bases)
def test_summary_counts_the_pairs_that_turn_within_the_sequence(n, d, base):
    info = pe_lib.explorer_summary(n, d, base)
    lam = pe_lib.wavelengths(d, base=base)
    assert info["pairs"] == d // 2
    assert info["full_turns"] == sum(1 for x in lam if x <= n)
    assert info["shortest"] == pytest.approx(2 * np.pi)
    assert info["longest"] == lam[-1]
    if d > 2:
        assert info["ratio"] == pytest.approx(base ** (2 / d))


def test_summary_for_one_pair_has_no_ratio():
    info = pe_lib.explorer_summary(10, 2)
    assert np.isnan(info["ratio"]) and info["full_turns"] == 1


def test_summary_for_the_paper():
    info = pe_lib.explorer_summary(128, 512)
    # lambda_k = 2 pi 10000^(2k/512) <= 128  <=>  k <= 256 * log(128 / 2 pi) / log(10000) = 83.7
    assert info["full_turns"] == 84


@pytest.mark.parametrize(("args", "match"), [
    ((0, 8), "n_positions must be an integer >= 1"),
    ((4, 7), "d_model must be a positive even integer"),
    ((4, 8, 1.0), "base must be a finite number greater than 1"),
])
def test_summary_validates(args, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.explorer_summary(*args)


def test_explorer_figure_shows_table_and_wavelengths():
    fig = pe_lib.explorer_figure(20, 16, 100.0)
    heat, wave = fig.axes[0], fig.axes[1]
    np.testing.assert_array_equal(heat.images[0].get_array(), pe_lib.sinusoidal(20, 16, base=100.0))
    assert wave.get_yscale() == "log"
    np.testing.assert_allclose(wave.lines[0].get_ydata(), pe_lib.wavelengths(16, base=100.0))
    info = pe_lib.explorer_summary(20, 16, 100.0)
    assert wave.get_title() == f"{info['full_turns']} of 8 pairs turn\nfully within the sequence"


def test_explorer_figure_refuses_huge_tables():
    with pytest.raises(ValueError, match="exceeds the limit"):
        pe_lib.explorer_figure(2**20, 2**10)


def _shown(fig):
    """What a reader sees in the explorer figure: data, limits and texts of both panels."""
    left, right = fig.axes[:2]
    image = left.images[0]
    return {
        "table": image.get_array(), "extent": image.get_extent(), "xlim": left.get_xlim(), "ylim": left.get_ylim(),
        "title": left.get_title(), "k": right.lines[0].get_xdata(), "lambda": right.lines[0].get_ydata(),
        "length": right.lines[1].get_ydata(), "legend": [t.get_text() for t in right.get_legend().get_texts()],
        "right_title": right.get_title(), "right_xlim": right.get_xlim(), "right_ylim": right.get_ylim(),
    }


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], str) or isinstance(a[key], list):
            assert a[key] == b[key], key
        else:
            np.testing.assert_allclose(np.asarray(a[key], dtype=float), np.asarray(b[key], dtype=float), rtol=1e-12,
                                       err_msg=key)


@pytest.mark.parametrize(("start", "state"), [
    ((512, 1024, 1e6), (64, 128, 10_000.0)),
    ((64, 128, 10_000.0), (1, 4, 3.0)),
    ((3, 8, 50.0), (500, 1000, 2e5)),
])
def test_update_in_place_shows_what_a_new_figure_shows(start, state):
    explorer = importlib.import_module("pe_lib.drawing.explorer")
    fig = pe_lib.explorer_figure(*start)
    explorer._update_explorer(fig, *state)
    _assert_same(_shown(fig), _shown(pe_lib.explorer_figure(*state)))


def test_explorer_widget_sliders_redraw_the_figure():
    w = pe_lib.explorer_widget(32, 64)
    length, d_model, base = w.children[:3]
    picture = w.children[3]
    fig = w.result
    assert picture.format == "png" and bytes(picture.value).startswith(b"\x89PNG")
    assert w.result.axes[0].images[0].get_array().shape == (32, 64)
    _assert_same(_shown(fig), _shown(pe_lib.explorer_figure(32, 64)))
    before = picture.value
    length.value = 50
    assert w.result is fig  # one figure, changed in place
    assert picture.value != before
    assert w.result.axes[0].images[0].get_array().shape == (50, 64)
    d_model.value = 128
    assert w.result.axes[0].images[0].get_array().shape == (50, 128)
    before = w.result.axes[1].lines[0].get_ydata()[-1]
    shown = picture.value
    base.value = 100.0
    after = w.result.axes[1].lines[0].get_ydata()[-1]
    assert after < before
    np.testing.assert_allclose(after, pe_lib.wavelengths(128, base=100.0)[-1])
    assert picture.value != shown
    _assert_same(_shown(fig), _shown(pe_lib.explorer_figure(50, 128, base.value)))
    # the picture is the figure as drawn: decode it and compare with the canvas
    decoded = np.asarray(Image.open(io.BytesIO(bytes(picture.value))))
    np.testing.assert_array_equal(decoded, np.asarray(fig.canvas.buffer_rgba())[..., :3])


def test_explorer_widget_validates():
    with pytest.raises(ValueError, match="d_model"):
        pe_lib.explorer_widget(32, 63)


# ---- nothing is cut off (issue 11: the title of the right panel ran off the figure) --------------------
def _texts_outside(fig, renderer):
    """Which axes of ``fig`` draw something (tick labels, labels, title, legend) beyond the figure's edges,
    by more than half a pixel: their titles, or their index when untitled."""
    box = fig.bbox
    outside = []
    for i, ax in enumerate(fig.axes):
        e = ax.get_tightbbox(renderer)  # in display pixels: everything the axes draws, ticks within its limits
        if e.x0 < box.x0 - 0.5 or e.x1 > box.x1 + 0.5 or e.y0 < box.y0 - 0.5 or e.y1 > box.y1 + 0.5:
            outside.append(ax.get_title() or i)
    return outside


# the states with the longest texts: most pairs, largest length and base, four-digit counts
STATES = [(64, 128, 10_000.0), (512, 1024, 1e6), (512, 1024, 10.0**0.5), (1, 2, 3.0), (500, 1000, 123456.0)]


@pytest.mark.parametrize("state", STATES)
def test_a_new_figure_fits_the_column_and_cuts_no_text(state):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = pe_lib.explorer_figure(*state)
    assert fig.get_size_inches()[0] * fig.dpi <= pe_lib.book.figures.MAX_WIDTH_PX
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    assert _texts_outside(fig, canvas.get_renderer()) == []


def test_the_widget_cuts_no_text_in_any_state():
    w = pe_lib.explorer_widget(64, 128)
    length, d_model, base = w.children[:3]
    live_canvas = w.result.canvas
    for n, d, b in STATES:
        d_model.value, length.value, base.value = d, n, b
        assert _texts_outside(w.result, live_canvas.get_renderer()) == [], (n, d, b)


@pytest.mark.parametrize(("n", "d", "base"), [(64, 128, 1e4), (512, 128, 1e4), (512, 16, 10.0), (1, 2, 3.16),
                                              (512, 1024, 1e6), (7, 2, 3.5)])
def test_the_legend_stands_on_no_data(n, d, base):
    """The wavelengths' legend stood on the last dots (chapter 4's figure, 64 x 128) and, where the sequence
    length is the largest value, on its red line (issue 30, item 3): the drawn artists say it is clear now
    (with the limits of before, the first setting fails), in a new figure and one updated to the setting."""
    from pe_lib.book.figures import legend_over_data

    explorer = importlib.import_module("pe_lib.drawing.explorer")
    fig = pe_lib.explorer_figure(n, d, base)
    fig.draw_without_rendering()
    assert legend_over_data(fig) == []
    moved = pe_lib.explorer_figure(64, 128)
    explorer._update_explorer(moved, n, d, base)
    moved.draw_without_rendering()
    assert legend_over_data(moved) == []
