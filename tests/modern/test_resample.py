"""Resampling a 2-D position table: Keys' kernel, PyTorch's align_corners=False grid, separability."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def keys(t, a=-0.75):
    """Keys (1981) cubic convolution kernel."""
    t = abs(t)
    if t <= 1:
        return (a + 2) * t**3 - (a + 3) * t**2 + 1
    if t < 2:
        return a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
    return 0.0


def reference_1d(values, n_out, method="bicubic"):
    """Resize a list: output o samples the input at x = (o + 1/2) n/m - 1/2 (pixel centres aligned); bicubic: the
    4 neighbours floor(x) - 1 .. floor(x) + 2, clamped to the edge, weighted by keys(x - index); bilinear: the 2
    neighbours of max(x, 0)."""
    n = len(values)
    out = []
    for o in range(n_out):
        x = (o + 0.5) * n / n_out - 0.5
        if method == "bilinear":
            x = max(x, 0.0)
            i = int(math.floor(x))
            out.append((1 - (x - i)) * values[i] + (x - i) * values[min(i + 1, n - 1)])
            continue
        i = math.floor(x)
        out.append(sum(keys(x - k) * values[min(max(k, 0), n - 1)] for k in range(i - 1, i + 3)))
    return out


def reference_2d(table, old, new, method="bicubic"):
    h, w = old
    grid = np.asarray(table, dtype=float).reshape(h, w, -1)
    rows_done = np.array([[reference_1d(grid[i, :, c], new[1], method) for c in range(grid.shape[2])]
                          for i in range(h)])  # (h, channels, w')
    out = np.array([[reference_1d(rows_done[:, c, b], new[0], method) for c in range(grid.shape[2])]
                    for b in range(new[1])])  # (w', channels, h')
    return out.transpose(2, 0, 1).reshape(new[0] * new[1], -1)


def test_kernel_by_hand():
    np.testing.assert_allclose(pe_lib.cubic_kernel([0.0, 0.5, 1.0, 1.25, 1.5, 2.0, 3.0, -0.5]),
                               [1.0, keys(0.5), 0.0, keys(1.25), keys(1.5), 0.0, 0.0, keys(0.5)], rtol=1e-15)
    assert keys(1.25) == pytest.approx(-0.75 * 0.140625)  # a (1.25^3 - 5 1.25^2 + 8 1.25 - 4)


@pytest.mark.parametrize("method", ["bicubic", "bilinear"])
@pytest.mark.parametrize(("old", "new"), [((14, 14), (24, 24)), ((2, 3), (5, 4)), ((7, 5), (3, 2)), ((4, 4), (4, 4))])
def test_matches_the_reference(method, old, new):
    table = np.random.default_rng(0).normal(size=(old[0] * old[1], 3))
    out = pe_lib.resample_grid(table, old, new, method=method)
    assert out.shape == (new[0] * new[1], 3)
    np.testing.assert_allclose(out, reference_2d(table, old, new, method), rtol=0, atol=1e-12)


@given(n=st.integers(1, 20), m=st.integers(1, 40), method=st.sampled_from(["bicubic", "bilinear"]))
def test_weights_match_the_reference_everywhere(n, m, method):
    w = pe_lib.resample_weights(n, m, method=method)
    np.testing.assert_allclose(w, np.array([reference_1d(list(e), m, method) for e in np.eye(n)]).T, atol=1e-14)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-14)  # a constant table stays constant


def test_by_hand_and_the_edge_overshoot():
    # 2 -> 4 samples: x = -0.25, 0.25, 0.75, 1.25. Bicubic on [0, 1]: at x = -0.25 only sample 1 sits at distance
    # 1.25, weight keys(1.25) = -0.10546875: the resized table dips below the original's range
    np.testing.assert_allclose(pe_lib.resample_weights(2, 4) @ [0.0, 1.0],
                               [-0.10546875, 0.2265625, 0.7734375, 1.10546875], rtol=1e-15)
    np.testing.assert_allclose(pe_lib.resample_weights(2, 4, method="bilinear") @ [0.0, 1.0], [0, 0.25, 0.75, 1])
    # same size: the identity
    np.testing.assert_array_equal(pe_lib.resample_weights(14, 14), np.eye(14))


def test_the_grid_is_row_major():
    # a table that is the column index j in every channel resizes along the columns only
    old, new = (3, 4), (6, 8)
    table = np.tile(np.arange(4.0), 3)[:, None]
    out = pe_lib.resample_grid(table, old, new).reshape(6, 8)
    np.testing.assert_allclose(out, np.tile(pe_lib.resample_weights(4, 8) @ np.arange(4.0), (6, 1)), atol=1e-14)


@pytest.mark.parametrize(("args", "kwargs", "error", "match"), [
    ((np.zeros((15, 2)), (4, 4), (8, 8)), {}, ValueError, r"table has 15 rows, but old_size 4 x 4 needs 16"),
    ((np.zeros(16), (4, 4), (8, 8)), {}, ValueError, r"table must have shape \(h \* w, d\)"),
    ((np.zeros((16, 2)), 16, (8, 8)), {}, ValueError, r"old_size must be a pair \(rows, columns\)"),
    ((np.zeros((16, 2)), (4, 4), (8, 0)), {}, ValueError, r"new_size\[1\] must be an integer >= 1"),
    ((np.zeros((16, 2)), (4, 4), (8, 8)), {"method": "nearest"}, ValueError, r"method must be one of 'bicubic'"),
    ((np.full((16, 2), np.nan), (4, 4), (8, 8)), {}, ValueError, r"table must be finite"),
    ((np.zeros((16, 2)), (4, 4), (1 << 14, 1 << 14)), {}, ValueError, r"exceeds the limit"),
])
def test_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        pe_lib.resample_grid(*args, **kwargs)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_the_kernel_is_zero_from_two_on_and_computed_in_float64():
    np.testing.assert_array_equal(pe_lib.cubic_kernel([2.0, 2.5, 2.99, -2.5, 7.0]), 0.0)
    # a float16 input is computed in float64: 1.5 -> a (1.5^3 - 5 * 1.5^2 + 8 * 1.5 - 4) = 0.125 a
    k = pe_lib.cubic_kernel(np.array([0.1, 1.5], dtype=np.float16))
    a = -0.75
    t = float(np.float16(0.1))
    assert k.dtype == np.float64
    np.testing.assert_allclose(k, [((a + 2) * t - (a + 3)) * t * t + 1, 0.125 * a], rtol=1e-15)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.resample_weights(0, 4), r"^n_in must be an integer >= 1"),
    (lambda: pe_lib.resample_weights(4, 0), r"^n_out must be an integer >= 1"),
    (lambda: pe_lib.resample_grid(np.zeros((4, 1)), (0, 2), (2, 2)), r"^old_size\[0\] must be an integer >= 1"),
    (lambda: pe_lib.resample_grid(np.zeros((4, 1)), (2, 2), (16_385, 16_385)),
     r"^a resized table of 268468225 x 1 = 268,468,225 values exceeds"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_table_with_its_class_token_is_refused_by_name():
    # ViT's table is 1 + h * w rows with the class token first: refused with the advice to drop it, not left to a
    # reshape error (planted: only too few rows refused)
    with pytest.raises(ValueError, match=r"table has 5 rows, but old_size 2 x 2 needs 4; drop the class token"):
        pe_lib.resample_grid(np.zeros((5, 3)), (2, 2), (3, 3))
