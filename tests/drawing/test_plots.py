"""Figure helpers and the binary-counting analogy (pe_lib.drawing.plots)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure

import pe_lib


def test_new_figure_is_white_and_has_the_requested_grid():
    fig, ax = pe_lib.new_figure(width=4, height=3, dpi=80)
    assert isinstance(fig, Figure) and fig.dpi == 80
    assert matplotlib.colors.to_hex(fig.get_facecolor()) == "#ffffff"
    assert tuple(fig.get_size_inches()) == (4.0, 3.0)
    assert ax.figure is fig
    fig, axes = pe_lib.new_figure(2, 3, squeeze=False)
    assert axes.shape == (2, 3)
    fig, axes = pe_lib.new_figure(1, 2)
    assert axes.shape == (2,)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"nrows": 0}, "nrows must be an integer >= 1"),
    ({"width": 0}, "width and height must be positive"),
    ({"height": -1}, "width and height must be positive"),
    ({"width": float("nan")}, "width must be a finite real number"),
    ({"dpi": 0}, "dpi must be an integer >= 1"),
])
def test_new_figure_rejects_bad_sizes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.new_figure(**kwargs)


def test_heatmap_shows_the_table_on_a_fixed_scale():
    table = pe_lib.sinusoidal(16, 32)
    image = pe_lib.heatmap(table)
    np.testing.assert_array_equal(image.get_array(), table)
    assert image.get_clim() == (-1.0, 1.0)
    assert image.axes.get_title() == "16 positions x 32 dimensions"
    assert image.axes.get_xlabel() == "dimension $j$"
    assert image.axes.get_ylabel() == "position $pos$"
    assert len(image.figure.axes) == 2  # the heat map and its colorbar
    # position 0 is the top row
    assert image.axes.get_ylim()[0] > image.axes.get_ylim()[1]


def test_heatmap_draws_into_given_axes_without_colorbar():
    fig, ax = pe_lib.new_figure()
    image = pe_lib.heatmap(np.zeros((3, 4)), ax, title="t", colorbar=False, interpolation="nearest")
    assert image.axes is ax and ax.get_title() == "t"
    assert image.get_interpolation() == "nearest"
    assert len(fig.axes) == 1


@pytest.mark.parametrize("table", [np.zeros(4), np.zeros((0, 4)), np.zeros((2, 2, 2))])
def test_heatmap_rejects_tables_that_are_not_2d(table):
    with pytest.raises(ValueError, match="table must be a non-empty 2-D array"):
        pe_lib.heatmap(table)


def test_heatmap_grid_makes_small_multiples_with_one_colorbar():
    tables = [(f"{n} x {d}", pe_lib.sinusoidal(n, d)) for n, d in [(16, 32), (16, 64), (50, 128)]]
    fig = pe_lib.heatmap_grid(tables, ncols=2)
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["16 x 32", "16 x 64", "50 x 128"]
    assert [ax.images[0].get_array().shape for ax in panels] == [(16, 32), (16, 64), (50, 128)]
    hidden = [ax for ax in fig.axes if not ax.get_visible()]
    assert len(hidden) == 1  # 3 panels in a 2 x 2 grid
    assert len(fig.axes) == 5  # 4 grid cells + one shared colorbar


def test_heatmap_grid_needs_a_table():
    with pytest.raises(ValueError, match="at least one"):
        pe_lib.heatmap_grid([])


@given(n=st.integers(min_value=0, max_value=2**40), bits=st.integers(min_value=1, max_value=62))
def test_binary_digits_reassemble_the_number(n, bits):
    digits = pe_lib.binary_digits([n], bits)[0]
    assert set(np.unique(digits)) <= {0, 1}
    assert int(np.sum(digits * 2 ** np.arange(bits, dtype=object))) == n % 2**bits


def test_binary_digits_of_0_to_15():
    digits = pe_lib.binary_digits(16, 4)
    assert digits.shape == (16, 4)
    np.testing.assert_array_equal(digits[5], [1, 0, 1, 0])  # 5 = 0b0101, least significant bit first
    np.testing.assert_array_equal(digits[:, 0], np.arange(16) % 2)  # bit 0 alternates at every step


@pytest.mark.parametrize(("positions", "bits", "match"), [
    ([-1], 4, "non-negative integer"),
    ([1.5], 4, "non-negative integer"),
    (4, 0, "n_bits must be an integer >= 1"),
    (4, 63, "at most 62"),
])
def test_binary_digits_rejects_bad_arguments(positions, bits, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.binary_digits(positions, bits)


@given(n=st.integers(min_value=0, max_value=2**20), b=st.integers(min_value=0, max_value=20))
def test_bit_is_the_sign_of_its_wave(n, b):
    bit = pe_lib.binary_digits([n], b + 1)[0, b]
    assert (pe_lib.bit_wave([n], b)[0] < 0) == bool(bit)


def test_bit_is_the_sign_of_its_wave_for_every_n_below_2_to_the_16():
    n = np.arange(2**16)
    bits = pe_lib.binary_digits(n, 16)
    for b in range(16):
        np.testing.assert_array_equal(pe_lib.bit_wave(n, b) < 0, bits[:, b].astype(bool))


@given(x=st.floats(min_value=-100, max_value=100, allow_nan=False), b=st.integers(min_value=0, max_value=6))
def test_bit_wave_has_wavelength_two_to_the_b_plus_one(x, b):
    np.testing.assert_allclose(pe_lib.bit_wave([x + 2 ** (b + 1)], b), pe_lib.bit_wave([x], b), atol=1e-9)


def test_bit_wave_rejects_negative_bit():
    with pytest.raises(ValueError, match="bit must be an integer >= 0"):
        pe_lib.bit_wave(4, -1)


def test_zero_crossings_of_a_sampled_sine():
    x = np.linspace(0.1, 3 * np.pi - 0.1, 300)  # crosses at pi and 2 pi
    crossings = pe_lib.zero_crossings(np.sin(x))
    assert crossings.size == 2
    for t, root in zip(crossings, [np.pi, 2 * np.pi], strict=True):
        assert x[t] <= root <= x[t + 1]


@pytest.mark.parametrize(("values", "expected"), [
    ([1.0, 0.0, 1.0], []),  # touches zero and turns back: no crossing
    ([1.0, 0.0, -1.0], [1]),  # the zero counts with the sign that follows
    ([0.0, 0.0], []),
    ([2.0], []),
    ([-1.0, 1.0, -1.0], [0, 1]),
])
def test_zero_crossings_edge_cases(values, expected):
    np.testing.assert_array_equal(pe_lib.zero_crossings(values), expected)


def test_zero_crossings_needs_1d():
    with pytest.raises(ValueError, match="values must be 1-D"):
        pe_lib.zero_crossings(np.zeros((2, 2)))
