"""f(Delta) = PE(p) . PE(p + Delta) = sum_k cos(omega_k Delta)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import d_models, offsets, positions

import pe_lib


@given(d=d_models, p=positions, delta=offsets)
def test_profile_equals_the_dot_product_at_any_position(d, p, delta):
    a, b = pe_lib.sinusoidal([p, p + delta], d)
    assert abs(pe_lib.dot_profile([delta], d)[0] - a @ b) <= 1e-12 * d * (1 + abs(p) + abs(delta))


@given(d=d_models, delta=offsets)
def test_profile_is_symmetric_and_bounded_by_half_d(d, delta):
    f = pe_lib.dot_profile([delta, -delta, 0.0], d)
    assert f[0] == f[1]
    assert f[2] == d / 2
    assert abs(f[0]) <= d / 2 + 1e-12


def test_profile_is_not_monotone_for_d512():
    # first increase of f(Delta), Delta = 0, 1, 2, ...: the decay is not monotone
    f = pe_lib.dot_profile(200, 512)
    first_rise = int(np.argmax(np.diff(f) > 0)) + 1
    assert f[first_rise] > f[first_rise - 1]
    assert np.all(np.diff(f[:first_rise]) < 0)
    assert 10 < first_rise < 100


@given(n=st.integers(0, 50))
def test_int_offsets_mean_zero_to_n_minus_one(n):
    np.testing.assert_array_equal(pe_lib.dot_profile(n, 8), pe_lib.dot_profile(np.arange(n), 8))


def test_bad_offsets_are_named():
    # found by `make mutate`
    with pytest.raises(ValueError, match=r"^offsets must all be finite, got nan"):
        pe_lib.dot_profile([np.nan], 8)
