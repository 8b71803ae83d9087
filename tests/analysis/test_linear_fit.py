"""Least-squares maps: exact for linear data, clearly non-zero residual otherwise."""

import numpy as np
import pytest

import pe_lib


def test_recovers_a_linear_map_and_the_shift_matrix():
    pos = np.arange(200)
    # a small base keeps every pair turning fast enough over 200 positions for M to be well determined
    x = pe_lib.sinusoidal(pos, 8, base=10)
    y = pe_lib.sinusoidal(pos + 5, 8, base=10)
    m, rms = pe_lib.fit_linear_map(x, y)
    assert rms < 1e-12
    np.testing.assert_allclose(m, pe_lib.shift_matrix(5, 8, base=10), atol=1e-10)


def test_sine_alone_is_not_linearly_shiftable():
    # with only sin(w p) as input, sin(w (p + 1)) = cos(w) sin(w p) + sin(w) cos(w p) needs the cosine
    pos = np.arange(500)
    x = np.sin(pos)[:, None]
    y = np.sin(pos + 1.0)
    _, rms = pe_lib.fit_linear_map(x, y)
    assert rms > 0.3


def test_intercept_and_r_squared():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(100, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 4.0
    m, rms = pe_lib.fit_linear_map(x, y, intercept=True)
    np.testing.assert_allclose(m, [[1.0, -2.0, 0.5, 4.0]], atol=1e-12)
    assert rms < 1e-12
    assert pe_lib.r_squared(x, y) == pytest.approx(1.0)
    assert pe_lib.r_squared(x, rng.normal(size=100)) < 0.2


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        (np.ones(3), np.ones(3), "x must be 2-D"),
        (np.ones((3, 2)), np.ones(4), r"y must have shape \(3,\) or \(3, r\)"),
        (np.ones((3, 2)), np.ones((3, 2, 1)), "y must have shape"),
        (np.full((3, 2), np.nan), np.ones(3), "must be finite"),
    ],
)
def test_bad_arguments(x, y, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.fit_linear_map(x, y)


def test_constant_target_has_no_r_squared():
    with pytest.raises(ValueError, match="y is constant"):
        pe_lib.r_squared(np.arange(6.0).reshape(3, 2), np.ones(3))


# ---- found by `make mutate` --------------------------------------------------------------------
# Equivalent survivors (issue 20): r_squared's own as_real_array names (fit_linear_map has already
# converted and checked x and y with the same checks), reshape(..., -2) (numpy infers any negative size),
# lstsq without rcond=None (numpy >= 2.0's default is the same cut).
def test_r_squared_of_several_targets_uses_each_target_s_own_mean():
    # x = (0, 1, 2); targets (0, 1, 3) and (10, 10, 13), each fitted with slope 3/2 and an intercept:
    # residual sums 1/6 and 3/2, totals around each column's mean 14/3 and 6: R^2 = 1 - (5/3)/(32/3) = 27/32
    x = [[0.0], [1.0], [2.0]]
    y = np.array([[0.0, 10.0], [1.0, 10.0], [3.0, 13.0]])
    assert pe_lib.r_squared(x, y) == pytest.approx(27 / 32, rel=1e-13)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: pe_lib.fit_linear_map([["a"]], [1.0]), TypeError, r"^x must hold real numbers"),
        (lambda: pe_lib.fit_linear_map([[1.0]], ["a"]), TypeError, r"^y must hold real numbers"),
        (lambda: pe_lib.fit_linear_map([[1.0]], [np.inf]), ValueError,
         r"^x and y must be finite, got NaN or infinity$"),
        (lambda: pe_lib.fit_linear_map(np.array([[1e300], [2e300]]), np.array([1e300, -1e300])), ValueError,
         r"^the least-squares fit overflows float64 \(values too large\); rescale x and y$"),
        (lambda: pe_lib.r_squared([[0.0], [1.0]], [2.0, 2.0]), ValueError, r"^y is constant, so R\^2 is undefined"),
    ],
)
def test_messages_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_rms_is_over_every_output_of_every_row():
    # y's first column [0, 1, 0, 1] fitted by a line on x = 0..3 (slope 0.2, intercept 0.2 by the normal
    # equations: residuals 0.2, -0.6, 0.6, -0.2, squares summing to 0.8); its second column is x itself
    # (residual 0): rms = sqrt(0.8 / (4 rows * 2 outputs)) = sqrt(0.1) (planted: divided by the rows only)
    x = np.arange(4.0)[:, None]
    y = np.column_stack([[0.0, 1.0, 0.0, 1.0], np.arange(4.0)])
    m, rms = pe_lib.fit_linear_map(x, y, intercept=True)
    np.testing.assert_allclose(m, [[0.2, 0.2], [1.0, 0.0]], atol=1e-12)
    assert rms == pytest.approx(np.sqrt(0.1), rel=1e-12)
