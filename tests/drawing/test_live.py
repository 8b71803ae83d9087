"""The redraw machinery of the widgets (pe_lib.drawing._live): frozen layout, blitting, text cache, PNG."""

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from PIL import Image

import pe_lib
from pe_lib.drawing._live import LiveFigure


def _canvas_rgb(live):
    return np.asarray(live.canvas.buffer_rgba())[..., :3].copy()


def _live_line_figure():
    fig, ax = pe_lib.new_figure(width=3.0, height=2.0)
    (line,) = ax.plot([0, 1, 2], [0, 1, 0])
    ax.set_title("peak at 1")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return LiveFigure(fig, animated=[ax]), ax, line


def test_the_picture_is_the_canvas_and_changes_with_the_data():
    live, ax, line = _live_line_figure()
    first = live.show()
    assert bytes(live.image.value) == first and live.image.format == "png"
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(first))), _canvas_rgb(live))
    line.set_ydata([0, 5, 0])
    ax.relim()
    ax.autoscale_view()
    second = live.show()
    assert second != first
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(second))), _canvas_rgb(live))
    # the same state again gives the same picture: nothing accumulates between redraws
    line.set_ydata([0, 1, 0])
    ax.relim()
    ax.autoscale_view()
    assert live.show() == first


def test_the_layout_is_kept_and_labels_stay_pinned():
    live, ax, line = _live_line_figure()
    position = ax.get_position().bounds
    label_at = ax.yaxis.label.get_position()
    line.set_ydata([0, 123456, 0])  # much wider tick labels: a layout engine would shrink the axes
    ax.relim()
    ax.autoscale_view()
    live.show()
    assert ax.get_position().bounds == position
    assert ax.yaxis.label.get_position() == label_at


def test_replayed_texts_are_pixel_identical_to_fresh_ones():
    live, ax, line = _live_line_figure()
    for top in (1, 7, 250, 3):  # tick labels move and repeat
        line.set_ydata([0, top, 0])
        ax.relim()
        ax.autoscale_view()
        live.show()
        cached = _canvas_rgb(live)
        assert live.text_cache.store  # texts were recorded ...
        live.text_cache.store.clear()  # ... and are drawn afresh now
        live.show()
        np.testing.assert_array_equal(cached, _canvas_rgb(live))


def test_texts_with_rules_are_drawn_but_not_cached():
    fig, ax = pe_lib.new_figure(width=2.0, height=2.0)
    title = ax.set_title(r"$\frac{1}{2}$")
    live = LiveFigure(fig, animated=[title])
    live.show()
    assert title.get_text() not in [key[0] for key in live.text_cache.store]
    title.set_text(r"$\lambda$")
    live.show()
    assert r"$\lambda$" in [key[0] for key in live.text_cache.store]


def test_needs_something_to_animate():
    fig, _ = pe_lib.new_figure()
    with pytest.raises(ValueError, match="at least one artist"):
        LiveFigure(fig, animated=[])
