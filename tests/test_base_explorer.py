"""The base explorer: the static figure and the widget whose sliders redraw it."""

import numpy as np
import pytest

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
    assert fig.get_size_inches().tolist() == [10.0, 3.6]


def test_sliders_redraw_with_the_new_values():
    box = pe_lib.base_explorer(512, base=10_000.0, length=20)
    first_figure, first = box.figure, box.summary
    assert first == pe_lib.base_summary(512, 20)
    assert "223 of 256 pairs" in box.children[1].value

    box.sliders["base"].value = 100.0
    assert box.summary["slow_pairs"] == pe_lib.constant_pairs(512, 20, base=box.sliders["base"].value)
    assert box.summary["slow_pairs"] < first["slow_pairs"]
    assert box.summary["neighbour_distance"] > first["neighbour_distance"]  # fewer slow pairs: farther apart
    assert box.figure is not first_figure
    assert f"{box.summary['slow_pairs']} of 256" in box.children[1].value

    box.sliders["d_model"].value = 64
    assert box.summary["pairs"] == 32
    assert box.summary == pe_lib.base_summary(64, 20, base=box.sliders["base"].value)

    box.sliders["length"].value = 2000
    assert box.summary["slow_pairs"] == pe_lib.constant_pairs(64, 2000, base=box.sliders["base"].value)
    assert "L = 2000" in box.figure._suptitle.get_text()


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
