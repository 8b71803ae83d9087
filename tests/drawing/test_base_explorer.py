"""The base explorer: the static figure and the widget whose sliders redraw it."""

import importlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models

import pe_lib


def test_static_figure_shows_the_computed_numbers():
    fig = pe_lib.draw_base_overview(64, base=100.0, length=50)
    ax_w, ax_d = fig.axes
    s = pe_lib.base_summary(64, 50, base=100.0)
    title = fig._suptitle.get_text()
    assert f"{s['slow_pairs']} of 32 pairs" in title and f"{s['neighbour_distance']:.3f}" in title
    # left: every wavelength plotted once; right: the distance curve for offsets 0..L
    plotted = np.concatenate([line.get_ydata() for line in ax_w.lines[:2]])
    np.testing.assert_allclose(np.sort(plotted), pe_lib.wavelengths(64, base=100.0))
    assert len(ax_w.lines[1].get_ydata()) == s["slow_pairs"]
    np.testing.assert_allclose(ax_d.lines[0].get_ydata(), np.sqrt(pe_lib.squared_distance(51, 64, base=100.0)))
    assert fig.get_size_inches().tolist() == [7.6, 3.6]  # at 100 dpi, the 760-pixel text column


def _shown(fig):
    """What a reader sees in the overview: every line's data, the legends, limits and the title."""
    out = {"title": fig._suptitle.get_text()}
    for name, ax in zip(("wavelengths", "distance"), fig.axes, strict=True):
        out[name] = [(line.get_xdata(), line.get_ydata()) for line in ax.lines if line.get_transform() is ax.transData]
        out[name + " levels"] = [line.get_ydata() for line in ax.lines if line.get_transform() is not ax.transData]
        out[name + " legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
        out[name + " limits"] = (ax.get_xlim(), ax.get_ylim())
    return out


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "title" or key.endswith("legend"):
            assert a[key] == b[key], key
        elif key.endswith("levels") or key.endswith("limits"):
            np.testing.assert_allclose(np.asarray(a[key], dtype=float), np.asarray(b[key], dtype=float), rtol=1e-9,
                                       err_msg=key)
        else:
            assert len(a[key]) == len(b[key])
            for (xa, ya), (xb, yb) in zip(a[key], b[key], strict=True):
                np.testing.assert_array_equal(xa, xb)
                np.testing.assert_allclose(ya, yb, rtol=1e-9, atol=1e-6, err_msg=key)


@pytest.mark.parametrize(("start", "state"), [
    ((1024, 1e7, 4096), (512, 10_000.0, 128)),
    ((512, 10_000.0, 128), (64, 100.0, 50)),
    ((8, 2.0, 3), (1000, 1e6, 4000)),
    ((64, 100.0, 50), (4, 20.0, 1)),
])
def test_update_in_place_shows_what_a_new_figure_shows(start, state):
    explorer = importlib.import_module("pe_lib.drawing.base_explorer")
    d, b, n = start
    fig = pe_lib.draw_base_overview(d, base=b, length=n)
    d, b, n = state
    explorer._update_base_overview(fig, d, base=b, length=n)
    _assert_same(_shown(fig), _shown(pe_lib.draw_base_overview(d, base=b, length=n)))


@given(d=d_models, base=bases, length=st.integers(min_value=0, max_value=3000))
def test_distance_curve_is_the_norm_of_the_difference(d, base, length):
    curve = importlib.import_module("pe_lib.drawing.base_explorer")._distance_curve(d, length, base=base)
    exact = np.sqrt(pe_lib.squared_distance(np.arange(length + 1), d, base=base))
    assert curve.shape == (length + 1,) and curve[0] == pytest.approx(0.0, abs=1e-6)
    # squared values agree to rounding of a sum of d terms; the square root amplifies that near 0 only
    np.testing.assert_allclose(curve**2, exact**2, rtol=0, atol=1e-11 * d)


def test_sliders_redraw_with_the_new_values():
    box = pe_lib.base_explorer(512, base=10_000.0, length=20)
    picture = box.children[2]
    first_figure, first = box.figure, box.summary
    assert first == pe_lib.base_summary(512, 20)
    assert "223 of 256 pairs" in box.children[1].value
    _assert_same(_shown(box.figure), _shown(pe_lib.draw_base_overview(512, length=20)))
    shown = bytes(picture.value)

    box.sliders["base"].value = 100.0
    assert box.summary["slow_pairs"] == pe_lib.constant_pairs(512, 20, base=box.sliders["base"].value)
    assert box.summary["slow_pairs"] < first["slow_pairs"]
    assert box.summary["neighbour_distance"] > first["neighbour_distance"]  # fewer slow pairs: farther apart
    assert box.figure is first_figure  # one figure, changed in place ...
    assert bytes(picture.value) != shown  # ... and drawn again
    assert f"{box.summary['slow_pairs']} of 256" in box.children[1].value

    box.sliders["d_model"].value = 64
    assert box.summary["pairs"] == 32
    assert box.summary == pe_lib.base_summary(64, 20, base=box.sliders["base"].value)

    box.sliders["length"].value = 2000
    assert box.summary["slow_pairs"] == pe_lib.constant_pairs(64, 2000, base=box.sliders["base"].value)
    assert "L = 2000" in box.figure._suptitle.get_text()
    _assert_same(_shown(box.figure), _shown(pe_lib.draw_base_overview(64, base=box.sliders["base"].value,
                                                                       length=2000)))


@pytest.mark.parametrize(("kwargs", "match"), [({"base": 1.0}, r"base must be a finite number greater than 1"),
                                               ({"length": 0}, r"length must be an integer >= 1, got 0")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.draw_base_overview(8, **kwargs)
    with pytest.raises(ValueError, match=match):
        pe_lib.base_explorer(8, **kwargs)


@pytest.mark.parametrize(("kwargs", "match"), [({"d_model": 2048}, r"d_model must be at most 1024 .* got 2048"),
                                               ({"length": 5000}, r"length must be at most 4096 .* got 5000"),
                                               ({"base": 1e8}, r"base must be at most 1e\+07 .* got 1e\+08"),
                                               ({"base": 1.1}, r"base must be at least 1.26 .* got 1.1"),
                                               ({"d_model": 7}, r"d_model must be a positive even integer")])
def test_explorer_refuses_values_outside_its_sliders(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.base_explorer(**kwargs)


@pytest.mark.parametrize(("d_model", "base", "length"), [(512, 1e4, 128), (128, 1e4, 64), (64, 100.0, 512),
                                                         (512, 1e6, 4096), (32, 10.0, 16), (8, 1e4, 4)])
def test_the_legends_stand_on_no_data(d_model, base, length):
    """Chapter 9's overview had its distance legend on the neighbour distance's line, and the wavelengths'
    legend can meet the L line (issue 30, item 3): the drawn artists say both legends are clear now (with
    both at lower right, as before, 4 of these 6 settings fail)."""
    from pe_lib.book.figures import legend_over_data

    fig = pe_lib.draw_base_overview(d_model, base=base, length=length)
    fig.draw_without_rendering()
    assert legend_over_data(fig) == []
