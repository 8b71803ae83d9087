"""pe_lib.below: a difference at the level of rounding, printed as a bound that survives the last bits."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (3.3e-16, "below 1e-15"),  # chapter 1: 2 * 3.3e-16 = 6.6e-16 < 1e-15
        (4.9e-16, "below 1e-15"),
        (5e-16, "below 1e-14"),  # 2x = 1e-15 is not below 1e-15
        (6e-16, "below 1e-14"),
        (-7e-15, "below 1e-13"),  # the sign does not matter
        (1.16e-11, "below 1e-10"),
        (0.3, "below 1e0"),
        (4.9, "below 1e1"),
        (5.0, "below 1e2"),  # 2x = 10 is not below 10
        (0.0, "0"),
    ],
)
def test_below_prints_the_next_power_of_ten_above_twice_the_value(x, text):
    assert pe_lib.below(x) == text


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_the_bound_holds_and_is_tight_within_a_factor_twenty(x):
    bound = 10.0 ** int(pe_lib.below(x).removeprefix("below 1e"))
    assert 2 * x < bound * (1 + 1e-12)
    assert bound <= 20 * x * (1 + 1e-12)


def test_below_accepts_numpy_scalars_and_refuses_what_is_not_a_finite_number():
    assert pe_lib.below(np.float64(2e-16)) == "below 1e-15"
    with pytest.raises(ValueError, match="x must be a finite real number"):
        pe_lib.below(math.nan)
    with pytest.raises((TypeError, ValueError), match="x must be"):
        pe_lib.below("0.1")
