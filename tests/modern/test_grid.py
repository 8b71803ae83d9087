"""sinusoidal_2d against a per-patch re-implementation of MAE's description, and its column-first convention."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def reference(grid_h, grid_w, d_model, base=10_000.0):
    """Patch (i, j), token i * grid_w + j: [sin j w_k, cos j w_k, sin i w_k, cos i w_k] with each group over
    k = 0 .. d/4 - 1 and w_k = base^(-k / (d/4)): half the width per axis, column first."""
    q = d_model // 4
    omega = [base ** (-k / q) for k in range(q)]
    rows = []
    for i in range(grid_h):
        for j in range(grid_w):
            rows.append([math.sin(j * w) for w in omega] + [math.cos(j * w) for w in omega]
                        + [math.sin(i * w) for w in omega] + [math.cos(i * w) for w in omega])
    return np.array(rows)


@pytest.mark.parametrize(("grid_h", "grid_w", "d_model", "base"), [
    (14, 14, 768, 10_000.0), (16, 16, 1152, 10_000.0), (3, 5, 8, 10_000.0), (7, 2, 64, 100.0), (1, 1, 4, 10_000.0),
])
def test_matches_the_reference(grid_h, grid_w, d_model, base):
    table = pe_lib.sinusoidal_2d(grid_h, grid_w, d_model, base=base)
    assert table.shape == (grid_h * grid_w, d_model)
    np.testing.assert_allclose(table, reference(grid_h, grid_w, d_model, base), rtol=0, atol=1e-13)


@given(h=st.integers(1, 12), w=st.integers(1, 12), q=st.integers(1, 16), base=st.floats(2.0, 1e5))
def test_matches_the_reference_everywhere(h, w, q, base):
    np.testing.assert_allclose(pe_lib.sinusoidal_2d(h, w, 4 * q, base=base), reference(h, w, 4 * q, base),
                               rtol=0, atol=1e-13)


def test_first_half_is_the_column_second_half_the_row():
    table = pe_lib.sinusoidal_2d(3, 5, 16)  # 3 rows of 5 patches; token t = 5 i + j
    first, second = table[:, :8], table[:, 8:]
    # tokens in the same column (t = 1, 6, 11: j = 1) share the first half; in the same row the second
    np.testing.assert_array_equal(first[[1, 6, 11]], np.tile(first[1], (3, 1)))
    np.testing.assert_array_equal(second[5:10], np.tile(second[5], (5, 1)))
    assert not np.allclose(first[1], first[2])
    # by hand, d = 8 (w = 1, 0.01): token 7 is row 1, column 2
    small = pe_lib.sinusoidal_2d(3, 5, 8)
    np.testing.assert_allclose(small[7], [math.sin(2), math.sin(0.02), math.cos(2), math.cos(0.02),
                                          math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)], rtol=1e-15)
    # each half is the book's 1-D table in the split layout
    np.testing.assert_allclose(first, pe_lib.sinusoidal(np.tile(np.arange(5.0), 3), 8, layout="split"), atol=1e-15)


@pytest.mark.parametrize(("args", "match"), [
    ((0, 4, 8), r"grid_h must be an integer >= 1"),
    ((4, 2.0, 8), r"grid_w must be an integer >= 1"),
    ((4, 4, 6), r"d_model must be a multiple of 4 .* got 6; try 8"),
    ((4, 4, 7), r"d_model must be a positive even integer"),
    ((1 << 15, 1 << 15, 4), r"exceeds the limit"),
])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.sinusoidal_2d(*args)
